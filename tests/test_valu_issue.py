"""VALU work timed by instructions where a model counts them (`Work.valu_issue`): the spec's
VALU FLOP rate counts every lane slot as an FMA's 2 FLOPs, so a max, add or convert (one slot,
one or no FLOP) takes as long as an FMA. FLOP counts stay FLOPs."""

from __future__ import annotations

import numpy as np
import pytest
from model_runs import run_model as _run

from perfmodel.arch import load_arch
from perfmodel.estimate import estimate
from perfmodel.rates import compute_rate
from perfmodel.work import Work


def test_issue_slots_time_the_valu_term_and_flops_are_unchanged():
    a = load_arch("mi300x")
    w = Work()
    w.add_flops("valu", "fp32", 4.0e9)  # e.g. 1e9 scores x (max + FMA + add)
    plain = float(estimate(w, a).terms["compute:valu:fp32"][()])
    w.add_valu_issue("fp32", 3.0e9)  # ... which are 3 instructions each
    slots = float(estimate(w, a).terms["compute:valu:fp32"][()])
    assert slots == pytest.approx(plain * 6.0 / 4.0)
    rate = compute_rate(a, "valu", "fp32")[0]
    assert slots == pytest.approx(2.0 * 3.0e9 / rate, rel=0.05)  # quantization 1 for a gridless Work
    w.packed.add("valu:fp32")  # packed instructions keep the FLOP timing at the full rate
    assert float(estimate(w, a).terms["compute:valu:fp32"][()]) < slots


def test_attention_counts_its_softmax_instructions():
    a = load_arch("h100")
    shape = dict(batch=1, heads=8, seq_q=1024, seq_kv=1024, head_dim=64)
    fwd = _run("attention", a, "bf16", **shape)
    n = 8 * 1024 * 1024
    assert float(fwd.flops["sfu:fp32"][0]) == n
    rescale = float(fwd.flops["valu:fp32"][0]) - 4.0 * n  # the O rescale multiplies, one slot each
    assert float(fwd.valu_issue["valu:fp32"][0]) == pytest.approx(3.5 * n + rescale)
    bwd = _run("attention", a, "bf16", phase="bwd", **shape)
    assert float(bwd.valu_issue["valu:fp32"][0]) == pytest.approx(4.0 * n)
    # Delta = rowsum(dO * O), one FMA per element of O, is the pre-pass kernel's
    pre = bwd.serial[0]
    assert sum(float(v[0]) for v in pre.flops.values()) == pytest.approx(2.0 * 8 * 1024 * 64)


def test_row_kernels_count_an_fma_as_one_instruction():
    a = load_arch("mi300x")
    for kernel, flops, slots in (("layernorm", 7, 5), ("rmsnorm", 4, 3), ("softmax", 4, 4)):
        w = _run(kernel, a, "bf16", rows=8, cols=4096)
        assert float(w.flops["valu:fp32"][0]) == flops * 8 * 4096
        assert float(w.valu_issue["valu:fp32"][0]) == slots * 8 * 4096


@pytest.mark.parametrize("waves", [1.0, 2.0, 4.0])
def test_a_softmax_longer_than_the_matrix_product_paces_the_chain(waves):
    """Two stations, the matrix term and the rest: where the rest (VALU + SFU, e.g. head dim 64
    on Hopper) outlasts the matrix product, the rest is the slower station of the closed cycle."""
    from perfmodel.estimate import _dependent_chain, _Terms

    w = Work()
    w.dependent.update({"tensor:bf16", "valu:fp32", "sfu:fp32"})
    t = _Terms(time={"compute:tensor:bf16": np.array([2.0]), "compute:valu:fp32": np.array([1.0]),
                     "compute:sfu:fp32": np.array([1.5])})
    _dependent_chain(w, load_arch("h100"), {"waves_per_simd": np.array([waves])}, t)
    r = 2.0 / 2.5  # the matrix stage against the slower rest
    expect = 2.5 * (1 - r ** (waves + 1)) / (1 - r**waves)  # 4.5 at one wave, towards 2.5
    assert float(t.time["compute:tensor:bf16"][0]) == pytest.approx(expect)
    assert float(t.time["compute:sfu:fp32"][0]) == 1.5  # the shorter terms keep their own time
