"""Points on a roofline: predicted cases and measured kernels, one typed record each.

A point is drawn once per memory level (x = FLOPs per byte at that level, y = TFLOP/s). A
measured kernel that the model identified gets its predicted point beside it and an arrow
from the predicted to the measured point at the device-memory level.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from perfmodel.arch import Arch
from perfmodel.prediction import Prediction

PREDICTED = "predicted"
MEASURED = "measured"


@dataclass
class Point:
    label: str
    kernel: str
    flops: float
    bytes: dict[str, float]
    time_s: float
    kind: str = PREDICTED  # PREDICTED (filled marker) or MEASURED (hollow marker)

    def xy(self, level: str) -> tuple[float, float] | None:
        """(FLOPs per byte at ``level``, TFLOP/s), or None where either is not positive."""
        b = self.bytes.get(level) or 0
        if self.flops <= 0 or b <= 0 or not self.time_s:
            return None
        return self.flops / b, self.flops / self.time_s / 1e12


Arrow = tuple[tuple[float, float], tuple[float, float]]


def prediction_points(preds: Iterable[Prediction]) -> list[Point]:
    return [Point(p.id or p.kernel, p.kernel, p.flops, p.bytes, p.time_s) for p in preds]


def measured_points(
    path: str,
    arch: Arch | str | None = None,
    *,
    top: int | None = None,
    name: str | None = None,
    manifest: str | None = None,
    per_dispatch: bool = False,
) -> tuple[list[Point], list[Arrow]]:
    """(points, arrows) of a rocprof workload: one measured point per kernel, its predicted point
    when identified, and an arrow between them at the device-memory level."""
    from perfmodel.validate import validate

    v = validate(path, arch=arch, manifest=manifest, per_dispatch=per_dispatch, kernel_filter=name, top=top)
    mem = v.arch.memory_level
    points: list[Point] = []
    arrows: list[Arrow] = []
    for r in v.rows:
        if not r.get("time_us") or r["flops"] is None:  # no FLOP counters: no place on a roofline
            continue
        label = r["name"] if not per_dispatch else f"{r['name']} #{r['dispatch']}"
        meas = Point(label, r["kernel"], r["flops"], dict(r["bytes"]), r["time_us"] * 1e-6, MEASURED)
        points.append(meas)
        if r.get("predicted_time_us"):
            pred = Point("", r["kernel"], r["predicted_flops"], dict(r["predicted_bytes"]), r["predicted_time_us"] * 1e-6)
            points.append(pred)
            a, b = pred.xy(mem), meas.xy(mem)
            if a and b:
                arrows.append((a, b))
    return points, arrows


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
                    "kernel": p.kernel,
                    "kind": p.kind,
                    "level": lv,
                    "flops": p.flops,
                    "bytes": b,
                    "ai": p.flops / b if b > 0 else None,
                    "tflops": p.flops / t / 1e12 if t else None,
                    "time_us": t * 1e6,
                }
            )
    return rows
