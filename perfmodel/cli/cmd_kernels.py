"""`perfmodel kernels`: every registered kernel family with its case keys.

Listing the families imports the model modules (the registry is filled by importing them), and
they import numpy: this command is not one of the numpy-free ones (docs/performance.md).
"""

from __future__ import annotations

import click

from perfmodel.cli.options import emit, format_option, output_option


@click.command("kernels")
@click.argument("names", nargs=-1)
@format_option
@output_option
def kernels_command(names, fmt: str, output: str | None) -> None:
    """Every kernel family with its keys: type, default, allowed values and meaning.

    \b
    perfmodel kernels                 one table, a row per key
    perfmodel kernels stencil gemm    only these families
    perfmodel kernels --format json   one object per family with its parameters
    """
    from perfmodel.models.registry import all_models, get_model
    from perfmodel.tables import kernel_families, render_kernels

    models = [get_model(n) for n in names] if names else [all_models()[k] for k in sorted(all_models())]
    emit(render_kernels(kernel_families(models), fmt), output)
