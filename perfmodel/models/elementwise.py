"""`elementwise`: a vectorised map over n elements reading ``reads`` and writing ``writes``
arrays with ``flops_per_element`` VALU FLOPs and ``sfu_per_element`` transcendental ops per
element (PyTorch's vectorized elementwise kernel shape: 256 work-items, 16 B per lane per array
and access). Activations' costs come from `models.activations`."""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.models import random_numbers, traffic
from perfmodel.models import streaming_common as sc
from perfmodel.models.registry import REQUIRED, Param, floats, register
from perfmodel.work import Launch, Work

WG = 256


@register(
    "elementwise",
    params=[
        Param("n", int, REQUIRED, help="elements per array"),
        Param("reads", float, 1, minimum=0, help="arrays read (n elements each)"),
        Param("writes", float, 1, minimum=0, help="arrays written (n elements each)"),
        Param("flops_per_element", float, 1, minimum=0, help="VALU FLOPs per element (FMA = 2); with an integer dtype, "
              "integer adds/logic/shifts per element (timed at the integer rate, reported as iops; an int64 one is two 32-bit ops)"),
        Param("sfu_per_element", float, 0, minimum=0, help="transcendental ops per element (exp2, log2, rcp, sqrt)"),
        Param("int_muls_per_element", float, 0, minimum=0, help="32-bit integer multiplies per element, on any dtype "
              "(quarter rate on MI100 and RDNA; with int64, an int64 multiply: four 32-bit multiplies and two adds)"),
        Param("int_ops_per_element", float, 0, minimum=0, help="32-bit integer adds/logic/shifts per element beside the "
              "FLOPs (a float kernel's random-number or index arithmetic); on AMD they share the VALU with the FLOPs"),
        Param("random", str, "none", choices=("none", *random_numbers.DISTRIBUTIONS), help="each element drawn by PyTorch's "
              "Philox4x32-10 generator from this distribution (torch.rand/randn, bernoulli_, exponential_, a training "
              "dropout): adds its integer, VALU and transcendental work to the keys above"),
    ],
    doc="elementwise map: n elements, `reads` input and `writes` output arrays",
    default_dtype="fp16",
    integer_dtypes=True,
)
def elementwise(p: dict, arch, dtype: str) -> Work:
    n, reads, writes, fpe, sfu = floats(p, "n", "reads", "writes", "flops_per_element", "sfu_per_element")
    s = dtypes.size(dtype)
    w = Work()
    muls = np.asarray(p.get("int_muls_per_element", 0.0), dtype=float)
    iops = np.asarray(p.get("int_ops_per_element", 0.0), dtype=float)
    if p.get("random", "none") != "none":
        if dtypes.is_integer(dtype):
            raise InputError(f"expected a float dtype with random={p['random']} (randint's modulo has no model), got {dtype}", key="random")
        r = random_numbers.cost(p["random"], dtype)
        fpe, sfu, muls, iops = fpe + r["flops"], sfu + r["sfu"], muls + r["int_muls"], iops + r["int_ops"]
        w.notes.append(f"random={p['random']}: Philox4x32-10 ({r['int_muls']:g} integer multiplies and {r['int_ops']:g} other"
                       f" integer ops per element) and the distribution's {r['flops']:g} FLOPs, {r['sfu']:g} transcendentals")
    sc.add_valu_ops(w, arch, dtype, fpe * n, muls * n, iops * n)
    if np.any(sfu > 0):
        w.add_flops("sfu", "fp32", sfu * n)
    read = reads * n * s
    write = writes * n * s
    traffic.add_stream(w, arch, read, write, read + write)
    per_item = max(1.0, sc.LOAD_BYTES / s)  # elements per work-item: one 16-B access per array
    grid = np.maximum(1.0, sc.ceil_div(n, WG * per_item))
    flight = sc.in_flight(arch, max(s, sc.LOAD_BYTES), np.maximum(1.0, np.maximum(reads, writes)))
    w.launch = Launch(grid=grid, workgroup_size=WG, bytes_in_flight_per_wave=flight)
    return w


def helper_kernel(arch, dtype: str, where, n, reads, writes, flops=0.0) -> Work:
    """An elementwise kernel a library dispatches around its main one (a zero fill, a cast, a
    reduction pre-pass), only where ``where`` holds: elsewhere it moves no bytes and costs no
    launch. Meant for `Work.serial`."""
    k = elementwise(
        {"n": np.where(where, n, 0.0), "reads": reads, "writes": writes, "flops_per_element": flops, "sfu_per_element": 0.0,
         "int_muls_per_element": 0.0, "int_ops_per_element": 0.0, "random": "none"},
        arch,
        dtype,
    )
    k.launch.kernels = np.where(where, 1.0, 0.0)
    return k
