"""Bandwidth chart: achieved bytes per second per memory level against the level's ceilings.

A kernel that does no floating-point work (a copy, a transpose, a gather) has no place on a
roofline, whose x axis is FLOPs per byte. Here it gets one bar per memory level it touches
(filled: predicted, hollow: measured), beside the level's theoretical (dashed) and achievable
(solid) bandwidth, so the chart answers the question a roofline answers for compute kernels:
how close to the ceiling did it run, and at which level.
"""

from __future__ import annotations

from perfmodel.plots import style
from perfmodel.plots.points import MEASURED, PREDICTED, Point
from perfmodel.roofline import RooflineModel


def plot_bandwidth(model: RooflineModel, points: list[Point], path: str | None = None, title: str | None = None, subtitle: str | None = None,
                   others=()):
    """Grouped bars: for each memory level, each point's achieved bandwidth; ceilings as lines.

    Points without a usable time are listed under the chart (their bytes are known, their rate
    is not). With points of several GPUs (``others``: their models), the lines are ``model``'s
    ceilings, each bar is named by its GPU under it, and its percentage is of its own GPU's
    achievable ceiling, never of another's. Returns the figure; writes ``path`` if given.
    """
    from perfmodel.plots.roofline_plot import new_figure, save

    by_arch = {m.arch.key: {lv.name: lv for lv in m.memory} for m in (model, *others)}
    levels = [m.name for m in model.memory if any(p.bandwidth(m.name) for p in points)]
    levels += [lv for lv in dict.fromkeys(lv for roofs in by_arch.values() for lv in roofs)
               if lv not in levels and any(p.bandwidth(lv) for p in points)]
    levels = levels or [model.arch.memory_level]
    roofs = by_arch[model.arch.key]
    several = len({p.arch for p in points if p.arch}) > 1
    timed = [p for p in points if p.time_s]
    untimed = [p for p in points if not p.time_s]
    labels = list(dict.fromkeys(p.label for p in timed))
    order = sorted(timed, key=lambda p: (labels.index(p.label), p.kind != PREDICTED))
    fig = new_figure(11, 5.8)
    left, right, bottom = 0.07, 0.72, (0.17 if untimed else 0.12) + (0.07 if several else 0.0)
    n = len(levels)
    gap = 0.035
    w = (right - left - gap * (n - 1)) / n
    width = 0.8 / max(1, len(order))
    for i, lv in enumerate(levels):
        ax = fig.add_axes([left + i * (w + gap), bottom, w, 0.70 - (0.07 if several else 0.0)])
        _level_panel(ax, lv, roofs.get(lv), order, labels, width, first=i == 0, own=by_arch if several else None)
    default = (f"achieved bandwidth per memory level (kernels without FLOPs); lines: {model.arch.name}'s ceilings" if several
               else f"{model.arch.name}: achieved bandwidth per memory level (kernels without FLOPs)")
    fig.text(left, 0.95, title or default, fontsize=12, ha="left", va="bottom")
    if subtitle:
        fig.text(left, 0.925, subtitle, fontsize=8, color="0.35", ha="left", va="bottom")
    _legend(fig, labels, timed)
    if untimed:
        fig.text(left, 0.03, "no usable measured time (bytes known, rate not): " + ", ".join(p.label for p in untimed),
                 fontsize=8, color="0.3")
    if path:
        save(fig, path)
    return fig


def _level_panel(ax, lv: str, m, order: list[Point], labels: list[str], width: float, first: bool, own=None) -> None:
    """One memory level: its ceilings as lines and each point's achieved bandwidth as a bar,
    labelled with GB/s and the share of the achievable ceiling (``own``: each GPU's levels,
    where the points are of several: the share of the bar's own GPU, its key under the bar)."""
    color_lv = style.LEVEL_COLORS.get(lv, "k")
    ymax = _ceiling_lines(ax, m, color_lv)
    labels_at: list = []
    for j, p in enumerate(order):
        bw = p.bandwidth(lv)
        if not bw:
            continue
        x = -0.4 + width * (j + 0.5)
        color = style.kernel_color(labels.index(p.label))
        filled = p.kind == PREDICTED
        ax.bar(x, bw / 1e9, width * 0.85, color=color if filled else "white", edgecolor=color, lw=1.5, zorder=2,
               hatch=None if filled else "//")
        ceiling = own.get(p.arch, {}).get(lv) if own is not None else m
        pct = f"\n{bw / ceiling.achievable:.0%}" if ceiling is not None and ceiling.achievable else ""
        labels_at.append((x, bw / 1e9, f"{bw / 1e9:,.0f}{pct}", filled))
        if own is not None:
            ax.text(x, -0.01, p.arch, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=6.5, rotation=90)
        ymax = max(ymax, bw / 1e9)
    ax.set_ylim(0, ymax * 1.12)
    for x, y, text, filled in labels_at:  # inside a tall bar, above a short one
        inside = y > 0.25 * ymax
        ax.text(x, y * (0.97 if inside else 1.0) if inside else y, text, ha="center", va="top" if inside else "bottom",
                fontsize=7, zorder=4, color="white" if inside and filled else "black",
                bbox=None if inside and filled else {"fc": "white", "ec": "none", "alpha": 0.85, "pad": 0.3})
    ax.set_xlim(-0.5, 0.5)
    ax.set_xticks([])
    ax.set_xlabel(lv, fontsize=11, color=color_lv, labelpad=42 if own is not None else 4)
    ax.grid(True, axis="y", ls=":", alpha=0.6)
    ax.tick_params(labelsize=8)
    if first:
        ax.set_ylabel("achieved bandwidth (GB/s) = bytes through the level / time")


def _ceiling_lines(ax, m, color_lv) -> float:
    """The level's theoretical (dashed) and achievable (solid) ceilings; the top of the axis."""
    if m is None:
        return 0.0
    ax.axhline(m.theoretical / 1e9, ls="--", lw=1.3, color=color_lv, zorder=3)
    ax.text(0.03, m.theoretical / 1e9, f"peak {m.theoretical / 1e12:.3g} TB/s", transform=ax.get_yaxis_transform(),
            ha="left", va="bottom", fontsize=7, color=color_lv)
    if m.achievable:
        ax.axhline(m.achievable / 1e9, ls="-", lw=2, color=color_lv, zorder=3)
        ax.text(0.03, m.achievable / 1e9, f"achievable {m.achievable / 1e12:.3g} TB/s", transform=ax.get_yaxis_transform(),
                ha="left", va="bottom", fontsize=7, color=color_lv)
    return m.theoretical / 1e9


def _legend(fig, labels: list[str], points: list[Point]) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    h: list = [Line2D([], [], ls="--", color="0.3"), Line2D([], [], ls="-", lw=2, color="0.3")]
    lab = ["theoretical bandwidth", "achievable (spec's benchmark)"]
    kinds = {p.kind for p in points}
    if PREDICTED in kinds:
        h.append(Patch(fc="0.5", ec="0.5"))
        lab.append("filled: predicted")
    if MEASURED in kinds:
        h.append(Patch(fc="white", ec="0.3", hatch="//"))
        lab.append("hatched: measured (rocprof)")
    for i, k in enumerate(labels):
        h.append(Patch(fc=style.kernel_color(i)))
        lab.append(k)
    fig.legend(h, lab, loc="upper left", bbox_to_anchor=(0.75, 0.92), fontsize=8, frameon=False)
    fig.text(0.75, 0.2, "number over a bar: GB/s and the\nfraction of the level's achievable\nbandwidth (on the bar's own GPU)",
             fontsize=7.5, color="0.35")


def zero_flop(points: list[Point]) -> list[Point]:
    """The points a roofline cannot show: no FLOPs (or no usable time)."""
    return [p for p in points if p.flops <= 0 or not p.time_s]


