"""Open a profile file by its content, not its name: gzip when it starts with the gzip magic
(``trace.csv.gz``, ``results.json.gz``, or a gzipped file without the suffix), plain otherwise.
Every reader, the fingerprint and the trace detector open files through here."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO

GZIP_MAGIC = b"\x1f\x8b"


def open_by_content(path: str | Path, text: bool = False, encoding: str = "utf-8", newline: str | None = None) -> IO:
    """The file, decompressed if it is gzip; bytes unless ``text`` (then ``encoding`` and
    ``newline`` as for `open`). OSError when it cannot be opened; a corrupt gzip stream raises
    later, while reading (EOFError, zlib.error, gzip.BadGzipFile)."""
    with open(path, "rb") as probe:
        gz = probe.read(2) == GZIP_MAGIC
    if text:
        if gz:
            return gzip.open(path, "rt", encoding=encoding, newline=newline)
        return open(path, encoding=encoding, newline=newline)
    return gzip.open(path, "rb") if gz else open(path, "rb")
