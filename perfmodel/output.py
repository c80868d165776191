"""Render rows (a list of flat-ish dicts) as table, json, jsonl, csv or md.

Every command that prints data goes through here, so the formats carry the same fields.
Nested mappings (``bytes``: level -> bytes) stay nested in json/jsonl and are flattened to
``bytes.hbm`` style columns in table/csv/md.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import islice

from perfmodel.columns import Columns, positions_by, scatter

FORMATS = ("table", "json", "jsonl", "csv", "md")


def _flatten(row: dict, prefix: str = "") -> dict:
    out: dict = {}
    for k, v in row.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, name + "."))
        else:
            out[name] = v
    return out


def _json_default(o):
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:  # pragma: no cover
        pass
    return str(o)


def _clean(v):
    """JSON has no inf/nan: write null for them."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


# one encoder for every line (json.dumps with options builds a new one per call)
# (no cycle check: rows are trees built fresh from plain values, and the check costs a third)
_LINE_ENCODER = json.JSONEncoder(allow_nan=False, default=_json_default, check_circular=False)


def _line_encoder():
    """``row -> str``: `_LINE_ENCODER.encode`, or where the C accelerator exists the very C
    encoder it makes on every call, made once (its memo of encoded keys then lasts the run).
    The arguments are those `json.JSONEncoder.iterencode` passes for ``_LINE_ENCODER``."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # pragma: no cover - CPython builds have it
        return _LINE_ENCODER.encode
    enc = _LINE_ENCODER
    try:
        c = c_make_encoder(None, enc.default, json.encoder.encode_basestring_ascii, None, enc.key_separator,
                           enc.item_separator, enc.sort_keys, enc.skipkeys, enc.allow_nan)
        probe = {"a": [1.5, 1e-7, None, True, 3, "x\u00e9\n"], "b": {"c": 2.0}}
        if "".join(c(probe, 0)) != enc.encode(probe):  # another Python's private signature
            return enc.encode
    except TypeError:  # pragma: no cover
        return enc.encode
    return lambda row: "".join(c(row, 0))


_encode_line = _line_encoder()


def _dumps_line(row: dict) -> str:
    """One JSON line; the inf/nan clean-up walk runs only for rows that need it."""
    try:
        return _encode_line(row)
    except ValueError:
        return json.dumps(_clean(row), default=_json_default)


def jsonl_chunks(rows: Iterable[dict], size: int = 1000) -> Iterator[str]:
    """JSON lines of ``rows``, ``size`` lines per piece: `render`'s jsonl text, in pieces a
    writer can send on as they come (`perfmodel predict --cases` of 100k cases then never holds
    the whole text, nor its list of lines, nor its bytes: a third less memory, a tenth less time)."""
    rows = iter(rows)
    while lines := [_dumps_line(r) for r in islice(rows, size)]:
        yield lines_text(lines)


def lines_text(lines: list[str]) -> str:
    """The lines as one text, each ending with a newline (``lines`` gets an empty last item)."""
    lines.append("")
    return "\n".join(lines)


# --- JSON text a column at a time ------------------------------------------------------------
# Values of one layout (rows with the same keys, nested dicts with the same keys, values of the
# same types) are encoded together: one %-template for the layout holds the keys, the
# punctuation and every value all the rows share, and each row is one ``template % values``.
# Floats are written by ``%r`` (`float.__repr__`, what the C encoder calls), ints by ``%d``, text
# by ``%s`` after the C encoder's own escaping. The text is `_dumps_line`'s, byte for byte
# (tests/test_json_columns.py): an inf or nan becomes null as `_clean` makes it, and a value of
# any other type (numpy scalars, dict subclasses, dicts with non-text keys) is handed to
# `_dumps_line` itself.

_ASCII = json.encoder.encode_basestring_ascii  # the C function the C encoder calls for text

# A part of a template and the values that fill it: ``(template, columns)``, the template with
# one ``%s``, ``%r`` or ``%d`` per column (``%%`` for a literal ``%``), each column one value per row.
_Fragment = tuple[str, list[list[str]]]


def json_objects(keys: tuple[str, ...], columns: Sequence[Sequence | Columns]) -> list[str]:
    """The JSON text of each object ``{keys[0]: columns[0][i], keys[1]: columns[1][i], ...}``
    (as `_dumps_line` writes that dict; a `Columns` column holds dicts), without making the dicts."""
    n = len(columns[0]) if columns else 0
    return _filled(_fragment(Columns(keys, list(columns), n)), n)


def _filled(fragment: _Fragment, n: int) -> list[str]:
    """The ``n`` texts of a fragment: its template filled with each row of its columns."""
    template, columns = fragment
    if not columns:
        return [template % ()] * n
    if template == "%s":
        return list(columns[0])
    return list(map(template.__mod__, zip(*columns, strict=True)))


def _fragment(values: Sequence | Columns) -> _Fragment:
    """The fragment of ``values``' JSON texts (`Columns`: of its dicts)."""
    if isinstance(values, Columns):
        if not all(k.__class__ is str for k in values.keys):
            return "%s", [list(map(_dumps_line, values.dicts()))]
        return _joined("{", [_ASCII(k) + ": " for k in values.keys], values.cols, "}")
    if not values:
        return "%s", [[]]
    kinds = set(map(type, values))
    if len(kinds) == 1:
        return _fragment_of(kinds.pop(), values)
    return _split(values, list(map(type, values)), _fragment_of)


def _split(values: Sequence, labels: list, fragment: Callable[[Hashable, list], _Fragment]) -> _Fragment:
    """The texts of the values of each label apart (``fragment(label, values)``), back in order."""
    parts = [(idx, _filled(fragment(label, [values[i] for i in idx]), len(idx))) for label, idx in positions_by(labels).items()]
    return "%s", [scatter(parts, len(values))]


def _fragment_of(kind: type, values: Sequence) -> _Fragment:
    """The fragment of values that are all of type ``kind``."""
    if kind is float:
        return _floats(values)
    if kind is dict:
        layouts = list(map(tuple, values))
        if layouts.count(layouts[0]) == len(layouts):
            return _objects(layouts[0], values)
        return _split(values, layouts, _objects)
    if kind is list or kind is tuple:
        lengths = list(map(len, values))
        if lengths.count(lengths[0]) == len(lengths):
            return _arrays(lengths[0], values)
        return _split(values, lengths, _arrays)
    if kind not in _SCALARS:  # numpy scalars, subclasses, anything `_json_default` turns into JSON
        return "%s", [list(map(_dumps_line, values))]
    v0 = values[0]
    if values[-1] == v0 and values.count(v0) == len(values):  # one type: equal values, equal texts
        return _SCALARS[kind]([v0])[0].replace("%", "%%"), []
    if kind is int:
        return "%d", [values]
    return "%s", [_SCALARS[kind](values)]


_SCALARS: dict[type, Callable[[Sequence], list[str]]] = {
    str: lambda vs: list(map(_ASCII, vs)),
    int: lambda vs: list(map(int.__repr__, vs)),
    bool: lambda vs: ["true" if v else "false" for v in vs],
    type(None): lambda vs: ["null"] * len(vs),
}


def _floats(values: Sequence[float]) -> _Fragment:
    """Each float's repr, null for inf and nan (as `_clean` writes them).

    A shortest repr is the dearest part of a row (about a microsecond), so it is avoided where
    its text is known otherwise: a column of whole numbers (bytes, FLOPs) is written as ints
    (`_whole`), and where values repeat (a latency term, a launch-bound time, a tile's bytes)
    each distinct value is written once (equal floats have equal texts, but 0.0 == -0.0)."""
    v0 = values[0]
    if values[-1] == v0 and v0 != 0 and math.isfinite(v0) and values.count(v0) == len(values):
        return float.__repr__(v0), []
    if not math.isfinite(sum(values)):  # an inf or nan is somewhere (a sum with one is inf or nan)
        return "%s", [[float.__repr__(v) if math.isfinite(v) else "null" for v in values]]
    if v0.is_integer() and (ints := _whole(values)) is not None:
        return "%d.0", [ints]
    if not _repeats(values):
        return "%r", [values]
    distinct = dict.fromkeys(values)
    if 0.0 in distinct:
        return "%r", [values]
    texts = dict(zip(distinct, map(float.__repr__, distinct), strict=True))
    return "%s", [list(map(texts.__getitem__, values))]


def _whole(values: Sequence[float]) -> list[int] | None:
    """The finite floats as ints where every one is a whole number in [0, 1e16) and none is
    -0.0, else None. Then ``"%d.0" % int(v) == repr(v)``: below 1e16 a float's repr is
    positional, and a whole float's shortest digits are its integer's (below 2**53 no other
    integer rounds to it; above, the spacing is 2 and a multiple of 10 is even, so a shorter
    decimal is the float itself or further than half a spacing); an int's text costs a third."""
    import numpy as np

    a = np.array(values, dtype=float)
    if not (a.max() < 1e16 and a.min() >= 0) or np.signbit(a).any():
        return None
    ints = a.astype(np.int64)
    if not np.array_equal(ints, a):
        return None
    return ints.tolist()


def _repeats(values: Sequence[float]) -> bool:
    """Whether the column repeats enough values for writing each distinct one once (a dict pass,
    a tenth of a repr per value) to pay: judged on ``_SAMPLE`` values spread over the column
    (its first values alone miss repeats of a shape a column sorts apart)."""
    sample = values[:: max(1, len(values) // _SAMPLE)]
    return len(set(sample)) * 8 < len(sample) * 7


_SAMPLE = 128  # values `_repeats` looks at to guess whether a column repeats itself


def _objects(keys: tuple, values: Sequence[dict]) -> _Fragment:
    """Plain dicts with the same keys in the same order."""
    if not all(k.__class__ is str for k in keys):  # the C encoder's own key conversions
        return "%s", [list(map(_dumps_line, values))]
    return _joined("{", [_ASCII(k) + ": " for k in keys], list(zip(*map(dict.values, values), strict=True)), "}")


def _arrays(n: int, values: Sequence) -> _Fragment:
    """Lists or tuples of ``n`` items each."""
    return _joined("[", [""] * n, list(zip(*values, strict=True)), "]")


def _joined(open_: str, labels: list[str], columns: Sequence[Sequence], close: str) -> _Fragment:
    """``open_ label0 text0, label1 text1, ... close``, each text from its column's fragment:
    nested objects and arrays are written into the one template, not made as texts of their own."""
    parts, out = [], []
    for label, column in zip(labels, columns, strict=True):
        template, cols = _fragment(column)
        parts.append(label.replace("%", "%%") + template)
        out += cols
    return open_ + ", ".join(parts) + close, out


def fmt_cell(v) -> str:
    """Short human form of one value for table/md."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
        if v == 0:
            return "0"
        a = abs(v)
        if a >= 1e6 or a < 1e-3:
            return f"{v:.3g}"
        if a >= 100:
            return f"{v:,.1f}"
        return f"{v:.3g}" if a < 1 else f"{v:.2f}"
    if isinstance(v, (list, tuple)):
        return ",".join(fmt_cell(x) for x in v)
    return str(v)


def _is_number(s: str) -> bool:
    try:
        float(s.replace(",", ""))
        return True
    except ValueError:
        return s in ("-",)


def _columns(flat_rows: Sequence[dict], columns: Sequence[str] | None) -> list[str]:
    if columns:
        return list(columns)
    cols: dict[str, None] = {}
    for r in flat_rows:
        for k in r:
            cols.setdefault(k, None)
    return list(cols)


def render(
    rows: Iterable[dict],
    fmt: str = "table",
    columns: Sequence[str] | None = None,
    headers: dict[str, str] | None = None,
    title: str | None = None,
) -> str:
    """Render rows in one of FORMATS. ``columns`` picks and orders table/csv/md columns.

    jsonl encodes the rows as they come (a generator's rows are dropped once written)."""
    if fmt == "jsonl":
        return "".join(jsonl_chunks(rows))
    rows = list(rows)
    if fmt == "json":
        return json.dumps(_clean(rows), indent=2, default=_json_default) + "\n"
    flat = [_flatten(r) for r in rows]
    cols = _columns(flat, columns)
    heads = [(headers or {}).get(c, c) for c in cols]
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(heads)
        for r in flat:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
        return buf.getvalue()
    cells = [[fmt_cell(r.get(c)) for c in cols] for r in flat]
    if fmt == "md":
        lines = [f"**{title}**", ""] if title else []
        lines.append("| " + " | ".join(heads) + " |")
        lines.append("|" + "|".join("---" for _ in heads) + "|")
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    if fmt == "table":
        widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(heads)]

        def line(vals):
            out = []
            for i, v in enumerate(vals):
                numeric = _is_number(v)
                out.append(v.rjust(widths[i]) if numeric else v.ljust(widths[i]))
            return "  ".join(out).rstrip()

        lines = [title, ""] if title else []
        lines += [line(heads), "  ".join("-" * w for w in widths)]
        lines += [line(row) for row in cells]
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown format '{fmt}', expected one of {', '.join(FORMATS)}")


class _Terminated(BaseException):
    """SIGTERM during a write: unwinds like Ctrl-C so the temp file is removed."""


def _on_sigterm(signum, frame):
    raise _Terminated(signum)


def write_atomic(path: str, data: str | bytes) -> None:
    """Write a file all at once (temp file + rename), so a failure leaves no half-written file.

    The file gets the mode a plain ``open()`` would give it (0666 less the umask; mkstemp's
    0600 is for the temp file only), and a SIGTERM while writing removes the temp file before
    the process ends with status 143.
    """
    with atomic_file(path) as f:
        f.write(data.encode() if isinstance(data, str) else data)


@contextlib.contextmanager
def atomic_file(path: str):
    """A binary file to write ``path`` piece by piece (rows streamed out), with the guarantees
    of `write_atomic`: it appears under its name only when the block ends without an error."""
    import os
    import signal
    import tempfile
    import threading

    d = os.path.dirname(os.path.abspath(path)) or "."
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGTERM, _on_sigterm) if main else None
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".perfmodel-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            yield f
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it owner-only; a written file gets the usual mode
        os.replace(tmp, path)
    except _Terminated:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        raise SystemExit(128 + signal.SIGTERM) from None
    except BaseException as e:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            from perfmodel.errors import InputError

            raise InputError(f"cannot write the file ({e.strerror or e})", where=path) from None
        raise
    finally:
        if main:
            signal.signal(signal.SIGTERM, old)


class RowWriter:
    """Rows written one at a time in ``fmt`` (json, jsonl or csv), the text `render` gives
    for the whole list, byte for byte. CSV needs every row's columns before its header, so its
    rows are spooled (pickled, exact values) to a temporary file and written out at `close`."""

    def __init__(self, f, fmt: str):
        if fmt not in ("json", "jsonl", "csv"):
            raise ValueError(f"rows stream as json, jsonl or csv, not {fmt}")
        self.f, self.fmt, self.n = f, fmt, 0
        self.columns: dict[str, None] = {}
        self.spool = None
        if fmt == "csv":
            import tempfile

            self.spool = tempfile.TemporaryFile()

    def write(self, row: dict) -> None:
        if self.fmt == "jsonl":
            self.f.write((_dumps_line(row) + "\n").encode())
        elif self.fmt == "json":
            text = json.dumps(_clean(row), indent=2, default=_json_default).replace("\n", "\n  ")
            self.f.write((("[\n  " if not self.n else ",\n  ") + text).encode())
        else:
            import pickle

            flat = _flatten(row)
            for k in flat:
                self.columns.setdefault(k, None)
            pickle.dump(flat, self.spool, protocol=pickle.HIGHEST_PROTOCOL)
        self.n += 1

    def close(self) -> None:
        if self.fmt == "json":
            self.f.write(b"\n]\n" if self.n else b"[]\n")
        elif self.fmt == "csv":
            import pickle

            cols = list(self.columns)
            text = io.TextIOWrapper(self.f, encoding="utf-8", newline="", write_through=True)
            w = csv.writer(text, lineterminator="\n")
            w.writerow(cols)
            self.spool.seek(0)
            for _ in range(self.n):
                r = pickle.load(self.spool)
                w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
            text.detach()
            self.spool.close()
