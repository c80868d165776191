"""Readers for rocprof measurements: every format becomes a `Workload` of `Dispatch` records.

    from perfmodel.readers import read_workload
    wl = read_workload("workloads/vcopy/MI300X_A1")   # file or directory, format detected

Formats: rocprof v1 CSV (and its renamed headers), rocprofv2 CSV, rocprofv3 CSV
(counter collection / kernel trace / agent info), rocprof-compute workload directories
(pmc_perf.csv, per-pass pmc_perf_N.csv, timestamps.csv, sysinfo.csv, roofline.csv), the
rocpd long CSV format and rocpd SQLite databases. How each is recognised, in what order, and
which module reads it: the one table `perfmodel.readers.formats.FORMATS`.
"""

from __future__ import annotations

from pathlib import Path

from perfmodel.readers.records import Dispatch, Workload

__all__ = ["Dispatch", "Workload", "detect_format", "read_workload"]


def detect_format(path: str | Path) -> str:
    """The format name of ``path`` (see the table in :mod:`perfmodel.readers.formats`)."""
    from perfmodel.readers.formats import find

    return find(Path(path)).name


def read_workload(path: str | Path) -> Workload:
    """Read any supported rocprof output at ``path`` (file or directory).

    A file inside a rocprof-compute workload directory also picks up that directory's
    sysinfo.csv (for the gfx target) and timestamps.csv (for clean durations) when present.
    Raises InputError (one line: file, field, what was expected) on bad input.
    """
    from perfmodel.readers.formats import find

    p = Path(path)
    return find(p).read(p)
