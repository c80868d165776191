"""`perfmodel model`: a whole transformer step (prefill or decode), per op, per layer, in total."""

from __future__ import annotations

import click

from perfmodel.cli import options
from perfmodel.cli.options import emit, format_option, output_option

OP_COLUMNS = ["arch", "layer", "module", "op", "kernel", "dtype", "shape", "time_us", "bound", "share", "tflops", "ai"]
TOTAL_COLUMNS = [
    "arch", "phase", "ops", "total_us", "decode_us_per_token", "prefill_us", "tokens_per_s", "collective_us",
    "stream_bound_us", "stream_ratio", "memory_gb", "fits", "unsupported_ops",
]


def _shape_text(shape: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in shape.items())


def by_op_kind(analysis) -> list[dict]:  # noqa: D401
    """Time per (op, kernel, bound) summed over the model, per arch, largest first."""
    acc: dict[tuple, dict] = {}
    for r in analysis.rows:
        k = (r["arch"], r["op"], r["kernel"], r["bound"])
        d = acc.setdefault(k, {"arch": r["arch"], "op": r["op"], "kernel": r["kernel"], "bound": r["bound"], "count": 0, "time_us": 0.0, "share": 0.0})
        d["count"] += 1
        d["time_us"] += r["time_us"]
        d["share"] += r["share"]
    order = {a: i for i, a in enumerate(analysis.archs)}
    return sorted(acc.values(), key=lambda d: (order.get(d["arch"], 0), -d["time_us"]))


@click.command("model")
@click.argument("model")
@click.option("--arch", "archs", multiple=True, help="Arch key or archspec path (KEY@1005mhz: at a fixed core clock; all: every shipped GPU); comma-separate or repeat to compare. [default: mi300x]")
@click.option("--phase", type=click.Choice(["prefill", "decode"]), default="decode", show_default=True)
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True, help="Sequences in the batch.")
@click.option("--tokens", type=click.IntRange(min=1), default=2048, show_default=True, help="Prompt tokens per sequence (prefill).")
@click.option("--kv-len", "kv_len", type=click.IntRange(min=0), default=0, show_default=True, help="Cached tokens per sequence before this step.")
@click.option("--tp", type=click.IntRange(min=1), default=1, show_default=True, help="Tensor-parallel ranks (adds all-reduces).")
@click.option("--ep", type=click.IntRange(min=1), default=1, show_default=True, help="Expert-parallel ranks (adds all-to-alls).")
@click.option("--dtype", default=None, help="Time every op in this dtype (default: the config's torch_dtype, a quantized checkpoint's linear layers and experts as stored).")
@click.option("--engine", type=click.Choice(["vllm", "eager"]), default="vllm", show_default=True,
              help="vllm: fused qkv/gate_up GEMMs and vLLM's fused kernels; eager: Hugging Face-style ops.")
@click.option("--fused", is_flag=True, help="Fuse obvious chains of elementwise ops into one kernel.")
@click.option("--paged", is_flag=True, help="Paged KV cache (vLLM block tables).")
@click.option("--block-size", "block_size", type=click.IntRange(min=1), default=16, show_default=True, help="Tokens per KV block (--paged).")
@click.option("--ops", "show_ops", is_flag=True, help="Table/md: list every op (csv and jsonl always do).")
@click.option("--layers", "show_layers", is_flag=True, help="Table/md: add the time of every layer (and top-level module) per arch.")
@click.option("-o", "plot", default=None, help="Write the per-layer stacked bars here (.png/.svg/.pdf) and the ops' roofline beside it (-roofline).")
@format_option
@output_option
def model_command(model, archs, phase, batch, tokens, kv_len, tp, ep, dtype, engine, fused, paged, block_size, show_ops, show_layers,
                  plot, fmt, output) -> None:
    """Predict one step of a transformer on one rank: every op, per layer, and the totals.

    MODEL is a built-in name (llama3-8b, llama3-70b, mixtral-8x7b, deepseek-v3, qwen2.5-7b, qwen3-8b,
    gpt-oss-20b, gpt-oss-120b) or a Hugging Face config.json. Traced on the meta device (torch
    needed: pip install 'perfmodel[torch]').

    \b
    perfmodel model llama3-8b --arch mi300x --phase decode --batch 1 --kv-len 4096
    perfmodel model llama3-70b --tp 8 --phase prefill --tokens 2048 --arch mi300x,h100
    perfmodel model ./config.json --phase decode --batch 32 --kv-len 2048 --format json
    """
    from perfmodel.frontend import require_torch

    require_torch("perfmodel model")
    from perfmodel.frontend.analysis import analyze_model

    arch_list = options.arch_list(archs)[0] or ["mi300x"]
    _check_dtype(dtype)
    a = analyze_model(model, arch_list, phase=phase, batch=batch, tokens=tokens, kv_len=kv_len, tp=tp, ep=ep, dtype=dtype,
                      fused=fused, paged=paged, block_size=block_size, engine=engine)
    if plot:
        _plot(a, plot)
    if fmt == "json":
        text = _json_text(a)
    elif fmt in ("jsonl", "csv") or show_ops:
        text = _ops_text(a, fmt)
    else:
        title = f"perfmodel model {a.meta['model']} ({a.meta['phase']}, batch {batch}" + (
            f", {tokens} tokens" if phase == "prefill" else f", kv-len {kv_len}") + (f", tp {tp}" if tp > 1 else "") + (
            f", ep {ep}" if ep > 1 else "") + f", {a.meta['engine']})"
        text = _summary_text(a, fmt, title, show_layers)
    emit(text, output)


def _check_dtype(dtype: str | None) -> None:
    """Reject an unknown --dtype before tracing (which takes seconds)."""
    from perfmodel.errors import InputError

    if dtype is not None:
        from perfmodel.dtypes import SIZE

        if dtype not in SIZE:
            raise InputError(f"expected one of {', '.join(SIZE)}, got {dtype!r}", key="--dtype")


def _plot(a, plot: str) -> None:
    """Time per layer to ``plot`` and the ops on the first arch's roofline to ``<plot>-roofline``."""
    from perfmodel.plots.model_plot import plot_layers, plot_model_roofline

    plot_layers(a, plot)
    stem, dot, ext = plot.rpartition(".")
    plot_model_roofline(a, a.archs[0], f"{stem}-roofline.{ext}" if dot else f"{plot}-roofline")


def _json_text(a) -> str:
    """One JSON object: meta, totals, every op, layers, what has no model or no kernel."""
    from perfmodel.output import render

    s = a.summary()
    text = render([{"meta": s["meta"], "totals": s["totals"], "ops": a.to_dicts(), "layers": s["layers"],
                    "unsupported": s["unsupported"], "no_kernel": s["no_kernel"]}], "json")
    return text.strip()[1:-1].strip() + "\n"  # one object, not a list of one


def _ops_text(a, fmt: str) -> str:
    """Every op: all fields as JSON lines, else the op columns (csv, or --ops)."""
    from perfmodel.output import render

    if fmt == "jsonl":
        return render(a.to_dicts(), "jsonl")
    rows = [{c: (_shape_text(r["shape"]) if c == "shape" else r.get(c)) for c in OP_COLUMNS} for r in a.rows]
    return render(rows, fmt, columns=OP_COLUMNS, title=None if fmt == "csv" else "perfmodel model: ops")


def _summary_text(a, fmt: str, title: str, show_layers: bool) -> str:
    """Totals per arch, time by op kind, optionally per layer, then what has no model or no kernel."""
    from perfmodel.output import render

    totals = a.totals()
    cols = [c for c in TOTAL_COLUMNS if any(t.get(c) is not None for t in totals)]
    text = render(totals, fmt, columns=cols, title=title)
    text += "\n" + render(by_op_kind(a), fmt, columns=["arch", "op", "kernel", "bound", "count", "time_us", "share"],
                          title="time by op (summed over layers)")
    if show_layers:
        lrows = [{"arch": ly["arch"], "layer": ly["layer"], "ops": ly["ops"], "time_us": ly["time_us"],
                  **{f"{k}_us": v for k, v in ly["by_kernel"].items()}} for ly in a.layers()]
        text += "\n" + render(lrows, fmt, title="time per layer")
    if a.unsupported:
        text += "\n" + render(a.unsupported[: 50], fmt, title=f"ops with no model ({len(a.unsupported)}; not in the totals)")
    nk = ", ".join(f"{k} x{v}" for k, v in sorted(a.no_kernel.items()))
    quant = f"checkpoint quantization: {a.meta['quantization']}\n" if a.meta.get("quantization") else ""
    return text + f"\nnot kernels (views/metadata, no time): {nk or 'none'}\n" + quant + _capacity_notes(a) + _cell_notes(a)


def _capacity_notes(a) -> str:
    """A line per GPU one rank's weights and KV cache do not fit on: its times are of a step
    that cannot run there as configured."""
    from perfmodel.arch import load_arch

    rb = a.meta.get("resident_bytes")
    out = ""
    for t in a.totals():
        if t.get("fits") is False:
            arch = load_arch(t["arch"])
            cap = arch.capacity(arch.memory_level) / 1e9
            out += (f"note: {t['arch']}: does not fit: one rank holds at least {rb['total'] / 1e9:,.1f} GB (weights "
                    f"{rb['weights'] / 1e9:,.1f}, KV cache {rb['kv_cache'] / 1e9:,.1f}) and the GPU has {cap:,.0f} GB; "
                    "the times are for a step that cannot run as configured (more --tp/--ep ranks)\n")
    return out


def _cell_notes(a) -> str:
    """Each off-cell note among the ops, once per arch, with the share of that arch's step
    time its ops take (`perfmodel.error_bands.cell_note`: the model sits away from published
    measurements there)."""
    from perfmodel.error_bands import cell_notes_in

    share: dict[tuple, float] = {}
    for r in a.rows:
        for n in cell_notes_in(r.get("notes")):
            share[(r["arch"], n)] = share.get((r["arch"], n), 0.0) + r["share"]
    return "".join(f"note ({arch}, ops taking {s:.0%} of its time): {n}\n" for (arch, n), s in share.items())
