"""`Measurement`: what rocprof measured for one dispatch (or an aggregate of dispatches).

It carries the same quantities as :class:`perfmodel.work.Work` (FLOPs keyed ``"pipe:dtype"``,
bytes per level split into reads and writes) so a prediction and a measurement compare field
by field, plus the measured time, the achieved clock and flags for results that cannot be true.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from perfmodel.vocab import COMPUTE, MEMORY, UNKNOWN, split_flop_key
from perfmodel.work import LevelBytes


@dataclass
class Measurement(LevelBytes):
    """Quantities derived from counters and timestamps, in SI units (s, Hz, FLOPs, bytes).

    ``bytes_unsplit`` holds levels whose counters do not separate reads from writes (vL1D tag
    accesses, LDS cycles); they count in ``bytes`` but not in ``bytes_read``/``bytes_write``.
    ``time_s`` is None when no usable duration exists (e.g. corrupt timestamps) - then no rate
    is reported and ``flags`` says why.
    """

    kernel: str
    dispatch: int
    gfx: str = ""
    time_s: float | None = None
    time_source: str = ""
    clock_hz: float | None = None
    flops: dict[str, float] = field(default_factory=dict)
    iops: dict[str, float] = field(default_factory=dict)
    bytes_read: dict[str, float] = field(default_factory=dict)
    bytes_write: dict[str, float] = field(default_factory=dict)
    bytes_unsplit: dict[str, float] = field(default_factory=dict)
    cycles: float | None = None
    waves: float | None = None
    count: int = 1  # dispatches aggregated into this record
    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def time_us(self) -> float | None:
        return None if self.time_s is None else self.time_s * 1e6

    @property
    def total_flops(self) -> float:
        return float(sum(self.flops.values()))

    @property
    def flops_by(self) -> dict[str, float]:
        """FLOPs per ``"pipe:dtype"`` (the contract name for :attr:`flops`)."""
        return dict(self.flops)

    def rate(self, amount: float) -> float | None:
        """``amount`` per second of measured time, or None without a usable time."""
        if self.time_s is None or self.time_s <= 0:
            return None
        return amount / self.time_s

    def bandwidth(self) -> dict[str, float]:
        """Achieved bytes/s per level (empty without a usable time)."""
        if self.time_s is None or self.time_s <= 0:
            return {}
        return {lv: b / self.time_s for lv, b in self.bytes.items()}

    def measured_bound(self, peaks: Mapping[str, float] | None = None) -> str | None:
        """The term closest to its peak: ``memory:<level>`` or ``compute:<pipe>``.

        ``peaks`` maps a level to bytes/s and/or a ``"pipe:dtype"`` to FLOP/s (from the arch
        spec, supplied by the caller), and may map an integer counter key (``"valu:int32"``) to
        integer op/s. Without peaks or a usable time there is no answer;
        ``unknown`` when it cannot be decided (negative amounts, or no FLOP counter measured).
        """
        if not peaks or self.time_s is None or self.time_s <= 0:
            return None
        if any(f.startswith("negative") for f in self.flags):
            return UNKNOWN  # a negative amount cannot be closest to any ceiling
        if not self.flops:
            return UNKNOWN  # no FLOP counter measured: the compute side cannot be ruled out
        best, best_u = None, -1.0
        for lv, bw in self.bandwidth().items():
            peak = peaks.get(lv)
            if peak and bw / peak > best_u:
                best, best_u = f"{MEMORY}:{lv}", bw / peak
        # FLOPs, and integer ops where the caller gives an integer peak ("valu:int32" -> op/s)
        for key, n in [*self.flops.items(), *self.iops.items()]:
            peak = peaks.get(key)
            if peak and n / self.time_s / peak > best_u:
                best, best_u = f"{COMPUTE}:{split_flop_key(key)[0]}", n / self.time_s / peak
        return best

    def as_row(self, peaks: Mapping[str, float] | None = None) -> dict:
        """The machine-readable contract: one flat-ish dict per dispatch (SI units, time in us)."""
        return {
            "kernel": self.kernel,
            "dispatch": self.dispatch,
            "count": self.count,
            "gfx": self.gfx,
            "time_us": self.time_us,
            "time_source": self.time_source,
            "clock_hz": self.clock_hz,
            "flops": self.total_flops,
            "flops_by": self.flops_by,
            "bytes": self.bytes,
            "bytes_read": dict(self.bytes_read),
            "bytes_write": dict(self.bytes_write),
            "measured_bound": self.measured_bound(peaks),
            "flags": list(self.flags),
            "notes": list(self.notes),
        }
