"""Flash-attention model: exact FLOPs (fwd, causal, bwd, GQA, decode), bytes, vectorisation."""

from __future__ import annotations

import numpy as np
import pytest
from model_runs import run_model

from perfmodel.arch import load_arch
from perfmodel.models.registry import get_model

A = load_arch("mi300x")


def attn(phase="fwd", causal=False, kv_heads=None, seq_kv=None, **kw):
    # numbers as arrays, flags as plain bools (a batch shares its text and bool parameters)
    p = {k: v if isinstance(v, bool) else np.atleast_1d(np.asarray(v, dtype=float)) for k, v in kw.items()}
    p["kv_heads"] = None if kv_heads is None else np.atleast_1d(np.asarray(kv_heads, dtype=float))
    p["seq_kv"] = None if seq_kv is None else np.atleast_1d(np.asarray(seq_kv, dtype=float))
    p["causal"], p["phase"] = causal, phase
    return get_model("attention").fn(p, A, "bf16")


def f(w, key):
    return float(np.asarray(w.flops[key])[0])


def test_fwd_flops_exact():
    # 4 * B * H * Sq * Skv * D = 4 * 2 * 4 * 8 * 16 * 32 = 131072; one exp per score: 2*4*8*16 = 1024
    w = attn(batch=2, heads=4, seq_q=8, seq_kv=16, head_dim=32)
    assert f(w, "mfma:bf16") == 131072.0
    assert f(w, "sfu:fp32") == 1024.0


def test_causal_flops_exact():
    # Sq = Skv = 8: 8*9/2 = 36 scores per head (= 64 - 8*7/2)
    w = attn(batch=1, heads=1, seq_q=8, head_dim=16, causal=True)
    assert f(w, "mfma:bf16") == 4 * 36 * 16
    # Sq = 4, Skv = 8, bottom-right aligned: rows see 5, 6, 7, 8 keys = 26 = 32 - 4*3/2
    w = attn(batch=1, heads=1, seq_q=4, seq_kv=8, head_dim=16, causal=True)
    assert f(w, "mfma:bf16") == 4 * 26 * 16
    # Sq = 8 > Skv = 4: the first 4 rows see nothing, then 1..4 keys = 10
    w = attn(batch=1, heads=1, seq_q=8, seq_kv=4, head_dim=16, causal=True)
    assert f(w, "mfma:bf16") == 4 * 10 * 16


def test_bwd_is_2_5x_fwd_matrix_flops():
    kw = dict(batch=2, heads=8, seq_q=512, head_dim=64)
    assert f(attn("bwd", **kw), "mfma:bf16") == 2.5 * f(attn("fwd", **kw), "mfma:bf16")
    assert f(attn("bwd", causal=True, **kw), "mfma:bf16") == 2.5 * f(
        attn("fwd", causal=True, **kw), "mfma:bf16"
    )


def test_gqa_same_flops_fewer_bytes():
    mha = attn(batch=1, heads=32, seq_q=4096, head_dim=128)
    gqa = attn(batch=1, heads=32, kv_heads=4, seq_q=4096, head_dim=128)
    assert f(mha, "mfma:bf16") == f(gqa, "mfma:bf16")
    assert float(gqa.bytes["hbm"][0]) < float(mha.bytes["hbm"][0])
    # L2 requests stay (every query block streams its K/V); fewer distinct K/V reach the MALL
    assert float(gqa.bytes["l2"][0]) <= float(mha.bytes["l2"][0])
    assert float(gqa.bytes["mall"][0]) < float(mha.bytes["mall"][0])


def test_gqa_forward_is_never_slower_than_its_heads_unshared():
    """A100 BF16, 128 heads over 32 KV heads, 128 queries of 1024 keys: packing the 4 heads of a
    group into one problem left 128 tiles for 108 SMs (53.5 us) against 39.0 us unshared. The
    unshared kernel computes the same heads, so its estimate is the prediction there; backward
    keeps its own (the unshared problem skips the group's dK/dV sum)."""
    import perfmodel
    from perfmodel.models.attention import UNSHARED_NOTE

    kw = dict(batch=1, heads=128, seq_q=128, seq_kv=1024, head_dim=64, dtype="bf16")
    (mha,) = perfmodel.predict("attention", "a100", **kw)
    (gqa,) = perfmodel.predict("attention", "a100", kv_heads=32, **kw)
    assert gqa.time_us == pytest.approx(mha.time_us) and gqa.tile == mha.tile
    assert UNSHARED_NOTE in gqa.notes
    assert gqa.bytes["hbm"] < mha.bytes["hbm"]  # the case's own bytes stay
    (bwd,) = perfmodel.predict("attention", "a100", kv_heads=32, phase="bwd", **kw)
    assert UNSHARED_NOTE not in (bwd.notes or "")
    # a batch that mixes GQA and MHA gives each case its one-case prediction
    heads = np.array([128.0, 128.0])
    s = perfmodel.sweep("attention", "a100", "bf16", batch=1, heads=heads, kv_heads=np.array([32.0, 128.0]), seq_q=128, seq_kv=1024, head_dim=64)
    assert np.asarray(s.time_s) * 1e6 == pytest.approx([gqa.time_us, mha.time_us])


def test_decode_streams_the_kv_cache():
    # Sq = 1: 4 * B * H * Skv * D FLOPs; HBM ~ the KV cache 2 * B * Hk * Skv * D * 2 B once
    b, h, hk, s, d = 4, 32, 8, 8192, 128
    w = attn(batch=b, heads=h, kv_heads=hk, seq_q=1, seq_kv=s, head_dim=d)
    assert f(w, "mfma:bf16") == 4.0 * b * h * s * d
    kv = 2.0 * b * hk * s * d * 2
    assert kv <= float(w.bytes["hbm"][0]) <= 1.01 * kv
    assert float(w.launch.grid[0]) >= A.cus / 2  # split-KV fills the GPU


def test_compulsory_bytes_small_fwd_and_bwd():
    # B=1, H=2, S=64, D=64 bf16: Q, K, V, O 16 KiB each; LSE 2*64*4 B
    t = 2 * 64 * 64 * 2.0
    lse = 2 * 64 * 4.0
    w = attn(batch=1, heads=2, seq_q=64, head_dim=64)
    assert float(w.bytes["hbm"][0]) == pytest.approx(4 * t + lse)
    # bwd: the main kernel reads K, V, Q, dO, LSE, Delta and writes dK, dV; the pre-pass reads
    # O, dO and writes Delta; the post-pass writes dQ (the fp32 dQ accumulator the pre-pass
    # zeroes and the post-pass reads stays in cache)
    w = attn("bwd", batch=1, heads=2, seq_q=64, head_dim=64)
    pre, post = w.serial
    assert float(w.bytes["hbm"][0]) == pytest.approx(4 * t + 2 * lse + 2 * t)
    assert float(pre.bytes["hbm"][0]) == pytest.approx(2 * t + lse)
    assert float(post.bytes["hbm"][0]) == pytest.approx(t)
    assert float(w.with_serial().bytes["hbm"][0]) == pytest.approx(4 * t + 2 * lse + 2 * t + lse + 3 * t)


def test_monotonic_in_seq():
    s = 2.0 ** np.arange(6, 15)
    for causal in (False, True):
        w = attn(batch=1, heads=16, seq_q=s, head_dim=128, causal=causal)
        assert np.all(np.diff(w.flops["mfma:bf16"]) > 0)
        assert np.all(np.diff(w.bytes["hbm"]) > 0)


@pytest.mark.parametrize("phase", ["fwd", "bwd"])
def test_vectorised_100k_no_nan(phase):
    rng = np.random.default_rng(1)
    N = 100_000
    kvh = 2.0 ** rng.integers(0, 4, N)
    p = dict(
        batch=np.floor(np.exp(rng.uniform(0, np.log(64), N))),
        heads=kvh * 2.0 ** rng.integers(0, 3, N),
        seq_q=np.floor(np.exp(rng.uniform(0, np.log(32768), N))),
        head_dim=rng.choice([64.0, 128.0, 256.0], N),
    )
    w = attn(phase, causal=True, kv_heads=kvh, seq_kv=np.floor(np.exp(rng.uniform(0, np.log(32768), N))), **p)
    for v in (*w.flops.values(), *w.bytes.values()):
        assert np.shape(v) == (N,) and np.all(np.isfinite(v))
    assert np.all(w.launch.lds_bytes <= A.occupancy["lds_per_workgroup"].value)
    assert np.all(w.launch.vgprs <= A.occupancy["vgprs_per_lane"].value)


def _blocks_by_enumeration(sq, skv, bq, bk, causal):
    """Score elements of whole bq x bk blocks, query block by query block (bottom-right causal)."""
    tot = 0
    for j in range(-(-sq // bq)):
        keys = skv - sq + min((j + 1) * bq, sq) if causal else skv
        tot += -(-keys // bk) * bk * bq
    return tot


@pytest.mark.parametrize(
    "sq,skv,causal", [(1024, 1024, True), (4096, 4096, True), (2048, 4096, True), (141, 141, False), (1024, 1024, False)]
)
def test_matrix_pipe_runs_whole_blocks(sq, skv, causal):
    """FlashAttention-2 computes the blocks the causal diagonal crosses whole and pads the partial
    blocks at the ends: the matrix term's useful fraction is scores / executed block area,
    checked against an enumeration of the blocks for the tile the model chose."""
    w = attn(batch=1, heads=8, seq_q=sq, seq_kv=skv, head_dim=128, causal=causal)
    L = w.launch
    bq, bk = int(np.asarray(L.tile_m).ravel()[0]), int(np.asarray(L.tile_n).ravel()[0])
    useful = float(np.asarray(L.useful_fraction).ravel()[0])
    from perfmodel.models.attention import causal_scores

    scores = causal_scores(sq, skv) if causal else sq * skv
    assert useful == pytest.approx(scores / _blocks_by_enumeration(sq, skv, bq, bk, causal), rel=1e-9)
    if causal and sq == 1024:
        assert useful < 0.95  # 8 query blocks: the diagonal blocks are a visible share


def _window_scores_by_enumeration(sq, skv, window):
    """Keys each query sees under a bottom-right causal mask cut to its last `window` keys."""
    tot = 0
    for j in range(sq):
        diag = j + skv - sq
        tot += max(0, diag - max(0, diag - window + 1) + 1)
    return tot


def _window_blocks_by_enumeration(sq, skv, bq, bk, window):
    """Score elements of the whole bq x bk blocks a sliding window touches, query block by block."""
    tot = 0
    for j in range(-(-sq // bq)):
        last = min((j + 1) * bq, sq) - 1 + skv - sq
        first = max(0, j * bq + skv - sq - window + 1)
        if last >= 0:
            tot += (last // bk - first // bk + 1) * bk * bq
    return tot


@pytest.mark.parametrize(
    "sq,skv,window", [(8, 8, 3), (4, 8, 2), (8, 4, 2), (100, 300, 17), (4096, 4096, 1024), (8192, 8192, 4096), (4096, 4096, 128)]
)
def test_sliding_window_counts_each_querys_last_keys(sq, skv, window):
    """window=W keeps each query's last W keys of the causal mask (FlashAttention-2's
    window_size = (W - 1, 0)): FLOPs from the exact score count, and the matrix pipe's useful
    fraction from the blocks the band touches, against enumerations."""
    w = attn(batch=1, heads=8, seq_q=sq, seq_kv=skv, head_dim=128, causal=True, window=window)
    assert f(w, "mfma:bf16") == 4 * 8 * 128 * _window_scores_by_enumeration(sq, skv, window)
    L = w.launch
    bq, bk = int(np.asarray(L.tile_m).ravel()[0]), int(np.asarray(L.tile_n).ravel()[0])
    if sq >= bq and bq % bk == 0:  # aligned blocks: `window_blocks` is exact there
        kept = min(skv, sq + window - 1)  # the keys before the first query's window are never read
        enum = _window_scores_by_enumeration(sq, skv, window) / _window_blocks_by_enumeration(sq, kept, bq, bk, window)
        assert float(np.asarray(L.useful_fraction).ravel()[0]) == pytest.approx(enum, rel=1e-9)


def test_sliding_window_times_what_it_reads():
    """A window as long as the sequence changes nothing; a decode over a window of a long cache
    is a decode over the window's keys; a narrower window never takes longer."""
    from perfmodel import predict

    kw = dict(batch=1, heads=32, kv_heads=8, seq_q=8192, head_dim=128, causal=True)
    full = predict("attention", "mi300x", **kw)[0].time_us
    times = [predict("attention", "mi300x", window=w, **kw)[0].time_us for w in (8192, 4096, 1024, 128)]
    assert times[0] == full
    assert all(a > b for a, b in zip(times, times[1:], strict=False))
    assert times[2] < 0.35 * full  # 1024 of 8192 keys: under a quarter of the causal scores
    dec = dict(batch=8, heads=32, kv_heads=16, seq_q=1, head_dim=256, arch="mi325x")
    (windowed,) = predict("attention", seq_kv=8192, window=1024, **dec)
    (short,) = predict("attention", seq_kv=1024, **dec)
    assert windowed.time_us == short.time_us and windowed.flops == short.flops


@pytest.mark.parametrize(
    "arch,shape,window",
    [("mi300a", (8, 128, 32, 128, 128, 256), 16), ("mi300x", (2, 32, 8, 33, 3049, 128), 1016), ("mi300x", (2, 32, 8, 8, 4424, 128), 1640)],
)
def test_a_window_is_never_slower_than_the_causal_mask(arch, shape, window):
    """A windowed kernel can run the causal mask's blocks and skip those outside the window, so
    it is never slower; on these shapes the blocks ranked for the window (or, in the fewer-queries
    floor, for its smaller problem) timed 1.27-1.40x the causal mask."""
    from perfmodel import predict

    b, h, hk, sq, skv, d = shape
    kw = dict(batch=b, heads=h, kv_heads=hk, seq_q=sq, seq_kv=skv, head_dim=d, causal=True)
    (causal,) = predict("attention", arch, **kw)
    (windowed,) = predict("attention", arch, window=window, **kw)
    assert windowed.time_us <= causal.time_us * 1.001


def test_sliding_window_needs_the_causal_mask(cli):
    """A window without the causal mask (keys on both sides) has no model: one line, exit 2; a
    decode (one query) needs no mask."""
    r = cli("predict", "attention", "batch=1", "heads=8", "seq_q=512", "head_dim=64", "window=128")
    assert r.exit_code == 2
    assert "window" in r.output and "causal=true" in r.output and "Traceback" not in r.output
    ok = cli("predict", "attention", "batch=1", "heads=8", "seq_q=1", "seq_kv=4096", "head_dim=64", "window=128")
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("sq,skv,window", [(128, 128, None), (100, 300, None), (128, 128, 16), (128, 4096, 32)])
def test_one_query_block_runs_every_key_block_whole(sq, skv, window):
    """Fewer queries than one query block (FlashAttention-3's 192 rows on H100 at head dim 64):
    that block runs every key block its last query sees, whole, however much of it the causal
    mask or a window hides (until 2026-11-27 the blocks were scaled by the masked share, so a
    narrow window on 128 tokens timed slower than a wider one)."""
    h100 = load_arch("h100")
    p = {k: np.atleast_1d(float(v)) for k, v in dict(batch=1, heads=8, seq_q=sq, seq_kv=skv, head_dim=64).items()}
    p.update(kv_heads=None, causal=True, phase="fwd", window=None if window is None else np.atleast_1d(float(window)))
    w = get_model("attention").fn(p, h100, "bf16")
    bq, bk = float(w.launch.tile_m[0]), float(w.launch.tile_n[0])
    assert bq > sq
    kept = skv if window is None else min(skv, sq + window - 1)
    scores = _window_scores_by_enumeration(sq, skv, window or skv)
    assert float(w.launch.useful_fraction[0]) == pytest.approx(scores / (bq * np.ceil(kept / bk) * bk), rel=1e-9)


def test_causal_underfilled_grid_lasts_its_heaviest_tile():
    """B1 H32/8 S1024 on MI300X: 256 query-block tiles on 304 CUs, one round. Causal halves the
    FLOPs but the last query block still sees every key, so the kernel takes about as long as
    the non-causal one (AITER's README: 65.8 us causal vs 50.8 us non-causal on this shape)."""
    from perfmodel import predict

    kw = dict(batch=1, heads=32, kv_heads=8, seq_q=1024, head_dim=128)
    (nc,) = predict("attention", "mi300x", causal=False, **kw)
    (c,) = predict("attention", "mi300x", causal=True, **kw)
    assert c.flops_by["mfma:bf16"] < 0.55 * nc.flops_by["mfma:bf16"]
    assert c.time_s > 0.9 * nc.time_s
    # many rounds of tiles: the imbalance averages out and causal is about half again
    (nc8,) = predict("attention", "mi300x", causal=False, **dict(kw, batch=16, seq_q=8192))
    (c8,) = predict("attention", "mi300x", causal=True, **dict(kw, batch=16, seq_q=8192))
    assert c8.time_s < 0.6 * nc8.time_s


@pytest.mark.parametrize("arch", ["mi300x", "h100"])
def test_speculative_decode_of_packed_heads_is_balanced(arch):
    """A few new tokens (Sq = 2-4, causal) of g query heads per KV head: one query block holds
    every head's rows and sees (nearly) every key, so the tiles are even and causal costs about
    what non-causal does (before session 22 the heaviest tile was compared with a per-head
    mean: 32 heads of MLA at Sq = 2 came out 15x slower than without the mask)."""
    from perfmodel import predict

    for kw in (dict(batch=128, heads=32, kv_heads=1, seq_kv=4096, head_dim=576, head_dim_v=512, kv_shared=True),
               dict(batch=8, heads=32, kv_heads=8, seq_kv=8192, head_dim=128)):  # fmt: skip
        for sq in (2, 4):
            (nc,) = predict("attention", arch, seq_q=sq, causal=False, **kw)
            (c,) = predict("attention", arch, seq_q=sq, causal=True, **kw)
            assert 0.8 * nc.time_s <= c.time_s <= 1.05 * nc.time_s, (kw, sq)


def test_attention_tail_is_not_balanced_by_stream_k():
    """A GEMM grid of >= half a wave is balanced by stream-K; attention's is not: 256 tiles on
    304 CUs run at 256/304 of the device."""
    w = attn(batch=1, heads=32, kv_heads=8, seq_q=1024, head_dim=128)
    from perfmodel.estimate import occupancy

    occ = occupancy(A, w, (1,))
    assert float(occ["grid"][0]) == 256 and float(occ["quantization"][0]) == pytest.approx(256 / 304)


def test_gqa_backward_runs_per_query_head_and_sums_dk_dv():
    """FA2/CK backward under GQA: one problem per query head (grid over b*h), K/V read once per
    KV head from memory, dK/dV written expanded then summed over the group (one more kernel)."""
    mha = attn(phase="bwd", batch=2, heads=8, seq_q=2048, head_dim=128)
    gqa = attn(phase="bwd", batch=2, heads=8, kv_heads=2, seq_q=2048, head_dim=128)
    assert f(gqa, "mfma:bf16") == f(mha, "mfma:bf16")
    assert float(np.asarray(gqa.launch.grid).ravel()[0]) == float(np.asarray(mha.launch.grid).ravel()[0])
    # the pre-pass, the dQ conversion and, under GQA, the dK/dV group sum run as kernels of their own
    assert len(gqa.serial) == 3 == len(mha.serial) + 1
    kv_mha = 2 * 2 * 8 * 2048 * 128 * 2
    hbm_g, hbm_m = float(gqa.with_serial().bytes["hbm"][0]), float(mha.with_serial().bytes["hbm"][0])
    # GQA reads 4x less K/V, but writes dK/dV expanded (as big as MHA's) and reads them back once
    assert hbm_g > hbm_m - 0.75 * kv_mha


def test_backward_key_blocks_are_ranked_with_the_dq_traffic():
    """The dQ accumulators cost L2 traffic once per key block: the ranking sees it, so a small
    backward grid keeps 128-key blocks instead of splitting into 32-key blocks whose dQ re-reads
    make the kernel L2-latency-bound."""
    w = attn(phase="bwd", batch=1, heads=32, kv_heads=8, seq_q=1024, head_dim=128)
    assert float(np.asarray(w.launch.tile_m).ravel()[0]) == 128


def test_split_kv_decode_adds_the_combine_kernel():
    """Flash-decoding (split-KV) runs a partial kernel and a combine kernel (FA2's
    flash_fwd_splitkv_combine_kernel): two dispatches; a prefill tile grid is one."""
    dec = attn(batch=1, heads=32, kv_heads=8, seq_q=1, seq_kv=32768, head_dim=128)
    pre = attn(batch=8, heads=32, kv_heads=8, seq_q=4096, head_dim=128)
    assert float(np.asarray(dec.launch.kernels).ravel()[0]) == 2.0
    assert float(np.asarray(pre.launch.kernels).ravel()[0]) == 1.0


def test_amd_decode_splits_the_kv_into_256_key_partitions():
    """ROCm decode kernels (vLLM's paged attention, AITER's) split the KV cache into fixed
    256-token partitions; elsewhere the split only fills the CUs (FA2's heuristic)."""
    from perfmodel.models import tiles
    from perfmodel.models.attention import _choose_blocks, _latent, _problem

    def split(arch, batch):
        p = {"batch": np.atleast_1d(float(batch)), "heads": np.atleast_1d(32.0), "kv_heads": np.atleast_1d(8.0),
             "seq_q": np.atleast_1d(1.0), "seq_kv": np.atleast_1d(8192.0), "head_dim": np.atleast_1d(128.0),
             "causal": False, "phase": "fwd"}
        x = _problem(p, arch, "bf16")
        r = tiles.Rates.of(arch, *tiles.matrix_pipe(arch, "bf16", []))
        return float(_choose_blocks(arch, r, x, *_latent(arch, x))[3][0])

    assert split(A, 16) >= 8192 / 256  # 16 x 8 KV heads = 128 workgroups would already fill half of 304 CUs
    assert split(load_arch("h100"), 16) < 8192 / 256


def test_one_kv_block_exposes_the_whole_faster_stage():
    """A tile of one KV block has no second step to overlap its loads or its matrix work with:
    its `fill` holds the prologue and epilogue latencies and the faster stage whole; at 4096
    tokens the fill is a small share (H200's cuDNN kernels: 0.61 of measured at 128 tokens
    without it, docs/device-measurements.md)."""
    import math

    from model_runs import pipeline_fill_s

    import perfmodel
    from perfmodel.rates import latency_s

    a = load_arch("h200")
    for n in (128, 4096):
        (p,) = perfmodel.predict("attention", "h200", batch=2, heads=32, seq_q=n, head_dim=128)
        rounds = math.ceil(p.grid / (a.cus * p.wgs_per_cu))
        paid = rounds if p.wgs_per_cu < 2 else 1  # one workgroup per SM: every round waits
        steps = math.ceil(n / int(p.tile.split("x")[1]))  # KV blocks a tile streams
        pipe = pipeline_fill_s(p.terms_s, p.grid, p.wgs_per_cu, a.cus, steps, amd=False)
        assert p.terms_s["fill"] == pytest.approx(2 * paid * latency_s(a, "hbm") + pipe)
        if n == 128:
            c = max(v for t, v in p.terms_s.items() if t.startswith("compute:"))
            m = max(v for t, v in p.terms_s.items() if t.startswith("memory:"))
            assert steps == 1 and rounds == 1 and pipe == pytest.approx(min(c, m))
        else:
            assert pipe < 0.05 * p.time_s


def test_hopper_forward_runs_flashattention3_tiles():
    """On sm_90 the forward takes FlashAttention-3's tiles by head dim (model_constants.yaml
    `attention_fwd_tiles`, from hopper/tile_size.h): 192 x 192 at d <= 64 (192 x 128 causal),
    128 x 176 at d = 128 (128 x 128 causal), with q_block / 64 MMA warpgroups and a producer;
    decode and other targets keep the ranked blocks."""
    a = load_arch("h100")
    for d, causal, tile, lanes in ((64, False, (192, 192), 512), (64, True, (192, 128), 512), (128, False, (128, 176), 384),
                                   (128, True, (128, 128), 384)):
        w = run_model("attention", a, "bf16", batch=4, heads=16, seq_q=2048, head_dim=d, causal=causal)
        assert (float(w.launch.tile_m[0]), float(w.launch.tile_n[0])) == tile
        assert float(w.launch.workgroup_size[0]) == lanes
    dec = run_model("attention", a, "bf16", batch=8, heads=32, seq_q=1, seq_kv=8192, head_dim=128)
    assert float(dec.launch.tile_m[0]) != 128 or float(dec.launch.tile_n[0]) != 176
    amd = run_model("attention", load_arch("mi300x"), "bf16", batch=4, heads=16, seq_q=2048, head_dim=128)
    assert float(amd.launch.tile_n[0]) != 176


def test_a_v_head_dim_of_its_own_counts_qk_and_pv_apart():
    """DeepSeek MLA prefill: Q/K heads of 192, V/O heads of 128. QK^T costs 2 D per score, PV
    2 Dv (fwd); the backward adds dP and dV (2 Dv each) and dQ, dK (2 D each). The K/V a
    decode step streams is Skv (D + Dv) per KV head."""
    kw = dict(batch=2, heads=4, seq_q=8, seq_kv=16, head_dim=192)
    n = 2 * 4 * 8 * 16
    assert f(attn(head_dim_v=128, **kw), "mfma:bf16") == 2.0 * n * (192 + 128)
    assert f(attn("bwd", head_dim_v=128, **kw), "mfma:bf16") == 2.0 * n * (3 * 192 + 2 * 128)
    same, default = attn(head_dim_v=192, **kw), attn(**kw)
    assert same.flops.keys() == default.flops.keys()
    for level, b in default.bytes.items():
        assert np.array_equal(same.bytes[level], b), level
    b, hk, s = 4, 8, 8192
    w = attn(batch=b, heads=32, kv_heads=hk, seq_q=1, seq_kv=s, head_dim=192, head_dim_v=128)
    kv = b * hk * s * (192 + 128) * 2.0
    assert kv <= float(w.bytes["hbm"][0]) <= 1.01 * kv


def test_a_shared_latent_cache_is_read_once():
    """MLA's absorbed decode: one latent KV head of 576 channels whose first 512 are the values.
    The cache crosses device memory once (not as K and again as V); the products still cost
    2 (576 + 512) per score."""
    b, h, s = 16, 16, 4096
    kw = dict(batch=b, heads=h, kv_heads=1, seq_q=1, seq_kv=s, head_dim=576, head_dim_v=512)
    shared, apart = attn(kv_shared=True, **kw), attn(**kw)
    assert f(shared, "mfma:bf16") == f(apart, "mfma:bf16") == 2.0 * b * h * s * (576 + 512)
    cache = b * s * 576 * 2.0
    assert cache <= float(shared.bytes["hbm"][0]) <= 1.05 * cache
    assert float(apart.bytes["hbm"][0]) >= cache * (576 + 512) / 576


@pytest.mark.parametrize(
    "extra, key",
    [(dict(phase="bwd"), "kv_shared"), (dict(head_dim_v=640), "head_dim_v")],
)
def test_a_shared_cache_needs_the_forward_and_values_inside_the_keys(extra, key):
    from perfmodel.errors import InputError

    phase = extra.pop("phase", "fwd")
    with pytest.raises(InputError) as e:
        attn(phase, batch=1, heads=16, kv_heads=1, seq_q=1, seq_kv=64, head_dim=576,
             **{"head_dim_v": 512, **extra}, kv_shared=True)  # fmt: skip
    assert e.value.key == key


def test_mixed_head_dims_in_one_batch_match_one_by_one():
    """Each case ranks the tiles legal for its own (D, Dv): a batch of mixed head dims gives
    each case the time it gets alone."""
    import perfmodel

    d, dv, sq = [64.0, 128, 192, 576, 128], [64.0, 128, 128, 512, 64], [4096.0, 1, 4096, 1, 2048]
    kvh, skv = [16.0, 4, 16, 1, 8], [4096.0, 8192, 4096, 4096, 2048]
    kw = dict(batch=4, heads=16)
    batch = perfmodel.sweep("attention", "mi300x", "bf16", kv_heads=np.array(kvh), seq_q=np.array(sq),
                            seq_kv=np.array(skv), head_dim=np.array(d), head_dim_v=np.array(dv), **kw)  # fmt: skip
    alone = [
        float(np.atleast_1d(perfmodel.sweep("attention", "mi300x", "bf16", kv_heads=kvh[i], seq_q=sq[i], seq_kv=skv[i],
                                            head_dim=d[i], head_dim_v=dv[i], **kw).time_s)[0])  # fmt: skip
        for i in range(5)
    ]
    assert np.allclose(batch.time_s, alone, rtol=1e-12)


def test_hopper_latent_decode_runs_flashmla_tiles():
    """MLA's absorbed decode on Hopper takes FlashMLA's tile (64 query rows, 64 keys, 256
    threads) and its double-buffered key block as the bytes in flight, so 16 heads stream the
    cache at HBM speed instead of being capped by one wave's loads; on AMD the ranked blocks
    stay (no MLA kernel tile is sourced there)."""
    from perfmodel import predict

    kw = dict(batch=128, heads=16, kv_heads=1, seq_q=1, seq_kv=4096, head_dim=576, head_dim_v=512, kv_shared=True)
    (h,) = predict("attention", "h100", **kw)
    assert h.tile == "64x64x576" and h.bound == "memory:hbm"
    (m,) = predict("attention", "mi300x", **kw)
    assert m.tile != "64x64x576"
    (plain,) = predict("attention", "h100", **{**kw, "kv_shared": False, "head_dim_v": 576})
    assert plain.tile != "64x64x576"  # only the latent form is FlashMLA's


def test_aiter_latent_decode_always_runs_its_reduce_kernel():
    """AITER's persistent MLA decode (gfx942/gfx950) dispatches mla_reduce_v1 after every stage-1
    call, split or not: a second kernel, timed on its own grid (`Work.serial`), where one short
    context needs no split. In bf16 (not that fp8 path) the combine stays booked with the main
    kernel; ordinary attention and Hopper's MLA keep one kernel when the keys are not split."""
    from perfmodel.arch import load_arch

    kw = dict(batch=[1.0], heads=[128.0], kv_heads=[1.0], seq_q=[1.0], seq_kv=[21.0], head_dim=[576.0],
              head_dim_v=[512.0], causal=False, phase="fwd")  # fmt: skip
    model = get_model("attention").fn

    def kernels(arch, shared, dtype="fp8"):
        w = model({**{k: np.asarray(v) if isinstance(v, list) else v for k, v in kw.items()}, "kv_shared": shared},
                  load_arch(arch), dtype)  # fmt: skip
        own = float(np.asarray(w.launch.kernels).ravel()[0])
        return own + sum(float(np.asarray(k.launch.kernels).ravel()[0]) for k in w.serial), own

    assert kernels("mi300x", True) == kernels("mi355x", True) == (2.0, 1.0)
    assert kernels("mi355x", True, "bf16") == (2.0, 2.0)
    assert kernels("mi300x", False)[0] == kernels("h100", True)[0] == 1.0


def test_aiter_mla_planner_splits_a_sequence_over_at_most_32_cus():
    """AITER's MLA metadata spreads the work over min(CUs, 32 x batch) workgroups (the benchmark
    harness's max_split_per_batch 32), in 16-token granules with 16 more charged per work item:
    one 8192-token sequence runs on 31 CUs of an MI355X, not on all 256; 16 of them take 16
    splits each (528 tokens per CU); a 21-token context at batch 32 is not split at all."""
    model = get_model("attention").fn
    base = dict(heads=128, kv_heads=1, seq_q=1, head_dim=576, head_dim_v=512)

    def grid(arch, batch, seq_kv):
        p = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in {**base, "batch": batch, "seq_kv": seq_kv}.items()}
        p.update(causal=False, phase="fwd", kv_shared=True, paged=True, block_size=1)
        return float(np.ravel(model(p, load_arch(arch), "fp8").launch.grid)[0])

    assert grid("mi355x", 1, 8192) == 31
    assert grid("mi355x", 16, 8192) == 16 * 16
    assert grid("mi300x", 32, 21) == 32
    assert grid("mi300x", 1, 70000) == 32


def test_aiter_mla_kernel_applies_case_by_case_in_a_batch():
    """AITER's m16x8 MLA kernels hold 128 query rows (heads x new tokens); a 16-head decode runs
    another kernel and keeps the ranked blocks. In one batch each case gets its own: the same
    time, tile and rate as predicted alone."""
    from perfmodel import predict

    kw = dict(dtype="fp8", kv_heads=1, seq_q=1, seq_kv=4096, head_dim=576, head_dim_v=512, kv_shared=True,
              paged=True, block_size=1, batch=64)  # fmt: skip
    both = predict(arch="mi355x", cases=[{"kernel": "attention", "heads": h, **kw} for h in (128, 16)])
    assert len(both) == 2
    alone = [predict("attention", arch="mi355x", heads=h, **kw)[0] for h in (128, 16)]
    assert both[0].tile == alone[0].tile == "128x64x576" and alone[1].tile != "128x64x576"
    for b, a in zip(both, alone, strict=True):
        assert b.tile == a.tile and abs(b.time_s / a.time_s - 1) < 1e-9
        assert b.rates_used["compute:mfma:fp8"] == a.rates_used["compute:mfma:fp8"]
    assert both[0].rates_used["compute:mfma:fp8"] < both[1].rates_used["compute:mfma:fp8"]


def test_gfx950_mla_decode_runs_at_the_bf16_matrix_rate():
    """AITER's MLA decode issues v_mfma_f32_16x16x32_fp8_fp8, which gfx950 runs in 4 passes like
    its bf16 16x16x32 (LLVM's gfx950 llvm-mca test): half the fp8 peak, which only the f8f6f4
    instructions reach. The FLOPs stay fp8 FLOPs; only their rate is bf16's. On gfx942 the
    instruction is the fp8 peak's own."""
    from perfmodel.estimate import estimate
    from perfmodel.rates import compute_rate

    p = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in
         dict(batch=64, heads=128, kv_heads=1, seq_q=1, seq_kv=23333, head_dim=576, head_dim_v=512).items()}  # fmt: skip
    p.update(causal=False, phase="fwd", kv_shared=True, paged=True, block_size=1)
    model = get_model("attention").fn

    def used(arch):
        w = model(p, load_arch(arch), "fp8")
        assert "mfma:fp8" in w.flops and "mfma:bf16" not in w.flops
        return estimate(w, load_arch(arch)).rates_used

    u355 = used("mi355x")
    assert u355.rate["compute:mfma:fp8"] == compute_rate(load_arch("mi355x"), "mfma", "bf16")[0]
    assert "bf16 rate" in u355.provenance["compute:mfma:fp8"]
    assert used("mi300x").rate["compute:mfma:fp8"] == compute_rate(load_arch("mi300x"), "mfma", "fp8")[0]


def test_a_paged_cache_waits_for_its_block_table_before_the_first_keys():
    """The first K/V block's address is read from the block table, at an entry that depends on
    the sequence's length (vLLM's paged_attention_kernel reads seq_lens[seq_idx] first): two
    more dependent loads in the prologue of a paged decode than of a contiguous one."""
    kw = dict(batch=4, heads=32, kv_heads=8, seq_q=1, seq_kv=1024, head_dim=128)
    # numbers as arrays, flags as plain bools (a batch shares its text and bool parameters)
    p = {k: v if isinstance(v, bool) else np.atleast_1d(np.asarray(v, dtype=float)) for k, v in kw.items()}
    p.update(causal=False, phase="fwd")
    model = get_model("attention").fn
    flat = float(np.asarray(model(p, A, "bf16").launch.serial_latencies).ravel()[0])
    paged = float(np.asarray(model({**p, "paged": True}, A, "bf16").launch.serial_latencies).ravel()[0])
    assert paged == flat + 2.0


@pytest.mark.parametrize("arch", ["h100", "mi300x"])
def test_a_causal_mask_is_never_slower(arch):
    """A causal mask skips blocks and never adds any. The diagonal blocks run whole, so a
    128-row query block over 128 causal keys in 80-key blocks still runs two blocks: its loop
    (K-loop floor, pipeline fill) is as long as without the mask. It used to be timed from the
    masked mean (one block) while the heaviest tile's two set the body, and came out 1.18x
    slower than unmasked on an H100 (head dim 256, FA3's 128 x 80 tile). Where the mask makes the
    ranking pick other blocks the two may differ by a few percent (the ranking's local cost is not
    the estimate: MI300X 1 x 8 x 1024^2 x 128 is 1.02x), hence the 5 % allowance."""
    import perfmodel

    shapes = [(8, 8, 2, 128, 128, 256), (1, 8, 8, 1024, 1024, 128), (1, 32, 8, 16, 1024, 64), (4, 16, 16, 256, 256, 128)]
    for b, h, hk, sq, skv, d in shapes:
        kw = dict(batch=b, heads=h, kv_heads=hk, seq_q=sq, seq_kv=skv, head_dim=d)
        (masked,) = perfmodel.predict("attention", arch, causal=True, **kw)
        (plain,) = perfmodel.predict("attention", arch, causal=False, **kw)
        assert masked.time_s <= plain.time_s * 1.05, (kw, masked.time_s, plain.time_s)


def test_aiter_latent_decode_splits_to_fill_the_cus_not_per_256_keys():
    """AITER's MLA decode balances its splits over the CUs (aiter/mla.py); the 256-key partition
    of the ROCm paged-attention kernels is not its rule. Per 256 keys, a batch-64 decode over
    23,333 tokens ran 92 splits whose fp32 partials outweighed the cache, and came out slower
    than the same decode at batch 128. Ordinary decode on AMD keeps the partition."""
    from perfmodel import predict

    kw = dict(dtype="fp8", heads=128, kv_heads=1, seq_q=1, seq_kv=23333, head_dim=576, head_dim_v=512,
              kv_shared=True, paged=True, block_size=1)  # fmt: skip
    times = [predict("attention", arch="mi355x", batch=b, **kw)[0].time_s for b in (16, 32, 64, 128, 256)]
    assert times == sorted(times)
    (mla,) = predict("attention", arch="mi355x", batch=64, **kw)
    assert mla.grid <= 2 * load_arch("mi355x").cus
    gqa = dict(dtype="bf16", heads=32, kv_heads=8, seq_q=1, seq_kv=23333, head_dim=128)
    (plain,) = predict("attention", arch="mi355x", batch=1, **gqa)
    assert plain.grid >= np.ceil(23333 / 256)  # one split per 256 keys


def test_aiter_persistent_mla_reads_its_work_list_before_its_keys():
    """AITER's persistent MLA decode (gfx942/gfx950) reads its CU's work range, then each work
    item's bounds, before the block table and the keys; its reduce reads two index maps before
    the partials. Per work item one more round trip, per kernel one (and two in the reduce
    kernel), which no round repeats."""
    model = get_model("attention").fn
    p = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in
         dict(batch=4, heads=128, kv_heads=1, seq_q=1, seq_kv=64, head_dim=576, head_dim_v=512).items()}  # fmt: skip
    p.update(causal=False, phase="fwd", kv_shared=True)

    def latencies(arch, paged):
        L = model({**p, "paged": paged}, load_arch(arch), "fp8").launch
        return float(np.ravel(L.serial_latencies)[0]), float(np.ravel(L.kernel_latencies)[0])

    (s300, k300), (s100, k100) = latencies("mi300x", False), latencies("h100", False)
    assert k300 == 1.0 and k100 == 0.0  # the CU's work range
    assert s300 == s100 + 1.0  # the work item's bounds
    reduce = model({**p, "paged": False}, load_arch("mi300x"), "fp8").serial[-1].launch
    assert float(np.ravel(reduce.kernel_latencies)[0]) == 2.0  # the reduce's two index maps
    # paged, the work item's bounds are the sequence bounds every paged kernel reads first
    assert latencies("mi300x", True)[0] == s300 + 1.0 and latencies("h100", True)[0] == s100 + 2.0


def test_once_per_kernel_latencies_are_not_paid_per_round():
    from perfmodel.estimate import estimate
    from perfmodel.rates import latency_s
    from perfmodel.work import Launch, Work

    arch = load_arch("mi300x")
    lat = latency_s(arch, arch.memory_level)

    def t(rounds, kernel_latencies):
        w = Work(flops={"mfma:bf16": 1.0})
        w.launch = Launch(grid=rounds * arch.cus, workgroup_size=256, lds_bytes=60_000, tile_m=256, tile_n=256,
                          serial_latencies=2.0, kernel_latencies=kernel_latencies)  # fmt: skip
        return float(np.ravel(estimate(w, arch).time_s)[0])

    assert t(1, 3.0) - t(1, 0.0) == pytest.approx(3 * lat, rel=1e-6)
    assert t(4, 3.0) - t(4, 0.0) == pytest.approx(3 * lat, rel=1e-6)


def test_more_query_tokens_are_never_faster():
    """16 queries of 8 heads over 1024 keys ran split-KV on few workgroups (latency-limited) and
    17 or 128 on more query blocks, which the estimator timed 0.66x and 0.50x of the 16-query
    time (MI300X); the fewer queries' estimates (16, 4, 1) are now a floor."""
    import perfmodel

    sq = np.array([1.0, 4.0, 16.0, 17.0, 128.0, 1024.0])
    t = np.asarray(perfmodel.sweep("attention", "mi300x", "bf16", batch=1.0, heads=8.0, seq_q=sq, seq_kv=1024.0, head_dim=128.0).time_s)
    assert np.all(np.diff(t) >= -1e-12 * t[:-1])
    # seq_kv left to its default (= seq_q): the floor keeps the whole problem's keys
    own = perfmodel.sweep("attention", "mi300x", "bf16", batch=1.0, heads=8.0, seq_q=64.0, head_dim=128.0)
    same = perfmodel.sweep("attention", "mi300x", "bf16", batch=1.0, heads=8.0, seq_q=64.0, seq_kv=64.0, head_dim=128.0)
    assert float(np.asarray(own.time_s)) == pytest.approx(float(np.asarray(same.time_s)))


def test_mla_latent_decode_floors_on_fewer_sequences_and_skips_the_2_token_spike():
    """MLA's latent decode takes a floor from fewer sequences (4^k below the batch) besides its
    queries: without it, 16 sequences of 128 heads over 21 tokens were predicted 0.91x of 4
    (MI355X fp8). The query ladder (16, 4, 1) has no rung at 2 tokens, where AITER's planner
    estimate spikes, so 4 tokens are not floored by that spike."""
    import perfmodel

    mla = dict(kv_heads=1.0, head_dim=576.0, head_dim_v=512.0, kv_shared=True, paged=True, block_size=1.0)
    b = np.array([1.0, 4.0, 16.0, 32.0, 64.0, 128.0])
    t = np.asarray(perfmodel.sweep("attention", "mi355x", "fp8", batch=b, heads=128.0, seq_q=1.0, seq_kv=21.0, **mla).time_s)
    assert np.all(np.diff(t) >= -1e-12 * t[:-1])
    # 64 sequences of 70,000 tokens: the 2-token estimate (a planner spike) does not floor 4 tokens
    two, four = (
        float(np.asarray(perfmodel.sweep("attention", "mi355x", "fp8", batch=64.0, heads=32.0, seq_q=q, seq_kv=70000.0, **mla).time_s))
        for q in (2.0, 4.0)
    )
    assert four < 0.6 * two


@pytest.mark.parametrize("phase", ["fwd", "bwd"])
def test_softcap_adds_a_tanh_per_score(phase):
    """Logit soft-capping (Gemma 2, FlashAttention's softcap) adds per executed score one multiply
    and a tanh; on AMD the tanh is an exp, a reciprocal and three VALU instructions (4 FLOPs:
    `activations.PER_ELEMENT`), on NVIDIA one tanh.approx; the backward multiplies dS by
    1 - tanh^2 (3 FLOPs more). The matrix FLOPs and the bytes do not change."""
    from perfmodel.models.activations import PER_ELEMENT

    kw = dict(batch=2, heads=4, seq_q=8, seq_kv=16, head_dim=32)
    plain, capped = attn(phase=phase, **kw), attn(phase=phase, softcap=50.0, **kw)
    n = 2 * 4 * 8 * 16
    tanh_valu, tanh_sfu = PER_ELEMENT["tanh"]
    extra_valu = 1.0 + tanh_valu + (3.0 if phase == "bwd" else 0.0)
    assert f(capped, "sfu:fp32") - f(plain, "sfu:fp32") == tanh_sfu * n
    assert f(capped, "valu:fp32") - f(plain, "valu:fp32") == pytest.approx(extra_valu * n)
    assert f(capped, "mfma:bf16") == f(plain, "mfma:bf16")
    for level, b in plain.bytes.items():
        assert np.array_equal(np.asarray(capped.bytes[level]), np.asarray(b)), level
    h100 = load_arch("h100")
    p = {k: np.atleast_1d(float(v)) for k, v in kw.items()}
    p.update(kv_heads=None, causal=False, phase=phase)
    on_nv = get_model("attention").fn({**p, "softcap": np.atleast_1d(50.0)}, h100, "bf16")
    off_nv = get_model("attention").fn(p, h100, "bf16")
    assert f(on_nv, "sfu:fp32") - f(off_nv, "sfu:fp32") == n  # tanh.approx.f32: one op


@pytest.mark.parametrize("arch", ["mi300x", "mi355x", "h100", "rx7900xtx"])
def test_softcap_is_never_faster(arch):
    """The cap only adds work: never faster than the same case without it, and slower where the
    exponentials already share the chain with the matrix products (head dim 64, long sequence)."""
    from perfmodel import predict

    for kw in (dict(batch=1, heads=16, seq_q=8192, head_dim=64, causal=True), dict(batch=4, heads=32, kv_heads=8, seq_q=1, seq_kv=4096, head_dim=128)):
        (plain,) = predict("attention", arch, **kw)
        (capped,) = predict("attention", arch, softcap=30.0, **kw)
        assert capped.time_us >= plain.time_us
    long = dict(batch=1, heads=16, seq_q=8192, head_dim=64, causal=True)
    assert predict("attention", arch, softcap=30.0, **long)[0].time_us > 1.05 * predict("attention", arch, **long)[0].time_us
