"""The columnar kernel-trace path of `perfmodel validate` gives what the row path gives, byte for
byte: on kernel traces derived from every test workload, on generated traces with several
kernels, odd quoting, gzip, CRLF, bad cells and small chunks. The row path is forced by
turning the fast path off (`columnar.trace_sums` returning None)."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from data_paths import GFX1153_LONG, MIXBENCH_MI200, ROCPROF, VCOPY_2024, VCOPY_2025
from perfmodel.cli.main import cli
from perfmodel.errors import InputError
from perfmodel.readers import read_workload, trace_columns
from perfmodel.validate import columnar, validate

HEADER = [
    "Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name",
    "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
    "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
    "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z",
]  # fmt: skip  -- rocprofv3's kernel-trace columns (tests/test_inspect.py TRACE_HEADER)
ARCH_OF = {"gfx942": "mi300x", "gfx90a": "mi210", "gfx908": "mi100", "gfx950": "mi350x", "gfx1153": "krackan2"}

WORKLOADS = [
    MIXBENCH_MI200,
    *(VCOPY_2024 / g for g in ("MI100", "MI200", "MI300A_A1", "MI300X_A1")),
    VCOPY_2025 / "MI350",
    VCOPY_2025 / "MI300X_A1_rocpd",
    GFX1153_LONG,
]


def _row(i, kernel, begin, end, grid=1048576, wg=256, vgpr=16, agpr=0, sgpr=24, lds=0):
    return ["KERNEL_DISPATCH", 2, 1, 0, 99, i, 1, kernel, i, begin, end, lds, 0, vgpr, agpr, sgpr, wg, 1, 1, grid, 1, 1]


def _write(path: Path, rows, header=HEADER, lineterminator="\n", gz=False) -> Path:
    opener = gzip.open if gz else open
    with opener(path, "wt", newline="") as fh:
        w = csv.writer(fh, lineterminator=lineterminator)
        w.writerow(header)
        w.writerows(rows)
    return path


def _both(path, monkeypatch, **kw) -> tuple[str, str]:
    """(fast, row) outputs of validate: JSON rows plus the notes."""

    def run():
        try:
            v = validate(str(path), **kw)
        except InputError as e:
            return f"error: {e}"
        return v.render("json") + "\n" + "\n".join(v.notes)

    fast = run()
    with monkeypatch.context() as m:
        m.setattr(columnar, "trace_sums", lambda *a, **k: None)
        row = run()
    return fast, row


def _same(path, monkeypatch, **kw) -> str:
    fast, row = _both(path, monkeypatch, **kw)
    assert fast == row
    return fast


def _uses_fast_path(path, **kw) -> bool:
    called = []
    real = columnar.trace_sums

    def spy(*a, **k):
        out = real(*a, **k)
        called.append(out is not None)
        return out

    columnar.trace_sums = spy
    try:
        validate(str(path), **kw)
    finally:
        columnar.trace_sums = real
    return called == [True]


@pytest.mark.parametrize("src", WORKLOADS, ids=lambda p: str(p.relative_to(ROCPROF)))
def test_trace_of_each_test_workload(src, tmp_path, monkeypatch):
    """A rocprofv3 kernel trace derived from a real test workload (its kernels, dispatch IDs,
    grids, workgroups, registers, LDS and timestamps as read): same output both ways."""
    wl = read_workload(src)
    rows = [
        _row(d.index, d.kernel, "" if d.begin_ns is None else int(d.begin_ns), "" if d.end_ns is None else int(d.end_ns),
             grid=d.grid, wg=d.workgroup, vgpr=d.vgprs, sgpr=d.sgprs, lds=d.lds_bytes)
        for d in wl.dispatches
    ]  # fmt: skip
    f = _write(tmp_path / "5_kernel_trace.csv", rows)
    arch = ARCH_OF.get(wl.gfx, "krackan2")  # the lone gfx1153 CSV has no sysinfo beside it
    out = _same(tmp_path, monkeypatch, arch=arch)
    assert not out.startswith("error"), out
    assert _uses_fast_path(tmp_path, arch=arch)
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 7)  # many chunks: same again
    assert _same(f, monkeypatch, arch=arch) == _same(tmp_path, monkeypatch, arch=arch)


def _several(n=300):
    """Several kernels, alternating grids (runs of predictions), a zero and a negative duration."""
    names = ["vecCopy(double*, double*, double*, int, int)", 'k "quoted", with commas', "gemm_kernel"]
    rows = []
    t = 10**15
    for i in range(n):
        k = names[i % 3]
        grid = 1048576 if (i // 3) % 2 else 2097152
        dur = 5000 + (i * 7919) % 3000
        if i == 40:
            dur = 0
        if i == 41:
            dur = -7
        rows.append(_row(i + 1, k, t, t + dur, grid=grid, vgpr=16 + 8 * (i % 3), wg=256 if i % 5 else 64))
        t += 10000
    return rows


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 65536])
def test_generated_trace_any_chunk_size(chunk, tmp_path, monkeypatch):
    _write(tmp_path / "1_kernel_trace.csv", _several())
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", chunk)
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    rows = json.loads(out.split("\n]\n")[0] + "\n]")
    assert [r["count"] for r in rows] == [100, 100, 100]
    assert any("zero duration" in f for r in rows for f in r["flags"])
    assert all("occupancy" in r for r in rows)
    assert _uses_fast_path(tmp_path, arch="mi300x")


def test_manifest_with_dispatch_rules(tmp_path, monkeypatch):
    _write(tmp_path / "1_kernel_trace.csv", _several(60))
    man = tmp_path / "cases.yaml"
    man.write_text(
        "kernels:\n"
        "  - dispatch: 5\n    case: {kernel: stream, op: copy, dtype: fp32, n: 1000}\n"
        "  - dispatch: 31\n    case: {kernel: stream, op: copy, dtype: fp32, n: 2000}\n"
        "  - match: gemm\n    case: {kernel: stream, op: triad, dtype: fp64, n: '{grid}'}\n"
    )
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 8)
    out = _same(tmp_path, monkeypatch, arch="mi300x", manifest=str(man))
    assert '"identified": "manifest"' in out


def test_gzip_and_crlf(tmp_path, monkeypatch):
    _write(tmp_path / "1_kernel_trace.csv.gz", _several(), gz=True, lineterminator="\r\n")
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    assert '"count": 100' in out
    assert _uses_fast_path(tmp_path, arch="mi300x")


def test_several_trace_files(tmp_path, monkeypatch):
    rows = _several(90)
    _write(tmp_path / "1_kernel_trace.csv", rows[:50])
    _write(tmp_path / "2_kernel_trace.csv", rows[50:], lineterminator="\r\n")
    _same(tmp_path, monkeypatch, arch="mi300x")


def _text_with(tmp_path, edit) -> Path:
    f = _write(tmp_path / "1_kernel_trace.csv", _several(40))
    lines = f.read_text().splitlines()
    lines = edit(lines)
    f.write_text("\n".join(lines) + "\n")
    return f


@pytest.mark.parametrize(
    "edit",
    [
        lambda ls: ls[:20] + [ls[20].replace(",21,1,", ",x21,1,", 1)] + ls[21:],  # bad Dispatch_Id
        lambda ls: ls[:30] + [ls[30][: ls[30].rindex(",1048576,") if ",1048576," in ls[30] else -1] + ",abc,1,1"] + ls[31:],
        lambda ls: ls[:25] + [ls[25].rsplit(",", 1)[0]] + ls[26:],  # a field short
        lambda ls: ls[:10] + [""] + ls[10:],  # a blank line
        lambda ls: ls[:12] + [ls[12].replace("KERNEL_DISPATCH", 'KERNEL"DISPATCH')] + ls[13:],  # quote mid-field
        lambda ls: ls[:12] + [ls[12].replace('"gemm_kernel"', '"gemm_kernel"x')] + ls[13:],  # text after a quote
        lambda ls: ls[:33] + [ls[33].replace(",16,0,24,", ",1.6e1,0,24,")] + ls[34:],  # float notation VGPRs
        lambda ls: ls,  # unchanged
    ],
)
def test_bad_or_odd_cells_match_the_row_path(edit, tmp_path, monkeypatch):
    _text_with(tmp_path, edit)
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 8)
    _same(tmp_path, monkeypatch, arch="mi300x")


@pytest.mark.parametrize(
    "cell, flag",
    [("", "empty Start_Timestamp"), ("1.5E+15", "float notation"), ("  123", None), ("+5", None)],
)
def test_odd_timestamps_fall_back_with_the_same_flags(cell, flag, tmp_path, monkeypatch):
    rows = _several(30)
    rows[17][9] = cell
    _write(tmp_path / "1_kernel_trace.csv", rows)
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 4)
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    if flag:
        assert flag in out


def test_error_lines_are_the_row_paths(tmp_path):
    """A bad cell deep in the file: one error line naming file, line and column (CLI, exit 2)."""
    f = _text_with(tmp_path, lambda ls: ls[:30] + [ls[30].replace(",30,1,", ",thirty,1,", 1)] + ls[31:])
    res = CliRunner().invoke(cli, ["validate", str(tmp_path), "--arch", "mi300x"])
    assert res.exit_code == 2
    (line,) = res.output.strip().splitlines()
    assert str(f) in line and "line 31" in line and "Dispatch_ID" in line and "non-numeric" in line


@pytest.mark.parametrize("text", ["", ",".join(HEADER) + "\n", ",".join(HEADER)])
def test_empty_and_header_only(text, tmp_path, monkeypatch):
    (tmp_path / "1_kernel_trace.csv").write_text(text)
    out = _same(tmp_path / "1_kernel_trace.csv", monkeypatch, arch="mi300x")
    assert out.startswith("error")


def test_last_line_without_line_break(tmp_path, monkeypatch):
    f = _write(tmp_path / "1_kernel_trace.csv", _several(20))
    f.write_bytes(f.read_bytes().rstrip(b"\n"))
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    assert sum(r["count"] for r in json.loads(out.split("\n]\n")[0] + "\n]")) == 20


def test_occupancy_error_is_the_same_note(tmp_path, monkeypatch):
    rows = _several(30)
    rows[11][13] = "wide"  # VGPR_Count: only the occupancy reads it
    _write(tmp_path / "1_kernel_trace.csv", rows)
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 5)
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    assert "occupancy not reported" in out and "1_kernel_trace.csv:13" in out


def test_bad_workgroup_cell_is_the_same_error_line(tmp_path, monkeypatch):
    """The workgroup size is read for identification (manifest {workgroup}) like the grid, so
    a non-numeric cell is one error line naming line and column, in both paths."""
    rows = _several(30)
    rows[11][16] = "wide"  # Workgroup_Size_X
    _write(tmp_path / "1_kernel_trace.csv", rows)
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 5)
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    assert out.startswith("error:") and "line 13, column Workgroup_Size_X" in out


def test_trace_without_register_columns(tmp_path, monkeypatch):
    header = ["Kind", "Agent_Id", "Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp",
              "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]  # fmt: skip
    rows = [[r[0], "Agent 2", r[5], r[7], r[9], r[10], r[19], 1, 1] for r in _several(50)]
    _write(tmp_path / "1_kernel_trace.csv", rows, header=header)
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    assert "occupancy not reported" in out


def test_repeated_addition_jumps_are_bit_identical():
    """Prediction.combine_runs adds a kernel's prediction once per dispatch; `_repeat_add`
    does long runs in numpy. Same float as plain repeated addition, ties and overflow included."""
    import math
    import random

    from perfmodel.record import _repeat_add

    def plain(s, v, n):
        for _ in range(n):
            s += v
        return s

    rng = random.Random(7)
    cases = [(0.0, 0.5, 1000), (2.0**52, 0.5, 1000), (2.0**52, 1.5, 999), (2.0**52 + 1, 2.5, 100), (0, 1e-9, 5000),
             (0.0, 0.1, 100000), (1.0, 2**-53, 100), (3.0, 1e-16, 1000), (0.0, 1e300, 1000), (1e308, 1e307, 100), (0.0, 0.1, 2_500_000)]  # fmt: skip
    for _ in range(2000):
        s = rng.choice([0.0, 0, rng.random() * 10 ** rng.randint(-12, 12), float(rng.randint(0, 2**53))])
        v = rng.random() * 10 ** rng.randint(-12, 6)
        if s > 0 and rng.random() < 0.3:
            v = (rng.randint(0, 5) + 0.5) * math.ulp(s)  # a tie at every step
        cases.append((s, v, rng.choice([1, 5, 17, 100, 1000, 12345])))
    for s, v, n in cases:
        a, b = plain(s, v, n), _repeat_add(s, v, n)
        assert a == b and type(a) is type(b), (s, v, n)


@pytest.mark.parametrize("multiplier, max_key", [(0, 1024), (0x9E3779B97F4A7C15, 8)])
def test_hash_collisions_and_long_keys_only_cost_speed(multiplier, max_key, tmp_path, monkeypatch):
    """Launch keys are grouped by a hash checked byte for byte: with every hash colliding
    (multiplier 0 keeps only the last word) or keys too long to gather, rows are sliced one by
    one, with the same output."""
    _write(tmp_path / "1_kernel_trace.csv", _several(120))
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 16)
    expected = _same(tmp_path, monkeypatch, arch="mi300x")
    monkeypatch.setattr(trace_columns, "HASH_MULTIPLIER", multiplier)
    monkeypatch.setattr(trace_columns, "MAX_KEY_BYTES", max_key)
    spans = []
    real = trace_columns._group_spans
    monkeypatch.setattr(trace_columns, "_group_spans", lambda *a: spans.append(real(*a)) or spans[-1])
    assert _same(tmp_path, monkeypatch, arch="mi300x") == expected
    assert spans and all(g is None for g in spans)


# --- --per-dispatch -o FILE: rows streamed to the file -------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
@pytest.mark.parametrize("which", ["trace", "mixbench"])
def test_per_dispatch_rows_stream_to_the_file_byte_for_byte(fmt, which, tmp_path):
    if which == "trace":
        src = tmp_path / "w"
        src.mkdir()
        _write(src / "1_kernel_trace.csv", _several(90))
        args = ["--arch", "mi300x"]
    else:
        src, args = MIXBENCH_MI200, ["--kernel", "float"]
    out = tmp_path / f"rows.{fmt}"
    res = CliRunner().invoke(cli, ["validate", str(src), *args, "--per-dispatch", "-o", str(out)])
    assert res.exit_code == 0, res.output
    whole = CliRunner().invoke(cli, ["validate", str(src), *args, "--per-dispatch", "--format", fmt])
    assert whole.exit_code == 0
    assert out.read_text() == whole.output
    assert len(out.read_text()) > 1000


def test_per_dispatch_stream_error_leaves_no_file(tmp_path):
    _text_with(tmp_path, lambda ls: ls[:30] + [ls[30].replace(",30,1,", ",thirty,1,", 1)] + ls[31:])
    out = tmp_path / "out" / "rows.jsonl"
    out.parent.mkdir()
    res = CliRunner().invoke(cli, ["validate", str(tmp_path), "--arch", "mi300x", "--per-dispatch", "-o", str(out)])
    assert res.exit_code == 2 and "line 31" in res.output
    assert list(out.parent.iterdir()) == []  # neither the file nor a temp file


def test_launch_columns_hold_every_column_the_occupancy_reads():
    """The columnar path hands the occupancy only the launch columns: every spelling
    trace_occupancy reads must be one of them (canonically)."""
    from perfmodel.inspect.trace_occupancy import ALIASES
    from perfmodel.readers.csvio import canonical

    names = {n for spellings in ALIASES.values() for n in spellings}
    names |= {"Workgroup_Size", "wgr", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"}
    assert {canonical(n) for n in names} <= set(trace_columns.LAUNCH_COLUMNS)


def test_other_header_spellings(tmp_path, monkeypatch):
    """Older spellings of the register/LDS columns and one Grid_Size / Workgroup_Size column."""
    header = ["Kind", "Agent_Id", "Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp", "Lds_Block_Size",
              "Vgpr_Count", "Accum_Vgpr_Count", "Sgpr_Count", "Workgroup_Size", "Grid_Size"]  # fmt: skip
    rows = [[r[0], r[1], r[5], r[7], r[9], r[10], r[11], r[13], 4 + r[13] % 3, r[15], r[16], r[19]] for r in _several(60)]
    _write(tmp_path / "1_kernel_trace.csv", rows, header=header)
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 9)
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    assert '"agpr": 5' in out or '"agpr": 6' in out


def test_truncated_gzip_is_one_error_line(tmp_path, monkeypatch):
    """A .gz cut short: one error line (was an EOFError traceback in both paths)."""
    f = _write(tmp_path / "1_kernel_trace.csv.gz", _several(3000), gz=True)
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    assert out.startswith("error:") and "truncated or corrupt" in out
    res = CliRunner().invoke(cli, ["validate", str(tmp_path), "--arch", "mi300x"])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1


def test_random_byte_edits_give_the_row_paths_output(tmp_path, monkeypatch):
    """Seeded random edits (quotes, separators, line breaks, CR, NUL, digits, a non-UTF-8 byte)
    at random places, random chunk sizes: the fast path's output or error is the row path's.
    (A local run of 450 such files found no difference.)"""
    import random

    rng = random.Random(2026)
    for i in range(30):
        d = tmp_path / f"c{i}"
        d.mkdir()
        f = _write(d / "1_kernel_trace.csv", _several(rng.choice([5, 30, 80])), lineterminator=rng.choice(["\n", "\r\n"]))
        data = bytearray(f.read_bytes())
        for _ in range(rng.choice([1, 1, 2, 3])):
            pos = rng.randrange(len(data))
            ch = rng.choice([b'"', b",", b"\n", b"\r", b" ", b"x", b"0", b"9", b"\xff", b"e", b"-", b"\x00", b"."])
            op = rng.random()
            if op < 0.4:
                data[pos:pos] = ch
            elif op < 0.7:
                del data[pos]
            else:
                data[pos : pos + 1] = ch
        f.write_bytes(bytes(data))
        monkeypatch.setattr(trace_columns, "CHUNK_ROWS", rng.choice([None, 1, 3, 7]))
        _same(d, monkeypatch, arch="mi300x")


def test_manifest_sees_the_workgroup_size_of_trace_dispatches(tmp_path, monkeypatch):
    """rocprofv3 writes Workgroup_Size_X/Y/Z in kernel traces: `{workgroups}` in a manifest case
    is grid / workgroup, in both paths (it was 0 while the trace reader ignored the columns)."""
    _write(tmp_path / "1_kernel_trace.csv", _several(60))
    man = tmp_path / "cases.yaml"
    man.write_text("kernels:\n  - match: gemm\n    case: {kernel: stream, op: copy, dtype: fp32, n: '{workgroups}'}\n")
    monkeypatch.setattr(trace_columns, "CHUNK_ROWS", 8)
    out = _same(tmp_path, monkeypatch, arch="mi300x", manifest=str(man))
    shapes = {r["kernel"]: r for r in json.loads(out)}
    gemm = next(r for k, r in shapes.items() if k.startswith("gemm"))
    assert gemm["identified"] == "manifest"
    assert gemm["case"]["n"] in (1048576 // 256, 1048576 // 64, 2097152 // 256, 2097152 // 64), gemm["case"]


@pytest.mark.parametrize("gz", [False, True])
def test_occupancy_of_gzipped_traces_and_kd_kernel_names(tmp_path, monkeypatch, gz):
    """The occupancy is reported for a .csv.gz trace too, and matched to the kernel's row when
    the trace spells the name with rocprof's ' [clone .kd]' decoration (validate drops it)."""
    rows = [_row(i + 1, "vecCopy(double*, double*) [clone .kd]", 10**15 + 10**4 * i, 10**15 + 10**4 * i + 5000) for i in range(40)]
    name = "1_kernel_trace.csv.gz" if gz else "1_kernel_trace.csv"
    _write(tmp_path / name, rows, gz=gz)
    out = _same(tmp_path, monkeypatch, arch="mi300x")
    (row,) = json.loads(out)
    assert row["kernel"] == "vecCopy(double*, double*)"
    assert row.get("occupancy", {}).get("dispatches") == 40, row.get("occupancy")
