"""`perfmodel validate` over several workloads (arguments or a folder of per-rank outputs), in
parallel, merged; and the byte-identical output of predict and validate across runs.

The ranks are real test workloads copied into a temporary folder (tests/data only)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from data_paths import MIXBENCH_MI200, VCOPY_2024, VCOPY_MI200, VCOPY_MI300X_LONG
from perfmodel.validate.many import MERGED, expand, validate_many


@pytest.fixture
def ranks(tmp_path):
    """rank_0, rank_1: the MI200 vcopy workload; rank_2: mixbench on the same GPU; a README."""
    root = tmp_path / "ranks"
    root.mkdir()
    shutil.copytree(VCOPY_MI200, root / "rank_0")
    shutil.copytree(VCOPY_MI200, root / "rank_1")
    shutil.copytree(MIXBENCH_MI200, root / "rank_2")
    (root / "README.txt").write_text("per-rank rocprof-compute output\n")
    return root


def _json(r) -> list[dict]:
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_folder_of_ranks_is_expanded_in_name_order(ranks):
    found, notes = expand([str(ranks)])
    assert [os.path.basename(p) for p in found] == ["rank_0", "rank_1", "rank_2"]
    assert notes and "README.txt" in notes[0] and "skipped 1 file" in notes[0]
    # a workload folder given itself is one workload, not a folder of ranks
    assert expand([str(ranks / "rank_0")])[0] == [str(ranks / "rank_0")]


def test_nested_host_pid_folders_are_ranks(tmp_path):
    for host, pid in (("nodeA", "101"), ("nodeA", "102"), ("nodeB", "201")):
        shutil.copytree(VCOPY_MI200, tmp_path / host / pid)
    found, _ = expand([str(tmp_path)])
    assert [os.path.relpath(p, tmp_path) for p in found] == ["nodeA/101", "nodeA/102", "nodeB/201"]


def _rocprofv3_run(folder, pid: int) -> None:
    """A rocprofv3 kernel trace and agent info of one process (timestamps of the real MI300X
    vcopy run in tests/data) in ``folder``, named as rocprofv3 names them."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(VCOPY_MI300X_LONG, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Counter_Name"] == "SQ_WAVES"]
    with open(folder / f"{pid}_kernel_trace.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Kind", "Agent_Id", "Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp",
                    "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"])  # fmt: skip
        for r in rows:
            w.writerow(["KERNEL_DISPATCH", "Agent 2", r["Dispatch_ID"], r["Kernel_Name"], r["Start_Timestamp"],
                        r["End_Timestamp"], r["Grid_Size"], 1, 1])  # fmt: skip
    (folder / f"{pid}_agent_info.csv").write_text(
        "Node_Id,Agent_Type,Wave_Front_Size,Num_Xcc,Cu_Count,Name\n0,CPU,0,0,0,AMD EPYC\n2,GPU,64,8,304,gfx942\n"
    )


def test_rocprofv3_process_folders_are_ranks(cli, tmp_path):
    """rocprofv3's default <host>/<pid>/ layout: one rank per process folder, merged."""
    _rocprofv3_run(tmp_path / "out" / "node1" / "4242", 4242)
    _rocprofv3_run(tmp_path / "out" / "node1" / "4243", 4243)
    found, _ = expand([str(tmp_path / "out")])
    assert [os.path.relpath(p, tmp_path / "out") for p in found] == ["node1/4242", "node1/4243"]
    rows = _json(cli("validate", tmp_path / "out", "--format", "json"))
    per_rank = [r for r in rows if r["workload"] != MERGED]
    (merged,) = [r for r in rows if r["workload"] == MERGED]
    assert len(per_rank) == 2 and merged["count"] == 2 * per_rank[0]["count"] == 6
    assert merged["time_us"] == pytest.approx(per_rank[0]["time_us"] + per_rank[1]["time_us"], rel=1e-12)


def test_rocprofv3_passes_of_one_run_stay_one_workload(tmp_path):
    """`perfmodel profile`'s out/pass_N/ + out/timing/ folders are one run, as its reader joins them."""
    _rocprofv3_run(tmp_path / "out" / "pass_1", 11)
    _rocprofv3_run(tmp_path / "out" / "timing", 12)
    assert expand([str(tmp_path / "out")])[0] == [str(tmp_path / "out")]


def test_merged_kernel_is_the_ratio_of_sums_of_the_ranks(cli, ranks):
    rows = _json(cli("validate", ranks, "--format", "json"))
    rank_rows = [r for r in rows if r["workload"] != MERGED and r["kernel"].startswith("vecCopy")]
    (merged,) = [r for r in rows if r["workload"] == MERGED and r["kernel"].startswith("vecCopy")]
    assert [os.path.basename(r["workload"]) for r in rank_rows] == ["rank_0", "rank_1"]
    assert merged["workloads"] == 2
    assert merged["count"] == sum(r["count"] for r in rank_rows) == 6
    assert merged["time_us"] == pytest.approx(sum(r["time_us"] for r in rank_rows), rel=1e-12)
    assert merged["predicted_time_us"] == pytest.approx(
        sum(r["predicted_time_us"] for r in rank_rows), rel=1e-12
    )
    hbm = sum(r["bytes"]["hbm"] for r in rank_rows)
    assert merged["bytes"]["hbm"] == pytest.approx(hbm, rel=1e-12)
    # ratio of sums: summed bytes over summed time, not a mean of the ranks' rates
    assert merged["achieved"]["hbm"] == pytest.approx(hbm / (merged["time_us"] * 1e-6), rel=1e-12)
    # every mixbench kernel ran in one rank only: its merged row is that rank's row
    mix = [r for r in rows if r["workload"].endswith("rank_2")]
    mix_merged = [r for r in rows if r["workload"] == MERGED and r["workloads"] == 1]
    assert len(mix) == len(mix_merged) > 100
    assert [r["time_us"] for r in mix] == [r["time_us"] for r in mix_merged]


def test_jobs_do_not_change_the_output(cli, ranks):
    for fmt in ("json", "csv", "md"):
        one = cli("validate", ranks, "--format", fmt, "--jobs", "1")
        two = cli("validate", ranks, "--format", fmt, "--jobs", "2")
        assert one.exit_code == two.exit_code == 0, one.output + two.output
        assert one.stdout == two.stdout, fmt
        assert "\r" not in one.stderr + two.stderr  # no progress bar when stderr is not a terminal


def test_results_keep_the_input_order(cli, ranks):
    a, b = ranks / "rank_2", ranks / "rank_0"
    rows = _json(cli("validate", a, b, "--format", "json", "--jobs", "2"))
    order = list(dict.fromkeys(r["workload"] for r in rows))
    assert order == [str(a), str(b), MERGED]


def test_table_has_one_table_per_workload_then_the_merged_one(cli, ranks):
    r = cli("validate", ranks, "--top", "3")
    assert r.exit_code == 0, r.output
    titles = [line for line in r.stdout.splitlines() if line.startswith("perfmodel validate")]
    assert len(titles) == 4 and titles[-1].startswith("perfmodel validate 3 workloads (merged)")
    assert "note: skipped 1 file(s) no rocprof format reads" in r.stdout


def test_different_gpus_give_no_merged_view(cli):
    r = cli("validate", VCOPY_2024 / "MI200", VCOPY_2024 / "MI100", "--format", "json")
    rows = _json(r)
    assert {x["workload"] for x in rows} == {str(VCOPY_2024 / "MI200"), str(VCOPY_2024 / "MI100")}
    assert "no merged view: the workloads ran on different GPUs" in r.stderr


def test_per_dispatch_rows_are_tagged_and_not_merged(cli, ranks):
    rows = _json(cli("validate", ranks / "rank_0", ranks / "rank_1", "--per-dispatch", "--format", "json"))
    assert len(rows) == 6 and MERGED not in {r["workload"] for r in rows}


def test_one_bad_workload_stops_everything_without_output(cli, ranks, tmp_path):
    bad = ranks / "rank_1" / "pmc_perf.csv"
    bad.write_bytes(b"\x00\x01 not a csv \xff")
    out = tmp_path / "out.json"
    r = cli("validate", ranks, "-o", out)
    assert r.exit_code == 2
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "rank_1" in errors[0], r.stderr
    assert "Traceback" not in r.output and not out.exists()


def test_keep_going_reports_the_others_and_exits_2(cli, ranks, tmp_path):
    (ranks / "rank_1" / "pmc_perf.csv").write_text("KernelName,Index\n")  # a header, no dispatches
    out = tmp_path / "out.json"
    r = cli("validate", ranks, "--keep-going", "-o", out)
    assert r.exit_code == 2
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "rank_1" in errors[0], r.stderr
    rows = json.loads(out.read_text())
    workloads = list(dict.fromkeys(x["workload"] for x in rows))
    assert [os.path.basename(w) for w in workloads] == ["rank_0", "rank_2", MERGED]
    assert "1 of 3 workloads failed" in r.stderr


def test_merged_time_missing_says_so(ranks):
    """Two ranks whose timestamps are unusable (MI300X 2024: zero durations): no merged time."""
    for i in (0, 1):
        shutil.rmtree(ranks / f"rank_{i}")
        shutil.copytree(VCOPY_2024 / "MI300X_A1", ranks / f"rank_{i}")
    vs = validate_many([str(ranks / "rank_0"), str(ranks / "rank_1")])
    (row,) = vs.merged.rows
    assert row["time_us"] is None and row["count"] == 6
    assert "time-missing: 2 of the 2 sums merged have no usable time" in row["flags"]
    assert "time-missing: 3 of 3 dispatches have no usable time" in row["flags"]


def test_a_folder_holding_one_workload_reads_as_that_workload(cli, tmp_path):
    shutil.copytree(VCOPY_MI200, tmp_path / "only" / "rank_0")
    direct = cli("validate", tmp_path / "only" / "rank_0", "--format", "json")
    via = cli("validate", tmp_path / "only", "--format", "json")
    assert direct.exit_code == via.exit_code == 0
    assert direct.stdout == via.stdout


def test_the_same_workload_twice_is_refused(cli, ranks):
    r = cli("validate", ranks, ranks / "rank_0")
    assert r.exit_code == 2 and "given twice" in r.stderr


# --- byte-identical outputs across fresh processes (acceptance of issue 10) ---------------------
def _run(args: list, seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed}  # a different string hash in each process
    p = subprocess.run([sys.executable, "-m", "perfmodel", *map(str, args)], capture_output=True, env=env)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_predict_suite_is_byte_identical_across_runs(fmt):
    args = ["predict", "--suite", "--arch", "mi300x", "--format", fmt]
    first = _run(args, "1")
    assert first == _run(args, "2") and len(first) > 10_000


@pytest.mark.parametrize("fmt", ["json", "md", "csv"])
def test_validate_is_byte_identical_across_runs(fmt):
    args = ["validate", MIXBENCH_MI200, "--format", fmt]
    first = _run(args, "3")
    assert first == _run(args, "4") and b"benchmark_func" in first


def test_python_api(ranks):
    import perfmodel.validate as pv

    vs = pv.validate_many([str(ranks / "rank_0"), str(ranks / "rank_1")], jobs=2, kernel_filter="vecCopy")
    assert [os.path.basename(v.path) for v in vs.runs] == ["rank_0", "rank_1"]
    assert vs.merged is not None and vs.merged.rows[0]["count"] == 6
    assert vs._repr_html_().count("<table") == 3
