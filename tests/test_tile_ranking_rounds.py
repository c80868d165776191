"""The tile ranking pays the per-round prologue and epilogue latencies the estimator charges."""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel
from perfmodel.arch import load_arch
from perfmodel.models import gemm_tiling
from perfmodel.models.tiles import Rates, Tile, runs_alone
from perfmodel.rates import latency_s


def test_runs_alone_follows_lds_and_registers():
    a = load_arch("mi300x")  # 64 KiB of LDS per CU
    assert runs_alone(a, Tile(128, 128, 256), 128, 1.0, 4.0)  # 2 x 256 x 128 B = 64 KiB: the whole LDS
    assert not runs_alone(a, Tile(64, 64, 256), 64, 1.0, 4.0)  # 16 KiB
    assert runs_alone(a, Tile(256, 256, 256), 32, 2.0, 4.0)  # 256 fp32 accumulators a lane


def test_an_alone_tile_pays_its_latencies_every_round():
    a = load_arch("mi300x")
    r = Rates.of(a, "mfma", "fp8")
    assert r.lat == pytest.approx(latency_s(a, a.memory_level))
    m, n, k, b = (np.array([x]) for x in (4096.0, 8192.0, 256.0, 1.0))
    args = (r, m, n, k, b, Tile(64, 64, 256), 128, 1.0, 1.0, np.zeros(1), np.zeros(1), a.wave_size)
    once, every = gemm_tiling._choice_cost(*args), gemm_tiling._choice_cost(*args, alone=True)
    rounds = np.ceil(4096 / 64 * 8192 / 64 / a.cus)
    assert float(every[0] - once[0]) == pytest.approx((rounds - 1) * 2 * r.lat)


def test_many_short_k_rounds_are_not_chosen():
    """GLM-5.1's MoE down GEMM shard (257 experts, K = 256, block FP8): a 32-row tile that fills
    a CU's LDS alone ran 444,096 tiles in 1,461 rounds, 1.4 ms of prologues in the estimate."""
    (p,) = perfmodel.predict("gemm", "mi300x", dtype="fp8", m=574, n=6144, k=256, batch=257, scaling="block", out_dtype="bf16")
    tm, tn = (int(x) for x in p.tile.split("x")[:2])
    assert tm * tn >= 64 * 128
    assert p.time_us < 1500


def test_batched_ranking_charges_re_reads_that_miss_the_l2_at_the_mall_rate():
    """A grouped GEMM of 33-63 rows per group (MoE just past the 32-row tile) once ranked a
    16-row tile first: its weight re-reads, one per row of tiles, go through the L2 at the
    theoretical rates of the ranking but miss the L2s, and the estimator timed them at the
    MALL's achievable rate, twice as slow as a taller tile it would have taken."""
    kw = dict(groups=256, n=4096, k=7168)
    chosen = perfmodel.sweep("grouped_gemm", "mi300a", "fp8", m=np.array([33.0, 48.0]), **kw)
    tall = perfmodel.sweep("grouped_gemm", "mi300a", "fp8", m=np.array([33.0, 48.0]), tile="64x128", **kw)
    assert np.all(chosen.time_s <= tall.time_s * 1.001)
    r = Rates.of(load_arch("mi300a"), "mfma", "fp8")
    assert r.reread is not None and r.reread[0] < r.bw["mall"]  # achievable, below the theoretical
    assert Rates.of(load_arch("a100"), "tensor", "fp16").reread is None  # no MALL, nothing to add


def test_moe_tokens_past_a_tile_height_are_not_slower_than_twice_the_tokens():
    """MI300A FP8, 256 experts, top-8: 1024 tokens give 32.00...02 expected rows per expert; the
    16-row tiles the ranking chose there took 5.72 ms against 3.20 ms at 2048 tokens."""
    t = np.array([1023.0, 1024.0, 1500.0, 2048.0, 3000.0, 4096.0])
    s = perfmodel.sweep("moe", "mi300a", "fp8", tokens=t, experts=256, topk=8, hidden=7168, inter=2048).time_s
    assert np.all(s[1:] >= 0.95 * s[:-1])
