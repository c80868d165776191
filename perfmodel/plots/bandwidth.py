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


def plot_bandwidth(model: RooflineModel, points: list[Point], path: str | None = None, title: str | None = None, subtitle: str | None = None):
    """Grouped bars: for each memory level, each point's achieved bandwidth; ceilings as lines.

    Points without a usable time are listed under the chart (their bytes are known, their rate
    is not). Returns the figure; writes ``path`` if given.
    """
    from perfmodel.plots.roofline_plot import new_figure, save

    levels = [m.name for m in model.memory if any(p.bandwidth(m.name) for p in points)] or [model.arch.memory_level]
    roofs = {m.name: m for m in model.memory}
    timed = [p for p in points if p.time_s]
    untimed = [p for p in points if not p.time_s]
    labels = list(dict.fromkeys(p.label for p in timed))
    order = sorted(timed, key=lambda p: (labels.index(p.label), p.kind != PREDICTED))
    fig = new_figure(11, 5.8)
    left, right, bottom = 0.07, 0.72, 0.17 if untimed else 0.12
    n = len(levels)
    gap = 0.035
    w = (right - left - gap * (n - 1)) / n
    width = 0.8 / max(1, len(order))
    for i, lv in enumerate(levels):
        ax = fig.add_axes([left + i * (w + gap), bottom, w, 0.70])
        _level_panel(ax, lv, roofs.get(lv), order, labels, width, first=i == 0)
    fig.text(left, 0.95, title or f"{model.arch.name}: achieved bandwidth per memory level (kernels without FLOPs)",
             fontsize=12, ha="left", va="bottom")
    if subtitle:
        fig.text(left, 0.925, subtitle, fontsize=8, color="0.35", ha="left", va="bottom")
    _legend(fig, labels, timed)
    if untimed:
        fig.text(left, 0.03, "no usable measured time (bytes known, rate not): " + ", ".join(p.label for p in untimed),
                 fontsize=8, color="0.3")
    if path:
        save(fig, path)
    return fig


def _level_panel(ax, lv: str, m, order: list[Point], labels: list[str], width: float, first: bool) -> None:
    """One memory level: its ceilings as lines and each point's achieved bandwidth as a bar,
    labelled with GB/s and the share of the achievable ceiling."""
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
        pct = f"\n{bw / m.achievable:.0%}" if m is not None and m.achievable else ""
        labels_at.append((x, bw / 1e9, f"{bw / 1e9:,.0f}{pct}", filled))
        ymax = max(ymax, bw / 1e9)
    ax.set_ylim(0, ymax * 1.12)
    for x, y, text, filled in labels_at:  # inside a tall bar, above a short one
        inside = y > 0.25 * ymax
        ax.text(x, y * (0.97 if inside else 1.0) if inside else y, text, ha="center", va="top" if inside else "bottom",
                fontsize=7, zorder=4, color="white" if inside and filled else "black",
                bbox=None if inside and filled else {"fc": "white", "ec": "none", "alpha": 0.85, "pad": 0.3})
    ax.set_xlim(-0.5, 0.5)
    ax.set_xticks([])
    ax.set_xlabel(lv, fontsize=11, color=color_lv)
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
    fig.text(0.75, 0.2, "number over a bar: GB/s and the\nfraction of the level's achievable\nbandwidth", fontsize=7.5, color="0.35")


def zero_flop(points: list[Point]) -> list[Point]:
    """The points a roofline cannot show: no FLOPs (or no usable time)."""
    return [p for p in points if p.flops <= 0 or not p.time_s]


