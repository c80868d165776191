"""Whole-model plots: time per layer stacked by kernel family (one panel per arch), and the
model's distinct ops on the roofline. matplotlib is imported here only."""

from __future__ import annotations

KERNEL_COLORS = {
    "gemm": "#1f77b4", "attention": "#d62728", "moe": "#9467bd", "grouped_gemm": "#8c564b", "rmsnorm": "#2ca02c",
    "layernorm": "#2ca02c", "softmax": "#bcbd22", "elementwise": "#ff7f0e", "reduction": "#7f7f7f",
    "allreduce": "#17becf", "allgather": "#17becf", "reducescatter": "#17becf", "alltoall": "#e377c2", "conv2d": "#aec7e8",
}


def plot_layers(analysis, path: str | None = None, title: str | None = None):
    """Stacked bars: time per layer (x) split by kernel family, one panel per arch."""
    from perfmodel.plots.roofline_plot import _mpl

    plt = _mpl()
    archs = analysis.archs
    fig, axes = plt.subplots(len(archs), 1, figsize=(11, 2.8 * len(archs) + 0.6), squeeze=False, sharex=True)
    kernels = list(dict.fromkeys(r["kernel"] for r in analysis.rows))
    for ax, a in zip(axes[:, 0], archs, strict=True):
        layers = analysis.layers(a)
        x = range(len(layers))
        bottom = [0.0] * len(layers)
        for k in kernels:
            vals = [ly["by_kernel"].get(k, 0.0) for ly in layers]
            if not any(vals):
                continue
            ax.bar(x, vals, bottom=bottom, color=KERNEL_COLORS.get(k), label=k, width=0.85)
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        total = analysis.total_us(a)
        ax.set_ylabel("time (us)")
        ax.set_title(f"{a}: {total / 1e3:.3g} ms in {len(layers)} layers/modules", fontsize=9, loc="left")
        ax.set_xticks(list(x))
        ax.set_xticklabels([ly["layer"].replace("layers.", "L") for ly in layers], rotation=90, fontsize=6)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=min(6, len(kernels)), loc="upper right")
    fig.suptitle(title or _title(analysis), fontsize=10)
    fig.tight_layout()
    if path:
        import io

        from perfmodel.output import write_atomic

        buf = io.BytesIO()
        fig.savefig(buf, format=path.rsplit(".", 1)[-1] if "." in path else "png", dpi=110)
        write_atomic(path, buf.getvalue())
    return fig


def roofline_points(analysis, arch: str) -> list:
    """Distinct ops of one arch as roofline points (label: op and module of the first use)."""
    from perfmodel.plots.points import Point

    seen: dict[tuple, Point] = {}
    for r in analysis.rows:
        if r["arch"] != arch or r["kernel"] in ("allreduce", "allgather", "reducescatter", "alltoall"):
            continue
        key = (r["kernel"], tuple(sorted(r["shape"].items())))
        if key not in seen:
            label = r["module"].split(".")[-1] or r["op"].split("::")[-1]
            seen[key] = Point(label, r["kernel"], r["flops"], r["bytes"], r["time_us"] * 1e-6)
    return list(seen.values())


def plot_model_roofline(analysis, arch: str, path: str | None = None):
    from perfmodel.plots.roofline_plot import plot_roofline
    from perfmodel.roofline import roofline

    return plot_roofline(roofline(arch), path, points=roofline_points(analysis, arch), title=f"{_title(analysis)} on {arch}")


def _title(analysis) -> str:
    m = analysis.meta
    if not m.get("model"):
        return "model"
    par = "".join(f" {k}={m[k]}" for k in ("tp", "ep") if m.get(k, 1) > 1)
    shape = f"batch {m.get('batch')}" + (f", {m.get('tokens')} tokens" if m.get("phase") == "prefill" else f", kv {m.get('kv_len')}")
    return f"{m['model']} {m.get('phase')} ({shape}{par})"
