"""`perfmodel validate` on rocprofv3 kernel traces, a chunk of rows at a time (the fast path).

A trace row measures nothing but time, so its measurement is the same for every row but the
duration and the timestamp flags; its identification depends only on (kernel, grid) (and the
Dispatch_ID where a manifest names dispatches). So each chunk of `trace_columns` is
identified and predicted once per distinct launch key, timed and flagged with numpy, and
added to the same `KernelSums` as the row path, in file order: the output is byte-identical
to reading the trace row by row (tests/test_trace_columns.py). Where a chunk is not plain (odd
quoting, a non-digit Dispatch_ID or timestamp, a bad cell), the rest of that file is read by
the row path, which gives its usual error line or flags.

The per-kernel occupancy (register, LDS, scratch and workgroup columns) is counted in the same
pass per distinct key (`trace_occupancy.OccupancyTable`) instead of a second read of the file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from perfmodel.arch import Arch
from perfmodel.counters import flags as flag_checks
from perfmodel.counters.measurement import Measurement
from perfmodel.errors import InputError
from perfmodel.inspect import trace_occupancy
from perfmodel.readers import csvio
from perfmodel.readers.records import Dispatch
from perfmodel.readers.rocprof_v3 import iter_kernel_trace, trace_grid
from perfmodel.readers.trace_columns import Chunk, TraceColumns, check_rows_read
from perfmodel.validate.identify import Manifest
from perfmodel.validate.sums import KernelSum, KernelSums

# what validate attaches as occupancy: rows, the error that stopped it, or None (read it again)
Occupancy = list[dict] | InputError | None


def trace_paths(wl) -> list[Path] | None:
    """The trace files of a kernel-trace-only workload (its dispatches are read lazily); else None."""
    from perfmodel.readers.rocprof_v3 import TraceDispatches

    return list(wl.dispatches.paths) if isinstance(wl.dispatches, TraceDispatches) else None


def trace_sums(
    wl, path, target: str | None, arch: Arch, manifest: Manifest | None, peaks: dict, chunk_rows: int | None = None
) -> tuple[list[KernelSum], set[str], Occupancy] | None:
    """Per-kernel sums of a kernel-trace-only workload, as `validate` builds them row by row,
    and the occupancy rows of its traces; None when the fast path does not apply (the counter
    formulas give a value without counters: the rows' measurements would differ)."""
    from perfmodel.counters.derive import deriver

    paths = trace_paths(wl)
    if paths is None:
        return None
    derive = deriver(wl, target, peaks=peaks)
    template = derive(Dispatch(kernel="", index=0, begin_ns=0, end_ns=1, time_source="-"))
    if template.flops or template.iops or template.bytes or template.cycles is not None or template.waves is not None:
        return None
    sums = KernelSums(arch, manifest)
    occ = _OccupancyPass(path, arch)
    reader = _Reader(sums, derive, template, occ, chunk_rows)
    for p in paths:
        reader.file(p)
    ks, sources = sums.result()
    return ks, sources, occ.result()


class _OccupancyPass:
    """The occupancy `validate` attaches (see report._attach_occupancy), counted per key."""

    def __init__(self, path, arch: Arch):
        self.files = {str(f) for f in trace_occupancy.validate_traces(path)}
        self.table = trace_occupancy.OccupancyTable(arch)
        self.error: InputError | None = None
        self.redo = False  # a file fell back to the row path: read the occupancy as before

    def result(self) -> Occupancy:
        if not self.files or self.redo:
            return None
        return self.error if self.error is not None else self.table.rows()


class _FileState:
    """Per-file launch keys: kernel, grid, identification group and occupancy key by key id."""

    def __init__(self):
        self.kernel: list[int] = []
        self.group: list[int] = []
        self.grid: list[int] = []
        self.occ: list[tuple | None] = []


class _Groups:
    """Identification groups (kernel, grid[, dispatch]) -> (ident id, prediction id), shared by
    the files of a workload."""

    def __init__(self):
        self.ids: dict[tuple, int] = {}
        self.ident: list[int] = []
        self.pred: list[int] = []
        self.idents: list[tuple[dict | None, str]] = []
        self.preds: list = []
        self.pred_ids: dict[int, int] = {}
        self.kernels: list[str] = []
        self.kernel_ids: dict[str, int] = {}

    def kernel_id(self, name: str) -> int:
        k = self.kernel_ids.get(name)
        if k is None:
            k = self.kernel_ids[name] = len(self.kernels)
            self.kernels.append(name)
        return k

    def add(self, key: tuple, ident: tuple[dict | None, str], pred) -> int:
        self.ids[key] = gid = len(self.ident)
        self.idents.append(ident)
        self.ident.append(len(self.idents) - 1)
        if pred is None:
            self.pred.append(-1)
        else:
            pid = self.pred_ids.get(id(pred))
            if pid is None:
                pid = self.pred_ids[id(pred)] = len(self.preds)
                self.preds.append(pred)
            self.pred.append(pid)
        return gid


class _Reader:
    """One workload's trace files into `KernelSums`, a chunk at a time."""

    def __init__(self, sums: KernelSums, derive, template: Measurement, occ: _OccupancyPass, chunk_rows: int):
        self.sums, self.derive, self.template, self.occ, self.chunk_rows = sums, derive, template, occ, chunk_rows
        self.groups = _Groups()
        man = sums.manifest
        self.rules = sorted({r.dispatch for r in man.rules if r.dispatch is not None}) if man else []

    def file(self, path: Path) -> None:
        where = str(path)
        occ = self.occ
        tc = TraceColumns(path, self.chunk_rows)
        occ_here = where in occ.files and occ.error is None and not occ.redo
        occ_cols = None
        state = _FileState()
        for chunk in tc.chunks():
            if chunk.fallback is None and occ_here and occ_cols is None:
                if tc.bom:
                    occ.redo, occ_here = True, False  # kernel_occupancy reads the BOM into a column name
                else:
                    try:
                        occ_cols = trace_occupancy.columns(tc.raw_header, where)
                    except InputError as e:
                        occ.error, occ_here = e, False
            fallback = chunk.fallback
            if fallback is None:
                try:
                    parsed = _parse_keys(chunk, tc, where)
                except InputError:
                    fallback = int(chunk.line[0])
            if fallback is not None:  # the row path reads the rest of the file
                if where in occ.files:
                    occ.redo = True
                for d in iter_kernel_trace(path, skip_before=fallback, skipped=tc.rows_read):
                    self.sums.add(d, self.derive(d))
                return
            self._chunk(chunk, parsed, state, tc)
            if occ_here:
                try:
                    _count_occupancy(chunk, state, occ, occ_cols, where)
                except InputError as e:
                    occ.error, occ_here = e, False
        check_rows_read(tc)

    def _identify(self, key: tuple, kernel: str, grid: int, index: int, i: int, tc: TraceColumns) -> int:
        gid = self.groups.ids.get(key)
        if gid is None:
            d = Dispatch(kernel=kernel, index=index, grid=grid, source=tc.where, time_source=self._ts(tc))
            case, how, pred = self.sums.identify(d, i)
            gid = self.groups.add(key, (case, how), pred)
        return gid

    @staticmethod
    def _ts(tc: TraceColumns) -> str:
        return f"{tc.path.name} (kernel trace)"

    def _chunk(self, chunk: Chunk, parsed, state: _FileState, tc: TraceColumns) -> None:
        """Identify what is new in the chunk in file order (as the row path would: identification
        and prediction errors come at the same dispatch), then add its rows."""
        groups, sums = self.groups, self.sums
        base = sums.n
        index = chunk.index
        for kernel, grid in parsed:
            state.kernel.append(groups.kernel_id(kernel))
            state.grid.append(grid)
            state.group.append(-1)
            state.occ.append(None)
        ruled = np.isin(index, self.rules) if self.rules else np.zeros(len(index), dtype=bool)
        # the first unruled row of each key without a group yet, and every ruled row
        free = np.flatnonzero(~ruled)
        keys, first = np.unique(chunk.key[free], return_index=True)
        events = [(int(free[f]), 0, k) for k, f in zip(keys.tolist(), first.tolist(), strict=True) if state.group[k] < 0]
        events += [(row, 1, int(chunk.key[row])) for row in np.flatnonzero(ruled).tolist()]
        rule_gid: dict[int, int] = {}
        for row, ruled_row, k in sorted(events):
            kernel, grid = groups.kernels[state.kernel[k]], state.grid[k]
            i = int(index[row])
            if ruled_row:
                rule_gid[row] = self._identify((kernel, grid, i), kernel, grid, i, base + row, tc)
            else:
                state.group[k] = self._identify((kernel, grid), kernel, grid, i, base + row, tc)
        row_group = np.asarray(state.group, dtype=np.int64)[chunk.key]
        for row, gid in rule_gid.items():
            row_group[row] = gid
        ident = np.asarray(groups.ident, dtype=np.int64)[row_group]
        pred = np.asarray(groups.pred, dtype=np.int64)[row_group]
        kernel = np.asarray(state.kernel, dtype=np.int64)[chunk.key]
        dur = chunk.end - chunk.begin
        timed = (dur > 0) & (dur <= flag_checks.MAX_DURATION_NS)
        times = dur.astype(np.float64) * 1e-9
        ts = self._ts(tc)
        row_flags: dict[int, list[str]] = {}
        for r in np.flatnonzero(~timed).tolist():
            d = Dispatch(kernel="", index=0, begin_ns=int(chunk.begin[r]), end_ns=int(chunk.end[r]), time_source=ts)
            row_flags[r] = flag_checks.timestamps(d)
        tmpl = replace(
            self.template, source=tc.where, time_source=ts, flags=list(self.template.flags), notes=list(self.template.notes)
        )
        sums.add_trace_rows(groups.kernels, kernel, pred, groups.preds, groups.idents, ident, index, times, timed, row_flags, tmpl)


def _parse_keys(chunk: Chunk, tc: TraceColumns, where: str) -> list[tuple[str, int]]:
    """(kernel, grid) of each new launch key, by the row path's own rules (errors: InputError)."""
    out = []
    width = len(tc.header)
    for row, canon, _raw in chunk.new_keys:
        cells = [""] * width
        for name, text in canon.items():
            cells[tc.col[name]] = text
        c = csvio.Cells(cells, tc.col, where, int(chunk.line[row]))
        out.append((csvio.clean_kernel(c.text("Kernel_Name")), trace_grid(c, tc.per_axis)))
    return out


def _count_occupancy(chunk: Chunk, state: _FileState, occ: _OccupancyPass, cols, where: str) -> None:
    """Add the chunk's rows to the occupancy table: per launch key, in order of first row."""
    counts = np.bincount(chunk.key, minlength=len(state.occ))
    keys, first = np.unique(chunk.key, return_index=True)
    new = {row: raw for row, _c, raw in chunk.new_keys}
    for kid, row in sorted(zip(keys.tolist(), first.tolist(), strict=True), key=lambda t: t[1]):
        at = f"{where}:{int(chunk.line[row])}"
        if state.occ[kid] is None:
            state.occ[kid] = trace_occupancy.resource_key(new[row], cols, at)
        occ.table.add(state.occ[kid], at, int(counts[kid]))
