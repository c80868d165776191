"""Plots. matplotlib is imported lazily, inside the modules that draw, never here.

- `points`: the typed `Point` (a case or a measured kernel) and where it sits;
- `layout`: label placement without overlaps; `style`: colours and markers;
- `roofline_plot`: the hierarchical roofline (PNG/SVG/PDF); `html`: the same, interactive;
- `bandwidth`: kernels with no FLOPs, achieved B/s per level against the level ceilings;
- `charts`: comparisons - time per case across GPUs, the breakdown of time terms.
"""

from __future__ import annotations

from pathlib import Path

PLOT_FORMATS = ("png", "svg", "pdf", "html")


def plot_format(path: str) -> str:
    """The format a plot path asks for; an InputError for anything else (before any work)."""
    from perfmodel.errors import InputError

    ext = path.rsplit(".", 1)[-1].lower() if "." in Path(path).name else ""
    if ext not in PLOT_FORMATS:
        raise InputError(f"unsupported plot format '.{ext}'; expected .png, .svg, .pdf or .html", key="-o")
    return ext


def sibling(path: str, suffix: str) -> str:
    """``out.png`` -> ``out-<suffix>.png``."""
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{suffix}{p.suffix}"))


def write_roofline(
    model,
    path: str,
    points=(),
    arrows=(),
    *,
    title: str | None = None,
    subtitle: str | None = None,
    ridge_dtype: str | None = None,
    others=(),
    all_levels: bool = False,
) -> list[tuple[str, str]]:
    """Write the roofline (and, for kernels without FLOPs, the bandwidth chart) to ``path``.

    ``.html`` gives the interactive file; .png/.svg/.pdf a matplotlib figure. When every point
    has no FLOPs the bandwidth chart takes ``path``; when some have, it goes to
    ``<stem>-bandwidth.<ext>``. Returns (path, what) for each file written.
    """
    from perfmodel.plots.bandwidth import zero_flop

    ext = plot_format(path)
    points, arrows = list(points), list(arrows)
    flat = zero_flop(points)
    on_roof = [p for p in points if p not in flat]
    written: list[tuple[str, str]] = []
    if ext == "html":
        from perfmodel.plots.html import roofline_html, write_html

        bw_path = str(Path(sibling(path, "bandwidth")).with_suffix(".png"))
        notes = []
        if flat:
            names = ", ".join(dict.fromkeys(p.label for p in flat))
            notes.append(f"Not on the roofline (no FLOPs or no usable time), see {Path(bw_path).name}: {names}")
        write_html(path, roofline_html(model, on_roof, arrows, title, subtitle, ridge_dtype, others, notes))
        written.append((path, "interactive roofline"))
    elif on_roof or not flat:
        import matplotlib.pyplot as plt

        from perfmodel.plots.roofline_plot import plot_roofline

        notes = []
        if flat:
            names = ", ".join(dict.fromkeys(p.label for p in flat))
            notes.append(f"not on the roofline (no FLOPs or no time), see {Path(sibling(path, 'bandwidth')).name}: {names}")
        fig = plot_roofline(
            model, path, on_roof, title, arrows=arrows, ridge_dtype=ridge_dtype, all_levels=all_levels,
            others=others, subtitle=subtitle, notes=notes,
        )
        plt.close(fig)
        written.append((path, "roofline"))
        bw_path = sibling(path, "bandwidth")
    else:
        bw_path = path
    if flat:
        import matplotlib.pyplot as plt

        from perfmodel.plots.bandwidth import plot_bandwidth

        fig = plot_bandwidth(model, flat, bw_path, subtitle=subtitle, others=others)
        plt.close(fig)
        written.append((bw_path, f"bandwidth chart ({len(flat)} without FLOPs or time)"))
    return written
