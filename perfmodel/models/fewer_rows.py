"""More work is never faster: the floor a tiled product takes from its own smaller sub-problems.

A GEMM of M rows computes its first 32 as well, so its fastest kernel cannot take less time
than the fastest kernel for 32 rows; an estimate is a lower bound on that time, so the estimate
of the smaller problem bounds the larger one (`Work.fewer_rows`, `estimate._fewer_rows`). The
32 is the height of the skinny 64-lane tiles: above it the tile ranking picks a taller tile with
more waves and bytes in flight, which the estimator can time faster than the skinny tile on fewer
rows. The same holds for the first query tokens of an attention, the first sequences of its batch
and the first images of a convolution. Each family names a ladder of smaller sizes; every rung
below a case's size is estimated, all in one batch, and the largest is the floor. See
docs/models-tiled.md, "More rows are never faster".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from perfmodel.models.tiles import GEMM_TILES
from perfmodel.work import Work

SKINNY_ROWS = max(t.m for t in GEMM_TILES if t.lanes == 64)
# Looked for up to the tallest tile's rows (one row of tiles, as on the skinny tiles), not
# beyond: more estimates of every shape would slow large sweeps, and above it the floor rarely
# binds (`python scripts/invariants.py` lists where it still would).
TALLEST_ROWS = max(t.m for t in GEMM_TILES)
# Row counts whose estimates floor a GEMM's: the skinny tiles' height, then a geometric ladder
# below it (the at most 4 rows of AMD's GEMV among them).
ROW_LADDER = (float(SKINNY_ROWS), 16.0, 4.0, 1.0)
# Powers of 4 (sequences of an attention batch, images of a convolution): one estimate per
# factor of 4 rather than one per smaller count.
BY_FOUR = tuple(4.0**j for j in range(15, -1, -1))


def add_floor(
    work: Work,
    p: dict,
    rows,
    fn: Callable[[dict], Work],
    set_rows: Callable[[dict, np.ndarray], None],
    ladder: tuple[float, ...] = ROW_LADDER,
    up_to: float = TALLEST_ROWS,
) -> None:
    """Add to ``work.fewer_rows`` ``fn`` (the family's model without its floors) of one batch
    that holds, for every case whose ``rows`` lie in (the ladder's last rung, ``up_to``], the
    case at each rung of ``ladder`` below its ``rows`` (``set_rows(sub, rung)`` puts those sizes
    into the parameters), with the flat index of the case each member floors. A family may add
    several ladders (an attention's queries and sequences). The fastest kernel of the smaller
    problem is timed whatever configuration a case pins (`tile=`, `split_k=`): a pinned kernel
    computes those rows too."""
    # the batch's shape: every array parameter's, broadcast (a batch shares its text ones)
    shape = np.broadcast_shapes(np.shape(rows), *(np.shape(v) for v in p.values() if isinstance(v, np.ndarray)))
    flat_rows = np.broadcast_to(np.asarray(rows, dtype=float), shape).ravel()
    cases, rungs = [], []
    for rung in ladder:
        below = np.flatnonzero((flat_rows > rung) & (flat_rows <= up_to))
        cases.append(below)
        rungs.append(np.full(len(below), rung))
    at = np.concatenate(cases)
    if not len(at):
        return
    sub = {name: (np.broadcast_to(v, shape).ravel()[at] if isinstance(v, np.ndarray) else v) for name, v in p.items()}
    if "tile" in sub:
        sub["tile"], sub["split_k"] = "auto", 0.0
    set_rows(sub, np.concatenate(rungs))
    work.fewer_rows.append((fn(sub), at))


def setter(key: str) -> Callable[[dict, np.ndarray], None]:
    """``set_rows`` of the parameter ``key``: a GEMM's ``m``, an attention's ``batch``, a
    convolution's ``n``."""

    def put(sub: dict, rung: np.ndarray) -> None:
        sub[key] = rung

    return put
