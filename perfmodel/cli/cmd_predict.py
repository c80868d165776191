"""`perfmodel predict`: time, bound and headroom of kernels from their shapes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from perfmodel.cli import options
from perfmodel.cli.options import emit, format_option, output_option, output_path_callback
from perfmodel.vocab import SCOPES


class PredictCommand(click.Command):
    """`perfmodel predict KERNEL --help` adds that family's keys to the help."""

    def parse_args(self, ctx, args):
        if any(a in ("--help", "-h") for a in args):
            first = self._first_positional(args)
            if first and "=" not in first:
                ctx.meta["perfmodel.kernel"] = first
        return super().parse_args(ctx, args)

    def _first_positional(self, args: list[str]) -> str | None:
        """The first word that is not an option or an option's value."""
        takes_value = {o for p in self.params if isinstance(p, click.Option) and not p.is_flag for o in p.opts}
        skip = False
        for a in args:
            if skip:
                skip = False
            elif a.startswith("-"):
                skip = a in takes_value
            else:
                return a
        return None

    def format_help(self, ctx, formatter):
        super().format_help(ctx, formatter)
        name = ctx.meta.get("perfmodel.kernel")
        if not name:
            formatter.write("\nKernel families and their keys: perfmodel kernels\n")
            return
        from perfmodel.errors import InputError
        from perfmodel.models.registry import get_model
        from perfmodel.tables import family_help

        try:
            text = family_help(get_model(name))
        except InputError as e:
            text = f"error: {e}"
        with formatter.section(f"Keys of {name} (key=value)"):
            for line in text.splitlines():
                formatter.write(line + "\n")


@click.command("predict", cls=PredictCommand, context_settings={"ignore_unknown_options": False})
@click.argument("kernel", required=False)
@click.argument("params", nargs=-1)
@click.option("--arch", "archs", multiple=True, help="Arch key or archspec path (KEY@1005mhz: at a fixed core clock; all: every shipped GPU); repeat (or comma-separate) for a side-by-side comparison. [default: mi300x]")
@click.option("--dtype", default=None, help="Data type (fp64 fp32 tf32 fp16 bf16 fp8 int32 int8 ...); default per kernel.")
@click.option("--cases", "cases_file", type=click.Path(dir_okay=False), default=None, help="A YAML list or JSON lines of cases.")
@click.option("--suite", is_flag=True, help="Run the built-in suite of realistic cases (kernels/suite.yaml).")
@click.option("--warm", is_flag=True, help="Steady state of a repeated kernel: inputs that fit a cache are served from it (default: one cold run).")
@click.option(
    "--scope",
    type=click.Choice(list(SCOPES)),
    default=None,
    help="What the time covers: the GPU kernel (default), device events around a call (adds the back-to-back "
    "submission gap), a host wall clock around an eager op plus synchronize (adds dispatch, launch, sync), or "
    "a timer around a loop of back-to-back calls from compiled code, per call (at least the dispatch spacing). "
    "A case's own scope= key wins.",
)
@click.option("--keep-going", is_flag=True, help="Predict every valid case and write its row; report the invalid ones on stderr (exit status 2 if any).")
@click.option("--terms", is_flag=True, help="Table/csv/md: add every time term and the bytes per level.")
@click.option(
    "-o",
    "plot",
    default=None,
    callback=output_path_callback,
    help="Also draw the cases: .png/.svg/.pdf, or .html for an interactive roofline (one self-contained file).",
)
@click.option(
    "--chart",
    type=click.Choice(["roofline", "times", "terms"]),
    default="roofline",
    show_default=True,
    help="With -o: the roofline (every arch on one plot), the time per case across GPUs, or each case's time terms.",
)
@click.option("--all-levels", is_flag=True, help="With -o roofline: a marker at every memory level, not only the binding one.")
@format_option
@output_option
def predict_command(kernel, params, archs, dtype, cases_file, suite, warm, scope, keep_going, terms, plot, chart, all_levels, fmt, output) -> None:
    """Predict time, bound class and headroom from a kernel's shape.

    \b
    perfmodel predict gemm m=4096 n=4096 k=4096 --arch mi300x --dtype bf16
    perfmodel predict attention batch=1 heads=32 seq_q=8192 head_dim=128 causal=true --arch mi300x,mi355x
    perfmodel predict --cases kernels/suite.yaml --format jsonl
    perfmodel predict --suite --arch mi300x -o suite.png
    perfmodel predict --suite --arch mi300x,mi355x --chart times -o times.png

    The keys of each kernel: perfmodel kernels, or perfmodel predict KERNEL --help.
    Every invalid case is reported (one line each); without --keep-going nothing is written
    then. --suite skips the cases a GPU has no rate for (an fp8 GEMM on MI100) and says so.
    """
    import gc

    # a million small acyclic dicts (from reading the cases file on): the cyclic collector would
    # only re-walk them (a third of the run time on 100k cases); reference counting frees them.
    # Paused for this command only, so an in-process caller (tests, a notebook) gets it back.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _predict(kernel, params, archs, dtype, cases_file, suite, warm, scope, keep_going, terms, plot, chart, all_levels, fmt, output)
    finally:
        if was_enabled:
            gc.enable()


def _predict(kernel, params, archs, dtype, cases_file, suite, warm, scope, keep_going, terms, plot, chart, all_levels, fmt, output) -> None:
    """The body of `predict_command` (which pauses the cyclic garbage collector around it)."""
    from perfmodel.arch import DEFAULT_ARCH
    from perfmodel.cases import load_case_file, parse_kv
    from perfmodel.errors import InputError, InputErrors
    from perfmodel.prediction import normalize_all
    from perfmodel.tables import render_predictions

    arch_list, every = options.arch_list(archs)
    arch_list = arch_list or None
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
    if plot:
        from perfmodel.plots import plot_format

        plot_format(plot)  # a bad suffix fails before any work
        if chart != "roofline" and plot_format(plot) == "html":
            raise InputError("--chart times/terms draw .png/.svg/.pdf; the interactive .html is the roofline", key="--chart")
    problems: list[InputError] = []
    cases = normalize_all(raws, arch_list or [DEFAULT_ARCH], dtype, source=source, problems=problems, scope=scope)
    del raws
    case_warm = any(c.warm for c in cases)
    batches = _evaluate(cases, warm, problems)
    del cases
    problems.sort(key=lambda e: getattr(e, "index", 0))
    # the suite, or --arch all, on a GPU without that dtype: skipped and said, the other GPUs predicted
    skipped = [e for e in problems if (suite or every) and e.key == "dtype"]
    errors = [e for e in problems if e not in skipped]
    if errors and not keep_going:
        raise InputErrors(errors)
    what = _what_was_run(kernel, cases_file, suite, batches, warm, case_warm)
    written = _draw(batches.records(), plot, chart, all_levels, what, dtype, arch_list) if plot else []
    if fmt == "jsonl":  # written as it is encoded, a few thousand rows at a time
        emit(_json_lines(batches), output, json_text=True)
    else:
        emit(render_predictions(_rows(batches), fmt, detail=terms, title=what), output, json_text=fmt == "json")
    for path, desc in written:
        click.echo(f"{desc} written to {path}", err=True)
    for e in skipped:
        click.echo(f"note: skipped {e}", err=True)
    if errors:
        raise InputErrors(errors)


# predictions per piece of output: their rows are made (or encoded) from the batches' columns a
# group at a time, so more rows per group is faster; the text is written a piece at a time
_PIECE = 4096


def _json_lines(batches) -> Iterator[str]:
    """The JSON lines of the predictions' rows, a piece at a time, encoded from the batches'
    columns (`record.row_columns`, `output.json_objects`): no record, no dict per row."""
    from perfmodel.output import json_objects, lines_text
    from perfmodel.record import from_rows

    for m, parts in batches.pieces(_PIECE):
        yield lines_text(from_rows(parts, m, json_objects))


def _rows(batches) -> Iterator[dict]:
    """The predictions' output rows, in order, made from the batches' columns a piece at a time."""
    from perfmodel.record import dict_rows, from_rows

    for m, parts in batches.pieces(_PIECE):
        yield from from_rows(parts, m, dict_rows)


def _evaluate(cases: list, warm: bool, problems: list):
    """Evaluate (`prediction.Batches`) in chunks so a big --cases file shows a progress bar (on a
    terminal only)."""
    from perfmodel.prediction import Batches, evaluate_batches
    from perfmodel.progress import Bar, enabled

    chunk = 20_000
    if len(cases) <= chunk or not enabled():
        return evaluate_batches(cases, warm=warm, problems=problems)
    out = []
    with Bar("predicting", total=len(cases)) as bar:
        for i in range(0, len(cases), chunk):
            part = cases[i : i + chunk]
            out.append(evaluate_batches(part, warm=warm, problems=problems))
            bar.update(len(part))
    return Batches.joined(out)


def _what_was_run(kernel, cases_file, suite, batches, warm, case_warm: bool = False) -> str:
    """The title line: what was predicted, on which GPUs, under which assumption."""
    archs = batches.archs()
    n = len(batches) // max(1, len(archs))
    if suite:
        src = f"the built-in suite ({n} cases)"
    elif cases_file:
        src = f"{n} case{'s' if n != 1 else ''} from {cases_file}"
    else:
        src = kernel or "case"
        if len(batches):
            first = batches.records()[0]  # one case (on each arch)
            src = f"{kernel} {first.dtype} " + " ".join(f"{k}={v}" for k, v in first.shape.items())
    run = "warm (inputs served from cache)" if warm else "cold single run"
    if case_warm and not warm:
        run += " (warm where a case says warm=true)"
    return f"perfmodel predict: {src} on {', '.join(archs)}; {run}"


def _draw(preds, plot: str, chart: str, all_levels: bool, what: str, dtype: str | None, arch_list) -> list[tuple[str, str]]:
    """Draw the chart; returns (path, what) for every file written."""
    from perfmodel.plots import write_roofline

    if chart in ("times", "terms"):
        import matplotlib.pyplot as plt

        from perfmodel.plots.charts import plot_terms, plot_times

        fig = (plot_times if chart == "times" else plot_terms)(preds, plot, subtitle=what)
        plt.close(fig)
        return [(plot, f"{chart} chart")]
    from perfmodel.plots.points import prediction_points
    from perfmodel.roofline import roofline

    keys = list(dict.fromkeys(p.arch for p in preds))
    specs = arch_list or []
    models = [roofline(next((s for s in specs if s == k or Path(s).stem == k), k)) for k in keys]
    dt = dtype or (max({p.dtype for p in preds}, key=[p.dtype for p in preds].count) if preds else None)
    return write_roofline(
        models[0], plot, prediction_points(preds), subtitle=what, ridge_dtype=dt, others=models[1:], all_levels=all_levels
    )

