"""Join replay passes per dispatch by (kernel, grid size, occurrence) - and workgroup size where
every file records it (`keyed_by_shape`).

Matching by row position (what rocprof-compute's replace_timestamps does) silently pairs the
wrong dispatches when a pass drops or reorders one; the key below does not.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from perfmodel.readers.records import Dispatch

Key = tuple[str, int, int]


def keyed(dispatches: Iterable[Dispatch]) -> dict[Key, Dispatch]:
    """Dispatches by (kernel, grid, n-th occurrence of that kernel+grid)."""
    seen: dict[tuple[str, int], int] = {}
    out: dict[Key, Dispatch] = {}
    for d in dispatches:
        k = (d.kernel, d.grid)
        n = seen.get(k, 0)
        seen[k] = n + 1
        out[(d.kernel, d.grid, n)] = d
    return out


def keyed_by_shape(dispatches: Iterable[Dispatch]) -> dict[tuple[str, int, int, int], Dispatch]:
    """Dispatches by (kernel, grid, workgroup, n-th occurrence of that kernel+grid+workgroup): the
    key for joining counter passes, whose files all record the workgroup (timing traces may not)."""
    seen: dict[tuple[str, int, int], int] = {}
    out: dict[tuple[str, int, int, int], Dispatch] = {}
    for d in dispatches:
        k = (d.kernel, d.grid, d.workgroup)
        n = seen.get(k, 0)
        seen[k] = n + 1
        out[(*k, n)] = d
    return out


def apply_timing(target: list[Dispatch], timing: list[Dispatch], source: str) -> int:
    """Take begin/end from a counter-free timing pass; returns how many dispatches matched."""
    return apply_timing_keyed(keyed(target).items(), timing, source)


def apply_timing_keyed(target: Iterable[tuple[Key, Dispatch]], timing: list[Dispatch], source: str) -> int:
    """`apply_timing` for targets whose (kernel, grid, occurrence) keys were taken before some
    dispatches were dropped (a partial counter pass), so the occurrences still count from the run.

    A timing trace of several GPUs is narrowed to the targets' GPUs when the two share any id
    (agent ids are normalised by the readers, so "Agent 4" and "4" are one GPU)."""
    target = list(target)
    gpus = {d.gpu for _, d in target if d.gpu}
    if gpus and any(t.gpu in gpus for t in timing):
        timing = [t for t in timing if t.gpu in gpus or not t.gpu]
    by_key = keyed(timing)
    matched = 0
    for key, d in target:
        t = by_key.get(key)
        if t is None:
            continue
        d.begin_ns, d.end_ns = t.begin_ns, t.end_ns
        d.flags = [f for f in d.flags if not f.startswith("corrupt-timestamp")] + t.flags
        d.time_source = source
        matched += 1
    return matched


def merge_passes(target: list[Dispatch] | None, passes: list[list[Dispatch]], source: str) -> list[Dispatch]:
    """Fold per-pass files into ``target`` (or build it from them when there is no merged file).

    Counters seen in several passes keep every value in ``replay``; every pass's duration is
    kept and the duration becomes their median (the counter passes are all perturbed alike).
    """
    if target is None:
        target = [
            d.launch(source)
            for d in passes[0]
        ]
        fill = True
    else:
        fill = False
    tk = keyed(target)
    for p in passes:
        for key, d in keyed(p).items():
            t = tk.get(key)
            if t is None:
                continue
            if d.duration_ns is not None:
                t.pass_durations_ns.append(d.duration_ns)
                t.flags.extend(f for f in d.flags if f not in t.flags)
            for name, v in d.counters.items():
                t.replay.setdefault(name, []).append(v)
                if fill and name not in t.counters:
                    t.counters[name] = v
    for t in target:
        t.replay = {k: v for k, v in t.replay.items() if len(v) > 1}
        if t.pass_durations_ns:
            begin = t.begin_ns or 0.0
            t.begin_ns = begin
            t.end_ns = begin + float(statistics.median(t.pass_durations_ns))
            t.time_source = (
                f"median over {len(t.pass_durations_ns)} counter passes ({source}); no counter-free pass"
            )
    return target
