"""Measured (and predicted) points of a rocprof workload for `perfmodel roofline --measured`.

One measured point per kernel (drawn once per memory level by the plot), the kernel's
predicted point beside it when the kernel is identified, and an arrow from the predicted to the
measured point at the device-memory level (x = FLOP per byte there, y = TFLOP/s).
"""

from __future__ import annotations

from perfmodel.arch import Arch


def _xy(flops: float, bytes_: dict, time_s: float, level: str) -> dict | None:
    b = bytes_.get(level) or 0
    if flops <= 0 or b <= 0 or not time_s:
        return None
    return {"x": flops / b, "y": flops / time_s / 1e12}


def measured_points(
    path: str,
    arch: Arch | str | None = None,
    *,
    top: int | None = None,
    name: str | None = None,
    manifest: str | None = None,
    per_dispatch: bool = False,
) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """(points, arrows): points are {label, flops, bytes, time_s, kind, kernel}; arrows (pred, meas)."""
    from perfmodel.validate import validate

    v = validate(path, arch=arch, manifest=manifest, per_dispatch=per_dispatch, kernel_filter=name, top=top)
    mem = v.arch.memory_level
    points: list[dict] = []
    arrows: list[tuple[dict, dict]] = []
    for r in v.rows:
        if not r.get("time_us"):
            continue
        label = r["name"] if not per_dispatch else f"{r['name']} #{r['dispatch']}"
        meas = {
            "label": label,
            "kernel": r["kernel"],
            "flops": r["flops"],
            "bytes": dict(r["bytes"]),
            "time_s": r["time_us"] * 1e-6,
            "kind": "measured",
        }
        points.append(meas)
        if r.get("predicted_time_us"):
            pred = {
                "label": "",
                "kernel": r["kernel"],
                "flops": r["predicted_flops"],
                "bytes": dict(r["predicted_bytes"]),
                "time_s": r["predicted_time_us"] * 1e-6,
                "kind": "predicted",
            }
            points.append(pred)
            a, b = (
                _xy(pred["flops"], pred["bytes"], pred["time_s"], mem),
                _xy(meas["flops"], meas["bytes"], meas["time_s"], mem),
            )
            if a and b:
                arrows.append((a, b))
    return points, arrows


def points_table(points: list[dict], arch: Arch) -> list[dict]:
    """One row per plotted point and memory level: kernel, kind, level, AI, TFLOP/s, time."""
    rows = []
    for p in points:
        t = p["time_s"]
        for lv, b in p["bytes"].items():
            if lv not in arch.levels:
                continue
            rows.append(
                {
                    "kernel": p["kernel"],
                    "kind": p["kind"],
                    "level": lv,
                    "flops": p["flops"],
                    "bytes": b,
                    "ai": p["flops"] / b if b > 0 else None,
                    "tflops": p["flops"] / t / 1e12 if t else None,
                    "time_us": t * 1e6,
                }
            )
    return rows
