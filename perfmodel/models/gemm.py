"""GEMM (and GEMV at m=1): C[m,n] = A[m,k] B[k,n], ``batch`` independent problems.

FLOPs: 2*m*n*k*batch on the matrix pipe (plus, for weight-only quantization ``weight_dtype``,
the dequantization of B on the VALU). Bytes: the tile traffic model of `gemm_tiling.gemm_work`
(operand panels re-read per tile from L2, per XCD from the MALL, compulsory from memory when
the re-read working set fits). See docs/models-tiled.md.
"""

from __future__ import annotations

import numpy as np

from perfmodel.models import gemm_tiling
from perfmodel.models.registry import Param, register
from perfmodel.models.tiles import GEMM_TILES
from perfmodel.work import Work


@register(
    "gemm",
    params=[
        Param("m", help="rows of A and C"),
        Param("n", help="columns of B and C"),
        Param("k", help="reduction depth"),
        Param("batch", default=1, help="independent GEMMs (strided batched)"),
        Param(
            "layout", str, "tn", choices=("nn", "nt", "tn", "tt"), help="transposes of A and B (BLAS order)"
        ),
        Param("out_dtype", str, "auto", choices=("auto", *gemm_tiling.OUT_DTYPES), help="type of C (auto: bf16 for fp8/fp6/fp4, int32 for int8, else the input type)"),
        Param("scaling", str, "none", choices=("none", "tensor", "block", "mx"), help="quantization scales: per tensor, DeepSeek-style 1x128/128x128 blocks, or MX (1x32, E8M0)"),
        *gemm_tiling.WEIGHT_ONLY_PARAMS,
        *gemm_tiling.CONFIG_PARAMS,
    ],
    doc="Dense GEMM C = A B (m=1 is a GEMV): tile-aware traffic, wave quantization, XCD re-reads",
    default_dtype="bf16",
)
def gemm(p: dict, arch, dtype: str) -> Work:
    work = _gemm(p, arch, dtype)
    shape = np.broadcast_shapes(*(np.shape(p[x]) for x in ("m", "n", "k", "batch")))
    m = np.broadcast_to(np.asarray(p["m"], dtype=float), shape)
    near = (m > SKINNY_ROWS) & (m <= TALLEST_ROWS)
    if not np.any(near):
        return work
    # the first SKINNY_ROWS rows, timed on their own, bound the time (`Work.fewer_rows`)
    at = np.nonzero(near) if shape else None
    sub = {
        name: (np.broadcast_to(v, shape)[at] if at is not None and isinstance(v, np.ndarray) and v.ndim else v)
        for name, v in p.items()
    }
    sub["m"] = np.full(len(at[0]), float(SKINNY_ROWS)) if at is not None else float(SKINNY_ROWS)
    # the fastest 32-row kernel, whatever kernel a case pins: a pinned tile computes those rows too
    sub["tile"], sub["split_k"] = "auto", 0.0
    work.fewer_rows, work.fewer_rows_at = _gemm(sub, arch, dtype), at
    return work


# The height of the skinny tiles (the 64-lane ones): the most rows a GEMM can have and still run
# them. Above it the ranking picks a taller tile with more waves and bytes in flight, which the
# estimator can time faster than the skinny one on fewer rows; the fewer rows' time is a floor.
# It is looked for up to the tallest tile's rows (one row of tiles, as on the skinny tiles), not
# beyond: a second estimate of every shape would halve the speed of large sweeps, and above it
# the floor rarely binds (`python scripts/invariants.py` lists where it still would).
SKINNY_ROWS = max(t.m for t in GEMM_TILES if t.lanes == 64)
TALLEST_ROWS = max(t.m for t in GEMM_TILES)


def _gemm(p: dict, arch, dtype: str) -> Work:
    work, launch = gemm_tiling.gemm_work(
        arch,
        dtype,
        p["m"],
        p["n"],
        p["k"],
        p["batch"],
        out_dtype=p.get("out_dtype", "auto"),
        scaling=p.get("scaling", "none"),
        linear_layer=True,
        **gemm_tiling.weight_only_args(p),
        **gemm_tiling.config_args(p),
    )
    pipe = next(iter(work.flops)).split(":")[0]
    gemm_tiling.add_scaling(work, arch, pipe, *(np.asarray(p[x], dtype=float) for x in ("m", "n", "k", "batch")), p.get("scaling", "none"))
    layout = p.get("layout", "tn")
    if layout != "tn":
        work.notes.append(
            f"layout {layout}: same bytes as tn (operands are re-laid out in LDS); transposed loads not modelled"
        )
    work.launch = launch
    return work
