"""The time estimator: invariants over every kernel family and arch, and its constants."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
import yaml
from model_runs import pipeline_fill_s, split_reduction_s

from perfmodel.arch import load_all, load_arch
from perfmodel.estimate import estimate
from perfmodel.models import load_all_models
from perfmodel.models.registry import MODELS
from perfmodel.rates import constants
from perfmodel.sweep import sweep
from perfmodel.vocab import is_bound_label

ARCHS = ["mi300x", "mi210", "mi355x", "rx7900xtx", "rx6900xt", "h100"]

# one realistic shape per family, used to build random batches around it
BASE = {
    "gemm": {"m": 4096, "n": 4096, "k": 4096},
    "grouped_gemm": {"groups": 8, "m": 512, "n": 4096, "k": 4096},
    "attention": {"batch": 2, "heads": 32, "seq_q": 4096, "head_dim": 128},
    "softmax": {"rows": 8192, "cols": 4096},
    "layernorm": {"rows": 8192, "cols": 4096},
    "rmsnorm": {"rows": 8192, "cols": 4096},
    "stream": {"op": "triad", "n": 2**25},
    "elementwise": {"n": 2**26},
    "reduction": {"n": 2**26},
    "transpose": {"rows": 8192, "cols": 8192},
    "conv2d": {"n": 32, "c": 64, "h": 56, "w": 56, "k": 64, "r": 3, "s": 3, "pad": 1},
    "moe": {"tokens": 4096, "experts": 8, "topk": 2, "hidden": 4096, "inter": 14336},
    "stencil": {"nx": 256, "ny": 256, "nz": 256},
    "mixbench": None,  # validated against real data in test_validate.py
}


def families():
    load_all_models()
    return [k for k in MODELS if BASE.get(k) is not None]


def dtype_for(arch, family):
    if family in ("stream", "stencil"):
        return "fp64"
    return "fp16" if arch.has(arch.matrix_pipe or "valu", "fp16") else "fp32"


def scaled(base: dict, scale: np.ndarray) -> dict:
    """The base shape with every size scaled (numbers only), at least 1."""
    out = {}
    for k, v in base.items():
        if isinstance(v, (int, float)) and k not in ("r", "s", "pad", "stride", "topk", "experts", "points", "head_dim"):
            out[k] = np.maximum(1, np.round(v * scale))
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("family", families())
def test_time_never_below_theoretical_roof_and_bound_matches_largest_term(arch, family):
    a = load_arch(arch)
    rng = np.random.default_rng(0)
    scale = np.exp(rng.uniform(np.log(1 / 64), np.log(4), 200))
    s = sweep(family, a, dtype_for(a, family), **scaled(BASE[family], scale))
    t = s.time_s
    assert t.shape == (200,)
    assert np.all(np.isfinite(t)) and np.all(t > 0)
    assert np.all(t >= s.roofline_time_s * (1 - 1e-9)), "an estimate beat the theoretical roofline"
    assert np.all(s.headroom <= 1 + 1e-9)
    # the bound names the largest term (or launch/latency, which are explicit)
    terms = [n for n in s.terms if n != "launch"]
    stack = np.stack([s.term(n) for n in terms])
    largest = np.array([":".join(terms[i].split(":")[:2]) for i in np.argmax(stack, axis=0)])
    ok = (s.bound == largest) | (s.bound == "launch") | (s.bound == "latency")
    # a tie between a cache and the memory behind it goes to the memory (estimate._outer_level_wins_ties)
    short = np.array([":".join(n.split(":")[:2]) for n in terms])
    top = stack.max(axis=0)
    ok |= np.array([any(stack[j, i] >= top[i] for j in np.flatnonzero(short == b)) for i, b in enumerate(s.bound)])
    # where the operation's other kernels (Work.serial) take longest, the bound is theirs
    ok |= (largest == "serial") & np.array([is_bound_label(b) for b in s.bound])
    # where the fewer rows' estimate floors the time (Work.fewer_rows), the bound is that estimate's
    ok |= (largest == "latency:fewer_rows") & np.array([is_bound_label(b) for b in s.bound])
    assert ok.all(), set(zip(s.bound[~ok], largest[~ok], strict=True))


@pytest.mark.parametrize("family", families())
def test_time_is_monotonic_in_problem_size(family):
    a = load_arch("mi300x")
    scale = 2.0 ** np.arange(-5, 4)  # powers of two keep shapes multiples of the tile sizes
    s = sweep(family, a, dtype_for(a, family), **scaled(BASE[family], scale))
    t = s.time_s
    # Near the launch floor a smaller grid can hide less latency (fewer waves in flight), so
    # the invariant is checked where the work itself dominates: above 3x the launch overhead.
    big = t[:-1] > 3 * a.launch_overhead_s
    assert big.sum() >= 3
    assert np.all(t[1:][big] >= t[:-1][big] * 0.98), t


def test_small_kernel_is_launch_bound_and_big_stream_is_memory_bound():
    a = load_arch("mi300x")
    s = sweep("stream", a, "fp64", op="copy", n=np.array([256, 2**28]))
    assert s.bound[0] == "launch"
    assert s.bound[1] == "memory:hbm"
    # the big copy runs at the measured BabelStream bandwidth within 5%
    bw = 2 * 8 * 2**28 / s.time_s[1]
    assert bw == pytest.approx(a.achievable_bandwidth("hbm").value, rel=0.05)


def test_matrix_gemm_is_compute_bound_at_the_measured_clock():
    a = load_arch("mi300x")
    s = sweep("gemm", a, "bf16", m=[8192], n=8192, k=8192)
    assert str(s.bound[0]) == "compute:mfma"
    achieved = 2 * 8192**3 / s.time_s[0]
    measured = a.achievable_flops("mfma", "bf16").value
    # a large square GEMM lands near the measured hipBLASLt rate, never above it
    assert 0.7 * measured < achieved <= measured * 1.0001


def test_a_matrix_kernel_runs_its_other_pipes_and_on_chip_levels_at_the_loaded_clock():
    """MI300X sustains 1207 of 2100 MHz under a GEMM (S7): a kernel that uses the matrix pipe
    runs its VALU/SFU work and its LDS, L1 and L2 traffic at that clock too; the MALL and HBM
    (other clocks), kernels without matrix work, first-principles mode and GPUs without a
    measured clock are not scaled."""
    from perfmodel.models.registry import get_model
    from perfmodel.rates import bandwidth, compute_rate

    a = load_arch("mi300x")
    ratio = a.clock_under_load("mfma") / a.clock_hz
    assert ratio == pytest.approx(1207 / 2100)
    shape = {"batch": [2], "heads": [32], "seq_q": [4096], "head_dim": [128]}
    model = get_model("attention")
    p = {name: spec.default for name, spec in model.params.items()} | {k: np.array(v, float) for k, v in shape.items()}
    e = estimate(model.fn(p, a, "bf16"), a)
    valu = compute_rate(a, "valu", "fp32")[0]
    assert e.rates_used.rate["compute:valu:fp32"] == pytest.approx(valu * ratio)
    assert "1207 of 2100 MHz" in e.rates_used.provenance["compute:valu:fp32"]
    for lv in ("lds", "l1", "l2"):
        assert e.rates_used.rate[f"memory:{lv}"] == pytest.approx(bandwidth(a, lv)[0] * ratio)
    for lv in ("mall", "hbm"):
        assert e.rates_used.rate[f"memory:{lv}"] == pytest.approx(bandwidth(a, lv)[0])
    fp = estimate(model.fn(p, a, "bf16"), a, first_principles=True)
    assert fp.rates_used.rate["compute:valu:fp32"] == pytest.approx(compute_rate(a, "valu", "fp32", True)[0])
    ln = sweep("layernorm", a, "bf16", rows=[8192], cols=4096)
    assert ln.estimate.rates_used.rate["memory:l2"] == pytest.approx(bandwidth(a, "l2")[0])
    # the epilogue writes of a round drain into the L2 at that clock too
    from perfmodel.estimate import _epilogue_drain, occupancy

    g = get_model("gemm")
    gp = {name: spec.default for name, spec in g.params.items()} | {
        "m": np.array([4096.0]), "n": np.array([4096.0]), "k": np.array([256.0]), "batch": np.array([1.0])
    }
    gw = g.fn(gp, a, "bf16")
    occ = occupancy(a, gw, (1,))
    assert _epilogue_drain(a, occ, gw.launch, False, ratio)[0] == pytest.approx(
        _epilogue_drain(a, occ, gw.launch, False)[0] / ratio
    )
    b = load_arch("mi308x")  # neither a measured clock under load nor a measured GEMM rate
    eb = estimate(model.fn(p, b, "bf16"), b)
    assert eb.rates_used.rate["compute:valu:fp32"] == pytest.approx(compute_rate(b, "valu", "fp32")[0])


def test_without_a_measured_clock_the_measured_gemm_rates_imply_one():
    """A GEMM rate is rate per clock x CUs x clock x matrix_efficiency (0.94, AMD's MAF blog, from
    MI300X): solved for the clock, MI325X's measured BF16 843 TFLOP/s gives the 1447 MHz AMD
    measured beside it (an independent check: the 0.94 came from MI300X), and MI355X, which has
    GEMM rates but no clock, runs its VALU and on-chip levels at the highest clock its rates imply."""
    from perfmodel.models.registry import get_model
    from perfmodel.rates import (
        benchmark_fill,
        compute_rate,
        constants,
        gemm_level_figures,
        implied_matrix_clock,
    )

    m325 = load_arch("mi325x")
    assert implied_matrix_clock(m325, "mfma") == pytest.approx(m325.clock_under_load("mfma"), rel=0.01)
    b = load_arch("mi355x")
    figs = gemm_level_figures(b, "mfma")
    eff = constants()["matrix_efficiency"]["value"]
    want = max(q.value / benchmark_fill(b, "mfma", d, q) / (b.rate("mfma", d).value * b.cus * eff) for d, q in figs.items())
    assert implied_matrix_clock(b, "mfma") == pytest.approx(min(want, b.clock_hz))
    ratio = implied_matrix_clock(b, "mfma") / b.clock_hz
    assert 0.5 < ratio < 0.8  # well below the 2400 MHz peak clock
    model = get_model("attention")
    p = {name: spec.default for name, spec in model.params.items()} | {
        "batch": np.array([2.0]), "heads": np.array([32.0]), "seq_q": np.array([4096.0]), "head_dim": np.array([128.0])
    }
    e = estimate(model.fn(p, b, "bf16"), b)
    assert e.rates_used.rate["compute:valu:fp32"] == pytest.approx(compute_rate(b, "valu", "fp32")[0] * ratio)
    assert "implied by the measured GEMM rates" in e.rates_used.provenance["compute:valu:fp32"]
    # first principles uses no measured figure, so no clock either
    fp = estimate(model.fn(p, b, "bf16"), b, first_principles=True)
    assert fp.rates_used.rate["compute:valu:fp32"] == pytest.approx(compute_rate(b, "valu", "fp32", True)[0])


def test_bandwidth_efficiency_constants_are_the_medians_of_the_shipped_specs():
    """model_constants.yaml says these are medians of measured/theoretical: recompute them."""
    ratios: dict[str, list[float]] = {}
    for a in load_all():
        for lv in a.levels:
            m = a.achievable_bandwidth(lv)
            if m is None:
                continue
            r = m.value / a.bandwidth(lv)
            if r >= 0.999:  # the spec's "theoretical" is the measured figure itself: no information
                continue
            if m.tag == "A":  # carried over from a sibling part (rx9070xt from r9700, ...): not a measurement
                continue
            ratios.setdefault("hbm" if lv == "vram" else lv, []).append(r)
    eff = constants()["bandwidth_efficiency"]
    for lv in ("hbm", "l2", "l1", "lds", "mall"):
        assert lv in ratios, lv
        assert eff[lv]["value"] == pytest.approx(statistics.median(ratios[lv]), abs=0.011), lv
    assert eff["vram"]["value"] == eff["hbm"]["value"]


def test_matrix_efficiency_matches_the_measured_mi300x_gemm():
    a = load_arch("mi300x")
    m = a.achievable_flops("mfma", "bf16")
    at_clock = a.rate("mfma", "bf16").value * a.cus * m.extra["clock"] * 1e6
    assert constants()["matrix_efficiency"]["value"] == pytest.approx(m.value / at_clock, abs=0.005)


def test_every_term_reports_its_ceiling_provenance():
    a = load_arch("mi300x")
    from perfmodel.models.registry import get_model

    w = get_model("stream").fn({"op": "triad", "n": np.array([2.0**26])}, a, "fp64")
    e = estimate(w, a)
    assert e.rates_used.provenance["memory:hbm"].startswith("measured: BabelStream")
    assert "model_constants" in e.rates_used.provenance["memory:l2"]


def test_constants_file_is_well_formed():
    from pathlib import Path

    import perfmodel

    data = yaml.safe_load((Path(perfmodel.__file__).parent / "model_constants.yaml").read_text())
    for name, entry in data["bandwidth_efficiency"].items():
        assert 0 < entry["value"] <= 1 and entry["source"], name
    for name, entry in data["latency_ns"].items():
        assert entry["value"] > 0 and entry["source"], name


def test_matrix_fraction_of_peak_is_the_median_of_shipped_gemm_figures():
    from perfmodel.rates import benchmark_fill, gemm_level_figures

    fracs = [
        q.value / benchmark_fill(a, p, d, q) / a.peak_flops(p, d)
        for a in load_all()
        for p in ("mfma", "wmma", "tensor")
        for d, q in gemm_level_figures(a, p).items()
    ]
    assert len(fracs) >= 10
    assert constants()["matrix_fraction_of_peak"]["value"] == pytest.approx(statistics.median(fracs), abs=0.006)


def test_gemm_rate_preference_order():
    """A measured GEMM for the dtype wins; else the GPU's other GEMM dtypes; else the median."""
    from perfmodel.rates import compute_rate

    a = load_arch("mi300x")
    rate, _, prov = compute_rate(a, "mfma", "bf16")
    assert rate == a.achievable_flops("mfma", "bf16").value and prov.startswith("measured")
    rate, peak, prov = compute_rate(a, "mfma", "int8")  # no int8 GEMM measured on MI300X
    assert 0.4 < rate / peak < 0.6 and "this GPU's measured GEMMs" in prov
    rate, peak, prov = compute_rate(a, "mfma", "bf16", first_principles=True)
    assert rate / peak == constants()["matrix_fraction_of_peak"]["value"]


def test_tiled_kernels_pay_pipeline_fill_and_drain():
    """A GEMM's prologue load and epilogue store are device-memory round trips no other work
    hides: a `fill` term of 2 latencies (3 with split-K's reduction), added to the body, once per
    round of tiles where one workgroup fills a CU (nothing else runs while it waits); beside them
    the main loop's pipeline fill (one K step of the faster stage, `tests/model_runs.py`) and the
    split-K reduction's read of the other splits' partial tiles."""
    import math

    import perfmodel
    from perfmodel.rates import latency_s

    a = load_arch("h100")  # no exposed epilogue writes on NVIDIA (see the next test)
    (big,) = perfmodel.predict("gemm", "h100", dtype="bf16", m=8192, n=8192, k=8192)
    assert big.wgs_per_cu == 1
    rounds = math.ceil(big.grid / a.cus)
    steps = 8192 / int(big.tile.split("x")[2])
    pipe = pipeline_fill_s(big.terms_s, big.grid, big.wgs_per_cu, a.cus, steps, amd=False)
    assert 0 < pipe < 0.001 * big.time_s  # 128 K steps, paid once (persistent Hopper kernels)
    assert big.terms_s["fill"] == pytest.approx(2 * rounds * latency_s(a, "hbm") + pipe)
    body = max(v for k, v in big.terms_s.items() if k not in ("fill", "launch"))
    assert big.time_s == pytest.approx(body + big.terms_s["fill"] + big.terms_s["launch"])
    a = load_arch("mi300x")
    (skinny,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", m=16, n=1024, k=65536)
    assert skinny.wgs_per_cu >= 2  # other resident tiles hide the later rounds' fill
    tm, tn, tk = (int(x) for x in skinny.tile.split("x"))
    split = skinny.grid / (math.ceil(16 / tm) * math.ceil(1024 / tn))
    pipe = pipeline_fill_s(skinny.terms_s, skinny.grid, skinny.wgs_per_cu, a.cus, math.ceil(65536 / (split * tk)))
    reduce = split_reduction_s(a, skinny.tile, split, skinny.grid, skinny.wgs_per_cu)
    assert reduce > 0
    assert skinny.terms_s["fill"] == pytest.approx(3 * latency_s(a, "hbm") + pipe + reduce)  # split-K
    (s,) = perfmodel.predict("stream", "mi300x", op="copy", n=2**20)
    assert "fill" not in s.terms_s


def test_wave_quantization_stays_where_the_library_runs_no_stream_k():
    """hipBLASLt on gfx942 runs its tiles in rounds (kernel names `_SK0_` in the MI300X traces),
    on gfx950 with stream-K (`_SK3_`): 1.5 rounds of tiles cost 2 rounds on MI300X only."""
    from perfmodel.estimate import library_stream_k, occupancy
    from perfmodel.work import Launch, Work

    mi300x, mi355x = load_arch("mi300x"), load_arch("mi355x")
    assert not library_stream_k(mi300x) and library_stream_k(mi355x)
    for a, quantized in ((mi300x, True), (mi355x, False)):
        w = Work()
        w.launch = Launch(grid=1.5 * a.cus, workgroup_size=256, tile_m=256, tile_n=256)
        q = occupancy(a, w, ())["quantization"]
        assert q == pytest.approx(0.75 if quantized else 1.0), a.key


def test_measured_gemm_rate_is_divided_by_its_benchmark_shapes_wave_fill():
    """MI300X's FP8 rate was measured on 8192^3 (S22), whose tiles fill the 304 CUs to 0.905 in
    the model's own tiling: the rate behind every other shape is the measured one / 0.905, so
    the benchmark shape itself is predicted at its measured time. A shape that fills the CUs
    exactly (AMD's MAF GEMMs, 304 tiles) keeps its rate."""
    from perfmodel.rates import benchmark_fill, compute_rate, gemm_level_figures

    a = load_arch("mi300x")
    figs = gemm_level_figures(a, "mfma")
    fill = benchmark_fill(a, "mfma", "fp8", figs["fp8"])
    assert 0.85 < fill < 0.95
    rate, _, prov = compute_rate(a, "mfma", "fp8")
    assert rate == pytest.approx(figs["fp8"].value / fill) and "wave fill" in prov
    assert benchmark_fill(a, "mfma", "bf16", figs["bf16"]) == 1.0
    t = sweep("gemm", a, "fp8", m=8192, n=8192, k=8192).estimate.terms["compute:mfma:fp8"][0]
    assert t == pytest.approx(2 * 8192**3 / figs["fp8"].value, rel=0.02)


def test_tensile_tile_widths_only_on_amd():
    from perfmodel.models import tiles

    for key, amd in (("mi300x", True), ("h100", False)):
        got = {t for t, _ in tiles.gemm_candidates(load_arch(key), 2.0, 4.0)}
        assert (tiles.Tile(256, 192, 256) in got) is amd, key


def test_amd_tiles_alone_on_a_cu_expose_their_epilogue_writes():
    """S_ENDPGM waits for the wave's outstanding memory operations (CDNA4 ISA, SOPP), so with one
    workgroup per CU a round's C writes follow its compute: a compute-bound MI300X GEMM pays the
    rounds' C bursts at the bandwidth of the level that holds them, H100 (persistent kernels,
    no such rule) does not; a kernel already bound by a memory term that holds those writes
    gets nothing more."""
    import math

    import perfmodel
    from perfmodel.estimate import _epilogue_drain, occupancy
    from perfmodel.models.registry import get_model
    from perfmodel.rates import CORE_CLOCKED_LEVELS, bandwidth, latency_s, loaded_core_clock

    a = load_arch("mi300x")
    clock = loaded_core_clock(a, ["mfma"])[0]  # the L2 runs at the clock under matrix load
    (big,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", m=8192, n=8192, k=8192)
    assert big.wgs_per_cu == 1 and big.bound == "compute:mfma"
    rounds = math.ceil(big.grid / a.cus)
    tm, tn = (int(x) for x in big.tile.split("x")[:2])
    burst = a.cus * tm * tn * 2.0  # one round of bf16 C tiles (30-40 MiB)
    level = "l2" if burst <= a.capacity("l2") else "mall"
    rate = bandwidth(a, level)[0] * (clock if level in CORE_CLOCKED_LEVELS else 1.0)
    expected = 2 * rounds * latency_s(a, "hbm") + rounds * burst / rate
    pipe = pipeline_fill_s(big.terms_s, big.grid, big.wgs_per_cu, a.cus, 8192 / int(big.tile.split("x")[2]))
    assert big.terms_s["fill"] == pytest.approx(expected + pipe)
    # a short-K GEMM: each round's compute plus its C write, or the memory terms (which hold
    # those writes) where they take longer: time = max(body, compute + drain) + latencies + launch
    p = {n: s.default for n, s in get_model("gemm").params.items()}
    # (K = 256: at K = 128 the ranking picks 64x64 tiles, two to a CU, for the prologue latencies
    # one workgroup alone would pay every round)
    p.update(m=np.array([65536.0]), n=np.array([8192.0]), k=np.array([256.0]), batch=np.array([1.0]))
    w = get_model("gemm").fn(p, a, "bf16")
    est = estimate(w, a)
    occ = occupancy(a, w, (1,))
    assert occ["wgs_per_cu"][0] < 2
    rounds = math.ceil(occ["grid"][0] / a.cus)
    drain = rounds * _epilogue_drain(a, occ, w.launch, False, clock)[0]
    body = max(v[0] for k, v in est.terms.items() if k not in ("fill", "launch"))
    comp = max(v[0] for k, v in est.terms.items() if k.startswith("compute:"))
    lat = 2 * rounds * latency_s(a, "hbm")
    terms = {k: float(v[0]) for k, v in est.terms.items()}
    pipe = pipeline_fill_s(terms, occ["grid"][0], occ["wgs_per_cu"][0], a.cus, np.ceil(256 / w.launch.tile_k[0]))
    assert drain > 0
    assert est.time_s[0] == pytest.approx(max(body, comp + drain) + lat + pipe + est.terms["launch"][0])


def test_a_ceiling_carried_from_another_part_is_flagged_as_a_placeholder():
    """MI355X's HBM ceiling is an MI350X measurement (measured:, tag A): a kernel it binds says so,
    as it does for a peak the spec assumes. The MI300X's own BabelStream figure does not."""
    import perfmodel

    (carried,) = perfmodel.predict("stream", "mi355x", op="triad", n=2**28, dtype="fp32")
    (own,) = perfmodel.predict("stream", "mi300x", op="triad", n=2**28, dtype="fp32")
    assert carried.bound == "memory:hbm" and "the hbm ceiling of mi355x is a placeholder" in carried.notes
    assert own.bound == "memory:hbm" and "hbm ceiling" not in (own.notes or "")


def test_a_busy_cu_interleaves_its_own_waves_however_many_cus_sit_idle():
    """The waves a SIMD interleaves are those of the workgroups on its own CU: a grid smaller
    than the CUs leaves some CUs idle, not the busy ones emptier. Averaged over idle CUs, an
    H100 attention prefill of one sequence (48 workgroups on 132 SMs) overlapped its softmax
    with its matrix products less than the same prefill of two sequences, and ran slower."""
    from perfmodel.estimate import occupancy
    from perfmodel.work import Launch, Work

    arch = load_arch("h100")
    w = Work(flops={"tensor:bf16": 1.0})
    w.launch = Launch(grid=48.0, workgroup_size=512.0)
    occ = occupancy(arch, w, (1,))
    assert float(np.ravel(occ["waves_per_simd"])[0]) == 512 / arch.wave_size / arch.simds_per_cu
    from perfmodel import predict

    kw = dict(dtype="bf16", heads=32, kv_heads=8, seq_q=128, seq_kv=1024, head_dim=64)
    one, two = (predict("attention", arch="h100", batch=b, **kw)[0].time_s for b in (1, 2))
    assert two >= one
