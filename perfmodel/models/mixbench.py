"""`mixbench`: the HIP kernel ``benchmark_func<T, block, granularity, compute_iters>`` of mixbench.

What one work-item does (ekondis/mixbench, ``mixbench-hip/mix_kernels_hip.cpp``, the template
with ``granularity`` and ``compute_iterations`` used since 2021):

- reads ``granularity`` elements of type ``T``, strided by the block size (coalesced);
- applies ``compute_iters`` multiply-adds ``x = x * x + seed`` to each element;
- reduces the elements pairwise with ``granularity / 2`` multiply-adds;
- writes nothing (the one store is guarded by a test designed never to pass).

So per element: ``compute_iters + 1/2`` multiply-adds of ``T``, i.e. ``2 * compute_iters + 1``
operations per scalar lane (mixbench's own ``computations`` count), and ``sizeof(T)`` bytes read.
``half2``/``float2`` are 2-wide vector types: every multiply-add is two scalar FMAs (one packed
``v_pk_fma_f16`` / ``v_pk_fma_f32`` instruction on CDNA2+), so they do twice the FLOPs per element.

``n`` is mixbench's vector size: elements of ``T`` read in total (work-items = n / granularity,
workgroups = work-items / block).

Integer types (``int``, ``short``) do integer multiply-adds. rocprof's counters report those as
integer VALU ops (``iops:valu:int32``: one per lane per instruction), never as FLOPs, so this
model reports no FLOPs for them (the same convention); it counts them as integer ops
(`Work.iops`), timed at the spec's integer rates (``pipes.valu.int``) where it has them:

- ``int``: CDNA has no full-width 32-bit integer multiply-add (v_mad_u32_u24 takes 24-bit
  operands, which ``x * x`` cannot be proven to fit), so each multiply-add is a v_mul_lo_u32
  (op class ``int32_mul``) and a v_add_u32 (``int32``): ``compute_iters + 1/2`` of each per
  element. The MI210 counters agree: 2 INT32 instructions per element per iteration.
- ``short``: one 16-bit multiply-add (v_mad_u16, op class ``int16``) per multiply-add: an
  assumption about the code the compiler emits (tag A), unchecked by a counter run with
  ``compute_iters > 0``.

Address arithmetic (a few integer instructions per element, also in the float kernels) is
not counted.
"""

from __future__ import annotations

import re

import numpy as np

from perfmodel.errors import InputError
from perfmodel.models import streaming_common as sc
from perfmodel.models import traffic
from perfmodel.models.registry import Param, floats, identifies, register
from perfmodel.work import Launch, Work

# integer template type -> integer op classes (perfmodel.vocab.INT_OPS) issued per multiply-add
INT_MAD = {"int": ("int32_mul", "int32"), "short": ("int16",)}

# template type -> (bytes per element, scalar lanes per element, VALU dtype or None for integers)
ELEM = {
    "float": (4, 1, "fp32"),
    "double": (8, 1, "fp64"),
    "half2": (4, 2, "fp16"),
    "float2": (8, 2, "fp32"),
    "int": (4, 1, None),
    "short": (2, 1, None),
}
# spellings found in demangled kernel names
ELEM_ALIASES = {
    "__half2": "half2",
    "HIP_vector_type<float, 2u>": "float2",
    "HIP_vector_type<float,2u>": "float2",
    "HIP_vector_type<float, 2>": "float2",
}

# the kernel as rocprof names it: benchmark_func<T, block, granularity, compute_iters>
NAME = re.compile(r"benchmark_func<\s*(?P<T>.+?),\s*(?P<block>\d+)u?,\s*(?P<gran>\d+)u?,\s*(?P<ci>\d+)u?\s*>")

DEFAULT_N = 32 * 1024 * 1024  # mixbench's default vector size (32 Mi elements)


def per_element_ops(compute_iters, lanes: int = 1):
    """Operations per element: 2 per multiply-add; ``compute_iters`` of them plus the half
    multiply-add of the pairwise reduction (``granularity / 2`` per ``granularity`` elements)."""
    return lanes * (2.0 * np.asarray(compute_iters, dtype=float) + 1.0)


@register(
    "mixbench",
    params=[
        Param("elem", str, "float", choices=tuple(ELEM), help="template type T"),
        Param("compute_iters", int, 0, minimum=0, help="multiply-adds per element (template arg 4)"),
        Param("n", int, DEFAULT_N, help="elements of T read (mixbench vector size)"),
        Param("granularity", int, 8, minimum=2, help="elements per work-item (template arg 3)"),
        Param("block", int, 256, help="work-items per workgroup (template arg 2)"),
    ],
    doc="mixbench benchmark_func<T, block, granularity, compute_iters>: read n elements, FMA chains",
    default_dtype="fp32",
)
def mixbench(p: dict, arch, dtype: str) -> Work:
    elem = p["elem"]
    size, lanes, valu = ELEM[elem]
    n, g, block, ci = floats(p, "n", "granularity", "block", "compute_iters")
    if np.any(np.mod(g, 2) != 0):
        raise InputError("expected an even granularity (the reduction pairs elements)", key="granularity")
    w = Work()
    ops = per_element_ops(ci, lanes) * n
    if valu is not None:
        w.add_flops("valu", valu, ops)
        if lanes == 2:
            w.packed.add(f"valu:{valu}")
            w.notes.append(
                f"mixbench {elem}: each multiply-add is one packed instruction doing 2 FMAs "
                "(rocprof's VALU counters count it once)"
            )
    else:
        mads = ops / 2.0  # multiply-adds per element x elements
        for op in INT_MAD[elem]:
            w.add_iops("valu", op, mads)
        w.notes.append(
            f"mixbench {elem}: integer multiply-adds as {' + '.join(INT_MAD[elem])} integer VALU ops "
            "(iops, not FLOPs), timed at the spec's integer rates"
        )
    read = n * size
    traffic.add_stream(w, arch, read, np.zeros_like(read), read)
    threads = np.ceil(n / g)
    # all `granularity` loads are issued before the first multiply-add uses one
    w.launch = Launch(
        grid=np.ceil(threads / block),
        workgroup_size=block,
        bytes_in_flight_per_wave=sc.in_flight(arch, size, g),
    )
    return w


@identifies("mixbench")
def identify_mixbench(kernel: str, grid: int, workgroup: int) -> dict | None:
    """The case of a profiled mixbench dispatch from its template arguments; ``n`` from the grid
    (work-items x granularity)."""
    m = NAME.search(kernel)
    if not m or not grid:
        return None
    elem = ELEM_ALIASES.get(m.group("T").strip(), m.group("T").strip())
    if elem not in ELEM:
        return None
    gran = int(m.group("gran"))
    return {
        "kernel": "mixbench",
        "elem": elem,
        "block": int(m.group("block")),
        "granularity": gran,
        "compute_iters": int(m.group("ci")),
        "n": int(grid) * gran,
    }
