"""`perfmodel validate` and `perfmodel roofline --measured` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from data_paths import MIXBENCH_MI200, VCOPY_MI200

CONTRACT = (
    "kernel",
    "dispatch",
    "time_us",
    "flops",
    "flops_by",
    "bytes",
    "bytes_read",
    "bytes_write",
    "measured_bound",
)
PREDICTED = ("predicted_time_us", "bound", "predicted_flops", "predicted_bytes")


def test_jsonl_contract_per_dispatch(cli):
    r = cli("validate", MIXBENCH_MI200, "--per-dispatch", "--format", "jsonl")
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.output.splitlines()]
    assert len(rows) == 167
    assert [x["dispatch"] for x in rows] == list(range(167))
    for x in rows:
        assert all(k in x for k in CONTRACT)
        assert isinstance(x["flops_by"], dict) and isinstance(x["bytes"], dict)
        assert all(":" in k for k in x["flops_by"])
        assert x["bytes"]["hbm"] > 0
        if "benchmark_func" in x["kernel"]:
            assert all(k in x for k in PREDICTED)
    fill = rows[0]
    assert "fillBuffer" in fill["kernel"] and "predicted_time_us" not in fill


def test_jsonl_contract_per_kernel(cli):
    r = cli("validate", VCOPY_MI200, "--format", "jsonl")
    assert r.exit_code == 0, r.output
    (x,) = [json.loads(x) for x in r.output.splitlines()]
    assert all(k in x for k in CONTRACT + PREDICTED)
    assert x["count"] == 3 and x["bound"] == "memory:hbm"
    assert x["bytes"]["hbm"] == x["bytes_read"]["hbm"] + x["bytes_write"]["hbm"]


def test_table_and_report_md(cli, tmp_path):
    r = cli("validate", VCOPY_MI200)
    assert r.exit_code == 0 and "vecCopy" in r.output and "memory:hbm" in r.output
    out = tmp_path / "report.md"
    r = cli("validate", MIXBENCH_MI200, "--top", "5", "-o", str(out))
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.startswith("**perfmodel validate") and text.count("benchmark_func") == 5
    for fmt in ("json", "csv"):
        r = cli("validate", VCOPY_MI200, "--format", fmt)
        assert r.exit_code == 0 and "vecCopy" in r.output


def test_roofline_measured_png_and_points_csv(cli, tmp_path):
    png, csv = tmp_path / "r.png", tmp_path / "pts.csv"
    r = cli(
        "roofline",
        "--measured",
        MIXBENCH_MI200,
        "--top",
        "4",
        "--kernel",
        "benchmark_func",
        "-o",
        str(png),
        "--points-csv",
        str(csv),
    )
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = csv.read_text().splitlines()
    assert lines[0] == "kernel,family,kind,level,binding,flops,bytes,ai,tflops,gbs,time_us"
    assert any(",measured,hbm," in x for x in lines) and any(",predicted,hbm," in x for x in lines)
    r = cli("roofline", "--measured", VCOPY_MI200, "--per-kernel", "-o", str(tmp_path / "k.png"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "k-1.png").is_file()


def _bad(cli, args, out: Path):
    r = cli(*args)
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert not out.exists()


def test_bad_input(cli, tmp_path):
    out = tmp_path / "out.md"
    _bad(cli, ["validate", str(tmp_path / "missing"), "-o", str(out)], out)
    empty = tmp_path / "empty"
    empty.mkdir()
    _bad(cli, ["validate", str(empty), "-o", str(out)], out)
    man = tmp_path / "m.yaml"
    man.write_text("kernels:\n  - match: vecCopy\n    case: {kernel: stream, op: copy, size: 3}\n")
    _bad(cli, ["validate", VCOPY_MI200, "--cases", str(man), "-o", str(out)], out)
    _bad(
        cli,
        ["roofline", "--measured", str(tmp_path / "missing"), "-o", str(tmp_path / "r.png")],
        tmp_path / "r.png",
    )


def test_a_workload_predicted_on_another_gpu_says_so(cli):
    """--arch naming a GPU other than the one sysinfo.csv records (gfx or CU count) is allowed (a
    what-if), but the errors then compare two GPUs, and the report says so; the recorded GPU
    itself adds no such note."""
    other = cli("validate", MIXBENCH_MI200, "--arch", "mi300x", "--top", "1")
    assert other.exit_code == 0, other.output
    assert "recorded on mi200 (gfx90a, 104 CUs), predicted on mi300x" in other.output
    same = cli("validate", MIXBENCH_MI200, "--arch", "mi210", "--top", "1")
    assert same.exit_code == 0 and "recorded on" not in same.output
