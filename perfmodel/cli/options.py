"""Options shared by every command that prints data, and the one place output is written."""

from __future__ import annotations

import click

from perfmodel.output import FORMATS, write_atomic

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format.",
)
output_option = click.option(
    "--output",
    "-O",
    "output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the data to this file instead of standard output.",
)


def emit(text: str, output: str | None) -> None:
    """Print, or write the file in one piece (no half-written file on failure)."""
    if output:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
