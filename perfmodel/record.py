"""`Prediction`: one case timed on one arch, the typed record every caller shares.

`perfmodel predict` prints it (`row()` is the output contract), `perfmodel validate` compares a
measurement with it, the plots draw it and the Python API returns it. `perfmodel.prediction`
makes these records from cases; this module only says what one is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, is_not
from typing import Any

from perfmodel.columns import Columns, Table, positions_by, rows_of, scatter, take
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
    scope: str = "kernel"  # what time_s covers: the kernel, device events around it, a host clock, or a loop of calls
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
        """The output contract: one JSON-ready dict (times in microseconds), as `row_columns` makes it."""
        return rows([self])[0]

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


# --- the output contract ---------------------------------------------------------------------
# `row_columns` is the one definition of an output row. It reads records as a table of field
# columns (`Prediction` field -> one value per record; FLOPs, bytes and terms as `Columns`), the
# form `perfmodel.prediction.batch_fields` makes a batch in, so `perfmodel predict` writes the
# rows of 100k cases from their batches' columns without a record or a dict per case.


def row_columns(fields: Table, n: int) -> list[tuple[list[int], dict[str, Any]]]:
    """The rows of ``n`` records given as field columns (the output contract, `Prediction.row`),
    column by column: groups of positions whose rows have the same keys, each with its columns
    (key -> one value per row of the group, or `Columns` of the group's dicts; keys in row order).

    A row has ``id`` only where the case has one, ``iops_by`` only for kernels with integer work,
    ``notes`` only where there are some."""
    if not n:
        return []
    ids, iops, notes = fields["id"], fields["iops_by"], fields["notes"]
    has_iops = repeat(bool(iops.keys)) if isinstance(iops, Columns) else map(bool, iops)
    layouts = list(zip(map(is_not, ids, repeat(None)), has_iops, map(bool, notes), strict=False))  # a repeat
    if layouts.count(layouts[0]) == n:
        return [(list(range(n)), _columns(fields, n, layouts[0]))]
    parts = positions_by(layouts).items()
    return [(idx, _columns(take(fields, idx), len(idx), layout)) for layout, idx in parts]


def _columns(f: Table, n: int, layout: tuple[bool, bool, bool]) -> dict[str, Any]:
    """`row_columns` of rows with the same keys (``layout``: they have an id, iops, notes)."""
    has_id, has_iops, has_notes = layout
    t, rt = f["time_s"], f["roofline_time_s"]
    fl = _sums(f["flops_by"])
    hb = _at(f["bytes"], f["memory_level"])
    cols: dict[str, Any] = {"id": f["id"]} if has_id else {}
    cols.update(
        arch=f["arch"],
        kernel=f["kernel"],
        dtype=f["dtype"],
        scope=f["scope"],
        shape=f["shape"],
        time_us=[x * 1e6 for x in t],
        time_band_us=[[x / hi * 1e6, x / lo * 1e6] for x, (lo, hi) in zip(t, f["band"], strict=True)],
        bound=f["bound"],
        flops=fl,
        flops_by=f["flops_by"],
        bytes=f["bytes"],
        tflops=[ff / x / 1e12 if x > 0 else 0.0 for ff, x in zip(fl, t, strict=True)],
        ai=[ff / h if h > 0 else None for ff, h in zip(fl, hb, strict=True)],
        roofline_time_us=[x * 1e6 for x in rt],
        roofline_bound=f["roofline_bound"],
        headroom=[r / x if x > 0 else 1.0 for r, x in zip(rt, t, strict=True)],
        terms_us=_times_1e6(f["terms_s"]),
        tile=f["tile"],
        grid=f["grid"],
        wgs_per_cu=f["wgs_per_cu"],
    )
    if has_iops:
        cols["iops_by"] = f["iops_by"]
    if has_notes:
        cols["notes"] = f["notes"]
    return cols


# A column of mappings comes as `Columns` (a batch's) or as one dict per row (records'): the
# three readings the contract makes of one, for either form.


def _sums(col: Columns | Sequence[dict]) -> list:
    """Each row's sum of its mapping's values as ``sum`` adds them (0.0 for an empty one)."""
    if isinstance(col, Columns):
        return list(map(sum, zip(*col.cols, strict=True))) if col.keys else [0.0] * col.n
    return [sum(d.values()) if d else 0.0 for d in col]


def _at(col: Columns | Sequence[dict], keys: Sequence[str]) -> list:
    """Each row's value at its key (0.0 where its mapping has none)."""
    if not isinstance(col, Columns):
        return [d.get(k, 0.0) for d, k in zip(col, keys, strict=True)]
    if keys.count(keys[0]) != len(keys):  # rows of several GPUs
        return [col.cols[col.keys.index(k)][i] if k in col.keys else 0.0 for i, k in enumerate(keys)]
    return list(col.cols[col.keys.index(keys[0])]) if keys[0] in col.keys else [0.0] * col.n


def _times_1e6(col: Columns | Sequence[dict]) -> Columns | list[dict]:
    """Each row's mapping with its values times 1e6 (seconds -> microseconds); more dicts than
    keys that share their keys (a batch's) a column at a time, each made by one display (`rows_of`)."""
    if isinstance(col, Columns):
        return Columns(col.keys, [[v * 1e6 for v in c] for c in col.cols], col.n)
    layouts = list(map(tuple, col))
    if not col or len(col) <= len(layouts[0]) or layouts.count(layouts[0]) != len(col):
        return [{k: v * 1e6 for k, v in d.items()} for d in col]
    return rows_of(layouts[0], [[v * 1e6 for v in c] for c in zip(*map(dict.values, col), strict=True)], len(col))


_NAMES = tuple(Prediction.__dataclass_fields__)
_FIELDS = attrgetter(*_NAMES)  # a record -> the tuple of its fields


def fields_of(preds: Sequence[Prediction]) -> Table:
    """Records as a table of field columns (`row_columns`' input)."""
    if not preds:
        return {name: () for name in _NAMES}
    return dict(zip(_NAMES, zip(*map(_FIELDS, preds), strict=True), strict=True))


def from_rows(parts: Iterable[tuple[list[int], Table]], n: int, make: Callable[[tuple, list], list]) -> list:
    """``make(keys, columns)`` (one result per row) of the `row_columns` of each table, the
    results placed at the table's positions (``n`` in all)."""
    out = []
    for positions, table in parts:
        for idx, cols in row_columns(table, len(positions)):
            out.append(([positions[i] for i in idx], make(tuple(cols), list(cols.values()))))
    return scatter(out, n)


def dict_rows(keys: tuple, columns: list) -> list[dict[str, Any]]:
    """The row dicts of `row_columns`' columns (`Columns` made dicts, one per row)."""
    return rows_of(keys, [c.dicts() if isinstance(c, Columns) else c for c in columns], len(columns[0]))


def rows(preds: Sequence[Prediction]) -> list[dict[str, Any]]:
    """`Prediction.row` of each record, made a group of rows at a time."""
    return from_rows([(list(range(len(preds))), fields_of(preds))], len(preds), dict_rows)


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
