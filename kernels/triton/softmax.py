"""Row softmax over the last axis: one program per row, the whole row in registers (BLOCK = the
next power of two >= cols), max-subtracted, fp32 maths. perfmodel case: ``softmax rows cols``.
"""

from __future__ import annotations

import triton
import triton.language as tl
from _spec import Spec, before_launch, next_pow2, torch_dtype, ttype


@triton.jit
def softmax_kernel(x_ptr, y_ptr, cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < cols
    x = tl.load(x_ptr + row * stride_x + offs, mask=m, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=m)


def run(keys, device):
    import torch

    rows, cols, dt = int(keys["rows"]), int(keys["cols"]), torch_dtype(keys["dtype"])
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(rows, cols, generator=g) * 3).to(dt).to(device)
    y = torch.empty_like(x)
    cx = SPEC.all_constexprs(keys)
    before_launch()
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), **cx, num_warps=SPEC.num_warps)
    return y, torch.softmax(x.float(), dim=-1).to(dt)


SPEC = Spec(
    name="softmax",
    fn=softmax_kernel,
    doc="row softmax, one program per row, row held in registers",
    keys={"rows": 4096, "cols": 4096, "dtype": "fp16"},
    constexprs={},
    derived=lambda keys: {"BLOCK": next_pow2(keys["cols"])},
    signature=lambda keys, gfx: {
        "x_ptr": "*" + ttype(keys["dtype"], gfx),
        "y_ptr": "*" + ttype(keys["dtype"], gfx),
        "cols": "i32",
        "stride_x": "i32",
        "stride_y": "i32",
    },  # fmt: skip
    case=lambda keys: {
        "kernel": "softmax",
        "rows": int(keys["rows"]),
        "cols": int(keys["cols"]),
        "dtype": keys["dtype"],
    },
    grid=lambda keys, cx: (int(keys["rows"]),),
    run=run,
    ints=lambda k, cx: {"cols": k["cols"], "stride_x": k["cols"], "stride_y": k["cols"]},
    num_warps=8,
    small={"rows": 37, "cols": 1000},
    tol=1e-2,
    dtypes=("fp32", "fp16", "bf16"),
)
KERNELS = [SPEC]
