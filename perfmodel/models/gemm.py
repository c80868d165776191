"""GEMM (and GEMV at m=1): C[m,n] = A[m,k] B[k,n], ``batch`` independent problems.

FLOPs: 2*m*n*k*batch on the matrix pipe. Bytes: the tile traffic model of `gemm_tiling.gemm_work`
(operand panels re-read per tile from L2, per XCD from the MALL, compulsory from memory when
the re-read working set fits). See docs/models-tiled.md.
"""

from __future__ import annotations

from perfmodel.models import gemm_tiling
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
    ],
    doc="Dense GEMM C = A B (m=1 is a GEMV): tile-aware traffic, wave quantization, XCD re-reads",
    default_dtype="bf16",
)
def gemm(p: dict, arch, dtype: str) -> Work:
    work, launch = gemm_tiling.gemm_work(arch, dtype, p["m"], p["n"], p["k"], p["batch"])
    layout = p.get("layout", "tn")
    if layout != "tn":
        work.notes.append(
            f"layout {layout}: same bytes as tn (operands are re-laid out in LDS); transposed loads not modelled"
        )
    work.launch = launch
    return work
