"""Reading YAML: the one place that turns a file into data, or a bad file into one line.

Archspecs, case files, manifests, counter formulas and the model constants all come through
here, so every syntax or encoding error reads the same: ``<file>: malformed YAML at line N: ...``
(an `InputError`, exit status 2 at the CLI).

Before the loader builds any object, the text is bounded: its size (`MAX_BYTES`), its nesting
depth (`MAX_DEPTH`; the C loader recurses per level and a deep enough document overflows the
stack) and the number of nodes once aliases are expanded (`MAX_NODES`; a "billion laughs"
document is small on disk and astronomically large once walked). The pre-scan reads parser
events, which libyaml produces without recursion.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfmodel.errors import InputError, excerpt

MAX_BYTES = 16 * 1024 * 1024  # the largest YAML input (the shipped specs are ~10 KB)
MAX_DEPTH = 64  # nesting levels; the deepest shipped file has 6
MAX_NODES = 1_000_000  # nodes after alias expansion


def read_text(path: str | Path, what: str, max_bytes: int | None = None) -> str:
    """The text of a UTF-8 file (a BOM is dropped); ``what`` names what the file should be, for
    the error line. Files over ``max_bytes`` (default `MAX_BYTES`) are refused unread."""
    p = Path(path)
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    try:
        if p.is_dir():
            raise InputError(f"is a directory; expected {what}", where=str(p))
        size = p.stat().st_size
        if size > max_bytes:
            raise InputError(f"file is {size} bytes, larger than the {max_bytes} allowed for {what}", where=str(p))
        data = p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read {what} ({e.strerror})", where=str(p)) from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(f"UTF-16 text; expected {what} in UTF-8", where=str(p))
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not a UTF-8 text file (byte {e.start}); expected {what}", where=str(p)) from None
    if "\x00" in text:
        raise InputError(f"binary file (NUL byte); expected {what}", where=str(p))
    return text


def _yaml_error(e: Exception, where: str) -> InputError:
    mark = getattr(e, "problem_mark", None)
    loc = f"line {mark.line + 1}" if mark else "?"
    problem = getattr(e, "problem", None) or (str(e).splitlines() or ["?"])[0]
    return InputError(f"malformed YAML at {loc}: {problem}", where=where)


def check_bounds(text: str, where: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH or expanding past MAX_NODES, before loading it."""
    import yaml

    if len(text) > MAX_BYTES:
        raise InputError(f"YAML text of {len(text)} characters, more than the {MAX_BYTES} allowed", where=where)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    ev = yaml.events
    sizes: list[int] = [0]  # nodes inside each open collection
    keys: list[tuple[set, list[bool]] | None] = [None]  # per open collection: mapping keys seen, next is a key
    anchors_open: list[str | None] = []
    anchors: dict[str, int] = {}
    total = 0
    try:
        for e in yaml.parse(text, Loader=loader):
            if isinstance(e, (ev.NodeEvent, ev.CollectionStartEvent)) and keys[-1] is not None:
                seen, is_key = keys[-1]
                if is_key[0] and isinstance(e, ev.ScalarEvent):
                    if e.value in seen:
                        line = e.start_mark.line + 1 if e.start_mark else "?"
                        raise InputError(f"key {excerpt(e.value, 40)} given twice (line {line})", where=where)
                    seen.add(e.value)
                is_key[0] = not is_key[0]
            if isinstance(e, (ev.SequenceStartEvent, ev.MappingStartEvent)):
                sizes[-1] += 1
                sizes.append(0)
                keys.append((set(), [True]) if isinstance(e, ev.MappingStartEvent) else None)
                anchors_open.append(e.anchor)
                if len(sizes) - 1 > MAX_DEPTH:
                    line = e.start_mark.line + 1 if e.start_mark else "?"
                    raise InputError(f"YAML nested more than {MAX_DEPTH} levels deep (line {line})", where=where)
            elif isinstance(e, (ev.SequenceEndEvent, ev.MappingEndEvent)):
                inner = sizes.pop()
                keys.pop()
                sizes[-1] += inner
                name = anchors_open.pop()
                if name is not None:
                    anchors[name] = inner + 1
            elif isinstance(e, ev.ScalarEvent):
                sizes[-1] += 1
                if e.anchor is not None:
                    anchors[e.anchor] = 1
            elif isinstance(e, ev.AliasEvent):
                sizes[-1] += anchors.get(e.anchor, 1)
            else:
                continue
            total = sum(sizes)
            if total > MAX_NODES:
                raise InputError(
                    f"YAML expands to more than {MAX_NODES} values (aliases repeated inside aliases?)", where=where
                )
    except yaml.YAMLError as e:
        raise _yaml_error(e, where) from None


def parse_yaml(text: str, where: str, shipped: bool = False) -> Any:
    """Parse YAML text with the safe loader (C when available: the specs load on every start).

    ``shipped``: a file of the package itself (archspecs, counter formulas, model constants),
    whose bounds the tests check (`tests/test_fuzz_corpus.py`), so the pre-scan - about as long
    as the load itself - is skipped on every start.
    """
    import yaml

    if not shipped:
        check_bounds(text, where)
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise _yaml_error(e, where) from None
    except (RecursionError, MemoryError, OverflowError, ValueError) as e:  # constructors on odd scalars
        raise InputError(f"YAML cannot be loaded ({type(e).__name__})", where=where) from None


def load_yaml(path: str | Path, what: str, shipped: bool = False) -> Any:
    """Read and parse one YAML file; an empty file is an error naming ``what`` was expected."""
    data = parse_yaml(read_text(path, what), str(path), shipped)
    if data is None:
        raise InputError(f"the file is empty; expected {what}", where=str(path))
    return data
