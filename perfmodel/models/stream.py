"""`stream`: the BabelStream kernels (copy, mul/scale, add, triad, dot) over arrays of n elements.

Bytes and FLOPs are BabelStream's own accounting: copy and mul move 2 arrays, add and triad 3,
dot reads 2; copy does no FLOPs, mul/add 1 per element, triad and dot 2 (one FMA). Writes cost
only the written bytes: CDNA's L2 does not read-for-ownership on full-line writes, so there is
no write-allocate traffic. Launch geometry is BabelStream's HIP default: 1024 work-items per
workgroup, one element per work-item (dot: 4 workgroups per CU, grid-stride, 16-B loads).
"""

from __future__ import annotations

import re

import numpy as np

from perfmodel import dtypes
from perfmodel.models import streaming_common as sc
from perfmodel.models import traffic
from perfmodel.models.registry import REQUIRED, Param, identifies, register
from perfmodel.work import Launch, Work

TBSIZE = 1024  # BabelStream HIP default workgroup size
DOT_BLOCKS_PER_CU = 4  # BabelStream: dot_num_blocks = CUs x 4
DOT_READ_BYTES_PER_LANE = 16  # DOT_READ_DWORDS_PER_LANE = 4

# op -> (arrays read, arrays written, FLOPs per element)
OPS = {
    "copy": (1, 1, 0),
    "mul": (1, 1, 1),
    "scale": (1, 1, 1),
    "add": (2, 1, 1),
    "triad": (2, 1, 2),
    "dot": (2, 0, 2),
}
# the same on an integer type: op -> (adds, multiplies) per element (a triad's or dot's FMA is
# one of each: no full-width integer multiply-add on AMD)
INTEGER_OPS = {"copy": (0, 0), "mul": (0, 1), "scale": (0, 1), "add": (1, 0), "triad": (1, 1), "dot": (1, 1)}


@register(
    "stream",
    params=[
        Param("op", str, REQUIRED, choices=tuple(OPS), help="BabelStream kernel"),
        Param("n", int, REQUIRED, help="elements per array"),
    ],
    doc="BabelStream kernels (copy, mul/scale, add, triad, dot) over arrays of n elements",
    default_dtype="fp64",
    integer_dtypes=True,
)
def stream(p: dict, arch, dtype: str) -> Work:
    op = p["op"]
    n = np.asarray(p["n"], dtype=float)
    s = dtypes.size(dtype)
    reads, writes, fpe = OPS[op]
    w = Work()
    if dtypes.is_integer(dtype):
        adds, muls = INTEGER_OPS[op]
        sc.add_valu_ops(w, arch, dtype, adds * n, muls * n)
    else:
        sc.add_valu_ops(w, arch, dtype, fpe * n)
    read = reads * n * s
    write = writes * n * s
    if op == "dot":
        per_wg = TBSIZE * max(1.0, DOT_READ_BYTES_PER_LANE / s)  # elements one grid-stride step covers
        grid = np.clip(sc.ceil_div(n, per_wg), 1, DOT_BLOCKS_PER_CU * arch.cus)
        write = write + grid * s  # one partial sum per workgroup (summed on the host)
        flight = sc.in_flight(arch, max(s, DOT_READ_BYTES_PER_LANE), reads)
    else:
        grid = sc.ceil_div(n, TBSIZE)
        flight = sc.in_flight(arch, s, reads)  # one element of each input array per lane
    traffic.add_stream(w, arch, read, write, read + write)
    w.launch = Launch(grid=grid, workgroup_size=TBSIZE, bytes_in_flight_per_wave=flight)
    return w


# the rocprof-compute sample `vecCopy`: a BabelStream-style fp64 copy, one element per work-item
VCOPY = re.compile(r"\bvecCopy\b")


@identifies("stream")
def identify_stream(kernel: str, grid: int, workgroup: int) -> dict | None:
    if VCOPY.search(kernel) and grid:
        return {"kernel": "stream", "op": "copy", "dtype": "fp64", "n": int(grid)}
    return None
