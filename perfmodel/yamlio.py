"""Reading YAML: the one place that turns a file into data, or a bad file into one line.

Archspecs, case files, manifests, counter formulas and the model constants all come through
here, so every syntax or encoding error reads the same: ``<file>: malformed YAML at line N: ...``
(an `InputError`, exit status 2 at the CLI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfmodel.errors import InputError


def read_text(path: str | Path, what: str) -> str:
    """The text of a UTF-8 file; ``what`` names what the file should be, for the error line."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not a UTF-8 text file (byte {e.start}); expected {what}", where=str(p)) from None
    except OSError as e:
        raise InputError(f"cannot read {what} ({e.strerror})", where=str(p)) from None


def parse_yaml(text: str, where: str) -> Any:
    """Parse YAML text with the safe loader (C when available: the specs load on every start)."""
    import yaml

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        loc = f"line {mark.line + 1}" if mark else "?"
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"malformed YAML at {loc}: {problem}", where=where) from None


def load_yaml(path: str | Path, what: str) -> Any:
    """Read and parse one YAML file; an empty file is an error naming ``what`` was expected."""
    data = parse_yaml(read_text(path, what), str(path))
    if data is None:
        raise InputError(f"the file is empty; expected {what}", where=str(path))
    return data
