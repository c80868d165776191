"""`transpose`: out[c, r] = in[r, c] for a rows x cols matrix, the LDS-tiled implementation.

A 256-work-item workgroup moves one 64 x 64 tile: it reads the tile row by row (coalesced, each
lane one element of a row, 16 rows per lane), writes it into a padded LDS tile (64 x 65), and
writes the transposed tile row by row (coalesced again). HBM sees the matrix read once and
written once. L1/L2 see the same bytes unless a tile row is narrower than a cache line
(64 x s < 128 B, i.e. 1-byte types): then every access drags a whole line through L1 and L2,
the neighbouring tile's workgroup using the rest of the line from L2, so HBM stays compulsory.
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.models import streaming_common as sc
from perfmodel.models import traffic
from perfmodel.models.registry import REQUIRED, Param, floats, register
from perfmodel.work import Launch, Work

TILE = 64
WG = 256


@register(
    "transpose",
    params=[Param("rows", int, REQUIRED), Param("cols", int, REQUIRED)],
    doc="out-of-place matrix transpose (64x64 LDS tiles)",
    default_dtype="fp32",
    integer_dtypes=True,
)
def transpose(p: dict, arch, dtype: str) -> Work:
    rows, cols = floats(p, "rows", "cols")
    w = _transpose(arch, dtype, rows, cols, TILE, TILE)
    _add_thin_tile(w, arch, dtype, rows, cols)
    return w


THIN_NOTE = "transpose: predicted with a thin tile (all of the short dimension, 4096 elements a workgroup), faster here than 64 x 64 tiles that are mostly empty"


def _add_thin_tile(w: Work, arch, dtype: str, rows, cols) -> None:
    """Where the matrix is thinner than a tile in one dimension, a 64 x 64 tile is mostly empty
    and the grid has up to 64 times the workgroups the data needs. Libraries carry thin tile
    forms for those shapes (MIOpen's batched transposes include 4 x 256 and 4 x 128 tiles):
    all of the short dimension by as much of the long one as keeps a tile's 4096 elements. It
    has fewer, fuller workgroups, which is faster where the grid was paced by the dispatcher and
    slower where a small matrix no longer spreads over the CUs, so it is an alternative the
    estimator takes where it is faster (`Work.alternatives`)."""
    rows, cols = np.broadcast_arrays(np.asarray(rows, dtype=float), np.asarray(cols, dtype=float))
    thin = np.minimum(rows, cols) < TILE
    at = np.flatnonzero(thin)
    if not len(at):
        return
    r, c = rows.ravel()[at], cols.ravel()[at]
    area = float(TILE * TILE)
    tr = np.where(r < c, np.maximum(r, 1.0), np.minimum(r, area / np.maximum(c, 1.0)))
    tc = np.where(r < c, np.minimum(c, area / np.maximum(r, 1.0)), np.maximum(c, 1.0))
    w.alternatives.append((_transpose(arch, dtype, r, c, tr, tc), at, THIN_NOTE))


def _transpose(arch, dtype: str, rows, cols, tile_rows, tile_cols) -> Work:
    """The kernel on tiles of ``tile_rows`` x ``tile_cols`` elements, 256 lanes a workgroup."""
    s = dtypes.size(dtype)
    nbytes = rows * cols * s
    w = Work()
    # no FLOPs: a pure data movement kernel
    br, bw = traffic.add_stream(w, arch, nbytes, nbytes, 2 * nbytes)
    # line amplification at L1/L2 when a tile row is shorter than a cache line
    f = max(1.0, sc.line_bytes(arch, "l2") / (TILE * s))
    for lv in ("l1", "l2"):
        if lv in br and f > 1:
            w.bytes_read[lv] = w.bytes_read[lv] * f
            w.bytes_write[lv] = w.bytes_write[lv] * f
    if "lds" in arch.levels:
        w.add_bytes("lds", read=nbytes, write=nbytes)  # each element through LDS once
    grid = sc.ceil_div(rows, tile_rows) * sc.ceil_div(cols, tile_cols)
    per_lane = TILE * TILE / WG  # elements each lane loads per tile (16)
    flight = sc.in_flight(arch, s, per_lane)
    w.launch = Launch(
        grid=grid, workgroup_size=WG, lds_bytes=TILE * (TILE + 1) * s, bytes_in_flight_per_wave=flight
    )
    return w
