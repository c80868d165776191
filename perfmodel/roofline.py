"""Roofline maths, vectorised over numpy arrays: attainable rate, ridge points, classification.

The hierarchical roofline has one compute roof per (pipe, dtype) and one bandwidth roof per
memory level. A point (FLOPs per pipe, bytes per level) is bound by the term that takes longest:
``compute:<pipe>`` or ``memory:<level>``. All functions accept scalars or arrays (a million
points at once) and never loop in Python over points.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from perfmodel.arch import Arch, Roof, load_arch
from perfmodel.callable_module import make_callable
from perfmodel.vocab import MATRIX_PIPES, bound_label, compute_term, memory_term, split_flop_key


def attainable(ai, peak_flops: float, bandwidth: float) -> np.ndarray:
    """Attainable FLOP/s at arithmetic intensity ``ai`` (FLOPs per byte) under one roof pair."""
    ai = np.asarray(ai, dtype=float)
    if peak_flops < 0 or bandwidth < 0:
        raise ValueError("peak and bandwidth must be non-negative")
    return np.minimum(peak_flops, ai * bandwidth)


def ridge(peak_flops: float, bandwidth: float) -> float:
    """Arithmetic intensity where the memory roof meets the compute roof."""
    return peak_flops / bandwidth if bandwidth > 0 else float("inf")


def term_times(
    flops: Mapping[str, np.ndarray | float],
    bytes_: Mapping[str, np.ndarray | float],
    rates: Mapping[str, float],
    bandwidths: Mapping[str, float],
) -> dict[str, np.ndarray]:
    """Seconds per term: ``compute:<pipe:dtype>`` = FLOPs / rate, ``memory:<level>`` = bytes / BW.

    A term with work but no rate (the arch lacks that pipe or level) raises KeyError: a caller
    must not silently drop work.
    """
    out: dict[str, np.ndarray] = {}
    for k, f in flops.items():
        out[compute_term(k)] = np.asarray(f, dtype=float) / rates[k]
    for lv, b in bytes_.items():
        out[memory_term(lv)] = np.asarray(b, dtype=float) / bandwidths[lv]
    return out


def largest_term(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(index of the largest term, its value) elementwise; the first wins ties.

    One pass per term over contiguous arrays: much faster than argmax over a stacked axis on
    the large batches the estimator sees.
    """
    best = np.array(arrays[0], dtype=float, copy=True)
    # the index in one byte while it fits (an eighth of the memory traffic), intp when returned
    idx = np.zeros(best.shape, dtype=np.int8 if len(arrays) <= 127 else np.intp)
    plain = _plain(best)
    for i, a in enumerate(arrays[1:], 1):
        better = a > best
        if plain and _plain(a):  # no nan, no -0.0: the larger value is the one `better` picks
            np.maximum(best, a, out=best)
        else:
            np.copyto(best, a, where=better)
        np.maximum(idx, np.multiply(better, i, dtype=idx.dtype), out=idx)  # i where better (i exceeds every earlier index)
    return idx.astype(np.intp, copy=False), best


def _plain(a: np.ndarray) -> bool:
    """No nan and no sign bit (times): there ``np.maximum`` gives what the masked copy
    ``np.copyto(best, a, where=a > best)`` gives, bit for bit (only 0.0 against -0.0, or a nan,
    would tell them apart), and costs a fraction of it on masks that mix True and False.
    A positive minimum (one pass, no temporary; a nan minimum is not positive) settles it for
    most arrays; a zero or negative one is looked at element by element."""
    if a.size and a.min() > 0.0:
        return True
    return not (np.signbit(a).any() or np.isnan(a).any())


def classify(times: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(bound label per point, roofline time per point) from per-term times.

    The label names the largest term with the ``<pipe:dtype>`` collapsed to ``<pipe>`` for
    compute (``compute:mfma``), as the bound vocabulary says.
    """
    names = list(times)
    if not names:
        raise ValueError("nothing to classify: no FLOPs and no bytes")
    arrays = np.broadcast_arrays(*[np.asarray(times[n], dtype=float) for n in names])
    idx, best = largest_term(arrays)
    labels = np.array([bound_label(n) for n in names], dtype=object)
    return labels[idx], best


@dataclass
class RooflineModel:
    """The ceilings of one arch, with the numbers a plot or table needs."""

    arch: Arch
    compute: list[Roof]  # achievable = the spec's published benchmark figure (the table's)
    memory: list[Roof]

    @functools.cached_property
    def compute_filled(self) -> list[Roof]:
        """`compute` with each measured matrix roof's benchmark wave fill (`Roof.ceiling` is then
        the rate the estimator uses): what plots and ``achievable=True`` draw. Computed on first
        use, since the fill runs the GEMM model (a table never needs it)."""
        return [_with_fill(self.arch, c) for c in self.compute]

    def ridge_points(self, achievable: bool = False) -> list[dict]:
        """AI at which each memory roof meets each compute roof."""
        rows = []
        for c in self.compute_filled if achievable else self.compute:
            for m in self.memory:
                cp = c.ceiling if achievable else c.theoretical
                bw = m.ceiling if achievable else m.theoretical
                if cp is None or bw is None:
                    continue
                rows.append({"compute": c.name, "level": m.name, "ridge_flop_per_byte": ridge(cp, bw)})
        return rows

    def attainable(self, ai, compute: str, level: str, achievable: bool = False) -> np.ndarray:
        c = next(x for x in (self.compute_filled if achievable else self.compute) if x.name == compute)
        m = next(x for x in self.memory if x.name == level)
        cp = c.ceiling if achievable and c.achievable else c.theoretical
        bw = m.ceiling if achievable and m.achievable else m.theoretical
        return attainable(ai, cp, bw)

    def table(self) -> list[dict]:
        """One row per roof: theoretical and achievable side by side, with sources.

        The column keeps its published name ``measured`` (the archspec's benchmark figure)."""
        hbm = next((m for m in self.memory if m.name == self.arch.memory_level), None)
        rows = []
        for c in self.compute:
            rows.append(
                {
                    "ceiling": c.name + (" (sparse)" if c.sparse else ""),
                    "kind": "compute",
                    "theoretical": c.theoretical / 1e12,
                    "measured": c.achievable / 1e12 if c.achievable else None,
                    "unit": "TFLOP/s",
                    "ridge_vs_" + self.arch.memory_level: ridge(c.theoretical, hbm.theoretical) if hbm else None,
                    "source": c.source.split(":")[0],
                    "measured_by": c.achievable_source,
                    "source_text": c.source,
                }
            )
        for m in self.memory:
            rows.append(
                {
                    "ceiling": m.name,
                    "kind": "memory",
                    "theoretical": m.theoretical / 1e12,
                    "measured": m.achievable / 1e12 if m.achievable else None,
                    "unit": "TB/s",
                    "ridge_vs_" + self.arch.memory_level: None,
                    "source": m.source.split(":")[0],
                    "measured_by": m.achievable_source,
                    "source_text": m.source,
                }
            )
        return rows


def _with_fill(arch: Arch, roof: Roof) -> Roof:
    """A matrix roof with its benchmark's wave fill (`rates.benchmark_fill`), so its `ceiling` is
    the rate the estimator uses; other roofs unchanged."""
    if roof.kind != "compute" or not roof.achievable or roof.sparse:
        return roof
    pipe, dtype = split_flop_key(roof.name)
    if pipe not in MATRIX_PIPES:
        return roof
    from perfmodel.rates import benchmark_fill

    fill = benchmark_fill(arch, pipe, dtype, arch.achievable_flops(pipe, dtype))
    return dataclasses.replace(roof, fill=fill) if fill < 1.0 else roof


def roofline(arch: str | Arch, dtypes: list[str] | None = None, sparse: bool = False) -> RooflineModel:
    """The roofline of an arch, optionally restricted to some dtypes."""
    a = load_arch(arch)
    ceilings = a.roofs(dtypes=dtypes, sparse=sparse)
    if dtypes:
        known = {split_flop_key(c.name)[1] for c in a.roofs() if c.kind == "compute"}
        for d in dtypes:
            if d not in known:
                from perfmodel.errors import InputError

                raise InputError(f"{a.key} ({a.name}) has no {d} compute rate; it has {', '.join(sorted(known))}", key="dtype")
    return RooflineModel(a, [c for c in ceilings if c.kind == "compute"], [c for c in ceilings if c.kind == "memory"])


make_callable(__name__, roofline)  # `perfmodel.roofline(...)` even after this module was imported
