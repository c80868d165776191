"""`perfmodel validate`: rocprof measurements per kernel, and the model beside them."""

from __future__ import annotations

from pathlib import Path

import click

from perfmodel.cli.options import emit, format_option, output_option, output_path_callback

SUFFIX_FORMATS = {".md": "md", ".json": "json", ".jsonl": "jsonl", ".csv": "csv", ".txt": "table"}


@click.command("validate")
@click.argument("workload", type=click.Path())
@click.option("--arch", "arch", default=None, help="Arch key or archspec path. [default: from sysinfo.csv]")
@click.option(
    "--cases",
    "manifest",
    type=click.Path(dir_okay=False),
    default=None,
    help="Manifest YAML mapping kernel-name regexes or dispatch indices to cases.",
)
@click.option("--per-dispatch", is_flag=True, help="One row per dispatch instead of per kernel.")
@click.option("--sclk", "sclk", type=float, default=None, help="Override the peak clock (MHz).")
@click.option("--cus", "cus", type=click.IntRange(min=1, max=100_000), default=None, help="Override the CU count.")
@click.option("--kernel", "kernel_filter", default=None, help="Only kernels whose name matches this regex.")
@click.option(
    "--top", "top", type=click.IntRange(min=1), default=None, help="Only the N kernels with the longest time."
)
@click.option(
    "-o",
    "report",
    type=click.Path(),
    default=None,
    callback=output_path_callback,
    help="Write the report to this file; format from the suffix (.md .json .jsonl .csv) unless --format is given.",
)
@format_option
@output_option
@click.pass_context
def validate_command(
    ctx, workload, arch, manifest, per_dispatch, sclk, cus, kernel_filter, top, report, fmt, output
) -> None:
    """Read rocprof output (file or directory) and report, per kernel: measured time, FLOPs per
    pipe, bytes per level, intensity, achieved rate against each ceiling and the measured bound;
    for identified kernels (built-in: mixbench, vcopy; or --cases manifest) the prediction, the
    residual term by term and the term that explains most of the difference.

    \b
    perfmodel validate workloads/mixbench/mi200
    perfmodel validate workloads/mixbench/mi200 --per-dispatch --format jsonl
    perfmodel validate run/ --cases manifest.yaml -o report.md
    """
    import math

    from perfmodel import traces
    from perfmodel.errors import InputError
    from perfmodel.progress import status

    if sclk is not None and not (math.isfinite(sclk) and 1 <= sclk <= 10_000):
        raise InputError(f"expected a clock between 1 and 10000 MHz, got {sclk:g}", key="--sclk")
    fmt_given = ctx.get_parameter_source("fmt") != click.core.ParameterSource.DEFAULT
    targets = [t for t in (report, output) if t] or [None]

    def fmt_for(target):
        return fmt if fmt_given or not target else SUFFIX_FORMATS.get(Path(target).suffix.lower(), fmt)

    if traces.detect(workload):  # a torch.profiler chrome trace (.json / .json.gz)
        for target in targets:
            text, n = traces.render(workload, arch=arch, manifest=manifest, fmt=fmt_for(target), top=top or 30)
            emit(text, target)
            if target and fmt_for(target) in ("table", "md"):
                click.echo(f"report written to {target} ({n} rows)", err=True)
        return
    with status(f"validating {workload} (reading the trace, deriving counters, predicting)"):
        v = _run(workload, arch, manifest, per_dispatch, sclk, cus, kernel_filter, top)
    for target in targets:  # -o and -O: each file in its own format (from its suffix)
        f = fmt_for(target)
        emit(v.render(f), target)
        if target and f in ("table", "md"):
            click.echo(f"report written to {target} ({len(v.rows)} rows)", err=True)


def _run(workload, arch, manifest, per_dispatch, sclk, cus, kernel_filter, top):
    from perfmodel.validate import validate

    return validate(
        workload,
        arch=arch,
        manifest=manifest,
        per_dispatch=per_dispatch,
        sclk_mhz=sclk,
        cus=cus,
        kernel_filter=kernel_filter,
        top=top,
    )
