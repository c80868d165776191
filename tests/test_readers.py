"""Readers on the real rocprof files in tests/data/rocprof (see its README for origin)."""

from __future__ import annotations

import csv

import pytest

from data_paths import GFX1153_LONG, MIXBENCH_MI200, VCOPY_2024, VCOPY_MI200, VCOPY_MI300X_LONG, VCOPY_MI350
from perfmodel.readers import detect_format, read_workload


@pytest.mark.parametrize(
    "path, fmt",
    [
        (MIXBENCH_MI200, "rocprof-compute workload"),
        (MIXBENCH_MI200 / "pmc_perf.csv", "rocprof csv (wide)"),
        (VCOPY_2024 / "MI300X_A1" / "pmc_perf.csv", "rocprof csv (wide)"),
        (VCOPY_MI300X_LONG, "counter csv (long)"),
        (GFX1153_LONG, "counter csv (long)"),
    ],
)
def test_detect(path, fmt):
    assert detect_format(path) == fmt


def test_v1_headers_and_timing_pass():
    wl = read_workload(MIXBENCH_MI200)
    assert wl.gfx == "gfx90a" and len(wl.dispatches) == 167
    d = wl.dispatches[1]
    assert d.kernel == "void benchmark_func<short, 256, 8u, 0u>(short, short*)"
    assert d.grid == 32768 and d.workgroup == 256
    assert d.time_source == "timestamps.csv (counter-free timing pass)"
    assert d.duration_ns == 14234011592839 - 14234011579879
    assert "SQ_INSTS_VALU_FMA_F32" in d.counters and "KernelName" not in d.counters


def test_roofline_csv_typo_headers_fixed():
    wl = read_workload(MIXBENCH_MI200)
    ceil = wl.roofline["0"]
    assert ceil["HBMBw"] == pytest.approx(1406.8727)
    assert ceil["HBMBwHigh"] == pytest.approx(1408.0273)  # spelled hbmBwHigh in the file
    assert ceil["MFMAI8OpsLow"] == pytest.approx(166646.77)  # spelled MFMAFI8OpsLow
    assert len(read_workload(VCOPY_MI200).roofline) == 4


def test_sysinfo_zero_clock_is_unknown_not_zero():
    wl = read_workload(VCOPY_MI350)
    assert wl.gfx == "gfx950"
    assert wl.sysinfo["max_sclk_mhz"] is None
    assert any("max_sclk is 0" in n for n in wl.notes)
    assert wl.sysinfo["num_xcd"] == 8


def test_per_pass_join_mi350():
    wl = read_workload(VCOPY_MI350)
    d0 = wl.dispatches[0]
    assert len(d0.pass_durations_ns) == 8
    assert min(d0.pass_durations_ns) == pytest.approx(20959, abs=1)
    assert max(d0.pass_durations_ns) == pytest.approx(22399, abs=1)
    assert "median over 8 counter passes" in d0.time_source
    assert "no counter-free pass" in d0.time_source
    # the counters of every pass made it in (pass 4 holds TCC_EA0_WRREQ_64B_sum)
    assert d0.counters["TCC_EA0_WRREQ_64B_sum"] == 131072


def test_per_pass_files_alone_are_joined(tmp_path):
    for i in range(8):
        src = VCOPY_MI350 / f"pmc_perf_{i}.csv"
        (tmp_path / src.name).write_bytes(src.read_bytes())
    wl = read_workload(tmp_path)
    assert len(wl.dispatches) == 3
    d = wl.dispatches[1]
    assert d.counters["TCC_EA0_RDREQ_sum"] == 65612 and d.counters["SQ_WAVES"] == 16384
    assert len(d.pass_durations_ns) == 8


def test_rocpd_long_passes():
    wl = read_workload(VCOPY_MI300X_LONG)
    assert wl.gfx == "gfx942"
    assert [d.index for d in wl.dispatches] == [1, 2, 3]
    d = wl.dispatches[0]
    assert len(d.pass_durations_ns) == 12
    assert d.counters["TCC_BUBBLE_sum"] == 65536
    assert len(d.counters) == 2009
    assert "median over 12 counter passes" in d.time_source


def test_float_notation_timestamps_flagged():
    wl = read_workload(VCOPY_2024 / "MI300A_A1")
    for d in wl.dispatches:
        assert d.duration_ns == 0
        assert any("float notation" in f for f in d.flags)


def test_rocprofv3_csv_directory(tmp_path):
    """A rocprofv3 run: long counter_collection + kernel trace + agent info (real MI300X values)."""
    src = VCOPY_MI300X_LONG
    with open(src, newline="") as fh:
        rows = list(csv.DictReader(fh))
    cc = tmp_path / "123_counter_collection.csv"
    with open(cc, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "Correlation_Id",
                "Dispatch_Id",
                "Agent_Id",
                "Grid_Size",
                "Kernel_Name",
                "Workgroup_Size",
                "LDS_Block_Size",
                "Counter_Name",
                "Counter_Value",
            ]
        )
        for r in rows:
            w.writerow(
                [
                    r["Dispatch_ID"],
                    r["Dispatch_ID"],
                    "Agent 2",
                    r["Grid_Size"],
                    r["Kernel_Name"],
                    r["Workgroup_Size"],
                    r["LDS_Per_Workgroup"],
                    r["Counter_Name"],
                    r["Counter_Value"],
                ]
            )
    kt = tmp_path / "123_kernel_trace.csv"
    with open(kt, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "Kind",
                "Agent_Id",
                "Dispatch_Id",
                "Kernel_Name",
                "Start_Timestamp",
                "End_Timestamp",
                "Grid_Size_X",
                "Grid_Size_Y",
                "Grid_Size_Z",
            ]
        )
        for r in rows:
            if r["Counter_Name"] == "SQ_WAVES":  # one pass's timestamps per dispatch
                w.writerow(
                    [
                        "KERNEL_DISPATCH",
                        "Agent 2",
                        r["Dispatch_ID"],
                        r["Kernel_Name"],
                        r["Start_Timestamp"],
                        r["End_Timestamp"],
                        r["Grid_Size"],
                        1,
                        1,
                    ]
                )
    ai = tmp_path / "123_agent_info.csv"
    ai.write_text(
        "Node_Id,Agent_Type,Wave_Front_Size,Num_Xcc,Cu_Count,Name\n0,CPU,0,0,0,AMD EPYC\n2,GPU,64,8,304,gfx942\n"
    )
    assert detect_format(tmp_path) == "rocprofv3 csv directory"
    wl = read_workload(tmp_path)
    assert wl.gfx == "gfx942" and wl.sysinfo["num_xcd"] == 8
    assert len(wl.dispatches) == 3
    d = wl.dispatches[0]
    assert d.time_source == "123_kernel_trace.csv (kernel trace)"
    assert d.duration_ns == 13386729952881845 - 13386729952874594
    assert d.counters["TCC_EA0_WRREQ_sum"] == 131072
