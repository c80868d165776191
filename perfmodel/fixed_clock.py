"""A GPU with its core clock fixed: ``mi300x@1005mhz`` (a clock lock such as ``rocm-smi
--setperfdeterminism`` or ``nvidia-smi -lgc``, or a power cap that holds the clock there).

Benchmarks are often run at a fixed clock; a prediction of them should be of the same part at
that clock, not of the shipped one. One clock (SCLK) drives the CUs' pipes and their LDS and L1
and the L2 (`rates.CORE_CLOCKED_LEVELS`); the MALL and the device memory run on clocks of their
own and keep their figures. So the variant scales:

- the peak clock, and with it every theoretical rate given per clock (pipes, core-clocked
  bandwidths in bytes per clock);
- each measured compute rate by the fixed clock over the clock it was measured at (a sustained
  matrix load runs at the spec's measured clock or the one its GEMM rates imply,
  `rates.matrix_load_clock`; other pipes at the peak), never up: a lock above the loaded clock
  does not lift a power limit;
- the measured clocks under load to at most the fixed clock;
- the measured bandwidths of the core-clocked levels by the fixed over the peak clock (their
  benchmarks run unlocked), and those levels' latencies by the peak over the fixed clock (a
  latency is so many cycles; where the spec has none, `rates.latency_used` scales the shared
  default of model_constants.yaml ``latency_ns``, which stands for the stock clock, by
  `Arch.core_latency_scale`).

Device-memory and MALL latencies keep their measured values although part of their path is
core-clocked: how much is not known.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import replace

from perfmodel.errors import InputError

SUFFIX = re.compile(r"^(\d+(?:\.\d+)?)\s*(mhz|ghz)?$", re.IGNORECASE)


def split_key(s: str) -> tuple[str, float | None]:
    """(base key or path, fixed clock in Hz or None) of ``mi300x@1005mhz`` / ``mi300x@1.005ghz``
    / ``mi300x@1005`` (MHz); a text without such a suffix is returned whole."""
    base, at, suffix = s.rpartition("@")
    if not at:
        return s, None
    m = SUFFIX.match(suffix.strip())
    if not m or not base:
        raise InputError(f"expected a clock after '@' such as {base or 'mi300x'}@1005mhz, got {s!r}", key="arch")
    value = float(round(float(m.group(1)) * (1e9 if (m.group(2) or "mhz").lower() == "ghz" else 1e6)))  # whole Hz: one variant per clock
    if value <= 0:
        raise InputError(f"expected a positive clock, got {s!r}", key="arch")
    return base, value


@functools.lru_cache(maxsize=64)
def at_clock(base, hz: float):
    """``base`` (an `Arch`) with its core clock fixed at ``hz``; see the module doc."""
    from perfmodel.arch import Arch
    from perfmodel.rates import CORE_CLOCKED_LEVELS, matrix_load_clock
    from perfmodel.vocab import MATRIX_PIPES

    peak = base.clock_hz
    if hz > peak * 1.0001:
        raise InputError(f"{base.key}: a fixed clock of {hz / 1e6:.0f} MHz is above its peak clock {peak / 1e6:.0f} MHz", key="arch")
    tree = copy.copy(base.tree)
    note = f"fixed at {hz / 1e6:.0f} MHz (the spec's peak: {peak / 1e6:.0f} MHz)"
    compute = dict(tree["compute"])
    compute["clock"] = {**compute["clock"], "peak": _scaled(compute["clock"]["peak"], hz / peak, note)}
    tree["compute"] = compute
    measured = {k: dict(v) for k, v in tree.get("measured", {}).items()}
    for pipe, by_dtype in measured.get("compute", {}).items():
        clk = matrix_load_clock(base, pipe)[0] if pipe in MATRIX_PIPES else base.clock_under_load(pipe)
        scale = min(1.0, hz / clk)
        why = f"x {scale:.3f} (the rate ran at {clk / 1e6:.0f} MHz): {note}"
        measured["compute"][pipe] = {d: _scaled(q, scale, why) for d, q in by_dtype.items()}
    if "clock" in measured:
        measured["clock"] = {w: _scaled(q, min(q.value, hz) / q.value, note) for w, q in measured["clock"].items()}
    if "bandwidth" in measured:
        measured["bandwidth"] = {
            lv: (_scaled(q, hz / peak, f"x {hz / peak:.3f}: {note}") if lv in CORE_CLOCKED_LEVELS else q)
            for lv, q in measured["bandwidth"].items()
        }
    tree["measured"] = measured
    memory = dict(tree["memory"])
    for lv in CORE_CLOCKED_LEVELS:
        if lv in memory and "latency" in memory[lv]:
            memory[lv] = {**memory[lv], "latency": _scaled(memory[lv]["latency"], peak / hz, f"x {peak / hz:.3f}: {note}")}
    tree["memory"] = memory
    tree["name"] = f"{base.name} at {hz / 1e6:.0f} MHz"
    mhz = f"{hz / 1e6:.6g}"
    fixed = Arch(f"{base.key}@{mhz}mhz", tree, base.path)
    fixed.core_latency_scale = peak / hz  # for the shared default latencies (`rates.latency_used`)
    return fixed


def _scaled(q, factor: float, note: str):
    """``q`` times ``factor``, its note and benchmark text saying so (`arch show` prints both)."""
    extra = dict(q.extra)
    if extra.get("benchmark"):
        extra["benchmark"] = f"{extra['benchmark']}; {note}"
    raw = q.raw * factor if isinstance(q.raw, (int, float)) and not isinstance(q.raw, bool) else q.raw  # in the spec's unit
    return replace(q, value=q.value * factor, raw=raw, note=f"{q.note}; {note}" if q.note else note, extra=extra)
