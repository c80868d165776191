"""LayerNorm (gamma, beta) and RMSNorm (gamma) over the last axis: one program per row, the row
in registers (BLOCK = next power of two >= cols), fp32 statistics, eps = 1e-5.
perfmodel cases: ``layernorm rows cols`` and ``rmsnorm rows cols``.
"""

from __future__ import annotations

import triton
import triton.language as tl
from _spec import Spec, before_launch, next_pow2, torch_dtype, ttype

EPS = 1e-5


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / cols
    d = tl.where(m, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / cols + eps)
    w = tl.load(w_ptr + offs, mask=m, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + offs, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
    w = tl.load(w_ptr + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=m)


def _make(kind: str) -> Spec:
    fn = layernorm_kernel if kind == "layernorm" else rmsnorm_kernel

    def signature(keys, gfx):
        t = "*" + ttype(keys["dtype"], gfx)
        sig = {"x_ptr": t, "w_ptr": t}
        if kind == "layernorm":
            sig["b_ptr"] = t
        sig.update(y_ptr=t, cols="i32", stride="i32", eps="fp32")
        return sig

    def run(keys, device):
        import torch

        rows, cols, dt = int(keys["rows"]), int(keys["cols"]), torch_dtype(keys["dtype"])
        g = torch.Generator().manual_seed(0)
        x = (torch.randn(rows, cols, generator=g) * 2 + 0.5).to(dt).to(device)
        w = (torch.rand(cols, generator=g) + 0.5).to(dt).to(device)
        b = torch.randn(cols, generator=g).to(dt).to(device)
        y = torch.empty_like(x)
        cx = spec.all_constexprs(keys)
        before_launch()
        if kind == "layernorm":
            fn[(rows,)](x, w, b, y, cols, x.stride(0), EPS, **cx, num_warps=spec.num_warps)
            ref = torch.nn.functional.layer_norm(x.float(), (cols,), w.float(), b.float(), EPS)
        else:
            fn[(rows,)](x, w, y, cols, x.stride(0), EPS, **cx, num_warps=spec.num_warps)
            xf = x.float()
            ref = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()
        return y, ref.to(dt)

    spec = Spec(
        name=kind,
        fn=fn,
        doc=f"{kind} over the last axis, one program per row",
        keys={"rows": 8192, "cols": 4096, "dtype": "fp16"},
        constexprs={},
        derived=lambda keys: {"BLOCK": next_pow2(keys["cols"])},
        signature=signature,
        case=lambda keys: {
            "kernel": kind,
            "rows": int(keys["rows"]),
            "cols": int(keys["cols"]),
            "dtype": keys["dtype"],
        },
        grid=lambda keys, cx: (int(keys["rows"]),),
        run=run,
        ints=lambda k, cx: {"cols": k["cols"], "stride": k["cols"]},
        num_warps=8,
        small={"rows": 29, "cols": 700},
        tol=1e-2,
        dtypes=("fp32", "fp16", "bf16"),
    )
    return spec


KERNELS = [_make("layernorm"), _make("rmsnorm")]
