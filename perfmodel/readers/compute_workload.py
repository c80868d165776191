"""rocprof-compute workload directories (``workloads/<name>/<GPU>/``).

Reads ``pmc_perf.csv`` (all passes joined: wide, or long in rocpd mode), the per-pass
``pmc_perf_N.csv`` files when kept (``results_pmc_perf_N.csv`` in rocpd mode), ``timestamps.csv``
(the counter-free timing pass), each also gzipped (``.csv.gz``), ``sysinfo.csv`` and
``roofline.csv``. Duration preference: timestamps.csv, else the median of the per-pass durations,
else the merged file's own (counter-pass) timestamps; the chosen source is recorded on every
dispatch.
"""

from __future__ import annotations

import re
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import csvio, join, long_csv, sysinfo, wide_csv
from perfmodel.readers.records import Workload

# per-pass files: pmc_perf_N.csv (csv mode), results_pmc_perf_N.csv (rocpd mode, before analyze
# merges them into pmc_perf.csv); gzipped from rocprof-compute 3.7 on
_PASS = re.compile(r"^(?:results_)?pmc_perf_(\d+)\.csv(?:\.gz)?$")


def _file(path: Path, name: str) -> Path:
    """``path/name``, or ``path/name.gz`` where only that exists (rocprof-compute gzips its
    artifacts from 3.7 on: ``pmc_perf.csv.gz``; csvio reads gzip by content)."""
    p = path / name
    gz = path / (name + ".gz")
    return gz if not p.is_file() and gz.is_file() else p


def is_workload_dir(path: Path) -> bool:
    return path.is_dir() and (
        _file(path, "pmc_perf.csv").is_file() or any(_PASS.match(p.name) for p in path.iterdir())
    )


def _is_long(path: Path) -> bool:
    header = csvio.header(path)
    return "Counter_Name" in header


def _read_counters(path: Path, keep=None):
    return long_csv.read(path, keep=keep) if _is_long(path) else wide_csv.read(path, keep=keep)


def read(path: Path) -> Workload:
    wl = Workload(path=str(path), format="rocprof-compute workload")
    sysinfo.attach(wl, path / "sysinfo.csv")
    if (path / "roofline.csv").is_file():
        wl.roofline = sysinfo.read_roofline(path / "roofline.csv")
    pass_files = sorted(
        (p for p in path.iterdir() if _PASS.match(p.name)), key=lambda p: int(_PASS.match(p.name).group(1))
    )
    merged = _file(path, "pmc_perf.csv")
    dispatches = _read_counters(merged) if merged.is_file() else None
    if pass_files:
        passes = [_read_counters(p) for p in pass_files]
        plain = all(p.name == f"pmc_perf_{i}.csv" for i, p in enumerate(pass_files))
        label = f"pmc_perf_0..{len(pass_files) - 1}.csv" if plain else f"{pass_files[0].name}..{pass_files[-1].name}"
        dispatches = join.merge_passes(dispatches, passes, label)
    if not dispatches:
        raise InputError("no dispatches in pmc_perf.csv", where=str(path))
    ts = _file(path, "timestamps.csv")
    if ts.is_file():
        timing = wide_csv.read(ts, keep=())
        n = join.apply_timing(dispatches, timing, "timestamps.csv (counter-free timing pass)")
        if n < len(dispatches):
            wl.notes.append(
                f"timestamps.csv matched {n} of {len(dispatches)} dispatches by (kernel, grid, occurrence);"
                " the others keep counter-pass timestamps"
            )
    wl.dispatches = dispatches
    return wl
