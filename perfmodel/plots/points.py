"""Points on a roofline: predicted cases and measured kernels, one typed record each.

A point is drawn once, at its *binding level*: the memory level whose roof limits it (its bound
class ``memory:<level>``), or, for a compute-, latency- or launch-bound case, the level whose
memory term is largest (the roof it would meet next). ``all_levels=True`` on the plot adds the
other levels as small faint markers. A measured kernel that the model identified gets its
predicted point beside it and an arrow from the predicted to the measured point, both at the
predicted point's level.

FLOP basis: measured points are drawn in the model's basis. rocprof counts a packed VALU
instruction (``v_pk_fma``) once although it does two FMAs per lane; the model counts both, so
a measured kernel's FLOPs for the keys its model issues packed are scaled back up (see
`perfmodel.validate.compare.counted_fraction`). The legend says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from perfmodel.arch import Arch
from perfmodel.prediction import Prediction
from perfmodel.vocab import DEVICE_MEMORY, split_term

PREDICTED = "predicted"
MEASURED = "measured"
MODEL_BASIS = "model FLOP basis: packed VALU instructions count 2 FMAs per lane"


@dataclass
class Point:
    label: str
    kernel: str
    flops: float
    bytes: dict[str, float]
    time_s: float
    kind: str = PREDICTED  # PREDICTED (filled marker) or MEASURED (hollow marker)
    bound: str | None = None
    arch: str | None = None
    dtype: str | None = None
    level: str | None = None  # the binding level: where the marker goes
    info: dict[str, str] = field(default_factory=dict)  # hover/key text: case, times, terms
    terms_us: dict[str, float] = field(default_factory=dict)
    packed_scaled: bool = False  # measured FLOPs scaled to the model's packed-FMA basis

    def xy(self, level: str | None = None) -> tuple[float, float] | None:
        """(FLOPs per byte at ``level`` (default: the binding level), TFLOP/s), or None where
        either is not positive."""
        level = level or self.level or ""
        b = self.bytes.get(level) or 0
        if self.flops <= 0 or b <= 0 or not self.time_s:
            return None
        return self.flops / b, self.flops / self.time_s / 1e12

    @property
    def tflops(self) -> float:
        return self.flops / self.time_s / 1e12 if self.time_s else 0.0

    def bandwidth(self, level: str) -> float | None:
        """Bytes per second through ``level`` (None without time or bytes)."""
        b = self.bytes.get(level) or 0
        return b / self.time_s if b > 0 and self.time_s else None


@dataclass
class Arrow:
    """From a predicted point to its measured point (drawn at the predicted point's level)."""

    pred: Point
    meas: Point

    def xy(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        level = self.pred.level
        a, b = self.pred.xy(level), self.meas.xy(level)
        return (a, b) if a and b else None


def binding_level(bound: str | None, terms: dict[str, float], bytes_: dict[str, float], memory_level: str) -> str:
    """The memory level a point is drawn at (see the module docstring)."""
    kind, key = split_term(bound or "")
    if kind == "memory" and bytes_.get(key):
        return key
    mem_terms = {split_term(t)[1]: s for t, s in terms.items() if split_term(t)[0] == "memory" and bytes_.get(split_term(t)[1])}
    if mem_terms:
        return max(mem_terms, key=mem_terms.get)
    if bytes_.get(memory_level):
        return memory_level
    return next((lv for lv in DEVICE_MEMORY if bytes_.get(lv)), next((lv for lv, b in bytes_.items() if b), memory_level))


def _us(s: float) -> str:
    us = s * 1e6
    return f"{us:,.1f} us" if us >= 10 else f"{us:.3g} us"


def prediction_point(p: Prediction) -> Point:
    from perfmodel.tables import shape_text

    shape = shape_text(p.shape, p.kernel)  # keys left at their default omitted, as in the tables
    info = {
        "case": f"{p.id + ': ' if p.id else ''}{p.kernel} {p.dtype} {shape}",
        "arch": p.arch,
        "predicted time": _us(p.time_s),
        "bound": p.bound,
        "TFLOP/s": f"{p.tflops:.3g}",
        "roofline time": _us(p.roofline_time_s),
        "terms": ", ".join(f"{t} {_us(s)}" for t, s in sorted(p.terms_s.items(), key=lambda x: -x[1])),
    }
    return Point(
        p.id or p.kernel,
        p.kernel,
        p.flops,
        dict(p.bytes),
        p.time_s,
        PREDICTED,
        bound=p.bound,
        arch=p.arch,
        dtype=p.dtype,
        level=binding_level(p.bound, p.terms_s, p.bytes, p.memory_level),
        info=info,
        terms_us=p.terms_us,
    )


def prediction_points(preds: Iterable[Prediction]) -> list[Point]:
    return [prediction_point(p) for p in preds]


def model_basis_flops(row: dict) -> tuple[float, bool]:
    """A validate row's measured FLOPs in the model's basis, and whether any were scaled.

    ``flops_ratio[k]`` is measured / (predicted x counted fraction) per FLOP key, so
    ``flops_ratio[k] x predicted_flops_by[k]`` is the measured count with packed instructions
    counted as the model counts them; keys the model does not predict are taken as counted."""
    meas = row.get("flops_by") or {}
    ratio = row.get("flops_ratio") or {}
    pred = row.get("predicted_flops_by") or {}
    counted = row.get("predicted_flops_counted")
    if not ratio or counted is None or abs(counted - (row.get("predicted_flops") or 0)) < 0.5:
        return float(row.get("flops") or 0.0), False
    total = 0.0
    for k, v in meas.items():
        r = ratio.get(k)
        total += r * pred[k] if r is not None and pred.get(k) else v
    return total, True


def measured_points(
    path: str,
    arch: Arch | str | None = None,
    *,
    top: int | None = None,
    name: str | None = None,
    manifest: str | None = None,
    per_dispatch: bool = False,
    validation=None,
) -> tuple[list[Point], list[Arrow]]:
    """(points, arrows) of a rocprof workload: one measured point per kernel, its predicted point
    when identified, and an arrow between them. Kernels without a usable time still get a point
    (time 0): the bandwidth chart and the tables say why it is not on the roofline."""
    from perfmodel.validate import validate

    v = validation or validate(path, arch=arch, manifest=manifest, per_dispatch=per_dispatch, kernel_filter=name, top=top)
    points: list[Point] = []
    arrows: list[Arrow] = []
    for r in v.rows:
        label = r["name"] if not per_dispatch else f"{r['name']} #{r['dispatch']}"
        meas, pred = _row_points(r, label, v.arch)
        if pred is not None:
            points += [meas, pred]
            arrows.append(Arrow(pred, meas))
        else:
            points.append(meas)
    return points, arrows


def _hover(r: dict, t_meas: float) -> dict:
    """What hovering a validated kernel shows: its times, bounds, error and explanation."""
    info = {
        "kernel": r["name"],
        "measured time": _us(t_meas) if t_meas else "no usable time",
        "measured bound": str(r.get("measured_bound")),
    }
    if r.get("predicted_time_us"):
        info.update(
            {
                "predicted time": _us(r["predicted_time_us"] * 1e-6),
                "predicted bound": str(r.get("bound")),
                "error": "-" if r.get("time_error") is None else f"{r['time_error']:+.1%}",
                "explain": str(r.get("explain") or ""),
            }
        )
    return info


def _row_points(r: dict, label: str, arch: Arch) -> tuple[Point, Point | None]:
    """The measured point of one validate row (FLOPs in the model's basis) and, when the kernel
    was identified, its predicted point; both at the level that binds the prediction."""
    mem = arch.memory_level
    family = (r.get("case") or {}).get("kernel") or "unidentified"
    flops, scaled = model_basis_flops(r)
    t_meas = (r.get("time_us") or 0) * 1e-6
    info = _hover(r, t_meas)
    meas = Point(label, family, flops, {k: v for k, v in r["bytes"].items() if v}, t_meas, MEASURED,
                 bound=r.get("measured_bound"), arch=arch.key, info=info, packed_scaled=scaled)
    if not r.get("predicted_time_us"):
        meas.level = binding_level(meas.bound, {}, meas.bytes, mem)
        return meas, None
    terms = {k: u * 1e-6 for k, u in (r.get("predicted_terms_us") or {}).items()}
    pred = Point(label, family, r["predicted_flops"], dict(r["predicted_bytes"]), r["predicted_time_us"] * 1e-6, PREDICTED,
                 bound=r.get("bound"), arch=arch.key, level=binding_level(r.get("bound"), terms, r["predicted_bytes"], mem),
                 info=info, terms_us=r.get("predicted_terms_us") or {})
    meas.level = pred.level if meas.bytes.get(pred.level) else binding_level(meas.bound, {}, meas.bytes, mem)
    return meas, pred


def points_table(points: list[Point], arch: Arch) -> list[dict]:
    """One row per plotted point and memory level: kernel, kind, level, AI, TFLOP/s, time."""
    rows = []
    for p in points:
        t = p.time_s
        for lv, b in p.bytes.items():
            if lv not in arch.levels:
                continue
            rows.append(
                {
                    "kernel": p.label,
                    "family": p.kernel,
                    "kind": p.kind,
                    "level": lv,
                    "binding": lv == p.level,
                    "flops": p.flops,
                    "bytes": b,
                    "ai": p.flops / b if b > 0 else None,
                    "tflops": p.flops / t / 1e12 if t else None,
                    "gbs": b / t / 1e9 if t else None,
                    "time_us": t * 1e6,
                }
            )
    return rows
