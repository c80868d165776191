"""Attention backward: a workgroup's waves meet at a barrier every step (dS goes through LDS to
the dK and dQ products), so only other resident workgroups overlap one's softmax with the matrix
pipe (`Launch.lockstep`); on NVIDIA the accumulators may hold the 192 registers a thread that
FlashAttention-2/3 give them, so head dim 128 runs on FA's 128-key backward tiles; and the
pre-pass (Delta, dQ accumulator cleared) and the dQ conversion are kernels of their own, whose
streaming adds to the main kernel's time."""

from __future__ import annotations

import numpy as np
import pytest
from model_runs import run_model

from perfmodel.arch import load_arch
from perfmodel.estimate import _dependent_chain, _Terms
from perfmodel.models import tiles
from perfmodel.prediction import predict
from perfmodel.work import Launch, Work


def _chain(lockstep: bool, wgs_per_cu: float, waves_per_simd: float = 2.0, grid: float = 1e6) -> float:
    w = Work()
    w.dependent.update({"tensor:bf16", "valu:fp32", "sfu:fp32"})
    w.launch = Launch(grid=grid, lockstep=lockstep)
    t = _Terms(time={"compute:tensor:bf16": np.array([4.0]), "compute:valu:fp32": np.array([0.5]),
                     "compute:sfu:fp32": np.array([1.0])})
    occ = {"waves_per_simd": np.array([waves_per_simd]), "wgs_per_cu": np.array([wgs_per_cu]),
           "grid": np.array([grid])}
    _dependent_chain(w, load_arch("h100"), occ, t)
    return float(t.time["compute:tensor:bf16"][0])


def test_lockstep_waves_do_not_hide_each_others_softmax():
    free = _chain(False, wgs_per_cu=1.0)  # two waves per SIMD cycle on their own
    assert free < 5.5
    assert _chain(True, wgs_per_cu=1.0) == pytest.approx(5.5)  # one workgroup: the sum
    two = _chain(True, wgs_per_cu=2.0)  # two resident workgroups cycle like two waves
    assert two == pytest.approx(free)
    # a grid that leaves a CU one workgroup keeps the sum whatever fits
    assert _chain(True, wgs_per_cu=2.0, grid=132.0) == pytest.approx(5.5)


def test_only_the_backward_pass_is_lockstep():
    a = load_arch("mi300x")
    shape = dict(batch=2, heads=16, seq_q=2048, head_dim=128)
    assert not run_model("attention", a, "bf16", phase="fwd", **shape).launch.lockstep
    assert run_model("attention", a, "bf16", phase="bwd", **shape).launch.lockstep


@pytest.mark.parametrize("arch", ["a100", "h100", "h200"])
def test_nvidia_backward_head_dim_128_uses_flash_attentions_128_key_tile(arch):
    a = load_arch(arch)
    assert tiles.acc_vgpr_budget(a) == 192.0
    p = predict("attention", a, batch=4, heads=48, seq_q=8192, head_dim=128, phase="bwd", dtype="bf16")[0]
    assert p.tile.startswith("128x64")  # 128 keys x 64 queries, as FA2 (sm80) and FA3 (sm90)


def test_amd_keeps_half_the_addressable_registers_for_operands():
    assert tiles.acc_vgpr_budget(load_arch("mi300x")) == 256.0  # (256 VGPRs + 256 AGPRs) / 2
    assert tiles.acc_vgpr_budget(load_arch("rx7900xtx")) == 128.0


def test_backward_side_kernels_add_their_streaming_to_the_main_kernel():
    """FA2/FA3 run dot(dO, O) (+ zeroing the fp32 dQ accumulator) before the main kernel and the
    dQ conversion after it: one call's time is the main kernel's plus theirs, even where the main
    kernel is matrix-bound and would have hidden their bytes under its own matrix time."""
    from dataclasses import replace

    from perfmodel.estimate import estimate

    a = load_arch("h100")
    shape = dict(batch=4, heads=48, seq_q=1024, seq_kv=1024, head_dim=64, causal=True, phase="bwd")
    w = run_model("attention", a, "bf16", **shape)
    pre, post = w.serial
    main = replace(w, serial=[])
    t_main, t_pre, t_post, t_all = (float(np.ravel(estimate(x, a).time_s)[0]) for x in (main, pre, post, w))
    assert t_all == pytest.approx(t_main + t_pre + t_post)
    assert estimate(main, a).bound[0].startswith("compute")
    # the pre-pass reads O and dO: at least their bytes at the HBM ceiling, plus its launch
    q = 4 * 48 * 1024 * 64 * 2.0
    assert t_pre >= 2 * q / a.achievable_bandwidth("hbm").value
