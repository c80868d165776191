"""`perfmodel roofline`: the ceilings table and the hierarchical roofline plot."""

from __future__ import annotations

import click

from perfmodel.cli.options import emit, format_option, output_option


@click.command("roofline")
@click.option("--arch", "arch", default="mi300x", show_default=True, help="Arch key or path to an archspec YAML.")
@click.option("--dtype", "dtypes", multiple=True, help="Restrict compute roofs to these dtypes (repeatable).")
@click.option("--cases", "cases", type=click.Path(dir_okay=False), default=None, help="Place these cases (YAML list or JSON lines) on the plot.")
@click.option("--measured", "measured", type=click.Path(), default=None, help="A rocprof workload: draw its kernels' measured points.")
@click.option("-o", "plot", default=None, help="Write the plot to this file (.png, .svg or .pdf).")
@click.option("--sparse", is_flag=True, help="Also list sparse matrix peaks in the table.")
@format_option
@output_option
def roofline_command(arch, dtypes, cases, measured, plot, sparse, fmt, output) -> None:
    """Hierarchical roofline of a GPU: a table of ceilings (theoretical and measured, with
    ridge points) and, with -o, a log-log plot with one roof per memory level and per pipe/dtype.
    """
    from perfmodel.output import render
    from perfmodel.roofline import roofline

    model = roofline(arch, dtypes=list(dtypes) or None, sparse=sparse)
    points = []
    if cases:
        from perfmodel.cases import load_case_file
        from perfmodel.prediction import evaluate, normalize_all

        rows = evaluate(normalize_all(load_case_file(cases), [model.arch.path], source=cases))
        points = [
            {"label": r.get("id") or r["kernel"], "flops": r["flops"], "bytes": r["bytes"], "time_s": r["time_us"] * 1e-6, "kind": "predicted"}
            for r in rows
        ]
    arrows = []
    if measured:
        from perfmodel.cli.measured_points import measured_points

        mpoints, arrows = measured_points(measured, model.arch)
        points += mpoints
    if plot:
        from perfmodel.plots.roofline_plot import plot_roofline

        plot_roofline(model, plot, points=points, arrows=arrows)
    a = model.arch
    rows = model.table()
    if fmt == "table":  # full source texts are in json/csv/md; keep the terminal table narrow
        rows = [{k: v for k, v in r.items() if k != "source_text"} for r in rows]
    text = render(rows, fmt, title=f"{a.name} ({a.key}): roofline ceilings (TFLOP/s, TB/s)")
    if fmt in ("table", "md"):
        ridges = model.ridge_points()
        mem = a.memory_level
        ridges = [r for r in ridges if r["level"] == mem]
        text += "\n" + render(ridges, fmt, title=f"ridge points against {mem} (FLOP per byte)")
        if plot:
            text += f"\nplot written to {plot}\n"
    emit(text, output)
