"""Run one kernel model directly (no estimator): its `Work` for a single case, numeric
parameters as 1-element arrays the way the vectorised path passes them, defaults filled in."""

from __future__ import annotations

import numpy as np

from perfmodel.models.registry import get_model


def run_model(kernel: str, arch, dtype: str, **params):
    m = get_model(kernel)
    p = {}
    for name, prm in m.params.items():
        v = params.get(name, prm.default)
        p[name] = np.atleast_1d(np.asarray(v, dtype=float)) if prm.kind in (int, float) and v is not None else v
    return m.fn(p, arch, dtype)
