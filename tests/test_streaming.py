"""Kernel traces are streamed: per-kernel validation aggregates while reading, keeps nothing per
dispatch, and gives the same sums as adding the dispatches up by hand."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from data_paths import VCOPY_MI300X_LONG
from perfmodel.cli.main import cli
from perfmodel.readers import read_workload
from perfmodel.readers.rocprof_v3 import TraceDispatches


def _trace(tmp_path, n: int):
    with open(VCOPY_MI300X_LONG, newline="") as fh:
        one = [r for r in csv.DictReader(fh) if r["Counter_Name"] == "SQ_WAVES"]
    f = tmp_path / "7_kernel_trace.csv"
    durations = []
    with open(f, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Kind", "Agent_Id", "Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp",
                    "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"])  # fmt: skip
        for i in range(n):
            r = one[i % len(one)]
            shift = i * 10**7
            b, e = int(r["Start_Timestamp"]) + shift, int(r["End_Timestamp"]) + shift
            durations.append(e - b)
            w.writerow(["KERNEL_DISPATCH", "Agent 2", i, r["Kernel_Name"], b, e, r["Grid_Size"], 1, 1])
    return f, durations


def test_trace_only_directory_is_read_lazily(tmp_path):
    _, durations = _trace(tmp_path, 50)
    wl = read_workload(tmp_path)
    assert isinstance(wl.dispatches, TraceDispatches)
    assert len(wl.dispatches) == 50 == len(list(wl.dispatches))  # re-iterable: read again each pass
    assert [d.duration_ns for d in wl.dispatches] == durations


def test_streamed_per_kernel_row_sums_every_dispatch(tmp_path):
    _, durations = _trace(tmp_path, 250)
    res = CliRunner().invoke(cli, ["validate", str(tmp_path), "--arch", "mi300x", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == 1
    assert rows[0]["count"] == 250
    assert rows[0]["time_us"] == pytest.approx(sum(durations) / 1e3)
    per = CliRunner().invoke(
        cli, ["validate", str(tmp_path), "--arch", "mi300x", "--per-dispatch", "--format", "json"]
    )
    assert per.exit_code == 0, per.output
    assert len(json.loads(per.output)) == 250


def test_bad_row_deep_in_a_streamed_trace_is_one_error_line(tmp_path):
    f, _ = _trace(tmp_path, 30)
    lines = f.read_text().splitlines()
    lines[25] = lines[25].replace("KERNEL_DISPATCH,Agent 2,24,", "KERNEL_DISPATCH,Agent 2,notanumber,")
    f.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(cli, ["validate", str(tmp_path), "--arch", "mi300x"])
    assert res.exit_code == 2
    out = res.output.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("error:") and "Dispatch_ID" in out[0] and str(f) in out[0] and "line 26" in out[0]
