"""Run one kernel model directly (no estimator): its `Work` for a single case, numeric
parameters as 1-element arrays the way the vectorised path passes them, defaults filled in;
and the pipeline share of a tiled prediction's `fill`, recomputed from its reported terms."""

from __future__ import annotations

import math

import numpy as np

from perfmodel.models.registry import get_model


def run_model(kernel: str, arch, dtype: str, **params):
    m = get_model(kernel)
    p = {}
    for name, prm in m.params.items():
        v = params.get(name, prm.default)
        p[name] = np.atleast_1d(np.asarray(v, dtype=float)) if prm.kind in (int, float) and v is not None else v
    return m.fn(p, arch, dtype)


def pipeline_fill_s(terms_s: dict, grid: float, wgs_per_cu: float, cus: int, steps: float) -> float:
    """One main-loop step of the faster of a tiled kernel's largest compute and memory terms:
    what filling and draining its load-compute pipeline adds (`estimate._pipeline_fill`), paid
    per round of tiles where one workgroup fills a CU, else once."""
    c = max(v for k, v in terms_s.items() if k.startswith("compute:"))
    m = max(v for k, v in terms_s.items() if k.startswith("memory:"))
    rounds = math.ceil(grid / (cus * wgs_per_cu))
    return min(c, m) / (rounds * steps) * (rounds if wgs_per_cu < 2 else 1)
