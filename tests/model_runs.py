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


def split_reduction_s(arch, tile: str, split: float, grid: float, wgs_per_cu: float) -> float:
    """Seconds the last workgroup of each split-K tile spends reading the other splits' fp32
    partial tiles through its CU's L1 (the CUs reducing at once share the L2), on an AMD grid
    with one round of tiles (`estimate._split_reduction`), at the loaded matrix clock."""
    from perfmodel.rates import bandwidth, loaded_core_clock

    tm, tn, _ = (int(x) for x in tile.split("x"))
    clock = loaded_core_clock(arch, [arch.matrix_pipe])[0]
    per_wg = (split - 1) * tm * tn * 4.0
    reducers = min(grid, arch.cus * wgs_per_cu) / split
    l1 = bandwidth(arch, "l1")[0] * clock / arch.cus
    return max(per_wg / l1, reducers * per_wg / (bandwidth(arch, "l2")[0] * clock))


def pipeline_fill_s(terms_s: dict, grid: float, wgs_per_cu: float, cus: int, steps: float, amd: bool = True) -> float:
    """One main-loop step of the faster of a tiled kernel's largest compute and memory terms:
    what filling and draining its load-compute pipeline adds (`estimate._pipeline_fill`), paid
    per round of tiles where one workgroup fills a CU of an AMD grid, else once (Hopper's
    persistent kernels prefetch the next tile during the epilogue)."""
    c = max(v for k, v in terms_s.items() if k.startswith("compute:"))
    m = max(v for k, v in terms_s.items() if k.startswith("memory:"))
    rounds = math.ceil(grid / (cus * wgs_per_cu))
    return min(c, m) / (rounds * steps) * (rounds if wgs_per_cu < 2 and amd else 1)
