"""The plotting functions of the Python API: ``perfmodel.plot_roofline``, ``plot_times``,
``plot_terms``, ``plot_bandwidth``, ``plot_bound_map``, ``plot_trace``.

Each returns a matplotlib ``Figure`` that Jupyter shows once as the cell's output (the figure
is detached from pyplot, so it is not drawn a second time at the end of the cell) and that a
script saves with ``fig.savefig(...)`` or by passing ``path=``. ``path="x.html"`` writes the
interactive roofline instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from perfmodel.arch import DEFAULT_ARCH, Arch


def _detach(fig):
    import matplotlib.pyplot as plt

    plt.close(fig)
    return fig


def _points_of(data, arch_hint):
    """(points, arrows, arch keys) of predictions, a Validation, or nothing."""
    from perfmodel.plots.points import measured_points, prediction_points
    from perfmodel.prediction import Prediction

    if data is None:
        return [], [], []
    if hasattr(data, "rows") and hasattr(data, "arch") and hasattr(data, "per_dispatch"):  # a Validation
        pts, arrows = measured_points(data.path, data.arch, validation=data, per_dispatch=data.per_dispatch)
        return pts, arrows, [data.arch]
    preds = [data] if isinstance(data, Prediction) else list(data)
    return prediction_points(preds), [], list(dict.fromkeys(p.arch for p in preds))


def plot_roofline(
    data=None,
    arch: str | Arch | Sequence[str | Arch] | None = None,
    *,
    dtype: str | None = None,
    path: str | None = None,
    all_levels: bool = False,
    title: str | None = None,
    subtitle: str | None = None,
):
    """The hierarchical roofline of ``arch`` with ``data`` on it.

    ``data``: what `perfmodel.predict` returns (cases; several archs share one plot, each case's
    markers joined), a `perfmodel.validate` result (measured kernels, arrows from their
    predictions), or None (ceilings only). ``dtype`` picks the compute roof for the ridge points.
    Kernels without FLOPs are not on a roofline: see `plot_bandwidth`.
    """
    from perfmodel.plots.bandwidth import zero_flop
    from perfmodel.roofline import roofline

    points, arrows, archs = _points_of(data, arch)
    if subtitle is None:
        subtitle = _describe(data, points)
    if arch is not None:
        archs = [arch] if isinstance(arch, (str, Arch)) else list(arch)
    models = [roofline(a) for a in (archs or [DEFAULT_ARCH])]
    if path and path.lower().endswith(".html"):
        from perfmodel.plots import write_roofline

        write_roofline(models[0], path, points, arrows, title=title, subtitle=subtitle, ridge_dtype=dtype, others=models[1:])
        return None
    from perfmodel.plots.roofline_plot import plot_roofline as draw

    flat = zero_flop(points)
    notes = []
    if flat:
        names = ", ".join(dict.fromkeys(p.label for p in flat))
        notes.append(f"not on the roofline (no FLOPs or no time; see plot_bandwidth): {names}")
    fig = draw(
        models[0], path, [p for p in points if p not in flat], title, arrows=arrows, ridge_dtype=dtype,
        all_levels=all_levels, others=models[1:], subtitle=subtitle, notes=notes,
    )
    return _detach(fig)


def _describe(data, points) -> str | None:
    """A line under the title saying what is drawn."""
    if data is None:
        return None
    if hasattr(data, "per_dispatch"):
        n = sum(1 for p in points if p.kind == "measured")
        return f"perfmodel.validate({str(data.path)!r}): {n} kernel{'s' if n != 1 else ''}, measured (hollow) vs predicted (filled)"
    archs = list(dict.fromkeys(p.arch for p in points))
    n = len(points) // max(1, len(archs))
    return f"perfmodel.predict: {n} case{'s' if n != 1 else ''} on {', '.join(archs)}; cold single run unless warm=True"


def _describe_preds(preds) -> str:
    archs = list(dict.fromkeys(p.arch for p in preds))
    n = len(preds) // max(1, len(archs))
    return f"perfmodel.predict: {n} case{'s' if n != 1 else ''} on {', '.join(archs)}"


def plot_bandwidth(data, arch: str | Arch | None = None, *, path: str | None = None, title: str | None = None):
    """Achieved bandwidth per memory level against the level ceilings (for kernels without FLOPs,
    or any kernel: every point of ``data`` is drawn)."""
    from perfmodel.plots.bandwidth import plot_bandwidth as draw
    from perfmodel.roofline import roofline

    points, _, archs = _points_of(data, arch)
    model = roofline(arch or (archs[0] if archs else DEFAULT_ARCH))
    others = [roofline(a) for a in archs if a != model.arch.key] if arch is None else []
    return _detach(draw(model, points, path, title, subtitle=_describe(data, points), others=others))


def plot_times(preds: Iterable, *, path: str | None = None, title: str | None = None):
    """Predicted time per case, one bar per GPU (``perfmodel.predict(..., arch=[a, b])``)."""
    from perfmodel.plots.charts import plot_times as draw

    preds = list(preds)
    return _detach(draw(preds, path, title, subtitle=_describe_preds(preds)))


def plot_terms(preds: Iterable, *, path: str | None = None, title: str | None = None):
    """Each case's time terms as stacked bars, the predicted time marked."""
    from perfmodel.plots.charts import plot_terms as draw

    preds = list(preds)
    return _detach(draw(preds, path, title, subtitle=_describe_preds(preds)))


def plot_trace(reports, *, path: str | None = None, title: str | None = None):
    """GPU time per kernel family of a torch.profiler trace: measured, and predicted on the GPU of
    each report (`perfmodel.validate(trace, arch=...)`; one report or several of the same trace)."""
    from perfmodel.plots.trace_chart import plot_trace as draw

    reports = [reports] if hasattr(reports, "rows") else list(reports)
    return _detach(draw(reports, path, title))


def plot_bound_map(sweep, x, y, *, xlabel: str = "", ylabel: str = "", title: str | None = None, path: str | None = None):
    """A 2-D map of bound classes from `perfmodel.sweep` over ``y`` (rows) x ``x`` (columns),
    coloured as on the roofline (compute red, memory levels in their roof's colour, latency grey),
    the legend beside the map so no cell is hidden."""
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    from perfmodel.plots import style
    from perfmodel.plots.roofline_plot import new_figure, save

    bound = np.asarray(sweep.bound)
    if bound.shape != (len(y), len(x)):
        raise ValueError(f"sweep.bound has shape {bound.shape}; expected (len(y), len(x)) = ({len(y)}, {len(x)})")
    classes = sorted(set(bound.ravel().tolist()))
    codes = np.vectorize(classes.index)(bound)
    fig = new_figure(9, 5.5)
    ax = fig.add_axes([0.1, 0.14, 0.62, 0.74])
    cmap = ListedColormap([style.bound_color(c) for c in classes])
    ax.imshow(codes, origin="lower", aspect="auto", cmap=cmap, vmin=-0.5, vmax=len(classes) - 0.5, interpolation="nearest")
    ax.set_xticks(range(len(x)), [f"{v:g}" for v in x], rotation=90)
    ax.set_yticks(range(len(y)), [f"{v:g}" for v in y])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title or "bound class", loc="left")
    ax.legend([Patch(fc=style.bound_color(c)) for c in classes], classes, loc="upper left", bbox_to_anchor=(1.02, 1),
              frameon=False, title="bound class", fontsize=9)
    if path:
        save(fig, path)
    return _detach(fig)
