"""What drawing random numbers costs per element: PyTorch's generator (Philox4x32-10) and its
distributions, for `elementwise` ``random=`` (and, through it, the random-number ops of traces
and whole-model analysis).

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

# Philox4x32-10 per 32-bit random number: 40 multiplies and 40 XORs per call of four
PHILOX_MULS = 10.0
PHILOX_OPS = 10.0
CONVERT_OPS = 1.0  # v_cvt_f32_u32: the integer becomes a float

# per output element: (VALU FLOPs, transcendental ops) of the distribution and its transform
DISTRIBUTIONS = {
    "uniform": (2.0 + 2.0 + 2.0, 0.0),  # to float (FMA), from + range * u (FMA), the u == to fix-up (compare, select)
    "normal": (2.0 + 2.5 + 2.0, 2.0),  # to float, Box-Muller's 5 multiplies per pair, mean + std * x
    "bernoulli": (2.0 + 2.0, 0.0),  # to float, u < p (compare, select)
    "exponential": (2.0 + 2.0, 1.0),  # to float, -log(u) / lambda: a log (and its ln 2 scale), a multiply
    "dropout": (2.0 + 1.0 + 2.0, 0.0),  # to float, u < p, x * mask * scale
}


def cost(distribution: str, dtype: str) -> dict[str, float]:
    """Per element: VALU FLOPs, transcendental ops, 32-bit integer multiplies and other integer
    ops of drawing one ``dtype`` value from ``distribution`` (an fp64 value takes two 32-bit
    numbers)."""
    flops, sfu = DISTRIBUTIONS[distribution]
    words = 2.0 if dtype == "fp64" else 1.0
    return {"flops": flops, "sfu": sfu, "int_muls": PHILOX_MULS * words, "int_ops": PHILOX_OPS * words + CONVERT_OPS}
