"""`perfmodel kernel`: the included Triton kernels; `inspect` compiles one for a GPU (no GPU needed)."""

from __future__ import annotations

import click

from perfmodel.cli.options import emit, format_option, output_option


def _flat(d, prefix=""):
    for k, v in d.items():
        name = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            yield from _flat(v, name)
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for i, x in enumerate(v):
                yield from _flat(x, f"{name}[{i}]")
        else:
            yield name, (", ".join(str(x) for x in v) if isinstance(v, list) else v)


def _table(report: dict, fmt: str, title: str) -> str:
    from perfmodel.output import render

    rows = []
    for section, body in report.items():
        if section == "mismatches":
            for m in body or ["none"]:
                rows.append({"section": "mismatch", "field": "", "value": m})
            continue
        if not isinstance(body, dict):
            rows.append({"section": section, "field": "", "value": body})
            continue
        for k, v in _flat(body):
            rows.append({"section": section, "field": k, "value": v})
    return render(rows, fmt, columns=["section", "field", "value"], title=title)


@click.group("kernel")
def kernel_group() -> None:
    """The included Triton kernels (kernels/triton): list them, inspect their compiled code."""


@kernel_group.command("list")
@format_option
@output_option
def list_command(fmt, output) -> None:
    """Included kernels, their default keys and the perfmodel case each maps to."""
    from perfmodel.inspect.catalog import all_specs
    from perfmodel.output import render

    rows = []
    for name, s in all_specs().items():
        case = s.case(dict(s.keys))
        rows.append({"kernel": name, "case": case.pop("kernel"), "keys": " ".join(f"{k}={v}" for k, v in s.keys.items()),
                     "constexprs": " ".join(f"{k}={v}" for k, v in s.constexprs.items()), "doc": s.doc})  # fmt: skip
    emit(render(rows, fmt, title=None if fmt == "csv" else "included kernels"), output)


@kernel_group.command("inspect")
@click.argument("ref")
@click.argument("params", nargs=-1)
@click.option(
    "--arch",
    default="mi300x",
    show_default=True,
    help="Arch key or archspec path (its gfx target is compiled for).",
)
@click.option("--dtype", default=None, help="Data type of the kernel's inputs (bf16 fp16 fp8 fp32 ...).")
@click.option(
    "--from-kernel",
    is_flag=True,
    help="Also predict with the compiled kernel's grid, workgroup size, registers and LDS in place of the model's.",
)
@format_option
@output_option
def inspect_command(ref, params, arch, dtype, from_kernel, fmt, output) -> None:
    """Compile a kernel for a GPU and report registers, LDS, occupancy and instruction mix.

    REF is an included kernel (gemm, flash_attention, ... see `perfmodel kernel list`),
    FILE.py::name (a file declaring KERNELS, see kernels/triton/_spec.py) or a code object
    (FILE.hsaco / .co) built by Triton, hipcc or clang, read from its metadata note.

    \b
    perfmodel kernel inspect gemm --arch mi300x --format json
    perfmodel kernel inspect gemm m=8192 n=8192 k=8192 BLOCK_M=256 --arch mi355x --from-kernel
    perfmodel kernel inspect build/kernel.hsaco --arch mi300x workgroup_size=256
    """
    from pathlib import Path

    from perfmodel.cases import parse_kv

    words = parse_kv(list(params))
    if ref.endswith(".py"):
        from perfmodel.errors import InputError

        raise InputError("name the kernel in the file: FILE.py::name (a Spec in its KERNELS list)", where=ref)
    if Path(ref).suffix in (".hsaco", ".co", ".o", ".elf") or (Path(ref).is_file() and "::" not in ref):
        from perfmodel.inspect.report import inspect_code_object

        if dtype or from_kernel:
            from perfmodel.errors import InputError

            raise InputError(
                "--dtype and --from-kernel apply to Triton kernels, not to a code object", where=ref
            )
        report = inspect_code_object(ref, arch, words)
        if fmt in ("json", "jsonl"):
            from perfmodel.output import render

            text = render([report], fmt) if fmt == "jsonl" else render(report["kernels"], "json")
        else:
            text = "".join(_table(k, fmt, f"{ref} on {arch}") for k in report["kernels"])
        emit(text, output)
        return
    from perfmodel.inspect.catalog import require_triton

    require_triton()
    from perfmodel.inspect.report import inspect_included

    report = inspect_included(ref, arch, words, dtype=dtype, from_kernel=from_kernel)
    if fmt == "json":
        import json

        from perfmodel.output import _clean, _json_default

        text = json.dumps(_clean(report), indent=2, default=_json_default) + "\n"
    elif fmt == "jsonl":
        from perfmodel.output import render

        text = render([report], "jsonl")
    else:
        text = _table(report, fmt, f"{report['kernel']['name']} on {arch} ({report['kernel']['gfx']})")
    emit(text, output)


@kernel_group.command("occupancy")
@click.argument("trace", type=click.Path())
@click.option(
    "--arch", default="mi300x", show_default=True, help="Arch key or archspec path of the profiled GPU."
)
@format_option
@output_option
def occupancy_command(trace, arch, fmt, output) -> None:
    """Occupancy per kernel from a rocprofv3 kernel trace's VGPR/AGPR/SGPR/LDS columns.

    TRACE is a *_kernel_trace.csv or a folder holding some (e.g. the out/ of `perfmodel profile`).
    """
    from perfmodel.arch import load_arch
    from perfmodel.inspect.trace_occupancy import kernel_occupancy
    from perfmodel.output import render

    a = load_arch(arch)
    rows = kernel_occupancy(trace, a)
    emit(render(rows, fmt, title=None if fmt == "csv" else f"occupancy on {a.key} ({a.gfx})"), output)
