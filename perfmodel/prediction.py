"""Predict: cases -> kernel models -> estimator -> `Prediction` records, batched for speed.

Cases that share (arch, kernel, dtype and the text/bool parameters) are evaluated together as
numpy arrays, so a file of 100k cases costs a handful of vectorised model calls. Every caller -
`perfmodel predict`, `perfmodel validate`, the plots, the Python API - goes through `evaluate`
and gets one typed `Prediction` per case; `Prediction.row()` is the output contract.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from perfmodel.arch import DEFAULT_ARCH, Arch, load_arch
from perfmodel.cases import Case, normalize, normalize_all  # noqa: F401 - normalize_all: also imported from here
from perfmodel.errors import InputError
from perfmodel.estimate import Estimate, estimate
from perfmodel.record import Prediction


# --- evaluation ------------------------------------------------------------------------------
def _group_key(c: Case, warm: bool) -> tuple:
    cats = tuple((n, c.params[n]) for n in c.model.categorical)
    nones = tuple(n for n in c.model.numeric if c.params[n] is None)
    return (c.arch, c.kernel, c.dtype, cats, nones, c.scope, warm if c.warm is None else c.warm)


def run_model(model, params: dict[str, Any], arch: Arch, dtype: str, where: str | None = None):
    """Call a kernel model; an InputError from inside it names the case."""
    try:
        return model.fn(params, arch, dtype)
    except InputError as e:
        if where and not e.where:
            raise InputError(e.detail, where=where, key=e.key) from None
        raise


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
    groups: dict[tuple, list[Case]] = defaultdict(list)
    for c in cases:
        groups[_group_key(c, warm)].append(c)
    out: list[Prediction | None] = [None] * len(cases)
    pos = {id(c): i for i, c in enumerate(cases)}
    for (arch_key, _kernel, dtype, cats, nones, scope, warm_g), members in groups.items():
        try:
            preds = _evaluate_group(members, arch_key, dtype, cats, nones, first_principles, warm_g, scope)
        except InputError as e:
            if problems is None:
                raise
            for m in members:
                problems.append(InputError(e.detail, where=m.where, key=e.key or "arch"))
                problems[-1].index = m.index
            continue
        for m, p in zip(members, preds, strict=True):
            out[pos[id(m)]] = p
    return [p for p in out if p is not None]


def _evaluate_group(
    members: list[Case], arch_key, dtype: str, cats, nones, first_principles: bool, warm: bool, scope: str = "kernel"
):
    """The predictions of cases that share arch, kernel, dtype and text parameters: one
    vectorised model call and one estimate."""
    from perfmodel.models.traffic import warm_caches

    first = members[0]
    try:
        arch = load_arch(arch_key)
    except InputError as e:  # a spec file's error keeps its file and key
        raise InputError(str(e) if e.where else e.detail, where=first.where, key="arch") from None
    model = first.model
    params: dict[str, Any] = dict(cats)
    for n in model.numeric:
        params[n] = None if n in nones else np.array([m.params[n] for m in members], dtype=float)
    with warm_caches(warm):
        work = run_model(model, params, arch, dtype, where=first.where)
    est = estimate(work, arch, first_principles=first_principles, scope=scope)
    if warm and any(m.warm for m in members):  # a case's own warm= key: say it in its row
        est.notes.append("warm: inputs that fit a cache are served from it (a repeated kernel)")
    return batch_predictions(est, members)


def _list(x, n: int) -> list:
    """A batch quantity as a Python list of n values (scalars broadcast)."""
    return np.broadcast_to(np.asarray(x), (n,)).tolist()


def _dicts(col: dict[str, list], n: int) -> list[dict]:
    """{key: [v0, v1, ...]} -> [{key: v0}, {key: v1}, ...] (same key order in every dict)."""
    if not col:
        return [{} for _ in range(n)]
    keys = list(col)
    return [dict(zip(keys, vals, strict=True)) for vals in zip(*col.values(), strict=True)]


def _tiles(est: Estimate, n: int) -> list[str | None]:
    L = est.work.launch
    if L is None or not np.any(np.asarray(L.tile_m) > 0):
        return [None] * n
    tm, tn, tk = (_list(getattr(L, a), n) for a in ("tile_m", "tile_n", "tile_k"))
    return [f"{int(a)}x{int(b)}x{int(c)}" for a, b, c in zip(tm, tn, tk, strict=True)]


def _too_big(notes: str | None, written: float, capacity: float, mem: str) -> str | None:
    """The batch's notes, plus a warning when the case writes more than the GPU's memory holds."""
    if not written > capacity:
        return notes
    warn = f"shape too large: writes {written / 1e9:.4g} GB, more than the {capacity / 1e9:.4g} GB of {mem}"
    return f"{notes}; {warn}" if notes else warn


def batch_predictions(est: Estimate, cases: list[Case]) -> list[Prediction]:
    """One `Prediction` per case of a batch.

    Arrays become Python lists once per batch (not per case): this loop is what limits
    `perfmodel predict --cases` on large files.
    """
    n = len(cases)
    work = est.work
    cols = {
        "read": {lv: _list(b, n) for lv, b in work.bytes_read.items()},
        "write": {lv: _list(b, n) for lv, b in work.bytes_write.items()},
        "bytes": {lv: _list(b, n) for lv, b in work.bytes.items()},
        "flops": {k: _list(v, n) for k, v in work.flops.items()},
        "iops": {k: _list(v, n) for k, v in work.iops.items()},
        "terms": {k: _list(v, n) for k, v in est.terms.items()},
    }
    per_case = {name: _dicts(col, n) for name, col in cols.items()}  # one dict per case, built by zip
    time_s, bound = _list(est.time_s, n), _list(est.bound, n)
    rtime, rbound = _list(est.roofline_time_s, n), _list(est.roofline_bound, n)
    grid, wgs = _list(est.occupancy["grid"], n), _list(est.occupancy["wgs_per_cu"], n)
    tiles = _tiles(est, n)
    notes = "; ".join(dict.fromkeys(est.notes)) if est.notes else None
    rates_used = {t: float(np.ravel(r)[0]) for t, r in est.rates_used.rate.items()}
    packed = frozenset(work.packed)
    band = _band(cases[0].kernel) if cases else (1.0, 1.0)
    arch_key, mem = est.arch.key, est.arch.memory_level
    capacity = est.arch.capacity(mem)
    written = cols["write"].get(mem, [0.0] * n)
    out = []
    for i, c in enumerate(cases):
        out.append(
            Prediction(
                arch=arch_key,
                kernel=c.kernel,
                dtype=c.dtype,
                shape={k: int(v) if v.__class__ is float and v.is_integer() else v for k, v in c.params.items() if v is not None},
                time_s=time_s[i],
                bound=bound[i],
                flops_by=per_case["flops"][i],
                iops_by=per_case["iops"][i],
                bytes_read=per_case["read"][i],
                bytes_write=per_case["write"][i],
                bytes=per_case["bytes"][i],
                terms_s=per_case["terms"][i],
                roofline_time_s=rtime[i],
                roofline_bound=rbound[i],
                memory_level=mem,
                rates_used=rates_used,
                tile=tiles[i],
                grid=int(grid[i]),
                wgs_per_cu=int(wgs[i]),
                notes=_too_big(notes, written[i], capacity, mem),
                id=c.id,
                scope=c.scope,
                packed=packed,
                band=band,
            )
        )
    return out


def _band(kernel: str) -> tuple[float, float]:
    from perfmodel.error_bands import band

    lo, hi, _, _ = band(kernel)
    return lo, hi


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
        return [p.row() for p in self]

    def to_dicts(self) -> list[dict]:
        return self.rows

    def to_pandas(self):
        """A pandas DataFrame, one row per prediction (needs pandas; perfmodel does not install it)."""
        from perfmodel.tables import to_pandas

        return to_pandas(self.rows)

    def _repr_html_(self) -> str:
        from perfmodel.tables import html_table

        rows = self.rows
        cols = [c for c in self.COLUMNS if any(c in r for r in rows)] + ["shape"]
        return html_table(rows, cols)

    def __repr__(self) -> str:
        from perfmodel.output import render

        return render([{k: r.get(k) for k in self.COLUMNS if k in r} for r in self.rows], "table")


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
    covers, ``kernel`` (default), ``events`` or ``host`` (see docs/usage.md).
    """
    archs = [arch] if isinstance(arch, (str, Arch)) else list(arch)
    raws = list(cases) if cases is not None else [dict(params, kernel=kernel)]
    return Predictions(evaluate(normalize_all(raws, archs, dtype, kernel=kernel, scope=scope), warm=warm))

