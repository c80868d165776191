"""The legend panel of a roofline plot: what each line style, fill, colour and marker means,
the numbered key of the cases on the plot, and the notes under it."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from perfmodel.plots import style
from perfmodel.plots.points import MEASURED, MODEL_BASIS, PREDICTED, Point


def legend_panel(panel, points, arrows, keyed, ridge_roof, multi: bool, models, notes: list[str], inside: bool = False,
                 all_levels: bool = False, roof_key: Sequence[tuple[str, str, str]] = ()) -> None:
    """Styles (roof lines, filled/hollow, arrows, colours, markers) and the numbered key."""
    h, lab = _entries(points, arrows, ridge_roof, multi, models, all_levels, roof_key)
    if inside:
        leg = panel.legend(h, lab, loc="lower right", fontsize=8, framealpha=0.95, handlelength=2.2)
        for t in leg.get_texts()[:1]:
            t.set_fontweight("bold")
        return
    leg = panel.legend(h, lab, loc="upper left", fontsize=7.5, frameon=False, handlelength=2.2, borderaxespad=0)
    for t, hh in zip(leg.get_texts(), h, strict=True):  # headings: no marker and no line
        if (not hh.get_marker() or hh.get_marker() == "None") and (not hh.get_linestyle() or hh.get_linestyle() == "None"):
            t.set_fontweight("bold")
    if any(p.kind == MEASURED for p in points):
        notes.append(MODEL_BASIS)
    if keyed:
        _numbered_key(panel, leg, keyed, notes)
    if notes:
        text = "\n".join(textwrap.fill(n, 70) for n in notes)
        panel.text(0, -0.03, text, fontsize=6.5, color="0.35", transform=panel.transAxes, va="top")


def _entries(points, arrows, ridge_roof, multi: bool, models, all_levels: bool, roof_key) -> tuple[list, list[str]]:
    """(handles, labels): the roof styles, then (with GPUs side by side) the GPUs and their
    memory roofs, then the point styles, bound colours and family markers in use."""
    from matplotlib.lines import Line2D

    h: list = []
    lab: list[str] = []

    def head(text):
        h.append(Line2D([], [], ls="", marker=""))
        lab.append(text)

    def entry(text, **kw):
        h.append(Line2D([], [], **kw))
        lab.append(text)

    head("roofs")
    entry("theoretical peak", ls="--", color="0.4")
    entry("achievable (spec's benchmark at a full wave)", ls="-", color="0.4", lw=1.8)
    entry(f"ridge point vs {ridge_roof['name'] if ridge_roof else 'top roof'}", ls="", marker="o", mfc="white", color="0.4")
    if multi:
        head("GPUs (compute roof colour, marker edge)")
        for i, m in enumerate(models):
            c = style.arch_color(i)
            entry(f"{m.arch.key} ({m.arch.name})", ls="", color=c, marker="o", mfc="white", mec=c, mew=1.6)
        head("memory roofs")
        for color, ls, text in roof_key:
            entry(text, ls=ls, color=color, lw=1.4)
    if not points:
        return h, lab
    kinds = {p.kind for p in points}
    head("points (one per case, at its binding level)")
    if PREDICTED in kinds:
        entry("filled: predicted", ls="", marker="o", mfc="0.5", mec="black", ms=7)
    if MEASURED in kinds:
        scaled = any(p.packed_scaled for p in points)
        entry("hollow: measured" + (" (packed FMAs x2)" if scaled else ""), ls="", marker="o", mfc="white", mec="0.4", mew=1.6, ms=7)
    if arrows:
        entry("arrow: predicted -> measured", color="0.3", marker=">", ms=4)
    if multi:
        entry("dotted: same case, next arch", color="0.45", ls=":", marker=">", ms=4)
    if all_levels:
        head("faint: the same case at another level")
        for lv in [lv for lv in style.LEVEL_MARKERS if any(lv in p.bytes and lv != p.level for p in points)]:
            entry(f"FLOP per {lv} byte", ls="", marker=style.LEVEL_MARKERS[lv], color=style.LEVEL_COLORS[lv], alpha=0.5, ms=5)
    head("colour: bound class")
    for b in sorted({p.bound or "unknown" for p in points}):
        entry(b, ls="", marker="s", color=style.bound_color(b), ms=7)
    head("marker: kernel family")
    for k in sorted({p.kernel for p in points}):
        entry(k, ls="", marker=style.family_marker(k), color="0.35", ms=7)
    return h, lab


def _numbered_key(panel, leg, keyed, notes: list[str]) -> None:
    """The numbers on the plot, below the legend: case (or kernel) and its time(s), in up to
    two columns; what does not fit is left to the table (said in the notes)."""
    renderer = panel.figure.canvas.get_renderer()
    bb = leg.get_window_extent(renderer).transformed(panel.transAxes.inverted())
    wide = 44 if len(keyed) <= 24 else 22
    measured = any(p.kind == MEASURED for _, p in keyed)
    if measured:  # kernel names are long: the times go on a second line
        lines = [x for n, p in keyed for x in (f"{n:>2} {_cut(p.label, 66)}", f"   {_key_time(p)}")]
    else:
        lines = [f"{n:>2} {_cut(p.label, wide):<{wide}} {_key_time(p)}".rstrip() for n, p in keyed]
    y = bb.y0 - 0.02
    head_text = "numbers on the plot: " + ("kernel, measured vs predicted time (error)" if measured else "case, predicted time")
    panel.text(0, y, head_text, va="top", ha="left", fontsize=7.5, fontweight="bold", transform=panel.transAxes)
    y -= 0.03
    per_col = max(2, int((y - 0.0) / 0.0165) // (2 if measured else 1) * (2 if measured else 1))
    cols = [lines[i : i + per_col] for i in range(0, len(lines), per_col)]
    width = 1.0 / max(1, len(cols))
    fs = 6.5 if len(cols) == 1 else 6.0
    for c, col in enumerate(cols[:2]):
        panel.text(c * width, y, "\n".join(col), va="top", ha="left", fontsize=fs, family="monospace", transform=panel.transAxes)
    if len(cols) > 2:
        notes.append(f"{len(lines) - 2 * per_col} more cases in the table")


def _key_time(p: Point) -> str:
    """The time(s) a key line shows: predicted, or measured vs predicted with the error."""
    if p.kind == MEASURED:
        pred = p.info.get("predicted time")
        return f"{p.info.get('measured time', '')}" + (f" vs {pred} ({p.info.get('error')})" if pred else "")
    return p.info.get("predicted time", "")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"
