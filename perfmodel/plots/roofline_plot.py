"""Hierarchical roofline plot: one roof per memory level and per (pipe, dtype).

Theoretical roofs dashed, measured (achievable) roofs solid, ridge points marked. Cases (from
predictions) and measured kernels (from rocprof) are drawn as points, one per memory level.
matplotlib is imported here only, so commands that do not plot never load it.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from perfmodel.plots.points import PREDICTED, Arrow, Point
from perfmodel.roofline import RooflineModel
from perfmodel.vocab import split_flop_key

LEVEL_COLORS = {"lds": "#8c564b", "l1": "#9467bd", "l2": "#2ca02c", "mall": "#ff7f0e", "hbm": "#1f77b4", "vram": "#1f77b4"}
LEVEL_MARKERS = {"lds": "v", "l1": "^", "l2": "s", "mall": "D", "hbm": "o", "vram": "o"}


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_roofline(
    model: RooflineModel,
    path: str | None = None,
    points: Iterable[Point] = (),
    title: str | None = None,
    compute: list[str] | None = None,
    arrows: Iterable[Arrow] = (),
):
    """Draw the roofline with ``points`` (predicted or measured kernels) and ``arrows`` from a
    predicted to a measured point.

    ``compute`` limits the compute roofs drawn (names like "mfma:bf16"); by default the matrix
    and vector roofs of every dtype. Returns the matplotlib figure; writes ``path`` if given.
    """
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(11, 7), dpi=110)
    arch = model.arch
    ai = np.logspace(-2, 4, 400)
    roofs = _group_roofs([c for c in model.compute if (not compute or c.name in compute) and not c.sparse])
    # keep the plot readable: at most 6 compute roofs, highest first
    roofs = sorted(roofs, key=lambda c: -c["theoretical"])[:6]
    top = max((c["theoretical"] for c in roofs), default=1e12)
    _draw_compute_roofs(ax, plt.get_cmap("Greys"), roofs, ai)
    _draw_memory_roofs(ax, model, roofs, ai, top)
    _draw_points(ax, list(points), list(arrows), arch)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(ai[0], ai[-1])
    lowest = min([m.theoretical for m in model.memory]) * ai[0] / 1e12
    ax.set_ylim(max(lowest, 1e-3), top / 1e12 * 2.5)
    ax.set_xlabel("arithmetic intensity (FLOP per byte at each level)")
    ax.set_ylabel("performance (TFLOP/s)")
    ax.set_title(title or f"{arch.name} ({arch.key}, {arch.gfx}): hierarchical roofline")
    ax.grid(True, which="major", ls=":", lw=0.6, alpha=0.6)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    fig.text(0.01, 0.005, "dashed: theoretical peak; solid: measured achievable; circles: ridge points (FLOP/B)", fontsize=7, color="0.35")
    fig.tight_layout()
    if path:
        save(fig, path)
    return fig


def _draw_compute_roofs(ax, cmap, roofs: list[dict], ai) -> None:
    """Flat roofs: theoretical dashed, the achievable figures of the group solid below them."""
    for i, c in enumerate(roofs):
        shade = cmap(0.55 + 0.4 * (i + 1) / (len(roofs) + 1))
        y = c["theoretical"] / 1e12
        ax.axhline(y, ls="--", lw=1.0, color=shade)
        ax.text(ai[-1] / 1.15, y * 1.03, f"{c['name']} peak {y:,.1f}", va="bottom", ha="right", fontsize=8, color=shade)
        for j, (dtype, meas) in enumerate(c["measured"]):
            ym = meas / 1e12
            ax.axhline(ym, ls="-", lw=1.4, color=shade, alpha=0.8)
            up = j % 2 == 0
            ax.text(ai[0] * 1.15, ym * (1.03 if up else 1 / 1.03), f"{dtype} measured {ym:,.1f}", va="bottom" if up else "top", ha="left", fontsize=7, color=shade)


def _draw_memory_roofs(ax, model: RooflineModel, roofs: list[dict], ai, top: float) -> None:
    """Slanted roofs per level, theoretical dashed and achievable solid, with the ridge point
    against the highest compute roof."""
    for m in model.memory:
        color = LEVEL_COLORS.get(m.name, "k")
        y = np.minimum(ai * m.theoretical, top) / 1e12
        ax.plot(ai, y, ls="--", lw=1.2, color=color, label=f"{m.name} {m.theoretical / 1e12:.2f} TB/s (theoretical)")
        if m.achievable:
            ym = np.minimum(ai * m.achievable, top) / 1e12
            ax.plot(ai, ym, ls="-", lw=1.8, color=color, label=f"{m.name} {m.achievable / 1e12:.2f} TB/s (measured)")
        if roofs:
            r = roofs[0]["theoretical"] / m.theoretical
            ax.plot([r], [roofs[0]["theoretical"] / 1e12], marker="o", ms=5, mfc="white", color=color)
            ax.annotate(f"{r:.0f}", (r, roofs[0]["theoretical"] / 1e12), textcoords="offset points", xytext=(0, -12), fontsize=7, color=color, ha="center")


def _draw_points(ax, points: list[Point], arrows: list[Arrow], arch) -> None:
    label = len(points) <= 15  # beyond that, labels only clutter: the table names the points
    for p in points:
        _draw_point(ax, p, arch, label)
    if points:
        for lv, mk in LEVEL_MARKERS.items():
            if lv in arch.levels:
                ax.plot([], [], marker=mk, ls="", color=LEVEL_COLORS[lv], label=f"kernel at {lv} (FLOP/B at {lv})")
    for pred, meas in arrows:
        ax.annotate("", xy=meas, xytext=pred, arrowprops={"arrowstyle": "->", "color": "0.4", "lw": 0.8})


def _group_roofs(ceilings) -> list[dict]:
    """Merge roofs with the same peak into one labelled roof ("mfma fp16/bf16 · valu fp32")."""
    groups: dict[int, dict] = {}
    for c in ceilings:
        pipe, dtype = split_flop_key(c.name)
        g = groups.setdefault(round(c.theoretical / 1e9), {"pipes": {}, "theoretical": c.theoretical, "measured": []})
        g["pipes"].setdefault(pipe, []).append(dtype)
        if c.achievable:
            g["measured"].append((f"{pipe} {dtype}", c.achievable))
    for g in groups.values():
        g["name"] = " · ".join(f"{p} {'/'.join(d)}" for p, d in g["pipes"].items())
        g["measured"].sort(key=lambda x: -x[1])
    return list(groups.values())


def _draw_point(ax, p: Point, arch, label: bool = True) -> None:
    t, f = p.time_s or 0, p.flops or 0
    if t <= 0 or f <= 0:
        return
    perf = f / t / 1e12
    for lv, b in (p.bytes or {}).items():
        if b <= 0 or lv not in LEVEL_COLORS:
            continue
        x = f / b
        filled = p.kind == PREDICTED
        ax.plot([x], [perf], marker=LEVEL_MARKERS.get(lv, "o"), ms=6, color=LEVEL_COLORS[lv], mfc=LEVEL_COLORS[lv] if filled else "white", ls="")
        if label and lv == arch.memory_level:
            ax.annotate(p.label, (x, perf), textcoords="offset points", xytext=(4, 3), fontsize=7)


def save(fig, path: str) -> None:
    """Save atomically in the format the extension asks for (png, svg, pdf)."""
    import io

    from perfmodel.errors import InputError
    from perfmodel.output import write_atomic

    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if ext not in ("png", "svg", "pdf"):
        raise InputError(f"unsupported plot format '.{ext}'; expected .png, .svg or .pdf", key="-o")
    buf = io.BytesIO()
    fig.savefig(buf, format=ext)
    write_atomic(path, buf.getvalue())
