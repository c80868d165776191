"""Dicts from columns: the many small per-case dicts of a batch (shapes, bytes per level, terms,
a case's parameters), built without a Python call per dict, or kept as columns (`Columns`) where
no dict per case is needed (`perfmodel predict` writes its rows from the columns)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import lru_cache
from operator import itemgetter


def rows_of(keys: tuple, cols: list[list], n: int) -> list[dict]:
    """``n`` dicts, the i-th ``{keys[0]: cols[0][i], keys[1]: cols[1][i], ...}``."""
    if cols and set(map(len, cols)) != {n}:
        raise ValueError(f"columns of {[len(c) for c in cols]} values for {n} dicts")
    if not keys:
        return [{} for _ in range(n)]
    return list(map(_dict_maker(keys), *cols))


@lru_cache(maxsize=512)
def _dict_maker(keys: tuple) -> Callable[..., dict]:
    """``f(v0, v1, ...) -> {keys[0]: v0, keys[1]: v1, ...}``: one dict display, generated once per
    key tuple (as `dataclasses` generates ``__init__``), which builds a small dict in half the
    time ``dict(zip(keys, values))`` takes; a 100k-case file builds 800k of them. Text keys are
    written with ``repr`` (a literal equal to the key); any other key goes through ``zip``."""
    if not all(k.__class__ is str for k in keys):
        return lambda *vals: dict(zip(keys, vals, strict=True))
    args = [f"v{i}" for i in range(len(keys))]
    body = ", ".join(f"{k!r}: {a}" for k, a in zip(keys, args, strict=True))
    return eval(f"lambda {', '.join(args)}: {{{body}}}", {})


def positions_by(labels: Iterable[Hashable]) -> dict[Hashable, list[int]]:
    """label -> the positions that carry it, in order of first appearance."""
    where: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        where.setdefault(label, []).append(i)
    return where


def scatter(parts: Iterable[tuple[list[int], Iterable]], n: int) -> list:
    """One list of ``n`` items from parts computed apart (per group of positions): each part's
    items put back at its positions, so a caller can work group by group and keep the order."""
    out: list = [None] * n
    for idx, items in parts:
        for i, item in zip(idx, items, strict=True):
            out[i] = item
    return out


class Columns:
    """``n`` dicts with the same keys, kept as one list per key (``cols[j][i]`` is the value of
    ``keys[j]`` in the i-th dict): a batch's bytes per level, FLOPs or terms before (or instead
    of) one dict per case."""

    __slots__ = ("keys", "cols", "n")

    def __init__(self, keys: tuple, cols: list[Sequence], n: int):
        if len(keys) != len(cols) or (cols and set(map(len, cols)) != {n}):
            raise ValueError(f"{len(keys)} keys, columns of {[len(c) for c in cols]} values for {n} dicts")
        self.keys, self.cols, self.n = keys, cols, n

    def __len__(self) -> int:
        return self.n

    def dicts(self) -> list[dict]:
        """The dicts (a column that is `Columns` itself: dicts inside)."""
        return rows_of(self.keys, [c.dicts() if isinstance(c, Columns) else c for c in self.cols], self.n)

    def take(self, idx: list[int]) -> Columns:
        """The dicts at positions ``idx``, as columns."""
        get = _getter(idx)
        return Columns(self.keys, [get(c) for c in self.cols], len(idx))

    def window(self, lo: int, hi: int) -> Columns:
        """The dicts ``lo:hi``, as columns."""
        return Columns(self.keys, [c[lo:hi] for c in self.cols], len(range(self.n)[lo:hi]))


# A table: name -> one column (a list, or `Columns` for a column of dicts), every column n long.
Table = dict[str, "Sequence | Columns"]


def take(table: Table, idx: list[int]) -> Table:
    """The rows of ``table`` at positions ``idx`` (each column gathered in one C call)."""
    get = _getter(idx)
    return {k: v.take(idx) if isinstance(v, Columns) else get(v) for k, v in table.items()}


def _getter(idx: list[int]) -> Callable[[Sequence], tuple]:
    """``column -> a tuple of its values at positions idx``, in one C call."""
    if len(idx) > 1:
        return itemgetter(*idx)
    return lambda col: tuple(col[i] for i in idx)


def window(table: Table, lo: int, hi: int) -> Table:
    """The rows ``lo:hi`` of ``table``."""
    return {k: v.window(lo, hi) if isinstance(v, Columns) else v[lo:hi] for k, v in table.items()}
