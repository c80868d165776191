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


TILED_NOTE = "run as the tiled GEMM kernel: the GEMV times slower for this shape (few columns or a long K on few workgroups)"


def _gemm(p: dict, arch, dtype: str, linear_layer: bool = True) -> Work:
    work, launch = gemm_tiling.gemm_work(
        arch,
        dtype,
        p["m"],
        p["n"],
        p["k"],
        p["batch"],
        out_dtype=p.get("out_dtype", "auto"),
        scaling=p.get("scaling", "none"),
        linear_layer=linear_layer,
        **gemm_tiling.weight_only_args(p),
        **gemm_tiling.config_args(p),
    )
    if linear_layer:
        _add_tiled_alternative(work, p, arch, dtype)
    pipe = next(iter(work.flops)).split(":")[0]
    gemm_tiling.add_scaling(work, arch, pipe, *(np.asarray(p[x], dtype=float) for x in ("m", "n", "k", "batch")), p.get("scaling", "none"))
    layout = p.get("layout", "tn")
    if layout != "tn":
        work.notes.append(
            f"layout {layout}: same bytes as tn (operands are re-laid out in LDS); transposed loads not modelled"
        )
    work.launch = launch
    return work


def _add_tiled_alternative(work: Work, p: dict, arch, dtype: str) -> None:
    """Where a linear layer of at most 4 rows runs AMD's GEMV (`gemm_tiling.gemv_rows`), the tiled
    kernel computes it too: a library dispatches the GEMV where it is the faster (decode shapes,
    thousands of columns), and the GEMV spreads only its columns over the CUs (K is split across
    one wave's lanes), so a product of too few columns for the CUs (one wave a workgroup, fewer
    workgroups than CUs) leaves most of them idle however long its K. There the tiled kernel
    (which splits K) is an alternative the estimator takes where it times faster
    (`Work.alternatives`); without it the GEMV of 1-4 rows also floored every GEMM of up to 256
    rows of that shape (`fewer_rows`): 16 x 16 x 2^20 BF16 on MI300X took the 4-row GEMV's 338 us."""
    shape, m = fewer_rows.batch_rows(p, p["m"])
    k, split = (np.broadcast_to(np.asarray(p.get(x, 0.0), dtype=float), shape).ravel() for x in ("k", "split_k"))
    gemv = gemm_tiling.runs_gemv(
        arch, dtype, m, k, p.get("out_dtype", "auto"), gemm_tiling.weight_only_args(p)["weight_dtype"],
        p.get("scaling", "none"), p.get("tile", "auto"), split,
    )
    at = np.flatnonzero(gemv)
    if len(at):  # only where the GEMV has one wave a workgroup and still leaves CUs idle
        n, batch = (np.broadcast_to(np.asarray(p[x], dtype=float), shape).ravel()[at] for x in ("n", "batch"))
        g = gemm_tiling.gemv_config(arch, m[at], n, k[at], batch)
        at = at[(g["lanes"] <= arch.wave_size) & (np.ceil(n / g["tn"]) * batch < arch.cus)]
    if len(at):
        work.alternatives.append((_gemm(fewer_rows.cases_of(p, shape, at), arch, dtype, linear_layer=False), at, TILED_NOTE))
