"""A rocprofv3 kernel trace read in column chunks: the fast path of `perfmodel validate`.

`iter_kernel_trace` (rocprof_v3) makes a `Dispatch` per row with the csv module: about 40 µs of
Python per row, 40 s for a million dispatches. Here the file is read in blocks of whole lines
and split into fields with numpy (quote parity, no per-cell Python); the per-row columns
(Dispatch_ID, Start/End timestamps) are parsed in bulk, and the columns that describe a kernel
launch (name, grid, workgroup, registers, LDS, scratch) are only sliced and numbered: each
distinct raw text is decoded once with the csv module and parsed by the row path's own code.

Only plain chunks take this path: fields split as the csv module would split them (quotes only
around whole fields, no CR, NUL or line break inside quotes, every line with the header's field
count), plain digit cells in the per-row columns. A chunk that is not plain (or whose key cells
do not parse) ends the fast read of the file: `Chunk.fallback` is set and the caller reads the
rest of the file from that line with the row path, which gives the same error lines as ever.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from perfmodel.errors import InputError
from perfmodel.readers import csvio

# Columns that are the same for every dispatch of one launch configuration (canonical names);
# a trace groups by their raw text.
LAUNCH_COLUMNS = (
    "Kernel_Name",
    "Grid_Size", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z",
    "Workgroup_Size", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
    "LDS_Per_Workgroup", "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR",
    "Group_Segment_Size", "Private_Segment_Size",
)  # fmt: skip
ROW_COLUMNS = ("Dispatch_ID", "Start_Timestamp", "End_Timestamp")
BLOCK_BYTES = 8 << 20
CHUNK_ROWS = 65536
MAX_ID_DIGITS = 15  # a Dispatch_ID goes through float() in the row path: exact below 2**53
MAX_TS_DIGITS = 18  # timestamps are ints in the row path; int64 holds 18 digits


@dataclass
class Chunk:
    """Up to CHUNK_ROWS consecutive rows of one trace file.

    ``line``: physical line of each row; ``index``: its Dispatch_ID (the row ordinal where the
    file has no such column); ``begin``/``end``: timestamps in ns; ``key``: id of the row's launch
    key (raw text of the LAUNCH_COLUMNS), numbered in order of first appearance in the file;
    ``new_keys``: (row in chunk, cells by canonical and by raw header name) of the keys first
    seen here. ``fallback``: the line from which the row path must read instead (no rows then).
    """

    line: np.ndarray | None = None
    index: np.ndarray | None = None
    begin: np.ndarray | None = None
    end: np.ndarray | None = None
    key: np.ndarray | None = None
    new_keys: list[tuple[int, dict[str, str], dict[str, str]]] = field(default_factory=list)
    fallback: int | None = None

    def __len__(self) -> int:
        return 0 if self.line is None else len(self.line)


class TraceColumns:
    """The chunks of one kernel trace file (plain or gzip, by content). The header is checked
    by `csvio.rows`, so a missing column or an unreadable file gives the row path's error."""

    def __init__(self, path: Path, chunk_rows: int = CHUNK_ROWS, block_bytes: int = BLOCK_BYTES):
        self.path = path
        self.where = str(path)
        self.chunk_rows = max(1, chunk_rows)
        self.block_bytes = max(1024, block_bytes)
        header, rows = csvio.rows(path)
        rows.close()
        csvio.require(header, ("Kernel_Name", "Start_Timestamp", "End_Timestamp"), self.where, "a kernel trace")
        self.header = header
        self.col = csvio.columns(header)
        self.per_axis = "Grid_Size_X" in self.col
        self.raw_header: list[str] = []
        self.bom = False
        self.rows_read = 0  # data rows handed out so far (the row path's ordinal n)

    def _open(self):
        with open(self.path, "rb") as probe:
            gz = probe.read(2) == b"\x1f\x8b"
        return gzip.open(self.path, "rb") if gz else open(self.path, "rb")

    def chunks(self) -> Iterator[Chunk]:
        try:
            yield from self._chunks()
        except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, csv.Error):
            # a corrupt gzip stream or an odd byte: the row path says what and where
            yield Chunk(fallback=self._next_line)

    def _chunks(self) -> Iterator[Chunk]:
        self._next_line = 1
        with self._open() as fh:
            head = fh.read(self.block_bytes)
            if head.startswith(b"\xef\xbb\xbf"):
                self.bom, head = True, head[3:]
            nl = head.find(b"\n")
            line = head[:nl].removesuffix(b"\r")
            if nl < 0 or line.count(b'"') % 2 or b"\r" in line:
                yield Chunk(fallback=1)  # a header over several lines or without an end: row path
                return
            self.raw_header = next(csv.reader([line.decode("utf-8")]), [])
            if [csvio.canonical(h) for h in self.raw_header] != self.header:
                yield Chunk(fallback=1)
                return
            self._next_line = 2
            rest = head[nl + 1 :]
            table: dict = {}
            eof = False
            while True:
                while not eof and rest.count(b"\n") < self.chunk_rows:
                    more = fh.read(self.block_bytes)
                    if not more:
                        eof = True
                        break
                    rest += more
                if not rest:
                    return
                cut = _nth_newline(rest, self.chunk_rows)
                if cut < 0:  # the last line has no line break
                    if not eof:
                        continue
                    rest += b"\n"
                    cut = len(rest) - 1
                block, rest = rest[: cut + 1], rest[cut + 1 :]
                chunk = self._chunk(block, table)
                if chunk.fallback is not None:
                    yield chunk
                    return
                self._next_line += len(chunk)
                self.rows_read += len(chunk)
                yield chunk

    def _chunk(self, block: bytes, table: dict) -> Chunk:
        """One block of whole lines as columns, or a fallback marker when it is not plain."""
        first = self._next_line
        fallback = Chunk(fallback=first)
        if b"\0" in block or block.count(b"\r") != block.count(b"\r\n"):
            return fallback  # NUL, or a CR that does not end a line
        if not block.isascii():
            try:
                block.decode("utf-8")
            except UnicodeDecodeError:
                return fallback
        fields = _split(block, len(self.header))
        if fields is None:
            return fallback
        starts, ends = fields
        n = len(starts)
        c = Chunk(line=np.arange(first, first + n, dtype=np.int64))
        if "Dispatch_ID" in self.col:
            i = self.col["Dispatch_ID"]
            c.index, ok = _digits(block, starts[:, i], ends[:, i], MAX_ID_DIGITS)
            if not ok:
                return fallback
        else:
            c.index = np.arange(self.rows_read, self.rows_read + n, dtype=np.int64)
        for name in ("begin", "end"):
            i = self.col["Start_Timestamp" if name == "begin" else "End_Timestamp"]
            v, ok = _digits(block, starts[:, i], ends[:, i], MAX_TS_DIGITS)
            if not ok:
                return fallback
            setattr(c, name, v)
        c.key, c.new_keys = self._keys(block, starts, ends, table)
        return c

    def _keys(self, block: bytes, starts: np.ndarray, ends: np.ndarray, table: dict):
        """Row -> launch-key id (first-seen order in the file) and the cells of new keys."""
        want = sorted(i for name, i in self.col.items() if name in LAUNCH_COLUMNS)
        runs: list[list[int]] = []  # consecutive key columns are sliced as one span
        for i in want:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        spans = [
            [block[s:e] for s, e in zip(starts[:, r[0]].tolist(), ends[:, r[-1]].tolist(), strict=True)] for r in runs
        ]
        keys = spans[0] if len(spans) == 1 else list(zip(*spans, strict=True))
        before = len(table)
        setdefault = table.setdefault
        ids = np.fromiter((setdefault(k, len(table)) for k in keys), dtype=np.int64, count=len(keys))
        new: list[tuple[int, dict[str, str], dict[str, str]]] = []
        if len(table) > before:
            fresh, first = np.unique(ids, return_index=True)
            for kid, row in sorted(zip(fresh.tolist(), first.tolist(), strict=True), key=lambda t: t[1]):
                if kid < before:
                    continue
                canon: dict[str, str] = {}
                raw: dict[str, str] = {}
                for r, span in zip(runs, (spans[j][row] for j in range(len(runs))), strict=True):
                    text = span.decode("utf-8")
                    cells = next(csv.reader([text]), []) if text else [""]
                    if len(cells) != len(r):
                        raise csv.Error("span does not split as its row")
                    for i, cell in zip(r, cells, strict=True):
                        canon[self.header[i]] = cell
                        raw[self.raw_header[i]] = cell
                new.append((row, canon, raw))
        return ids, new


def _nth_newline(buf: bytes, n: int) -> int:
    """Position of the n-th line break (or the last one when there are fewer); -1 for none."""
    pos = -1
    if buf.count(b"\n") <= n:
        return buf.rfind(b"\n")
    for _ in range(n):
        pos = buf.index(b"\n", pos + 1)
    return pos


def _split(block: bytes, nfields: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Start and end offsets of every field, shape (rows, fields), as the csv module splits a
    block of whole lines; None when a quote sits where the csv module would read it otherwise
    (inside an unquoted field, text after a closing quote, a line break inside quotes) or a
    line has another field count (blank lines included). Lines end in LF or CRLF."""
    buf = np.frombuffer(block, dtype=np.uint8)
    seps = np.flatnonzero((buf == 44) | (buf == 10))
    quotes = np.flatnonzero(buf == 34)
    if quotes.size:
        if quotes.size % 2:
            return None
        opening, closing = quotes[0::2], quotes[1::2]
        before = buf[np.maximum(opening - 1, 0)]
        if not np.all((opening == 0) | (before == 44) | (before == 10) | (before == 34)):
            return None
        after = buf[np.minimum(closing + 1, len(buf) - 1)]
        if not np.all((after == 44) | (after == 10) | (after == 34)):
            return None
        inside = np.searchsorted(quotes, seps) % 2 == 1
        if np.any(inside & (buf[seps] == 10)):
            return None
        seps = seps[~inside]
    if seps.size % nfields:
        return None
    rows = seps.size // nfields
    grid = seps.reshape(rows, nfields)
    is_nl = buf[grid] == 10
    if not (np.all(is_nl[:, -1]) and not np.any(is_nl[:, :-1])):
        return None
    ends = grid.copy()
    ends[:, -1] -= buf[np.maximum(grid[:, -1] - 1, 0)] == 13  # CRLF line ends
    starts = np.empty_like(grid)
    starts[0, 0] = 0
    starts[1:, 0] = grid[:-1, -1] + 1
    starts[:, 1:] = grid[:, :-1] + 1
    return starts, ends


def _digits(block: bytes, s: np.ndarray, e: np.ndarray, width: int) -> tuple[np.ndarray, bool]:
    """Cells of 1..width ASCII digits (optionally in quotes) as int64; ok False if any is not."""
    buf = np.frombuffer(block, dtype=np.uint8)
    quoted = buf[s] == 34
    s = s + quoted
    e = e - quoted
    length = e - s
    if length.size and (length.min() < 1 or length.max() > width):
        return np.zeros(0, np.int64), False
    pos = e[:, None] - width + np.arange(width)[None, :]
    valid = pos >= s[:, None]
    d = buf[np.maximum(pos, 0)].astype(np.int64) - 48
    if np.any(valid & ((d < 0) | (d > 9))):
        return np.zeros(0, np.int64), False
    d[~valid] = 0
    return d @ (10 ** np.arange(width - 1, -1, -1, dtype=np.int64)), True


def check_rows_read(tc: TraceColumns) -> None:
    """A trace with a header and no rows is the row path's error, word for word."""
    if tc.rows_read == 0:
        raise InputError("no data rows (header only)", where=tc.where)
