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
    col = csvio.columns(header)
    counters = _counter_columns(header, keep)
    has_time = "Start_Timestamp" in col and "End_Timestamp" in col
    src = time_source or (f"{path.name} (same pass as the counters)" if has_time else "")
    gpus: set[str] = set()
    n = 0
    for line, row in rows:
        cells = csvio.Cells(row, col, where, line)
        d = _dispatch(cells, gpus, n if "Dispatch_ID" not in col else None)
        if has_time:
            d.begin_ns = cells.timestamp("Start_Timestamp", d.flags)
            d.end_ns = cells.timestamp("End_Timestamp", d.flags)
            d.time_source = src
        for i, h in counters:
            d.counters[h] = csvio.number(row[i] if i < len(row) else "", where=where, column=h, line=line)
        n += 1
        yield d
    if n == 0:
        raise InputError("no data rows (header only)", where=where)


def _counter_columns(header: list[str], keep: Container[str] | None) -> list[tuple[int, str]]:
    """(position, name) of the counter columns: by position, since merged files repeat names."""
    cols = [(i, h) for i, h in enumerate(header) if not csvio.is_metadata(h)]
    return cols if keep is None else [(i, h) for i, h in cols if h in keep]


def _dispatch(cells: csvio.Cells, gpus: set[str], row_index: int | None) -> Dispatch:
    """The dispatch a row describes, counters aside; ``row_index`` numbers files without Dispatch_ID."""
    gpu = cells.agent()
    csvio.check_one_gpu(gpus, gpu, cells.where)
    return Dispatch(
        kernel=csvio.clean_kernel(cells.text("Kernel_Name")),
        index=cells.integer("Dispatch_ID") if row_index is None else row_index,
        grid=cells.integer("Grid_Size"),
        workgroup=cells.integer("Workgroup_Size"),
        gpu=gpu,
        source=cells.where,
        lds_bytes=cells.integer("LDS_Per_Workgroup"),
        vgprs=cells.integer("Arch_VGPR") + cells.integer("Accum_VGPR"),
        sgprs=cells.integer("SGPR"),
    )


def read(path: Path, *, keep: Container[str] | None = None) -> list[Dispatch]:
    return list(iter_dispatches(path, keep=keep))
