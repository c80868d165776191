"""Integer VALU rates (archspec `pipes.valu.int`): integer work timed as compute, never as FLOPs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from data_paths import MIXBENCH_MI200
from perfmodel import predict
from perfmodel.arch import archspec_dir, load_arch
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


# NVIDIA: 64 INT32 lanes per SM (the whitepapers' "INT32 Cores / SM"); A100 has as many FP32 lanes,
# Hopper twice as many. Hopper's rates are effective at the spec's single 1830 MHz clock, like its FP32.
NVIDIA = {"a100": 1.0, "h100": 0.5, "h200": 0.5}


@pytest.mark.parametrize("key,of_fp32", sorted(NVIDIA.items()))
def test_nvidia_integer_rates_are_sourced(key, of_fp32):
    a = load_arch(key)
    lanes = a.rate("valu", "fp32").value / 2  # FP32 FMA lanes per SM per clock (effective on Hopper)
    i32, mul = a.int_rate("valu", "int32"), a.int_rate("valu", "int32_mul")
    assert i32.value == pytest.approx(of_fp32 * lanes, rel=5e-3)
    assert mul.value == i32.value  # IMAD on the INT32 lanes: the whitepapers' INT32 TOPS are IMAD-based
    assert i32.source in a.sources and i32.tag in ("R", "D") and mul.tag == "D"
    for op in ("int24", "int16", "int16_packed"):  # no NVIDIA source gives a rate: left out, not guessed
        assert a.int_rate("valu", op) is None, (key, op)


def test_nvidia_integer_peaks_match_the_published_tops():
    # the whitepapers' INT32 TOPS count an IMAD as 2 ops: A100 19.5, H100 SXM5 33.5
    assert 2 * load_arch("a100").peak_iops("valu", "int32_mul") == pytest.approx(19.5e12, rel=5e-3)
    assert 2 * load_arch("h100").peak_iops("valu", "int32_mul") == pytest.approx(33.5e12, rel=5e-3)


RDNA = ("rx6900xt", "w6800", "rx7900xtx", "w7900", "radeon8050s", "radeon860m", "krackan2", "rx9070xt", "r9700")


@pytest.mark.parametrize("key", RDNA)
def test_rdna_integer_rates_are_sourced(key):
    a = load_arch(key)
    full = a.simds_per_cu * a.simd_width  # 2 SIMD32 x 32 lanes, single issue
    fp32 = a.rate("valu", "fp32")
    assert a.int_rate("valu", "int32").value == full == fp32.extra.get("plain", fp32.value) / 2
    assert a.int_rate("valu", "int32_mul").value == full / 4  # ValuQuarterRate32 in Mesa's ACO
    assert a.int_rate("valu", "int32_mul").source == "ACO" and "ValuQuarterRate32" in a.sources["ACO"]
    assert a.int_rate("valu", "int24").value == a.int_rate("valu", "int16").value == full
    assert a.int_rate("valu", "int16_packed").value == 2 * full
    assert "Write32Bit 5 = WriteFloatFMA 5" in a.sources["LLVMSCHED"]


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


def test_no_rate_means_not_timed_and_said(tmp_path):
    # a spec without the multiply rate (the RX 7900 XTX's, int32_mul removed) times only the adds
    src = (archspec_dir() / "rx7900xtx.yaml").read_text()
    lines = [ln for ln in src.splitlines() if not ln.strip().startswith("int32_mul:")]
    spec = tmp_path / "rx7900xtx_nomul.yaml"
    spec.write_text("\n".join(lines) + "\n")
    (p,) = predict("mixbench", str(spec), elem="int", compute_iters=128)
    a = load_arch(str(spec))
    assert a.int_rate("valu", "int32_mul") is None
    assert p.terms_s["compute:valu:int"] > 0  # the int32 adds are timed
    assert "no valu int32_mul integer rate" in p.notes


@pytest.mark.parametrize("arch", ["a100", "h100", "rx7900xtx"])
def test_mixbench_int_is_compute_timed_on_nvidia_and_rdna(arch):
    (p,) = predict("mixbench", arch, elem="int", compute_iters=128)
    a = load_arch(arch)
    mads = 128.5 * N
    assert p.bound == "compute:valu" and p.flops == 0
    assert "integer rate in its spec" not in p.notes  # the note about untimed integer ops is gone
    want = mads / a.peak_iops("valu", "int32_mul") + mads / a.peak_iops("valu", "int32")
    assert p.terms_s["compute:valu:int"] >= want  # wave quantization only stretches it


def test_weight_only_dequant_is_timed_on_h100():
    (p,) = predict("gemm", "h100", dtype="fp16", m=1, n=8192, k=8192, weight_dtype="int4")
    assert p.terms_s["compute:valu:int"] > 0
    assert "integer ops are not timed" not in p.notes


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


def test_h100_integer_rates_against_our_run():
    """Our H100 run (benchmarks/device/results/h100-int-rates-2026-11-26.json, source PMINT): IMAD and
    SHF issue 64 per SM per SM clock and FFMA 128, the architectural figures behind the spec's rates,
    which are written effective at its 1830 MHz clock (x 1980 / 1830)."""
    import json
    from pathlib import Path

    run = json.loads((Path(__file__).resolve().parents[1] / "benchmarks/device/results/h100-int-rates-2026-11-26.json").read_text())
    got = {r["kernel"]: r["src_ops_per_clk_sm"] for r in run["runs"][0] if "kernel" in r}
    a = load_arch("h100")
    per_sm_clock = 1830 / 1980
    assert got["imad"] == pytest.approx(a.int_rate("valu", "int32_mul").value * per_sm_clock, rel=0.01)
    assert got["shf"] == pytest.approx(a.int_rate("valu", "int32").value * per_sm_clock, rel=0.01)
    assert got["ffma"] == pytest.approx(a.rate("valu", "fp32").value / 2 * per_sm_clock, rel=0.02)
    assert "PMINT" in a.sources and "int_rates.cu" in a.sources["PMINT"]


# --- integer dtypes of the streaming families ----------------------------------------------------


@pytest.mark.parametrize("arch", ["mi100", "mi300x", "h100", "rx7900xtx"])
def test_integer_elementwise_is_timed_at_the_integer_rates(arch):
    """An int32 map with 20 adds/logic ops and 10 multiplies per element: integer ops, no FLOPs;
    the multiplies at the spec's int32_mul rate (quarter rate on MI100 and RDNA)."""
    n = 1 << 26
    (p,) = predict("elementwise", arch, dtype="int32", n=n, flops_per_element=20, int_muls_per_element=10)
    a = load_arch(arch)
    assert p.flops == 0 and p.flops_by == {}
    assert p.iops_by == pytest.approx({"valu:int32": 20 * n, "valu:int32_mul": 10 * n})
    want = 20 * n / a.peak_iops("valu", "int32") + 10 * n / a.peak_iops("valu", "int32_mul")
    assert p.terms_s["compute:valu:int"] >= want * (1 - 1e-9)  # wave quantization only stretches it
    assert p.terms_s["compute:valu:int"] <= want * 1.01


def test_integer_elementwise_moves_the_bytes_of_its_type():
    (i32,) = predict("elementwise", "mi300x", dtype="int32", n=1 << 26)
    (f32,) = predict("elementwise", "mi300x", dtype="fp32", n=1 << 26)
    (i16,) = predict("elementwise", "mi300x", dtype="int16", n=1 << 26)
    assert i32.bytes["hbm"] == f32.bytes["hbm"] == 2 * i16.bytes["hbm"]
    assert f32.flops > 0 and i32.flops == 0


def test_integer_sum_counts_integer_adds():
    n = 1 << 30
    (p,) = predict("reduction", "h100", dtype="int32", n=n)
    (f,) = predict("reduction", "h100", dtype="fp32", n=n)
    assert p.flops == 0 and p.iops_by["valu:int32"] == pytest.approx(f.flops)
    assert p.bytes == f.bytes  # an int32 sum moves what an fp32 sum moves


def test_integer_work_of_a_float_kernel_is_timed_beside_its_flops():
    n = 1 << 24
    (p,) = predict("elementwise", "mi300x", dtype="fp32", n=n, flops_per_element=4, int_muls_per_element=10, int_ops_per_element=15)
    assert p.iops_by == {"valu:int32_mul": 10 * n, "valu:int32": 15 * n}
    assert p.flops == 4 * n
    (q,) = predict("elementwise", "mi300x", dtype="fp32", n=n, flops_per_element=4)
    assert "compute:valu:int" not in q.terms_s and q.iops_by == {}


def test_random_key_adds_the_generator_and_distribution_work():
    """random=normal is the Philox4x32-10 and Box-Muller work per element (models.random_numbers),
    the same as spelling it out; a double draws two 32-bit numbers; integer types are refused."""
    n = 1 << 24
    (r,) = predict("elementwise", "mi300x", dtype="fp16", n=n, reads=0, flops_per_element=0, random="normal")
    (k,) = predict("elementwise", "mi300x", dtype="fp16", n=n, reads=0, flops_per_element=6.5, sfu_per_element=2,
                   int_muls_per_element=10, int_ops_per_element=11)
    assert r.terms_s == k.terms_s and r.iops_by == {"valu:int32_mul": 10 * n, "valu:int32": 11 * n}
    assert any("Philox4x32-10" in note for note in r.notes.split("; "))
    (d,) = predict("elementwise", "mi300x", dtype="fp64", n=n, random="uniform")
    assert d.iops_by["valu:int32_mul"] == 20 * n
    with pytest.raises(Exception, match="random"):
        predict("elementwise", "mi300x", dtype="int32", n=n, random="uniform")


def _valu_only(arch, **keys):
    (r,) = predict("elementwise", arch, dtype="fp32", n=1 << 24, reads=0, writes=0, **keys)
    return r


@pytest.mark.parametrize("arch", ["mi300x", "rx7900xtx"])
def test_amd_float_and_integer_valu_work_add(arch):
    """One VALU per SIMD issues both: the kernel's compute time is the sum of the two alone."""
    fp = _valu_only(arch, flops_per_element=40)
    it = _valu_only(arch, flops_per_element=0, int_muls_per_element=4, int_ops_per_element=8)
    both = _valu_only(arch, flops_per_element=40, int_muls_per_element=4, int_ops_per_element=8)
    alone = (fp.terms_s["compute:valu:fp32"], it.terms_s["compute:valu:int"])
    assert max(both.terms_s["compute:valu:fp32"], both.terms_s["compute:valu:int"]) == pytest.approx(sum(alone), rel=1e-9)
    assert min(both.terms_s["compute:valu:fp32"], both.terms_s["compute:valu:int"]) == pytest.approx(min(alone), rel=1e-9)
    assert both.time_us > max(fp.time_us, it.time_us)


def test_nvidia_integer_cores_run_beside_the_fp32_ones():
    fp = _valu_only("h100", flops_per_element=40)
    both = _valu_only("h100", flops_per_element=40, int_ops_per_element=8)
    assert both.terms_s["compute:valu:fp32"] == pytest.approx(fp.terms_s["compute:valu:fp32"], rel=1e-12)


@pytest.mark.parametrize("kernel,shape", [("gemm", "m=64 n=64 k=64"), ("attention", "batch=1 heads=8 seq_q=128 seq_kv=128 head_dim=64"),
                                          ("softmax", "rows=4 cols=8")])
def test_families_without_integer_maths_refuse_int32_in_one_line(cli, kernel, shape):
    r = cli("predict", kernel, *shape.split(), "--dtype", "int32")
    assert r.exit_code == 2 and "Traceback" not in r.output
    (line,) = [ln for ln in r.output.splitlines() if ln.strip()]
    assert f"dtype: {kernel} does not take the integer type 'int32'; expected one of" in line and "int8" in line


def test_a_batch_names_the_case_with_a_refused_integer_type(cli, tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("- {kernel: elementwise, n: 1024, dtype: int32}\n- {id: bad, kernel: gemm, m: 8, n: 8, k: 8, dtype: int16}\n")
    r = cli("predict", "--cases", str(f), "--keep-going")
    assert r.exit_code == 2 and "bad" in r.output and "int16" in r.output
    assert "elementwise" in r.output  # the valid case still has its row


def test_kernels_lists_the_dtypes_each_family_takes(cli):
    import json

    fams = {f["kernel"]: f for f in json.loads(cli("kernels", "--format", "json").stdout)}
    assert "int32" in fams["elementwise"]["dtypes"] and "int32" not in fams["gemm"]["dtypes"]
    assert "int8" in fams["gemm"]["dtypes"]
    assert "[default dtype fp32; also int64, int32, int16]" in cli("kernels", "reduction").stdout
    assert "also int32" not in cli("kernels", "attention").stdout


def test_integer_stream_counts_multiplies_as_multiplies():
    n = 1 << 24
    (t,) = predict("stream", "mi100", dtype="int32", op="triad", n=n)
    assert t.iops_by == pytest.approx({"valu:int32": n, "valu:int32_mul": n})
    (m,) = predict("stream", "mi100", dtype="int32", op="mul", n=n)
    assert m.iops_by == pytest.approx({"valu:int32_mul": n})
    (c,) = predict("stream", "mi100", dtype="int32", op="copy", n=n)
    assert c.iops_by == {} and c.flops == 0


def test_int64_ops_are_their_32_bit_instructions():
    """The VALU has no 64-bit integer add or multiply: an int64 add is an add and an add-with-carry,
    a multiply four 32-bit multiplies and two adds (`dtypes.WIDE_OPS`); 8 bytes per element."""
    n = 1 << 24
    (p,) = predict("elementwise", "mi100", dtype="int64", n=n, flops_per_element=3, int_muls_per_element=1)
    assert p.flops == 0
    assert p.iops_by == pytest.approx({"valu:int32": (2 * 3 + 2) * n, "valu:int32_mul": 4 * n})
    (i32,) = predict("elementwise", "mi100", dtype="int32", n=n)
    assert p.bytes["hbm"] == 2 * i32.bytes["hbm"]
    (s,) = predict("reduction", "mi300x", dtype="int64", n=n)
    (s32,) = predict("reduction", "mi300x", dtype="int32", n=n)
    assert s.iops_by["valu:int32"] == pytest.approx(2 * s32.iops_by["valu:int32"])
