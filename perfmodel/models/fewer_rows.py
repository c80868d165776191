"""More work is never faster: the floor a tiled product takes from its own smaller sub-problems,
and the ceiling it takes from the same problem padded to a tile's height.

A GEMM of M rows computes its first 32 as well, so its fastest kernel cannot take less time
than the fastest kernel for 32 rows; an estimate is a lower bound on that time, so the estimate
of the smaller problem bounds the larger one (`Work.fewer_rows`, `estimate._fewer_rows`). The
32 is the height of the skinny 64-lane tiles: above it the tile ranking picks a taller tile with
more waves and bytes in flight, which the estimator can time faster than the skinny tile on fewer
rows. The same holds for the first query tokens of an attention, the first sequences of its batch
and the first images of a convolution. Each family names a ladder of smaller sizes; every rung
below a case's size is estimated, all in one batch, and the largest is the floor. See
docs/models-tiled.md, "More rows are never faster".

The other side (`add_ceiling`): a GEMM of 96 rows can run the kernel of 128 rows with the last
32 rows' loads and stores masked, as Tensile and CK guard a partial tile's edges, so its fastest
kernel is never slower than the 128-row one. Where the tile ranking's pick for the odd row count
times slower than the padded problem's (the ranking prices the pipeline fill and exposed epilogue
more roughly than the estimator does), the padded kernel is the prediction
(`Work.alternatives`, `estimate._alternatives`).
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
# A single GEMM's ladder, as (rung, the most rows it floors): the tallest tile's rows floor up to
# four tiles tall (past 256 rows the ranking can leave a split 256-row tile for an unsplit shorter
# one that the estimator times faster: MI300A BF16 256 -> 257 x 5120 x 2048 went 27.4 -> 19.2 us),
# and so does the skinny height; the rungs below it, up to the tallest tile. Grouped GEMMs keep
# `ROW_LADDER` up to the tallest tile: their batched ranking made the longer reach cost half
# their sweep speed (docs/performance.md).
GEMM_LADDER = (
    (float(TALLEST_ROWS), 4.0 * TALLEST_ROWS),
    (float(SKINNY_ROWS), 4.0 * TALLEST_ROWS),
    *((r, float(TALLEST_ROWS)) for r in ROW_LADDER[1:]),
)
# Powers of 4 (sequences of an attention batch, images of a convolution): one estimate per
# factor of 4 rather than one per smaller count.
BY_FOUR = tuple(4.0**j for j in range(15, -1, -1))
# Row counts a GEMM is padded up to: the tile heights every target has above the skinny 16, up
# to the tallest (beyond it the ranking's tiles repeat, and more estimates slow large sweeps).
PADDED_ROWS = tuple(float(h) for h in sorted({t.m for t in GEMM_TILES}) if h > 16 and h & (h - 1) == 0)


def batch_rows(p: dict, rows) -> tuple[tuple, np.ndarray]:
    """(the batch's shape: every array parameter's and ``rows``', broadcast (a batch shares its
    text ones), ``rows`` flattened over it)."""
    shape = np.broadcast_shapes(np.shape(rows), *(np.shape(v) for v in p.values() if isinstance(v, np.ndarray)))
    return shape, np.broadcast_to(np.asarray(rows, dtype=float), shape).ravel()


def cases_of(p: dict, shape: tuple, at: np.ndarray) -> dict:
    """The parameters of the batch's cases at flat indices ``at`` (text ones shared as they are)."""
    return {name: (np.broadcast_to(v, shape).ravel()[at] if isinstance(v, np.ndarray) else v) for name, v in p.items()}


def add_floor(
    work: Work,
    p: dict,
    rows,
    fn: Callable[[dict], Work],
    set_rows: Callable[[dict, np.ndarray], None],
    ladder: tuple[float | tuple[float, float], ...] = ROW_LADDER,
    up_to: float = TALLEST_ROWS,
) -> None:
    """Add to ``work.fewer_rows`` ``fn`` (the family's model without its floors) of one batch
    that holds, for every case whose ``rows`` lie in (the ladder's last rung, ``up_to``], the
    case at each rung of ``ladder`` below its ``rows`` (``set_rows(sub, rung)`` puts those sizes
    into the parameters), with the flat index of the case each member floors. A rung given as
    (rung, reach) floors only the cases of at most ``reach`` rows. A family may add
    several ladders (an attention's queries and sequences). The fastest kernel of the smaller
    problem is timed whatever configuration a case pins (`tile=`, `split_k=`): a pinned kernel
    computes those rows too."""
    shape, flat_rows = batch_rows(p, rows)
    cases, rungs = [], []
    for item in ladder:
        rung, reach = item if isinstance(item, tuple) else (item, up_to)
        below = np.flatnonzero((flat_rows > rung) & (flat_rows <= min(up_to, reach)))
        cases.append(below)
        rungs.append(np.full(len(below), rung))
    at = np.concatenate(cases)
    if not len(at):
        return
    sub = cases_of(p, shape, at)
    if "tile" in sub:
        sub["tile"], sub["split_k"] = "auto", 0.0
    set_rows(sub, np.concatenate(rungs))
    work.fewer_rows.append((fn(sub), at))


PADDED_NOTE = "run as the same product padded to the next tile height (the extra rows masked): the ranked tile for these rows times slower"


def add_ceiling(
    work: Work,
    p: dict,
    rows,
    fn: Callable[[dict], Work],
    set_rows: Callable[[dict, np.ndarray], None],
    heights: tuple[float, ...] = PADDED_ROWS,
) -> None:
    """Add to ``work.alternatives`` ``fn`` (the family's model without its floors) of one batch
    that holds every case whose ``rows`` lie strictly between two of ``heights`` (above the
    smallest), at the next height up (``set_rows(sub, height)``), with the flat index of each
    such case. Only where the tile ranking chooses (``tile=auto`` and no ``split_k``): a pinned
    kernel is the one timed."""
    if p.get("tile", "auto") != "auto":
        return
    shape, flat_rows = batch_rows(p, rows)
    ranked = np.broadcast_to(np.asarray(p.get("split_k", 0.0), dtype=float), shape).ravel() == 0
    up = np.full(flat_rows.shape, np.inf)
    for h in reversed(heights):  # the smallest height above the rows
        up = np.where(flat_rows < h, h, up)
    at = np.flatnonzero(ranked & (flat_rows > heights[0]) & np.isfinite(up) & ~np.isin(flat_rows, heights))
    if not len(at):
        return
    sub = cases_of(p, shape, at)
    set_rows(sub, up[at])
    work.alternatives.append((fn(sub), at, PADDED_NOTE))


def setter(key: str) -> Callable[[dict, np.ndarray], None]:
    """``set_rows`` of the parameter ``key``: a GEMM's ``m``, an attention's ``batch``, a
    convolution's ``n``."""

    def put(sub: dict, rung: np.ndarray) -> None:
        sub[key] = rung

    return put
