"""Integer VALU rates (archspec `pipes.valu.int`): integer work timed as compute, never as FLOPs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from data_paths import MIXBENCH_MI200
from perfmodel import predict
from perfmodel.arch import load_arch
from perfmodel.vocab import INT_OPS

N = 33554432
CDNA = {"mi100": 16, "mi210": 64, "mi250": 64, "mi250x": 64, "mi300x": 64, "mi300a": 64, "mi325x": 64,
        "mi308x": 64, "mi350x": 64, "mi355x": 64}


@pytest.mark.parametrize("key,mul", sorted(CDNA.items()))
def test_cdna_integer_rates_are_sourced(key, mul):
    a = load_arch(key)
    for op in INT_OPS:
        q = a.int_rate("valu", op)
        assert q is not None and q.source == "LLVMSCHED" and q.tag == "D", (key, op)
    assert "SISchedule.td" in a.sources["LLVMSCHED"]
    # 4 SIMDs x 16 lanes per clock at full rate: the plain FP32 FMA lane rate
    full = a.simds_per_cu * 16
    assert a.int_rate("valu", "int32").value == full == a.rate("valu", "fp32").extra.get("plain", a.rate("valu", "fp32").value) / 2
    assert a.int_rate("valu", "int32_mul").value == mul  # quarter rate on gfx908 only
    assert a.int_rate("valu", "int24").value == full
    assert a.int_rate("valu", "int16_packed").value == 2 * full
    assert a.peak_iops("valu", "int32") == pytest.approx(full * a.cus * a.clock_hz)


def test_nvidia_and_radeon_have_no_integer_rate_yet():
    assert load_arch("h100").int_rate("valu", "int32") is None
    assert load_arch("rx7900xtx").int_rate("valu", "int32") is None


@pytest.mark.parametrize("arch", ["mi100", "mi210", "mi300x"])
def test_mixbench_int_is_timed_as_integer_compute_not_flops(arch):
    ci = 128
    (p,) = predict("mixbench", arch, elem="int", compute_iters=ci)
    a = load_arch(arch)
    assert p.flops == 0 and p.flops_by == {}  # integer ops are not FLOPs
    mads = (ci + 0.5) * N
    assert p.iops_by == pytest.approx({"valu:int32_mul": mads, "valu:int32": mads})
    want = mads / a.peak_iops("valu", "int32_mul") + mads / a.peak_iops("valu", "int32")  # same VALU: they add
    grid = N / 8 / 256
    q = (grid / a.cus) / np.ceil(grid / a.cus)  # wave quantization, as for every compute term
    assert p.terms_s["compute:valu:int"] == pytest.approx(want / q)
    assert p.bound == "compute:valu"
    assert p.amount("compute:valu:int") == pytest.approx(2 * mads)
    assert p.row()["iops_by"] == p.iops_by and p.row()["flops"] == 0


def test_quarter_rate_multiply_on_cdna1():
    (m100,) = predict("mixbench", "mi100", elem="int", compute_iters=256)
    (f100,) = predict("mixbench", "mi100", elem="float", compute_iters=256)
    # one quarter-rate multiply (4 slots) + one add (1 slot) vs one FMA (1 slot): 5x the float kernel
    assert m100.terms_s["compute:valu:int"] / f100.terms_s["compute:valu:fp32"] == pytest.approx(5.0, rel=1e-3)
    (m210,) = predict("mixbench", "mi210", elem="int", compute_iters=256)
    (f210,) = predict("mixbench", "mi210", elem="float", compute_iters=256)
    assert m210.terms_s["compute:valu:int"] / f210.terms_s["compute:valu:fp32"] == pytest.approx(2.0, rel=1e-3)


def test_short_uses_the_16_bit_class():
    (p,) = predict("mixbench", "mi300x", elem="short", compute_iters=64)
    assert set(p.iops_by) == {"valu:int16"} and p.flops == 0


def test_no_rate_means_not_timed_and_said():
    (p,) = predict("mixbench", "h100", elem="int", compute_iters=128)
    assert "compute:valu:int" not in p.terms_s
    assert "no valu int32_mul integer rate" in p.notes


def test_float_rows_are_unchanged_by_integer_support():
    (p,) = predict("mixbench", "mi210", elem="float", compute_iters=8)
    assert "iops_by" not in p.row() and p.iops_by == {}


PAT = re.compile(r"benchmark_func<int, 256, 8u, (\d+)u>")


def test_mixbench_int_against_the_mi210_counters():
    """The real MI210 int dispatches: compute-bound ones are now timed by the integer term, and
    the counters' integer ops agree with the model's count (mul + add per multiply-add)."""
    from perfmodel.validate import validate

    v = validate(str(MIXBENCH_MI200), per_dispatch=True)
    rows = [(int(PAT.search(r["kernel"]).group(1)), r) for r in v.rows if PAT.search(r["kernel"])]
    assert len(rows) == 33
    errs = []
    for ci, r in rows:
        errs.append(abs(r["time_error"]))
        if ci >= 32:
            assert r["bound"] == "compute:valu" and r["explaining_term"] == "compute:valu:int", ci
            counted = r["iops_by"]["valu:int32"]
            assert counted == pytest.approx(2 * (ci + 0.5) * N, rel=0.05)  # + address arithmetic
    assert max(errs) < 0.3  # before integer rates: up to 97 % (the 512-iteration kernel)
    assert float(np.median(errs)) < 0.15
