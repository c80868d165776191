"""Options shared by every command that prints data, and the one place output is written."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import click

from perfmodel.output import FORMATS, atomic_file

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format.",
)


def arch_list(specs: Iterable[str]) -> tuple[list[str], bool]:
    """(the GPUs an ``--arch`` option names, whether it said ``all``): comma-separated or
    repeated keys, spec paths and ``KEY@1005mhz`` forms; ``all`` is every shipped spec, in
    `perfmodel archs` order."""
    out: list[str] = []
    every = False
    for a in (a.strip() for spec in specs for a in spec.split(",")):
        if a.lower() == "all":
            from perfmodel.arch import arch_keys

            out += arch_keys()
            every = True
        elif a:
            out.append(a)
    return list(dict.fromkeys(out)), every


def check_output_path(path: str | None, what: str = "--output") -> str | None:
    """An output path that can be written, checked before any work is done: its folder exists
    and is a folder, and the path is not a folder itself. One `InputError` line otherwise."""
    import os

    from perfmodel.errors import InputError

    if path is None:
        return None
    if path in ("", "-"):
        raise InputError("expected a file name", key=what)
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise InputError("is a directory; expected a file name", where=path, key=what)
    if not os.path.isdir(parent):
        raise InputError(f"folder {parent} does not exist", where=path, key=what)
    if not os.access(parent, os.W_OK):
        raise InputError(f"folder {parent} is not writable", where=path, key=what)
    return path


def output_path_callback(ctx, param, value):
    from perfmodel.errors import InputError

    try:
        return check_output_path(value, "/".join(param.opts))
    except InputError as e:
        from perfmodel.cli.main import BadInput

        raise BadInput([str(e)]) from None


output_option = click.option(
    "--output",
    "-O",
    "output",
    type=click.Path(),
    default=None,
    callback=output_path_callback,
    help="Write the data to this file instead of standard output.",
)


def emit(text: str | Iterable[str], output: str | None, json_text: bool = False) -> None:
    """Print, or write the file (no half-written file on failure: `atomic_file`).

    ``text``: the whole text, or its pieces, written as they come (JSON lines of a big --cases
    file: see `perfmodel.output.jsonl_chunks`). ``json_text``: the text is JSON as `json`
    writes it (ASCII, control characters escaped), so it holds no terminal escape code for
    `click.echo` to strip when stdout is no terminal: it is written as it is, without that
    scan of every character (a tenth of a second on 100 MB of JSON lines)."""
    if isinstance(text, str):
        text = (text,)
    if output:
        with atomic_file(output) as f:
            for piece in text:
                f.write(piece.encode())
    elif json_text and sys.stdout is not None:
        for piece in text:
            sys.stdout.write(piece)
            sys.stdout.flush()
    else:
        for piece in text:
            click.echo(piece, nl=False)
