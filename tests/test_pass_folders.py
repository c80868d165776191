"""rocprofv3 multi-pass output (pass_N/ and pmc_N/ folders) read as one run, and agent ids
normalised across rocprofv3 versions.

The two-pass folder is derived from the real MI300X vcopy run (tests/data/rocprof/derived/
README.md); variations (a timing trace, a partial pass, a counter in two passes) are built from
it in a temporary copy by the tests below."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from data_paths import VCOPY_MI300X_2PASS, VCOPY_MI300X_LONG
from perfmodel.counters.derive import derive_workload
from perfmodel.errors import InputError
from perfmodel.readers import detect_format, read_workload
from perfmodel.readers.csvio import agent_id
from perfmodel.readers.formats import PASSES

HOST = "7f6eaef84eaf"
MIB8 = 8 * 2**20


def _pass_file(root: Path, n: int, kind: str = "counter_collection") -> Path:
    return root / f"pass_{n}" / HOST / f"vcopy_{kind}.csv"


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as fh:
        r = list(csv.reader(fh))
    return r[0], r[1:]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


@pytest.fixture
def two_pass(tmp_path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(VCOPY_MI300X_2PASS, out)
    return out


def _timing_trace(folder: Path, durations: dict[str, int], agent: str = "Agent 2", kernel_suffix: str = "") -> None:
    """A counter-free kernel trace of the three vcopy dispatches starting where pass_1 started,
    with the given durations (ns) per dispatch id."""
    header, rows = _rows(_pass_file(VCOPY_MI300X_2PASS, 1))
    col = {h: i for i, h in enumerate(header)}
    first = {}
    for r in rows:
        first.setdefault(r[col["Dispatch_Id"]], r)
    trace = []
    for did, r in first.items():
        start = int(r[col["Start_Timestamp"]])
        trace.append(["KERNEL_DISPATCH", agent, did, r[col["Kernel_Name"]] + kernel_suffix, start,
                      start + durations[did], r[col["Grid_Size"]], 1, 1])  # fmt: skip
    _write(folder / "vcopy_kernel_trace.csv",
           ["Kind", "Agent_Id", "Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp",
            "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"], trace)  # fmt: skip


def test_agent_ids_have_one_spelling():
    assert agent_id("Agent 4") == agent_id("4") == agent_id("4.0") == agent_id(" agent-4 ") == "4"
    assert agent_id("Agent 04") == "4"
    assert agent_id("") == ""
    assert agent_id("gpu-x") == "gpu-x"  # not an id: kept as written
    assert agent_id("4.5") == "4.5"


def test_two_pass_folder_is_one_run_with_the_counters_of_the_original():
    assert detect_format(VCOPY_MI300X_2PASS) == PASSES
    wl = read_workload(VCOPY_MI300X_2PASS)
    assert wl.gfx == "gfx942" and wl.sysinfo["num_xcd"] == 8
    assert [d.index for d in wl.dispatches] == [1, 2, 3]
    # "Agent 2" (pass_1) and "2" (pass_2) are one GPU
    assert {d.gpu for d in wl.dispatches} == {"2"}
    assert not wl.notes
    # every quantity equals the one from the original file the passes were split from
    split = derive_workload(wl)
    original = derive_workload(read_workload(VCOPY_MI300X_LONG), "gfx942")
    for a, b in zip(split, original, strict=True):
        assert a.flops == b.flops and a.bytes_read == b.bytes_read and a.bytes_write == b.bytes_write
        assert a.bytes_unsplit == b.bytes_unsplit and a.waves == b.waves
        assert a.bytes_read["l2"] == pytest.approx(MIB8, rel=0.01)  # 128-byte L2 reads on gfx942
        assert a.bytes_write["hbm"] <= MIB8 * 1.01
    # no counter-free pass: the duration is the median over every counter pass, and says so
    d = wl.dispatches[0]
    assert len(d.pass_durations_ns) == 12
    assert "counter passes (pass_1, pass_2)" in d.time_source and "no counter-free pass" in d.time_source


def test_validate_says_durations_come_from_counter_passes_and_is_byte_identical(cli):
    a = cli("validate", VCOPY_MI300X_2PASS, "--arch", "mi300x", "--format", "json")
    b = cli("validate", VCOPY_MI300X_2PASS, "--arch", "mi300x", "--format", "json")
    assert a.exit_code == 0, a.output
    assert a.stdout == b.stdout
    table = cli("validate", VCOPY_MI300X_2PASS, "--arch", "mi300x")
    assert "no counter-free timing" in table.output


def test_counter_free_trace_gives_the_durations_and_picks_its_gpu(two_pass):
    timing = two_pass / "timing" / "pass_3" / HOST  # a kernel-trace-only job of the same input
    _timing_trace(timing, {"1": 5000, "2": 5100, "3": 5200})
    # the same kernels on another GPU in the same trace: not this run's dispatches
    other = two_pass / "timing" / "pass_3" / "other"
    _timing_trace(other, {"1": 9000, "2": 9000, "3": 9000}, agent="Agent 3")
    wl = read_workload(two_pass)
    assert [d.duration_ns for d in wl.dispatches] == [5000, 5100, 5200]
    assert all("counter-free kernel trace" in d.time_source for d in wl.dispatches)
    assert not wl.notes


def test_trace_inside_a_counter_pass_is_not_a_timing_source(two_pass):
    _timing_trace(two_pass / "pass_1" / HOST, {"1": 1, "2": 1, "3": 1})
    wl = read_workload(two_pass)
    assert all("counter passes" in d.time_source for d in wl.dispatches)


def test_counter_in_two_passes_keeps_one_value_and_flags_disagreement(two_pass):
    header, rows = _rows(_pass_file(two_pass, 2))
    col = {h: i for i, h in enumerate(header)}
    waves = [list(r) for r in rows if r[col["Counter_Name"]] == "SQ_WAVES"]
    p1 = _pass_file(two_pass, 1)
    h1, rows1 = _rows(p1)
    _write(p1, h1, rows1 + waves)  # the same values in pass_1 too: they agree
    wl = read_workload(two_pass)
    ms = derive_workload(wl)
    assert wl.dispatches[0].replay["SQ_WAVES"] == [float(waves[0][col["Counter_Value"]])] * 2
    assert not any(f.startswith("replay-disagree") for m in ms for f in m.flags)
    for r in waves:  # now pass_1 saw twice the waves: kept from pass_1, flagged
        r[col["Counter_Value"]] = str(2 * float(r[col["Counter_Value"]]))
    _write(p1, h1, rows1 + waves)
    ms = derive_workload(read_workload(two_pass))
    assert ms[0].waves == 2 * float(rows[[r[col["Counter_Name"]] for r in rows].index("SQ_WAVES")][col["Counter_Value"]])
    assert any(f.startswith("replay-disagree: SQ_WAVES") for f in ms[0].flags)


def test_partial_pass_joins_what_matches_and_says_which_pass(two_pass):
    p2 = _pass_file(two_pass, 2)
    header, rows = _rows(p2)
    col = {h: i for i, h in enumerate(header)}
    # pass_2 cut short (the run died after two dispatches): its tail is missing
    _write(p2, header, [r for r in rows if r[col["Dispatch_Id"]] != "3"])
    _timing_trace(two_pass / "timing", {"1": 5000, "2": 5100, "3": 5200})
    wl = read_workload(two_pass)
    assert [d.index for d in wl.dispatches] == [1, 2]
    assert any(n.startswith("pass_2 lacks 1 of the 3 dispatches") and "#3" in n for n in wl.notes)
    assert [d.duration_ns for d in wl.dispatches] == [5000, 5100]
    assert all(m.bytes_read["hbm"] == pytest.approx(MIB8, rel=0.01) for m in derive_workload(wl))


def test_pass_of_another_program_is_one_error_line(two_pass, cli):
    p2 = _pass_file(two_pass, 2)
    header, rows = _rows(p2)
    col = {h: i for i, h in enumerate(header)}
    for r in rows:
        r[col["Kernel_Name"]] = "otherKernel"
    _write(p2, header, rows)
    with pytest.raises(InputError, match=r"pass_2: none of its 3 dispatches matches one in pass_1 by"):
        read_workload(two_pass)
    # three passes: the odd one is named, whichever it is
    shutil.copytree(two_pass / "pass_1", two_pass / "pass_3")
    with pytest.raises(InputError, match=r"pass_2: none of its 3 dispatches matches one in pass_1, pass_3"):
        read_workload(two_pass)
    shutil.move(two_pass / "pass_2", two_pass / "pass_0")
    with pytest.raises(InputError, match=r"pass_0: none of its 3 dispatches matches one in pass_1, pass_3"):
        read_workload(two_pass)
    r = cli("validate", two_pass, "--arch", "mi300x")
    assert r.exit_code == 2 and "pass_0: none of its 3 dispatches" in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_layout_errors_name_the_file(two_pass):
    shutil.copy(_pass_file(two_pass, 1), two_pass / "stray_counter_collection.csv")
    with pytest.raises(InputError, match="stray_counter_collection.csv lies outside the pass_N/ folders"):
        read_workload(two_pass)
    (two_pass / "stray_counter_collection.csv").unlink()
    shutil.copy(_pass_file(two_pass, 1), _pass_file(two_pass, 1).with_name("4242_counter_collection.csv"))
    with pytest.raises(InputError, match=r"pass_1 holds 2 counter collections .*one per process"):
        read_workload(two_pass)


def test_profile_plan_layout_and_text_input_pmc_folders(tmp_path):
    """`perfmodel profile`'s jobs name their own output folder out/pass_N, which rocprofv3 nests
    again (out/pass_1/pass_1/<host>/); its timing job lands in out/timing/pass_3/. A text input
    (pmc: lines) writes pmc_N/."""
    out = tmp_path / "plan" / "out"
    for n in (1, 2):
        shutil.copytree(VCOPY_MI300X_2PASS / f"pass_{n}", out / f"pass_{n}" / f"pass_{n}")
    _timing_trace(out / "timing" / "pass_3" / HOST, {"1": 5000, "2": 5100, "3": 5200})
    wl = read_workload(out)
    assert wl.format == PASSES and [d.duration_ns for d in wl.dispatches] == [5000, 5100, 5200]
    pmc = tmp_path / "pmc"
    for n in (1, 2):
        shutil.copytree(VCOPY_MI300X_2PASS / f"pass_{n}", pmc / f"pmc_{n}")
    wl = read_workload(pmc)
    assert wl.format == PASSES and len(wl.dispatches) == 3
    assert "(pmc_1, pmc_2)" in wl.dispatches[0].time_source


def test_ranks_of_pass_folders_are_separate_workloads(tmp_path):
    from perfmodel.validate.many import expand

    for rank in ("rank_0", "rank_1"):
        shutil.copytree(VCOPY_MI300X_2PASS, tmp_path / "out" / rank)
    found, _ = expand([str(tmp_path / "out")])
    assert [Path(p).name for p in found] == ["rank_0", "rank_1"]
    assert expand([str(tmp_path / "out" / "rank_0")])[0] == [str(tmp_path / "out" / "rank_0")]


def test_rocprof_compute_workload_with_passes_in_out_pmc_folders(tmp_path):
    """rocprof-compute (rocm-systems, 2026) keeps each pass in <workload>/out/pmc_N/<host>/ beside
    sysinfo.csv until analyze merges them: read as one run, the gfx target and clocks from
    sysinfo.csv (here without agent info)."""
    wl_dir = tmp_path / "workloads" / "vcopy" / "MI300X"
    for n in (1, 2):
        src = _pass_file(VCOPY_MI300X_2PASS, n)
        dst = wl_dir / "out" / f"pmc_{n}" / HOST / src.name
        dst.parent.mkdir(parents=True)
        shutil.copy(src, dst)
    shutil.copy(VCOPY_MI300X_LONG.parent / "sysinfo.csv", wl_dir / "sysinfo.csv")
    wl = read_workload(wl_dir)
    assert wl.format == PASSES and wl.gfx == "gfx942" and wl.sysinfo["max_sclk_mhz"] == 2100
    assert [m.bytes_read["l2"] for m in derive_workload(wl)] == pytest.approx([MIB8] * 3, rel=0.01)
    # agent info naming another target than sysinfo.csv: two runs mixed up
    info = _pass_file(VCOPY_MI300X_2PASS, 1, "agent_info")
    (wl_dir / "out" / "pmc_1" / HOST / info.name).write_text(info.read_text().replace("gfx942", "gfx90a"))
    with pytest.raises(InputError, match="sysinfo.csv names gfx942 but the passes' agent info gfx90a"):
        read_workload(wl_dir)


def test_gzipped_rocprof_compute_workload_reads_as_the_plain_one(tmp_path):
    """rocprof-compute 3.7+ writes pmc_perf.csv.gz (and gzipped per-pass files)."""
    import gzip

    from data_paths import VCOPY_MI350

    for src in (VCOPY_MI300X_LONG.parent, VCOPY_MI350):
        dst = tmp_path / src.name
        dst.mkdir()
        for f in src.iterdir():
            if f.name.startswith(("pmc_perf", "timestamps")):
                (dst / (f.name + ".gz")).write_bytes(gzip.compress(f.read_bytes()))
            else:
                shutil.copy(f, dst / f.name)
        plain, gz = derive_workload(read_workload(src)), derive_workload(read_workload(dst))
        assert detect_format(dst) == "rocprof-compute workload"
        assert [(m.bytes_read, m.bytes_write, m.time_s) for m in gz] == [
            (m.bytes_read, m.bytes_write, m.time_s) for m in plain
        ]


def test_trace_and_counters_from_different_rocprofv3_versions_join_on_the_same_gpu(tmp_path):
    """One run: a counter collection that writes Agent_Id "2" (older rocprofv3) and a kernel trace
    that writes "Agent 2" / "Agent 3" (newer, two GPUs busy): the trace's GPU 2 rows time it."""
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(_pass_file(VCOPY_MI300X_2PASS, 2), run / "1_counter_collection.csv")
    _timing_trace(run / "a", {"1": 9000, "2": 9000, "3": 9000}, agent="Agent 3")
    _timing_trace(run / "b", {"1": 5000, "2": 5100, "3": 5200}, agent="Agent 2")
    wl = read_workload(run)
    assert wl.format == "rocprofv3 csv"
    assert [d.gpu for d in wl.dispatches] == ["2"] * 3
    assert [d.duration_ns for d in wl.dispatches] == [5000, 5100, 5200]


def test_rocprof_compute_rocpd_mode_results_files_before_analyze(tmp_path):
    """rocprof-compute in rocpd mode writes one results_pmc_perf_N.csv per pass and merges them
    into pmc_perf.csv only at analyze time: a folder with the per-pass file and sysinfo.csv is a
    workload (real gfx1153 files from the same machine and commit)."""
    from data_paths import GFX1153_LONG, RDNA35_KRACKAN2_SYSINFO

    wl_dir = tmp_path / "RDNA35_KRACKAN2"
    wl_dir.mkdir()
    shutil.copy(GFX1153_LONG, wl_dir / GFX1153_LONG.name)
    shutil.copy(RDNA35_KRACKAN2_SYSINFO, wl_dir / "sysinfo.csv")
    wl = read_workload(wl_dir)
    assert wl.format == "rocprof-compute workload" and wl.gfx == "gfx1153"
    alone = read_workload(GFX1153_LONG)
    assert [d.counters for d in wl.dispatches] == [d.counters for d in alone.dispatches]
    assert "results_pmc_perf_1.csv" in wl.dispatches[0].time_source


def test_clock_above_the_archspec_maximum_is_flagged_without_sysinfo(cli):
    """rocprofv3 agent info gives no maximum clock: the archspec's peak clock is the ceiling, so
    GRBM_GUI_ACTIVE cycles over a duration from another pass (4.1-4.4 GHz here) are flagged, not
    reported as a plain fact (without the fallback the kernel row carries no flag)."""
    import json

    r = cli("validate", str(VCOPY_MI300X_2PASS), "--format", "json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)[0]
    assert row["clock_hz"] > 4e9
    assert any(f.startswith("clock-above-max") and "max 2100 MHz" in f for f in row["flags"]), row["flags"]
