"""What every included Triton kernel declares, so perfmodel can compile, predict and run it.

Each kernel file defines ``KERNELS``: a list of `Spec`. A spec names the jitted function, its
default launch keys (shapes, dtype) and tile constexprs, and how those map to

* the Triton signature (argument types, for compiling without a GPU: ``signature(keys)``),
* the perfmodel case whose prediction it is (``case(keys)``),
* the launch grid (``grid(keys, cx)``) and the trip count of its main loop (``trips``), which
  turn per-pass instruction counts from the ISA into per-workgroup totals,
* a PyTorch reference and a launcher (``run(keys, device)`` returns (output, reference)).

This file imports neither torch nor triton at module level beyond what kernel files need.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# perfmodel dtype -> Triton pointer element type and torch dtype name. FP8 is OCP e4m3 on
# gfx950/gfx12 and the FNUZ variant on gfx942 (the MFMA input formats of each target).
TRITON_TYPE = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8e4nv"}
FP8_BY_GFX = {"gfx942": "fp8e4b8", "gfx90a": "fp8e4b8"}
TORCH_DTYPE = {
    "fp64": "float64",
    "fp32": "float32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp8": "float8_e4m3fn",
}


_HOOKS: list = []


def before_launch() -> None:
    """Called by every `run` right before its kernel launch (run.py --flush registers a cache flush)."""
    for h in _HOOKS:
        h()


def ttype(dtype: str, gfx: str | None = None) -> str:
    """Triton element type of a perfmodel dtype for a gfx target."""
    if dtype == "fp8" and gfx in FP8_BY_GFX:
        return FP8_BY_GFX[gfx]
    return TRITON_TYPE[dtype]


def torch_dtype(dtype: str):
    import torch

    return getattr(torch, TORCH_DTYPE[dtype])


def cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def next_pow2(x: int) -> int:
    n = 1
    while n < int(x):
        n *= 2
    return n


@dataclass(eq=False)
class Spec:
    name: str
    fn: Any
    doc: str
    keys: dict[str, Any]  # launch keys and their defaults (shapes, dtype, ...)
    constexprs: dict[str, Any]  # tile and other compile-time constants, defaults
    signature: Callable[[dict, str], dict[str, str]]  # (keys, gfx) -> {arg: triton type}
    case: Callable[[dict], dict]  # keys -> perfmodel case (kernel, dtype, shape keys)
    grid: Callable[[dict, dict], tuple[int, ...]]  # (keys, constexprs) -> launch grid
    run: Callable[[dict, str], tuple[Any, Any]]  # (keys, device) -> (output, torch reference)
    trips: Callable[[dict, dict], int] = lambda keys, cx: 1  # main-loop iterations per workgroup
    num_warps: int = 4
    num_stages: int = 2
    small: dict[str, Any] = field(default_factory=dict)  # key overrides for interpreter tests
    tol: float = 1e-2  # relative tolerance of the interpreter test against the reference
    dtypes: tuple[str, ...] = ("fp32",)  # dtypes it accepts
    derived: Callable[[dict], dict] | None = None  # constexprs that follow from keys (BLOCK = pow2(cols))
    # dtype of the CPU interpreter test: Triton 3.9's interpreter computes bf16 tl.dot wrongly
    # (a 16x16x16 bf16 dot is off by ~1e10; fp16 is exact), so dot kernels are checked in fp16
    interp_dtype: str | None = None
    # values of the integer arguments at launch ((keys, constexprs) -> {arg: value}); like Triton's
    # launcher, a compile marks the ones divisible by 16 (tt.divisibility), which is what lets it
    # vectorise loads. Pointer arguments are always marked (PyTorch allocations are 256 B aligned).
    ints: Callable[[dict, dict], dict] | None = None
    # defaults for RDNA targets (gfx10+, wave32: half the VGPR file per lane of a wave64 tile):
    # constexprs and num_warps/num_stages that compile without spills there
    rdna: dict[str, Any] = field(default_factory=dict)

    def all_constexprs(self, keys: dict, cx: dict | None = None) -> dict:
        out = dict(self.constexprs)
        if self.derived:
            out.update(self.derived(keys))
        out.update(cx or {})
        return out
