"""Readers for rocprof measurements: every format becomes a `Workload` of `Dispatch` records.

    from perfmodel.readers import read_workload
    wl = read_workload("workloads/vcopy/MI300X_A1")   # file or directory, format detected

Formats: rocprof v1 CSV (and its renamed headers), rocprofv2 CSV, rocprofv3 CSV
(counter collection / kernel trace / agent info), rocprof-compute workload directories
(pmc_perf.csv, per-pass pmc_perf_N.csv, timestamps.csv, sysinfo.csv, roofline.csv), the
rocpd long CSV format and rocpd SQLite databases.
"""

from __future__ import annotations

from pathlib import Path

from perfmodel.readers.records import Dispatch, Workload

__all__ = ["Dispatch", "Workload", "detect_format", "read_workload"]


def detect_format(path: str | Path) -> str:
    """The format name of ``path`` (see :mod:`perfmodel.readers.detect`)."""
    from perfmodel.readers.detect import detect

    return detect(path)


def read_workload(path: str | Path) -> Workload:
    """Read any supported rocprof output at ``path`` (file or directory).

    A file inside a rocprof-compute workload directory also picks up that directory's
    sysinfo.csv (for the gfx target) and timestamps.csv (for clean durations) when present.
    Raises InputError (one line: file, field, what was expected) on bad input.
    """
    import perfmodel.readers.detect as det
    from perfmodel.readers import compute_workload, long_csv, rocpd_sqlite, rocprof_v3, wide_csv

    p = Path(path)
    fmt = det.detect(p)
    if fmt == det.WORKLOAD:
        return compute_workload.read(p)
    if fmt in (det.V3_DIR, det.KERNEL_TRACE):
        return rocprof_v3.read(p)
    if fmt == det.SQLITE:
        return rocpd_sqlite.read(
            p if p.is_file() else next(q for q in sorted(p.glob("*.db")) if rocpd_sqlite.is_sqlite(q))
        )
    if fmt == det.AGENT_INFO:
        from perfmodel.errors import InputError

        raise InputError("an agent-info file holds no dispatches; pass its directory", where=str(p))
    wl = Workload(path=str(p), format=fmt)
    wl.dispatches = long_csv.read(p) if fmt == det.LONG else wide_csv.read(p)
    sysinfo = p.parent / "sysinfo.csv"
    if sysinfo.is_file():
        from perfmodel.readers.sysinfo import read_sysinfo

        wl.sysinfo, notes = read_sysinfo(sysinfo)
        wl.notes += notes
        wl.gfx = wl.sysinfo.get("gfx") or ""
    return wl
