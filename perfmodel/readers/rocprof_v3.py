"""rocprofv3 CSV output: ``*_counter_collection.csv`` (long), ``*_kernel_trace.csv`` (timing)
and ``*_agent_info.csv`` (gfx target, XCC count, wave size).

A kernel trace taken without counters is the clean timing source; it is joined to the counter
dispatches by (kernel, grid, occurrence).
"""

from __future__ import annotations

import math
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import csvio, join, long_csv
from perfmodel.readers.records import Dispatch, Workload

PATTERNS = ("*_counter_collection.csv", "*_kernel_trace.csv", "*_agent_info.csv")


def find(path: Path, pattern: str) -> list[Path]:
    """Files matching ``pattern`` or ``pattern.gz`` (gzip is read by content, see csvio)."""
    pats = (pattern, pattern + ".gz")
    if path.is_dir():
        return sorted({f for pat in pats for f in path.rglob(pat)})
    return [path] if any(path.match(pat) for pat in pats) else []


def is_v3_dir(path: Path) -> bool:
    """A directory (searched to any depth) holding counter-collection or kernel-trace CSVs;
    agent info alone holds no dispatches."""
    return path.is_dir() and any(find(path, pat) for pat in PATTERNS[:2])


def refuse_agent_info(path: Path) -> Workload:
    """An agent-info file passed alone: say where the dispatches are rather than read nothing."""
    raise InputError("an agent-info file holds no dispatches; pass its directory", where=str(path))


def read_kernel_trace(path: Path) -> list[Dispatch]:
    """Timing-only dispatches of a kernel trace (no counters)."""
    return list(iter_kernel_trace(path))


def trace_grid(cells: csvio.Cells, per_axis: bool) -> int:
    """Work-items of a kernel-trace row; rocprofv3 writes the grid per axis (a blank axis is 1)."""
    if per_axis:
        return int(math.prod(cells.number(f"Grid_Size_{axis}", 1) for axis in "XYZ"))
    return int(cells.number("Grid_Size"))


def trace_workgroup(cells: csvio.Cells, per_axis: bool) -> int:
    """Work-items per workgroup of a kernel-trace row (per axis as rocprofv3 writes it, a blank
    axis is 1; one column in older spellings); 0 when the trace does not record it."""
    if per_axis:
        return int(math.prod(cells.number(f"Workgroup_Size_{axis}", 1) for axis in "XYZ"))
    return cells.integer("Workgroup_Size")


def iter_kernel_trace(path: Path, skip_before: int = 0, skipped: int = 0):
    """The dispatches of a kernel trace one at a time, in file order (nothing kept). The
    columnar reader hands over mid-file: rows ending before line ``skip_before`` (``skipped``
    of them) were read there."""
    where = str(path)
    header, rows = csvio.rows(path)
    csvio.require(header, ("Kernel_Name", "Start_Timestamp", "End_Timestamp"), where, "a kernel trace")
    col = csvio.columns(header)
    per_axis = "Grid_Size_X" in col  # rocprofv3 writes the grid per axis
    wg_per_axis = "Workgroup_Size_X" in col
    time_source = f"{path.name} (kernel trace)"
    n = skipped
    for line, row in rows:
        if line < skip_before:
            continue
        cells = csvio.Cells(row, col, where, line)
        grid = trace_grid(cells, per_axis)
        d = Dispatch(
            kernel=csvio.clean_kernel(cells.text("Kernel_Name")),
            index=int(cells.number("Dispatch_ID", n)),
            grid=grid,
            workgroup=trace_workgroup(cells, wg_per_axis),
            gpu=cells.agent(),
            source=where,
            time_source=time_source,
        )
        d.begin_ns = cells.timestamp("Start_Timestamp", d.flags)
        d.end_ns = cells.timestamp("End_Timestamp", d.flags)
        n += 1
        yield d
    if not n:
        raise InputError("no data rows (header only)", where=where)


class Restart(Exception):
    """A streamed counter file turned out not to be streamable after dispatches were handed out:
    the consumer starts again (the dispatches are now held in a list)."""


class CounterDispatches:
    """The dispatches of one rocprofv3 counter-collection CSV, streamed (`long_csv.iter_read`)
    when its rows come dispatch by dispatch, as rocprofv3 writes them. If they do not, the file
    is read whole once and a streaming pass in progress raises Restart. Indexing, len() and
    `materialize` give the list."""

    def __init__(self, path: Path):
        self.path = path
        self._list: list[Dispatch] | None = None

    def materialize(self) -> list[Dispatch]:
        if self._list is None:
            try:
                self._list = list(long_csv.iter_read(self.path))
            except long_csv.NotContiguous:
                self._list = long_csv.read(self.path)
        return self._list

    def __iter__(self):
        if self._list is not None:
            yield from self._list
            return
        try:
            yield from long_csv.iter_read(self.path)
        except long_csv.NotContiguous:
            self._list = long_csv.read(self.path)
            raise Restart(str(self.path)) from None

    def __bool__(self) -> bool:
        return bool(self._list) if self._list is not None else any(True for _ in self._head())

    def _head(self):
        try:
            yield next(iter(long_csv.iter_read(self.path)))
        except (StopIteration, long_csv.NotContiguous):
            return

    def __len__(self) -> int:
        return len(self.materialize())

    def __getitem__(self, i):
        return self.materialize()[i]


class TraceDispatches:
    """The dispatches of kernel-trace files without counters, read again on every pass and never
    held in memory: `perfmodel validate` aggregates them per kernel as they stream by. Indexing
    and len() read the files (for tests and small inputs)."""

    def __init__(self, paths: list[Path]):
        self.paths = list(paths)

    def __iter__(self):
        for p in self.paths:
            yield from iter_kernel_trace(p)

    def __bool__(self) -> bool:
        return any(True for _ in self)  # stops at the first dispatch

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getitem__(self, i):
        return list(self)[i]


def read_agent_info(path: Path) -> dict:
    """The GPU agent's gfx target and shape; several different GPU targets are an error."""
    where = str(path)
    header, rows = csvio.rows(path)
    csvio.require(header, ("Agent_Type", "Name"), where, "an agent-info CSV")
    col = csvio.columns(header)
    gpus = []
    for line, row in rows:
        cells = csvio.Cells(row, col, where, line)
        if cells.text("Agent_Type").strip().upper() != "GPU":
            continue
        info = {"gfx": cells.text("Name").strip().lower()}
        for text_key, name in (("gpu_model", "Product_Name"), ("gpu_model", "Marketing_Name")):
            if cells.text(name).strip() and text_key not in info:
                info[text_key] = cells.text(name).strip()
        for key, name in (("num_xcd", "Num_Xcc"), ("wave_size", "Wave_Front_Size"), ("cu", "Cu_Count")):
            v = cells.number(name, default=0.0)
            if v > 0:
                info[key] = v
        gpus.append(info)
    targets = sorted({g["gfx"] for g in gpus})
    if len(targets) > 1:
        raise InputError(
            f"mixed GPUs in one profile ({', '.join(targets)}); read one agent at a time", where=where
        )
    return gpus[0] if gpus else {}


def attach_agents(wl: Workload, path: Path, agents: list[Path]) -> None:
    """The gfx target and GPU shape from the agent-info files of one run (all passes): runs on
    different GPU targets in one folder are an error."""
    if not agents:
        return
    infos = [(p, read_agent_info(p)) for p in agents]
    targets = sorted({i.get("gfx", "") for _, i in infos if i.get("gfx")})
    if len(targets) > 1:
        runs = ", ".join(f"{p.name}: {i.get('gfx')}" for p, i in infos)
        raise InputError(
            f"runs on different GPUs in one folder ({runs}); put each run in its own folder", where=str(path)
        )
    wl.sysinfo = infos[0][1]
    wl.gfx = wl.sysinfo.get("gfx", "")


def read(path: Path) -> Workload:
    """One rocprofv3 run's CSV files (a folder of pass_N/ folders is `pass_folders`' job)."""
    wl = Workload(path=str(path), format="rocprofv3 csv")
    counters = find(path, PATTERNS[0])
    traces = find(path, PATTERNS[1])
    attach_agents(wl, path, find(path, PATTERNS[2]))
    if len(counters) == 1 and not traces:
        wl.dispatches = CounterDispatches(counters[0])  # streamed: see CounterDispatches
    else:
        for p in counters:
            wl.dispatches += long_csv.read(p)
    if traces:
        if wl.dispatches:
            timing = [d for p in traces for d in read_kernel_trace(p)]
            n = join.apply_timing(wl.dispatches, timing, f"{traces[0].name} (kernel trace)")
            wl.notes.append(f"kernel trace matched {n} of {len(wl.dispatches)} counter dispatches")
        else:
            wl.dispatches = TraceDispatches(traces)  # streamed: see TraceDispatches
    if not wl.dispatches:
        raise InputError("no rocprofv3 counter collection or kernel trace found", where=str(path))
    return wl
