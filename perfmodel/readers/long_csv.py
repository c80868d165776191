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
from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import csvio
from perfmodel.readers.records import Dispatch

PassKey = tuple[str, str]  # (start, end) as written: the rows of one replay pass share them


@dataclass
class _Pending:
    """A dispatch being assembled from its rows: identity plus summed counters per replay pass."""

    dispatch: Dispatch
    passes: dict[PassKey, dict[str, float]] = field(default_factory=dict)


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def _open(path: Path):
    """(where, row iterator, column index, whether rows carry timestamps) of a long CSV whose
    header has the columns every long-format reader needs."""
    where = str(path)
    header, rows = csvio.rows(path)
    csvio.require(
        header,
        ("Kernel_Name", "Dispatch_ID", "Counter_Name", "Counter_Value"),
        where,
        "a long-format counter CSV",
    )
    col = csvio.columns(header)
    return where, rows, col, "Start_Timestamp" in col and "End_Timestamp" in col


def read(path: Path, *, keep: Container[str] | None = None) -> list[Dispatch]:
    """The dispatches of one long CSV, in first-seen order. ``keep`` limits the counters stored."""
    where, rows, col, has_time = _open(path)
    pending: dict[tuple[str, str], _Pending] = {}
    gpus: set[str] = set()
    for line, row in rows:
        cells = csvio.Cells(row, col, where, line)
        gpu = cells.agent()
        csvio.check_one_gpu(gpus, gpu, where)
        key = (gpu, cells.text("Dispatch_ID").strip())
        if key not in pending:
            pending[key] = _Pending(_dispatch(cells, gpu))
        p = pending[key]
        pkey = _note_pass(cells, p) if has_time else ("", "")
        _add_counter(cells, p.passes.setdefault(pkey, {}), keep)
    if not pending:
        raise InputError("no data rows (header only)", where=where)
    return [_finish(p, path.name) for p in pending.values()]


class NotContiguous(Exception):
    """A dispatch's rows are not together (or its ID went back): `iter_read` cannot stream the
    file; read it whole with `read` instead."""


def iter_read(path: Path, *, keep: Container[str] | None = None):
    """The dispatches of one long CSV one at a time, holding only the dispatch being read.

    rocprofv3 writes each dispatch's rows together, in increasing dispatch ID; a file that does
    not (a dispatch ID lower than or equal to the previous one, once that dispatch is finished)
    raises NotContiguous, and the caller falls back to `read`. Same dispatches as `read`.
    """
    where, rows, col, has_time = _open(path)
    gpus: set[str] = set()
    cur_key: tuple[str, str] | None = None
    cur: _Pending | None = None
    last_id: int | None = None
    for line, row in rows:
        cells = csvio.Cells(row, col, where, line)
        gpu = cells.agent()
        csvio.check_one_gpu(gpus, gpu, where)
        key = (gpu, cells.text("Dispatch_ID").strip())
        if key != cur_key:
            if cur is not None:
                yield _finish(cur, path.name)
            cur = _Pending(_dispatch(cells, gpu))
            if last_id is not None and cur.dispatch.index <= last_id:
                raise NotContiguous(f"{where}: line {line}: dispatch {cur.dispatch.index} after {last_id}")
            last_id, cur_key = cur.dispatch.index, key
        pkey = _note_pass(cells, cur) if has_time else ("", "")
        _add_counter(cells, cur.passes.setdefault(pkey, {}), keep)
    if cur is None:
        raise InputError("no data rows (header only)", where=where)
    yield _finish(cur, path.name)


def _dispatch(cells: csvio.Cells, gpu: str) -> Dispatch:
    """Identity and geometry from the first row of a dispatch (the others repeat them)."""
    return Dispatch(
        kernel=csvio.clean_kernel(cells.text("Kernel_Name")),
        index=int(cells.number("Dispatch_ID", default=None)),
        grid=cells.integer("Grid_Size"),
        workgroup=cells.integer("Workgroup_Size"),
        gpu=gpu,
        source=cells.where,
        lds_bytes=cells.integer("LDS_Per_Workgroup"),
    )


def _note_pass(cells: csvio.Cells, p: _Pending) -> PassKey:
    """The row's replay pass; a pass seen for the first time adds its duration to the dispatch."""
    pkey = (cells.text("Start_Timestamp").strip(), cells.text("End_Timestamp").strip())
    if pkey in p.passes:
        return pkey
    d = p.dispatch
    flags: list[str] = []
    b = cells.timestamp("Start_Timestamp", flags)
    e = cells.timestamp("End_Timestamp", flags)
    d.flags.extend(f for f in flags if f not in d.flags)
    if b is not None and e is not None:
        d.pass_durations_ns.append(e - b)
        if d.begin_ns is None:
            d.begin_ns = b
    return pkey


def _add_counter(cells: csvio.Cells, counters: dict[str, float], keep: Container[str] | None) -> None:
    """Sum the row's value into its pass: one counter has a row per XCC / instance."""
    name = cells.text("Counter_Name").strip()
    if not name:
        raise InputError(f"line {cells.line}: empty Counter_Name", where=cells.where)
    value = cells.number("Counter_Value", default=None)
    if keep is None or name in keep:
        counters[name] = counters.get(name, 0.0) + value


def _finish(p: _Pending, file_name: str) -> Dispatch:
    """Fold the passes: a counter seen in several is their median (all kept in ``replay``),
    the duration the median pass duration - no pass here is counter-free."""
    d = p.dispatch
    seen: dict[str, list[float]] = {}
    for pc in p.passes.values():
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
            f"{file_name}: median over {n} counter pass{'es' if n > 1 else ''} (no counter-free pass)"
        )
    return d
