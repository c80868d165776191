"""`transpose`: out[c, r] = in[r, c] for a rows x cols matrix, the LDS-tiled implementation.

A 256-work-item workgroup moves one 64 x 64 tile: it reads the tile row by row (coalesced, each
lane one element of a row, 16 rows per lane), writes it into a padded LDS tile (64 x 65), and
writes the transposed tile row by row (coalesced again). HBM sees the matrix read once and
written once. L1/L2 see the same bytes unless a tile row is narrower than a cache line
(64 x s < 128 B, i.e. 1-byte types): then every access drags a whole line through L1 and L2,
the neighbouring tile's workgroup using the rest of the line from L2, so HBM stays compulsory.
"""

from __future__ import annotations

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
    grid = sc.ceil_div(rows, TILE) * sc.ceil_div(cols, TILE)
    per_lane = TILE * TILE / WG  # elements each lane loads per tile (16)
    flight = sc.in_flight(arch, s, per_lane)
    w.launch = Launch(
        grid=grid, workgroup_size=WG, lds_bytes=TILE * (TILE + 1) * s, bytes_in_flight_per_wave=flight
    )
    return w
