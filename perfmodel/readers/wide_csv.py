"""Wide CSV: one row per dispatch, counters as columns.

Covers rocprof v1 (``Index,KernelName,...,BeginNs,EndNs``), the rocprof-compute renamed headers
(``Dispatch_ID,Kernel_Name,...,Start_Timestamp,End_Timestamp``), rocprofv2 output (same names
plus ``Correlation_ID``, ``XCC_Index``) and rocprofv3 CSV converted to that layout. Per-channel
columns (``TCC_HIT[3]``) are kept as counters; ``_sum`` columns are the device totals.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import csvio
from perfmodel.readers.records import Dispatch


def iter_dispatches(
    path: Path, *, keep: Container[str] | None = None, time_source: str = ""
) -> Iterator[Dispatch]:
    """Stream the dispatches of one wide CSV. ``keep`` limits which counters are stored."""
    where = str(path)
    header, rows = csvio.rows(path)
    csvio.require(header, ("Kernel_Name",), where, "a rocprof dispatch CSV")
    col = {h: i for i, h in enumerate(header) if h}
    counter_cols = [(i, h) for i, h in enumerate(header) if not csvio.is_metadata(h)]
    if keep is not None:
        counter_cols = [(i, h) for i, h in counter_cols if h in keep]
    has_time = "Start_Timestamp" in col and "End_Timestamp" in col
    src = time_source or (f"{path.name} (same pass as the counters)" if has_time else "")
    gpus: set[str] = set()
    n = 0
    for line, row in rows:

        def cell(name: str, default: str = "") -> str:
            i = col.get(name)
            return row[i] if i is not None and i < len(row) else default  # noqa: B023 - called within this iteration

        def integer(name: str) -> int:
            t = cell(name).strip()
            return int(csvio.number(t, where=where, column=name, line=line)) if t else 0  # noqa: B023 - called within this iteration

        gpu = cell("GPU_ID").strip()
        gpus.add(gpu)
        if len(gpus) > 1:
            raise InputError(
                f"mixed GPUs in one file (GPU_ID {', '.join(sorted(gpus))}); split it per GPU",
                where=where,
            )
        d = Dispatch(
            kernel=csvio.clean_kernel(cell("Kernel_Name")),
            index=integer("Dispatch_ID") if "Dispatch_ID" in col else n,
            grid=integer("Grid_Size"),
            workgroup=integer("Workgroup_Size"),
            gpu=gpu,
            source=where,
            lds_bytes=integer("LDS_Per_Workgroup"),
            vgprs=integer("Arch_VGPR") + integer("Accum_VGPR"),
            sgprs=integer("SGPR"),
        )
        if has_time:
            for name in ("Start_Timestamp", "End_Timestamp"):
                v = csvio.timestamp(cell(name), where=where, column=name, line=line, flags=d.flags)
                if name == "Start_Timestamp":
                    d.begin_ns = v
                else:
                    d.end_ns = v
            d.time_source = src
        for i, h in counter_cols:
            d.counters[h] = csvio.number(row[i] if i < len(row) else "", where=where, column=h, line=line)
        n += 1
        yield d
    if n == 0:
        raise InputError("no data rows (header only)", where=where)


def read(path: Path, *, keep: Container[str] | None = None) -> list[Dispatch]:
    return list(iter_dispatches(path, keep=keep))
