"""`Prediction`: one case timed on one arch, the typed record every caller shares.

`perfmodel predict` prints it (`row()` is the output contract), `perfmodel validate` compares a
measurement with it, the plots draw it and the Python API returns it. `perfmodel.prediction`
makes these records from cases; this module only says what one is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from perfmodel.vocab import split_term


@dataclass(slots=True)
class Prediction:
    """One case timed on one arch: every term, the bound class, and the naive roofline beside it.

    Amounts are per kernel (FLOPs per ``"pipe:dtype"``, bytes per level split into reads and
    writes); times in seconds, per term key (see `perfmodel.vocab`). ``rates_used`` is the
    ceiling each term was timed against, shared by the batch the case was evaluated in.
    """

    arch: str
    kernel: str
    dtype: str
    shape: dict[str, Any]
    time_s: float
    bound: str
    flops_by: dict[str, float]
    bytes_read: dict[str, float]
    bytes_write: dict[str, float]
    bytes: dict[str, float]  # reads + writes per level (summed once per batch, in numpy)
    terms_s: dict[str, float]
    roofline_time_s: float
    roofline_bound: str
    memory_level: str
    rates_used: dict[str, float]
    tile: str | None = None
    grid: int = 0
    wgs_per_cu: int = 0
    notes: str | None = None
    id: str | None = None
    scope: str = "kernel"  # what time_s covers: the kernel, device events around it, or a host clock
    packed: frozenset[str] = frozenset()  # FLOP keys issued as packed VALU instructions
    # p10 and p90 of predicted/measured time on held-out measurements of this family
    # (perfmodel/error_bands.yaml): the measured time is likely within time / p90 .. time / p10
    band: tuple[float, float] = (1.0, 1.0)
    # integer VALU ops per "pipe:<op class>" (timed, never FLOPs); empty for most kernels
    iops_by: dict[str, float] = field(default_factory=dict)

    # --- derived quantities ------------------------------------------------------------------
    @property
    def time_us(self) -> float:
        return self.time_s * 1e6

    @property
    def time_band_us(self) -> tuple[float, float]:
        """Where a measurement of this kernel likely falls: nominally 80 %; docs/accuracy.md gives
        how often it held, on our sources and on a source left out of the band."""
        return self.time_s / self.band[1] * 1e6, self.time_s / self.band[0] * 1e6

    @property
    def terms_us(self) -> dict[str, float]:
        return {k: v * 1e6 for k, v in self.terms_s.items()}

    @property
    def flops(self) -> float:
        return sum(self.flops_by.values()) if self.flops_by else 0.0

    @property
    def tflops(self) -> float:
        return self.flops / self.time_s / 1e12 if self.time_s > 0 else 0.0

    @property
    def ai(self) -> float | None:
        """FLOPs per device-memory byte (None where no byte reaches device memory)."""
        b = self.bytes.get(self.memory_level, 0.0)
        return self.flops / b if b > 0 else None

    @property
    def headroom(self) -> float:
        """Time at the theoretical roof / predicted time (1 = at the roof)."""
        return self.roofline_time_s / self.time_s if self.time_s > 0 else 1.0

    @property
    def case(self) -> dict[str, Any]:
        """The case as input keys: kernel, dtype and the shape."""
        return {"kernel": self.kernel, "dtype": self.dtype, **self.shape}

    def amount(self, term: str) -> float | None:
        """FLOPs or bytes behind one term (None for ``launch``)."""
        kind, key = split_term(term)
        if kind == "compute":
            if key.endswith(":int") and key not in self.flops_by:  # a pipe's integer ops, all classes
                pipe = key.split(":")[0]
                ops = [v for k, v in self.iops_by.items() if k.split(":")[0] == pipe]
                return sum(ops) if ops else None
            return self.flops_by.get(key)
        if kind == "memory":
            return self.bytes.get(key)
        return None

    @property
    def rates(self) -> dict[str, float]:
        """Term -> the rate the estimate timed it at: amount / term time (after quantization and
        Little's law), or the ceiling it would use where the case puts nothing there."""
        out: dict[str, float] = {}
        for t, s in self.terms_s.items():
            amt = self.amount(t)
            if amt and s > 0:
                out[t] = amt / s
            elif t in self.rates_used:
                out[t] = self.rates_used[t]
        return out

    def row(self) -> dict[str, Any]:
        """The output contract: one JSON-ready dict (times in microseconds)."""
        t, b, rt = self.time_s, self.bytes, self.roofline_time_s
        f = sum(self.flops_by.values()) if self.flops_by else 0.0
        hb = b.get(self.memory_level, 0.0)
        lo, hi = self.band
        row: dict[str, Any] = {
            "id": self.id,  # deleted below where None (cheaper than a copy to put it first)
            "arch": self.arch,
            "kernel": self.kernel,
            "dtype": self.dtype,
            "scope": self.scope,
            "shape": self.shape,
            "time_us": t * 1e6,
            "time_band_us": [t / hi * 1e6, t / lo * 1e6],
            "bound": self.bound,
            "flops": f,
            "flops_by": self.flops_by,
            "bytes": b,
            "tflops": f / t / 1e12 if t > 0 else 0.0,
            "ai": f / hb if hb > 0 else None,
            "roofline_time_us": rt * 1e6,
            "roofline_bound": self.roofline_bound,
            "headroom": rt / t if t > 0 else 1.0,
            "terms_us": {k: v * 1e6 for k, v in self.terms_s.items()},
            "tile": self.tile,
            "grid": self.grid,
            "wgs_per_cu": self.wgs_per_cu,
        }
        if self.id is None:
            del row["id"]
        if self.iops_by:  # only kernels with integer work carry it (other rows are unchanged)
            row["iops_by"] = self.iops_by
        if self.notes:
            row["notes"] = self.notes
        return row

    @classmethod
    def many(cls, n: int, **fields: Iterable) -> list[Prediction]:
        """``n`` records from one iterable per field (a list, or ``itertools.repeat`` of a value
        the batch shares): a batch's records built without a keyword call per record."""
        names = cls.__dataclass_fields__
        if set(fields) != set(names):
            raise TypeError(f"Prediction.many needs every field: {sorted(set(names) ^ set(fields))}")
        out = list(map(cls, *(fields[k] for k in names)))
        if len(out) != n:
            raise ValueError(f"Prediction.many: {len(out)} records built, {n} expected")
        return out

    @classmethod
    def combine(cls, preds: list[Prediction]) -> Prediction:
        """One prediction for several dispatches of a kernel: amounts and times summed, the
        most common bound class."""
        return cls.combine_runs([(p, 1) for p in preds])

    @classmethod
    def combine_runs(cls, runs: list[tuple[Prediction, int]]) -> Prediction:
        """`combine` of a run-length list ``[(prediction, repeats), ...]`` in dispatch order: the
        same sums, added in the same order, without a list entry per dispatch (a streamed
        validation of a million dispatches keeps only the runs)."""
        if len(runs) == 1 and runs[0][1] == 1:
            return runs[0][0]

        def add(attr: str) -> dict[str, float]:
            acc: dict[str, float] = {}
            for p, n in runs:
                for k, v in getattr(p, attr).items():
                    acc[k] = _repeat_add(acc.get(k, 0.0), v, n)
            return acc

        def total(attr: str):
            s = 0
            for p, n in runs:
                s = _repeat_add(s, getattr(p, attr), n)
            return s

        bounds: Counter = Counter()
        for p, n in runs:
            bounds[p.bound] += n
        first = runs[0][0]
        return cls(
            arch=first.arch,
            kernel=first.kernel,
            dtype=first.dtype,
            shape=first.shape,
            time_s=total("time_s"),
            bound=bounds.most_common(1)[0][0],
            flops_by=add("flops_by"),
            bytes_read=add("bytes_read"),
            bytes_write=add("bytes_write"),
            bytes=add("bytes"),
            terms_s=add("terms_s"),
            roofline_time_s=total("roofline_time_s"),
            roofline_bound=first.roofline_bound,
            memory_level=first.memory_level,
            rates_used=first.rates_used,
            tile=first.tile,
            grid=first.grid,
            wgs_per_cu=first.wgs_per_cu,
            notes=first.notes,
            id=first.id,
            scope=first.scope,
            packed=first.packed,
            band=first.band,
            iops_by=add("iops_by"),
        )


def _repeat_add(s, v, n: int):
    """``s + v + v + ...`` (``n`` times) left to right: bit for bit the sum the dispatch-by-
    dispatch order gives. Long runs go through ``np.add.accumulate``, which adds sequentially
    (no pairwise summation), a million terms at a time; tests/test_trace_columns.py checks it
    against plain repeated addition."""
    if n < 64 or type(v) is not float or not isinstance(s, (int, float)):
        for _ in range(n):
            s += v
        return s
    import numpy as np

    s = float(s)  # what int + float does first
    with np.errstate(over="ignore", invalid="ignore"):
        while n:
            k = min(n, 1 << 20)
            s = float(np.add.accumulate(np.concatenate(([s], np.full(k, v))))[-1])
            n -= k
    return s
