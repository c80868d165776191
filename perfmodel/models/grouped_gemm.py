"""Grouped GEMM: ``groups`` GEMMs of m x n x k (m rows per group, each group its own A, B, C)
in one launch whose grid is the sum of the groups' tiles.

FLOPs: 2*groups*m*n*k. Bytes: the GEMM tile traffic model with the groups as independent
problems run one after another in grid order (`gemm_tiling.gemm_work` with batch = groups).
"""

from __future__ import annotations

from perfmodel.models import fewer_rows, gemm_tiling
from perfmodel.models.registry import Param, register
from perfmodel.work import Work


@register(
    "grouped_gemm",
    params=[
        Param("groups", help="number of GEMMs in the launch"),
        Param("m", help="rows per group"),
        Param("n", help="columns of each group's B and C"),
        Param("k", help="reduction depth"),
        *gemm_tiling.CONFIG_PARAMS,
    ],
    doc="Grouped GEMM (groups x m x n x k in one launch, e.g. MoE experts)",
    default_dtype="bf16",
)
def grouped_gemm(p: dict, arch, dtype: str) -> Work:
    work = _grouped_gemm(p, arch, dtype)
    fewer_rows.add_floor(work, p, p["m"], lambda sub: _grouped_gemm(sub, arch, dtype), fewer_rows.setter("m"))
    fewer_rows.add_ceiling(work, p, p["m"], lambda sub: _grouped_gemm(sub, arch, dtype), fewer_rows.setter("m"))
    return work


def _grouped_gemm(p: dict, arch, dtype: str) -> Work:
    work, launch = gemm_tiling.gemm_work(arch, dtype, p["m"], p["n"], p["k"], p["groups"], **gemm_tiling.config_args(p))
    # each tile reads its group's operand pointers from the launch's pointer arrays before its
    # first loads (CUTLASS's ptr_A[problem_idx], the Triton tutorial's group_a_ptrs)
    launch.serial_latencies = launch.serial_latencies + 1.0
    work.launch = launch
    return work
