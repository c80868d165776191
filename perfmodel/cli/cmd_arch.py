"""`perfmodel archs`, `perfmodel arch show`, `perfmodel arch template`."""

from __future__ import annotations

import click

from perfmodel.archspec import SpecValue
from perfmodel.cli.options import format_option, output_option
from perfmodel.output import render

MATRIX_DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")
VECTOR_DTYPES = ("fp64", "fp32", "fp16")


def archs_rows() -> list[dict]:
    from perfmodel.arch import load_all

    rows = []
    for a in load_all():
        mem = a.memory_level
        row = {
            "key": a.key,
            "name": a.name,
            "gfx": a.gfx,
            "cus": a.cus,
            "clock_mhz": a.clock_hz / 1e6,
            "mem_tbs": a.bandwidth(mem) / 1e12,
        }
        mp = a.matrix_pipe
        for d in MATRIX_DTYPES:
            row[f"matrix_{d}"] = a.peak_flops(mp, d) / 1e12 if mp and a.has(mp, d) else None
        for d in VECTOR_DTYPES:
            row[f"vector_{d}"] = a.peak_flops("valu", d) / 1e12 if a.has("valu", d) else None
        rows.append(row)
    return rows


@click.command("archs")
@format_option
@output_option
def archs_command(fmt: str, output: str | None) -> None:
    """Table of all known GPUs: CUs, clock, memory bandwidth and peak TFLOP/s per dtype.

    Matrix columns are the MFMA/WMMA/tensor pipe (dense); vector columns the VALU.
    """
    from perfmodel.cli.options import emit

    emit(render(archs_rows(), fmt, title="perfmodel: known GPUs (peaks in TFLOP/s dense, memory in TB/s)"), output)


class _ArchGroup(click.Group):
    """`perfmodel arch mi300x` reads as `perfmodel arch show mi300x`: a first word that is no
    subcommand is taken as the GPU key (or archspec path) to show."""

    def resolve_command(self, ctx, args):
        import difflib

        first = args[0] if args else ""
        near_a_command = difflib.get_close_matches(first, list(self.commands), n=1, cutoff=0.75)
        if first and first not in self.commands and not first.startswith("-") and not near_a_command:
            args = ["show", *args]
        return super().resolve_command(ctx, args)


@click.group("arch", cls=_ArchGroup)
def arch_group() -> None:
    """Inspect one GPU's spec (`perfmodel arch mi300x` = `arch show mi300x`), or start a spec of your own."""


def _walk(node, path: str, sources: dict, rows: list) -> None:
    if isinstance(node, SpecValue):
        rows.append(
            {
                "field": path,
                "value": node.raw,
                "unit": node.unit + (f" per {node.per}" if node.per not in ("device", "") else ""),
                "tag": node.tag,
                "source": sources.get(node.source, node.source),
                "note": node.note,
            }
        )
        for k in ("plain", "benchmark", "clock", "shape"):
            if k in node.extra:
                v = node.extra[k]
                if k == "shape":  # the benchmark GEMM of a measured rate
                    v = " ".join(f"{d}={v[d]:g}" for d in ("m", "n", "k"))
                rows[-1]["note"] = (rows[-1]["note"] + f"; {k}: {v}").lstrip("; ")
        for i, alt in enumerate(node.extra.get("alternatives", [])):
            _walk(alt, f"{path}.alternatives[{i}]", sources, rows)
            rows[-1]["note"] = (rows[-1]["note"] + f"; benchmark: {alt.extra.get('benchmark', '')}").lstrip("; ")
    elif isinstance(node, dict):
        for k, v in node.items():
            if path == "" and k == "sources":
                continue
            _walk(v, f"{path}.{k}" if path else str(k), sources, rows)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _walk(v, f"{path}[{i}]", sources, rows)
    else:
        rows.append({"field": path, "value": node, "unit": "", "tag": "", "source": "", "note": ""})


def show_rows(key: str) -> tuple[list[dict], list[dict]]:
    """(spec rows with sources, derived rows: peaks per pipe/dtype and bandwidth per level)."""
    from perfmodel.arch import load_arch
    from perfmodel.rates import latency_used

    a = load_arch(key)
    spec: list[dict] = []
    _walk(a.tree, "", a.sources, spec)
    derived = []
    for c in a.roofs(sparse=True):
        unit = "TFLOP/s" if c.kind == "compute" else "TB/s"
        derived.append(
            {
                "ceiling": c.name + (" (sparse)" if c.sparse else ""),
                "theoretical": c.theoretical / 1e12,
                "measured": c.achievable / 1e12 if c.achievable else None,
                "unit": unit,
                "derivation": _derivation(a, c),
                "measured_by": c.achievable_source,
            }
        )
    for lv in a.levels:
        size, per = a.capacity_per(lv)
        derived.append(
            {
                "ceiling": f"{lv} capacity",
                "theoretical": a.capacity(lv) / 2**20,
                "measured": None,
                "unit": "MiB total",
                "derivation": f"{size / 1024:g} KiB per {per}" if size < 2**20 else f"{size / 2**20:g} MiB per {per}",
                "measured_by": "",
            }
        )
    derived.extend(_loaded_clock_rows(a))
    for lv in a.levels:
        secs, prov = latency_used(a, lv)
        derived.append(
            {
                "ceiling": f"{lv} latency",
                "theoretical": secs * 1e9,
                "measured": None,
                "unit": "ns",
                "derivation": "the spec's pointer chase" if a.latency(lv) is not None else "model_constants.yaml default",
                "measured_by": prov,
            }
        )
    return spec, derived


def _loaded_clock_rows(a) -> list[dict]:
    """The core clock under a sustained matrix load, per matrix pipe: the one the estimator runs a
    matrix kernel's VALU, SFU, LDS, L1 and L2 at (`rates.matrix_load_clock`); an implied clock
    stays out of the measured column, so that it is never taken for a measurement."""
    from perfmodel.rates import matrix_load_clock
    from perfmodel.vocab import MATRIX_PIPES

    rows = []
    for pipe in (p for p in MATRIX_PIPES if p in a.pipes()):
        hz, how = matrix_load_clock(a, pipe)
        measured = how == "measured"
        if measured:
            derivation = "the spec's measured clock (measured: clock)"
        elif how:
            derivation = f"{hz / 1e6:.0f} MHz {how} (rate / (flop/clk/CU x CUs x matrix_efficiency))"
        elif "@" in a.key:  # `perfmodel.fixed_clock`: the lock holds the clock at or below the loaded one
            derivation = "the fixed clock (at or below the clock a sustained load runs at unlocked)"
        else:
            derivation = "no clock under load measured or implied: the spec clock"
        rows.append(
            {
                "ceiling": f"clock under {pipe} load",
                "theoretical": a.clock_hz / 1e6,
                "measured": hz / 1e6 if measured else None,
                "unit": "MHz",
                "derivation": derivation,
                "measured_by": a.measured_clock(pipe).extra.get("benchmark", "") if measured else "",
            }
        )
    return rows


def _derivation(a, c) -> str:
    if c.kind == "compute":
        pipe, dtype = c.name.split(":")
        q = a.rate(pipe, dtype, sparse=c.sparse)
        return f"{q.value:g} flop/clk/CU x {a.cus} CUs x {a.clock_hz / 1e6:g} MHz"
    q = a.level(c.name)["bandwidth"]
    if q.unit == "B/clk":
        n = a._scope_count(q.per, a.level(c.name))
        return f"{q.value:g} B/clk per {q.per} x {n:g} x {a.clock_hz / 1e6:g} MHz"
    return f"{q.raw:g} {q.unit} (spec)"


@arch_group.command("show")
@click.argument("key")
@format_option
@output_option
def show_command(key: str, fmt: str, output: str | None) -> None:
    """Every field of a GPU's spec with its source, plus derived peaks and bandwidths.

    KEY is an arch key (mi300x, rx7900xtx, ...) or a path to your own archspec YAML.
    """
    from perfmodel.arch import load_arch
    from perfmodel.cli.options import emit

    a = load_arch(key)
    spec, derived = show_rows(key)
    if fmt in ("json", "jsonl"):
        import json

        doc = {"key": a.key, "name": a.name, "gfx": a.gfx, "path": a.path, "spec": spec, "derived": derived}
        text = json.dumps(doc, indent=None if fmt == "jsonl" else 2, default=str) + "\n"
    else:
        text = render(derived, fmt, title=f"{a.name} ({a.key}, {a.gfx}): derived ceilings")
        text += "\n" + render(spec, fmt, title=f"{a.name}: spec fields and sources ({a.path})")
        text += "\n" + render([{"id": k, "source": v} for k, v in a.sources.items()], fmt, title="sources")
    emit(text, output)


TEMPLATE_HEADER = """\
# perfmodel archspec template. Save as my-gpu.yaml, edit, then use it anywhere an arch key is
# accepted:  perfmodel arch show ./my-gpu.yaml   perfmodel roofline --arch ./my-gpu.yaml
#
# It starts as a copy of the shipped MI300X spec. Each number is a quantity
#   {value: <number>, unit: <unit>, source: <id in sources>, tag: R|D|P|S|A, note: <text>}
# Units: sizes B KiB MiB GiB KB MB GB; bandwidth B/s GB/s TB/s or B/clk with per: cu|wgp|xcd|channel;
# rates flop/clk/cu; clocks MHz GHz; time s ms us ns. Give rates per CU per clock: perfmodel
# derives the peaks (rate x CUs x clock). Unknown keys, missing fields, wrong units and negative
# numbers are rejected with the file and key named.
# MI300X's benchmark figures (its `measured:` section) are left out: they are that GPU's, and
# would claim rates your part may never reach. Add your own under `measured:` with the benchmark
# named; a measured ceiling above its theoretical peak is refused.
"""


def without_measured(body: str) -> str:
    """The spec text less its top-level `measured:` block (up to the next top-level key)."""
    out, skipping = [], False
    for line in body.splitlines(keepends=True):
        top = line[:1] not in (" ", "\t", "#", "\n", "\r", "")
        if top:
            skipping = line.startswith("measured:")
        if not skipping:
            out.append(line)
    return "".join(out)


@arch_group.command("template")
def template_command() -> None:
    """Print a commented archspec to start your own GPU from."""
    from perfmodel.arch import archspec_dir

    body = without_measured((archspec_dir() / "mi300x.yaml").read_text())
    body = body.replace("name: AMD Instinct MI300X", "name: My GPU (edit me)", 1)
    click.echo(TEMPLATE_HEADER + "\n" + body, nl=False)
