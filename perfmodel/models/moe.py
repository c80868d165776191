"""Mixture-of-experts layer (router, up or up+gate, activation, down, combine).

- router GEMM tokens x experts x hidden, softmax over experts (1 exp on sfu, 4 valu per logit);
  the router stays in the input dtype, unscaled (``scaling`` applies to the expert GEMMs);
- up: grouped GEMM over the touched experts, K = hidden. ``gated=true`` (default): up and gate
  fused, N = 2*inter, the epilogue writes act(gate)*up (tokens*topk x inter); ``gated=false``:
  a plain up projection, N = inter, the epilogue writes act(up). The activation's per-element
  work is in `ACTIVATIONS`; the gating multiply adds one VALU FLOP per element;
- down: grouped GEMM N = hidden, K = inter;
- combine: the topk outputs of a token summed with their routing weights (an FMA per element).

``out_dtype`` is the type of what the expert GEMMs write (the activation and the expert
outputs, which the combine reads back); ``scaling`` adds the quantization scales of both expert
GEMMs exactly as for `gemm` (`gemm_tiling.add_scaling`).

Routing is assumed uniform and independent: each token picks topk of the experts, so the
expected number of experts touched is E_t = experts * (1 - (1 - topk/experts)^tokens), each
receiving tokens*topk/E_t rows on average; every touched expert's weights are read.
"""

from __future__ import annotations

import numpy as np

from perfmodel.errors import InputError
from perfmodel.models import gemm_tiling, tiles, traffic
from perfmodel.models.registry import Param, floats, register
from perfmodel.work import Work

# Per-element work of an activation, as (VALU fp32 FLOPs, SFU ops); an FMA is 2 FLOPs, as for
# every VALU count in the models. Counted from the formula (PyTorch's definitions of SiLU, GELU
# and ReLU) lowered to AMDGPU instructions: exp(y) is V_EXP_F32 (2^x, a transcendental on the
# SFU) after one multiply by log2(e) (Triton's fast expf on AMD lowers to llvm.amdgcn.exp2:
# triton test/Conversion/amd/builtin_func_to_llvm.mlir, "__triton_hip_fast_expf"); a division is
# V_RCP_F32 (SFU) and a multiply. The gated (GLU) variants add one multiply by the up value.
ACTIVATIONS: dict[str, tuple[float, float]] = {
    # x / (1 + exp(-x)): x*(-log2 e), 2^t, 1 + e, rcp, x * r -> 3 VALU, 2 SFU
    "silu": (3.0, 2.0),
    # 0.5 x (1 + erf(x / sqrt 2)), erf as ROCm-Device-Libs ocml erfF.cl: for |x| >= 1 a degree-6
    # polynomial in Horner MADs (12 FLOPs) + FMA (2) + 1 - exp(-p) (exp: 1 VALU + 1 SFU, sub 1);
    # plus the x / sqrt 2 scale (1), 0.5 x (1) and the final FMA (2) -> 20 VALU, 1 SFU. Lanes on
    # the |x| < 1 branch (a MUL and 6 MADs/FMA, 13 FLOPs) diverge from the rest in a wave: then
    # both run, so this is a lower bound.
    "gelu": (20.0, 1.0),
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): x^2 (1), FMA 1 + c x^2 (2), k x (1), times
    # (1); tanh y = 1 - 2 / (1 + exp(2y)): 2y log2 e (1), 2^t (SFU), 1 + e (1), rcp (SFU),
    # FMA 1 - 2r (2); 0.5 x (1) and the final FMA (2) -> 12 VALU, 2 SFU
    "gelu_tanh": (12.0, 2.0),
    # max(x, 0): one V_MAX_F32
    "relu": (1.0, 0.0),
}


def touched_experts(tokens, experts, topk):
    """Expected number of distinct experts chosen by ``tokens`` tokens under uniform routing."""
    return experts * (1.0 - (1.0 - topk / experts) ** tokens)


@register(
    "moe",
    params=[
        Param("tokens"),
        Param("experts"),
        Param("topk", help="experts per token"),
        Param("hidden", help="model width"),
        Param("inter", help="expert intermediate width"),
        Param("gated", bool, True, help="true: up and gate fused (N = 2*inter, act(gate)*up); false: a plain up projection (N = inter)"),
        Param("activation", str, "silu", choices=tuple(ACTIVATIONS), help="activation of the experts (gelu: erf form; gelu_tanh: tanh approximation)"),
        Param("out_dtype", str, "auto", choices=("auto", *gemm_tiling.OUT_DTYPES), help="type the expert GEMMs write (auto: bf16 for fp8/fp6/fp4, int32 for int8, else the input type)"),
        Param("scaling", str, "none", choices=("none", "tensor", "block", "mx"), help="quantization scales of the expert GEMMs, as for gemm"),
    ],
    doc="MoE layer: router GEMM, experts (grouped up[+gate] GEMM with fused activation, down GEMM), combine",
    default_dtype="bf16",
)
def moe(p: dict, arch, dtype: str) -> Work:
    t, e, k, hd, it = floats(p, "tokens", "experts", "topk", "hidden", "inter")
    if np.any(k > e):
        raise InputError("expected topk <= experts", key="topk")
    gated = bool(p.get("gated", True))
    act = p.get("activation", "silu")
    out_dtype = p.get("out_dtype", "auto")
    scaling = p.get("scaling", "none")
    out_elem = gemm_tiling.OUT_DTYPES[out_dtype] if out_dtype != "auto" else tiles.out_size(dtype)
    work = Work()
    et = touched_experts(t, e, k)
    rows = t * k
    m_e = rows / et
    _, l_router = gemm_tiling.gemm_work(arch, dtype, t, e, hd, 1.0, work=work)
    work.add_flops("sfu", "fp32", t * e)
    work.add_flops("valu", "fp32", 4.0 * t * e)
    n_up = (2.0 if gated else 1.0) * it
    _, l_up = gemm_tiling.gemm_work(
        arch, dtype, m_e, n_up, hd, et, out_scale=0.5 if gated else 1.0, out_dtype=out_dtype, work=work
    )
    valu, sfu = ACTIVATIONS[act]
    if sfu:
        work.add_flops("sfu", "fp32", sfu * rows * it)
    work.add_flops("valu", "fp32", (valu + (1.0 if gated else 0.0)) * rows * it)
    _, l_down = gemm_tiling.gemm_work(arch, dtype, m_e, hd, it, et, out_dtype=out_dtype, work=work)
    pipe = next(iter(work.flops)).split(":")[0]
    for n_, k_ in ((n_up, hd), (hd, it)):
        gemm_tiling.add_scaling(work, arch, pipe, m_e, n_, k_, et, scaling)
    work.add_flops("valu", "fp32", 2.0 * rows * hd)
    traffic.add_stream(work, arch, read=rows * hd * out_elem, write=t * hd * out_elem)
    work.launch = tiles.combine_launch([l_router, l_up, l_down])
    glu = f"{act}(gate)*up" if gated else f"{act}(up)"
    work.notes.append(
        f"moe: router, {'up+gate' if gated else 'up'} ({glu} fused), down and combine kernels summed;"
        " launch = the largest grid of them"
    )
    work.notes.append("moe: uniform routing assumed (expected touched experts); top-k selection not counted")
    return work
