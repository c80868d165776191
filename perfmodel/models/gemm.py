"""GEMM (and GEMV at m=1): C[m,n] = A[m,k] B[k,n], ``batch`` independent problems.

FLOPs: 2*m*n*k*batch on the matrix pipe (plus, for weight-only quantization ``weight_dtype``,
the dequantization of B on the VALU). Bytes: the tile traffic model of `gemm_tiling.gemm_work`
(operand panels re-read per tile from L2, per XCD from the MALL, compulsory from memory when
the re-read working set fits). See docs/models-tiled.md.
"""

from __future__ import annotations

import numpy as np

from perfmodel.models import fewer_rows, gemm_tiling
from perfmodel.models.registry import Param, register
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
    fewer_rows.add_floor(
        work, p, p["m"], lambda sub: _gemm(sub, arch, dtype), fewer_rows.setter("m"), fewer_rows.GEMM_LADDER, np.inf
    )
    fewer_rows.add_ceiling(work, p, p["m"], lambda sub: _gemm(sub, arch, dtype), fewer_rows.setter("m"))
    return work


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
