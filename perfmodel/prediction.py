"""Predict: cases -> kernel models -> estimator -> `Prediction` records, batched for speed.

Cases that share (arch, kernel, dtype and the text/bool parameters) are evaluated together as
numpy arrays, so a file of 100k cases costs a handful of vectorised model calls. Every caller -
`perfmodel predict`, `perfmodel validate`, the plots, the Python API - goes through `evaluate`
and gets one typed `Prediction` per case; `Prediction.row()` is the output contract.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfmodel.arch import DEFAULT_ARCH, Arch, load_arch
from perfmodel.cases import Case, normalize
from perfmodel.errors import InputError
from perfmodel.estimate import Estimate, estimate
from perfmodel.vocab import split_term
from perfmodel.work import LevelBytes


@dataclass(slots=True)
class Prediction(LevelBytes):
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
    packed: frozenset[str] = frozenset()  # FLOP keys issued as packed VALU instructions
    # p10 and p90 of predicted/measured time on held-out measurements of this family
    # (perfmodel/error_bands.yaml): the measured time is likely within time / p90 .. time / p10
    band: tuple[float, float] = (1.0, 1.0)

    # --- derived quantities ------------------------------------------------------------------
    @property
    def time_us(self) -> float:
        return self.time_s * 1e6

    @property
    def time_band_us(self) -> tuple[float, float]:
        """Where a measurement of this kernel likely falls (80 % of held-out points did)."""
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
        t, f, b = self.time_s, self.flops, self.bytes
        hb = b.get(self.memory_level, 0.0)
        row: dict[str, Any] = {"id": self.id} if self.id is not None else {}
        row.update(
            arch=self.arch,
            kernel=self.kernel,
            dtype=self.dtype,
            shape=self.shape,
            time_us=t * 1e6,
            time_band_us=[t / self.band[1] * 1e6, t / self.band[0] * 1e6],
            bound=self.bound,
            flops=f,
            flops_by=self.flops_by,
            bytes=b,
            tflops=f / t / 1e12 if t > 0 else 0.0,
            ai=f / hb if hb > 0 else None,
            roofline_time_us=self.roofline_time_s * 1e6,
            roofline_bound=self.roofline_bound,
            headroom=self.roofline_time_s / t if t > 0 else 1.0,
            terms_us={k: v * 1e6 for k, v in self.terms_s.items()},
            tile=self.tile,
            grid=self.grid,
            wgs_per_cu=self.wgs_per_cu,
        )
        if self.notes:
            row["notes"] = self.notes
        return row

    @classmethod
    def combine(cls, preds: list[Prediction]) -> Prediction:
        """One prediction for several dispatches of a kernel: amounts and times summed, the
        most common bound class."""
        return cls.combine_runs([(p, 1) for p in preds])

    @classmethod
    def combine_runs(cls, runs: list[tuple[Prediction, int]]) -> Prediction:
        """`combine` of a run-length list ``[(prediction, repeats), ...]`` in dispatch order: the
        same sums, added in the same order, without a list entry per dispatch."""
        if len(runs) == 1 and runs[0][1] == 1:
            return runs[0][0]

        def add(attr: str) -> dict[str, float]:
            acc: dict[str, float] = {}
            for p, n in runs:
                for k, v in getattr(p, attr).items():
                    s = acc.get(k, 0.0)
                    for _ in range(n):
                        s += v
                    acc[k] = s
            return acc

        def total(attr: str):
            s = 0
            for p, n in runs:
                v = getattr(p, attr)
                for _ in range(n):
                    s += v
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
            packed=first.packed,
            band=first.band,
        )


# --- evaluation ------------------------------------------------------------------------------
def _group_key(c: Case) -> tuple:
    cats = tuple((n, c.params[n]) for n in c.model.categorical)
    nones = tuple(n for n in c.model.numeric if c.params[n] is None)
    return (c.arch, c.kernel, c.dtype, cats, nones)


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
    served from it (the steady state of a benchmark loop); the default is a cold single run.
    ``problems``: a list to collect one `InputError` per case that cannot be predicted (a dtype
    the GPU lacks, a shape the model refuses) instead of raising; those cases are left out.
    """
    groups: dict[tuple, list[Case]] = defaultdict(list)
    for c in cases:
        groups[_group_key(c)].append(c)
    out: list[Prediction | None] = [None] * len(cases)
    pos = {id(c): i for i, c in enumerate(cases)}
    for (arch_key, _kernel, dtype, cats, nones), members in groups.items():
        try:
            preds = _evaluate_group(members, arch_key, dtype, cats, nones, first_principles, warm)
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


def _evaluate_group(members: list[Case], arch_key, dtype: str, cats, nones, first_principles: bool, warm: bool):
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
    return batch_predictions(estimate(work, arch, first_principles=first_principles), members)


def _list(x, n: int) -> list:
    """A batch quantity as a Python list of n values (scalars broadcast)."""
    return np.broadcast_to(np.asarray(x), (n,)).tolist()


def _num(v):
    return int(v) if isinstance(v, float) and v.is_integer() else v


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
        "flops": {k: _list(v, n) for k, v in work.flops.items()},
        "terms": {k: _list(v, n) for k, v in est.terms.items()},
    }
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
                shape={k: _num(v) for k, v in c.params.items() if v is not None},
                time_s=time_s[i],
                bound=bound[i],
                flops_by={k: v[i] for k, v in cols["flops"].items()},
                bytes_read={k: v[i] for k, v in cols["read"].items()},
                bytes_write={k: v[i] for k, v in cols["write"].items()},
                terms_s={k: v[i] for k, v in cols["terms"].items()},
                roofline_time_s=rtime[i],
                roofline_bound=rbound[i],
                memory_level=mem,
                rates_used=rates_used,
                tile=tiles[i],
                grid=int(grid[i]),
                wgs_per_cu=int(wgs[i]),
                notes=_too_big(notes, written[i], capacity, mem),
                id=c.id,
                packed=packed,
                band=band,
            )
        )
    return out


def _band(kernel: str) -> tuple[float, float]:
    from perfmodel.error_bands import band

    lo, hi, _, _ = band(kernel)
    return lo, hi


def normalize_all(
    raws: Iterable[dict],
    archs: list[str | Arch] | None = None,
    dtype: str | None = None,
    source: str | None = None,
    kernel: str | None = None,
    problems: list | None = None,
) -> list[Case]:
    """Validate raw cases; with several archs each case is expanded once per arch.

    ``problems``: a list to collect the `InputError` of every invalid case instead of raising
    at the first; the valid cases are returned.
    """
    out: list[Case] = []
    for i, raw in enumerate(raws):
        targets = archs if archs and len(archs) > 1 and "arch" not in raw else [archs[0] if archs else None]
        for a in targets:
            try:
                out.append(normalize(raw, i, a, dtype, source, kernel))
            except InputError as e:
                if problems is None:
                    raise
                e.index = i
                problems.append(e)
                break  # the same case is wrong on every arch: one line
    return out


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
    **params: Any,
) -> Predictions:
    """Predict one case (``predict("gemm", "mi300x", m=4096, n=4096, k=4096)``) or many.

    ``arch`` may be a list for a side-by-side comparison. ``cases`` is an iterable of case dicts
    (keys as on the command line). ``warm=True`` models the steady state of a repeated kernel
    whose inputs fit a cache; the default is a single cold run.
    """
    archs = [arch] if isinstance(arch, (str, Arch)) else list(arch)
    raws = list(cases) if cases is not None else [dict(params, kernel=kernel)]
    return Predictions(evaluate(normalize_all(raws, archs, dtype, kernel=kernel), warm=warm))

