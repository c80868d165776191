"""Dicts from columns: the many small per-case dicts of a batch (shapes, bytes per level, terms,
a case's parameters), built without a Python call per dict."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache


def rows_of(keys: tuple, cols: list[list], n: int) -> list[dict]:
    """``n`` dicts, the i-th ``{keys[0]: cols[0][i], keys[1]: cols[1][i], ...}``."""
    if any(len(c) != n for c in cols):
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
