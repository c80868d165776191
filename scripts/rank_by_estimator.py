"""What the held-out accuracy would be if GEMM configurations were ranked by the full estimator.

Every `gemm_tiling.gemm_work` call that leaves the tile and split to the model instead times each
candidate tile of `tiles.gemm_candidates` at split 1, 2, 4, ..., 64 (each split keeping at least
one K step) with `estimate`, and keeps the fastest per shape; then runs `scripts/accuracy.py`
with that ranking (pass it ``--out``/``--json`` paths outside the repository to keep the
committed files; it rewrites the error-band files, so `git checkout` them after). An experiment,
not the shipped model: about three times slower than `scripts/accuracy.py`.

    python scripts/rank_by_estimator.py --out /tmp/a.md --json /tmp/a.json [--split1]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from forced_config import FORCED as _forced  # noqa: E402
from forced_config import install  # noqa: E402

from perfmodel import dtypes  # noqa: E402
from perfmodel.estimate import estimate  # noqa: E402
from perfmodel.models import gemm_tiling, tiles  # noqa: E402

SPLITS = (1, 2, 4, 8, 16, 32, 64)
_shipped_gemm_work = gemm_tiling.gemm_work
_busy: list = []


def _gemm_work(arch, dtype, m, n, k, batch, **kw):
    pinned = kw.get("tile", "auto") != "auto" or np.any(np.asarray(kw.get("split_k", 0)))
    if pinned or _forced or _busy:  # a pinned case, or a call made while ranking (rates' own GEMMs)
        return _shipped_gemm_work(arch, dtype, m, n, k, batch, **kw)
    _busy.append(1)
    try:
        return _by_estimator(arch, dtype, m, n, k, batch, **kw)
    finally:
        _busy.pop()


def _by_estimator(arch, dtype, m, n, k, batch, **kw):
    shape = np.broadcast(*(np.asarray(v, dtype=float) for v in (m, n, k, batch))).shape
    alone = {key: v for key, v in kw.items() if key != "work"}  # each candidate on a Work of its own
    elem, acc = dtypes.size(dtype), gemm_tiling.acc_size(dtype)
    pipe, _ = gemm_tiling.matrix_pipe(arch, dtype, [])
    scaling = kw.get("scaling", "none")
    if gemm_tiling.rescales_on_valu(arch, pipe, scaling):
        acc *= 2.0
    kk = np.broadcast_to(np.asarray(k, dtype=float), shape)
    splits = (1,) if "--split1" in sys.argv or not kw.get("may_split_k", True) else SPLITS
    best = np.full(shape, np.inf)
    config = [np.zeros(shape) for _ in range(5)]
    for tile, tk in tiles.gemm_candidates(arch, elem, acc, gemm_tiling.scale_k_tiles(arch, pipe, scaling)):
        for s in splits:
            legal = kk / s >= tk if s > 1 else np.ones(shape, dtype=bool)
            if not legal.any():
                break
            _forced.update(tm=tile.m, tn=tile.n, tk=tk, lanes=tile.lanes, split=s)
            try:
                work, launch = _shipped_gemm_work(arch, dtype, m, n, k, batch, **alone)
            finally:
                _forced.clear()
            work.launch = launch
            t = np.broadcast_to(estimate(work, arch).time_s, shape)
            better = legal & (t < best)
            best = np.where(better, t, best)
            for i, v in enumerate((tile.m, tile.n, tk, tile.lanes, s)):
                config[i] = np.where(better, v, config[i])
    _forced.update(tm=config[0], tn=config[1], tk=config[2], lanes=config[3], split=config[4])
    try:
        return _shipped_gemm_work(arch, dtype, m, n, k, batch, **kw)
    finally:
        _forced.clear()


def main() -> int:
    install()
    gemm_tiling.gemm_work = _gemm_work
    import accuracy

    return accuracy.main([a for a in sys.argv[1:] if a != "--split1"])


if __name__ == "__main__":
    sys.exit(main())
