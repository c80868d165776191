"""Turn a `Dispatch` into a `Measurement` with the formulas of its gfx target.

For each quantity the first formula alternative whose counters are all present is used. When
none fits: if none of the quantity's counters was collected the quantity is left out and a note
says so; if some were collected and others are missing, the file is inconsistent and an
InputError names the formula and the missing counter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from perfmodel.counters import flags
from perfmodel.counters.formulas import CounterFormula, FormulaSet, load
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
    m = Measurement(kernel=d.kernel, dispatch=d.index, gfx=fs.gfx, source=d.source, time_source=d.time_source)
    _quantities(m, d, fs, {**fs.constants, **(constants or {})})
    _time(m, d)
    m.flags += flags.replay(d, names=fs.counters())
    m.flags += flags.negative(m)
    m.flags += flags.clock(m, max_sclk_hz)
    m.flags += flags.above_peak(m, peaks)
    return m


# Results for dispatches without counters (a kernel trace): they depend only on the formula set
# and the constants, so they are computed once and replayed (1 M trace rows, one evaluation).
_NO_COUNTERS: dict[tuple, Measurement] = {}


def _quantities(m: Measurement, d: Dispatch, fs: FormulaSet, consts: Mapping[str, float]) -> None:
    """Evaluate every quantity with its first alternative whose names are all known.

    A quantity none of whose counters was collected is left out (one note lists them all);
    a division by zero leaves it out too, with a note, rather than failing the whole file.
    """
    if not d.counters:
        key = (fs.gfx, fs.files, id(fs), tuple(sorted(consts.items())))
        done = _NO_COUNTERS.get(key)
        if done is None:
            done = Measurement(kernel="", dispatch=0, gfx=fs.gfx)
            _evaluate(done, d, fs, consts)
            if len(_NO_COUNTERS) > 64:
                _NO_COUNTERS.clear()
            _NO_COUNTERS[key] = done
        _replay(m, done)
        return
    _evaluate(m, d, fs, consts)


def _replay(m: Measurement, done: Measurement) -> None:
    """Copy what `_evaluate` put on ``done`` onto ``m`` (fresh containers: ``m`` may be edited)."""
    for name, value in vars(done).items():
        if name in ("kernel", "dispatch", "gfx", "source", "time_source"):
            continue
        if isinstance(value, dict):
            getattr(m, name).update(value)
        elif isinstance(value, list):
            getattr(m, name).extend(value)
        elif value is not None:
            setattr(m, name, value)


def _evaluate(m: Measurement, d: Dispatch, fs: FormulaSet, consts: Mapping[str, float]) -> None:
    env = {**consts, **d.counters}
    not_collected = []
    for key, q in fs.quantities.items():
        alt = next((a for a in q.alternatives if a.expr.names <= env.keys()), None)
        if alt is None:
            if d.counters:  # a dispatch without counters (kernel trace) cannot be partial
                _check_not_partial(key, q, d, consts, env)
            not_collected.append(key)
            continue
        try:
            value = alt.expr(env)
        except ZeroDivisionError:
            m.notes.append(f"{key}: division by zero in {alt.expr.text}; left out")
            continue
        except OverflowError:
            value = float("inf")
        if not math.isfinite(value):
            m.flags.append(f"non-finite: {key} = {value} from {alt.expr.text}; left out")
            continue
        if alt.note:
            m.notes.append(f"{key}: {alt.note}")
        _store(m, key, value)
    if not_collected:
        m.notes.append("not collected: " + ", ".join(not_collected))
    if not any(k.startswith("flops:") for k in fs.quantities):
        m.notes.append(f"no FLOP counters for {fs.gfx}: compute is unmeasured, the measured bound unknown")


def _check_not_partial(
    key: str, q: CounterFormula, d: Dispatch, consts: Mapping[str, float], env: Mapping[str, float]
) -> None:
    """Some of a quantity's counters present and others missing: the file is inconsistent, so
    name the formula and the missing counter instead of silently dropping the quantity."""
    wanted = q.counters - consts.keys()
    if wanted & d.counters.keys():
        first = q.alternatives[0].expr
        missing = sorted(first.names - env.keys())
        raise InputError(
            f"formula {key} = {first.text} needs counter {', '.join(missing)}, missing from the file",
            where=d.source or None,
        )


# quantity-key prefix -> the Measurement dict it fills ("flops:mfma:bf16" -> flops["mfma:bf16"])
_PER_NAME = {
    "flops": "flops",
    "iops": "iops",
    "read": "bytes_read",
    "write": "bytes_write",
    "bytes": "bytes_unsplit",
}
# keys that are one number for the whole dispatch
_SCALAR = ("cycles", "waves")


def _store(m: Measurement, key: str, value: float) -> None:
    """Put a quantity's value where its key says (see ``_PER_NAME`` and ``_SCALAR``)."""
    kind, _, rest = key.partition(":")
    if kind in _PER_NAME:
        getattr(m, _PER_NAME[kind])[rest] = value
    elif kind in _SCALAR:
        setattr(m, kind, value)


def _time(m: Measurement, d: Dispatch) -> None:
    """Measured time and achieved clock, only from timestamps that passed the checks."""
    ts = flags.timestamps(d)
    m.flags += ts
    dur = d.duration_ns
    if not ts and dur is not None and dur > 0:
        m.time_s = dur * 1e-9
        if m.cycles is not None and m.cycles > 0:
            m.clock_hz = m.cycles / m.time_s
        elif m.cycles is not None:
            m.flags.append(f"zero-cycles: GRBM_GUI_ACTIVE is {m.cycles:g} over {dur:.0f} ns; clock unknown")
    elif not d.time_source:
        m.notes.append("no timestamps: rates unavailable")
    if d.pass_durations_ns and len(d.pass_durations_ns) > 1:
        lo, hi = min(d.pass_durations_ns), max(d.pass_durations_ns)
        m.notes.append(f"duration over {len(d.pass_durations_ns)} passes: {lo / 1e3:.2f}..{hi / 1e3:.2f} us")


def derive_workload(
    wl: Workload, gfx: str | None = None, *, peaks: Mapping[str, float] | None = None
) -> list[Measurement]:
    """Every dispatch of a workload; ``gfx`` overrides the target found in sysinfo/agent info."""
    target = gfx or wl.gfx
    if not target:
        raise InputError(
            "gfx target unknown (no sysinfo.csv or agent info); pass gfx=", where=wl.path, key="gfx"
        )
    return [m for _d, m in iter_derive(wl, target, peaks=peaks)]


def deriver(wl: Workload, gfx: str | None = None, *, peaks: Mapping[str, float] | None = None):
    """The function that derives every dispatch of ``wl`` (Dispatch -> Measurement)."""
    target = gfx or wl.gfx
    if not target:
        raise InputError(
            "gfx target unknown (no sysinfo.csv or agent info); pass gfx=", where=wl.path, key="gfx"
        )
    fs = load(target)
    consts = constants_from(wl.sysinfo)
    # the machine's own maximum clock (sysinfo.csv); else the archspec's peak clock, which
    # validate records when the profile does not say (rocprofv3 agent info has no maximum)
    si = wl.sysinfo or {}
    sclk = si.get("max_sclk_mhz") or si.get("max_sclk_mhz_archspec")
    return lambda d: derive(d, fs, constants=consts, peaks=peaks, max_sclk_hz=sclk * 1e6 if sclk else None)


def iter_derive(wl: Workload, gfx: str | None = None, *, peaks: Mapping[str, float] | None = None):
    """(dispatch, measurement) pairs, one at a time, in file order (for streaming callers)."""
    one = deriver(wl, gfx, peaks=peaks)
    for d in wl.dispatches:
        yield d, one(d)
