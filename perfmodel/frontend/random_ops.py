"""Op -> case rules of PyTorch's random-number ops (``normal_``, ``uniform_``, ``bernoulli_``,
``exponential_``, ``native_dropout``): an `elementwise` case whose integer work is the Philox
generator's and whose FLOPs and transcendentals are the distribution's.

PyTorch's CUDA and ROCm kernels draw from Philox4x32-10 (`curandStatePhilox4_32_10_t`, which
hipRAND maps to rocRAND's `philox4x32_10`): one call gives four 32-bit numbers after 10 rounds,
each round two 32 x 32 -> 64-bit multiplies (a low and a high multiply instruction each) and
four XORs (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC11; rocRAND
`rocrand_philox4x32_10.h` `single_round`); the key bump is the same in every lane (the seed is a
kernel argument), so it is scalar work, not counted. A float output takes one 32-bit number,
converted to float (one VALU instruction) and scaled by an FMA (rocRAND `uniform_distribution`);
a double takes two. The normal distribution is Box-Muller on pairs (rocRAND `box_muller`:
``sqrtf(-2 logf(u))`` and ``__sincosf``): a log, a square root, a sine and a cosine (4
transcendentals) and 5 multiplies per pair. Each op then applies its transform (one FMA:
``mean + std * x``, ``from + range * u``) or test (a compare and a select: ``u < p``).

On AMD the integer and the float work issue on the one VALU (`estimate._one_vector_alu`), so a
Philox kernel writing fp16 can be VALU-bound where the same kernel's bytes alone would not be.
"""

from __future__ import annotations

from perfmodel.frontend.op_record import OpRecord, arg, bytes_of, numel

# Philox4x32-10 per 32-bit random number: 40 multiplies and 40 XORs per call of four
PHILOX_MULS = 10.0
PHILOX_OPS = 10.0
CONVERT_OPS = 1.0  # v_cvt_f32_u32: the integer becomes a float

# per output element: (VALU FLOPs, transcendental ops) of the distribution and the op's transform
DISTRIBUTION = {
    "uniform_": (2.0 + 2.0 + 2.0, 0.0),  # to float (FMA), from + range * u (FMA), the u == to fix-up (compare, select)
    "normal_": (2.0 + 2.5 + 2.0, 2.0),  # to float, Box-Muller's 5 multiplies per pair, mean + std * x
    "bernoulli_": (2.0 + 2.0, 0.0),  # to float, u < p (compare, select)
    "bernoulli": (2.0 + 2.0, 0.0),
    "exponential_": (2.0 + 2.0, 1.0),  # to float, -log(u) / lambda: a log (and its ln 2 scale), a multiply
    "native_dropout": (2.0 + 1.0 + 2.0, 0.0),  # to float, u < p, x * mask * scale
}


def random_case(rec: OpRecord, name: str, ts: list[tuple], dtype: str, elementwise) -> dict | None:
    """The op's `elementwise` case from ``elementwise`` (`opmap._elementwise`, which counts the
    bytes: in-place samplers write self and read nothing; ``bernoulli_`` with a tensor of
    probabilities and ``bernoulli`` read it; ``native_dropout`` reads its input and writes its
    output and its bool mask), plus the Philox work. An eval-mode dropout (train false) or p = 0
    draws nothing: a copy."""
    flops, sfu = DISTRIBUTION[name]
    self_shape = ts[0] if ts else None
    if self_shape is None:
        return None
    if name == "native_dropout":
        p, train = arg(rec, 1), arg(rec, 2)
        if train is False or p == 0:
            return elementwise(rec, dtype, 0)
        case = elementwise(rec, dtype, flops)
    elif name == "bernoulli" or (name == "bernoulli_" and len(ts) > 1):  # probabilities in a tensor
        reads = None if name == "bernoulli" else _after_self(rec, ts, dtype)
        case = elementwise(rec, dtype, flops, out_shape=self_shape, reads_bytes=reads)
    else:
        case = elementwise(rec, dtype, flops, out_shape=self_shape, reads_bytes=0.0)
    if case is None:
        return None
    words = 2.0 if dtype == "fp64" else 1.0  # 32-bit random numbers per element
    case["int_muls_per_element"] = PHILOX_MULS * words
    case["int_ops_per_element"] = PHILOX_OPS * words + CONVERT_OPS
    if sfu:
        case["sfu_per_element"] = sfu
    return case


def _after_self(rec: OpRecord, ts: list[tuple], dtype: str) -> float:
    """Bytes of the tensor arguments after self (``bernoulli_(self, p)``: the probabilities)."""
    spelled = [d for s, d in zip(rec.inputs, rec.dtypes + [None] * len(rec.inputs), strict=False) if isinstance(s, tuple)]
    return sum(numel(s) * bytes_of(d, dtype) for s, d in zip(ts[1:], spelled[1:], strict=False))
