"""Time a GEMM at a configuration the experiment forces instead of the one the tile ranking picks
(the experiment scripts `tile_regret.py` and `rank_by_estimator.py`; the shipped model never
does this). While `FORCED` holds tm, tn, tk, lanes and split (scalars or one value per shape),
`gemm_tiling._choose` returns them; empty, it is the ranking itself."""

from __future__ import annotations

import numpy as np

from perfmodel.models import gemm_tiling

FIELDS = ("tm", "tn", "tk", "lanes", "split")
FORCED: dict = {}
RANKED = gemm_tiling._choose


def _choose(arch, r, m, *args, **kw):
    if FORCED:
        return tuple(np.broadcast_to(np.asarray(FORCED[f], dtype=float), m.shape).copy() for f in FIELDS)
    return RANKED(arch, r, m, *args, **kw)


def install() -> None:
    """Route the model's tile choice through `FORCED`."""
    gemm_tiling._choose = _choose
