"""Streaming CSV helpers shared by the readers: header aliases, row checks, numeric cells.

Rows are read one at a time with the csv module, so a multi-GB trace is never held in memory
as text. Every problem becomes an InputError naming file, line and column.
"""

from __future__ import annotations

import csv
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

from perfmodel.errors import InputError, excerpt, one_line
from perfmodel.readers.opening import open_by_content

# rocprof v1 / v2 / v3 / rocpd spellings -> one canonical name (rocprof-compute's).
ALIASES = {
    "Index": "Dispatch_ID",
    "Dispatch_Id": "Dispatch_ID",
    "KernelName": "Kernel_Name",
    "kernel_name": "Kernel_Name",
    "gpu-id": "GPU_ID",
    "Agent_Id": "GPU_ID",
    "grd": "Grid_Size",
    "GRD": "Grid_Size",
    "wgr": "Workgroup_Size",
    "WGR": "Workgroup_Size",
    "lds": "LDS_Per_Workgroup",
    "LDS": "LDS_Per_Workgroup",
    "LDS_Block_Size": "LDS_Per_Workgroup",
    "Lds_Block_Size": "LDS_Per_Workgroup",
    "scr": "Scratch_Per_Workitem",
    "SCR": "Scratch_Per_Workitem",
    "Scratch_Size": "Scratch_Per_Workitem",
    "vgpr": "Arch_VGPR",
    "arch_vgpr": "Arch_VGPR",
    "VGPR_Count": "Arch_VGPR",
    "Vgpr_Count": "Arch_VGPR",
    "accum_vgpr": "Accum_VGPR",
    "ACCUM_VGPR": "Accum_VGPR",
    "Accum_VGPR_Count": "Accum_VGPR",
    "sgpr": "SGPR",
    "SGPR_Count": "SGPR",
    "Sgpr_Count": "SGPR",
    "wave_size": "Wave_Size",
    "BeginNs": "Start_Timestamp",
    "EndNs": "End_Timestamp",
    "Correlation_Id": "Correlation_ID",
    "Kernel_Id": "Kernel_ID",
    "queue-id": "Queue_ID",
    "Queue_Id": "Queue_ID",
    "queue-index": "Queue_Index",
    "pid": "PID",
    "Process_Id": "PID",
    "tid": "TID",
    "Thread_Id": "TID",
}

# Columns that describe the dispatch, not a counter (canonical names).
METADATA = {
    "Dispatch_ID",
    "Kernel_Name",
    "GPU_ID",
    "Grid_Size",
    "Workgroup_Size",
    "LDS_Per_Workgroup",
    "Scratch_Per_Workitem",
    "Arch_VGPR",
    "Accum_VGPR",
    "SGPR",
    "Wave_Size",
    "Start_Timestamp",
    "End_Timestamp",
    "Correlation_ID",
    "Kernel_ID",
    "Queue_ID",
    "Queue_Index",
    "PID",
    "TID",
    "fbar",
    "sig",
    "obj",
    "DispatchNs",
    "CompleteNs",
    "XCC_Index",
    "GUID",
    "Node_Id",
    "Counter_Name",
    "Counter_Value",
    "Stream_Id",
    "Kind",
    "Private_Segment_Size",
    "Group_Segment_Size",
    "Grid_Size_X",
    "Grid_Size_Y",
    "Grid_Size_Z",
    "Workgroup_Size_X",
    "Workgroup_Size_Y",
    "Workgroup_Size_Z",
    "Guid",
}
_SUFFIX = re.compile(r"^(.*)_(\d+)$")


def canonical(name: str) -> str:
    name = name.strip()
    return ALIASES.get(name, name)


def is_metadata(name: str) -> bool:
    """True for dispatch-description columns, including merged-pass copies like ``Wave_Size_1``."""
    if name in METADATA or name == "":
        return True
    m = _SUFFIX.match(name)
    return bool(m and canonical(m.group(1)) in METADATA)


def clean_kernel(name: str) -> str:
    """One spelling of a kernel name across rocprof versions (drop the ``.kd`` decorations)."""
    name = name.strip().strip('"')
    for suffix in (" [clone .kd]", " (.kd)", ".kd"):
        if name.endswith(suffix):
            return name[: -len(suffix)].rstrip()
    return name


def rows(path: Path) -> tuple[list[str], Rows]:
    """Canonical header and a row iterator ``(line_no, cells)``; checks shape as it streams."""
    where = str(path)
    fh = None
    try:
        if path.is_dir():
            raise InputError("is a directory; expected a CSV file", where=where)
        if path.stat().st_size == 0:
            raise InputError("file is empty", where=where)
        fh = open_by_content(path, text=True, encoding="utf-8-sig", newline="")  # file.csv.gz too
        reader = csv.reader(fh)
        header = next(reader, None)
    except UnicodeDecodeError:
        fh.close()
        raise InputError("not a UTF-8 text CSV file", where=where) from None
    except csv.Error as e:
        fh.close()
        raise InputError(f"malformed CSV header ({one_line(str(e), 80)})", where=where) from None
    except (OSError, EOFError, zlib.error) as e:
        if fh is not None:
            fh.close()
        raise InputError(f"cannot read the file ({getattr(e, 'strerror', None) or e})", where=where) from None
    if not header or not any(h.strip() for h in header):
        fh.close()
        raise InputError("no CSV header line", where=where)
    header = [canonical(h) for h in header]
    # trailing empty header names come from a trailing comma; rows may omit them
    n_named = len(header)
    while n_named and header[n_named - 1] == "":
        n_named -= 1

    def it() -> Iterator[tuple[int, list[str]]]:
        with fh:  # Rows (below) also closes fh when the iteration never starts
            line = 1
            try:
                for row in reader:
                    line = reader.line_num
                    if not row or (len(row) == 1 and not row[0].strip()):
                        continue
                    if len(row) < n_named or len(row) > len(header):
                        raise InputError(
                            f"line {line} has {len(row)} fields, the header has {n_named}"
                            " (truncated or malformed row)",
                            where=where,
                        )
                    yield line, row
            except UnicodeDecodeError:
                raise InputError(f"line {line + 1}: not UTF-8 text", where=where) from None
            except csv.Error as e:
                raise InputError(f"line {reader.line_num}: malformed CSV ({e})", where=where) from None
            except (EOFError, OSError, zlib.error) as e:  # a truncated or corrupt .gz
                raise InputError(
                    f"line {line + 1}: cannot read further, truncated or corrupt ({one_line(str(e), 80)})", where=where
                ) from None

    return header, Rows(fh, it())


class Rows:
    """The row iterator of :func:`rows`; it closes the file when exhausted, closed or dropped,
    also when a reader stops at the header (a missing column) and never iterates."""

    def __init__(self, fh, gen: Iterator[tuple[int, list[str]]]) -> None:
        import weakref

        self.gen = gen
        # a finalizer, not __del__: it runs before the file's own when both are garbage in a
        # cycle (an exception's traceback holding the reader's frame), so the file is closed
        self._close = weakref.finalize(self, fh.close)

    def __iter__(self) -> Rows:
        return self

    def __next__(self) -> tuple[int, list[str]]:
        return next(self.gen)

    def close(self) -> None:
        self.gen.close()
        self._close()


def header(path: Path) -> list[str]:
    """The canonical header of a CSV file (the file is closed again at once)."""
    h, it = rows(path)
    it.close()
    return h


# No counter, size or timestamp exceeds a 64-bit register: a larger cell is corrupt, and inf or
# nan would turn into "nan GB/s" or an OverflowError further on.
MAX_CELL = 2.0**64


def number(text: str, *, where: str, column: str, line: int) -> float:
    """A finite numeric cell within a 64-bit counter's range, or an InputError naming the file,
    line and column."""
    t = text.strip()
    try:
        v = float(t)
    except ValueError:
        what = "an empty cell" if not t else f"non-numeric value {excerpt(t, 40)}"
        raise InputError(f"line {line}, column {column}: {what} (expected a number)", where=where) from None
    if not abs(v) <= MAX_CELL:  # also false for nan
        raise InputError(
            f"line {line}, column {column}: {excerpt(t, 40)} is not a finite number within a 64-bit counter's range",
            where=where,
        )
    return v


def timestamp(text: str, *, where: str, column: str, line: int, flags: list[str]) -> float | None:
    """A timestamp in ns; float notation (``1.62068E+14``) has lost its precision: flag it."""
    t = text.strip()
    if not t:
        flags.append(f"corrupt-timestamp: empty {column}")
        return None
    if t.isdigit() and len(t) <= 20:
        return int(t)  # ns since boot exceed 2**53: a float would lose the last digits
    v = number(t, where=where, column=column, line=line)
    if "e" in t.lower():
        flags.append(f"corrupt-timestamp: {column} saved in float notation ({t}), precision lost")
    return v


def require(header: list[str], cols: tuple[str, ...], where: str, what: str) -> None:
    missing = [c for c in cols if c not in header]
    if missing:
        raise InputError(f"{what} needs column(s) {', '.join(missing)}", where=where)


def columns(header: list[str]) -> dict[str, int]:
    """Column index by canonical name; blank names (a trailing comma) are not columns."""
    return {h: i for i, h in enumerate(header) if h}


_AGENT = re.compile(r"(?:agent|gpu)[\s_-]*(\d+)", re.IGNORECASE)


def agent_id(text: str) -> str:
    """One spelling of a GPU agent id across profiler versions: rocprofv3 wrote ``Agent_Id`` as
    an integer (``4``), newer versions write ``Agent 4``; a CSV that went through a float column
    has ``4.0``. All become ``"4"``, so a kernel trace and a counter collection written by
    different versions still name the same GPU. Anything else is kept as written (stripped)."""
    t = text.strip()
    m = _AGENT.fullmatch(t)
    if m:
        return str(int(m.group(1)))
    if t.isdigit():
        return str(int(t))
    try:
        v = float(t)
    except ValueError:
        return t
    return str(int(v)) if v.is_integer() and 0 <= v < 2**63 else t


def check_one_gpu(seen: set[str], gpu: str, where: str) -> None:
    """Add ``gpu`` to ``seen``; a second GPU is an error: one workload describes one device."""
    seen.add(gpu)
    if len(seen) > 1:
        raise InputError(
            f"mixed GPUs in one file (GPU_ID {', '.join(sorted(seen))}); split it per GPU", where=where
        )


class Cells:
    """One row addressed by canonical column name.

    Every reader asks a row the same things (text, a number that may be absent, a timestamp);
    asking here keeps the errors alike: file, line and column, one line.
    """

    def __init__(self, row: list[str], col: dict[str, int], where: str, line: int) -> None:
        self.row, self.col, self.where, self.line = row, col, where, line

    def text(self, name: str) -> str:
        """The cell as written, or "" when the file has no such column."""
        i = self.col.get(name)
        return self.row[i] if i is not None and i < len(self.row) else ""

    def number(self, name: str, default: float | None = 0.0) -> float:
        """The cell as a number; ``default`` for an absent column or blank cell (None: required)."""
        t = self.text(name)
        if default is not None and not t.strip():
            return default
        return number(t, where=self.where, column=name, line=self.line)

    def agent(self) -> str:
        """The row's GPU agent id, normalised (:func:`agent_id`); "" when not recorded."""
        return agent_id(self.text("GPU_ID"))

    def integer(self, name: str) -> int:
        """A count (grid, workgroup, registers); 0 when not recorded."""
        return int(self.number(name))

    def timestamp(self, name: str, flags: list[str]) -> float | None:
        """A timestamp in ns (see :func:`timestamp`); precision problems go to ``flags``."""
        return timestamp(self.text(name), where=self.where, column=name, line=self.line, flags=flags)
