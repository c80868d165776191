"""Counter formulas per gfx target (YAML data), and the measurements derived with them.

from perfmodel.readers import read_workload
from perfmodel.counters import derive_workload, aggregate
ms = derive_workload(read_workload(path))
per_kernel = aggregate(ms)          # ratio of sums per kernel
"""

from __future__ import annotations

from perfmodel.counters.aggregate import aggregate, compat_mean_rates
from perfmodel.counters.derive import derive, derive_workload
from perfmodel.counters.formulas import available_targets, load
from perfmodel.counters.measurement import Measurement

__all__ = [
    "Measurement",
    "aggregate",
    "available_targets",
    "compat_mean_rates",
    "derive",
    "derive_workload",
    "load",
]
