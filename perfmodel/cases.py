"""Cases: the input contract. A case is a flat mapping (id, arch, kernel, dtype, scope, parameters),
given as ``key=value`` words, a YAML list, or JSON lines. Parsing checks every key against the
kernel's registered parameters and reports the case and key of the first problem.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

from perfmodel import dtypes
from perfmodel.arch import Arch
from perfmodel.columns import rows_of
from perfmodel.errors import InputError, one_line
from perfmodel.models.registry import KernelModel, Param, convert_param, get_model, numbers_accepted
from perfmodel.vocab import SCOPES

# keys every family accepts; ``scope`` says what a predicted time covers (perfmodel.vocab.SCOPES);
# ``warm`` whether the kernel reruns on the same inputs (a benchmark loop: caches hold what fits)
BASE_KEYS = ("id", "arch", "kernel", "dtype", "scope", "warm")
WARM = Param("warm", bool, False)


@dataclass(slots=True)
class Case:
    """A validated case: parameters converted to their types, defaults filled in."""

    index: int
    id: str | None
    arch: str | Arch  # a key, a spec path, or an Arch (validate's copy with an overridden clock)
    kernel: str
    dtype: str
    params: dict[str, Any]
    model: KernelModel
    scope: str = "kernel"  # what the time covers: kernel, events, host or loop
    warm: bool | None = None  # the case's own warm= key; None: the run's --warm

    @property
    def where(self) -> str:
        return case_label(self.index, self.id)


def case_label(index: int, case_id: Any, source: str | None = None) -> str:
    label = f"case {index + 1}" + (f" (id {case_id})" if case_id not in (None, "") else "")
    return f"{source}: {label}" if source else label


def parse_kv(words: list[str], where: str = "command line") -> dict[str, str]:
    """``["m=4096", "n=4096"]`` -> ``{"m": "4096", "n": "4096"}``."""
    out: dict[str, str] = {}
    for w in words:
        if "=" not in w:
            raise InputError(f"expected key=value, got {w!r}", where=where)
        k, v = w.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError(f"expected key=value, got {w!r}", where=where)
        if k in out:
            raise InputError(f"given twice ({out[k]!r} and {v.strip()!r}); give each key once", where=where, key=k)
        out[k] = v.strip()
    return out


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):  # a key given twice: name it
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"key {k!r} given twice; give each key once")
            seen.add(k)
    return out


# one decoder for every line (json.loads with a hook builds a new one per call)
_JSON_LINE = json.JSONDecoder(object_pairs_hook=_unique_keys)
_SCAN = json.JSONDecoder().scan_once  # the C scanner, no hook: a dict keeps the last of a repeated key
_ARRAY = json.JSONDecoder().decode  # the same scanner over a whole text


def _decode_line(line: str) -> Any:
    """One JSON line: the plain C scanner where it provably saw no repeated key, else the
    checking decoder (which names the repeated key, or the syntax error).

    Proof for the fast path: each key-value pair has a colon outside strings, so pairs (at every
    nesting level) <= all colons in the line; a top-level dict holds one entry per distinct key.
    When the colons equal the dict's entries, every pair is a distinct top-level key.
    """
    try:
        obj, end = _SCAN(line, 0)
    except (StopIteration, ValueError, RecursionError):  # leading blank, bad syntax, huge integer
        return _JSON_LINE.decode(line)
    if end != len(line) or obj.__class__ is not dict or line.count(":") != len(obj):
        return _JSON_LINE.decode(line)
    return obj


def _decode_each(lines: list[str], where: str) -> list[dict]:
    """JSON lines one at a time (`_decode_line`); an error names its line."""
    rows = []
    for n, line in enumerate(lines, 1):
        if not line or line.isspace():
            continue
        try:
            obj = _decode_line(line)
        except json.JSONDecodeError as e:
            raise InputError(f"line {n}: malformed JSON ({e.msg})", where=where) from None
        except (ValueError, RecursionError) as e:  # a key given twice, integers too long, nesting
            raise InputError(f"line {n}: {one_line(str(e), 120)}", where=where) from None
        if not isinstance(obj, dict):
            raise InputError(f"line {n}: expected a JSON object per line", where=where)
        rows.append(obj)
    return rows


def _decode_all(text: str, lines: list[str]) -> list[dict] | None:
    """`_decode_each` of ``lines`` (the lines of ``text``) in one call of the C decoder (the
    lines joined into one array: a third of the reading time of 100k cases), or None where that
    is not provably the same, for `_decode_each` to decode and word any error.

    Proof: every line starts with ``{`` and ends with ``}``, and the text holds one of each per
    line, so each line is one object with no object nested and no brace inside a string; the
    array's items are then the lines' objects, decoded by the same scanner. The colons equal
    the entries of all the objects, so each line passes `_decode_line`'s proof (no repeated key).
    """
    n = len(lines)
    if not (text.count("{") == n == text.count("}") and all(map(str.startswith, lines, repeat("{")))
            and all(map(str.endswith, lines, repeat("}")))):
        return None
    try:
        rows = _ARRAY("[" + ",".join(lines) + "]")
    except (ValueError, RecursionError):  # bad syntax, huge integers: _decode_each words it
        return None
    if len(rows) != n or sum(map(len, rows)) != text.count(":"):
        return None
    return rows


def load_case_file(path: str) -> list[dict]:
    """A YAML list of mappings, or JSON lines (one object per line)."""
    from perfmodel.yamlio import parse_yaml, read_text

    p = Path(path)
    text = read_text(p, "a cases file (YAML list or JSON lines)")
    stripped = text.lstrip()
    if not stripped:
        raise InputError("the cases file is empty; expected a YAML list or JSON lines", where=str(p))
    if p.suffix in (".jsonl", ".json", ".ndjson") or stripped.startswith("{"):
        lines = text.splitlines()
        rows = _decode_all(text, lines)
        return rows if rows is not None else _decode_each(lines, str(p))
    data = parse_yaml(text, str(p))
    if isinstance(data, dict) and "cases" in data:
        data = data["cases"]
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise InputError("expected a YAML list of case mappings (or a mapping with a `cases:` list)", where=str(p))
    return data


def normalize(
    raw: dict,
    index: int,
    default_arch: str | None = None,
    default_dtype: str | None = None,
    source: str | None = None,
    default_kernel: str | None = None,
    default_scope: str | None = None,
) -> Case:
    """Check one raw case against its kernel's parameters; convert and fill defaults."""
    cid = raw.get("id")
    where = case_label(index, cid, source)
    kernel = raw.get("kernel", default_kernel)
    if kernel in (None, ""):
        raise InputError("missing; expected a kernel name such as gemm or attention", where=where, key="kernel")
    model = get_model(str(kernel), where=where)
    arch = raw.get("arch", default_arch)
    if arch in (None, ""):
        raise InputError("missing; expected an arch key such as mi300x (or --arch)", where=where, key="arch")
    dtype = str(raw.get("dtype") or default_dtype or model.default_dtype)
    dtypes.check(dtype, model, where)  # refuses an unknown dtype, or one the family does not take, naming the case
    scope = raw.get("scope", default_scope)
    scope = "kernel" if scope in (None, "") else scope
    if not isinstance(scope, str) or scope not in SCOPES:
        raise InputError(f"got {scope!r}; expected one of {', '.join(SCOPES)}", where=where, key="scope")
    warm = raw.get("warm")
    if warm not in (None, ""):
        warm = convert_param(WARM, warm, where)
    else:
        warm = None
    model.check_keys(raw, where, also=BASE_KEYS)
    params = {k: convert_param(model.params[k], v, where) for k, v in raw.items() if k not in BASE_KEYS}
    for name, p in model.params.items():
        if name not in params:
            if p.required:
                raise InputError(f"missing required parameter of {model.name} ({p.help or p.kind.__name__})", where=where, key=name)
            params[name] = p.default
    arch = arch if isinstance(arch, Arch) else str(arch)
    return Case(index, None if cid is None else str(cid), arch, model.name, dtype, params, model, scope, warm)


def normalize_all(
    raws: Iterable[dict],
    archs: list[str | Arch] | None = None,
    dtype: str | None = None,
    source: str | None = None,
    kernel: str | None = None,
    problems: list | None = None,
    scope: str | None = None,
) -> list[Case]:
    """Validate raw cases (`normalize` each); with several archs each case is expanded once per
    arch, in case order.

    ``problems``: a list to collect the `InputError` of every invalid case (in case order)
    instead of raising at the first; the valid cases are returned. ``scope``: the timing scope
    of cases that do not give their own (default ``kernel``).

    Speed (a 100k-case file): cases that share their kernel and key set are checked together
    (`_normalize_group`: keys and defaults once per group, each parameter converted as a
    column); a case the group check cannot vouch for goes through `normalize` itself, so every
    error is `normalize`'s, word for word.
    """
    raws = raws if isinstance(raws, list) else list(raws)
    done: list[list[Case] | InputError | None] = [None] * len(raws)
    groups: dict[tuple, list[int]] = {}
    for i, raw in enumerate(raws):
        k = raw.get("kernel", kernel) if raw.__class__ is dict else None
        if k.__class__ is str:
            groups.setdefault((k, tuple(raw)), []).append(i)
    ctx = (archs, dtype, source, kernel, scope)
    for (k, keys), idx in groups.items():
        _normalize_group(raws, idx, k, keys, ctx, done)
    out: list[Case] = []
    for i, d in enumerate(done):
        if d is None:
            d = done[i] = _normalize_one(raws[i], i, ctx)
        if isinstance(d, InputError):
            if problems is None:
                raise d
            problems.append(d)
        else:
            out += d
    return out


def _targets(raw: dict, archs) -> list:
    """The archs one raw case is predicted on: its own ``arch``, else each of ``archs``."""
    return archs if archs and len(archs) > 1 and "arch" not in raw else [archs[0] if archs else None]


def _normalize_one(raw: dict, i: int, ctx: tuple) -> list[Case] | InputError:
    """One raw case on each of its archs, or its first error (the same on every arch)."""
    archs, dtype, source, kernel, scope = ctx
    try:
        return [normalize(raw, i, a, dtype, source, kernel, scope) for a in _targets(raw, archs)]
    except InputError as e:
        e.index = i
        return e


def _normalize_group(raws: list, idx: list[int], kernel: str, keys: tuple, ctx: tuple, done: list) -> None:
    """`normalize` of the cases ``raws[i] for i in idx``, which share ``kernel`` and their keys
    (in order): fills ``done[i]`` with their Cases where every check passes; leaves None (for
    `normalize` to redo, and to word the error) where any check is in doubt. Every key is a
    column, each distinct value of a text key checked once."""
    archs, dtype_default, _source, _kernel, scope_default = ctx
    try:
        model = get_model(kernel)
    except InputError:
        return
    names = [k for k in keys if k not in BASE_KEYS]
    if any(k not in model.params for k in names):
        return  # an unknown key: normalize names it
    if any(p.required and n not in names for n, p in model.params.items()):
        return  # a missing parameter: normalize names it
    defaults = {n: p.default for n, p in model.params.items() if n not in names}
    group = [raws[i] for i in idx]
    n = len(group)
    bad: set[int] = set()  # positions in the group that normalize must redo
    cols = [_column(model.params[k], [r[k] for r in group], bad) for k in names]
    # each case's parameters: its own, then the defaults (one shared object per default, as before)
    params_of = rows_of((*names, *defaults), cols + [[v] * n for v in defaults.values()], n)
    has = set(keys)

    def column(key: str, default: Any, check) -> Iterable:
        """The checked values of a base key (``check(v)``: the value, or _BAD), ``default`` where absent."""
        if key not in has:
            v = check(default)
            if v is _BAD:
                bad.update(range(n))
            return repeat(v)
        memo: dict = {}
        out = [_memo_call(check, r[key], memo) for r in group]
        bad.update(i for i, v in enumerate(out) if v is _BAD)
        return out

    def dtype_of(v: Any) -> Any:
        dt = str(v or dtype_default or model.default_dtype)
        return dt if dtypes.accepted(dt, model) else _BAD

    def scope_of(v: Any) -> Any:
        v = "kernel" if v in (None, "") else v
        return v if v.__class__ is str and v in SCOPES else _BAD

    def warm_of(v: Any) -> Any:
        if v in (None, ""):
            return None
        try:
            return convert_param(WARM, v, None)
        except InputError:
            return _BAD

    dts = column("dtype", None, dtype_of)
    scs = column("scope", scope_default, scope_of)
    warms = column("warm", None, warm_of)
    ids = [None if (v := r.get("id")) is None else str(v) for r in group] if "id" in has else repeat(None)
    targets = _targets(group[0], archs)  # the same for the whole group: it depends on the keys only
    if "arch" in has:
        arch_col = [r["arch"] for r in group]
        bad.update(i for i, a in enumerate(arch_col) if a in (None, ""))
        arch_col = [a if isinstance(a, Arch) else str(a) for a in arch_col]
    elif any(t in (None, "") for t in targets):
        return  # no arch: normalize says so
    else:
        targets = [t if isinstance(t, Arch) else str(t) for t in targets]
        arch_col = repeat(targets[0])
    name = model.name
    for pos, params, dt, sc, warm, cid, a in zip(range(n), params_of, dts, scs, warms, ids, arch_col, strict=False):  # repeat()s
        if pos in bad:
            continue
        if len(targets) == 1:
            done[idx[pos]] = [Case(idx[pos], cid, a, name, dt, params, model, sc, warm)]
        else:  # one case per arch, each with its own params
            done[idx[pos]] = [Case(idx[pos], cid, t, name, dt, dict(params), model, sc, warm) for t in targets]


def _memo_call(check, v: Any, memo: dict) -> Any:
    """``check(v)`` once per distinct value (keyed by type too: ``1 == True`` but ``str(1) !=
    str(True)``); ``_BAD`` for a value that cannot be hashed."""
    try:
        key = (v.__class__, v)
        out = memo.get(key, memo)
    except TypeError:  # unhashable (a list, a mapping)
        return _BAD
    if out is memo:
        out = memo[key] = check(v)
    return out


_BAD = object()


def _column(p: Param, col: list, bad: set[int]) -> list:
    """`convert_param` of one parameter over a group of cases: the converted values, with the
    positions it cannot vouch for added to ``bad``."""
    if p.kind in (str, bool):

        def convert(v: Any) -> Any:
            try:
                return convert_param(p, v, None)
            except InputError:
                return _BAD

        memo: dict = {}
        out = [_memo_call(convert, v, memo) for v in col]
        bad.update(i for i, v in enumerate(out) if v is _BAD)
        return out
    import numpy as np

    # numbers: ints and floats only (text, bools, numpy scalars: convert_param redoes them)
    try:
        out = [float(v) if v.__class__ is int or v.__class__ is float else math.nan for v in col]
    except OverflowError:  # an int beyond floats
        out = [_float(v) for v in col]
    ok = numbers_accepted(p, out)
    if not ok.all():
        bad.update(np.flatnonzero(~ok).tolist())
    return out


def _float(v: Any) -> float:
    """float(v) of an int or a float; NaN (refused) for anything else or an int beyond floats."""
    if v.__class__ is int or v.__class__ is float:
        try:
            return float(v)
        except OverflowError:
            return math.nan
    return math.nan
