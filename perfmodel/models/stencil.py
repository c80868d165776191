"""`stencil`: 3-D, 2-D (nz = 1) or 1-D derivative stencils on an nx x ny x nz grid (x fastest),
one output per grid point (see `_shape` for points, radius and axes).

``points`` = 6r + 1 is a star of radius r (7: r=1, 13: r=2, 19: r=3, 25: r=4); 27 is the
3 x 3 x 3 box (r=1); any other count >= 7 is read as a star of radius ceil((points-1)/6).
FLOPs: points multiplies and points - 1 adds = 2 * points - 1 per output, on the VALU.

Launch: 64 x 4 work-item workgroups (one wave along x); a grid narrower than that folds the 256
lanes into the dimensions it has (`_block`: 256 x 1 for a 1-D grid along x, 1 x 256 along y,
1 x 1 x 256 along z). The naive kernel launches one workgroup per tile and z plane; the blocked
one (the fastest form) at most the workgroups the device holds at once, each looping over its
tiles. Each lane issues its ``points`` loads before the first FMA. Traffic per level, G = nx*ny*nz*s:
- L1: every load a wave issues, points * G (reuse of x/y neighbours is L1 hits);
- L2: L1 misses: each workgroup's tile plus its x/y halo in its own plane, and its 2r z
  neighbour planes, (1 + 2r/bz + 2r/bx + 2r/by) * G for a star (bz = 1 but on a grid whose
  planes hold fewer points than a workgroup has lanes); the box reads whole
  (bx+2r) x (by+2r) tiles of bz+2r planes;
- beyond L2: the grid once (compulsory) if the 2r+1 planes of one output slab fit one L2
  instance (per XCD on MI300); otherwise the kernel is blocked in x-y (subdomains marched along
  z, as the fastest published stencils are: AMD lab notes' Laplacian series) so that one block's
  planes stay in L2, and only the blocks' x-y halos are read again (`_block_halo`); on several
  XCDs with private L2s, the unblocked kernel's neighbours on other XCDs are fetched again
  past L2 (`_xcd_apart`). ``blocked=false`` is the naive kernel (one thread per point, the lab
  notes' kernel 1): where the planes miss L2 each z-neighbour plane crosses it again, and every
  level beyond sees them up to a cache that holds the 2r+1 planes (a memory-side cache);
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
AXES = ("all", "x", "y", "z")


def _block(nx, ny, nz):
    """(x, y, z) extent of one workgroup's tile: BX x BY x 1, or, where the grid is narrower than
    that, the same 256 lanes folded into the dimensions that have the points (fewer than BY rows:
    along x, 256 x 1 for a 1-D grid; fewer than BX columns: along y; a plane of fewer than 256
    points: along z). A kernel launches its blocks in the shape of its grid, never rows of idle
    lanes."""
    lanes = float(BX * BY)
    bx = np.where(nx < BX, nx, np.minimum(nx, np.where(ny < BY, lanes / np.maximum(ny, 1.0), BX)))
    by = np.minimum(ny, np.where(nx < BX, lanes / np.maximum(bx, 1.0), BY))
    bz = np.minimum(nz, np.maximum(1.0, lanes / np.maximum(bx * by, 1.0)))
    return bx, by, bz


def _block_halo(l2_bytes: float, planes, rx, ry, s: float):
    """Traffic factor of a blocked 3-D stencil: square x-y blocks whose planes fill half an L2
    instance (the other half streams the output and the next planes), each re-reading an r-wide
    halo on its x and y sides: (1 + 2 rx / B) (1 + 2 ry / B), B = sqrt(L2 / 2 / (planes s))."""
    b = np.sqrt(l2_bytes / 2.0 / (np.asarray(planes, dtype=float) * s))
    return (1.0 + 2.0 * rx / b) * (1.0 + 2.0 * ry / b)


def _xcd_apart(arch, nx, ny, nz, zr, hx, hy, box) -> np.ndarray:
    """Read factor beyond L2 of the unblocked kernel where workgroups go round-robin over several
    XCDs, each with a private L2 (MI300: workgroup i on XCD i mod xcds): a workgroup's x
    neighbours (i +- 1) always sit on other XCDs, its y neighbours (i +- tiles per row) and z
    neighbours (i +- tiles per plane) unless that count is a multiple of the XCDs, and an L2
    never holds what another XCD's L2 fetched, so each of those re-reads crosses L2 again: the
    L2 factor with only the shared neighbours counted once. 1 on a single L2."""
    x = float(max(arch.xcds, 1))
    if x <= 1:
        return np.ones_like(np.asarray(nx, dtype=float))
    bx, by, bz = _block(nx, ny, nz)
    per_row = sc.ceil_div(nx, bx)
    per_plane = per_row * sc.ceil_div(ny, by)
    z = zr / bz * (np.mod(per_plane, x) != 0)
    y = hy * (np.mod(per_row, x) != 0)
    return np.where(box, (z + 1) * (1 + hx) * (1 + y), z + 1 + hx + y)


def radius(points) -> np.ndarray:
    """Radius of a 3-D stencil from its point count (27: the 3x3x3 box; else a star)."""
    points = np.asarray(points, dtype=float)
    return np.where(points == 27, 1.0, np.ceil((points - 1) / 6))


def _shape(p: dict, nx, ny, nz):
    """(points, radius, box, involved axes as 0/1 arrays x, y, z) of a case.

    ``axis=all`` is a star (or box) over every axis with more than one point: 3-D (6r + 1
    points, 27 = box), 2-D when nz = 1 (4r + 1, 9 = box), 1-D when ny = nz = 1. ``axis=x|y|z``
    is a 1-D derivative stencil along that axis (2r + 1 points). ``radius`` sets r; otherwise it
    comes from ``points`` (default radius 1).
    """
    axis = p.get("axis", "all")
    ax = {"x": (nx > 1) * 1.0, "y": (ny > 1) * 1.0, "z": (nz > 1) * 1.0}
    ax["x"] = np.where(ax["x"] + ax["y"] + ax["z"] > 0, ax["x"], 1.0)  # a single point: x, as a 1-D grid
    if axis != "all":
        ax = {k: (np.ones_like(nx) if k == axis else np.zeros_like(nx)) for k in ax}
    dims = np.maximum(ax["x"] + ax["y"] + ax["z"], 1.0)
    pts = np.asarray(0 if p.get("points") is None else p["points"], dtype=float) + 0 * nx
    rad = np.asarray(0 if p.get("radius") is None else p["radius"], dtype=float) + 0 * nx
    box = (pts == 3.0**dims) & (dims > 1)
    r = np.where(rad > 0, rad, np.where(pts > 0, np.where(box, 1.0, np.ceil((pts - 1) / (2 * dims))), 1.0))
    points = np.where(pts > 0, pts, 2 * dims * r + 1)
    return points, r, box, ax


@register(
    "stencil",
    params=[
        Param("nx", int, REQUIRED),
        Param("ny", int, REQUIRED),
        Param("nz", int, REQUIRED),
        Param("points", int, 0, minimum=0, help="points per output: 3-D star 7/13/19/25, 27 box; 2-D (nz=1) 5/9; 0 = from radius"),
        Param("radius", int, 0, minimum=0, help="stencil radius r (0: from points, else 1)"),
        Param("axis", str, "all", choices=AXES, help="all: star over every axis; x/y/z: 1-D derivative along one axis"),
        Param("blocked", bool, True, help="true: the fastest form, x-y blocks marched along z where the planes miss L2; "
              "false: the naive kernel (one thread per point), which reads the z-neighbour planes again from beyond L2"),
    ],
    doc="3-D/2-D star or box stencil, or a 1-D derivative along one axis; one output per grid point",
    default_dtype="fp64",
)
def stencil(p: dict, arch, dtype: str) -> Work:
    nx, ny, nz = floats(p, "nx", "ny", "nz")
    points, r, box, ax = _shape(p, nx, ny, nz)
    s = dtypes.size(dtype)
    cells = nx * ny * nz
    G = cells * s
    w = Work()
    w.add_flops("valu", dtypes.valu_dtype(arch, dtype), (2 * points - 1) * cells)

    br, bw = traffic.stream_traffic(arch, G, G, 2 * G)
    bx, by, bz = _block(nx, ny, nz)
    zr = 2 * r * ax["z"]  # z-neighbour planes (none for 2-D, 1-D x/y)
    planes = (zr + 1) * nx * ny * s
    hx, hy = 2 * r * ax["x"] / bx, 2 * r * ax["y"] / by
    hz = zr / bz  # a tile of bz planes reads its bz planes and the 2r around them
    l2_star = 1 + hz + hx + hy
    l2_box = (1 + hz) * (1 + hx) * (1 + hy)
    factor = {"l1": points, "l2": np.where(box, l2_box, l2_star)}
    # beyond L2: where the 2r+1 planes of the whole grid do not fit one L2 instance, a blocked
    # kernel (x-y subdomains marched along z) keeps the planes of one block resident instead:
    # the grid crosses L2 once, plus the x-y halo each block re-reads (`_block_halo`)
    l2_cap = arch.capacity_per("l2")[0]
    miss = (zr > 0) & (planes > l2_cap)
    halo = _block_halo(l2_cap, zr + 1, r * ax["x"], r * ax["y"], s)
    caps = traffic.serving_capacities(arch)
    beyond = sc.beyond(arch, "l2")
    apart = _xcd_apart(arch, nx, ny, nz, zr, hx, hy, box)
    naive = not bool(p.get("blocked", True))
    for i, lv in enumerate(beyond):
        # a neighbouring block's halo was read moments ago: a memory-side cache serves it
        served = lv not in caps and any(c in caps for c in beyond)
        # the unblocked kernel on several XCDs: the first level beyond L2 serves every re-fetch
        factor[lv] = np.where(miss & (not served), halo, np.where(miss | (i > 0), 1.0, apart))
        if naive:  # no blocking: the 2r z-neighbour planes cross L2 again, up to a cache that holds them
            held = np.zeros_like(planes, dtype=bool)
            for c in beyond[:i]:
                held = held | (planes <= caps.get(c, 0.0))
            factor[lv] = np.where(miss & ~held, np.where(box, l2_box, zr + 1), factor[lv])
    for lv in br:
        w.add_bytes(lv, read=br[lv] * factor.get(lv, 1.0), write=bw[lv])

    grid = sc.ceil_div(nx, bx) * sc.ceil_div(ny, by) * sc.ceil_div(nz, bz)
    # the fastest form (`blocked`, the default) loops inside its workgroups, over z planes where
    # it marches blocks along z and over several points per lane where the planes fit (the AMD
    # lab notes' loop-tiled kernels): as many workgroups as the device holds at once, so the
    # dispatcher does not pace it; the naive kernel launches one workgroup per tile and plane
    if not naive:
        grid = np.minimum(grid, sc.resident_workgroups(arch, BX * BY))
    w.launch = Launch(
        grid=grid, workgroup_size=BX * BY, bytes_in_flight_per_wave=sc.in_flight(arch, s, points)
    )
    return w
