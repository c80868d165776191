"""Data types: element sizes and the accumulate/compute type a kernel uses for each."""

from __future__ import annotations

from perfmodel.errors import InputError, did_you_mean
from perfmodel.vocab import DTYPE_BYTES as SIZE

# The VALU type elementwise maths runs in for a storage type (fp8/int8/fp4 are upcast).
VALU_COMPUTE = {"fp64": "fp64", "fp32": "fp32", "tf32": "fp32", "fp16": "fp16", "bf16": "bf16"}

# Integer storage types. Streaming kernels on them (an int32 sum, a hash, a bit mask) run integer
# VALU instructions, timed at the spec's integer rates and reported as iops, never as FLOPs.
INTEGER = ("int64", "int32", "int16", "int8", "int4")

# 32-bit VALU instructions per operation on a wider integer: the VALU has no 64-bit integer
# add or multiply, so a 64-bit add is an add and an add-with-carry on the halves (v_add_co_u32,
# v_addc_co_u32; logic and shifts likewise two), and the low 64 bits of a 64-bit product are the
# low halves' full product (v_mul_lo_u32, v_mul_hi_u32) plus the two cross products (v_mul_lo_u32
# each) summed with two adds: LLVM's expansion of a multiply twice the register width
# (DAGTypeLegalizer::ExpandIntRes_MUL), which the AMDGPU backend uses for i64.
WIDE_OPS = {"int64": {"add": 2.0, "mul": 4.0, "mul_adds": 2.0}}


# Integer types only the streaming families take (a matrix or attention kernel on int32 or int16
# has no pipe and no library behind it: refused rather than timed on some other rate).
STREAMING_ONLY = ("int64", "int32", "int16")


def is_integer(dtype: str) -> bool:
    return dtype in INTEGER


def accepted(dtype: str, model) -> bool:
    """Whether the family ``model`` takes ``dtype`` (a known type, and a streaming-only integer
    type only where the family computes on integers: `KernelModel.integer_dtypes`)."""
    return dtype in SIZE and (dtype not in STREAMING_ONLY or model.integer_dtypes)


def check(dtype: str, model, where: str | None = None) -> None:
    """Refuse, naming the case, a dtype the family ``model`` does not take."""
    size(dtype, where)
    if not accepted(dtype, model):
        ok = ", ".join(d for d in SIZE if accepted(d, model))
        raise InputError(f"{model.name} does not take the integer type {dtype!r}; expected one of {ok}", where=where, key="dtype")


def size(dtype: str, where: str | None = None) -> float:
    if dtype not in SIZE:
        raise InputError(f"unknown dtype '{dtype}'{did_you_mean(dtype, SIZE)}; expected one of {', '.join(SIZE)}", where=where, key="dtype")
    return SIZE[dtype]


def valu_dtype(arch, dtype: str) -> str:
    """The VALU type used for elementwise maths on ``dtype`` (fp32 where the arch lacks it)."""
    d = VALU_COMPUTE.get(dtype, "fp32")
    return d if arch.has("valu", d) else "fp32"
