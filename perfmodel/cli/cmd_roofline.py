"""`perfmodel roofline`: the ceilings table and the hierarchical roofline plot."""

from __future__ import annotations

import click

from perfmodel.cli.options import emit, format_option, output_option, output_path_callback


@click.command("roofline")
@click.option(
    "--arch",
    "arch",
    default=None,
    help="Arch key or path to an archspec YAML; a,b puts several GPUs on one plot. "
    "[default: mi300x, or the --measured workload's GPU]",
)
@click.option("--dtype", "dtypes", multiple=True, help="Restrict compute roofs to these dtypes (repeatable).")
@click.option(
    "--cases",
    "cases",
    type=click.Path(dir_okay=False),
    default=None,
    help="Place these cases (YAML list or JSON lines) on the plot.",
)
@click.option(
    "--measured",
    "measured",
    type=click.Path(),
    default=None,
    help="A rocprof workload: draw its kernels' measured points.",
)
@click.option(
    "--manifest",
    "manifest",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --measured: manifest YAML identifying kernels (see perfmodel validate --cases).",
)
@click.option(
    "--top",
    "top",
    type=click.IntRange(min=1),
    default=None,
    help="With --measured: only the N kernels with the longest time.",
)
@click.option(
    "--kernel",
    "kernel_filter",
    default=None,
    help="With --measured: only kernels whose name matches this regex.",
)
@click.option(
    "--per-kernel",
    is_flag=True,
    help="With --measured and -o: one plot per kernel (file name gets -<n> before the suffix).",
)
@click.option(
    "--points-csv",
    "points_csv",
    type=click.Path(),
    default=None,
    callback=output_path_callback,
    help="With --measured: write the plotted points (kernel, kind, level, AI, TFLOP/s) as CSV.",
)
@click.option(
    "-o",
    "plot",
    default=None,
    callback=output_path_callback,
    help="Write the plot to this file: .png, .svg, .pdf, or .html (interactive, one self-contained file).",
)
@click.option("--all-levels", is_flag=True, help="With -o: draw each point at every memory level, not only its binding one.")
@click.option("--sparse", is_flag=True, help="Also list sparse matrix peaks in the table.")
@format_option
@output_option
def roofline_command(
    arch,
    dtypes,
    cases,
    measured,
    manifest,
    top,
    kernel_filter,
    per_kernel,
    points_csv,
    plot,
    all_levels,
    sparse,
    fmt,
    output,
) -> None:
    """Hierarchical roofline of a GPU: a table of ceilings (theoretical and measured, with
    ridge points) and, with -o, a log-log plot with one roof per memory level and per pipe/dtype.
    """
    from perfmodel.arch import DEFAULT_ARCH
    from perfmodel.errors import InputError
    from perfmodel.roofline import roofline

    if (manifest or top or kernel_filter or per_kernel or points_csv) and not measured:
        raise InputError(
            "--manifest, --top, --kernel, --per-kernel and --points-csv need --measured WORKLOAD",
            key="--measured",
        )
    if per_kernel and not plot:
        raise InputError("--per-kernel needs -o PLOT", key="--per-kernel")
    if plot:
        from perfmodel.plots import plot_format

        plot_format(plot)  # a bad suffix fails before any work
    if arch is None and measured:
        from perfmodel.readers import read_workload
        from perfmodel.validate.workload_arch import pick_arch

        arch = pick_arch(read_workload(measured))[0].path
    keys = [a for a in (arch or DEFAULT_ARCH).split(",") if a]
    models = [roofline(k, dtypes=list(dtypes) or None, sparse=sparse) for k in keys]
    model = models[0]
    points, arrows = _points(model, cases, measured, top, kernel_filter, manifest, points_csv, models)
    written: list[tuple[str, str]] = []
    if plot:
        from perfmodel.plots import write_roofline

        subtitle = _what_was_run(models, dtypes, cases, measured, points)
        if per_kernel:
            written = _per_kernel_plots(model, plot, points, arrows, subtitle)
        else:
            written = write_roofline(
                model, plot, points, arrows, subtitle=subtitle, ridge_dtype=dtypes[0] if dtypes else None,
                others=models[1:], all_levels=all_levels,
            )
    text = "".join(_ceilings_text(m, fmt) for m in models)
    if fmt in ("table", "md"):
        text += "".join(f"{what} written to {path}\n" for path, what in written)
    emit(text, output)
    if output or fmt not in ("table", "md"):
        for path, what in written:
            click.echo(f"{what} written to {path}", err=True)


def _what_was_run(models, dtypes, cases, measured, points) -> str:
    """The line under a plot's title: what is on it and where it came from."""
    parts = [f"perfmodel roofline --arch {','.join(m.arch.key for m in models)}"]
    if dtypes:
        parts.append("dtype " + ", ".join(dtypes))
    if cases:
        parts.append(f"cases from {cases}")
    if measured:
        kinds = sum(1 for p in points if p.kind == "measured")
        parts.append(f"{kinds} measured kernel{'s' if kinds != 1 else ''} from {measured}")
    return " · ".join(parts)


def _points(model, cases, measured, top, kernel_filter, manifest, points_csv, models) -> tuple[list, list]:
    """The predicted cases and measured kernels to draw (and the --points-csv file)."""
    points, arrows = [], []
    if cases:
        from perfmodel.cases import load_case_file
        from perfmodel.plots.points import prediction_points
        from perfmodel.prediction import evaluate, normalize_all

        raws = load_case_file(cases)
        preds = evaluate(normalize_all(raws, [m.arch for m in models], source=cases))
        points = prediction_points(preds)
    if measured:
        from perfmodel.plots.points import measured_points, points_table
        from perfmodel.progress import status

        with status(f"validating {measured} (reading the trace, deriving counters, predicting)"):
            mpoints, arrows = measured_points(measured, model.arch, top=top, name=kernel_filter, manifest=manifest)
        points += mpoints
        if points_csv:
            from perfmodel.output import render, write_atomic

            write_atomic(points_csv, render(points_table(mpoints, model.arch), "csv"))
    return points, arrows


def _ceilings_text(model, fmt: str) -> str:
    """The ceilings table, and in table/md the ridge points against device memory."""
    from perfmodel.output import render

    a = model.arch
    rows = model.table()
    if fmt == "table":  # full source texts are in json/csv/md; keep the terminal table narrow
        rows = [{k: v for k, v in r.items() if k != "source_text"} for r in rows]
    text = render(rows, fmt, title=f"{a.name} ({a.key}): roofline ceilings (TFLOP/s, TB/s)")
    if fmt in ("table", "md"):
        mem = a.memory_level
        ridges = [r for r in model.ridge_points() if r["level"] == mem]
        text += "\n" + render(ridges, fmt, title=f"ridge points against {mem} (FLOP per byte)")
    return text


def _per_kernel_plots(model, plot: str, points: list, arrows: list, subtitle: str) -> list[tuple[str, str]]:
    """One plot per measured kernel: ``out.png`` -> ``out-1.png``, ``out-2.png``, ..."""
    from perfmodel.plots import sibling, write_roofline
    from perfmodel.plots.points import MEASURED

    kernels = list(dict.fromkeys(pt.label for pt in points if pt.kind == MEASURED))
    written = []
    for i, k in enumerate(kernels, 1):
        pts = [pt for pt in points if pt.label == k]
        arr = [a for a in arrows if a.meas.label == k]
        out = sibling(plot, str(i))
        written += write_roofline(model, out, pts, arr, title=f"{model.arch.name}: {k}", subtitle=subtitle)
    return written
