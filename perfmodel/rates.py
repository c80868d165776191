"""The rates every term of an estimate is timed against: achievable compute rates and
bandwidths (benchmark figures from the archspec, else theoretical x a sourced efficiency from
`model_constants.yaml`), load-to-use latencies, and the per-stack overheads of a timing scope.
`perfmodel.estimate` turns them into terms; `perfmodel validate` holds measurements against them.
"""

from __future__ import annotations

import functools
import re
import statistics
from pathlib import Path

from perfmodel.arch import Arch
from perfmodel.archspec import SpecValue
from perfmodel.vocab import DEVICE_MEMORY, GLOBAL_PATH, MATRIX_PIPES, SCOPES, flop_key


@functools.lru_cache(maxsize=1)
def constants() -> dict:
    from perfmodel.yamlio import load_yaml

    return load_yaml(Path(__file__).parent / "model_constants.yaml", "the model constants", shipped=True)


GEMM_LEVEL = re.compile(r"gemm|matmul|blas", re.IGNORECASE)


def gemm_level_figures(arch: Arch, pipe: str) -> dict[str, SpecValue]:
    """Measured matrix rates of whole GEMMs (library runs), per dtype: the first such entry.

    Register-only MFMA microbenchmarks are roofline ceilings, but a library GEMM never reaches
    them (operand traffic, power); only GEMM-level figures say what a GEMM achieves.
    """
    out: dict[str, SpecValue] = {}
    for dtype in arch.pipes().get(pipe, []):
        m = arch.achievable_flops(pipe, dtype)
        if m is None:
            continue
        for q in [m, *m.extra.get("alternatives", [])]:
            if GEMM_LEVEL.search(q.extra.get("benchmark", "")):
                out[dtype] = q
                break
    return out


_FILL_CACHE: dict[tuple, float] = {}


def benchmark_fill(arch: Arch, pipe: str, dtype: str, q: SpecValue) -> float:
    """Share of the CU-rounds the benchmark GEMM of a measured matrix rate kept busy, as the
    model's own tile choice and wave quantization see that shape (1 where the entry gives no
    `shape`). A library GEMM that runs its tiles in rounds of one per CU (no stream-K) measures
    the matrix rate times this share; the estimator applies each case's own share, so the rate
    it uses is the measured one divided by the benchmark's."""
    shape = q.extra.get("shape")
    if not shape or pipe not in MATRIX_PIPES:
        return 1.0
    m, n, k = (float(shape[d]) for d in ("m", "n", "k"))
    key = (arch.key, arch.cus, arch.gfx, pipe, dtype, m, n, k)
    if key not in _FILL_CACHE:
        import numpy as np

        from perfmodel.errors import InputError
        from perfmodel.estimate import occupancy
        from perfmodel.models.registry import get_model

        model = get_model("gemm")
        p = {name: spec.default for name, spec in model.params.items()}
        p.update(m=np.array([m]), n=np.array([n]), k=np.array([k]), batch=np.array([1.0]))
        try:
            work = model.fn(p, arch, dtype)
        except InputError:  # a shape or dtype the GEMM model refuses: the figure is used as measured
            _FILL_CACHE[key] = 1.0
        else:
            _FILL_CACHE[key] = float(occupancy(arch, work, (1,))["quantization"][0])
    return _FILL_CACHE[key]


def compute_rate(
    arch: Arch, pipe: str, dtype: str, first_principles: bool = False, packed: bool = False
) -> tuple[float, float, str]:
    """(achievable FLOP/s, theoretical FLOP/s, provenance) for one (pipe, dtype).

    Matrix pipes, in order of preference: a measured library-GEMM rate for this dtype; the same
    arch's GEMM-level fraction of peak from its other dtypes; its measured clock under load x
    matrix efficiency; the median GEMM-level fraction of peak over all shipped specs.
    ``first_principles=True`` uses only the last: the estimate for held-out data.
    """
    c = constants()
    if pipe == "sfu" and not arch.has("sfu", dtype):
        peak = arch.peak_flops("valu", "fp32", plain=True)
        return peak, peak, "no sfu rate in the spec: counted at the VALU fp32 rate"
    peak = arch.peak_flops(pipe, dtype)
    if pipe in MATRIX_PIPES:
        generic = c["matrix_fraction_of_peak"]["value"]
        if not first_principles:
            figs = gemm_level_figures(arch, pipe)
            if dtype in figs:
                q = figs[dtype]
                fill = benchmark_fill(arch, pipe, dtype, q)
                note = f"; divided by {fill:.3f}, the wave fill of that shape's tiles" if fill < 1.0 else ""
                return q.value / fill, peak, f"measured: {q.extra.get('benchmark', q.source)}{note}"
            if figs:
                frac = statistics.median(
                    q.value / benchmark_fill(arch, pipe, d, q) / arch.peak_flops(pipe, d) for d, q in figs.items()
                )
                return peak * frac, peak, f"{frac:.2f} of peak, as this GPU's measured GEMMs in {', '.join(figs)}"
            clk = arch.clock_under_load(pipe)
            if clk != arch.clock_hz:
                eff = c["matrix_efficiency"]["value"]
                rate = arch.rate(pipe, dtype).value * arch.cus * clk * eff
                return rate, peak, f"theoretical at the measured clock {clk / 1e6:.0f} MHz x matrix efficiency {eff}"
        return peak * generic, peak, f"{generic} of peak (median GEMM-level fraction over shipped specs)"
    # VALU: general code issues unpacked / single-issue instructions; packed code the full rate
    if packed:
        return peak, peak, "full VALU rate (packed / dual-issue instructions)"
    plain = arch.peak_flops(pipe, dtype, plain=True)
    note = "plain (unpacked, single-issue) VALU rate" if plain != peak else "theoretical VALU rate"
    return plain, peak, note


def bandwidth(arch: Arch, level: str, first_principles: bool = False) -> tuple[float, float, str]:
    """(achievable B/s, theoretical B/s, provenance) for one memory level.

    A cache on the global-memory path is never slower than the level behind it: a memory-side
    cache (MALL / Infinity Cache) that missed would still be served at device-memory speed. Where
    the spec's figures say otherwise (a placeholder MALL bandwidth times the generic efficiency
    below the HBM ceiling, MI355X), the outer level's ceiling is used and the provenance says so.
    """
    rate, peak, prov = _own_bandwidth(arch, level, first_principles)
    path = [lv for lv in GLOBAL_PATH if lv in arch.levels]
    if level in path and level not in DEVICE_MEMORY:
        outer = path[path.index(level) + 1 :]
        if outer:
            o_rate, o_peak, _ = bandwidth(arch, outer[0], first_principles)
            if o_rate > rate:
                return o_rate, max(peak, o_peak), f"{prov}; below the {outer[0]} ceiling, so the {outer[0]} ceiling is used"
    return rate, peak, prov


def _own_bandwidth(arch: Arch, level: str, first_principles: bool) -> tuple[float, float, str]:
    peak = arch.bandwidth(level)
    q = arch.level(level)["bandwidth"]
    placeholder = " (the spec's bandwidth is an assumption, tag A)" if q.tag == "A" else ""
    m = None if first_principles else arch.achievable_bandwidth(level)
    if m is not None:  # a figure measured on another part and carried over is a placeholder too
        carried = " (measured on another part, tag A)" if m.tag == "A" else ""
        return m.value, peak, f"measured: {m.extra.get('benchmark', m.source)}{carried}"
    eff = constants()["bandwidth_efficiency"].get(level, {"value": 0.8})["value"]
    return peak * eff, peak, f"theoretical x {eff} (median achievable fraction, model_constants.yaml){placeholder}"


def achievable_rates(arch: Arch) -> tuple[dict[str, float], dict[str, float]]:
    """(achievable, theoretical) rates of every roof, keyed like `Work`: level -> B/s,
    ``"pipe:dtype"`` -> FLOP/s. What a measured kernel is held against."""
    ach: dict[str, float] = {}
    peak: dict[str, float] = {}
    for pipe, dts in arch.pipes().items():
        for dt in dts:
            k = flop_key(pipe, dt)
            ach[k], peak[k], _ = compute_rate(arch, pipe, dt)
    for lv in arch.levels:
        ach[lv], peak[lv], _ = bandwidth(arch, lv)
    return ach, peak


# Resources clocked with the compute units (the core clock, SCLK): the VALU and SFU, and the
# LDS, L1 and L2 of each CU / XCD. The MALL and device memory run on their own clocks.
CORE_CLOCKED_LEVELS = ("lds", "l1", "l2")


def loaded_core_clock(arch: Arch, matrix_pipes: list[str], first_principles: bool = False) -> tuple[float, str]:
    """(share of the spec clock, note) the core runs at in a kernel that keeps a matrix pipe busy.

    One clock drives a CU's matrix cores, VALU, SFU, LDS and L1 and its XCD's L2, so a kernel
    whose matrix pipe pulls the clock down to the one measured under a sustained GEMM (the
    archspec's ``measured: clock: <pipe>``, e.g. MI300X 1207 MHz at 750 W, AMD's "Measuring
    Max-Achievable FLOPs" blog) runs its softmax, rescaling, epilogue and on-chip traffic at that
    clock too. Matrix rates need no scaling: the measured GEMM rates they come from ran at it.
    Without a measured clock, the clock those GEMM rates imply (`implied_matrix_clock`).
    1.0 without a matrix pipe, without either figure, or in first-principles mode."""
    if first_principles or not matrix_pipes:
        return 1.0, ""
    pipe = matrix_pipes[0]
    clk, how = matrix_load_clock(arch, pipe)
    if not how:
        return 1.0, ""
    return clk / arch.clock_hz, (
        f"VALU, SFU, LDS, L1 and L2 at the clock {how} under {pipe} load "
        f"({clk / 1e6:.0f} of {arch.clock_hz / 1e6:.0f} MHz)"
    )


def matrix_load_clock(arch: Arch, pipe: str) -> tuple[float, str]:
    """(Hz, how) the core runs at under a sustained load of a matrix pipe: the spec's measured
    clock ("measured"), else the one its measured GEMM rates imply ("implied by the measured
    GEMM rates"), else the spec clock (""). The implied clock, which runs the GEMM model for its
    benchmarks' wave fill, is worked out only where no clock was measured."""
    clk = arch.clock_under_load(pipe)
    if clk < arch.clock_hz:
        return clk, "measured"
    clk = implied_matrix_clock(arch, pipe)
    if clk < arch.clock_hz:
        return clk, "implied by the measured GEMM rates"
    return arch.clock_hz, ""


_IMPLIED_CLOCK: dict[tuple, float] = {}


def implied_matrix_clock(arch: Arch, pipe: str) -> float:
    """The lowest core clock (Hz) at which the spec's measured library-GEMM rates are possible.

    `compute_rate` takes a GEMM's rate as rate per clock x CUs x clock x ``matrix_efficiency``
    (AMD's MAF GEMMs reach 94 % of the FLOPs possible at the clock they ran at); solved for the
    clock, each measured rate (over its benchmark's wave fill) gives the clock it ran at, or a
    higher one where that library was less efficient. The largest over the dtypes, capped at the
    spec clock: the peak clock where the spec has no GEMM-level figure for the pipe."""
    figs = gemm_level_figures(arch, pipe)
    key = (arch.key, arch.cus, arch.clock_hz, pipe, tuple((d, q.value) for d, q in figs.items()))
    if key not in _IMPLIED_CLOCK:
        eff = constants()["matrix_efficiency"]["value"]
        clocks = [
            q.value / benchmark_fill(arch, pipe, d, q) / (arch.rate(pipe, d).value * arch.cus * eff)
            for d, q in figs.items()
        ]
        _IMPLIED_CLOCK[key] = min(arch.clock_hz, max(clocks, default=arch.clock_hz))
    return _IMPLIED_CLOCK[key]


def platform(arch: Arch) -> str:
    """The software stack of a GPU: ``cuda`` for NVIDIA parts, ``rocm`` for AMD ones."""
    return "cuda" if str(arch.vendor).upper() == "NVIDIA" else "rocm"


def scope_overhead_s(arch: Arch, scope: str) -> float:
    """Seconds a timing scope adds to the kernel's own duration on this GPU's platform
    (model_constants.yaml ``scope_overhead``): 0 for ``kernel``; for the floor scopes
    (`vocab.FLOOR_SCOPES`: ``loop``) the least time of one call, not an addition."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")
    if scope == "kernel":
        return 0.0
    return constants()["scope_overhead"][platform(arch)][scope]["value"] * 1e-6


def latency_s(arch: Arch, level: str) -> float:
    """Idle load-to-use latency of one access at a level, in seconds: the spec's own pointer-chase
    figure (``memory.<level>.latency``) where it has one, else the default of
    model_constants.yaml ``latency_ns`` (one set for every GPU)."""
    return latency_used(arch, level)[0]


def latency_used(arch: Arch, level: str) -> tuple[float, str]:
    """(seconds, provenance) of `latency_s`: which figure a Little's-law cap or a fill term used."""
    q = arch.latency(level)
    if q is not None:
        return q.value, f"{arch.key} {level} latency: {q.describe_source(arch.sources)}"
    c = constants()["latency_ns"].get(level)
    if c is None:
        return 338e-9, f"no {level} latency in the spec or model_constants.yaml: the hbm default 338 ns"
    scale = arch.core_latency_scale if level in CORE_CLOCKED_LEVELS else 1.0
    fixed = f"; x {scale:.3f}, the same cycles at {arch.key}'s fixed clock" if scale != 1.0 else ""
    return c["value"] * 1e-9 * scale, f"default {level} latency (model_constants.yaml): {c['source']}{fixed}"


def transcendental_rate(arch: Arch) -> float:
    """Device exp/rcp/sqrt per second at the peak clock: the `sfu` pipe, or the fp32 VALU rate on
    a spec that gives none (its kernels then count the exponentials on the VALU)."""
    return arch.peak_flops("sfu", "fp32") if arch.has("sfu", "fp32") else arch.peak_flops("valu", "fp32")
