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
from perfmodel.readers.opening import open_by_content

# Columns that are the same for every dispatch of one launch configuration (canonical names);
# a trace groups by their raw text.
LAUNCH_COLUMNS = (
    "Kernel_Name",
    "Grid_Size", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z",
    "Workgroup_Size", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
    "LDS_Per_Workgroup", "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR",
    "Group_Segment_Size", "Private_Segment_Size", "Accum_Vgpr_Count",
)  # fmt: skip  -- every spelling the occupancy reads (trace_occupancy.ALIASES), canonical
ROW_COLUMNS = ("Dispatch_ID", "Start_Timestamp", "End_Timestamp")
BLOCK_BYTES = 2 << 20  # a chunk is the whole lines of about this many bytes (10-15k trace rows; 8 MiB: same speed, 2.4x the memory)
CHUNK_ROWS: int | None = None  # or at most this many rows (tests: chunk boundaries everywhere)
MAX_ID_DIGITS = 15  # a Dispatch_ID goes through float() in the row path: exact below 2**53
MAX_TS_DIGITS = 18  # timestamps are ints in the row path; int64 holds 18 digits


@dataclass
class Chunk:
    """Consecutive rows of one trace file (a block of whole lines).

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

    def __init__(self, path: Path, chunk_rows: int | None = None, block_bytes: int | None = None):
        self.path = path
        self.where = str(path)
        rows = CHUNK_ROWS if chunk_rows is None else chunk_rows
        self.chunk_rows = None if rows is None else max(1, rows)
        self.block_bytes = max(1024, BLOCK_BYTES if block_bytes is None else block_bytes)
        header, rows = csvio.rows(path)
        rows.close()
        csvio.require(header, ("Kernel_Name", "Start_Timestamp", "End_Timestamp"), self.where, "a kernel trace")
        self.header = header
        self.col = csvio.columns(header)
        self.per_axis = "Grid_Size_X" in self.col
        self.runs: list[list[int]] = []  # launch columns, consecutive ones as one span
        for i in (i for i, h in enumerate(header) if h in LAUNCH_COLUMNS):
            if self.runs and self.runs[-1][-1] == i - 1:
                self.runs[-1].append(i)
            else:
                self.runs.append([i])
        self.raw_header: list[str] = []
        self.bom = False
        self.rows_read = 0  # data rows handed out so far (the row path's ordinal n)

    def _open(self):
        return open_by_content(self.path)

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
                if not eof and (len(rest) < self.block_bytes or b"\n" not in rest):
                    more = fh.read(self.block_bytes)
                    rest += more
                    eof = not more
                if not rest:
                    return
                cut = self._cut(rest)
                if cut < 0:  # no whole line yet, or a last line without a line break
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

    def _cut(self, buf: bytes) -> int:
        """Where the next chunk ends: the last line break, or the chunk_rows-th one."""
        if self.chunk_rows is None:
            return buf.rfind(b"\n")
        nls = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8) == 10)
        if not len(nls):
            return -1
        return int(nls[min(self.chunk_rows, len(nls)) - 1])

    def _chunk(self, block: bytes, table: dict) -> Chunk:
        """One block of whole lines as columns, or a fallback marker when it is not plain."""
        first = self._next_line
        fallback = Chunk(fallback=first)
        if b"\0" in block:
            return fallback
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
        """Row -> launch-key id (first-seen order in the file) and the cells of new keys. Rows
        are grouped by the exact bytes of their key spans in numpy (`_group_spans`); only one
        row per distinct key in the chunk is sliced and looked up in ``table``."""
        runs = self.runs
        s_runs = [starts[:, r[0]] for r in runs]
        e_runs = [ends[:, r[-1]] for r in runs]
        grouped = _group_spans(block, s_runs, e_runs)
        if grouped is None:  # very long keys: slice every row
            local = None
            reps = range(len(starts))
        else:
            local, reps = grouped
        s_list = [x.tolist() for x in s_runs] if grouped is None else [x[reps].tolist() for x in s_runs]
        e_list = [x.tolist() for x in e_runs] if grouped is None else [x[reps].tolist() for x in e_runs]
        ids = np.empty(len(s_list[0]), dtype=np.int64)
        new: list[tuple[int, dict[str, str], dict[str, str]]] = []
        for j, row in enumerate(reps if grouped is None else reps.tolist()):
            spans = tuple(block[s_list[k][j] : e_list[k][j]] for k in range(len(runs)))
            kid = table.get(spans)
            if kid is None:
                kid = table[spans] = len(table)
                new.append((row, *self._cells(spans)))
            ids[j] = kid
        return (ids if local is None else ids[local]), new

    def _cells(self, spans: tuple[bytes, ...]) -> tuple[dict[str, str], dict[str, str]]:
        """The cells of one launch key by canonical and by raw header name (csv module rules)."""
        canon: dict[str, str] = {}
        raw: dict[str, str] = {}
        for r, span in zip(self.runs, spans, strict=True):
            text = span.decode("utf-8")
            cells = next(csv.reader([text]), []) if text else [""]
            if len(cells) != len(r):
                raise csv.Error("span does not split as its row")
            for i, cell in zip(r, cells, strict=True):
                canon[self.header[i]] = cell
                raw[self.raw_header[i]] = cell
        return canon, raw


MAX_KEY_BYTES = 1024  # longer launch keys are sliced row by row (a gather would be too large)
HASH_MULTIPLIER = 0x9E3779B97F4A7C15  # tests set 0 to force collisions


def _by_length(lengths: np.ndarray):
    """(length, rows) for each distinct length; rows in file order."""
    order = np.argsort(lengths, kind="stable")
    sorted_len = lengths[order]
    cuts = np.flatnonzero(np.diff(sorted_len)) + 1
    for rows in np.split(order, cuts):
        if len(rows):
            yield int(lengths[rows[0]]), rows


def _window(buf: np.ndarray, s: np.ndarray, width: int) -> np.ndarray:
    """buf[s_i : s_i + width] for every row, as a (rows, width) matrix (one gather per row)."""
    return np.lib.stride_tricks.sliding_window_view(buf, width)[s]


def _group_spans(block: bytes, s_runs: list[np.ndarray], e_runs: list[np.ndarray]):
    """Rows with byte-identical spans (one span per run of launch columns) as one group:
    (group of each row, first row of each group), groups numbered by first row; None when the
    spans are too long or too varied to gather. Rows are split by span lengths; within one
    length the spans are gathered, hashed per row, and the hash groups checked byte for byte
    against their first row, so a hash collision can only cost speed (None), never merge two
    keys."""
    n = len(s_runs[0])
    lens = np.stack([e - s for s, e in zip(s_runs, e_runs, strict=True)], axis=1)
    if not n or int(lens.sum(axis=1).max()) > MAX_KEY_BYTES:
        return None
    code = np.zeros(n, dtype=np.int64)
    for r in range(lens.shape[1]):
        code = code * (MAX_KEY_BYTES + 1) + lens[:, r]  # lengths <= MAX_KEY_BYTES: one int per row
    buf = np.frombuffer(block, dtype=np.uint8)
    group = np.empty(n, dtype=np.int64)
    firsts: list[np.ndarray] = []
    count = 0
    for _, rows in _by_length(code):
        widths = lens[rows[0]].tolist()
        parts = [_window(buf, s[rows], w) for s, w in zip(s_runs, widths, strict=True) if w]
        total = sum(widths)
        if total % 8 or not parts:
            parts.append(np.zeros((len(rows), 8 - total % 8), dtype=np.uint8))
        words = np.ascontiguousarray(np.concatenate(parts, axis=1)).view(np.uint64)
        h = words[:, 0].copy()
        for j in range(1, words.shape[1]):
            h *= np.uint64(HASH_MULTIPLIER)
            h ^= words[:, j]
        _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        if not np.array_equal(words, words[first[inverse]]):
            return None  # a hash collision: slice every row
        group[rows] = count + inverse
        firsts.append(rows[first])
        count += len(first)
        if len(firsts) > 256:
            return None  # too many distinct lengths to loop over
    first_rows = np.concatenate(firsts)
    order = np.argsort(first_rows)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[group], first_rows[order]


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
        # separators inside quotes: between an opening quote (even) and the next (odd) one
        at = np.searchsorted(seps, quotes)
        delta = np.bincount(at[0::2], minlength=len(seps) + 1) - np.bincount(at[1::2], minlength=len(seps) + 1)
        inside = np.cumsum(delta[:-1]) > 0
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
    crlf = buf[np.maximum(grid[:, -1] - 1, 0)] == 13
    if b"\r" in block and block.count(b"\r") != int(np.count_nonzero(crlf)):
        return None  # a CR that does not end a line
    ends[:, -1] -= crlf
    starts = np.empty_like(grid)
    starts[0, 0] = 0
    starts[1:, 0] = grid[:-1, -1] + 1
    starts[:, 1:] = grid[:, :-1] + 1
    return starts, ends


def _digits(block: bytes, s: np.ndarray, e: np.ndarray, width: int) -> tuple[np.ndarray, bool]:
    """Cells of 1..width ASCII digits (optionally in quotes) as int64; ok False if any is not.
    Cells of one length are gathered as a (rows, length) matrix and weighed by powers of ten,
    nine digits at a time in float64 (exact: every partial sum is an integer below 1e9)."""
    buf = np.frombuffer(block, dtype=np.uint8)
    quoted = buf[s] == 34
    s = s + quoted
    length = e - quoted - s
    if length.size and (length.min() < 1 or length.max() > width):
        return np.zeros(0, np.int64), False
    value = np.empty(len(s), dtype=np.int64)
    for w, rows in _by_length(length):
        d = _window(buf, s[rows], w) - np.uint8(48)  # wraps below '0': > 9 too
        if np.any(d > 9):
            return np.zeros(0, np.int64), False
        v = np.zeros(len(rows), dtype=np.int64)
        for lo in range(0, w, 9):
            k = min(9, w - lo)
            part = d[:, lo : lo + k].astype(np.float64) @ (10.0 ** np.arange(k - 1, -1, -1))
            v = v * 10**k + part.astype(np.int64)
        value[rows] = v
    return value, True


def check_rows_read(tc: TraceColumns) -> None:
    """A trace with a header and no rows is the row path's error, word for word."""
    if tc.rows_read == 0:
        raise InputError("no data rows (header only)", where=tc.where)
