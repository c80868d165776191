"""Tiled GEMM C = A B (bf16, fp16, fp8 inputs; fp32 accumulation), the tile as constexprs.

One program computes a BLOCK_M x BLOCK_N tile of C, walking K in BLOCK_K steps (the main loop,
K / BLOCK_K trips), with GROUP_M grouped ordering of the programs for L2 reuse. A is m x k, B is
k x n, both row-major (perfmodel layout ``nn``). FP8 inputs give a bf16 C. perfmodel case:
``gemm m n k layout=nn`` at the same dtype.
"""

from __future__ import annotations

import triton
import triton.language as tl
from _spec import Spec, before_launch, cdiv, torch_dtype, ttype


@triton.jit
def gemm_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
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
        acc = tl.dot(x, y, acc)
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def out_dtype(dtype: str) -> str:
    return "bf16" if dtype == "fp8" else dtype


def signature(keys, gfx):
    t = "*" + ttype(keys["dtype"], gfx)
    sig = {"a_ptr": t, "b_ptr": t, "c_ptr": "*" + ttype(out_dtype(keys["dtype"]), gfx)}
    for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"):
        sig[n] = "i32"
    return sig


def grid(keys, cx):
    return (cdiv(keys["m"], cx["BLOCK_M"]) * cdiv(keys["n"], cx["BLOCK_N"]),)


def fp8_inputs(m: int, n: int, k: int, device: str, dt=None):
    """Random A, B rounded to the fp8 grid (so the reference sees exactly what the kernel does)."""
    import torch

    dt = dt or torch.float8_e4m3fn
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(m, k, generator=g) * 0.5).to(dt)
    b = (torch.randn(k, n, generator=g) * 0.5).to(dt)
    return a.to(device), b.to(device)


def run(keys, device):
    import torch

    m, n, k, dtype = int(keys["m"]), int(keys["n"]), int(keys["k"]), keys["dtype"]
    cx = SPEC.all_constexprs(keys)
    if dtype == "fp8":
        a, b = fp8_inputs(m, n, k, device)
        ref = (a.float() @ b.float()).to(torch.bfloat16)
    else:
        g = torch.Generator().manual_seed(0)
        dt = torch_dtype(dtype)
        a = (torch.randn(m, k, generator=g) * 0.5).to(dt).to(device)
        b = (torch.randn(k, n, generator=g) * 0.5).to(dt).to(device)
        ref = (a.float() @ b.float()).to(dt)
    c = torch.empty(m, n, dtype=ref.dtype, device=device)
    before_launch()
    gemm_kernel[grid(keys, cx)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        **cx, num_warps=SPEC.num_warps, num_stages=SPEC.num_stages,
    )  # fmt: skip
    return c, ref


SPEC = Spec(
    name="gemm",
    fn=gemm_kernel,
    doc="tiled GEMM C = A B, fp32 accumulation, GROUP_M-ordered programs",
    keys={"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"},
    constexprs={"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8},
    signature=signature,
    case=lambda keys: {
        "kernel": "gemm",
        "m": int(keys["m"]),
        "n": int(keys["n"]),
        "k": int(keys["k"]),
        "layout": "nn",
        "dtype": keys["dtype"],
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
    },  # fmt: skip
    num_warps=8,
    rdna={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4},
    small={"m": 96, "n": 80, "k": 72, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16},
    tol=2e-2,
    dtypes=("bf16", "fp16", "fp8"),
    interp_dtype="fp16",
)
KERNELS = [SPEC]
