"""Hierarchical roofline plot: one roof per memory level and per (pipe, dtype), with cases.

Theoretical roofs dashed, achievable (the spec's benchmark figures; a matrix figure divided by
its benchmark shape's wave fill: the rate the estimator uses, so no prediction lies above it)
solid, ridge points marked against the compute roof of the dtype the user selected. Each case is one marker at its binding
level (`points.binding_level`; ``all_levels=True`` adds the others, faint): colour by bound
class, marker by kernel family, filled = predicted, hollow = measured, arrow = predicted ->
measured. Labels are placed without overlaps (`layout`); what does not fit is numbered in a
key beside the plot. Several archs share one plot when ``others`` is given: their device-memory
and top compute roofs are drawn in the arch's colour and each case's markers are joined.
matplotlib is imported here only, so commands that do not plot never load it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from perfmodel.plots import layout, style
from perfmodel.plots.legend import legend_panel
from perfmodel.plots.points import MEASURED, PREDICTED, Arrow, Point
from perfmodel.roofline import RooflineModel
from perfmodel.vocab import split_flop_key

# re-exported for callers of the old module
LEVEL_COLORS = style.LEVEL_COLORS
LEVEL_MARKERS = style.LEVEL_MARKERS
MAX_TEXT_LABELS = 14  # more cases than this (or longer labels): numbers on the plot and a key beside it
MAX_LABEL_CHARS = 200


def _mpl():
    import matplotlib.pyplot as plt

    return plt


def new_figure(width: float = 13.0, height: float = 7.5):
    """A figure that does not go through pyplot's figure manager when no backend is interactive:
    scripts and the CLI leak nothing, notebooks still show it (via `_repr_png_`/display)."""
    plt = _mpl()
    return plt.figure(figsize=(width, height), dpi=110)


def plot_roofline(
    model: RooflineModel,
    path: str | None = None,
    points: Iterable[Point] = (),
    title: str | None = None,
    compute: list[str] | None = None,
    arrows: Iterable[Arrow] = (),
    *,
    ridge_dtype: str | None = None,
    all_levels: bool = False,
    others: Sequence[RooflineModel] = (),
    subtitle: str | None = None,
    notes: Sequence[str] = (),
):
    """Draw the roofline with ``points`` (predicted or measured kernels) and ``arrows`` from a
    predicted to a measured point.

    ``compute`` limits the compute roofs drawn (names like "mfma:bf16"); by default the matrix
    and vector roofs of every dtype (at most six, highest first). ``ridge_dtype`` picks the
    compute roof the ridge points are computed against (default: the dtype most points use,
    else the highest roof). ``others``: more archs on the same axes. Returns the matplotlib
    figure; writes ``path`` if given (.png, .svg, .pdf).
    """
    points = [p for p in points if p.xy() is not None]
    arrows = list(arrows)
    fig, ax, panel = _figure(bool(points or others))
    arch = model.arch
    if ridge_dtype is None:
        dts = [p.dtype for p in points if p.dtype]
        ridge_dtype = max(set(dts), key=dts.count) if dts else None
    roofs = _group_roofs([c for c in model.compute_filled if (not compute or c.name in compute) and not c.sparse])
    roofs = sorted(roofs, key=lambda c: -c["theoretical"])[:6]
    ridge_roof = _roof_for(roofs, ridge_dtype)
    xlim, ylim = _limits(model, roofs, points, others)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    roof_key, obstacles = _draw_roofs(ax, model, others, roofs, ridge_roof, ridge_dtype, points, xlim)
    _draw_points(ax, points, arrows, all_levels, multi=bool(others), arch_order=[m.arch.key for m in (model, *others)])
    keyed = _label_points(ax, points, layout.as_boxes(obstacles))
    ax.set_xlabel("arithmetic intensity (FLOP per byte" + (" at the point's binding level)" if points else " at each level)"))
    ax.set_ylabel("performance (TFLOP/s)")
    archs = ", ".join([f"{arch.name}"] + [o.arch.name for o in others])
    fig.text(ax.get_position().x0, 0.95, title or f"{archs}: hierarchical roofline", fontsize=13, ha="left", va="bottom")
    if subtitle:
        fig.text(ax.get_position().x0, 0.925, subtitle, fontsize=8, color="0.35", ha="left", va="bottom")
    ax.grid(True, which="major", ls=":", lw=0.6, alpha=0.6)
    legend_panel(panel if panel is not None else ax, points, arrows, keyed, ridge_roof, bool(others), [model, *others],
                 list(notes), inside=panel is None, all_levels=all_levels, roof_key=roof_key)
    if path:
        save(fig, path)
    return fig


def _figure(with_panel: bool):
    """(figure, plot axes, legend panel): a panel beside the plot for points or several GPUs;
    ceilings only use the whole width with the legend inside the empty lower right."""
    if with_panel:
        fig = new_figure()
        ax = fig.add_axes([0.065, 0.09, 0.60, 0.80])
        panel = fig.add_axes([0.69, 0.06, 0.30, 0.83])
        panel.axis("off")
        return fig, ax, panel
    fig = new_figure(11, 7.5)
    return fig, fig.add_axes([0.08, 0.09, 0.89, 0.80]), None


def _draw_roofs(ax, model, others, roofs, ridge_roof, ridge_dtype, points, xlim) -> tuple[list, list]:
    """Compute and memory roofs of the GPU (and the other GPUs): (legend rows of the memory roofs
    when several GPUs share the axes, boxes the point labels must avoid)."""
    arch = model.arch
    ai = np.logspace(np.log10(xlim[0]), np.log10(xlim[1]), 400)
    top = max((c["theoretical"] for c in roofs), default=1e12)
    markers: list = [_marker_box(ax, p) for p in points]
    if others:  # several GPUs: each one's roof for the dtype, in the GPU's colour
        lines = _compute_lines([ridge_roof] if ridge_roof else [], arch.key, style.arch_color(0))
        other_roofs = [_roof_for(_group_roofs([c for c in om.compute_filled if not c.sparse]), ridge_dtype) for om in others]
        for i, (om, r) in enumerate(zip(others, other_roofs, strict=True), 1):
            lines += _compute_lines([r] if r else [], om.arch.key, style.arch_color(i))
    else:
        lines = _compute_lines(roofs, None, cmap=_mpl().get_cmap("Greys"))
    obstacles: list = _draw_compute_lines(ax, lines, xlim)
    roof_key: list[tuple[str, str, str]] = []  # several GPUs: the memory roofs are named in the legend
    for i, om in enumerate(others, 1):
        roof_key.append(_draw_other_arch(ax, om, ridge_dtype, ai, style.arch_color(i)))
    mem_top = ridge_roof["theoretical"] if (others and ridge_roof) else top
    if others:  # the first GPU: device memory and the levels its cases bind at, named in the legend
        levels = {arch.memory_level} | {p.level for p in points if p.arch == arch.key}
        roof_key[:0] = _draw_memory_roofs(ax, model, ridge_roof, ai, mem_top, arch.key, [], levels=levels, label=False)
    else:
        obstacles += _draw_memory_roofs(ax, model, ridge_roof, ai, mem_top, None, obstacles + markers)
    return roof_key, obstacles


def _limits(model, roofs, points, others) -> tuple[tuple[float, float], tuple[float, float]]:
    top = max([c["theoretical"] for c in roofs] + [1e12])
    for o in others:
        top = max([top] + [c.theoretical for c in o.compute if not c.sparse])
    xs = [p.xy()[0] for p in points] + [p.xy(lv)[0] for p in points for lv in p.bytes if p.xy(lv)]
    ys = [p.xy()[1] for p in points]
    x0 = min([1e-2] + [x / 3 for x in xs])
    x1 = max([1e4] + [x * 3 for x in xs])
    lowest = min(m.theoretical for m in model.memory) * x0 / 1e12
    y0 = max(min([lowest] + [y / 3 for y in ys]), 1e-4)
    return (x0, x1), (y0, top / 1e12 * 3)


def _group_roofs(ceilings) -> list[dict]:
    """Merge roofs with the same peak into one labelled roof ("mfma fp16/bf16 · valu fp32")."""
    groups: dict[int, dict] = {}
    for c in ceilings:
        pipe, dtype = split_flop_key(c.name)
        g = groups.setdefault(
            round(c.theoretical / 1e9), {"pipes": {}, "theoretical": c.theoretical, "measured": [], "dtypes": set()}
        )
        g["pipes"].setdefault(pipe, []).append(dtype)
        g["dtypes"].add(dtype)
        if c.achievable:
            g["measured"].append((f"{pipe} {dtype}", c.ceiling, c.fill))
    for g in groups.values():
        g["name"] = " · ".join(f"{p} {'/'.join(d)}" for p, d in g["pipes"].items())
        g["measured"].sort(key=lambda x: -x[1])
    return list(groups.values())


def _roof_for(roofs: list[dict], dtype: str | None) -> dict | None:
    """The highest roof that serves ``dtype`` (else the highest roof)."""
    match = [r for r in roofs if dtype in r["dtypes"]]
    return max(match or roofs, key=lambda r: r["theoretical"]) if roofs else None


def _compute_lines(roofs: list[dict], arch_key: str | None, color=None, cmap=None) -> list[tuple]:
    """(TFLOP/s, label, colour, linestyle, width) for each roof: theoretical dashed, achievable solid."""
    out = []
    prefix = f"{arch_key} " if arch_key else ""
    for i, c in enumerate(roofs):
        shade = color or cmap(0.55 + 0.4 * (i + 1) / (len(roofs) + 1))
        y = c["theoretical"] / 1e12
        out.append((y, f"{prefix}{c['name']}: peak {y:,.1f}", shade, "--", 1.0))
        for dtype, meas, fill in c["measured"][:2]:
            bench = f" (benchmark {meas * fill / 1e12:,.1f} at {fill:.2f} fill)" if fill < 1.0 else ""
            out.append((meas / 1e12, f"{prefix}{dtype}: achievable {meas / 1e12:,.1f}{bench}", shade, "-", 1.3))
    return out


def _draw_compute_lines(ax, lines: list[tuple], xlim) -> list[layout.Box]:
    """Flat roofs labelled at the right end; label heights are spread so no two collide."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    for y, _, color, ls, lw in lines:
        ax.axhline(y, ls=ls, lw=lw, color=color, alpha=0.85, zorder=1)
    if not lines:
        return []
    tr = ax.transData
    ys = layout.spread([tr.transform((xlim[1], y))[1] + 2 for y, *_ in lines], 8 * fig.dpi / 72 * 1.2)
    inv = tr.inverted()
    boxes = []
    for (_, text, color, _, _), yp in zip(lines, ys, strict=True):
        t = ax.text(xlim[1] / 1.12, inv.transform((0, yp))[1], text, ha="right", va="bottom", fontsize=7.5, color=color,
                    zorder=5, bbox={"fc": "white", "ec": "none", "alpha": 0.75, "pad": 0.5})
        boxes.append(layout.text_box(renderer, t))
    return boxes


def _marker_box(ax, p: Point) -> layout.Box:
    x, y = ax.transData.transform(p.xy())
    return (x - 6, y - 6, x + 6, y + 6)


def _draw_memory_roofs(
    ax, model: RooflineModel, ridge_roof: dict | None, ai, top: float, arch_key: str | None, obstacles,
    levels: set[str] | None = None, label: bool = True,
) -> list:
    """Slanted roofs per level, theoretical dashed and achievable solid, each labelled along its
    line where the label hits no other; ridge points (circles) against ``ridge_roof``. With
    ``label=False`` returns (colour, linestyle, text) legend entries instead of label segments."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    boxes: list = []
    peak = ridge_roof["theoretical"] if ridge_roof else top
    for m in sorted(model.memory, key=lambda m: -m.theoretical):
        if levels is not None and m.name not in levels:
            continue
        color = style.LEVEL_COLORS.get(m.name, "k")
        ax.plot(ai, np.minimum(ai * m.theoretical, top) / 1e12, ls="--", lw=1.1, color=color, zorder=2)
        if m.achievable:
            ax.plot(ai, np.minimum(ai * m.achievable, top) / 1e12, ls="-", lw=1.8, color=color, zorder=2)
        r = peak / m.theoretical
        ax.plot([r], [peak / 1e12], marker="o", ms=5, mfc="white", color=color, zorder=4)
        bw = f"{m.theoretical / 1e12:.3g} TB/s" + (f" ({m.achievable / 1e12:.3g} achievable)" if m.achievable else "")
        text = f"{(arch_key + ' ') if arch_key else ''}{m.name}: {bw}, ridge {r:,.0f} F/B"
        if label:
            boxes += _label_along(ax, renderer, text, m.theoretical, color, boxes + list(obstacles), top)
        else:
            boxes.append((color, "--", text))
    return boxes


def _label_along(ax, renderer, text: str, bw: float, color, segs: list, top: float) -> list:
    """A label on the slanted line y = bw * x, at the first x where it overlaps no other label
    or marker. Returns its segment (for later labels to avoid)."""
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    tr = ax.transData
    axbox = ax.get_window_extent(renderer)
    p0, p1 = tr.transform((1.0, bw / 1e12)), tr.transform((10.0, bw * 10 / 1e12))
    angle = float(np.arctan2(p1[1] - p0[1], p1[0] - p0[0]))
    probe = ax.text(0, 0, text, fontsize=7)
    b = layout.text_box(renderer, probe)
    probe.remove()
    width, height = b[2] - b[0], b[3] - b[1]
    direction = np.array([np.cos(angle), np.sin(angle)])
    for x in np.logspace(np.log10(x0) + 0.1, np.log10(min(x1, top / bw)) - 0.1, 30):
        y = x * bw / 1e12
        if y < y0 or y > y1:
            continue
        start = np.asarray(tr.transform((x, y)))
        end = start + direction * width
        if end[0] > axbox.x1 - 4 or end[1] > axbox.y1 - 4 or start[1] < axbox.y0 + 2 or start[0] < axbox.x0 + 2:
            continue
        seg = layout.Segment(tuple(start), tuple(end), height)
        if any(layout.seg_hits(seg, o) for o in segs):
            continue
        ax.text(x, y * 1.06, text, rotation=np.degrees(angle), rotation_mode="anchor", ha="left", va="bottom",
                fontsize=7, color=color, zorder=5)
        return [seg]
    return []


def _draw_other_arch(ax, om: RooflineModel, ridge_dtype: str | None, ai, color) -> tuple[str, str, str]:
    """Another GPU on the same axes: its device-memory roof (dash-dot, in the GPU's colour) up to
    its compute roof for the dtype. Returns its legend entry."""
    roof = _roof_for(_group_roofs([c for c in om.compute_filled if not c.sparse]), ridge_dtype)
    mem = next(m for m in om.memory if m.name == om.arch.memory_level)
    top = roof["theoretical"] if roof else 1e18
    ax.plot(ai, np.minimum(ai * mem.theoretical, top) / 1e12, ls="-.", lw=1.4, color=color, zorder=2)
    bw = f"{mem.theoretical / 1e12:.3g} TB/s" + (f" ({mem.achievable / 1e12:.3g} achievable)" if mem.achievable else "")
    return color, "-.", f"{om.arch.key} {mem.name}: {bw}, ridge {top / mem.theoretical:,.0f} F/B"


def _draw_points(ax, points: list[Point], arrows: list[Arrow], all_levels: bool, multi: bool, arch_order=()) -> None:
    arch_order = list(arch_order)
    for p in points:
        x, y = p.xy()
        filled = p.kind == PREDICTED
        color = style.bound_color(p.bound)
        mk = style.family_marker(p.kernel)
        edge = color if not filled else "black"
        if multi:  # the edge says which GPU
            edge = style.arch_color(arch_order.index(p.arch)) if p.arch in arch_order else edge
        ax.plot([x], [y], marker=mk, ms=8 if not multi else 9, ls="", mec=edge, mew=1.6 if (not filled or multi) else 0.5,
                mfc=color if filled else "white", zorder=7)
        if all_levels:
            for lv in p.bytes:
                if lv == p.level or lv not in style.LEVEL_COLORS or not p.xy(lv):
                    continue
                ax.plot(*p.xy(lv), marker=style.LEVEL_MARKERS[lv], ms=4, ls="", color=style.LEVEL_COLORS[lv], alpha=0.45, zorder=3)
    for a in arrows:
        xy = a.xy()
        if xy:
            ax.annotate("", xy=xy[1], xytext=xy[0], arrowprops={"arrowstyle": "->", "color": "0.3", "lw": 1.0}, zorder=6)
    if multi:  # one case on several archs: join its markers in arch order
        by_case: dict[str, list[Point]] = {}
        for p in points:
            by_case.setdefault(p.info.get("case", p.label), []).append(p)
        for pts in by_case.values():
            for a, b in zip(pts, pts[1:], strict=False):
                ax.annotate("", xy=b.xy(), xytext=a.xy(), zorder=6,
                            arrowprops={"arrowstyle": "->", "color": "0.45", "lw": 0.8, "ls": ":"})


def _label_points(ax, points: list[Point], obstacles) -> list[tuple[int, Point]]:
    """Text labels with leader lines for a few points; numbers and a key for many. Returns the
    (number, point) pairs of the key."""
    labelled = [p for p in points if not (p.kind == PREDICTED and any(q.kind == MEASURED and q.label == p.label for q in points))]
    multi = len({p.arch for p in points}) > 1
    if multi:  # one label per case, on its first arch's marker
        seen, first = set(), []
        for p in labelled:
            key = p.info.get("case", p.label)
            if key not in seen:
                seen.add(key)
                first.append(p)
        labelled = first
    if len(labelled) <= MAX_TEXT_LABELS and sum(len(p.label) for p in labelled) <= MAX_LABEL_CHARS:
        items = [(*p.xy(), p.label) for p in labelled]
        failed = layout.place_labels(ax, items, obstacles)
        if not failed:
            return []
        keyed = [(n, labelled[i]) for n, i in enumerate(failed, 1)]
    else:
        keyed = list(enumerate(labelled, 1))
    layout.place_labels(ax, [(*p.xy(), str(n)) for n, p in keyed], obstacles, fontsize=7, color="0.1")
    return keyed


def save(fig, path: str) -> None:
    """Save atomically in the format the extension asks for (png, svg, pdf)."""
    import io

    from perfmodel.errors import InputError
    from perfmodel.output import write_atomic

    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if ext not in ("png", "svg", "pdf"):
        raise InputError(f"unsupported plot format '.{ext}'; expected .png, .svg, .pdf or .html", key="-o")
    buf = io.BytesIO()
    fig.savefig(buf, format=ext)
    write_atomic(path, buf.getvalue())
