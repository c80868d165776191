"""Checks for results that cannot be true. They flag; they never correct or drop a number.

Each flag is one string ``"<code>: <detail>"`` so it prints as is and filters by prefix.
Peaks come from the caller (the arch spec) as ``{level: bytes_per_s}``, optionally with
``{"pipe:dtype": flops_per_s}``; this module does not know any GPU.
"""

from __future__ import annotations

from collections.abc import Mapping

from perfmodel.counters.measurement import Measurement
from perfmodel.readers.records import Dispatch

REPLAY_REL_TOL = 0.05  # counters that replay passes should reproduce (wave counts, bytes)
MAX_DURATION_NS = 3600e9  # one kernel dispatch running over an hour is a corrupt timestamp


def timestamps(d: Dispatch) -> list[str]:
    """Zero, negative or precision-less durations (MI300 2024 files saved ``1.62068E+14``)."""
    out = [f for f in d.flags if f.startswith("corrupt-timestamp")]
    dur = d.duration_ns
    if dur is None:
        if d.time_source:
            out.append("corrupt-timestamp: missing start or end")
    elif dur == 0:
        out.append("corrupt-timestamp: zero duration (start == end)")
    elif dur < 0:
        out.append(f"corrupt-timestamp: negative duration ({dur:.0f} ns)")
    elif dur > MAX_DURATION_NS:
        out.append(f"corrupt-timestamp: duration {dur / 1e9:.3g} s is not one kernel dispatch")
    if (d.begin_ns is not None and d.begin_ns < 0) or (d.end_ns is not None and d.end_ns < 0):
        out.append("corrupt-timestamp: negative timestamp")
    return list(dict.fromkeys(out))


def replay(d: Dispatch, rel_tol: float = REPLAY_REL_TOL, names=None) -> list[str]:
    """Counters collected in several replay passes that disagree by more than ``rel_tol``."""
    out = []
    for name, vals in sorted(d.replay.items()):
        if names is not None and name not in names:
            continue
        lo, hi = min(vals), max(vals)
        if hi > 0 and (hi - lo) / hi > rel_tol:
            out.append(f"replay-disagree: {name} ranges {lo:g}..{hi:g} over {len(vals)} passes")
    return out


def above_peak(m: Measurement, peaks: Mapping[str, float] | None) -> list[str]:
    """Achieved bandwidth or FLOP rate above the theoretical peak of that level or pipe."""
    if not peaks or m.time_s is None or m.time_s <= 0:
        return []
    out = []
    for lv, bw in m.bandwidth().items():
        p = peaks.get(lv)
        if p and bw > p:
            out.append(f"above-peak: {lv} {bw / 1e9:.1f} GB/s > peak {p / 1e9:.1f} GB/s")
    for key, n in m.flops.items():
        p = peaks.get(key)
        if p and n / m.time_s > p:
            out.append(f"above-peak: {key} {n / m.time_s / 1e12:.2f} TFLOP/s > peak {p / 1e12:.2f} TFLOP/s")
    return out


def ratios(values: Mapping[str, float]) -> list[str]:
    """Percentages (hit rates, utilisations, % of peak) outside 0..100."""
    return [f"ratio-above-100: {k} = {v:.1f} %" for k, v in values.items() if v > 100.0 + 1e-9] + [
        f"ratio-negative: {k} = {v:.1f} %" for k, v in values.items() if v < 0
    ]


def clock(m: Measurement, max_hz: float | None) -> list[str]:
    """Achieved clock above the chip's maximum: cycles and time came from different passes."""
    if m.clock_hz is None or not max_hz:
        return []
    if m.clock_hz > max_hz * 1.001:
        return [
            f"clock-above-max: {m.clock_hz / 1e6:.0f} MHz from GRBM_GUI_ACTIVE > max {max_hz / 1e6:.0f} MHz"
            " (cycles and duration from different passes?)"
        ]
    return []


def negative(m: Measurement) -> list[str]:
    """A byte or FLOP count below zero: inconsistent counters (e.g. BUBBLE > RDREQ)."""
    out = []
    for kind, d in (
        ("flops", m.flops),
        ("read", m.bytes_read),
        ("write", m.bytes_write),
        ("bytes", m.bytes_unsplit),
    ):
        out += [f"negative: {kind}:{k} = {v:g}" for k, v in d.items() if v < 0]
    return out
