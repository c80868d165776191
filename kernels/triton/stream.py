"""Vector add and the BabelStream kernels (copy, scale, add, triad, dot) over n elements.

Each program handles BLOCK consecutive elements; `dot` writes one partial sum per program and
the host adds them (BabelStream's two-stage reduction). perfmodel case: ``stream op=<op> n=<n>``.
"""

from __future__ import annotations

import triton
import triton.language as tl
from _spec import Spec, before_launch, cdiv, torch_dtype, ttype

SCALAR = 0.4  # BabelStream's startScalar


@triton.jit
def copy_kernel(a, c, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(c + offs, tl.load(a + offs, mask=m), mask=m)


@triton.jit
def scale_kernel(c, b, scalar, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(b + offs, scalar * tl.load(c + offs, mask=m), mask=m)


@triton.jit
def add_kernel(a, b, c, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(c + offs, tl.load(a + offs, mask=m) + tl.load(b + offs, mask=m), mask=m)


@triton.jit
def triad_kernel(b, c, a, scalar, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(a + offs, tl.load(b + offs, mask=m) + scalar * tl.load(c + offs, mask=m), mask=m)


@triton.jit
def dot_kernel(a, b, partial, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m, other=0.0) * tl.load(b + offs, mask=m, other=0.0)
    tl.store(partial + pid, tl.sum(x, axis=0))


# arrays each op reads and writes, in argument order
OPS = {
    "copy": (copy_kernel, ["a", "c"], False),
    "scale": (scale_kernel, ["c", "b"], True),
    "add": (add_kernel, ["a", "b", "c"], False),
    "triad": (triad_kernel, ["b", "c", "a"], True),
    "dot": (dot_kernel, ["a", "b", "partial"], False),
}


def _reference(op: str, x: dict):
    if op == "copy":
        return x["a"]
    if op == "scale":
        return SCALAR * x["c"]
    if op == "add":
        return x["a"] + x["b"]
    if op == "triad":
        return x["b"] + SCALAR * x["c"]
    return (x["a"].double() * x["b"].double()).sum().to(x["a"].dtype)


def _make(op: str, name: str, default_dtype: str) -> Spec:
    fn, arrays, has_scalar = OPS[op]

    def signature(keys, gfx):
        t = "*" + ttype(keys["dtype"], gfx)
        wide = "fp64" if keys["dtype"] == "fp64" else "fp32"
        sig = {p: t for p in arrays}
        if op == "dot":
            sig["partial"] = "*" + wide
        if has_scalar:
            sig["scalar"] = wide
        sig["n"] = "i32"
        return sig

    def grid(keys, cx):
        return (cdiv(keys["n"], cx["BLOCK"]),)

    def run(keys, device):
        import torch

        n, dt = int(keys["n"]), torch_dtype(keys["dtype"])
        g = torch.Generator().manual_seed(0)
        x = {p: torch.rand(n, generator=g, dtype=torch.float32).to(dt).to(device) for p in ("a", "b", "c")}
        cx = spec.all_constexprs(keys)
        nprog = grid(keys, cx)[0]
        if op == "dot":
            part = torch.empty(
                nprog, dtype=torch.float64 if keys["dtype"] == "fp64" else torch.float32, device=device
            )
            before_launch()
            fn[(nprog,)](x["a"], x["b"], part, n, BLOCK=cx["BLOCK"], num_warps=spec.num_warps)
            out = part.sum().to(dt)
        else:
            args = [x[p] for p in arrays]
            out_t = args[-1] = torch.empty_like(x["a"])
            before_launch()
            if has_scalar:
                fn[(nprog,)](*args, SCALAR, n, BLOCK=cx["BLOCK"], num_warps=spec.num_warps)
            else:
                fn[(nprog,)](*args, n, BLOCK=cx["BLOCK"], num_warps=spec.num_warps)
            out = out_t
        return out, _reference(op, x)

    spec = Spec(
        name=name,
        fn=fn,
        doc=f"BabelStream {op}" if name.startswith("stream") else "vector add c = a + b",
        keys={"n": 1 << 26, "dtype": default_dtype},
        constexprs={"BLOCK": 1024},
        signature=signature,
        case=lambda keys: {"kernel": "stream", "op": op, "n": int(keys["n"]), "dtype": keys["dtype"]},
        grid=grid,
        run=run,
        ints=lambda keys, cx: {"n": int(keys["n"])},
        small={"n": 5000},
        tol=1e-5,
        dtypes=("fp64", "fp32", "fp16", "bf16"),
    )
    return spec


KERNELS = [_make("add", "vector_add", "fp32")] + [_make(op, f"stream_{op}", "fp64") for op in OPS]
