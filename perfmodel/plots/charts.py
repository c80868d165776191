"""Comparison charts: a case's time across GPUs (grouped bars) and its time terms (stacked).

Both take `Prediction` records (what `perfmodel.predict` returns) and draw horizontal bars,
one row per case, so long case names stay readable and a whole suite fits on one slide.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfmodel.plots import style
from perfmodel.prediction import Prediction


def case_label(p: Prediction, width: int = 34) -> str:
    """A short name for a case: its id, else the kernel and its first shape keys."""
    if p.id:
        return p.id
    text = p.kernel + " " + " ".join(f"{k}={v}" for k, v in list(p.shape.items())[:4])
    return text if len(text) <= width else text[: width - 1] + "~"


def _cases(preds: Sequence[Prediction]) -> tuple[list[str], list[str]]:
    labels = list(dict.fromkeys(case_label(p) for p in preds))
    archs = list(dict.fromkeys(p.arch for p in preds))
    return labels, archs


def _title(fig, title: str, subtitle: str | None, left: float, height: float) -> None:
    fig.text(left, 1 - 0.25 / height, title, fontsize=13, ha="left", va="top")
    if subtitle:
        fig.text(left, 1 - 0.55 / height, subtitle, fontsize=8, color="0.35", ha="left", va="top")


def _axes(fig, left: float, width: float, height: float):
    """Axes with fixed margins in inches: 1 in on top for the titles, 0.7 in below for the x axis."""
    bottom, top = 0.7 / height, 1.0 / height
    return fig.add_axes([left, bottom, width, 1 - bottom - top])


def fmt_us(us: float) -> str:
    return f"{us:,.0f} us" if us >= 100 else f"{us:.3g} us"


def plot_times(preds: Sequence[Prediction], path: str | None = None, title: str | None = None, subtitle: str | None = None):
    """Predicted time per case, one bar per GPU (grouped), log scale when times span > 30x;
    each bar is labelled with its time and bound class, and a whisker spans its error band
    (`Prediction.time_band_us`: where about 80 % of published kernels of the family measured)."""
    from perfmodel.plots.roofline_plot import new_figure, save

    labels, archs = _cases(preds)
    by = {(case_label(p), p.arch): p for p in preds}
    n, k = len(labels), len(archs)
    height = min(max(3.2, 0.22 * n * max(k, 1.5) + 1.7), 30)
    fig = new_figure(12, height)
    ax = _axes(fig, 0.22, 0.62, height)
    bar = 0.8 / k
    times = [t for p in preds if p.time_us > 0 for t in (p.time_us, *p.time_band_us)]
    log = bool(times) and max(times) / min(times) > 30
    for j, a in enumerate(archs):
        ys, xs, bands, texts = [], [], [], []
        for i, lab in enumerate(labels):
            p = by.get((lab, a))
            if p is None:
                continue
            y = i - 0.4 + bar * (j + 0.5)
            ys.append(y)
            xs.append(p.time_us)
            bands.append(p.time_band_us)
            texts.append(f" {fmt_us(p.time_us)}  {p.bound}")
        ax.barh(ys, xs, bar * 0.9, color=style.arch_color(j), label=a, zorder=2)
        ax.hlines(ys, [b[0] for b in bands], [b[1] for b in bands], color="0.25", lw=0.9, zorder=3)
        ax.plot([b[0] for b in bands] + [b[1] for b in bands], ys + ys, "|", color="0.25", ms=4, zorder=3)
        for y, hi, t in zip(ys, [max(x, b[1]) for x, b in zip(xs, bands, strict=True)], texts, strict=True):
            ax.text(hi, y, t, va="center", ha="left", fontsize=6.5 if k > 1 else 7.5, color="0.2")
    ax.plot([], [], "|-", color="0.25", lw=0.9, ms=4, label="likely range (80 % of\npublished kernels)")
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    ax.set_xlim(lo, hi * (4 if log else 1.35))
    ax.set_xlabel("predicted time (us)" + (", log scale" if log else ""))
    ax.grid(True, axis="x", ls=":", alpha=0.6, zorder=0)
    handles, names = ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda i: names[i].startswith("likely"))  # the GPUs, then the whisker
    ax.legend([handles[i] for i in order], [names[i] for i in order], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8,
              frameon=False, title="GPU")
    _title(fig, title or "Predicted time per case" + (f" on {', '.join(archs)}" if k > 1 else f" on {archs[0]}"), subtitle, 0.22, height)
    if path:
        save(fig, path)
    return fig


def _term_order(t: str) -> tuple:
    from perfmodel.vocab import LEVELS, split_term

    kind, key = split_term(t)
    if kind == "compute":
        return (0, key)
    if kind == "memory":
        return (1, LEVELS.index(key) if key in LEVELS else 99, key)
    return (2, t)


def plot_terms(preds: Sequence[Prediction], path: str | None = None, title: str | None = None, subtitle: str | None = None):
    """The time terms of each case as stacked bars (one row per case and GPU).

    The model takes launch + the largest term, not the sum: the segments show each term as if
    it ran alone, and a black tick marks the predicted time, so the bar says which term binds
    and how much slack the others leave. When the predicted times span more than 10x, each row
    is scaled by its predicted time (the tick at 1) so small cases stay readable. Each row starts
    with its binding term, so the tick sits just after the first segment (launch makes the gap)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from perfmodel.plots.roofline_plot import new_figure, save

    multi = len({p.arch for p in preds}) > 1
    rows = [(case_label(p) + (f" · {p.arch}" if multi else ""), p) for p in preds]
    terms = sorted({t for _, p in rows for t, v in p.terms_s.items() if v > 0}, key=_term_order)
    times = [p.time_us for p in preds if p.time_us > 0]
    relative = bool(times) and max(times) / min(times) > 10
    n = len(rows)
    # tall enough for the rows and for the legend beside them (one line per term, its title, the tick)
    height = min(max(3.2, 0.3 * n + 2.0, 0.19 * (len(terms) + 2) + 1.5), 30)
    fig = new_figure(12, height)
    ax = _axes(fig, 0.22, 0.52, height)
    for i, (_, p) in enumerate(rows):
        scale = 1.0 / p.time_us if relative and p.time_us > 0 else 1.0
        left = 0.0
        body = {t: v for t, v in p.terms_us.items() if t != "launch"}
        binding = max(body, key=body.get) if body else None
        for t in [binding, *[t for t in terms if t != binding]] if binding else terms:  # the binding term first
            v = p.terms_us.get(t, 0.0) * scale
            if v <= 0:
                continue
            ax.barh(i, v, 0.7, left=left, color=style.term_color(t), edgecolor="white", lw=0.5, zorder=2,
                    hatch=style.term_hatch(t))
            left += v
        tick = p.time_us * scale
        ax.plot([tick, tick], [i - 0.42, i + 0.42], color="black", lw=2, zorder=3)
        ax.text(left, i, f"  {fmt_us(p.time_us)}, {p.bound}", va="center", fontsize=7, color="0.2")
    ax.set_yticks(range(n), [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    lo, hi = ax.get_xlim()
    ax.set_xlim(0, hi * 1.3)
    ax.set_xlabel(
        "each term's time / the predicted time (terms overlap; the model takes launch + fill + the largest)"
        if relative
        else "time of each term if it ran alone (us); the terms overlap"
    )
    ax.grid(True, axis="x", ls=":", alpha=0.6, zorder=0)
    handles = [Patch(fc=style.term_color(t), hatch=style.term_hatch(t)) for t in terms]
    handles.append(Line2D([], [], color="black", lw=2))
    ax.legend(handles, terms + ["predicted time"], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7.5,
              frameon=False, title="time term")
    archs = list(dict.fromkeys(p.arch for p in preds))
    _title(fig, title or f"Time terms per case on {', '.join(archs)}", subtitle, 0.22, height)
    if path:
        save(fig, path)
    return fig
