"""`perfmodel predict`: time, bound and headroom of kernels from their shapes."""

from __future__ import annotations

import click

from perfmodel.cli.options import emit, format_option, output_option, output_path_callback


@click.command("predict", context_settings={"ignore_unknown_options": False})
@click.argument("kernel", required=False)
@click.argument("params", nargs=-1)
@click.option("--arch", "archs", multiple=True, help="Arch key or archspec path; repeat (or comma-separate) for a side-by-side comparison. [default: mi300x]")
@click.option("--dtype", default=None, help="Data type (fp64 fp32 tf32 fp16 bf16 fp8 int8 ...); default per kernel.")
@click.option("--cases", "cases_file", type=click.Path(dir_okay=False), default=None, help="A YAML list or JSON lines of cases.")
@click.option("--suite", is_flag=True, help="Run the built-in suite of realistic cases (kernels/suite.yaml).")
@click.option("--warm", is_flag=True, help="Steady state of a repeated kernel: inputs that fit a cache are served from it (default: one cold run).")
@click.option("--terms", is_flag=True, help="Table/csv/md: add every time term and the bytes per level.")
@click.option("-o", "plot", default=None, callback=output_path_callback, help="Also place the cases on the roofline of the first arch (.png/.svg/.pdf).")
@format_option
@output_option
def predict_command(kernel, params, archs, dtype, cases_file, suite, warm, terms, plot, fmt, output) -> None:
    """Predict time, bound class and headroom from a kernel's shape.

    \b
    perfmodel predict gemm m=4096 n=4096 k=4096 --arch mi300x --dtype bf16
    perfmodel predict attention batch=1 heads=32 seq_q=8192 head_dim=128 causal=true --arch mi300x,mi355x
    perfmodel predict --cases kernels/suite.yaml --format jsonl
    perfmodel predict --suite --arch mi300x -o suite.png
    """
    from perfmodel.arch import DEFAULT_ARCH
    from perfmodel.cases import load_case_file, parse_kv
    from perfmodel.errors import InputError
    from perfmodel.prediction import evaluate, normalize_all
    from perfmodel.tables import render_predictions

    arch_list = [a for spec in archs for a in spec.split(",") if a] or None
    if suite:
        from perfmodel.arch import data_path

        if cases_file:
            raise InputError("give either --suite or --cases FILE, not both", key="--suite")
        cases_file = str(data_path("kernels", "suite.yaml"))
    if cases_file:
        if kernel or params:
            raise InputError("give either --cases FILE or KERNEL key=value ..., not both", key="--cases")
        raws = load_case_file(cases_file)
        source = cases_file
    else:
        if not kernel:
            raise InputError("missing KERNEL (e.g. gemm) or --cases FILE; see perfmodel predict --help", key="kernel")
        raw = parse_kv(list(params))
        raw.setdefault("kernel", kernel)
        raws, source = [raw], None
    preds = evaluate(normalize_all(raws, arch_list or [DEFAULT_ARCH], dtype, source=source), warm=warm)
    if plot:
        from perfmodel.plots.points import prediction_points
        from perfmodel.plots.roofline_plot import plot_roofline
        from perfmodel.roofline import roofline

        first = preds[0].arch if preds else DEFAULT_ARCH
        model = roofline(next((c for c in (arch_list or [DEFAULT_ARCH]) if c.endswith(first) or first in c), first))
        plot_roofline(model, plot, points=prediction_points(p for p in preds if p.arch == model.arch.key))
    emit(render_predictions([p.row() for p in preds], fmt, detail=terms), output)
