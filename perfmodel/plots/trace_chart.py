"""A torch.profiler trace against the model: GPU time per kernel family, measured and predicted.

One row per family (the case's model family where the kernel was identified, else the family its
name says; the collectives as one), largest measured time first. The grey bar is the time the trace measured: solid for
the kernels the model predicts, hatched for the rest. Beside it, one bar per report: the model's
time for the identified kernels on that report's GPU (the same trace predicted on another GPU is
a what-if). Only identified kernels have a predicted bar, so solid grey and colour compare like
with like.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfmodel.plots import style
from perfmodel.plots.charts import _axes, _title, fmt_us


def family_times(rep) -> dict[str, dict[str, float]]:
    """Per family: measured time of its identified and other kernels, and the model's time. The
    collective models share one row, "collective", the family the kernel names give RCCL/NCCL."""
    from perfmodel.models.collectives import KINDS

    out: dict[str, dict[str, float]] = {}
    for r in rep.rows:
        fam = r.get("kernel") or (r["family"] if r["family"] != "-" else "unknown")
        fam = "collective" if fam in KINDS else fam
        d = out.setdefault(fam, {"identified": 0.0, "other": 0.0, "predicted": 0.0})
        if r.get("predicted_us") is not None:
            d["identified"] += r["measured_total_us"]
            d["predicted"] += r["predicted_us"] * r["calls"]
        else:
            d["other"] += r["measured_total_us"]
    return out


def plot_trace(reports: Sequence, path: str | None = None, title: str | None = None, top: int = 12):
    """Measured and predicted GPU time per kernel family of one trace (reports of the same trace,
    one per GPU it was predicted on)."""
    from matplotlib.ticker import FuncFormatter

    from perfmodel.errors import InputError
    from perfmodel.plots.roofline_plot import new_figure, save

    if not reports:
        raise InputError("no trace report to plot", key="reports")
    if len({r.path for r in reports}) > 1:
        raise InputError("the reports are of different traces; plot one trace at a time", key="reports")
    base = family_times(reports[0])
    fams = sorted(base, key=lambda f: -(base[f]["identified"] + base[f]["other"]))[:top]
    per = [family_times(r) for r in reports]
    recorded = reports[0].recorded_on or reports[0].arch
    k = len(reports) + 1
    height = min(max(3.4, 0.2 * len(fams) * k + 1.9), 30)
    fig = new_figure(12, height)
    ax = _axes(fig, 0.12, 0.64, height)
    bar = 0.8 / k
    ys = [i - 0.4 + bar * 0.5 for i in range(len(fams))]
    ident = [base[f]["identified"] for f in fams]
    other = [base[f]["other"] for f in fams]
    ax.barh(ys, ident, bar * 0.9, color="0.55", label=f"measured on {recorded}", zorder=2)
    ax.barh(ys, other, bar * 0.9, left=ident, color="0.85", hatch="///", edgecolor="0.6", lw=0,
            label="measured, not predicted", zorder=2)
    for y, a, b in zip(ys, ident, other, strict=True):
        ax.text(a + b, y, f" {fmt_us(a + b)}", va="center", ha="left", fontsize=6.5, color="0.2")
    for j, (rep, ft) in enumerate(zip(reports, per, strict=True)):
        yj = [i - 0.4 + bar * (j + 1.5) for i in range(len(fams))]
        xs = [ft.get(f, {}).get("predicted", 0.0) for f in fams]
        ax.barh(yj, xs, bar * 0.9, color=style.arch_color(j), label=f"predicted on {rep.arch}", zorder=2)
        for y, x, f in zip(yj, xs, fams, strict=True):
            if x > 0:
                m = base[f]["identified"]
                ratio = f"  (x {x / m:.2g} of measured)" if m > 0 else ""
                ax.text(x, y, f" {fmt_us(x)}{ratio}", va="center", ha="left", fontsize=6.5, color="0.2")
    ax.set_yticks(range(len(fams)), fams, fontsize=8)
    ax.invert_yaxis()
    # a linear axis: the chart answers where the time goes, and a log axis would shrink the
    # hatched (unpredicted) end of a stacked bar out of proportion
    lo, hi = ax.get_xlim()
    ax.set_xlim(0, hi * 1.3)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("GPU time (us), summed over the trace")
    ax.grid(True, axis="x", ls=":", alpha=0.6, zorder=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7.5, frameon=False)
    s = reports[0].summary()
    sub = (f"{s['kernels']} kernels, {reports[0].gpu_time_us:,.0f} us of GPU time; "
           f"{reports[0].identified_share:.0%} of it identified with a case")
    _title(fig, title or f"Trace against the model: {reports[0].path.rsplit('/', 1)[-1]}", sub, 0.12, height)
    if path:
        save(fig, path)
    return fig
