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
    assert (
        len(out) == 1
        and out[0].startswith("error:")
        and "Dispatch_ID" in out[0]
        and str(f) in out[0]
        and "line 26" in out[0]
    )


def _counter_file(tmp_path, order):
    """A rocprofv3 counter collection of three real MI300X dispatches, rows in ``order``."""
    with open(VCOPY_MI300X_LONG, newline="") as fh:
        src = [
            r
            for r in csv.DictReader(fh)
            if r["Counter_Name"] in ("SQ_WAVES", "GRBM_GUI_ACTIVE", "TCC_HIT_sum")
        ]
    by = {}
    for r in src:
        by.setdefault(r["Dispatch_ID"], []).append(r)
    d = tmp_path / order
    d.mkdir()
    f = d / "5_counter_collection.csv"
    rows = [r for k in sorted(by) for r in by[k]]
    if order == "interleaved":  # one row of dispatch 1 moved to the end: not streamable
        rows.append(rows.pop(0))
    with open(f, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Correlation_Id", "Dispatch_Id", "Agent_Id", "Grid_Size", "Kernel_Name", "Workgroup_Size",
                    "LDS_Block_Size", "Start_Timestamp", "End_Timestamp", "Counter_Name", "Counter_Value"])  # fmt: skip
        for r in rows:
            w.writerow([r["Dispatch_ID"], r["Dispatch_ID"], "Agent 2", r["Grid_Size"], r["Kernel_Name"],
                        r["Workgroup_Size"], r["LDS_Per_Workgroup"], r["Start_Timestamp"], r["End_Timestamp"],
                        r["Counter_Name"], r["Counter_Value"]])  # fmt: skip
    return d


def test_counter_collection_streams_and_falls_back_when_rows_are_not_together(tmp_path):
    from perfmodel.readers.rocprof_v3 import CounterDispatches

    out = {}
    for order in ("sorted", "interleaved"):
        d = _counter_file(tmp_path, order)
        assert isinstance(read_workload(d).dispatches, CounterDispatches)
        res = CliRunner().invoke(cli, ["validate", str(d), "--arch", "mi300x", "--format", "json"])
        assert res.exit_code == 0, res.output
        out[order] = json.loads(res.output)
    assert out["sorted"][0]["count"] == 3
    # the fallback reads the same three dispatches: same sums (the row order only moves a pass)
    assert out["interleaved"][0]["count"] == 3
    assert out["interleaved"][0]["time_us"] == pytest.approx(out["sorted"][0]["time_us"])


def test_interleaved_counter_rows_restart_the_stream(tmp_path):
    from perfmodel.readers.rocprof_v3 import CounterDispatches, Restart

    ds = CounterDispatches(_counter_file(tmp_path, "interleaved") / "5_counter_collection.csv")
    with pytest.raises(Restart):
        for _ in ds:  # (list() would ask len() first, which reads the file whole)
            pass
    assert [d.index for d in ds] == [1, 2, 3]  # now held whole, in first-seen order
    ok = CounterDispatches(_counter_file(tmp_path, "sorted") / "5_counter_collection.csv")
    assert [d.index for d in ok] == [1, 2, 3]


def test_gzipped_rocprofv3_outputs_are_found_and_read(tmp_path):
    import gzip
    import shutil

    f, durations = _trace(tmp_path, 40)
    with open(f, "rb") as src, gzip.open(str(f) + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    f.unlink()
    res = CliRunner().invoke(cli, ["validate", str(tmp_path), "--arch", "mi300x", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)[0]["count"] == 40
    doc = CliRunner().invoke(cli, ["doctor", str(tmp_path), "--format", "json"])
    assert doc.exit_code == 0 and json.loads(doc.output)["dispatches"] == 40
