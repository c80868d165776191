"""GEMM and grouped GEMM models: exact FLOPs, tile traffic, tile legality, vectorisation."""

from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np
import pytest

from perfmodel.arch import Arch, arch_keys, load_arch
from perfmodel.errors import InputError
from perfmodel.models.gemm_tiling import gemv_rows
from perfmodel.models.registry import get_model


def case(**kw):
    return {
        k: (np.atleast_1d(np.asarray(v, dtype=float)) if not isinstance(v, str) else v) for k, v in kw.items()
    }


def gemm(arch="mi300x", dtype="bf16", m=256, n=256, k=256, batch=1, layout="tn"):
    return get_model("gemm").fn(case(m=m, n=n, k=k, batch=batch, layout=layout), load_arch(arch), dtype)


def hbm(work, arch="mi300x"):
    return work.bytes[load_arch(arch).memory_level]


def test_gemm_flops_exact():
    # 2 FLOPs per FMA: 2 * m * n * k * batch = 2 * 64 * 32 * 16 * 3 = 196608
    w = gemm(m=64, n=32, k=16, batch=3)
    assert w.flops == {"mfma:bf16": pytest.approx(196608.0)}


def test_grouped_gemm_flops_exact_and_equal_to_batched():
    # 2 * groups * m * n * k = 2 * 4 * 8 * 16 * 32 = 32768
    a = load_arch("mi300x")
    w = get_model("grouped_gemm").fn(case(groups=4, m=8, n=16, k=32), a, "bf16")
    assert float(w.flops["mfma:bf16"][0]) == 32768.0
    b = gemm(m=8, n=16, k=32, batch=4)
    assert float(hbm(w)[0]) == float(hbm(b)[0])


@pytest.mark.parametrize("key", arch_keys())
def test_compulsory_hbm_when_fits(key):
    # 256^3 bf16: A, B, C are 128 KiB each, the working set fits every L2, so device memory sees
    # each matrix once: (MK + KN + MN) * 2 B = 3 * 65536 * 2 = 393216 B
    w = gemm(key, m=256, n=256, k=256)
    assert float(hbm(w, key)[0]) == pytest.approx(393216.0)


def test_hbm_at_least_compulsory_and_growing_beyond_caches():
    rng = np.random.default_rng(3)
    m, n, k = (np.floor(np.exp(rng.uniform(0, np.log(40000), 20000))) for _ in range(3))
    w = gemm(m=m, n=n, k=k)
    comp = (m * k + k * n + m * n) * 2.0
    assert np.all(hbm(w) >= comp * (1 - 1e-12))
    small = gemm(m=1024, n=1024, k=1024)
    assert float(hbm(small)[0]) == pytest.approx(3 * 1024 * 1024 * 2.0)
    big = gemm(m=32768, n=32768, k=32768)  # A and B are 2 GiB each, far beyond L2 and MALL
    assert float(hbm(big)[0]) > 1.5 * 3 * 32768**2 * 2.0
    # every level sees at least what the next one out sees
    for x in (w, big):
        assert np.all(x.bytes["l1"] >= x.bytes["l2"] - 1e-6)
        assert np.all(x.bytes["l2"] >= x.bytes["mall"] * (1 - 1e-12) - 1.0)


def test_monotonic_in_size():
    sizes = 2.0 ** np.arange(4, 16)
    for which in ("m", "n", "k"):
        kw = {"m": 4096.0, "n": 4096.0, "k": 4096.0}
        kw[which] = sizes
        w = gemm(**kw)
        assert np.all(np.diff(w.flops["mfma:bf16"]) > 0)
        assert np.all(np.diff(hbm(w)) > 0)


def test_gemv_streams_the_weights_once():
    # m=1: 4096 x 4096 bf16 weights (32 MiB) read once, plus the vectors
    w = gemm(m=1, n=4096, k=4096)
    weights = 4096 * 4096 * 2.0
    assert weights <= float(hbm(w)[0]) <= weights * 1.01
    assert float(w.launch.tile_m[0]) == 16  # a skinny tile
    assert float(w.launch.grid[0]) >= load_arch("mi300x").cus / 2  # the GEMV spreads its columns over the CUs


def test_skinny_16bit_gemm_on_amd_runs_a_gemv_at_the_memory_rate():
    """At most 4 rows in fp16/bf16 on AMD: wvSplitK's GEMV (16 waves a CU, no split-K) keeps
    enough loads in flight to stream the weights at the memory rate; the tile path's one-wave
    skinny tiles were latency-bound. Block-scaled fp8, 5 rows, and NVIDIA keep the tile path."""
    import perfmodel

    shape = dict(m=1, n=20480, k=7168)
    (gemv,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", **shape)
    assert gemv.bound == "memory:hbm"
    a = load_arch("mi300x")
    stream = gemv.bytes_read["hbm"] / perfmodel.rates.bandwidth(a, "hbm", False)[0]
    assert stream <= gemv.time_s <= 1.1 * stream  # the stream plus launch and fill
    w = gemm(m=1, n=20480, k=7168)
    assert float(w.launch.workgroup_size[0]) == 16 * a.wave_size and float(w.launch.tile_n[0]) == 32
    assert "split_k" not in vars(w.launch) or np.all(np.asarray(w.launch.split_k) <= 1)
    for other in (gemm(m=5, n=20480, k=7168), gemm(arch="h100", m=1, n=20480, k=7168)):
        assert float(other.launch.tile_n[0]) % 16 == 0 and float(other.launch.workgroup_size[0]) <= 256
    blk = get_model("gemm").fn(case(m=1, n=20480, k=7168, batch=1, layout="tn", scaling="block"), a, "fp8")
    grouped = get_model("grouped_gemm").fn(case(m=1, n=20480, k=7168, groups=8), a, "bf16")
    for tiled in (blk, grouped):  # a scaled product and a grouped (expert) kernel are no GEMVs
        assert float(tiled.launch.workgroup_size[0]) <= 256


def test_a_gemv_too_narrow_for_the_cus_gives_way_to_the_tiled_kernel():
    """The GEMV spreads only its columns over the CUs: 16 columns and a K of 2^20 leave 288 of
    the MI300X's 304 CUs idle, where the tiled kernel splits K. The tiled kernel is an
    alternative the estimate takes where faster, so 1 and 4 rows are not slower than the tiled
    estimate, and their GEMV no longer floors 16 rows of the same shape (it put them at the
    4-row GEMV's 338 us); wide decode GEMVs keep the GEMV."""
    import perfmodel
    from perfmodel.estimate import estimate

    a = load_arch("mi300x")
    shape = dict(n=16, k=2**20)
    times = {m: perfmodel.predict("gemm", "mi300x", dtype="bf16", m=m, **shape)[0].time_s for m in (1, 4, 16)}
    gemv_alone = float(np.ravel(estimate(gemm(m=4, **shape), a).time_s)[0])  # the model's own GEMV of 4 rows
    w = gemm(m=4, **shape)
    w.alternatives.clear()
    assert float(np.ravel(estimate(w, a).time_s)[0]) > 2 * times[4]  # the GEMV alone was far slower
    assert times[4] <= gemv_alone and times[16] < 0.5 * 337e-6
    assert times[1] <= times[4] <= times[16]
    for n in (4096, 20480):  # decode GEMVs wide enough for the CUs: the GEMV is the prediction
        (wide,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", m=1, n=n, k=4096)
        assert "a GEMV kernel" in wide.notes and "tiled GEMM kernel" not in wide.notes
    assert not gemm(m=1, n=20480, k=7168).alternatives  # 20480 columns fill every CU: no tiled rival


def test_vectorised_100k_no_nan():
    rng = np.random.default_rng(0)
    N = 100_000
    m, n, k, b = (np.floor(np.exp(rng.uniform(0, np.log(hi), N))) for hi in (65536, 65536, 65536, 64))
    w = gemm(m=m, n=n, k=k, batch=b)
    for v in (*w.flops.values(), *w.bytes.values()):
        assert np.shape(v) == (N,) and np.all(np.isfinite(v))
    for f in ("grid", "workgroup_size", "vgprs", "lds_bytes", "tile_m", "tile_n", "tile_k"):
        assert np.shape(getattr(w.launch, f)) == (N,)


@pytest.mark.parametrize("key", arch_keys())
def test_chosen_tile_fits_lds_and_registers(key):
    a = load_arch(key)
    rng = np.random.default_rng(1)
    m, n, k = (np.floor(np.exp(rng.uniform(0, np.log(30000), 5000))) for _ in range(3))
    for dtype in ("bf16", "fp32", "fp64"):
        w = get_model("gemm").fn(case(m=m, n=n, k=k, batch=1, layout="tn"), a, dtype)
        L = w.launch
        assert np.all(L.lds_bytes <= a.occupancy["lds_per_workgroup"].value)
        assert np.all(L.vgprs <= a.occupancy["vgprs_per_lane"].value)
        # a lane addresses 256 VGPRs (512 with CDNA's AGPRs), however large the register file:
        # the fp32 accumulators may take half of that
        addressable = 512 if "mfma" in a.pipes() else 256
        assert np.all(
            L.tile_m * L.tile_n * (8 if dtype == "fp64" else 4) / (4 * L.workgroup_size)
            <= min(a.occupancy["vgprs_per_lane"].value, addressable) / 2
        )
        # a GEMV's workgroup covers YTILE columns per wave, not an MFMA-shaped tile
        gemv = gemv_rows(a, dtype, m, k, "auto", False, "none")
        assert np.all(L.tile_m % 16 == 0) and np.all((L.tile_n % 16 == 0) | gemv)


def test_tile_register_budget_is_what_one_lane_addresses():
    """RDNA3's 1536-entry wave32 file and an SM's 64 K registers hold more waves, not bigger
    ones: a 256x256 tile over 256 lanes (256 fp32 accumulators per lane) fits only a CDNA lane
    with its 256 accumulation registers."""
    from perfmodel.models import tiles

    big = tiles.Tile(256, 256, 256)
    for key, fits in (("mi300x", True), ("rx7900xtx", False), ("h100", False)):
        if key not in arch_keys():
            continue
        chosen = [t for t, _ in tiles.gemm_candidates(load_arch(key), 2.0, 4.0)]
        assert (big in chosen) is fits, key


def test_fp8_on_mi210_raises():
    if "mi210" not in arch_keys():
        pytest.skip("archspecs/mi210.yaml not shipped yet")
    with pytest.raises(InputError, match="fp8"):
        gemm("mi210", "fp8", m=1024, n=1024, k=1024)


def _single_xcd(arch: Arch) -> Arch:
    """The same GPU with one XCD owning the whole L2 (same CUs, capacities and bandwidths)."""
    tree = copy.deepcopy(arch.tree)
    tree["topology"]["xcds"] = dataclasses.replace(tree["topology"]["xcds"], value=1)
    cap = tree["memory"]["l2"]["capacity"]
    tree["memory"]["l2"]["capacity"] = dataclasses.replace(cap, value=arch.capacity("l2"), per="device")
    ch = tree["memory"]["l2"]["channels"]
    tree["memory"]["l2"]["channels"] = dataclasses.replace(ch, value=ch.value * arch.xcds, per="device")
    return Arch(arch.key + "-1xcd", tree, arch.path)


def test_xcds_increase_l2_to_mall_traffic():
    a8 = load_arch("mi300x")
    a1 = _single_xcd(a8)
    assert (
        a1.xcds == 1 and a1.capacity("l2") == a8.capacity("l2") and a1.bandwidth("l2") == a8.bandwidth("l2")
    )
    p = case(m=8192, n=8192, k=8192, batch=1, layout="tn")
    w8 = get_model("gemm").fn(p, a8, "bf16")
    w1 = get_model("gemm").fn(p, a1, "bf16")
    assert float(w8.bytes["mall"][0]) > 1.5 * float(w1.bytes["mall"][0])
    assert float(w8.bytes["l2"][0]) == float(w1.bytes["l2"][0])  # same tile requests
    assert float(w8.bytes["hbm"][0]) == float(w1.bytes["hbm"][0])  # the MALL absorbs the copies


def test_layout_only_notes():
    a, b = gemm(layout="tn"), gemm(layout="nn")
    assert float(hbm(a)[0]) == float(hbm(b)[0]) and b.notes


def test_speed_1m_shapes():
    rng = np.random.default_rng(2)
    N = 1_000_000
    m, n, k = (np.floor(np.exp(rng.uniform(0, np.log(16384), N))) for _ in range(3))
    p = case(m=m, n=n, k=k, batch=1, layout="tn")
    t = time.perf_counter()
    get_model("gemm").fn(p, load_arch("mi300x"), "bf16")
    print(f"gemm model, 1M shapes: {time.perf_counter() - t:.2f} s")


def test_warm_gemm_serves_weights_that_fit_the_mall_from_it():
    """--warm reaches tiled kernels: a decode GEMV whose 128 MiB of weights fit MI300X's 256 MiB
    Infinity Cache reads none of them from HBM when repeated; 448 MiB of weights still do."""
    import perfmodel

    (cold,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", m=1, n=8192, k=8192)
    (warm,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", m=1, n=8192, k=8192, warm=True)
    weights = 8192 * 8192 * 2
    assert cold.bytes["hbm"] >= weights and warm.bytes["hbm"] < 0.01 * weights
    assert warm.bytes["mall"] >= weights and warm.time_s < cold.time_s
    (big,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", m=1, n=28672, k=8192, warm=True)
    assert big.bytes["hbm"] >= 28672 * 8192 * 2


def test_quantized_gemm_scaling_and_output_type():
    """Block scales (DeepSeek-V3: 1x128 activations, 128x128 weights) are rescaled on the VALU
    every 128 of K; MX scales (1x32 E8M0) are native on gfx950 and rescaled elsewhere; scale
    bytes are read; out_dtype sets the bytes of C."""
    import perfmodel

    m, n, k = 4096, 7168, 7168
    (plain,) = perfmodel.predict("gemm", "mi300x", dtype="fp8", m=m, n=n, k=k)
    (block,) = perfmodel.predict("gemm", "mi300x", dtype="fp8", m=m, n=n, k=k, scaling="block")
    assert block.flops_by["valu:fp32"] == 2 * m * n * (k / 128)
    assert block.bytes_read["hbm"] - plain.bytes_read["hbm"] == (m + n / 128) * (k / 128) * 4
    assert block.time_s > plain.time_s
    (mx355,) = perfmodel.predict("gemm", "mi355x", dtype="fp8", m=m, n=n, k=k, scaling="mx")
    (mx300,) = perfmodel.predict("gemm", "mi300x", dtype="fp8", m=m, n=n, k=k, scaling="mx")
    assert "valu:fp32" not in mx355.flops_by and mx300.flops_by["valu:fp32"] == 2 * m * n * (k / 32)
    (f32,) = perfmodel.predict("gemm", "mi300x", dtype="fp8", m=m, n=n, k=k, out_dtype="fp32")
    assert f32.bytes_write["hbm"] == m * n * 4 and plain.bytes_write["hbm"] == m * n * 2


def test_weight_only_gemm_reads_packed_weights_and_dequantizes_per_tile_row():
    """W4A16 (weight_dtype=int4): B is read at 0.5 B per weight plus one 2 B scale per group of
    128, each tile row dequantizes B on the VALU (4 FLOP-equivalents and 5/8 bit ops per weight),
    and the dequantization joins the MFMA chain. A decode GEMM gets ~4x fewer device bytes."""
    import perfmodel

    n, k = 8192, 8192
    (w16,) = perfmodel.predict("gemm", "mi300x", dtype="fp16", m=16, n=n, k=k)
    (w4,) = perfmodel.predict("gemm", "mi300x", dtype="fp16", m=16, n=n, k=k, weight_dtype="int4")
    weights4 = n * k * 0.5 + n * (k / 128) * 2
    assert w4.bytes_read["hbm"] >= weights4 and w4.bytes_read["hbm"] < 1.05 * weights4 + 16 * k * 2
    assert w16.bytes_read["hbm"] >= n * k * 2
    assert w4.time_s < 0.5 * w16.time_s  # memory-bound decode: the packed weights are the traffic
    tiles_m = 1  # m=16 fits one tile row
    assert w4.flops_by["valu:fp16"] == 4.0 * tiles_m * n * k
    assert w4.flops_by["mfma:fp16"] == 2.0 * 16 * n * k
    (big,) = perfmodel.predict("gemm", "mi300x", dtype="fp16", m=4096, n=n, k=k, weight_dtype="int4")
    (big16,) = perfmodel.predict("gemm", "mi300x", dtype="fp16", m=4096, n=n, k=k)
    assert big.time_s > big16.time_s  # compute-bound: the dequantization is extra work in the chain
    (w8,) = perfmodel.predict("gemm", "mi300x", dtype="fp16", m=16, n=n, k=k, weight_dtype="int8", group_size=0)
    assert w8.flops_by["valu:fp16"] == 2.0 * n * k + 2.0 * 16 * n  # convert; per-column scale in the epilogue
    assert n * k <= w8.bytes_read["hbm"] < 1.05 * n * k + 16 * k * 2
    (same,) = perfmodel.predict("gemm", "mi300x", dtype="fp16", m=16, n=n, k=k, weight_dtype="auto")
    assert same.time_s == w16.time_s


def test_weight_only_moe_matches_its_expert_gemms():
    import perfmodel

    kw = dict(tokens=16, experts=8, topk=2, hidden=4096, inter=14336)
    (plain,) = perfmodel.predict("moe", "mi300x", dtype="fp16", **kw)
    (w4,) = perfmodel.predict("moe", "mi300x", dtype="fp16", weight_dtype="int4", **kw)
    assert w4.bytes_read["hbm"] < 0.35 * plain.bytes_read["hbm"] and w4.time_s < plain.time_s
    assert w4.flops_by["valu:fp16"] > 0


def test_weight_only_group_size_conventions():
    """group_size -1 (GPTQ's spelling) is per-column like 0; a group longer than K is one scale
    per column; below -1 is refused."""
    import perfmodel

    kw = dict(dtype="fp16", m=16, n=4096, k=4096, weight_dtype="int4")
    (zero,) = perfmodel.predict("gemm", "mi300x", group_size=0, **kw)
    (minus,) = perfmodel.predict("gemm", "mi300x", group_size=-1, **kw)
    (huge,) = perfmodel.predict("gemm", "mi300x", group_size=1 << 20, **kw)
    assert minus.time_s == zero.time_s and minus.bytes == zero.bytes
    assert huge.bytes_read["hbm"] == pytest.approx(zero.bytes_read["hbm"])
    with pytest.raises(InputError, match="group_size"):
        perfmodel.predict("gemm", "mi300x", group_size=-2, **kw)


def test_split_k_ranking_charges_partials_where_the_estimate_does():
    """fp32 split-K partials that do not fit L2 go to the MALL or memory in the estimate; the tile
    ranking charges them there too. MI355X 2048^3 bf16: split-K by 4 over 256x256 tiles writes
    64 MiB of partials (L2 holds 32 MiB), so the ranking keeps 128x128 tiles without split-K."""
    import perfmodel
    from perfmodel.models import gemm_tiling
    from perfmodel.models.tiles import Rates, matrix_pipe

    arch = load_arch("mi355x")
    m = np.array([2048.0])
    r = Rates.of(arch, *matrix_pipe(arch, "bf16", []))
    tm, tn, tk, lanes, split = gemm_tiling._choose(arch, r, m, m, m, np.ones(1), 2.0, 4.0, m * m * 2.0)
    partial = split * m * m * 4.0
    assert split[0] == 1.0 or partial[0] <= arch.capacity("l2")
    (p,) = perfmodel.predict("gemm", "mi355x", m=2048, n=2048, k=2048)
    assert p.bytes["mall"] < 4 * 3 * 2048 * 2048 * 2  # no 128 MiB of partial traffic through the MALL


def test_block_scaling_keeps_a_second_accumulator():
    """Rescaling per K block on the VALU needs the block's partial sums beside the running fp32
    sum (DeepSeek-V3 sec. 3.3.2): twice the accumulator registers per output, so fewer
    workgroups stay resident (and the rescaling chain is less hidden); native MX (gfx950) not."""
    from perfmodel.models import gemm_tiling

    arch = load_arch("mi355x")
    shape = [np.array([3258.0]), np.array([7168.0]), np.array([4096.0]), np.ones(1)]
    _, plain = gemm_tiling.gemm_work(arch, "fp8", *shape)
    _, block = gemm_tiling.gemm_work(arch, "fp8", *shape, scaling="block")
    _, mx = gemm_tiling.gemm_work(arch, "fp8", *shape, scaling="mx")

    def acc_regs(L):
        return float(np.asarray(L.tile_m).ravel()[0] * np.asarray(L.tile_n).ravel()[0]) * 4.0 / float(
            np.asarray(L.workgroup_size).ravel()[0]) / 4.0

    assert float(np.asarray(block.vgprs).ravel()[0]) >= 2 * acc_regs(block)
    assert float(np.asarray(plain.vgprs).ravel()[0]) < 2 * acc_regs(plain)
    assert float(np.asarray(mx.vgprs).ravel()[0]) == float(np.asarray(plain.vgprs).ravel()[0])
    assert gemm_tiling.rescales_on_valu(load_arch("mi300x"), "mfma", "mx")
    assert not gemm_tiling.rescales_on_valu(arch, "mfma", "mx")


def test_block_scaled_fp8_on_gfx950_runs_at_the_bf16_rate():
    """AITER's block-scaled FP8 CK kernels load 16 fp8 elements per lane along K, so CK selects
    the single-rate MFMA, which gfx950 runs at the bf16 rate (half the fp8 peak of its f8f6f4
    instructions): their FLOPs stay fp8 FLOPs timed at the bf16 rate. Per-tensor and MX FP8 keep
    the fp8 rate, and gfx942 (no double-rate fp8 instruction) keeps it for block scaling too."""
    from perfmodel.estimate import estimate
    from perfmodel.rates import compute_rate

    model = get_model("gemm").fn

    def rate(arch, scaling):
        a = load_arch(arch)
        p = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in dict(m=4096, n=7168, k=4096, batch=1).items()}
        w = model({**p, "scaling": scaling, "out_dtype": "bf16"}, a, "fp8")
        assert "mfma:fp8" in w.flops and "mfma:bf16" not in w.flops
        return estimate(w, a).rates_used.rate["compute:mfma:fp8"], compute_rate(a, "mfma", "bf16")[0], compute_rate(a, "mfma", "fp8")[0]

    got, bf16, fp8 = rate("mi355x", "block")
    assert got == bf16 < fp8
    for arch, scaling in (("mi355x", "tensor"), ("mi355x", "mx"), ("mi300x", "block")):
        got, _, fp8 = rate(arch, scaling)
        assert got == fp8, (arch, scaling)


def test_block_scaled_gemm_steps_whole_scale_blocks_along_k():
    """A kernel that promotes its partial sums once per 128-element scale block ends every K step
    on a block boundary (AITER's CK blockscale instances: KPerBlock 128 or 256), so its tiles are
    those whose 128-deep double-buffered K step fits the LDS, and a short-K GEMM's 128x128 tile
    runs one workgroup per CU (its C write then follows its compute). Plain FP8 keeps the default
    K steps; MX (32-element blocks) keeps those of them that hold whole blocks."""
    from perfmodel.models import gemm_tiling, tiles

    for key in ("mi300x", "mi355x"):
        arch = load_arch(key)
        shape = [np.array([16384.0, 1024.0, 64.0]), np.array([7168.0, 512.0, 7168.0]), np.array([256.0, 7168.0, 2048.0]), np.ones(3)]
        _, block = gemm_tiling.gemm_work(arch, "fp8", *shape, scaling="block")
        _, plain = gemm_tiling.gemm_work(arch, "fp8", *shape)
        tk = np.asarray(block.tile_k)
        assert np.all(tk % 128 == 0), (key, tk)
        assert np.all(2 * (np.asarray(block.tile_m) + np.asarray(block.tile_n)) * tk <= tiles.lds_limit(arch))
        assert np.all(np.asarray(plain.tile_k) <= 64)
    assert gemm_tiling.scale_k_tiles(load_arch("mi300x"), "mfma", "block") == (256, 128)
    assert gemm_tiling.scale_k_tiles(load_arch("mi300x"), "mfma", "mx") == (64, 32)
    assert gemm_tiling.scale_k_tiles(load_arch("mi355x"), "mfma", "mx") is None  # native MX
    assert gemm_tiling.scale_k_tiles(load_arch("mi300x"), "mfma", "none") is None


@pytest.mark.parametrize("arch,dtype,m,n,k", [("mi300x", "bf16", 128, 4096, 4096), ("mi355x", "fp8", 4096, 4096, 1024),
                                              ("h100", "bf16", 64, 8192, 8192), ("rx7900xtx", "fp16", 2048, 2048, 2048)])
def test_pinning_the_models_own_configuration_changes_nothing(arch, dtype, m, n, k):
    """tile= and split_k= time the configuration a case names: naming the one the ranking picked
    gives the same prediction, to the last byte (one code path, not a second estimate)."""
    import perfmodel

    (auto,) = perfmodel.predict("gemm", arch, dtype=dtype, m=m, n=n, k=k)
    split = max(1, round(auto.grid / (np.ceil(m / int(auto.tile.split("x")[0])) * np.ceil(n / int(auto.tile.split("x")[1])))))
    (pinned,) = perfmodel.predict("gemm", arch, dtype=dtype, m=m, n=n, k=k, tile=auto.tile, split_k=split)
    assert pinned.tile == auto.tile and pinned.grid == auto.grid
    assert pinned.time_s == auto.time_s and pinned.bytes == auto.bytes


def test_a_pinned_tile_and_split_are_what_is_timed():
    """MI355X fp4 64 x 8192 x 8192: the model's pick splits K; split_k=1 is slower; tile=128x256
    split_k=1 times 32 workgroups for 256 CUs; split_k=4 on that tile gives 4 x 32 workgroups
    and a shorter time."""
    import perfmodel

    kw = dict(dtype="fp4", m=64, n=8192, k=8192, scaling="mx")
    (auto,) = perfmodel.predict("gemm", "mi355x", **kw)
    (one,) = perfmodel.predict("gemm", "mi355x", split_k=1, **kw)
    (pinned,) = perfmodel.predict("gemm", "mi355x", tile="128x256", split_k=1, **kw)
    (four,) = perfmodel.predict("gemm", "mi355x", tile="128x256x64", split_k=4, **kw)
    assert auto.grid > 32 and "split-K" in auto.notes
    assert "split-K" not in one.notes and one.time_s > 1.5 * auto.time_s
    assert pinned.tile == "128x256x64" and pinned.grid == 32 and pinned.wgs_per_cu >= 1
    assert four.grid == 4 * 32 and four.time_s < pinned.time_s
    assert pinned.flops == auto.flops  # the same product, whatever the configuration


@pytest.mark.parametrize("tile,match", [("foo", "expected auto, MxN or MxNxK"), ("0x64", "expected auto"),
                                        ("4096x4096", "accumulators need"), ("1024x2048", "a lane of mi300x has 512")])
def test_a_tile_no_workgroup_can_hold_is_refused(tile, match):
    import perfmodel

    with pytest.raises(InputError, match=match) as e:
        perfmodel.predict("gemm", "mi300x", m=256, n=256, k=256, tile=tile)
    assert e.value.key == "tile"


def test_a_library_tile_beyond_the_models_own_rules_is_timed():
    """hipBLASLt's MT320x224x64 in the TraceLens MI300X SGLang trace (Cijk_..._MT320x224x64_..._LDSB0_..._DTVA1:
    one LDS buffer, A straight to registers; 280 accumulators a lane at 256 lanes) runs 15360 x 4096 x 12288
    as 224x320 tiles in PyTorch's terms (its grid, 897 workgroups = 69 x 13). The model's candidates
    exclude it (double-buffered LDS, half the registers), a pinned tile is timed as named: 256 lanes,
    the LDS filled."""
    import perfmodel
    from perfmodel.models import gemm_tiling

    (p,) = perfmodel.predict("gemm", "mi300x", m=15360, n=4096, k=12288, tile="224x320x64")
    assert p.tile == "224x320x64" and p.grid == 897
    arch = load_arch("mi300x")
    one = [np.array([v]) for v in (15360.0, 4096.0, 12288.0, 1.0)]
    _, L = gemm_tiling.gemm_work(arch, "bf16", *one, tile="224x320x64")
    assert float(np.ravel(L.workgroup_size)[0]) == 256 and float(np.ravel(L.lds_bytes)[0]) == 64 * 1024


def test_split_k_beyond_k_is_refused():
    import perfmodel

    with pytest.raises(InputError, match=r"expected at most k \(64\) ways, got 65") as e:
        perfmodel.predict("gemm", "mi300x", m=256, n=256, k=64, split_k=65)
    assert e.value.key == "split_k"
    (p,) = perfmodel.predict("gemm", "mi300x", m=256, n=256, k=64, split_k=64)
    tm, tn, _ = (int(v) for v in p.tile.split("x"))
    assert p.grid == 64 * (256 // tm) * (256 // tn)  # every tile split 64 ways


def test_grouped_gemm_takes_the_same_configuration_keys():
    """grouped_gemm pins tile and split_k as gemm does: naming its own pick changes nothing."""
    import perfmodel

    kw = dict(groups=128, m=512, n=1536, k=2048)
    (auto,) = perfmodel.predict("grouped_gemm", "h100", **kw)
    tm, tn, _ = (int(v) for v in auto.tile.split("x"))
    split = round(auto.grid / (128 * -(-512 // tm) * -(-1536 // tn)))
    (same,) = perfmodel.predict("grouped_gemm", "h100", tile=auto.tile, split_k=split, **kw)
    (other,) = perfmodel.predict("grouped_gemm", "h100", tile="64x64", **kw)
    assert same.time_s == auto.time_s and other.tile.startswith("64x64x") and other.time_s != auto.time_s
    with pytest.raises(InputError, match="split_k"):
        perfmodel.predict("grouped_gemm", "h100", split_k=4096, **kw)


def test_a_pinned_tile_counts_the_registers_a_lane_addresses_not_the_file():
    """RDNA3's 1536-entry wave32 register file holds more waves, not bigger ones: a lane still
    addresses 256 VGPRs (tiles.lane_registers), so 1024x1024 fp32 accumulators are refused."""
    import perfmodel

    with pytest.raises(InputError, match="a lane of rx7900xtx has 256"):
        perfmodel.predict("gemm", "rx7900xtx", dtype="fp16", m=4096, n=4096, k=4096, tile="1024x1024")


def test_cublas_reduces_split_k_in_a_kernel_of_its_own():
    """cuBLASLt follows a split-K GEMM with `splitKreduce_kernel` (our H100/H200 runs): on sm_90 a
    split GEMM is two dispatches, each with its launch cost, and the reduction's round trip is in
    the second one's floor. hipBLASLt (GSUAMBSK) and CK reduce inside the GEMM kernel: one
    dispatch, one more round trip on its critical path. Unsplit GEMMs are one dispatch on both."""
    import perfmodel
    from perfmodel.models import gemm_tiling

    assert gemm_tiling.split_k_reduce_kernel(load_arch("h100"))
    assert not gemm_tiling.split_k_reduce_kernel(load_arch("mi300x"))
    kw = dict(m=[16, 16], n=8192, k=8192, batch=1, split_k=[4, 1])
    nv = get_model("gemm").fn({**case(**kw), "tile": "auto"}, load_arch("h100"), "bf16")
    amd = get_model("gemm").fn({**case(**kw), "tile": "auto"}, load_arch("mi300x"), "bf16")
    assert np.asarray(nv.launch.kernels).tolist() == [2.0, 1.0]
    assert float(np.max(nv.launch.serial_latencies)) == 2.0
    assert float(np.max(amd.launch.kernels)) == 1.0
    assert np.asarray(amd.launch.serial_latencies).tolist() == [3.0, 2.0]
    for arch, n_split in (("h100", 2), ("mi300x", 1)):
        (split,) = perfmodel.predict("gemm", arch, m=16, n=8192, k=8192, split_k=4)
        (whole,) = perfmodel.predict("gemm", arch, m=16, n=8192, k=8192, split_k=1)
        overhead = load_arch(arch).launch_overhead_s
        assert split.terms_s["launch"] == pytest.approx(n_split * overhead)
        assert whole.terms_s["launch"] == pytest.approx(overhead)


def test_a_grouped_gemm_tile_reads_its_group_pointers_before_its_operands():
    """A grouped GEMM's tile loads its group's A/B/C pointers from the launch's pointer arrays
    before its first operand loads: one more serial round trip than the same strided batch."""
    from perfmodel.arch import load_arch
    from perfmodel.models.registry import get_model

    arch = load_arch("mi300x")
    shape = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in dict(m=512, n=4096, k=4096).items()}
    grouped = get_model("grouped_gemm").fn({**shape, "groups": np.array([8.0])}, arch, "bf16")
    batched = get_model("gemm").fn({**shape, "batch": np.array([8.0])}, arch, "bf16")
    g = float(np.ravel(grouped.launch.serial_latencies)[0])
    b = float(np.ravel(batched.launch.serial_latencies)[0])
    assert g == b + 1.0


def test_more_rows_are_never_faster_than_the_first_32():
    """33 rows ran on a 64-row tile with four waves in flight, which the estimator timed at half
    the 32-row skinny tile's latency-bound time; the 32 rows' estimate is now a floor."""
    import perfmodel
    from perfmodel.vocab import FEWER_ROWS

    m = np.array([16.0, 32.0, 33.0, 64.0, 128.0, 4096.0])
    s = perfmodel.sweep("gemm", "mi300x", "bf16", m=m, n=7168.0, k=7168.0)
    t = np.asarray(s.time_s)
    assert np.all(np.diff(t) >= -1e-12 * t[:-1])  # never faster with more rows
    assert t[2] == pytest.approx(t[1])  # 33 rows: the floor binds (was about 0.57x of 32)
    floor = s.term(FEWER_ROWS)
    assert floor[2] == pytest.approx(t[1]) and floor[0] == 0 and floor[-1] == 0
    # the subset evaluation gives what one case alone gives
    one = perfmodel.sweep("gemm", "mi300x", "bf16", m=64.0, n=7168.0, k=7168.0)
    assert float(np.asarray(one.time_s)) == pytest.approx(t[3])


def test_a_pinned_tile_has_the_same_floor():
    """The floor is the fastest 32-row kernel's time: a pinned kernel computes those rows too."""
    import perfmodel

    auto = perfmodel.sweep("gemm", "mi300x", "bf16", m=32.0, n=7168.0, k=7168.0)
    s = perfmodel.sweep("gemm", "mi300x", "bf16", m=33.0, n=7168.0, k=7168.0, tile="64x128")
    assert float(s.term("latency:fewer_rows")) == pytest.approx(float(np.asarray(auto.time_s)))


def test_moe_and_grouped_gemm_take_the_same_floor():
    """Per expert (per group) rows cross 32 as the tokens grow: the fewer tokens' (rows') time
    is a floor there too."""
    import perfmodel

    # without the floor: 33 rows 0.67x of 32 (MI300X), 64 rows per expert 0.76x of 32
    g = perfmodel.sweep("grouped_gemm", "mi300x", "bf16", groups=8.0, m=np.array([32.0, 33.0]), n=1024.0, k=4096.0)
    t = np.asarray(g.time_s)
    assert t[1] >= t[0] * (1 - 1e-12)
    kw = dict(experts=8.0, topk=8.0, hidden=4096.0, inter=1024.0, router=False)
    moe = perfmodel.sweep("moe", "mi300x", "bf16", tokens=np.array([32.0, 64.0]), **kw)
    t = np.asarray(moe.time_s)
    assert t[1] >= t[0] * (1 - 1e-12)  # 32 -> 64 rows per expert


def test_padded_rows_cap_an_odd_row_count():
    """MI300A BF16 224 x 1024 x 4096: the ranking takes a split 32x64x64 tile, which the estimator
    times at 13.6 us against 11.5 us for 256 rows (MI300A 96 x 7168 x 1024 showed it first: a
    split 128x256x32 tile whose pipeline fill the estimator times at 6.3 us). The 224 rows can run
    the 256-row kernel with 32 rows masked, so that kernel (its time, tile and bound) is the
    prediction; FLOPs stay the 224 rows'."""
    import perfmodel
    from perfmodel.models import fewer_rows

    assert fewer_rows.PADDED_ROWS == (32.0, 64.0, 128.0, 256.0)
    m = np.array([192.0, 223.0, 224.0, 256.0, 288.0])
    s = perfmodel.sweep("gemm", "mi300a", "bf16", m=m, n=1024.0, k=4096.0)
    t = np.asarray(s.time_s)
    assert np.all(np.diff(t) >= -1e-12 * t[:-1])
    (one,) = perfmodel.predict("gemm", "mi300a", dtype="bf16", m=224, n=1024, k=4096)
    (at_256,) = perfmodel.predict("gemm", "mi300a", dtype="bf16", m=256, n=1024, k=4096)
    assert one.time_us == pytest.approx(at_256.time_us) and one.tile == at_256.tile == "128x64x64"
    assert "padded to the next tile height" in one.notes
    assert one.flops == pytest.approx(at_256.flops * 224 / 256)
    body = max(v for k, v in one.terms_us.items() if k not in ("fill", "launch"))
    assert body + one.terms_us["fill"] + one.terms_us["launch"] == pytest.approx(one.time_us)  # the padded kernel's terms
    # the ranked tile, pinned, is the kernel timed: no ceiling
    (pinned,) = perfmodel.predict("gemm", "mi300a", dtype="bf16", m=224, n=1024, k=4096, tile="32x64x64", split_k=2)
    assert pinned.time_us > 1.15 * one.time_us and "padded" not in (pinned.notes or "")


def test_rows_past_the_tallest_tile_keep_its_floor():
    """MI300X BF16 x 7168 x 2048: 257 rows take a 64x128 tile the estimator times faster than
    the 128x64 tile of 256 rows (MI300A x 5120 x 2048 showed it first: 256 rows on a split
    256x192 tile, 27.4 us, 257 on an unsplit 64x128, 19.2 us). Up to four tiles tall a GEMM is
    floored by the 256-row and 32-row estimates too; grouped GEMMs keep the 256-row reach
    (their batched ranking costs more)."""
    import perfmodel
    from perfmodel.models import fewer_rows

    assert (256.0, 1024.0) in fewer_rows.GEMM_LADDER and (16.0, 256.0) in fewer_rows.GEMM_LADDER
    m = np.array([255.0, 256.0, 257.0, 300.0, 512.0, 1024.0, 1025.0])
    s = perfmodel.sweep("gemm", "mi300x", "bf16", m=m, n=7168.0, k=2048.0)
    t = np.asarray(s.time_s)
    assert np.all(np.diff(t[:-1]) >= -1e-12 * t[:-2])  # up to 1024 rows
    floor = s.term("latency:fewer_rows")
    assert t[2] == pytest.approx(t[1]) and floor[2] == pytest.approx(t[1])
    assert floor[-1] == 0  # 1025 rows: past the reach


def test_moe_experts_take_the_padded_rows_too():
    """A100 BF16, 128 experts, top-8, hidden 7168, inter 2048: 1100 tokens (68.75 rows per
    expert) took 9.03 ms, 1500 tokens (93.75 rows) 8.22 ms. Both can run their expert GEMMs
    128 rows tall, so that estimate caps them (1500's own ranked tiles are still 0.4 % faster:
    the invariant's 5 % tolerance)."""
    import perfmodel
    from perfmodel.models.fewer_rows import PADDED_NOTE

    t = np.array([1024.0, 1025.0, 1100.0, 1500.0, 2048.0])
    kw = dict(experts=128.0, topk=8.0, hidden=7168.0, inter=2048.0, router=False)
    s = np.asarray(perfmodel.sweep("moe", "a100", "bf16", tokens=t, **kw).time_s)
    assert np.all(s[1:] >= 0.95 * s[:-1])
    (p,) = perfmodel.predict("moe", "a100", dtype="bf16", tokens=1100, **kw)
    assert PADDED_NOTE in p.notes and p.flops < perfmodel.predict("moe", "a100", dtype="bf16", tokens=1500, **kw)[0].flops


def test_rows_below_32_take_the_ladder_too():
    """24 rows of a 1024 x 1024 GEMM were predicted 0.83x of 16 (MI300X: a 32-row tile for 24
    rows, a 16-row one for 16); the ladder 16, 4, 1 below the 32-row floor keeps m monotone."""
    import perfmodel

    m = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 33.0, 48.0])
    t = np.asarray(perfmodel.sweep("gemm", "mi300x", "bf16", m=m, n=1024.0, k=1024.0).time_s)
    assert np.all(np.diff(t) >= -1e-12 * t[:-1])


def test_the_ranking_charges_the_split_k_reduction():
    """hipBLASLt reduces split-K partials inside the GEMM kernel: the last workgroup of each tile
    reads the other splits' fp32 partial tiles alone. MI300X FP8 128 x 1280 x 8192: a 128- or
    256-row tile split 8 or 16 ways leaves each reducer 0.5-3.9 MB to read (5-38 us of `fill`),
    so the ranking, which charges that read as the estimator does, picks none of them and times
    within 5 % of the fastest of them (the ranking's own costs are rougher than the estimator's)."""
    import perfmodel

    kw = dict(dtype="fp8", m=128, n=1280, k=8192, scaling="tensor", out_dtype="bf16")
    (auto,) = perfmodel.predict("gemm", "mi300x", **kw)
    heavy = [perfmodel.predict("gemm", "mi300x", tile=t, split_k=s, **kw)[0]
             for t in ("256x256x64", "256x128x64", "128x128x64") for s in (8, 16)]
    assert all(p.terms_us["fill"] > 5.0 for p in heavy)
    assert auto.terms_us["fill"] < 0.2 * auto.time_us
    assert auto.time_us <= 1.05 * min(p.time_us for p in heavy)
