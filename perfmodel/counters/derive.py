"""Turn a `Dispatch` into a `Measurement` with the formulas of its gfx target.

For each quantity the first formula alternative whose counters are all present is used. When
none fits: if none of the quantity's counters was collected the quantity is left out and a note
says so; if some were collected and others are missing, the file is inconsistent and an
InputError names the formula and the missing counter.
"""

from __future__ import annotations

from collections.abc import Mapping

from perfmodel.counters import flags
from perfmodel.counters.formulas import FormulaSet, load
from perfmodel.counters.measurement import Measurement
from perfmodel.errors import InputError
from perfmodel.readers.records import Dispatch, Workload

# sysinfo keys that override formula constants
_CONSTANTS = ("wave_size", "num_xcd", "lds_banks_per_cu")


def constants_from(sysinfo: Mapping | None) -> dict[str, float]:
    return {k: float(sysinfo[k]) for k in _CONSTANTS if sysinfo and sysinfo.get(k)}


def derive(
    d: Dispatch,
    gfx: str | FormulaSet,
    *,
    constants: Mapping[str, float] | None = None,
    peaks: Mapping[str, float] | None = None,
    max_sclk_hz: float | None = None,
) -> Measurement:
    """One dispatch's measurement. ``peaks``/``max_sclk_hz`` only add flags when given."""
    fs = gfx if isinstance(gfx, FormulaSet) else load(gfx)
    consts = {**fs.constants, **(constants or {})}
    env = {**consts, **d.counters}
    m = Measurement(kernel=d.kernel, dispatch=d.index, gfx=fs.gfx, source=d.source, time_source=d.time_source)
    not_collected = []
    for key, q in fs.quantities.items():
        alt = next((a for a in q.alternatives if a.expr.names <= env.keys()), None)
        if alt is None:
            wanted = q.counters - consts.keys()
            if wanted & d.counters.keys():
                first = q.alternatives[0].expr
                missing = sorted(first.names - env.keys())
                raise InputError(
                    f"formula {key} = {first.text} needs counter {', '.join(missing)}, missing from the file",
                    where=d.source or None,
                )
            not_collected.append(key)
            continue
        try:
            value = alt.expr(env)
        except ZeroDivisionError:
            m.notes.append(f"{key}: division by zero in {alt.expr.text}; left out")
            continue
        if alt.note:
            m.notes.append(f"{key}: {alt.note}")
        kind, _, rest = key.partition(":")
        if kind == "flops":
            m.flops[rest] = value
        elif kind == "iops":
            m.iops[rest] = value
        elif kind == "read":
            m.bytes_read[rest] = value
        elif kind == "write":
            m.bytes_write[rest] = value
        elif kind == "bytes":
            m.bytes_unsplit[rest] = value
        elif kind == "cycles":
            m.cycles = value
        elif kind == "waves":
            m.waves = value
    if not_collected:
        m.notes.append("not collected: " + ", ".join(not_collected))
    ts = flags.timestamps(d)
    m.flags += ts
    dur = d.duration_ns
    if not ts and dur is not None and dur > 0:
        m.time_s = dur * 1e-9
        if m.cycles is not None:
            m.clock_hz = m.cycles / m.time_s
    elif not d.time_source:
        m.notes.append("no timestamps: rates unavailable")
    if d.pass_durations_ns and len(d.pass_durations_ns) > 1:
        lo, hi = min(d.pass_durations_ns), max(d.pass_durations_ns)
        m.notes.append(f"duration over {len(d.pass_durations_ns)} passes: {lo / 1e3:.2f}..{hi / 1e3:.2f} us")
    m.flags += flags.replay(d, names=fs.counters())
    m.flags += flags.negative(m)
    m.flags += flags.clock(m, max_sclk_hz)
    m.flags += flags.above_peak(m, peaks)
    return m


def derive_workload(
    wl: Workload, gfx: str | None = None, *, peaks: Mapping[str, float] | None = None
) -> list[Measurement]:
    """Every dispatch of a workload; ``gfx`` overrides the target found in sysinfo/agent info."""
    target = gfx or wl.gfx
    if not target:
        raise InputError(
            "gfx target unknown (no sysinfo.csv or agent info); pass gfx=", where=wl.path, key="gfx"
        )
    fs = load(target)
    consts = constants_from(wl.sysinfo)
    sclk = wl.sysinfo.get("max_sclk_mhz") if wl.sysinfo else None
    return [
        derive(d, fs, constants=consts, peaks=peaks, max_sclk_hz=sclk * 1e6 if sclk else None)
        for d in wl.dispatches
    ]
