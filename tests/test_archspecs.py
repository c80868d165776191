"""Every shipped archspec loads, cites its sources, and derives the vendor's published peaks."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from data_paths import VENDOR_PEAKS
from perfmodel.arch import Arch, arch_keys, archspec_dir, load_all, load_arch
from perfmodel.archspec import SpecValue
from perfmodel.cli.main import cli

KEYS = sorted(
    "mi100 mi210 mi250 mi250x mi300a mi300x mi308x mi325x mi350x mi355x "
    "rx6900xt w6800 rx7900xtx w7900 rx9070xt r9700 a100 h100 h200 radeon8050s radeon860m krackan2".split()
)
SCALE = {"TFLOP/s": 1e12, "TOP/s": 1e12, "TB/s": 1e12, "GB/s": 1e9}


def _vendor_figures():
    out = []
    for f in sorted(VENDOR_PEAKS.glob("*.yaml")):
        for i, fig in enumerate(yaml.safe_load(f.read_text())):
            sparse = " sparse" if fig.get("sparse") else ""
            out.append(pytest.param(f.stem, fig, id=f"{f.stem}-{fig['what']}{sparse}-{i}"))
    return out


def test_shipped_keys_are_exactly_the_22():
    assert arch_keys() == KEYS


@pytest.mark.parametrize("key", KEYS)
def test_archspec_loads(key):
    a = load_arch(key)
    assert isinstance(a, Arch)
    assert a.key == key
    assert a.cus > 0 and a.clock_hz > 1e8
    assert a.memory_level in a.levels
    assert a.bandwidth(a.memory_level) > 0
    assert a.capacity(a.memory_level) > 0
    assert a.wave_size in (32, 64)
    assert a.pipes(), "no compute pipes"
    for c in a.roofs(sparse=True):
        assert c.theoretical > 0, c
        if c.achievable is not None:
            assert c.achievable > 0, c


@pytest.mark.parametrize("key", KEYS)
def test_every_quantity_has_a_declared_source(key):
    a = load_arch(key)
    seen = []

    def visit(node, path):
        if isinstance(node, SpecValue):
            seen.append(path)
            assert node.source, f"{key}: {path} has no source"
            assert node.source in a.sources, f"{key}: {path} cites undeclared source {node.source!r}"
            assert a.sources[node.source].strip(), f"{key}: source {node.source} has no text"
            for i, alt in enumerate(node.extra.get("alternatives", [])):
                visit(alt, f"{path}.alternatives[{i}]")
        elif isinstance(node, dict):
            for k, v in node.items():
                visit(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                visit(v, f"{path}[{i}]")

    visit(a.tree, key)
    assert len(seen) > 20


def test_every_archspec_has_vendor_figures():
    assert sorted(p.stem for p in VENDOR_PEAKS.glob("*.yaml")) == KEYS


@pytest.mark.parametrize(("key", "fig"), _vendor_figures())
def test_derived_peak_matches_vendor_figure(key, fig):
    a = load_arch(key)
    what = fig["what"]
    expected = fig["value"] * SCALE[fig["unit"]]
    if ":" in what:
        pipe, dtype = what.split(":")
        got = a.peak_flops(pipe, dtype, sparse=bool(fig.get("sparse")))
    else:
        got = a.bandwidth(what)
    assert got == pytest.approx(expected, rel=0.01), (
        f"{key} {what}: derived {got:.4g}, vendor {expected:.4g} ({fig['ref']})"
    )


def test_mi300x_spot_checks():
    a = load_arch("mi300x")
    assert a.cus == 304
    assert a.peak_flops("mfma", "fp16") / 1e12 == pytest.approx(1307.4, rel=1e-3)
    assert a.peak_flops("mfma", "bf16") / 1e12 == pytest.approx(1307.4, rel=1e-3)
    assert a.peak_flops("mfma", "fp8") / 1e12 == pytest.approx(2614.9, rel=1e-3)
    assert a.peak_flops("valu", "fp64") / 1e12 == pytest.approx(81.7, rel=1e-3)
    assert a.bandwidth("hbm") / 1e12 == pytest.approx(5.3, rel=0.01)  # 5.3248: vendor rounds


def test_load_by_key_is_case_insensitive_and_cached():
    assert load_arch("MI300X") is load_arch("mi300x")
    a = load_arch("mi300x")
    assert load_arch(a) is a


def test_load_by_path(tmp_path):
    p = tmp_path / "copy.yaml"
    p.write_text((archspec_dir() / "mi300x.yaml").read_text())
    a = load_arch(p)
    assert a.key == "copy"
    assert a.peak_flops("mfma", "bf16") == load_arch("mi300x").peak_flops("mfma", "bf16")


def test_load_all():
    assert [a.key for a in load_all()] == KEYS


def test_template_loads_as_a_valid_spec(tmp_path):
    r = CliRunner().invoke(cli, ["arch", "template"])
    assert r.exit_code == 0, r.output
    assert r.output.lstrip().startswith("#")
    p = tmp_path / "my-gpu.yaml"
    p.write_text(r.output)
    a = load_arch(p)
    assert a.name == "My GPU (edit me)"
    assert a.key == "my-gpu"
    assert a.peak_flops("mfma", "bf16") > 0
    r2 = CliRunner().invoke(cli, ["arch", "show", str(p)])
    assert r2.exit_code == 0, r2.output
    assert "My GPU (edit me)" in r2.output
