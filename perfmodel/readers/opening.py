"""Open a profile file by its content, not its name: gzip when it starts with the gzip magic
(``trace.csv.gz``, ``results.json.gz``, or a gzipped file without the suffix), plain otherwise.
Every reader, the fingerprint and the trace detector open files through here."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

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


SQLITE_MAGIC = b"SQLite format 3\x00"
_GUNZIPPED: dict[Path, Path] = {}  # a gzip-compressed database -> its decompressed copy


def is_sqlite(path: str | Path) -> bool:
    """Whether ``path`` is an SQLite database, plain or gzip-compressed (``trace.rpd.gz``)."""
    try:
        with open_by_content(path) as f:
            return f.read(16) == SQLITE_MAGIC
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
        return False


def connect_readonly(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite database at ``path``. SQLite cannot read a gzip
    stream, so a compressed database is decompressed once per process into a temporary
    directory that is removed at exit (the file itself is never written). sqlite3.Error or
    OSError when it cannot be opened."""
    import sqlite3  # here, not at start-up: most commands never open a database

    p = Path(path)
    with open(p, "rb") as probe:
        gz = probe.read(2) == GZIP_MAGIC
    if gz:
        key = p.resolve()
        if key not in _GUNZIPPED:
            import atexit
            import shutil
            import tempfile

            d = Path(tempfile.mkdtemp(prefix="perfmodel-sqlite-"))
            atexit.register(shutil.rmtree, d, True)
            out = d / p.name.removesuffix(".gz")
            try:
                with gzip.open(p, "rb") as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except (EOFError, gzip.BadGzipFile, zlib.error) as e:
                raise sqlite3.DatabaseError(f"corrupt gzip stream ({e})") from None
            _GUNZIPPED[key] = out
        p = _GUNZIPPED[key]
    return sqlite3.connect(f"file:{p}?mode=ro", uri=True)
