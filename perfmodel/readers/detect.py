"""Recognise a rocprof output format from a path (file or directory), by content not name.

File: SQLite magic -> rocpd database; CSV header with Counter_Name/Counter_Value -> long
format; with Kind/Start_Timestamp and no counters -> rocprofv3 kernel trace; with Agent_Type
-> agent info; with a kernel-name column -> wide rocprof v1/v2/v3 CSV.
Directory: a rocprof-compute workload (pmc_perf*.csv), else rocprofv3 CSV files, else one
rocpd database.
"""

from __future__ import annotations

from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import compute_workload, csvio, rocpd_sqlite, rocprof_v3

WORKLOAD = "rocprof-compute workload"
WIDE = "rocprof csv (wide)"
LONG = "counter csv (long)"
KERNEL_TRACE = "rocprofv3 kernel trace"
AGENT_INFO = "rocprofv3 agent info"
V3_DIR = "rocprofv3 csv directory"
SQLITE = "rocpd sqlite"


def detect(path: str | Path) -> str:
    """The format name of ``path``; InputError when nothing is recognisable."""
    p = Path(path)
    where = str(p)
    if not p.exists():
        raise InputError("no such file or directory", where=where)
    if p.is_dir():
        if compute_workload.is_workload_dir(p):
            return WORKLOAD
        if any(rocprof_v3.find(p, pat) for pat in rocprof_v3.PATTERNS[:2]):
            return V3_DIR
        dbs = [q for q in sorted(p.glob("*.db")) if rocpd_sqlite.is_sqlite(q)]
        if len(dbs) == 1:
            return SQLITE
        raise InputError(
            "nothing recognisable here: expected pmc_perf.csv / pmc_perf_N.csv (rocprof-compute),"
            " *_counter_collection.csv / *_kernel_trace.csv (rocprofv3) or one rocpd *.db",
            where=where,
        )
    if rocpd_sqlite.is_sqlite(p):
        return SQLITE
    header, _ = csvio.rows(p)
    cols = set(header)
    if {"Counter_Name", "Counter_Value"} <= cols:
        return LONG
    if "Agent_Type" in cols:
        return AGENT_INFO
    if "Kernel_Name" in cols and "Kind" in cols and "Start_Timestamp" in cols:
        return KERNEL_TRACE
    if "Kernel_Name" in cols:
        return WIDE
    raise InputError(
        "not a rocprof file: no kernel-name column (KernelName / Kernel_Name) and no Counter_Name",
        where=where,
    )
