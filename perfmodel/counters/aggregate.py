"""Aggregation over dispatches, stated explicitly.

Default (:func:`aggregate`): per kernel, the **ratio of sums** - FLOPs and bytes summed over
dispatches, divided by the summed time - so a kernel's rate is total work over total time and
long dispatches weigh more than short ones, as they do in the application.

Compatibility (:func:`compat_mean_rates`, :func:`compat_per_wave`): rocprof-compute's speed-of-
light tables average per-dispatch rates (mean of ratios); these views reproduce its numbers
for comparison and are never the default.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable

from perfmodel.counters.measurement import Measurement


def _add(into: dict[str, float], other: dict[str, float]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0.0) + v


_KINDS = ("flops", "iops", "bytes_read", "bytes_write", "bytes_unsplit")
_LABEL = {"flops": "flops", "iops": "iops", "bytes_read": "read", "bytes_write": "write", "bytes_unsplit": "bytes"}


def _drop_partial(a: Measurement, seen: dict[tuple[str, str], int]) -> None:
    """A quantity measured in only some of the group's dispatches (a counter pass that missed
    some dispatches, ranks that collected different counters) is left out with a note: its sum
    over those dispatches divided by the time of all would understate the rate."""
    for (kind, k), n in sorted(seen.items()):
        if n < a.count:
            del getattr(a, kind)[k]
            a.notes.append(
                f"{_LABEL[kind]}:{k} measured in {n} of {a.count} dispatches: left out (a partial sum)"
            )


class Aggregator:
    """The per-group sums of :func:`aggregate`, built one measurement at a time: memory grows
    with the number of groups (kernels), not with the number of dispatches. A measurement added
    may itself be a sum (``count`` > 1: one workload's kernel, merging several workloads)."""

    def __init__(self, key: Callable[[Measurement], str] = lambda m: m.kernel):
        self.key = key
        self._groups: dict[str, dict] = {}

    def _group(self, m: Measurement) -> dict:
        name = self.key(m)
        g = self._groups.get(name)
        if g is None:
            a = Measurement(kernel=name, dispatch=m.dispatch, gfx=m.gfx, count=0, source=m.source)
            g = self._groups[name] = {
                "a": a, "added": 0, "untimed": 0, "time": 0, "cycles": 0, "waves": 0,
                "sources": set(), "flags": set(), "notes": set(), "seen": {},
            }  # fmt: skip
        return g

    def add(self, m: Measurement) -> None:
        g = self._group(m)
        a = g["a"]
        a.count += m.count
        g["added"] += 1
        seen = g["seen"]
        for kind in _KINDS:
            mine = getattr(m, kind)
            _add(getattr(a, kind), mine)
            for k in mine:
                seen[(kind, k)] = seen.get((kind, k), 0) + m.count
        if m.time_s is None:
            g["untimed"] += 1
        elif g["time"] is not None:
            g["time"] += m.time_s
        g["cycles"] = None if m.cycles is None or g["cycles"] is None else g["cycles"] + m.cycles
        g["waves"] = None if m.waves is None or g["waves"] is None else g["waves"] + m.waves
        if m.time_source:
            g["sources"].add(m.time_source)
        g["flags"].update(m.flags)
        g["notes"].update(m.notes)

    def add_timed_only(self, m: Measurement, times, untimed: int, flags: set[str]) -> None:
        """``len(times) + untimed`` dispatches that measured nothing but time (kernel-trace rows:
        ``m`` holds what they share, no quantities), as if each was `add`-ed in file order:
        ``times`` (seconds, numpy, file order) are summed left to right (np.add.accumulate is
        sequential), so the sum is bit-identical to the one `add` builds. ``flags``: the union
        of the dispatches' own flags."""
        import numpy as np

        if m.flops or m.iops or m.bytes_read or m.bytes_write or m.bytes_unsplit or m.cycles is not None or m.waves is not None:
            raise ValueError("add_timed_only takes measurements of time alone")
        g = self._group(m)
        n = len(times) + untimed
        g["a"].count += n
        g["added"] += n
        g["untimed"] += untimed
        if len(times):
            g["time"] = float(np.add.accumulate(np.concatenate(([g["time"]], times)))[-1])
        if n:
            g["cycles"] = g["waves"] = None
        if m.time_source:
            g["sources"].add(m.time_source)
        g["flags"].update(m.flags)
        g["flags"].update(flags)
        g["notes"].update(m.notes)

    def result(self) -> list[Measurement]:
        out = []
        for g in self._groups.values():
            a = g["a"]
            if g["untimed"] and g["added"] == a.count:
                a.flags.append(f"time-missing: {g['untimed']} of {a.count} dispatches have no usable time")
            elif g["untimed"]:  # sums without a time carry their own flag saying how many dispatches
                a.flags.append(f"time-missing: {g['untimed']} of the {g['added']} sums merged have no usable time")
            else:
                a.time_s = g["time"]
            if g["cycles"] is not None:
                a.cycles = g["cycles"]
                if a.time_s and a.cycles > 0:
                    a.clock_hz = a.cycles / a.time_s
            if g["waves"] is not None:
                a.waves = g["waves"]
            _drop_partial(a, g["seen"])
            a.time_source = "; ".join(sorted(g["sources"]))
            a.flags += sorted(g["flags"])
            a.notes += sorted(g["notes"])
            out.append(a)
        return out


def aggregate(
    measurements: Iterable[Measurement], key: Callable[[Measurement], str] = lambda m: m.kernel
) -> list[Measurement]:
    """One Measurement per group (kernel by default): sums of FLOPs, bytes and time.

    If any dispatch of a group has no usable time the group's time is None (a partial sum
    would overstate the rate) and a flag says how many lacked it.
    """
    agg = Aggregator(key)
    for m in measurements:
        agg.add(m)
    return agg.result()


def _valu(m: Measurement) -> float:
    return sum(v for k, v in m.flops.items() if k.startswith(("valu:", "sfu:")))


def _dtype(m: Measurement, dtype: str) -> float:
    return sum(v for k, v in m.flops.items() if k.endswith(":" + dtype))


# rocprof-compute speed-of-light rows (panel 201) as functions of a Measurement: amount per dispatch
SOL_ROWS: dict[str, Callable[[Measurement], float]] = {
    "VALU FLOPs": _valu,
    "VALU IOPs": lambda m: sum(m.iops.values()),
    "MFMA FLOPs (BF16)": lambda m: m.flops.get("mfma:bf16", 0.0),
    "MFMA FLOPs (F16)": lambda m: m.flops.get("mfma:fp16", 0.0),
    "MFMA FLOPs (F32)": lambda m: m.flops.get("mfma:fp32", 0.0),
    "MFMA FLOPs (F64)": lambda m: m.flops.get("mfma:fp64", 0.0),
    "MFMA IOPs (Int8)": lambda m: m.flops.get("mfma:int8", 0.0),
    "LDS BW": lambda m: m.bytes_unsplit.get("lds", 0.0),
    "Vector L1D Cache BW": lambda m: m.bytes_unsplit.get("l1", 0.0),
    "L2-Fabric Read BW": lambda m: m.bytes_read.get("hbm", 0.0),
    "L2-Fabric Write BW": lambda m: m.bytes_write.get("hbm", 0.0),
}

# rocprof-compute panel 1103 rows (operations per wave)
PER_WAVE_ROWS: dict[str, Callable[[Measurement], float]] = {
    "FLOPs (Total)": lambda m: sum(v for k, v in m.flops.items() if k != "mfma:int8"),
    "INT8 OPs": lambda m: m.flops.get("mfma:int8", 0.0),
    "F16 OPs": lambda m: _dtype(m, "fp16"),
    "BF16 OPs": lambda m: _dtype(m, "bf16"),
    "F32 OPs": lambda m: _dtype(m, "fp32"),
    "F64 OPs": lambda m: _dtype(m, "fp64"),
}


def compat_mean_rates(measurements: Iterable[Measurement]) -> dict[str, float]:
    """rocprof-compute's SOL values: mean over dispatches of (amount / duration), in G-units/s.

    Dispatches without a usable time are skipped (rocprof-compute would divide by zero).
    """
    ms = [m for m in measurements if m.time_s]
    if not ms:
        return {}
    return {name: statistics.fmean(f(m) / (m.time_s * 1e9) for m in ms) for name, f in SOL_ROWS.items()}  # type: ignore[operator]


def compat_per_wave(measurements: Iterable[Measurement]) -> dict[str, tuple[float, float, float]]:
    """rocprof-compute's per-wave table: (mean, min, max) over dispatches of amount / SQ_WAVES."""
    ms = [m for m in measurements if m.waves]
    out = {}
    for name, f in PER_WAVE_ROWS.items():
        vals = [f(m) / m.waves for m in ms]  # type: ignore[operator]
        if vals:
            out[name] = (statistics.fmean(vals), min(vals), max(vals))
    return out
