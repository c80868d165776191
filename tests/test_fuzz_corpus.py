"""The fuzz corpus (tests/data/fuzz_corpus): every input that once crashed, hung, printed a
traceback or an impossible value without a flag (issue 13, issue 10 §1). Each must now end in
exit 2 with one `error:` line naming the file, or exit 0 with the flag that says what is wrong."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from data_paths import DATA, ROCPROF, VCOPY_MI200
from perfmodel.arch import archspec_dir

CORPUS = DATA / "fuzz_corpus"
SPEC = archspec_dir() / "mi300x.yaml"


def one_error(r, *needles: str) -> str:
    """The run ended in exit 2 with exactly one `error:` line on stderr holding ``needles``."""
    assert r.exit_code == 2, f"exit {r.exit_code}: {r.output!r} {r.exception!r}"
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert len(lines[0]) < 600, lines[0]
    for n in needles:
        assert n in lines[0], f"{n!r} not in {lines[0]!r}"
    return lines[0]


# --- YAML: bombs, encodings, tags, repeated keys, through every YAML reader -------------------
YAML_FILES = sorted((CORPUS / "yaml").iterdir())


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("how", ["archspec", "cases", "manifest"])
def test_yaml_corpus(cli, path, how):
    args = {
        "archspec": ["arch", "show", path],
        "cases": ["predict", "--cases", path],
        "manifest": ["validate", VCOPY_MI200, "--cases", path],
    }[how]
    one_error(cli(*args), str(path))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("name: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than"),  # segfault in the C loader
        ("name: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n", "nested more than"),  # RecursionError
        ("name:\n" + "".join(" " * i + "- \n" for i in range(3000)), "nested more than"),
    ],
    ids=["flow-50000", "mapping-5000", "block-3000"],
)
def test_deep_yaml_in_a_child_process(tmp_path, text, needle):
    """A segfault would kill pytest itself: run the CLI in a child process."""
    p = tmp_path / "deep.yaml"
    p.write_text(text)
    r = subprocess.run(
        [sys.executable, "-m", "perfmodel.cli", "arch", "show", str(p)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2, (r.returncode, r.stderr[-500:])
    assert r.stderr.count("\n") == 1 and str(p) in r.stderr
    # our own depth check, or PyYAML >= 6.0.3's (which may refuse first)
    assert needle in r.stderr or "exceeded maximum nesting depth" in r.stderr, r.stderr


def test_billion_laughs_refused_fast(cli):
    import time

    t = time.perf_counter()
    one_error(cli("arch", "show", CORPUS / "yaml" / "billion_laughs.yaml"), "expands to more than")
    assert time.perf_counter() - t < 10


def test_yaml_larger_than_the_limit(cli, tmp_path, monkeypatch):
    from perfmodel import yamlio

    monkeypatch.setattr(yamlio, "MAX_BYTES", 1000)
    p = tmp_path / "big.yaml"
    p.write_text("name: [" + ",".join(["1"] * 1000) + "]\n")
    one_error(cli("arch", "show", p), "larger than the 1000 allowed")


# --- archspec numbers out of their plausible range -------------------------------------------
def _apply(spec: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    node = spec
    for k in parents:
        node = node[k]
    if value is None:
        del node[last]
    else:
        node[last] = value


PATCHES = yaml.safe_load((CORPUS / "archspec_patches.yaml").read_text())


@pytest.mark.parametrize("patch", PATCHES, ids=[p["id"] for p in PATCHES])
@pytest.mark.parametrize("command", ["show", "predict"])
def test_archspec_patch(cli, tmp_path, patch, command):
    spec = yaml.safe_load(SPEC.read_text())
    for k, v in patch["set"].items():
        _apply(spec, k, v)
    p = tmp_path / "gpu.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False))
    args = ["arch", "show", p] if command == "show" else ["predict", "gemm", "m=512", "n=512", "k=512", "--arch", p]
    one_error(cli(*args), str(p), patch["key"], patch["text"])


def test_template_has_no_measured_figures(cli):
    r = cli("arch", "template")
    assert r.exit_code == 0
    spec = yaml.safe_load(r.stdout)
    assert "measured" not in spec


def test_template_loads_and_predicts_from_first_principles(cli, tmp_path):
    p = tmp_path / "mine.yaml"
    p.write_text(cli("arch", "template").stdout)
    r = cli("predict", "gemm", "m=8192", "n=8192", "k=8192", "--arch", p, "--format", "json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)[0]
    assert row["time_us"] > 0 and row["headroom"] <= 1.0 + 1e-9


# --- case files and key=value words ----------------------------------------------------------
CASE_FILES = sorted((CORPUS / "cases").iterdir())


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: p.name)
def test_case_corpus(cli, path):
    one_error(cli("predict", "--cases", path, "--format", "json"), str(path))


@pytest.mark.parametrize(
    ("words", "needle"),
    [
        (["softmax", "rows=1", "cols=1e308"], "cols: expected at most"),
        (["gemm", "m=1e200", "n=1", "k=1"], "m: expected at most"),
        (["gemm", "m=" + "9" * 400, "n=1", "k=1"], "m: expected"),
        (["gemm", "m=4096", "m=8192", "n=1", "k=1"], "m: given twice"),
    ],
)
def test_kv_corpus(cli, words, needle):
    one_error(cli("predict", *words), needle)


def test_largest_allowed_sizes_give_finite_times(cli):
    big = str(2**53)
    r = cli("predict", "softmax", "rows=1", f"cols={big}", "--format", "json")
    assert r.exit_code == 0 and not r.stderr.strip(), r.output
    row = json.loads(r.stdout)[0]
    assert 0 < row["time_us"] < float("inf") and row["tflops"] == row["tflops"]


# --- manifests --------------------------------------------------------------------------------
MANIFESTS = sorted((CORPUS / "manifests").iterdir())


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifest_corpus(cli, path):
    one_error(cli("validate", VCOPY_MI200, "--cases", path), str(path))


def test_kernel_filter_huge_repeat(cli):
    one_error(cli("validate", VCOPY_MI200, "--kernel", "a{1000000000}"), "--kernel", "repeat count")


# --- workloads: cells mutated in a copy of the real files ------------------------------------
WL_PATCHES = yaml.safe_load((CORPUS / "workload_patches.yaml").read_text())


def _patch_csv(path: Path, row, columns, value=None, scale=None) -> None:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    cols = [columns] if isinstance(columns, str) else columns
    idx = [rows[0].index(c) for c in cols]
    targets = range(1, len(rows)) if row == "all" else [row]
    for r in targets:
        for j in idx:
            rows[r][j] = value if scale is None else repr(float(rows[r][j]) * scale)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue())


@pytest.mark.parametrize("patch", WL_PATCHES, ids=[p["id"] for p in WL_PATCHES])
def test_workload_patch(cli, tmp_path, patch):
    d = tmp_path / "wl"
    shutil.copytree(ROCPROF / patch["base"], d)
    _patch_csv(d / patch["file"], patch["row"], patch["column"], patch.get("value"), patch.get("scale"))
    r = cli("validate", d, "--format", "json")
    if patch["exit"] == 2:
        one_error(r, str(d / patch["file"]), patch["text"])
        return
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert all(any(f.startswith(patch["flag"]) for f in row["flags"]) for row in rows), [x["flags"] for x in rows]
    if "bound" in patch:
        assert {row["measured_bound"] for row in rows} == {patch["bound"]}
    for fmt in ("table", "md"):  # every format shows the flags
        text = cli("validate", d, "--format", fmt).stdout
        assert f"flag: vecCopy: {patch['flag']}" in text, text


def test_clock_from_grbm_zero_is_not_zero_hz(cli, tmp_path):
    d = tmp_path / "wl"
    shutil.copytree(VCOPY_MI200, d)
    _patch_csv(d / "pmc_perf.csv", "all", "GRBM_GUI_ACTIVE", "0")
    rows = json.loads(cli("validate", d, "--format", "json").stdout)
    assert all(r["clock_hz"] is None for r in rows)


def test_directory_named_like_a_data_file(cli, tmp_path):
    d = tmp_path / "wl"
    shutil.copytree(ROCPROF / "rocm-systems/tests_workloads_2025/vcopy/MI350", d)
    (d / "pmc_perf_0.csv").unlink()
    (d / "pmc_perf_0.csv").mkdir()
    one_error(cli("validate", d), "pmc_perf_0.csv", "is a directory")


def test_agent_info_non_numeric_xcc(cli, tmp_path):
    from test_readers import test_rocprofv3_csv_directory

    test_rocprofv3_csv_directory(tmp_path)
    ai = tmp_path / "123_agent_info.csv"
    ai.write_text(ai.read_text().replace(",8,304,", ",eight,304,"))
    one_error(cli("validate", tmp_path), "123_agent_info.csv", "column Num_Xcc")


def test_two_rocprofv3_runs_on_different_gpus(cli, tmp_path):
    from test_readers import test_rocprofv3_csv_directory

    test_rocprofv3_csv_directory(tmp_path)
    (tmp_path / "456_agent_info.csv").write_text(
        "Node_Id,Agent_Type,Wave_Front_Size,Num_Xcc,Cu_Count,Name\n1,GPU,64,1,104,gfx90a\n"
    )
    one_error(cli("validate", tmp_path), "different GPUs", "gfx90a", "gfx942")


@pytest.mark.parametrize(
    ("table", "column", "value", "needle"),
    [
        ("rocpd_kernel_dispatch", "start", "abc", "start = 'abc'"),
        ("rocpd_kernel_dispatch", '"end"', float("inf"), "end = inf"),
        ("rocpd_kernel_dispatch", "dispatch_id", "x", "dispatch_id = 'x'"),
        ("rocpd_kernel_dispatch", "group_segment_size", float("-inf"), "group_segment_size = -inf"),
        ("rocpd_kernel_dispatch", "group_segment_size", "big", "group_segment_size = 'big'"),
        ("rocpd_info_kernel_symbol", "kernel_name", b"\xff\x00", "kernel_name of kernel 1: expected text"),
        ("rocpd_pmc_event", "value", float("inf"), "expected a finite number"),
    ],
)
def test_rocpd_bad_cells(cli, tmp_path, table, column, value, needle):
    import sqlite3

    from test_readers_rocpd_sqlite import UUID, build_db

    p = tmp_path / "run.db"
    build_db(p)
    con = sqlite3.connect(p)
    con.execute(f"UPDATE `{table}{UUID}` SET {column} = ?", (value,))
    con.commit()
    con.close()
    one_error(cli("validate", p), str(p), needle)


def test_rocpd_corrupted_sqlite_master(cli, tmp_path):
    """A corrupted schema text raises UnicodeDecodeError, which is no sqlite3.DatabaseError."""
    import sqlite3

    from test_readers_rocpd_sqlite import build_db

    p = tmp_path / "run.db"
    build_db(p)
    con = sqlite3.connect(p)
    con.execute("PRAGMA writable_schema=ON")
    con.execute("UPDATE sqlite_master SET name = CAST(X'FFFE41' AS TEXT) WHERE name = 'rocpd_event'")
    con.commit()
    con.close()
    r = cli("validate", p)
    assert r.exit_code == 2, r.output
    one_error(r, str(p))


def test_rocpd_and_csv_pick_the_same_arch(cli, tmp_path):
    """The same MI300X data: the SQLite reader reads the agent's product name like the CSV reader."""
    from test_readers_rocpd_sqlite import build_db

    build_db(tmp_path / "run.db")
    db = json.loads(cli("validate", tmp_path / "run.db", "--format", "json").stdout)
    long_csv = json.loads(
        cli("validate", ROCPROF / "rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd", "--format", "json").stdout
    )
    assert {r["arch"] for r in db} == {r["arch"] for r in long_csv} == {"mi300x"}


# --- validate options ---------------------------------------------------------------------------
@pytest.mark.parametrize("sclk", ["-5", "nan", "0", "inf"])
def test_sclk_out_of_range(cli, sclk):
    one_error(cli("validate", VCOPY_MI200, "--sclk", sclk), "--sclk")


def test_validate_writes_both_o_and_O(cli, tmp_path):
    a, b = tmp_path / "a.md", tmp_path / "b.json"
    r = cli("validate", VCOPY_MI200, "-o", a, "-O", b)
    assert r.exit_code == 0, r.output
    assert a.read_text().startswith("**perfmodel validate")
    assert json.loads(b.read_text())[0]["kernel"].startswith("vecCopy")


# --- outputs ------------------------------------------------------------------------------------
def test_usage_error_is_one_line(cli):
    r = cli("predict", "gemm", "--bogus")
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: No such option"), r.stderr
    r = cli("no-such-command")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("opt", ["-o", "-O"])
def test_output_into_missing_folder_before_any_work(cli, tmp_path, opt):
    plot, data = tmp_path / "g.png", tmp_path / "missing" / "x.json"
    if opt == "-o":
        plot, data = tmp_path / "missing" / "g.png", tmp_path / "x.json"
    r = cli("predict", "gemm", "m=64", "n=64", "k=64", "-o", plot, "-O", data)
    one_error(r, "does not exist")
    assert not plot.exists() and not data.exists()


def test_output_is_a_directory(cli, tmp_path):
    one_error(cli("archs", "-O", tmp_path), "is a directory")


def test_output_mode_follows_umask(cli, tmp_path):
    old = os.umask(0o022)
    try:
        p = tmp_path / "x.json"
        assert cli("archs", "--format", "json", "-O", p).exit_code == 0
        assert p.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old)


def test_sigterm_during_write_leaves_no_temp_file(tmp_path):
    """SIGTERM while a large file is written: the temp file is removed, exit status 143."""
    code = (
        "import os, signal, sys\n"
        "from perfmodel import output\n"
        "class Slow(str):\n"
        "    def encode(self):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        return b'x'\n"
        f"output.write_atomic({str(tmp_path / 'out.json')!r}, Slow('data'))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 128 + signal.SIGTERM, r.stderr
    assert list(tmp_path.iterdir()) == []


# --- issue 10 §1: missing is missing, counter-pass timing, impossible predictions ----------------
def test_no_flop_counters_bound_unknown_not_zero(cli):
    """MI100 (gfx908) has no FLOP counters: no FLOP total, no intensity, bound `unknown`."""
    d = ROCPROF / "rocprofiler-compute/tests_workloads_2024/vcopy/MI100"
    rows = json.loads(cli("validate", d, "--format", "json").stdout)
    assert rows and all(r["flops"] is None and r["measured_bound"] == "unknown" for r in rows)
    assert all(all(v is None for v in r["ai"].values()) for r in rows)
    assert all(any("no FLOP counters for gfx908" in n for n in r["notes"]) for r in rows)
    table = cli("validate", d).stdout
    assert "unknown" in table


def test_counter_pass_timing_is_said(cli):
    d = ROCPROF / "rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd"
    assert "note: no counter-free timing" in cli("validate", d).stdout
    assert "no counter-free timing" not in cli("validate", VCOPY_MI200).stdout  # has timestamps.csv


def test_shape_larger_than_memory_warned(cli):
    r = cli("predict", "gemm", "m=1000000", "n=1000000", "k=16", "--format", "json")
    row = json.loads(r.stdout)[0]
    assert "shape too large: writes 2000 GB, more than the 192 GB of hbm" in row["notes"]
    assert "warning: gemm m=1000000" in cli("predict", "gemm", "m=1000000", "n=1000000", "k=16").stdout


def test_shipped_yaml_within_bounds():
    """Shipped YAML (archspecs, counter formulas, model constants) skips the pre-scan on every
    start; it must pass it, so a bad edit is caught here."""
    import perfmodel
    from perfmodel.yamlio import check_bounds

    pkg = Path(perfmodel.__file__).parent
    files = [*archspec_dir().glob("*.yaml"), *pkg.rglob("*.yaml")]
    assert len(files) > 20
    for f in files:
        check_bounds(f.read_text(), str(f))


def test_cus_override_bounded(cli):
    one_error(cli("validate", VCOPY_MI200, "--cus", "9" * 30), "--cus")
