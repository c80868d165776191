"""Bad archspec input through the CLI: exit status 2, one line naming the file and key, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from perfmodel.arch import archspec_dir
from perfmodel.cli.main import cli


def _spec() -> dict:
    return yaml.safe_load((archspec_dir() / "mi300x.yaml").read_text())


def _run(args: list[str]):
    r = CliRunner().invoke(cli, args)
    return r, r.output  # stdout and stderr as a terminal shows them


def _check(r, text: str, *needles: str) -> str:
    assert r.exit_code == 2, f"exit {r.exit_code}: {text!r} {r.exception!r}"
    assert "Traceback" not in text
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("error: "), line
    assert line in r.stderr and not r.stdout.strip(), "the error belongs on stderr"
    for n in needles:
        assert n in line, f"{n!r} not in {line!r}"
    return line


def _set(d: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    for p in parents:
        d = d[p]
    d[last] = value


def _del(d: dict, path: str) -> None:
    *parents, last = path.split(".")
    for p in parents:
        d = d[p]
    del d[last]


def _muts():
    """(id, mutate(spec), expected key in the message, other expected text)."""

    def unknown_top(s):
        s["memroy"] = s.pop("memory")

    def unknown_nested(s):
        s["memory"]["hbm"]["latncy"] = {"value": 1, "unit": "us", "source": "S1"}

    def missing_required(s):
        del s["compute"]["cus"]

    def wrong_type(s):
        s["compute"]["cus"]["value"] = "three hundred"

    def wrong_unit(s):
        s["memory"]["hbm"]["capacity"]["unit"] = "GB/s"

    def unknown_unit(s):
        s["compute"]["clock"]["peak"]["unit"] = "MHzz"

    def negative(s):
        s["memory"]["hbm"]["bandwidth"]["value"] = -5324.8

    def unknown_source(s):
        s["pipes"]["mfma"]["dense"]["bf16"]["source"] = "S99"

    def bad_per(s):
        s["memory"]["lds"]["capacity"]["per"] = "cuu"

    def per_channel_without_channels(s):
        del s["memory"]["l2"]["channels"]

    def unknown_dtype(s):
        s["pipes"]["mfma"]["dense"]["bf61"] = {"value": 2048, "unit": "flop/clk/cu", "source": "S2"}

    def unknown_pipe(s):
        s["pipes"]["mfmaa"] = s["pipes"].pop("mfma")

    def unknown_level(s):
        s["memory"]["hmb"] = s["memory"].pop("hbm")

    def missing_source(s):
        del s["compute"]["clock"]["peak"]["source"]

    def missing_unit(s):
        del s["compute"]["clock"]["peak"]["unit"]

    def unit_on_count(s):
        s["compute"]["cus"]["unit"] = "MHz"

    def bad_kind(s):
        s["kind"] = "instict"

    def bad_schema(s):
        s["schema"] = 2

    def bad_tag(s):
        s["compute"]["cus"]["tag"] = "X"

    def not_a_mapping(s):
        s["compute"]["clock"]["peak"] = 2100

    def latency_zero(s):
        s["memory"]["hbm"]["latency"] = {"value": 0, "unit": "ns", "source": "S1"}

    def latency_too_long(s):
        s["memory"]["l2"]["latency"] = {"value": 5, "unit": "ms", "source": "S1"}

    def latency_not_a_time(s):
        s["memory"]["l1"]["latency"] = {"value": 120, "unit": "MHz", "source": "S1"}

    def latency_cycles(s):
        s["memory"]["l1"]["latency"] = {"value": 120, "unit": "cycles", "source": "S1"}

    def latency_unknown_source(s):
        s["memory"]["mall"]["latency"] = {"value": 200, "unit": "ns", "source": "S98"}

    def nan_value(s):
        s["launch"]["overhead"]["value"] = float("nan")

    def bad_benchmark_shape(s):
        s["measured"]["compute"]["mfma"]["fp8"]["shape"] = {"m": 8192, "n": 8192, "k": 0}

    return [
        ("unknown-top-level-key", unknown_top, "memroy", "did you mean 'memory'"),
        ("unknown-nested-key", unknown_nested, "memory.hbm.latncy", "did you mean 'latency'"),
        ("missing-required-field", missing_required, "compute.cus", "missing required field"),
        ("wrong-type", wrong_type, "compute.cus.value", "expected a number"),
        ("wrong-unit", wrong_unit, "memory.hbm.capacity.unit", "GB/s"),
        ("unknown-unit", unknown_unit, "compute.clock.peak.unit", "did you mean 'MHz'"),
        ("negative-number", negative, "memory.hbm.bandwidth.value", "expected a number between"),
        ("unknown-source-id", unknown_source, "pipes.mfma.dense.bf16.source", "S99"),
        ("unknown-per-scope", bad_per, "memory.lds.capacity.per", "did you mean 'cu'"),
        ("per-channel-without-channels", per_channel_without_channels, "memory.l2.channels", "channels"),
        ("unknown-dtype", unknown_dtype, "pipes.mfma.dense.bf61", "did you mean 'bf16'"),
        ("unknown-pipe", unknown_pipe, "pipes.mfmaa", "did you mean 'mfma'"),
        ("unknown-level", unknown_level, "memory.hmb", "did you mean 'hbm'"),
        ("missing-source", missing_source, "compute.clock.peak.source", "missing required field"),
        ("missing-unit", missing_unit, "compute.clock.peak.unit", "missing unit"),
        ("unit-on-a-count", unit_on_count, "compute.cus.unit", "expected no unit"),
        ("bad-kind", bad_kind, "kind", "did you mean 'instinct'"),
        ("unsupported-schema", bad_schema, "schema", "expected 1"),
        ("bad-tag", bad_tag, "compute.cus.tag", "'X'"),
        ("bare-number-for-quantity", not_a_mapping, "compute.clock.peak", "expected a quantity"),
        ("nan-value", nan_value, "launch.overhead.value", "expected a finite number"),
        ("bad-benchmark-shape", bad_benchmark_shape, "measured.compute.mfma.fp8.shape.k", "expected a number between"),
        ("latency-zero", latency_zero, "memory.hbm.latency.value", "expected a number between 1 and 10000"),
        ("latency-too-long", latency_too_long, "memory.l2.latency.value", "expected a number between"),
        ("latency-not-a-time", latency_not_a_time, "memory.l1.latency.unit", "expected a time unit"),
        ("latency-in-cycles", latency_cycles, "memory.l1.latency.unit", "expected a time unit"),
        ("latency-unknown-source", latency_unknown_source, "memory.mall.latency.source", "S98"),
    ]


@pytest.mark.parametrize(("mutate", "key", "text"), [pytest.param(m, k, t, id=i) for i, m, k, t in _muts()])
def test_bad_spec_field(tmp_path, mutate, key, text):
    spec = _spec()
    mutate(spec)
    p = tmp_path / "bad-gpu.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False))
    r, out = _run(["arch", "show", str(p)])
    line = _check(r, out, str(p), key, text)
    assert f"{p}: {key}: " in line or f"{p}: {key} " in line or key in line


def test_malformed_yaml(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("schema: 1\nname: [unclosed\nvendor: AMD\n")
    r, out = _run(["arch", "show", str(p)])
    _check(r, out, str(p), "malformed YAML", "line ")


def test_tab_indented_yaml(tmp_path):
    p = tmp_path / "tabs.yaml"
    p.write_text("schema: 1\ncompute:\n\tcus: 3\n")
    r, out = _run(["arch", "show", str(p)])
    _check(r, out, str(p), "malformed YAML")


def test_empty_file(tmp_path):
    p = tmp_path / "empty.yaml"
    p.write_text("")
    r, out = _run(["arch", "show", str(p)])
    _check(r, out, str(p), "empty")


def test_top_level_not_a_mapping(tmp_path):
    p = tmp_path / "list.yaml"
    p.write_text("- 1\n- 2\n")
    r, out = _run(["arch", "show", str(p)])
    _check(r, out, str(p), "expected a mapping")


def test_unknown_arch_key_did_you_mean():
    r, out = _run(["arch", "show", "mi300"])
    _check(r, out, "arch", "unknown arch 'mi300'", "did you mean 'mi300x'")


def test_unknown_arch_key_in_roofline():
    r, out = _run(["roofline", "--arch", "mi25x"])
    _check(r, out, "unknown arch 'mi25x'", "did you mean")


def test_nonexistent_path(tmp_path):
    p = tmp_path / "nope" / "gpu.yaml"
    r, out = _run(["arch", "show", str(p)])
    _check(r, out, str(p), "no such archspec file")


def test_path_is_a_directory(tmp_path):
    d = tmp_path / "dir.yaml"
    d.mkdir()
    r, out = _run(["arch", "show", str(d)])
    _check(r, out, str(d))


def test_not_utf8(tmp_path):
    p = tmp_path / "binary.yaml"
    p.write_bytes(b"\xff\xfe\x00bad")
    r, out = _run(["arch", "show", str(p)])
    _check(r, out, str(p), "UTF-8")


def test_good_copy_still_loads(tmp_path):
    """The mutation harness itself: an unmutated round-trip is valid."""
    p = tmp_path / "good.yaml"
    p.write_text(yaml.safe_dump(_spec(), sort_keys=False))
    r, out = _run(["arch", "show", str(p)])
    assert r.exit_code == 0, out
    assert Path(p).name in out or "good" in out
