"""rocprofv3 multi-pass output: one folder per counter pass, read as one run.

rocprofv3 runs the application once per job of an input file: a YAML or JSON input (``-i
input.yaml`` with ``jobs:``) writes job N into ``<output directory>/pass_<N>/``, a text input (one
``pmc:`` line per pass) into ``pmc_<N>/`` (rocprofv3.py, ``sub_directory``). Each pass folder holds
that run's ``*_counter_collection.csv`` and ``*_agent_info.csv`` (and ``*_kernel_trace.csv`` with
``--kernel-trace``), below any ``%hostname%`` folder. `perfmodel profile` plans its counter passes
into ``out/pass_N/`` and a counter-free kernel-trace job into ``out/timing/``; rocprof-compute keeps
its passes in ``<workload>/out/pmc_N/<hostname>/`` beside ``sysinfo.csv`` until analyze merges them.

The passes are separate runs, so their dispatch ids and timestamps differ: dispatches are joined
by (kernel, grid, workgroup, occurrence), never by row or id. A counter collected in several
passes keeps the first pass's value and every value goes to ``replay``, so passes that disagree
are flagged (``replay-disagree``). A dispatch missing from some pass is dropped with a note: its
quantities would lack that pass's counters and its kernel's sums would be partial. A pass cut
short (its tail missing) joins exactly; occurrence order cannot tell which dispatch a pass lost
in the middle of a run of the same kernel and shape, so there the later ones pair one occurrence
off (dispatch ids cannot settle it: each pass is a separate run). A pass that shares no dispatch
with any other pass is one error line naming its folder. Durations come from a
counter-free kernel trace (one in a folder without counter collections: ``timing/``, or a pass
folder of a kernel-trace-only job), else from the counter passes, which the time source says.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import join, long_csv, rocprof_v3, sysinfo
from perfmodel.readers.records import Dispatch, Workload

FORMAT = "rocprofv3 pass folders"
PASS_FOLDER = re.compile(r"(?:pass|pmc)_(\d+)")  # rocprofv3's sub_directory "pass_" (YAML/JSON) or "pmc_" (text)


def pass_folder(root: Path, f: Path) -> Path | None:
    """The outermost folder between ``root`` and the file ``f`` named like a pass (``pass_N``,
    ``pmc_N``); None when there is none. Outermost, because a YAML job whose own output folder is
    ``out/pass_1`` is written to ``out/pass_1/pass_1/``."""
    parts = f.relative_to(root).parts[:-1]
    for i, part in enumerate(parts):
        if PASS_FOLDER.fullmatch(part):
            return root.joinpath(*parts[: i + 1])
    return None


def is_pass_dir(path: Path) -> bool:
    """A directory with a rocprofv3 counter collection inside a pass folder below it."""
    return path.is_dir() and any(
        pass_folder(path, f) is not None for f in rocprof_v3.find(path, rocprof_v3.PATTERNS[0])
    )


def _rel(root: Path, p: Path) -> str:
    return p.relative_to(root).as_posix()


def _pass_order(root: Path):
    def key(folder: Path) -> tuple[int, tuple[str, ...]]:
        m = PASS_FOLDER.fullmatch(folder.name)
        return (int(m.group(1)) if m else 0, folder.relative_to(root).parts)

    return key


def _counter_files(path: Path, counters: list[Path]) -> list[tuple[str, Path]]:
    """(pass folder, its counter collection) in pass order; one clear error for a counter
    collection outside the pass folders or a pass folder with several (several processes)."""
    by_pass: dict[Path, list[Path]] = {}
    for f in counters:
        folder = pass_folder(path, f)
        if folder is None:
            raise InputError(
                f"{_rel(path, f)} lies outside the pass_N/ folders beside it: a folder of passes is one run"
                " whose counter collections all lie in pass folders; read that file on its own",
                where=str(path),
            )
        by_pass.setdefault(folder, []).append(f)
    out = []
    for folder in sorted(by_pass, key=_pass_order(path)):
        files = by_pass[folder]
        if len(files) > 1:
            names = ", ".join(_rel(folder, f) for f in files[:3])
            raise InputError(
                f"{_rel(path, folder)} holds {len(files)} counter collections ({names}), one per process:"
                " a pass folder is one process's run; give each process its own output folder"
                " (rocprofv3 -d out/rank_%rank%) and read the folders as ranks",
                where=str(path),
            )
        out.append((_rel(path, folder), files[0]))
    return out


def _short(key: tuple[str, int, int, int]) -> str:
    kernel, grid, wg, n = key
    name = kernel if len(kernel) <= 40 else kernel[:37] + "..."
    return f"{name} grid {grid} workgroup {wg} #{n + 1}"


def join_passes(
    passes: list[tuple[str, list[Dispatch]]], where: str, notes: list[str]
) -> list[tuple[join.Key, Dispatch]]:
    """The dispatches present in every pass, in the first pass's order, their counters merged;
    each with its (kernel, grid, occurrence) key in the first pass for the timing join."""
    first_name, first = passes[0]
    per_pass = [(name, join.keyed_by_shape(ds)) for name, ds in passes]
    first_keys = per_pass[0][1]
    for name, kd in per_pass[1:] + per_pass[:1]:  # with two passes, the second is the odd one
        others = [(o, okd) for o, okd in per_pass if o != name]
        if others and not any(kd.keys() & okd.keys() for _, okd in others):
            raise InputError(
                f"{name}: none of its {len(kd)} dispatches matches one in {', '.join(o for o, _ in others)}"
                " by (kernel, grid, workgroup, occurrence); a pass of another program?",
                where=where,
            )
    union: dict = {}
    for _, kd in per_pass:
        union.update(dict.fromkeys(kd))
    common = [k for k in first_keys if all(k in kd for _, kd in per_pass)]
    for name, kd in per_pass:
        lacks = [k for k in union if k not in kd]
        if lacks:
            notes.append(
                f"{name} lacks {len(lacks)} of the {len(union)} dispatches seen in the passes (first:"
                f" {_short(lacks[0])}): left out, since that pass's counters would be missing for them"
            )
    if not common:
        raise InputError(
            f"no dispatch is in all {len(passes)} passes ({', '.join(n for n, _ in passes)})", where=where
        )
    if len(common) < len(union):
        notes.append(f"{len(common)} dispatches are in all {len(passes)} passes; {len(union) - len(common)} left out")
    timing_key = {id(d): k for k, d in join.keyed(first).items()}
    names = ", ".join(n for n, _ in passes)
    out = []
    for k in common:
        parts = [kd[k] for _, kd in per_pass]
        out.append((timing_key[id(parts[0])], _merge(parts, where, names)))
    return out


def _merge(parts: list[Dispatch], where: str, names: str) -> Dispatch:
    """One dispatch from its copies in every pass: the first pass's value of each counter (all
    values in ``replay``), every counter pass's duration, their median as the duration."""
    d0 = parts[0]
    t = d0.launch(where)
    for d in parts:
        for name, v in d.counters.items():
            t.counters.setdefault(name, v)
            t.replay.setdefault(name, []).extend(d.replay.get(name, [v]))
        dur = d.duration_ns
        t.pass_durations_ns += d.pass_durations_ns or ([dur] if dur is not None else [])
        t.flags.extend(f for f in d.flags if f not in t.flags)
    t.replay = {k: v for k, v in t.replay.items() if len(v) > 1}
    if t.pass_durations_ns:
        t.begin_ns = d0.begin_ns if d0.begin_ns is not None else 0.0
        t.end_ns = t.begin_ns + float(statistics.median(t.pass_durations_ns))
        t.time_source = (
            f"median over {len(t.pass_durations_ns)} durations of the counter passes ({names});"
            " no counter-free pass"
        )
    return t


def _attach_sysinfo(wl: Workload, path: Path) -> None:
    """A rocprof-compute workload folder whose passes are still in ``out/pmc_N/<host>/`` (no
    ``pmc_perf.csv`` merged yet) has its sysinfo.csv beside ``out/``: it gives the clocks and
    shape; the gfx target must agree with the agent info's."""
    from_agents = wl.gfx
    sysinfo.attach(wl, path / "sysinfo.csv")
    if from_agents and wl.gfx and wl.gfx != from_agents:
        raise InputError(
            f"sysinfo.csv names {wl.gfx} but the passes' agent info {from_agents}: two different runs?",
            where=str(path),
        )
    wl.gfx = wl.gfx or from_agents
    if wl.gfx:
        wl.sysinfo.setdefault("gfx", wl.gfx)


def read(path: Path) -> Workload:
    wl = Workload(path=str(path), format=FORMAT)
    where = str(path)
    counters = rocprof_v3.find(path, rocprof_v3.PATTERNS[0])
    traces = rocprof_v3.find(path, rocprof_v3.PATTERNS[1])
    rocprof_v3.attach_agents(wl, path, rocprof_v3.find(path, rocprof_v3.PATTERNS[2]))
    _attach_sysinfo(wl, path)
    files = _counter_files(path, counters)
    passes = [(name, long_csv.read(f)) for name, f in files]
    keyed = join_passes(passes, where, wl.notes)
    wl.dispatches = [d for _, d in keyed]
    counter_folders = {path / name for name, _ in files}
    timing_files = [t for t in traces if pass_folder(path, t) not in counter_folders]
    if timing_files:
        timing = [d for p in timing_files for d in rocprof_v3.read_kernel_trace(p)]
        n = join.apply_timing_keyed(keyed, timing, f"{_rel(path, timing_files[0])} (counter-free kernel trace)")
        if n < len(keyed):
            wl.notes.append(
                f"the counter-free kernel trace matched {n} of {len(keyed)} dispatches by (kernel, grid,"
                " occurrence); the others keep counter-pass durations"
            )
    return wl
