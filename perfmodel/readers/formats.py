"""The one table of rocprof formats: how each is recognised, by content not name, and read.

Order matters: the first entry whose ``detect`` says yes reads the path. Directories first (a
rocprof-compute workload, then rocprofv3 pass_N/ folders of one run, then rocprofv3 CSV files,
then one rocpd database, then one rocprofv3 JSON result), then files (the SQLite magic, the
rocprofv3 JSON opening, then the CSV header: long counters, agent info, kernel trace, wide).
Adding a profiler format is one `Format` entry here plus one reader module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import (
    compute_workload,
    csvio,
    long_csv,
    pass_folders,
    rocpd_sqlite,
    rocprof_json,
    rocprof_v3,
    sysinfo,
    wide_csv,
)
from perfmodel.readers.records import Dispatch, Workload


@dataclass(frozen=True)
class Format:
    """A format as users see it (``name``), its recogniser and its reader.

    ``detect`` answers for any path that exists; on an unreadable file it may raise the
    InputError that says why (empty, not UTF-8), since no later entry could read it either.
    """

    name: str
    detect: Callable[[Path], bool]
    read: Callable[[Path], Workload]


def _columns(path: Path) -> set[str]:
    """The canonical CSV header of a file; nothing for a directory."""
    if path.is_dir():
        return set()
    header = csvio.header(path)
    return set(header)


def _has_columns(*names: str) -> Callable[[Path], bool]:
    """A recogniser for CSV files whose header holds all of ``names``."""
    return lambda path: set(names) <= _columns(path)


def _lone_csv(name: str, dispatches: Callable[[Path], list[Dispatch]]) -> Callable[[Path], Workload]:
    """A reader for one CSV file; a sysinfo.csv beside it (a pmc_perf.csv taken out of its
    workload directory) still gives the gfx target."""

    def read(path: Path) -> Workload:
        wl = Workload(path=str(path), format=name)
        wl.dispatches = dispatches(path)
        sysinfo.attach(wl, path.parent / "sysinfo.csv")
        return wl

    return read


WORKLOAD = "rocprof-compute workload"
PASSES = pass_folders.FORMAT
V3_DIR = "rocprofv3 csv directory"
SQLITE = "rocpd sqlite"
JSON = rocprof_json.FORMAT
LONG = "counter csv (long)"
AGENT_INFO = "rocprofv3 agent info"
KERNEL_TRACE = "rocprofv3 kernel trace"
WIDE = "rocprof csv (wide)"

FORMATS: tuple[Format, ...] = (
    Format(WORKLOAD, compute_workload.is_workload_dir, compute_workload.read),
    Format(PASSES, pass_folders.is_pass_dir, pass_folders.read),
    Format(V3_DIR, rocprof_v3.is_v3_dir, rocprof_v3.read),
    Format(SQLITE, rocpd_sqlite.is_rocpd, rocpd_sqlite.read_file_or_dir),
    Format(JSON, lambda p: rocprof_json.is_rocprof_json(p) or rocprof_json.is_json_dir(p), rocprof_json.read_file_or_dir),
    Format(LONG, _has_columns("Counter_Name", "Counter_Value"), _lone_csv(LONG, long_csv.read)),
    Format(AGENT_INFO, _has_columns("Agent_Type"), rocprof_v3.refuse_agent_info),
    Format(KERNEL_TRACE, _has_columns("Kernel_Name", "Kind", "Start_Timestamp"), rocprof_v3.read),
    Format(WIDE, _has_columns("Kernel_Name"), _lone_csv(WIDE, wide_csv.read)),
)


def find(path: Path) -> Format:
    """The format of ``path``: the first entry that recognises it; else one InputError line."""
    where = str(path)
    if not path.exists():
        raise InputError("no such file or directory", where=where)
    for fmt in FORMATS:
        if fmt.detect(path):
            return fmt
    if path.is_dir():
        raise InputError(
            "nothing recognisable here: expected pmc_perf.csv / pmc_perf_N.csv (rocprof-compute),"
            " *_counter_collection.csv / *_kernel_trace.csv (rocprofv3), one rocpd *.db or one rocprofv3 *_results.json",
            where=where,
        )
    raise InputError(
        "not a rocprof file: no kernel-name column (KernelName / Kernel_Name) and no Counter_Name",
        where=where,
    )
