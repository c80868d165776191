"""Vectorised sweeps: numeric case parameters as numpy arrays, results as arrays of their shape.

``sweep("gemm", "mi300x", "bf16", m=M[:, None], n=N[None, :], k=4096).bound`` is a 2-D map of
bound classes over M x N, a million shapes in about a second.

A large sweep runs in chunks of `CHUNK` shapes: the models and the estimator are long chains of
elementwise numpy operations, each of which streams its operands through memory once, and a
chunk whose float64 arrays (512 KiB each) stay in a core's L2 cache runs them about 1.3x faster
than one pass over a million shapes (docs/performance.md). Every shape's result depends on its
own parameters only, so the chunked arrays are the unchunked ones, bit for bit (tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perfmodel.arch import DEFAULT_ARCH, Arch, load_arch
from perfmodel.callable_module import make_callable
from perfmodel.errors import InputError
from perfmodel.estimate import Estimate, RatesUsed, estimate
from perfmodel.prediction import run_model
from perfmodel.work import Work

# Shapes per chunk of a large sweep: 65,536 float64 values are 512 KiB, the size of a typical
# core's L2 cache, where the chains of elementwise operations run fastest (docs/performance.md).
CHUNK = 65_536


class Sweep:
    """Arrays from a vectorised sweep, shaped like the broadcast of the inputs (one `Estimate`
    per chunk of shapes; the properties join them)."""

    def __init__(self, estimates: list[Estimate], shape: tuple, sizes: list[int]):
        self.estimates = estimates
        self.shape = shape
        self._sizes = sizes  # shapes per estimate, in order

    @property
    def estimate(self) -> Estimate:
        """The whole sweep as one `Estimate` (joined from the chunks where there are several)."""
        if len(self.estimates) == 1:
            return self.estimates[0]
        if not hasattr(self, "_joined"):
            self._joined = _join(self.estimates, self._sizes)
        return self._joined

    def _cat(self, get) -> np.ndarray:
        """A batch quantity of every chunk (flat over its chunk, or a scalar) in the sweep's shape."""
        parts = [np.broadcast_to(np.asarray(get(e)), (n,)) for e, n in zip(self.estimates, self._sizes, strict=True)]
        flat = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return flat.reshape(self.shape)

    @property
    def time_s(self) -> np.ndarray:
        return self._cat(lambda e: e.time_s)

    @property
    def bound(self) -> np.ndarray:
        return self._cat(lambda e: e.bound)

    @property
    def tflops(self) -> np.ndarray:
        return self._cat(lambda e: e.tflops)

    @property
    def headroom(self) -> np.ndarray:
        return self._cat(lambda e: e.headroom)

    @property
    def roofline_time_s(self) -> np.ndarray:
        return self._cat(lambda e: e.roofline_time_s)

    def term(self, name: str) -> np.ndarray:
        """Seconds of one term (0 in a chunk none of whose shapes has it)."""
        if not any(name in e.terms for e in self.estimates):
            raise KeyError(name)
        return self._cat(lambda e: e.terms.get(name, 0.0))

    @property
    def terms(self) -> list[str]:
        return list(dict.fromkeys(t for e in self.estimates for t in e.terms))


def _join(parts: list[Estimate], sizes: list[int]) -> Estimate:
    """One `Estimate` from the estimates of consecutive chunks: per-shape arrays concatenated (a
    term, FLOP key or level a chunk lacks counts 0 there); the arch, rates and notes are shared."""

    def cat(values) -> np.ndarray:
        return np.concatenate([np.broadcast_to(np.asarray(v), (n,)) for v, n in zip(values, sizes, strict=True)])

    def cat_dict(dicts: list[dict], missing=0.0) -> dict:
        keys = dict.fromkeys(k for d in dicts for k in d)
        return {k: cat([d.get(k, missing) for d in dicts]) for k in keys}

    first = parts[0]
    work = Work(
        flops=cat_dict([p.work.flops for p in parts]),
        bytes_read=cat_dict([p.work.bytes_read for p in parts]),
        bytes_write=cat_dict([p.work.bytes_write for p in parts]),
        notes=list(dict.fromkeys(t for p in parts for t in p.work.notes)),
    )
    rates = RatesUsed()
    for p in parts:
        rates.rate.update(p.rates_used.rate)
        rates.peak.update(p.rates_used.peak)
        rates.provenance.update(p.rates_used.provenance)
    for t in rates.rate:  # rates that differ by shape (`Work.rate_as` on some shapes): per shape throughout
        vals = [p.rates_used.rate.get(t, np.nan) for p in parts]
        if any(np.size(v) > 1 for v in vals) or len({float(np.ravel(v)[0]) for v in vals}) > 1:
            rates.rate[t] = cat(vals)
    notes = list(dict.fromkeys(t for p in parts for t in p.notes))
    # a note of every shape in one chunk but only of some in another: per shape everywhere
    where = {t: cat([p.note_where.get(t, t in p.notes) for p in parts]) for t in notes}
    return Estimate(
        arch=first.arch,
        work=work,
        terms=cat_dict([p.terms for p in parts]),
        time_s=cat([p.time_s for p in parts]),
        bound=cat([p.bound for p in parts]),
        roofline_time_s=cat([p.roofline_time_s for p in parts]),
        roofline_bound=cat([p.roofline_bound for p in parts]),
        rates_used=rates,
        occupancy=cat_dict([p.occupancy for p in parts]),
        notes=notes,
        note_where={t: w for t, w in where.items() if not w.all()},
    )


def _params(model, params: dict[str, Any], shape: tuple, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The model's parameters: arrays flattened over the sweep, the rest converted or defaulted."""
    from perfmodel.models.registry import convert_param

    p: dict[str, Any] = {}
    for name, spec in model.params.items():
        if name in arrays:
            v = np.broadcast_to(arrays[name].astype(float), shape).ravel()
            if not _finite_from(v, spec.minimum):
                raise InputError(f"expected values >= {spec.minimum:g}", key=name)
            p[name] = v
        elif name in params:
            p[name] = convert_param(spec, params[name], None)
        elif spec.required:
            raise InputError(f"missing required parameter of {model.name}", key=name)
        else:
            p[name] = spec.default
    return p


def _finite_from(v: np.ndarray, minimum: float) -> bool:
    """Whether every value is finite and at least ``minimum``: its minimum and maximum (two passes
    without temporaries; a nan makes both comparisons false), as ``not (any(v < minimum) or
    not all(isfinite(v)))`` says."""
    if v.size == 0:
        return True
    lo = v.min()
    return bool(lo >= minimum and lo > -np.inf and v.max() < np.inf)


def sweep(
    kernel: str, arch: str | Arch = DEFAULT_ARCH, dtype: str | None = None, warm: bool = False, **params: Any
) -> Sweep:
    """Vectorised: numeric parameters may be numpy arrays (broadcast together); returns arrays."""
    from perfmodel.models.registry import get_model
    from perfmodel.models.traffic import warm_caches

    model = get_model(kernel)
    a = load_arch(arch)
    model.check_keys(params)
    arrays = {k: np.asarray(v) for k, v in params.items() if model.params[k].kind in (int, float)}
    shape = np.broadcast_shapes(*[v.shape for v in arrays.values()]) if arrays else ()
    p = _params(model, params, shape, arrays)
    n = int(np.prod(shape)) if shape else 1
    starts = range(0, n, CHUNK) if arrays and n > CHUNK else [0]
    parts, sizes = [], []
    with warm_caches(warm):
        for i in starts:
            chunk = {k: v[i : i + CHUNK] if k in arrays else v for k, v in p.items()} if len(starts) > 1 else p
            parts.append(estimate(run_model(model, chunk, a, dtype or model.default_dtype), a))
            sizes.append(min(CHUNK, n - i) if len(starts) > 1 else n)
    return Sweep(parts, shape, sizes)


make_callable(__name__, sweep)  # `perfmodel.sweep(...)` even after this module was imported
