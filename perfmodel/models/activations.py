"""Per-element cost of activations and transcendental functions: (VALU fp32 FLOPs, SFU ops).

One table for every model that applies them: the MoE expert activation (`models/moe.py`) and the
elementwise ops of a traced PyTorch model (`frontend/opmap.py`), so a SiLU costs the same
wherever it appears. An FMA is 2 FLOPs, as for every VALU count in the models.

Counted from each function's formula (PyTorch's definitions) lowered to AMDGPU instructions:
exp(y) is V_EXP_F32 (2^x, a transcendental on the SFU) after one multiply by log2(e) (Triton's
fast expf on AMD lowers to llvm.amdgcn.exp2: triton test/Conversion/amd/builtin_func_to_llvm.mlir,
"__triton_hip_fast_expf"); log is V_LOG_F32 (log2) and a multiply by ln 2; a division is V_RCP_F32
(SFU) and a multiply; sqrt and rsqrt are V_SQRT_F32 / V_RSQ_F32 (SFU) - AMD "CDNA3 Instruction Set
Architecture" guide, VOP1 opcodes. Library builds that keep full-precision paths (denormal
scaling, range reduction) add a few VALU instructions: these counts are lower bounds.
Trigonometric functions are left out: their precise ROCm-Device-Libs (ocml) forms do a range
reduction whose cost depends on the argument.
"""

from __future__ import annotations

PER_ELEMENT: dict[str, tuple[float, float]] = {
    # max(x, 0): one V_MAX_F32
    "relu": (1.0, 0.0),
    # x / (1 + exp(-x)): x*(-log2 e), 2^t, 1 + e, rcp, x * r -> 3 VALU, 2 SFU
    "silu": (3.0, 2.0),
    # 1 / (1 + exp(-x)): x*(-log2 e), 2^t, 1 + e, rcp -> 2 VALU, 2 SFU
    "sigmoid": (2.0, 2.0),
    # 1 - 2 / (1 + exp(2x)): 2x log2 e (1), 2^t (SFU), 1 + e (1), rcp (SFU), FMA 1 - 2r (2)
    "tanh": (4.0, 2.0),
    # erf as ROCm-Device-Libs ocml erfF.cl for |x| >= 1: a degree-6 polynomial in Horner MADs (12
    # FLOPs) + FMA (2) + 1 - exp(-p) (exp: 1 VALU + 1 SFU, sub 1). Lanes on the |x| < 1 branch (a
    # MUL and 6 MADs/FMA, 13 FLOPs) diverge from the rest in a wave: then both run (lower bound).
    "erf": (16.0, 1.0),
    # 0.5 x (1 + erf(x / sqrt 2)): the erf above plus the x / sqrt 2 scale (1), 0.5 x (1) and the
    # final FMA (2) -> 20 VALU, 1 SFU
    "gelu": (20.0, 1.0),
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): x^2 (1), FMA 1 + c x^2 (2), k x (1), times
    # (1); tanh y as above (4 VALU, 2 SFU); 0.5 x (1) and the final FMA (2) -> 12 VALU, 2 SFU
    "gelu_tanh": (12.0, 2.0),
    # 2^(x log2 e): one multiply, one V_EXP_F32
    "exp": (1.0, 1.0),
    # log2(x) ln 2: one V_LOG_F32, one multiply
    "log": (1.0, 1.0),
    "sqrt": (0.0, 1.0),  # V_SQRT_F32
    "rsqrt": (0.0, 1.0),  # V_RSQ_F32
    "reciprocal": (0.0, 1.0),  # V_RCP_F32
}

# Activations a fused GEMM epilogue or MoE expert applies (the rest are elementwise ops only).
GEMM_ACTIVATIONS = ("silu", "gelu", "gelu_tanh", "relu")

GATE_FLOPS = 1.0  # a gated (GLU) activation multiplies by the up projection: one VALU FLOP


def cost(name: str, *, gated: bool = False) -> tuple[float, float]:
    """(VALU fp32 FLOPs, SFU ops) per element of ``name``; ``gated`` adds the GLU multiply."""
    valu, sfu = PER_ELEMENT[name]
    return valu + (GATE_FLOPS if gated else 0.0), sfu
