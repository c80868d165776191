"""`perfmodel validate`: rocprof measurements per kernel, and the model beside them."""

from __future__ import annotations

from pathlib import Path

import click

from perfmodel.cli.options import emit, format_option, output_option, output_path_callback

SUFFIX_FORMATS = {".md": "md", ".json": "json", ".jsonl": "jsonl", ".csv": "csv", ".txt": "table"}
IMAGE_SUFFIXES = (".png", ".svg", ".pdf")  # a trace's chart (`plot_trace`)


@click.command("validate")
@click.argument("workloads", nargs=-1, required=True, type=click.Path())
@click.option("--arch", "arch", default=None, help="Arch key or archspec path (KEY@1005mhz: at a fixed core clock). [default: from sysinfo.csv]")
@click.option(
    "--cases",
    "manifest",
    type=click.Path(dir_okay=False),
    default=None,
    help="Manifest YAML mapping kernel-name regexes or dispatch indices to cases.",
)
@click.option("--per-dispatch", is_flag=True, help="One row per dispatch instead of per kernel.")
@click.option("--sclk", "sclk", type=float, default=None, help="Override the peak clock (MHz).")
@click.option(
    "--cus", "cus", type=click.IntRange(min=1, max=100_000), default=None, help="Override the CU count."
)
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
@click.option(
    "--jobs",
    "-j",
    "jobs",
    type=click.IntRange(min=0, max=1024),
    default=1,
    show_default=True,
    help="Several workloads: validate this many at once in separate processes (0: one per CPU).",
)
@click.option(
    "--keep-going",
    is_flag=True,
    help="Several workloads: report every valid one; one error line per bad one (exit status 2 if any).",
)
@click.option("--model", "model", default=None,
              help="Trace with graph-replayed decode steps (vLLM, SGLang): the model they ran, a built-in name or a "
                   "config.json; its decode step is paired with each replay's kernels by family and order.")
@click.option("--batch", "batch", type=click.IntRange(min=1), default=None, help="With --model: sequences in the batch.")
@click.option("--kv-len", "kv_len", type=click.IntRange(min=0), default=None, help="With --model: cached tokens per sequence.")
@click.option("--phase", "phase", type=click.Choice(["decode", "prefill"]), default=None,
              help="With --model: the step the replays ran.  [default: decode]")
@click.option("--tokens", "tokens", type=click.IntRange(min=1), default=None,
              help="With --model --phase prefill: prompt tokens per sequence.")
@click.option("--tp", "tp", type=click.IntRange(min=1), default=None, help="With --model: tensor-parallel ranks.  [default: 1]")
@click.option("--engine", "engine", type=click.Choice(["vllm", "eager"]), default=None,
              help="With --model: the op set of the step (as for perfmodel model).  [default: vllm]")
@format_option
@output_option
@click.pass_context
def validate_command(
    ctx,
    workloads,
    arch,
    manifest,
    per_dispatch,
    sclk,
    cus,
    kernel_filter,
    top,
    jobs,
    keep_going,
    model,
    batch,
    kv_len,
    phase,
    tokens,
    tp,
    engine,
    report,
    fmt,
    output,
) -> None:
    """Read rocprof output (file or directory) and report, per kernel: measured time, FLOPs per
    pipe, bytes per level, intensity, achieved rate against each ceiling and the measured bound;
    for identified kernels (built-in: mixbench, vcopy; or --cases manifest) the prediction, the
    residual term by term and the term that explains most of the difference.

    \b
    perfmodel validate workloads/mixbench/mi200
    perfmodel validate workloads/mixbench/mi200 --per-dispatch --format jsonl
    perfmodel validate run/ --cases manifest.yaml -o report.md
    perfmodel validate rank_0/ rank_1/ rank_2/ --jobs 3 --format json
    perfmodel validate ranks/ --jobs 0 -o all.csv

    Several workloads: several arguments, or a folder that no format reads whole
    (its entries that a format reads are the ranks: rank_N/ rocprof-compute workloads, one
    rocpd .db per rank), or a rocprofv3 CSV folder whose files all lie in per-process folders
    (<host>/<pid>/, rank_N/). Each is validated on its own, then each kernel is merged across
    them (ratio of sums: FLOPs, bytes, time summed). JSON/CSV rows carry `workload` (the path);
    merged rows have workload "merged" and `workloads` (how many it ran in). Tables: one per
    workload, then the merged one. Output is in input order whatever --jobs is. A bad workload
    stops everything (one error line each, exit 2, no file written) unless --keep-going.
    Details: docs/usage.md, "Several workloads".

    A torch.profiler trace, rocprofv3 kernel trace or RPD database is reported by GPU time per
    kernel instead. A serving engine's graph-replayed decode steps carry no shapes: name what
    ran with --model, --batch and --kv-len (docs/models-whole.md).
    """
    import math

    from perfmodel import traces
    from perfmodel.errors import InputError
    from perfmodel.progress import status
    from perfmodel.validate import validate

    if sclk is not None and not (math.isfinite(sclk) and 1 <= sclk <= 10_000):
        raise InputError(f"expected a clock between 1 and 10000 MHz, got {sclk:g}", key="--sclk")
    fmt_given = ctx.get_parameter_source("fmt") != click.core.ParameterSource.DEFAULT
    targets = [t for t in (report, output) if t] or [None]

    def fmt_for(target):
        return fmt if fmt_given or not target else SUFFIX_FORMATS.get(Path(target).suffix.lower(), fmt)

    images = [t for t in targets if t and Path(t).suffix.lower() in IMAGE_SUFFIXES]
    if images and (len(workloads) > 1 or not traces.detect(workloads[0])):
        raise InputError("a picture of rocprof workloads is `perfmodel roofline --measured WORKLOAD -o FILE`; "
                         "validate -o writes .md .json .jsonl .csv .txt (or a chart of one torch.profiler trace)", key="-o")

    options = {
        "arch": arch,
        "manifest": manifest,
        "per_dispatch": per_dispatch,
        "sclk_mhz": sclk,
        "cus": cus,
        "kernel_filter": kernel_filter,
        "top": top,
    }
    from perfmodel.validate.many import holds_ranks

    if len(workloads) > 1 or holds_ranks(workloads[0]):
        if model:
            raise InputError("one trace at a time", key="--model")
        _validate_many(list(workloads), options, jobs, keep_going, targets, fmt_for)
        return
    workload = workloads[0]
    step = _model_step(model, batch, kv_len, phase, tokens, tp, engine)
    if traces.detect(workload):  # a torch.profiler chrome trace (.json / .json.gz)
        traces.refuse_options(workload, **{"--per-dispatch": per_dispatch, "--sclk": sclk, "--cus": cus, "--kernel": kernel_filter})
        rep = traces.validate_trace(workload, arch=arch, manifest=manifest, step=step)
        for target in targets:
            if target in images:  # the chart: time per kernel family, measured and predicted
                from perfmodel.plots.api import plot_trace

                plot_trace(rep, path=target)
                click.echo(f"chart written to {target}", err=True)
                continue
            from perfmodel.traces.report import render_trace_report

            emit(render_trace_report(rep, fmt_for(target), top or 30), target)
            if target and fmt_for(target) in ("table", "md"):
                click.echo(f"report written to {target} ({len(rep.rows)} rows)", err=True)
        return
    if step is not None:
        raise InputError("only for a trace with graph-replayed steps (a torch.profiler trace), not a rocprof workload", key="--model")
    if per_dispatch and not top and all(targets) and all(fmt_for(t) in ("json", "jsonl", "csv") for t in targets):
        from perfmodel.validate.stream import validate_to_files

        opts = {k: v for k, v in options.items() if k not in ("per_dispatch", "top")}
        with status(f"validating {workload} per dispatch (rows streamed to the file)"):
            validate_to_files(workload, [(t, fmt_for(t)) for t in targets], **opts)
        return
    with status(f"validating {workload} (reading the trace, deriving counters, predicting)"):
        v = validate(workload, **options)
    for target in targets:  # -o and -O: each file in its own format (from its suffix)
        f = fmt_for(target)
        emit(v.render(f), target)
        if target and f in ("table", "md"):
            click.echo(f"report written to {target} ({len(v.rows)} rows)", err=True)


def _validate_many(
    workloads: list[str], options: dict, jobs: int, keep_going: bool, targets, fmt_for
) -> None:
    """Several workloads: validated `jobs` at a time, merged, written like one (see --help)."""
    import os

    from perfmodel.errors import InputError, InputErrors
    from perfmodel.validate.identify import load_manifest
    from perfmodel.validate.many import validate_many

    if options["manifest"]:  # read once, not once per workload
        options = {**options, "manifest": load_manifest(options["manifest"])}
    vs = validate_many(workloads, jobs=jobs or os.cpu_count() or 1, keep_going=keep_going, **options)
    for target in targets:
        f = fmt_for(target)
        emit(vs.render(f), target)
        if target and f in ("table", "md"):
            click.echo(f"report written to {target} ({len(vs.rows)} rows)", err=True)
    if any(fmt_for(t) not in ("table", "md") for t in targets):  # notes the JSON/CSV rows do not carry
        for n in vs.notes:
            click.echo(f"note: {n}", err=True)
    if vs.errors:
        raise InputErrors([InputError(e) for e in vs.errors])


def _model_step(model, batch, kv_len, phase, tokens, tp, engine) -> dict | None:
    """The --model step (`traces.graph_steps.step_spec`); its options without --model are one
    error line."""
    from perfmodel.errors import InputError
    from perfmodel.traces.graph_steps import step_spec

    given = {"batch": batch, "kv_len": kv_len, "phase": phase, "tokens": tokens, "tp": tp, "engine": engine}
    if model is None:
        stray = [k for k, v in given.items() if v is not None]
        if stray:
            raise InputError("only with --model (the model a trace's graph replays ran)", key=_option(stray[0]))
        return None
    return step_spec({"model": model, **given}, spell=_option)


def _option(key: str) -> str:
    return "--" + key.replace("_", "-")
