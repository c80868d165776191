"""`stencil`: 3-D stencil on an nx x ny x nz grid (x fastest), one output per grid point.

``points`` = 6r + 1 is a star of radius r (7: r=1, 13: r=2, 19: r=3, 25: r=4); 27 is the
3 x 3 x 3 box (r=1); any other count >= 7 is read as a star of radius ceil((points-1)/6).
FLOPs: points multiplies and points - 1 adds = 2 * points - 1 per output, on the VALU.

Launch: 64 x 4 work-item workgroups (one wave along x), one z plane each; each lane issues its
``points`` loads before the first FMA. Traffic per level, G = nx*ny*nz*s:
- L1: every load a wave issues, points * G (reuse of x/y neighbours is L1 hits);
- L2: L1 misses: each workgroup's tile plus its x/y halo in its own plane, and its 2r z
  neighbour planes, (2r + 1 + 2r/bx + 2r/by) * G for a star; the box reads whole
  (bx+2r) x (by+2r) tiles of 2r+1 planes;
- beyond L2: the grid once (compulsory) if the 2r+1 planes of one output slab fit one L2
  instance (per XCD on MI300); otherwise every z neighbour is fetched again, (2r+1) * G, from
  the first cache beyond L2 that holds the planes (the MALL) or from HBM;
- writes: G at every level the grid's traffic reaches (no read-for-ownership).
The warm steady state applies throughout: a grid (input + output) that fits a cache is served
from it (`traffic.stream_traffic`).
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.models import streaming_common as sc
from perfmodel.models import traffic
from perfmodel.models.registry import REQUIRED, Param, floats, register
from perfmodel.work import Launch, Work

BX, BY = 64, 4


def radius(points) -> np.ndarray:
    points = np.asarray(points, dtype=float)
    return np.where(points == 27, 1.0, np.ceil((points - 1) / 6))


@register(
    "stencil",
    params=[
        Param("nx", int, REQUIRED),
        Param("ny", int, REQUIRED),
        Param("nz", int, REQUIRED),
        Param("points", int, 7, minimum=7, help="7, 13, 19, 25 (star, radius 1-4) or 27 (3x3x3 box)"),
    ],
    doc="3-D star stencil (7/13/19/25 points; 27 = box), one output per grid point",
    default_dtype="fp64",
)
def stencil(p: dict, arch, dtype: str) -> Work:
    nx, ny, nz, points = floats(p, "nx", "ny", "nz", "points")
    points = points + 0 * nx
    r = radius(points)
    box = points == 27
    s = dtypes.size(dtype)
    cells = nx * ny * nz
    G = cells * s
    w = Work()
    w.add_flops("valu", dtypes.valu_dtype(arch, dtype), (2 * points - 1) * cells)

    br, bw = traffic.stream_traffic(arch, G, G, 2 * G)
    bx = np.minimum(BX, nx)
    by = np.minimum(BY, ny)
    planes = (2 * r + 1) * nx * ny * s
    l2_star = 2 * r + 1 + 2 * r / bx + 2 * r / by
    l2_box = (2 * r + 1) * (1 + 2 * r / bx) * (1 + 2 * r / by)
    factor = {"l1": points, "l2": np.where(box, l2_box, l2_star)}
    # beyond L2: re-reads of z neighbours wherever the planes miss every cache so far
    miss = planes > arch.capacity_per("l2")[0]
    caps = traffic.serving_capacities(arch)
    for lv in sc.beyond(arch, "l2"):
        factor[lv] = np.where(miss, 2 * r + 1, 1.0)
        if lv in caps:
            miss = miss & (planes > caps[lv])
    for lv in br:
        w.add_bytes(lv, read=br[lv] * factor.get(lv, 1.0), write=bw[lv])

    grid = sc.ceil_div(nx, BX) * sc.ceil_div(ny, BY) * nz
    w.launch = Launch(
        grid=grid, workgroup_size=BX * BY, bytes_in_flight_per_wave=sc.in_flight(arch, s, points)
    )
    return w
