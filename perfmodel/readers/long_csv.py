"""Long ("tall") counter CSV: one row per (dispatch, counter).

Covers the rocpd output flattened by rocprof-compute (``GPU_ID,Dispatch_ID,...,Kernel_Name,
Start_Timestamp,End_Timestamp,Kernel_ID,Counter_Name,Counter_Value``, newer files add ``GUID``
and ``Correlation_Id``) and rocprofv3's ``*_counter_collection.csv`` (same shape, other
spellings). Rows stream; only the pivoted numbers are kept.

Each replay pass of a dispatch has its own Start/End timestamps, so rows are grouped into
passes by their timestamps: the same counter in one pass is summed (per-XCC rows), the same
counter in different passes is a replay value (kept so disagreement can be flagged), and the
duration is the median over passes - there is no counter-free pass in these files.
"""

from __future__ import annotations

import statistics
from collections.abc import Container
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import csvio
from perfmodel.readers.records import Dispatch


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def read(path: Path, *, keep: Container[str] | None = None) -> list[Dispatch]:
    where = str(path)
    header, rows = csvio.rows(path)
    csvio.require(
        header,
        ("Kernel_Name", "Dispatch_ID", "Counter_Name", "Counter_Value"),
        where,
        "a long-format counter CSV",
    )
    col = {h: i for i, h in enumerate(header) if h}
    has_time = "Start_Timestamp" in col and "End_Timestamp" in col
    order: list[tuple[str, str]] = []
    meta: dict[tuple[str, str], Dispatch] = {}
    passes: dict[tuple[str, str], dict[tuple[str, str], dict[str, float]]] = {}
    gpus: set[str] = set()
    for line, row in rows:

        def cell(name: str) -> str:
            i = col.get(name)
            return row[i].strip() if i is not None and i < len(row) else ""  # noqa: B023 - called within this iteration

        gpu = cell("GPU_ID")
        gpus.add(gpu)
        if len(gpus) > 1:
            raise InputError(
                f"mixed GPUs in one file (GPU_ID {', '.join(sorted(gpus))}); split it per GPU", where=where
            )
        key = (gpu, cell("Dispatch_ID"))
        d = meta.get(key)
        if d is None:
            idx = cell("Dispatch_ID")
            d = Dispatch(
                kernel=csvio.clean_kernel(cell("Kernel_Name")),
                index=int(csvio.number(idx, where=where, column="Dispatch_ID", line=line)),
                grid=int(csvio.number(cell("Grid_Size") or "0", where=where, column="Grid_Size", line=line)),
                workgroup=int(
                    csvio.number(
                        cell("Workgroup_Size") or "0", where=where, column="Workgroup_Size", line=line
                    )
                ),
                gpu=gpu,
                source=where,
                lds_bytes=int(
                    csvio.number(
                        cell("LDS_Per_Workgroup") or "0", where=where, column="LDS_Per_Workgroup", line=line
                    )
                ),
            )
            meta[key] = d
            order.append(key)
            passes[key] = {}
        pkey = (cell("Start_Timestamp"), cell("End_Timestamp")) if has_time else ("", "")
        if pkey not in passes[key] and has_time:
            flags: list[str] = []
            b = csvio.timestamp(pkey[0], where=where, column="Start_Timestamp", line=line, flags=flags)
            e = csvio.timestamp(pkey[1], where=where, column="End_Timestamp", line=line, flags=flags)
            d.flags.extend(f for f in flags if f not in d.flags)
            if b is not None and e is not None:
                d.pass_durations_ns.append(e - b)
                if d.begin_ns is None:
                    d.begin_ns = b
        pc = passes[key].setdefault(pkey, {})
        name = cell("Counter_Name")
        if not name:
            raise InputError(f"line {line}: empty Counter_Name", where=where)
        value = csvio.number(cell("Counter_Value"), where=where, column="Counter_Value", line=line)
        if keep is None or name in keep:
            pc[name] = pc.get(name, 0.0) + value
    if not order:
        raise InputError("no data rows (header only)", where=where)
    out = []
    for key in order:
        d = meta[key]
        seen: dict[str, list[float]] = {}
        for pc in passes[key].values():
            for name, v in pc.items():
                seen.setdefault(name, []).append(v)
        for name, vals in seen.items():
            d.counters[name] = vals[0] if len(vals) == 1 else _median(vals)
            if len(vals) > 1:
                d.replay[name] = vals
        if d.pass_durations_ns:
            dur = _median(d.pass_durations_ns)
            d.end_ns = d.begin_ns + dur if d.begin_ns is not None else None
            n = len(d.pass_durations_ns)
            d.time_source = (
                f"{path.name}: median over {n} counter pass{'es' if n > 1 else ''} (no counter-free pass)"
            )
        out.append(d)
    return out
