"""The Philox4x32-10 cost of `models.random_numbers` against compiled AMDGCN: Triton's AMD backend
(the triton extra) compiles its own Philox4x32-10 (`tl.randint4x`, the Random123 rounds) for
gfx942 without a GPU; the multiplies and XORs per call are counted in the assembly."""

from __future__ import annotations

import collections
import os
import warnings

import pytest

from perfmodel.models import random_numbers

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def _philox_kernel(out, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(out + offs, a ^ b ^ c ^ d, mask=offs < n)


@triton.jit
def _randn_kernel(out, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a, b, c, d = tl.randn4x(seed, offs)
    tl.store(out + offs, a + b + c + d, mask=offs < n)


def _valu_ops(fn, out_type: str) -> collections.Counter:
    """The VALU opcodes of ``fn`` compiled for gfx942 (256 lanes, BLOCK 256, wave64: one lane
    makes one call of four numbers)."""
    from triton.backends.compiler import GPUTarget

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    src = triton.compiler.ASTSource(fn=fn, signature={"out": out_type, "seed": "i32", "n": "i32", "BLOCK": "constexpr"},
                                    constexprs={"BLOCK": 256})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = triton.compile(src, target=GPUTarget("hip", "gfx942", 64), options={"num_warps": 4})
    return collections.Counter(ln.split()[0] for ln in k.asm["amdgcn"].splitlines() if ln.strip().startswith("v_"))


def test_philox_multiplies_and_xors_per_call_match_the_model():
    """36 multiplies (v_mul_lo_u32 + v_mul_hi_u32) and 36 v_xor_b32 per call on gfx942, against
    the model's 40 and 40 (10 rounds of two 32x32->64 multiplies and four XORs): the compiler
    folds the operations on the counter words Triton starts at zero in the first rounds, which
    PyTorch's counters (subsequence and offset) are not. Within 10 % of the model either way."""
    ops = _valu_ops(_philox_kernel, "*i32")
    muls = ops["v_mul_lo_u32"] + ops["v_mul_hi_u32"]
    xors = sum(v for m, v in ops.items() if m.startswith("v_xor"))
    per_call = 4  # numbers per Philox call
    assert muls == pytest.approx(random_numbers.PHILOX_MULS * per_call, rel=0.1)
    assert xors == pytest.approx(random_numbers.PHILOX_OPS * per_call, rel=0.1)


def test_tritons_randn_is_not_the_hardware_sincos_path():
    """Triton's tl.randn takes accurate sine and cosine (no v_sin/v_cos: polynomials), so one call
    of four normals costs several times the Philox call it starts from; `random=normal` is
    PyTorch's rocRAND path (__sincosf: the hardware instructions) and does not describe it."""
    philox, randn = _valu_ops(_philox_kernel, "*i32"), _valu_ops(_randn_kernel, "*fp32")
    assert not any(m.startswith(("v_sin", "v_cos")) for m in randn)
    assert randn["v_log_f32_e32"] >= 2 and randn["v_sqrt_f32_e32"] >= 2  # Box-Muller: one of each per pair
    assert sum(randn.values()) > 4 * sum(philox.values())
