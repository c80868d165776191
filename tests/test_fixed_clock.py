"""``KEY@1005mhz``: a GPU with its core clock fixed (`perfmodel.fixed_clock`)."""

from __future__ import annotations

import pytest

from perfmodel import predict
from perfmodel.arch import load_arch


def test_a_fixed_clock_scales_what_the_core_clock_drives():
    base, fixed = load_arch("mi300x"), load_arch("mi300x@1005mhz")
    assert fixed.key == "mi300x@1005mhz" and fixed.name == "AMD Instinct MI300X at 1005 MHz"
    assert fixed.clock_hz == 1005e6 and fixed.gfx == base.gfx and fixed.family == base.family
    assert fixed.peak_flops("mfma", "fp8") == pytest.approx(base.peak_flops("mfma", "fp8") * 1005 / 2100)
    # a measured GEMM rate ran at the measured clock under load (1207 MHz): scaled from there
    assert fixed.achievable_flops("mfma", "fp8").value == pytest.approx(base.achievable_flops("mfma", "fp8").value * 1005 / 1207)
    assert fixed.clock_under_load("mfma") == 1005e6
    assert fixed.achievable_bandwidth("hbm").value == base.achievable_bandwidth("hbm").value  # its own clock
    assert fixed.bandwidth("l2") == pytest.approx(base.bandwidth("l2") * 1005 / 2100)
    assert fixed.latency("l2").value == pytest.approx(base.latency("l2").value * 2100 / 1005)  # the same cycles
    assert fixed.latency("hbm").value == base.latency("hbm").value
    assert load_arch("mi300x@1.005ghz") is fixed and load_arch("MI300X@1005") is fixed


def test_compute_bound_work_slows_with_the_clock_and_streams_do_not():
    (g0, g1) = predict("gemm", ["mi300x", "mi300x@1005mhz"], dtype="fp8", m=8192, n=8192, k=8192)
    assert g1.time_s / g0.time_s == pytest.approx(1207 / 1005, rel=0.02)
    (s0, s1) = predict("stream", ["mi300x", "mi300x@1005mhz"], dtype="fp64", op="triad", n=100_000_000)
    assert s1.time_s == pytest.approx(s0.time_s, rel=1e-6) and s1.bound == "memory:hbm"
    # a lock above the clock a sustained GEMM runs at does not lift the power limit
    (h,) = predict("gemm", "mi300x@1500mhz", dtype="fp8", m=8192, n=8192, k=8192)
    assert h.time_s == pytest.approx(g0.time_s, rel=1e-9)


def test_a_gpu_without_measured_rates_scales_from_its_peak_clock():
    (a, b) = predict("gemm", ["mi100", "mi100@1087mhz"], dtype="fp16", m=3840, n=4096, k=4096)
    assert b.time_s / a.time_s == pytest.approx(1502 / 1087, rel=0.02)


@pytest.mark.parametrize("arch,words", [("mi300x@3000mhz", "above its peak clock 2100 MHz"),
                                        ("mi300x@fast", "expected a clock after '@'"), ("mi999@1000mhz", "unknown arch 'mi999'")])
def test_a_bad_clock_is_one_line_exit_2(cli, arch, words):
    r = cli("predict", "gemm", "m=64", "n=64", "k=64", "--arch", arch)
    assert r.exit_code == 2 and "Traceback" not in r.output
    (line,) = [ln for ln in r.output.splitlines() if ln.strip()]
    assert words in line


def test_a_case_file_names_the_clock_in_its_arch(cli, tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("- {kernel: gemm, m: 4096, n: 4096, k: 4096, dtype: bf16, arch: mi355x@1200mhz}\n")
    r = cli("predict", "--cases", str(f), "--format", "json")
    assert r.exit_code == 0, r.output
    assert '"arch": "mi355x@1200mhz"' in r.output


def test_a_spec_file_with_an_at_sign_in_its_name_is_a_file(tmp_path):
    import shutil

    from perfmodel.arch import archspec_dir

    f = tmp_path / "my@gpu.yaml"
    shutil.copy(archspec_dir() / "mi210.yaml", f)
    assert load_arch(str(f)).cus == 104
    assert load_arch(f"{f}@1000mhz").clock_hz == 1000e6  # and it takes a clock too


def test_default_latencies_of_core_clocked_levels_keep_their_cycles():
    """MI300X's spec has no LDS latency: the shared default (31 ns, the stock clock) stands in, and
    at a fixed clock it lasts as many cycles; the device memory's default does not scale."""
    from perfmodel.rates import latency_used

    base, fixed = load_arch("mi300x"), load_arch("mi300x@1050mhz")
    assert base.latency("lds") is None
    t, how = latency_used(fixed, "lds")
    assert t == pytest.approx(latency_used(base, "lds")[0] * 2) and "fixed clock" in how
    r = load_arch("rx7900xtx@1250mhz")
    assert latency_used(r, "vram")[0] == latency_used(load_arch("rx7900xtx"), "vram")[0]
