"""Predict: cases -> kernel models -> estimator -> `Prediction` records, batched for speed.

Cases that share (arch, kernel, dtype and the text/bool parameters) are evaluated together as
numpy arrays, so a file of 100k cases costs a handful of vectorised model calls. Callers -
`perfmodel validate`, the plots, the Python API - go through `evaluate` and get one typed
`Prediction` per case; `Prediction.row()` is the output contract. `perfmodel predict` takes the
batches themselves (`evaluate_batches`: field columns, no record per case) and writes their rows
from the columns (`record.row_columns`, the contract's one definition).
"""

from __future__ import annotations

import contextlib
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import accumulate, islice, repeat
from operator import attrgetter, itemgetter
from types import NoneType
from typing import Any

import numpy as np

from perfmodel.arch import DEFAULT_ARCH, Arch, load_arch
from perfmodel.cases import Case, normalize, normalize_all  # noqa: F401 - normalize_all: also imported from here
from perfmodel.columns import Columns, Table, scatter, window
from perfmodel.errors import InputError
from perfmodel.estimate import Estimate, estimate
from perfmodel.record import Prediction, rows
from perfmodel.vocab import FLOOR_SCOPES


# --- evaluation ------------------------------------------------------------------------------
def _group_key(c: Case, warm: bool) -> tuple:
    """Cases with equal keys are evaluated in one vectorised call: arch, kernel, dtype, the text
    and bool parameters, which numeric parameters are None, scope and warm."""
    model, params = c.model, c.params
    cats = model.categorical_values(params)
    nones = ()
    if None in model.numeric_values(params):
        nones = tuple([n for n in model.numeric if params[n] is None])
    return (c.arch, c.kernel, c.dtype, cats, nones, c.scope, warm if c.warm is None else c.warm)


def run_model(model, params: dict[str, Any], arch: Arch, dtype: str, where: str | None = None):
    """Call a kernel model; an InputError from inside it names the case."""
    from perfmodel.models.traffic import other_writers_dirty

    try:
        work = model.fn(params, arch, dtype)
    except InputError as e:
        if where and not e.where:
            raise InputError(e.detail, where=where, key=e.key) from None
        raise
    if not other_writers_dirty():
        for w in _all_works(work):
            w.dirty_l2 = False
    return work


def _all_works(work):
    """The work of a case and every other work it carries (serial kernels, the other ways of
    running it, its smaller problems), each with theirs."""
    yield work
    for sub in (*work.serial, *(a[0] for a in work.alternatives), *(f[0] for f in work.fewer_rows)):
        yield from _all_works(sub)


def evaluate(
    cases: list[Case], first_principles: bool = False, warm: bool = False, problems: list | None = None
) -> list[Prediction]:
    """One `Prediction` per validated case, in their order.

    ``first_principles=True``: see `estimate`. ``warm=True``: kernel inputs that fit a cache are
    served from it (the steady state of a benchmark loop); the default is a cold single run. A
    case's own ``warm`` key wins.
    ``problems``: a list to collect one `InputError` per case that cannot be predicted (a dtype
    the GPU lacks, a shape the model refuses) instead of raising; those cases are left out.
    """
    return evaluate_batches(cases, first_principles, warm, problems).records()


def evaluate_batches(
    cases: list[Case], first_principles: bool = False, warm: bool = False, problems: list | None = None
) -> Batches:
    """`evaluate`'s predictions, as the field columns of each batch (`batch_fields`)."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, c in enumerate(cases):
        groups[_group_key(c, warm)].append(i)
    parts: list[tuple[list[int], Table]] = []
    for (arch_key, _kernel, dtype, cats, nones, scope, warm_g), idx in groups.items():
        members = [cases[i] for i in idx]
        args = (arch_key, dtype, cats, nones, first_principles, warm_g, scope)
        try:
            parts.append((idx, _evaluate_group(members, *args)))
        except InputError:
            if len(members) == 1 and problems is None:
                raise
            # a model refuses a whole vectorised batch for the values of some of its cases (attention's
            # kv_heads=3 of 8 heads): each case alone, so the others are predicted and the error
            # names the case that caused it
            for i, m in zip(idx, members, strict=True):
                fields = _one_or_problem(m, args, problems)
                if fields is not None:
                    parts.append(([i], fields))
    return Batches(parts, len(cases))


class Batches:
    """The predictions of evaluated cases as batches of field columns (`batch_fields`), each
    with the positions of its cases among the predictions (the cases left out not counted).
    `records` makes the `Prediction`s; `pieces` hands the batches on a window of positions at a
    time, for output written in order without a record or a dict per case."""

    def __init__(self, parts: list[tuple[list[int], Table]], n_cases: int):
        self.parts, self.n = parts, sum(len(idx) for idx, _ in parts)
        if self.n < n_cases:  # some cases left out: count positions among the others
            kept = [False] * n_cases
            for idx, _ in parts:
                for i in idx:
                    kept[i] = True
            position = list(accumulate(kept, initial=-1))[1:]  # case index -> its prediction's position
            self.parts = [([position[i] for i in idx], fields) for idx, fields in parts]

    def __len__(self) -> int:
        return self.n

    @classmethod
    def joined(cls, batches: list[Batches]) -> Batches:
        """Batches of consecutive runs of cases, as one."""
        out = cls([], 0)
        for b in batches:
            out.parts += [([p + out.n for p in positions], fields) for positions, fields in b.parts]
            out.n += b.n
        return out

    def records(self) -> list[Prediction]:
        return scatter(
            [(positions, records(fields, len(positions))) for positions, fields in self.parts], self.n
        )

    def archs(self) -> list[str]:
        """The archs predicted on, in order of their first prediction."""
        return list(dict.fromkeys(f["arch"][0] for _, f in sorted(self.parts, key=lambda part: part[0][0])))

    def pieces(self, size: int) -> Iterator[tuple[int, list[tuple[list[int], Table]]]]:
        """``(m, parts)`` per window of ``size`` positions (``m`` of them): each batch's cases
        in the window, their positions counted from the window's start."""
        spans: dict[int, list[int]] = defaultdict(list)  # window -> the parts with cases in it
        for j, (positions, _) in enumerate(self.parts):
            for w in range(positions[0] // size, positions[-1] // size + 1):
                spans[w].append(j)
        for w in range(-(-self.n // size)):
            lo, hi = w * size, min(w * size + size, self.n)
            parts = []
            for j in spans[w]:
                positions, fields = self.parts[j]
                a, b = bisect_left(positions, lo), bisect_left(positions, hi)
                if a < b:
                    parts.append(([p - lo for p in positions[a:b]], window(fields, a, b)))
            yield hi - lo, parts


def _one_or_problem(m: Case, args: tuple, problems: list | None) -> Table | None:
    """One case's field columns, or None with its `InputError` added to ``problems`` (raised
    when ``problems`` is None)."""
    try:
        return _evaluate_group([m], *args)
    except InputError as e:
        if problems is None:
            raise
        problems.append(InputError(e.detail, where=m.where, key=e.key or "arch"))
        problems[-1].index = m.index
        return None


def _evaluate_group(
    members: list[Case],
    arch_key,
    dtype: str,
    cats,
    nones,
    first_principles: bool,
    warm: bool,
    scope: str = "kernel",
) -> Table:
    """The predictions (`batch_fields`) of cases that share arch, kernel, dtype and text
    parameters: one vectorised model call and one estimate."""
    from perfmodel.models.traffic import warm_caches, writes_charged

    first = members[0]
    try:
        arch = load_arch(arch_key)
    except InputError as e:  # a spec file's error keeps its file and key
        raise InputError(str(e) if e.where else e.detail, where=first.where, key="arch") from None
    model = first.model
    params: dict[str, Any] = dict(zip(model.categorical, cats, strict=True))
    for n in model.numeric:
        params[n] = None if n in nones else np.array([m.params[n] for m in members], dtype=float)
    # a loop of back-to-back calls is a sequence of the same kernel: each call's write-back is its
    # predecessor's output, which its own writes stand for (`traffic.writes_charged`)
    # (an outer `writes_charged`, `perfmodel model`'s, stays as it is for the other scopes)
    charged = writes_charged() if scope in FLOOR_SCOPES else contextlib.nullcontext()
    with warm_caches(warm), charged:
        work = run_model(model, params, arch, dtype, where=first.where)
    est = estimate(work, arch, first_principles=first_principles, scope=scope)
    if warm and any(m.warm for m in members):  # a case's own warm= key: say it in its row
        est.notes.append("warm: inputs that fit a cache are served from it (a repeated kernel)")
    return batch_fields(est, members)


def _list(x, n: int) -> list:
    """A batch quantity as a Python list of n values (scalars broadcast)."""
    return np.broadcast_to(np.asarray(x), (n,)).tolist()


def _rates_used(rate: dict[str, Any], n: int) -> list[dict[str, float]]:
    """Each case's achieved rate per term: one dict shared by all cases where every rate is one
    number for the batch (the usual case), else case by case (`Work.rate_as` where it applies
    to some cases only)."""
    if all(np.size(r) == 1 for r in rate.values()):
        return [{t: float(np.ravel(r)[0]) for t, r in rate.items()}] * n
    per = {t: _list(np.ravel(r) if np.size(r) > 1 else np.ravel(r)[0], n) for t, r in rate.items()}
    return [{t: float(v[i]) for t, v in per.items()} for i in range(n)]


def _shapes(cases: list[Case]) -> Columns | list[dict[str, Any]]:
    """Each case's shape: its parameters less those left None, whole floats written as ints.

    Column by column where every case lists its parameters in the same order (a batch from one
    file: `Columns`), else case by case (dicts); the same dicts either way."""
    params = list(map(attrgetter("params"), cases))
    if len(set(map(tuple, params))) != 1:
        return list(map(_shape, params))
    cols, kept = [], []
    for k in params[0]:
        col = list(map(itemgetter(k), params))
        types = set(map(type, col))
        if types == {NoneType}:  # left None in every case (attention's seq_kv)
            continue
        if types == {float}:
            a = np.array(col, dtype=float)
            if np.all(np.floor(a) == a) and np.all(np.abs(a) < 2.0**62):  # int(v) of each, in one go
                col = a.astype(np.int64).tolist()
            else:
                col = [int(v) if v.is_integer() else v for v in col]
        elif NoneType in types:
            return list(map(_shape, params))
        elif float in types:
            col = [int(v) if v.__class__ is float and v.is_integer() else v for v in col]
        cols.append(col)
        kept.append(k)
    return Columns(tuple(kept), cols, len(cases))


def _shape(params: dict[str, Any]) -> dict[str, Any]:
    """One case's shape (see `_shapes`)."""
    return {
        k: int(v) if v.__class__ is float and v.is_integer() else v
        for k, v in params.items()
        if v is not None
    }


def _tiles(est: Estimate, n: int) -> list[str | None]:
    L = est.work.launch
    if L is None or not np.any(np.asarray(L.tile_m) > 0):
        return [None] * n
    tm, tn, tk = (_list(getattr(L, a), n) for a in ("tile_m", "tile_n", "tile_k"))
    return [f"{int(a)}x{int(b)}x{int(c)}" for a, b, c in zip(tm, tn, tk, strict=True)]


def _case_notes(est: Estimate, n: int) -> Iterable[str | None]:
    """Each case's notes, joined: the batch's unconditional notes, and each conditional one
    (`Work.note_where`) for the cases it holds for."""
    if not est.notes:
        return repeat(None)
    if not est.note_where:
        return repeat("; ".join(est.notes))
    masks = {t: _list(w, n) for t, w in est.note_where.items()}
    out = []
    for i in range(n):
        texts = [t for t in est.notes if t not in masks or masks[t][i]]
        out.append("; ".join(texts) if texts else None)
    return out


def _too_big(notes: str | None, written: float, capacity: float, mem: str) -> str | None:
    """The batch's notes, plus a warning when the case writes more than the GPU's memory holds."""
    if not written > capacity:
        return notes
    warn = f"shape too large: writes {written / 1e9:.4g} GB, more than the {capacity / 1e9:.4g} GB of {mem}"
    return f"{notes}; {warn}" if notes else warn


def batch_fields(est: Estimate, cases: list[Case]) -> Table:
    """The `Prediction` fields of a batch's cases as columns: one list per field, the mappings
    (bytes per level, FLOPs, terms; shapes where the cases list their parameters alike) as
    `Columns`. Arrays become Python lists once per batch (not per case): `records` makes the
    records of it, and `perfmodel predict` writes its rows straight from it (`record.row_columns`)."""
    n = len(cases)
    work = est.work

    def columns(arrays: dict[str, Any]) -> Columns:
        return Columns(tuple(arrays), [_list(v, n) for v in arrays.values()], n)

    bytes_write = columns(work.bytes_write)
    notes_of: Iterable = _case_notes(est, n)
    mem = est.arch.memory_level
    capacity = est.arch.capacity(mem)
    written = bytes_write.cols[bytes_write.keys.index(mem)] if mem in bytes_write.keys else None
    if written is not None and any(w > capacity for w in written):
        notes_of = [_too_big(t, w, capacity, mem) for t, w in zip(notes_of, written, strict=False)]  # repeats
    cell = _cell_note(cases[0].kernel, est.arch) if cases else None
    if cell:  # the family's published measurements on this arch family sit away from the model
        notes_of = [f"{t}; {cell}" if t else cell for t in islice(notes_of, n)]
    return dict(
        arch=[est.arch.key] * n,
        kernel=[c.kernel for c in cases],
        dtype=[c.dtype for c in cases],
        shape=_shapes(cases),
        time_s=_list(est.time_s, n),
        bound=_list(est.bound, n),
        flops_by=columns(work.flops),
        iops_by=columns(work.iops),
        bytes_read=columns(work.bytes_read),
        bytes_write=bytes_write,
        bytes=columns(work.bytes),
        terms_s=columns(est.terms),
        roofline_time_s=_list(est.roofline_time_s, n),
        roofline_bound=_list(est.roofline_bound, n),
        memory_level=[mem] * n,
        rates_used=_rates_used(est.rates_used.rate, n),
        tile=_tiles(est, n),
        grid=[int(g) for g in _list(est.occupancy["grid"], n)],
        wgs_per_cu=[int(w) for w in _list(est.occupancy["wgs_per_cu"], n)],
        notes=list(islice(notes_of, n)),
        id=[c.id for c in cases],
        scope=[c.scope for c in cases],
        packed=[frozenset(work.packed)] * n,
        band=_bands(cases[0].kernel, _list(est.time_s, n)) if cases else [],
    )


def records(fields: Table, n: int) -> list[Prediction]:
    """The ``n`` records of a batch's field columns (`batch_fields`): a dict per case of each
    `Columns`, each record field one list (`Prediction.many`)."""
    return Prediction.many(n, **{k: v.dicts() if isinstance(v, Columns) else v for k, v in fields.items()})


def _cell_note(kernel: str, arch) -> str | None:
    from perfmodel.error_bands import cell_note

    return cell_note(kernel, arch)


def _bands(kernel: str, times_s: list[float]) -> list[tuple[float, float]]:
    """Each case's error band (p10, p90): its family's, or below the short-kernel limit the
    short one; both looked up once per batch."""
    from perfmodel.error_bands import band, short_below_us

    long = band(kernel)[:2]
    below = short_below_us()
    if below is None:
        return [long] * len(times_s)
    short = band(kernel, 0.0)[:2]
    return [short if t * 1e6 < below else long for t in times_s]


def predict_on(raw: dict, arch: Arch, index: int = 0, source: str | None = None) -> Prediction:
    """One case on one `Arch` object (which may carry an overridden clock or CU count): what
    `perfmodel validate` predicts for an identified kernel."""
    raw = {k: v for k, v in raw.items() if k != "arch"}
    return evaluate([normalize(raw, index, arch, source=source)])[0]


# --- the Python API --------------------------------------------------------------------------
class Predictions(list):
    """A list of `Prediction` records that shows as a table in Jupyter."""

    COLUMNS = ("id", "arch", "kernel", "dtype", "time_us", "bound", "tflops", "ai", "headroom", "tile")

    @property
    def rows(self) -> list[dict]:
        """The output-contract dicts, as `perfmodel predict --format json` writes them."""
        return rows(self)

    def to_dicts(self) -> list[dict]:
        return self.rows

    def to_pandas(self):
        """A pandas DataFrame, one row per prediction (needs pandas; perfmodel does not install it)."""
        from perfmodel.tables import to_pandas

        return to_pandas(self.rows)

    def _repr_html_(self) -> str:
        import html

        from perfmodel.tables import cell_notes, html_table

        rows = self.rows
        cols = [c for c in self.COLUMNS if any(c in r for r in rows)] + ["shape"]
        notes = "".join(f"<br><i>note: {html.escape(n)}</i>" for n in cell_notes(rows))
        return html_table(rows, cols) + notes

    def __repr__(self) -> str:
        from perfmodel.output import render
        from perfmodel.tables import cell_notes

        rows = self.rows
        text = render([{k: r.get(k) for k in self.COLUMNS if k in r} for r in rows], "table")
        return text + "".join(f"note: {n}\n" for n in cell_notes(rows))


def predict(
    kernel: str | None = None,
    arch: str | Arch | list[str | Arch] = DEFAULT_ARCH,
    dtype: str | None = None,
    cases: Iterable[dict] | None = None,
    warm: bool = False,
    scope: str | None = None,
    **params: Any,
) -> Predictions:
    """Predict one case (``predict("gemm", "mi300x", m=4096, n=4096, k=4096)``) or many.

    ``arch`` may be a list for a side-by-side comparison. ``cases`` is an iterable of case dicts
    (keys as on the command line). ``warm=True`` models the steady state of a repeated kernel
    whose inputs fit a cache; the default is a single cold run. ``scope``: what the time
    covers, ``kernel`` (default), ``events``, ``host`` or ``loop`` (see docs/usage.md).
    """
    archs = [arch] if isinstance(arch, (str, Arch)) else list(arch)
    raws = list(cases) if cases is not None else [dict(params, kernel=kernel)]
    return Predictions(evaluate(normalize_all(raws, archs, dtype, kernel=kernel, scope=scope), warm=warm))
