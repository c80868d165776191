"""`reduction`: sum of n elements to one value, the two-stage device reduction of hipCUB/rocPRIM
(stage 1: a device-filling grid of workgroups, each grid-strides over the input with 16-B loads
and writes one partial; stage 2: one workgroup reads the partials and writes the result).
``partials=k`` is the first stage alone on a grid of k workgroups (the block-wise sums of
reduction tutorials and of multi-block library reductions): k partials written, no second stage."""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.models import streaming_common as sc
from perfmodel.models import traffic
from perfmodel.models.registry import REQUIRED, Param, register
from perfmodel.work import Launch, Work

WG = 256
UNROLL = 4  # 16-B loads each lane issues before it adds


@register(
    "reduction",
    params=[
        Param("n", int, REQUIRED, help="elements reduced to one value"),
        Param("partials", int, 1, minimum=1, help="values written: 1, a full reduction (two stages); k > 1, the first "
              "stage alone on k workgroups, each writing its partial sum (a block-wise sum)"),
    ],
    doc="sum reduction of n elements to one value (two-stage, one partial per workgroup), or to k block partials",
    default_dtype="fp32",
    integer_dtypes=True,
)
def reduction(p: dict, arch, dtype: str) -> Work:
    n = np.asarray(p["n"], dtype=float)
    k = np.asarray(p.get("partials", 1), dtype=float)
    s = dtypes.size(dtype)
    a = sc.acc_size(arch, dtype)
    per_wg = WG * max(1.0, sc.LOAD_BYTES / s) * UNROLL  # elements one workgroup covers per step
    blockwise = k > 1  # the caller's grid: k workgroups, each one partial, no second stage
    grid = np.where(blockwise, k, np.clip(sc.ceil_div(n, per_wg), 1, sc.resident_workgroups(arch, WG)))
    second = np.where(blockwise, 0.0, 1.0)  # stage 2 reads the partials and writes the result
    w = Work()
    # one add per element into its lane's accumulator, then one per partial in stage 2
    sc.add_valu_ops(w, arch, dtype if dtypes.is_integer(dtype) else sc.acc_dtype(arch, dtype), n + grid * second)
    read = n * s + grid * a * second  # input once, partials once (stage 2)
    write = grid * a + a * second  # partials, result
    traffic.add_stream(w, arch, read, write, n * s + grid * a + a * second)
    flight = sc.in_flight(arch, max(s, sc.LOAD_BYTES), UNROLL)
    w.launch = Launch(
        grid=grid, workgroup_size=WG, lds_bytes=(WG // arch.wave_size) * a, bytes_in_flight_per_wave=flight
    )
    return w
