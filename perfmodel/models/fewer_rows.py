"""More rows are never faster: the floor a tiled product takes from its own first rows.

A GEMM of M rows computes its first 32 as well, so its fastest kernel cannot take less time
than the fastest kernel for 32 rows; an estimate is a lower bound on that time, so the estimate
of the smaller problem bounds the larger one (`Work.fewer_rows`, `estimate._fewer_rows`). The
32 is the height of the skinny 64-lane tiles: above it the tile ranking picks a taller tile with
more waves and bytes in flight, which the estimator can time faster than the skinny tile on fewer
rows. Attention takes the same floor from fewer query tokens (`attention.QUERY_LADDER`). See
docs/models-tiled.md, "More rows are never faster".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from perfmodel.models.tiles import GEMM_TILES
from perfmodel.work import Work

SKINNY_ROWS = max(t.m for t in GEMM_TILES if t.lanes == 64)
# Looked for up to the tallest tile's rows (one row of tiles, as on the skinny tiles), not
# beyond: a second estimate of every shape would halve the speed of large sweeps, and above it
# the floor rarely binds (`python scripts/invariants.py` lists where it still would).
TALLEST_ROWS = max(t.m for t in GEMM_TILES)


def add_floor(
    work: Work,
    p: dict,
    rows,
    fn: Callable[[dict], Work],
    shrink: Callable[[dict, int], None],
    above: float = SKINNY_ROWS,
    up_to: float = TALLEST_ROWS,
) -> None:
    """Set ``work.fewer_rows`` to ``fn`` of the cases whose ``rows`` per problem lie in
    (``above``, ``up_to``], with their parameters cut down by ``shrink(sub, n)`` (``n`` cases) to
    fewer rows per problem (SKINNY_ROWS for the GEMMs). The fastest kernel of those rows is timed
    whatever configuration a case pins (`tile=`, `split_k=`): a pinned kernel computes them too."""
    # the batch's shape: every array parameter's, broadcast (a batch shares its text ones)
    shape = np.broadcast_shapes(np.shape(rows), *(np.shape(v) for v in p.values() if isinstance(v, np.ndarray)))
    rows = np.broadcast_to(np.asarray(rows, dtype=float), shape)
    near = (rows > above) & (rows <= up_to)
    if not np.any(near):
        return
    at = np.nonzero(near) if shape else None
    sub = {
        name: (np.broadcast_to(v, shape)[at] if at is not None and isinstance(v, np.ndarray) and v.ndim else v)
        for name, v in p.items()
    }
    if "tile" in sub:
        sub["tile"], sub["split_k"] = "auto", 0.0
    shrink(sub, len(at[0]) if at is not None else 0)
    work.fewer_rows, work.fewer_rows_at = fn(sub), at


def first_rows(sub: dict, n: int) -> None:
    """``shrink`` of a product whose rows per problem are its ``m``: the first SKINNY_ROWS."""
    sub["m"] = np.full(n, float(SKINNY_ROWS)) if n else float(SKINNY_ROWS)


def fewer_by_four(key: str) -> Callable[[dict, int], None]:
    """``shrink`` to the largest power of 4 below ``key`` (sequences of an attention batch, images
    of a convolution): a geometric ladder, each rung floored by the next one down, so a floor
    costs one estimate per factor of 4 rather than one per smaller count."""

    def shrink(sub: dict, n: int) -> None:
        v = np.asarray(sub[key], dtype=float)
        fewer = 4.0 ** np.floor(np.log(v - 0.5) / np.log(4.0))
        sub[key] = fewer if n else float(fewer)

    return shrink
