"""`perfmodel doctor`: format, tool, gfx, counts, counters and what is missing, on real files."""

from __future__ import annotations

import json

from click.testing import CliRunner

from data_paths import GFX1153_LONG, MIXBENCH_MI200, VCOPY_MI300X_LONG, VCOPY_MI350
from perfmodel.cli.main import cli


def _doc(path, *extra):
    r = CliRunner().invoke(cli, ["doctor", str(path), "--format", "json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_rocprof_compute_workload():
    r = _doc(VCOPY_MI350)
    assert r["format"] == "rocprof-compute workload"
    assert r["tool"].startswith("rocprof-compute")
    assert r["tool_version"] == "3" and r["rocm_version"].startswith("6.5")
    assert r["gfx"] == "gfx950"
    assert r["dispatches"] == 3 and r["kernels"] == 1
    assert "SQ_WAVES" in r["counters"]
    assert "read:hbm" in r["computable"]


def test_lone_long_csv_without_sysinfo_says_gfx_unknown():
    r = _doc(GFX1153_LONG)
    assert r["format"] == "counter csv (long)"
    assert r["gfx"] is None
    assert r["dispatches"] == 3
    assert any("--arch" in lack for lack in r["lacks"])


def test_missing_formula_inputs_are_named():
    # the MI300X rocpd-mode file beside its sysinfo: gfx942, many counters; every quantity the
    # formulas cannot give is listed with the counters it lacks
    r = _doc(VCOPY_MI300X_LONG)
    assert r["gfx"] == "gfx942"
    for key, missing in r["not_computable"].items():
        assert missing, key
        assert not set(missing) <= set(r["counters"])
    assert set(r["computable"]).isdisjoint(r["not_computable"])


def test_many_kernels_and_table_output():
    r = _doc(MIXBENCH_MI200)
    assert r["gfx"] == "gfx90a" and r["dispatches"] == r["kernels"] > 100
    t = CliRunner().invoke(cli, ["doctor", str(MIXBENCH_MI200)])
    assert t.exit_code == 0 and "format      rocprof-compute workload" in t.output and "gfx90a" in t.output


def test_bad_path_is_one_error_line(tmp_path):
    r = CliRunner().invoke(cli, ["doctor", str(tmp_path / "nope")])
    assert r.exit_code == 2
    assert r.output.startswith("error:") and len(r.output.strip().splitlines()) == 1
