"""Predict: cases -> kernel models -> estimator -> result rows, batched for speed.

Cases that share (arch, kernel, dtype and the text/bool parameters) are evaluated together as
numpy arrays, so a file of 100k cases costs a handful of vectorised model calls. Results come
back in input order as plain dicts that follow the output contract (id, arch, kernel, time_us,
bound, flops, bytes, tflops, ai, ...).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from perfmodel.arch import Arch, load_arch
from perfmodel.cases import Case, normalize
from perfmodel.errors import InputError
from perfmodel.estimate import Estimate, estimate


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
            raise InputError(str(e).split(": ", 1)[-1] if e.key else str(e), where=where, key=e.key) from None
        raise


def evaluate(cases: list[Case], measured: bool = True, warm: bool = False) -> list[dict]:
    """Rows for validated cases, in their order.

    ``measured=False``: see `estimate`. ``warm=True``: kernel inputs that fit a cache are served
    from it (the steady state of a benchmark loop); the default is a cold single run.
    """
    from perfmodel.models.traffic import warm_caches

    groups: dict[tuple, list[Case]] = defaultdict(list)
    for c in cases:
        groups[_group_key(c)].append(c)
    rows: list[dict | None] = [None] * len(cases)
    pos = {id(c): i for i, c in enumerate(cases)}
    for (arch_key, _kernel, dtype, cats, nones), members in groups.items():
        first = members[0]
        try:
            arch = load_arch(arch_key)
        except InputError as e:
            raise InputError(str(e).split(": ", 1)[-1], where=first.where, key="arch") from None
        model = first.model
        params: dict[str, Any] = dict(cats)
        for n in model.numeric:
            params[n] = None if n in nones else np.array([m.params[n] for m in members], dtype=float)
        with warm_caches(warm):
            work = run_model(model, params, arch, dtype, where=first.where)
        est = estimate(work, arch, measured=measured)
        for j, r in enumerate(result_rows(est, members)):
            rows[pos[id(members[j])]] = r
    return rows  # type: ignore[return-value]


def _list(x, n: int) -> list:
    """A batch quantity as a Python list of n values (scalars broadcast)."""
    return np.broadcast_to(np.asarray(x), (n,)).tolist()


def _num(v):
    return int(v) if isinstance(v, float) and v.is_integer() else v


def result_rows(est: Estimate, cases: list[Case]) -> list[dict]:
    """One output-contract dict per case of a batch.

    Arrays become Python lists once per batch (not per row): this loop is what limits
    `perfmodel predict --cases` on large files.
    """
    n = len(cases)
    arch = est.arch
    work = est.work
    mem = arch.memory_level
    time_s = _list(est.time_s, n)
    flops = _list(work.total_flops, n)
    bytes_by = {lv: _list(b, n) for lv, b in work.bytes.items()}
    flops_by = {k: _list(v, n) for k, v in work.flops.items()}
    terms = {k: _list(v, n) for k, v in est.terms.items()}
    bound = _list(est.bound, n)
    rtime = _list(est.roofline_time_s, n)
    rbound = _list(est.roofline_bound, n)
    grid = _list(est.occupancy["grid"], n)
    wgs = _list(est.occupancy["wgs_per_cu"], n)
    hb = bytes_by.get(mem, [0.0] * n)
    L = work.launch
    tiles = [None] * n
    if L is not None and np.any(np.asarray(L.tile_m) > 0):
        tm, tn, tk = (_list(getattr(L, a), n) for a in ("tile_m", "tile_n", "tile_k"))
        tiles = [f"{int(a)}x{int(b)}x{int(c)}" for a, b, c in zip(tm, tn, tk, strict=True)]
    notes = "; ".join(dict.fromkeys(est.notes)) if est.notes else None
    out = []
    for i, c in enumerate(cases):
        t = time_s[i]
        f = flops[i]
        row: dict[str, Any] = {"id": c.id} if c.id is not None else {}
        row["arch"] = arch.key
        row["kernel"] = c.kernel
        row["dtype"] = c.dtype
        row["shape"] = {k: _num(v) for k, v in c.params.items() if v is not None}
        row["time_us"] = t * 1e6
        row["bound"] = bound[i]
        row["flops"] = f
        row["flops_by"] = {k: v[i] for k, v in flops_by.items()}
        row["bytes"] = {k: v[i] for k, v in bytes_by.items()}
        row["tflops"] = f / t / 1e12 if t > 0 else 0.0
        row["ai"] = f / hb[i] if hb[i] > 0 else None
        row["roofline_time_us"] = rtime[i] * 1e6
        row["roofline_bound"] = rbound[i]
        row["headroom"] = rtime[i] / t if t > 0 else 1.0
        row["terms_us"] = {k: v[i] * 1e6 for k, v in terms.items()}
        row["tile"] = tiles[i]
        row["grid"] = int(grid[i])
        row["wgs_per_cu"] = int(wgs[i])
        if notes:
            row["notes"] = notes
        out.append(row)
    return out


def normalize_all(
    raws: Iterable[dict],
    archs: list[str] | None = None,
    dtype: str | None = None,
    source: str | None = None,
    kernel: str | None = None,
) -> list[Case]:
    """Validate raw cases; with several archs each case is expanded once per arch."""
    out: list[Case] = []
    for i, raw in enumerate(raws):
        if archs and len(archs) > 1 and "arch" not in raw:
            for a in archs:
                out.append(normalize(raw, i, a, dtype, source, kernel))
        else:
            out.append(normalize(raw, i, archs[0] if archs else None, dtype, source, kernel))
    return out


class Predictions(list):
    """A list of result dicts that shows as a table in Jupyter."""

    COLUMNS = ("id", "arch", "kernel", "dtype", "time_us", "bound", "tflops", "ai", "headroom", "tile")

    def to_dicts(self) -> list[dict]:
        return [dict(r) for r in self]

    def _repr_html_(self) -> str:
        from perfmodel.output import fmt_cell

        cols = [c for c in self.COLUMNS if any(c in r for r in self)] + ["shape"]
        head = "".join(f"<th>{c}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{_html_cell(r.get(c), fmt_cell)}</td>" for c in cols) + "</tr>" for r in self
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __repr__(self) -> str:
        from perfmodel.output import render

        return render([{k: r.get(k) for k in self.COLUMNS if k in r} for r in self], "table")


def _html_cell(v, fmt_cell) -> str:
    import html

    if isinstance(v, dict):
        return html.escape(" ".join(f"{k}={fmt_cell(x)}" for k, x in v.items()))
    return html.escape(fmt_cell(v))


def predict(
    kernel: str | None = None,
    arch: str | list[str] = "mi300x",
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
    archs = [a.path if isinstance(a, Arch) else a for a in archs]
    raws = list(cases) if cases is not None else [dict(params, kernel=kernel)]
    return Predictions(evaluate(normalize_all(raws, archs, dtype, kernel=kernel), warm=warm))


class Sweep:
    """Arrays from a vectorised sweep, shaped like the broadcast of the inputs."""

    def __init__(self, est: Estimate, shape: tuple):
        self.estimate = est
        self.shape = shape

    def _r(self, x) -> np.ndarray:
        return np.broadcast_to(np.asarray(x), self.shape)

    @property
    def time_s(self) -> np.ndarray:
        return self._r(self.estimate.time_s)

    @property
    def bound(self) -> np.ndarray:
        return self._r(self.estimate.bound)

    @property
    def tflops(self) -> np.ndarray:
        return self._r(self.estimate.tflops)

    @property
    def headroom(self) -> np.ndarray:
        return self._r(self.estimate.headroom)

    @property
    def roofline_time_s(self) -> np.ndarray:
        return self._r(self.estimate.roofline_time_s)

    def term(self, name: str) -> np.ndarray:
        return self._r(self.estimate.terms[name])

    @property
    def terms(self) -> list[str]:
        return list(self.estimate.terms)


def sweep(kernel: str, arch: str | Arch = "mi300x", dtype: str | None = None, warm: bool = False, **params: Any) -> Sweep:
    """Vectorised: numeric parameters may be numpy arrays (broadcast together); returns arrays.

    ``sweep("gemm", "mi300x", "bf16", m=M[:, None], n=N[None, :], k=4096).bound`` is a 2-D map of
    bound classes over M x N.
    """
    from perfmodel.models.registry import convert_param, get_model

    model = get_model(kernel)
    a = load_arch(arch)
    dtype = dtype or model.default_dtype
    for k in params:
        if k not in model.params:
            from perfmodel.errors import did_you_mean

            raise InputError(f"unknown parameter for {kernel}{did_you_mean(k, model.params)}", key=k)
    arrays = {k: np.asarray(v) for k, v in params.items() if model.params[k].kind in (int, float)}
    shape = np.broadcast_shapes(*[v.shape for v in arrays.values()]) if arrays else ()
    p: dict[str, Any] = {}
    for name, spec in model.params.items():
        if name in arrays:
            v = np.broadcast_to(arrays[name].astype(float), shape).ravel()
            if np.any(v < spec.minimum) or not np.all(np.isfinite(v)):
                raise InputError(f"expected values >= {spec.minimum:g}", key=name)
            p[name] = v
        elif name in params:
            p[name] = convert_param(spec, params[name], None)
        elif spec.required:
            raise InputError(f"missing required parameter of {kernel}", key=name)
        else:
            p[name] = spec.default
    from perfmodel.models.traffic import warm_caches

    with warm_caches(warm):
        work = run_model(model, p, a, dtype)
    est = estimate(work, a)
    # results are flat over the batch; reshape lazily through the Sweep
    return _ReshapedSweep(est, shape)


class _ReshapedSweep(Sweep):
    def _r(self, x) -> np.ndarray:
        x = np.asarray(x)
        n = int(np.prod(self.shape)) if self.shape else 1
        return np.broadcast_to(x, (n,)).reshape(self.shape) if x.ndim <= 1 else x
