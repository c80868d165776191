"""Bad input: one clear line (InputError, exit status 2 in the CLI), never a traceback."""

from __future__ import annotations

import pytest

from data_paths import VCOPY_MI200
from perfmodel.counters import derive_workload
from perfmodel.errors import InputError
from perfmodel.readers import read_workload


def _lines():
    return (VCOPY_MI200 / "pmc_perf.csv").read_text().splitlines(keepends=True)


def _raises(path, pattern, derive=False):
    with pytest.raises(InputError, match=pattern) as e:
        wl = read_workload(path)
        if derive:
            derive_workload(wl)
    msg = str(e.value)
    assert "\n" not in msg and msg
    return msg


def _copy_dir(tmp_path, lines):
    (tmp_path / "pmc_perf.csv").write_text("".join(lines))
    (tmp_path / "sysinfo.csv").write_bytes((VCOPY_MI200 / "sysinfo.csv").read_bytes())
    return tmp_path


def test_empty_file(tmp_path):
    p = tmp_path / "pmc_perf.csv"
    p.write_text("")
    assert "file is empty" in _raises(p, "empty")


def test_header_only(tmp_path):
    p = tmp_path / "results.csv"
    p.write_text(_lines()[0])
    _raises(p, "no data rows")


def test_truncated_file(tmp_path):
    lines = _lines()
    p = tmp_path / "results.csv"
    p.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    _raises(p, r"line 3 has \d+ fields, the header has \d+ \(truncated")


def test_missing_counter_column_names_formula_and_counter(tmp_path):
    lines = _lines()
    header = lines[0].rstrip("\n").split(",")
    i = header.index("TCC_EA_WRREQ_64B_sum")
    # the kernel name holds commas inside quotes: drop the same column counted from the end instead
    from_end = len(header) - i
    cut = []
    for ln in lines:
        cells = ln.rstrip("\n").split(",")
        del cells[len(cells) - from_end]
        cut.append(",".join(cells) + "\n")
    msg = _raises(_copy_dir(tmp_path, cut), "formula write:hbm", derive=True)
    assert "TCC_EA_WRREQ_64B_sum" in msg and "pmc_perf.csv" in msg


def test_non_numeric_cell(tmp_path):
    lines = _lines()
    lines[1] = lines[1].replace(",524288.0,", ",abc,", 1)
    msg = _raises(_copy_dir(tmp_path, lines), "non-numeric value 'abc'")
    assert "TCP_TOTAL_CACHE_ACCESSES_sum" in msg and "line 2" in msg


def test_mixed_gpus(tmp_path):
    lines = _lines()
    lines[2] = lines[2].replace('[clone .kd]",2,', '[clone .kd]",3,', 1)
    _raises(_copy_dir(tmp_path, lines), r"mixed GPUs in one file \(GPU_ID 2, 3\)")


def test_unrecognisable_directory(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    _raises(tmp_path, "nothing recognisable here")


def test_not_a_rocprof_csv(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    _raises(p, "not a rocprof file")


def test_binary_file(tmp_path):
    p = tmp_path / "x.csv"
    p.write_bytes(b"\xff\xfe\x00\x81garbage\x00")
    _raises(p, "not a UTF-8 text CSV")


def test_missing_path(tmp_path):
    _raises(tmp_path / "nope", "no such file")


def test_unknown_gfx_in_sysinfo(tmp_path):
    d = _copy_dir(tmp_path, _lines())
    text = (d / "sysinfo.csv").read_text().replace(",gfx90a,", ",gfx9zz,")
    (d / "sysinfo.csv").write_text(text)
    _raises(d, "gfx9zz", derive=True)


def test_no_gfx_anywhere(tmp_path):
    p = tmp_path / "results.csv"
    p.write_text("".join(_lines()))
    _raises(p, "gfx target unknown", derive=True)
