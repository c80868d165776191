"""FP8 block-scaled GEMM (DeepSeek-V3 style): C = (A * a_scale) (B * b_scale), bf16 out.

A (m x k, fp8) has one fp32 scale per row and 128-wide K block (a_scale: m x k/128); B (k x n, fp8)
one per 128 x 128 block (b_scale: k/128 x n/128). The main loop walks K in BLOCK_K = 128 steps;
each partial product is scaled before accumulation in fp32. perfmodel case: ``gemm`` at fp8.
"""

from __future__ import annotations

import triton
import triton.language as tl
from _spec import Spec, before_launch, cdiv, ttype

SCALE_BLOCK = 128


@triton.jit
def gemm_fp8_blockscale_kernel(
    a_ptr, b_ptr, c_ptr, as_ptr, bs_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    stride_asm, stride_ask, stride_bsk, stride_bsn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SCALE_N: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        x = tl.load(a, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = tl.load(b, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        sa = tl.load(as_ptr + rm * stride_asm + k * stride_ask, mask=rm < M, other=0.0)
        sb = tl.load(bs_ptr + k * stride_bsk + (rn // SCALE_N) * stride_bsn, mask=rn < N, other=0.0)
        acc += tl.dot(x, y) * sa[:, None] * sb[None, :]
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def signature(keys, gfx):
    t = "*" + ttype("fp8", gfx)
    sig = {"a_ptr": t, "b_ptr": t, "c_ptr": "*bf16", "as_ptr": "*fp32", "bs_ptr": "*fp32"}
    for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn",
              "stride_asm", "stride_ask", "stride_bsk", "stride_bsn"):  # fmt: skip
        sig[n] = "i32"
    return sig


def grid(keys, cx):
    return (cdiv(keys["m"], cx["BLOCK_M"]), cdiv(keys["n"], cx["BLOCK_N"]))


def run(keys, device):
    import torch
    from gemm import fp8_inputs

    m, n, k = int(keys["m"]), int(keys["n"]), int(keys["k"])
    cx = SPEC.all_constexprs(keys)
    sb_n = cx["SCALE_N"]
    a, b = fp8_inputs(m, n, k, device)
    g = torch.Generator().manual_seed(1)
    a_s = (torch.rand(m, cdiv(k, SCALE_BLOCK), generator=g) + 0.5).to(device)
    b_s = (torch.rand(cdiv(k, SCALE_BLOCK), cdiv(n, sb_n), generator=g) + 0.5).to(device)
    a_full = a.float() * a_s.repeat_interleave(SCALE_BLOCK, 1)[:, :k]
    b_full = b.float() * b_s.repeat_interleave(SCALE_BLOCK, 0)[:k].repeat_interleave(sb_n, 1)[:, :n]
    ref = (a_full @ b_full).to(torch.bfloat16)
    c = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    before_launch()
    gemm_fp8_blockscale_kernel[grid(keys, cx)](
        a, b, c, a_s, b_s, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        a_s.stride(0), a_s.stride(1), b_s.stride(0), b_s.stride(1),
        **cx, num_warps=SPEC.num_warps, num_stages=SPEC.num_stages,
    )  # fmt: skip
    return c, ref


SPEC = Spec(
    name="gemm_fp8_blockscale",
    fn=gemm_fp8_blockscale_kernel,
    doc="FP8 GEMM with per-(row, 128-K) A scales and per-128x128 B scales, bf16 out",
    keys={"m": 4096, "n": 4096, "k": 4096, "dtype": "fp8"},
    # BLOCK_K is the scale block (128): one A/B scale per K step
    constexprs={"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": SCALE_BLOCK, "SCALE_N": SCALE_BLOCK},
    signature=signature,
    case=lambda keys: {
        "kernel": "gemm",
        "m": int(keys["m"]),
        "n": int(keys["n"]),
        "k": int(keys["k"]),
        "layout": "nn",
        "dtype": "fp8",
    },  # fmt: skip
    grid=grid,
    trips=lambda keys, cx: cdiv(keys["k"], cx["BLOCK_K"]),
    run=run,
    ints=lambda k, cx: {
        "M": k["m"],
        "N": k["n"],
        "K": k["k"],
        "stride_am": k["k"],
        "stride_ak": 1,
        "stride_bk": k["n"],
        "stride_bn": 1,
        "stride_cm": k["n"],
        "stride_cn": 1,
        "stride_asm": cdiv(k["k"], SCALE_BLOCK),
        "stride_ask": 1,
        "stride_bsk": cdiv(k["n"], cx["SCALE_N"]),
        "stride_bsn": 1,
    },  # fmt: skip
    num_warps=8,
    rdna={"BLOCK_M": 64, "BLOCK_N": 64, "SCALE_N": 64, "num_warps": 4},
    small={"m": 64, "n": 96, "k": 256, "BLOCK_M": 32, "BLOCK_N": 32, "SCALE_N": 32},
    tol=2e-2,
    dtypes=("fp8",),
)
KERNELS = [SPEC]
