"""Occupancy per kernel from the register and LDS columns of a rocprofv3 kernel trace.

rocprofv3's ``*_kernel_trace.csv`` (and the counter-collection CSV) carry, per dispatch,
``VGPR_Count``, ``Accum_VGPR_Count``, ``SGPR_Count``, ``LDS_Block_Size``, ``Scratch_Size`` and the
workgroup size (``Workgroup_Size_X/Y/Z`` or ``Workgroup_Size``); older builds name LDS and
scratch ``Group_Segment_Size`` / ``Private_Segment_Size``. This helper turns them into waves per
SIMD with the limiting resource, using the same rules as `perfmodel kernel inspect`, so
`validate` can show the occupancy each measured kernel really had. VGPR_Count is taken as the
architectural VGPRs and Accum_VGPR_Count as the AGPRs; on gfx90a and later the unified total
is align(VGPRs, 4) + AGPRs.
"""

from __future__ import annotations

import csv
import zlib
from pathlib import Path

from perfmodel.errors import InputError

ALIASES = {
    "vgpr": ("VGPR_Count", "Vgpr_Count", "Arch_VGPR", "arch_vgpr"),
    "agpr": ("Accum_VGPR_Count", "Accum_Vgpr_Count", "Accum_VGPR", "accum_vgpr"),
    "sgpr": ("SGPR_Count", "Sgpr_Count", "SGPR", "sgpr"),
    "lds": ("LDS_Block_Size", "Lds_Block_Size", "Group_Segment_Size", "LDS_Per_Workgroup", "lds"),
    "scratch": ("Scratch_Size", "Private_Segment_Size", "Scratch_Per_Workitem", "scr"),
    "kernel": ("Kernel_Name", "KernelName"),
}


def _col(header: list[str], what: str) -> str | None:
    return next((h for h in ALIASES[what] if h in header), None)


def columns(header: list[str], where: str) -> dict[str, str | None]:
    """The header name of each resource column; the kernel, VGPR and LDS ones are required."""
    cols = {w: _col(header, w) for w in ALIASES}
    for w in ("kernel", "vgpr", "lds"):
        if cols[w] is None:
            raise InputError(f"no {' / '.join(ALIASES[w])} column (a rocprofv3 kernel trace has one)", where=where)
    return cols


def _int(text, where: str, key: str) -> int:
    try:
        return int(float(text))
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"expected a number, got {text!r}", where=where, key=key) from None


def resource_key(r: dict, cols: dict[str, str | None], where: str) -> tuple:
    """(kernel, vgpr, agpr, sgpr, lds, scratch, workgroup size) of one row (a dict by header
    name, as csv.DictReader gives); blank cells count 0, a blank workgroup axis 1."""

    def num(w):
        c = cols[w]
        if c is None or not str(r.get(c, "")).strip():
            return 0
        return _int(r[c], where, c)

    if "Workgroup_Size_X" in r:
        wg = 1
        for a in "XYZ":
            wg *= max(1, _int(r.get(f"Workgroup_Size_{a}") or 1, where, f"Workgroup_Size_{a}"))
    else:
        wg = _int(r.get("Workgroup_Size") or r.get("wgr") or 0, where, "Workgroup_Size")
    return (r[cols["kernel"]], num("vgpr"), num("agpr"), num("sgpr"), num("lds"), num("scratch"), wg)


class OccupancyTable:
    """Distinct (kernel, resources) in first-seen order, with their dispatch counts: what
    `kernel_occupancy` returns, filled row by row or (the columnar trace reader) key by key."""

    def __init__(self, arch):
        self.arch = arch
        self.seen: dict[tuple, dict] = {}

    def add(self, key: tuple, where: str, n: int = 1) -> None:
        from perfmodel.inspect.occupancy import occupancy

        if key in self.seen:
            self.seen[key]["dispatches"] += n
            return
        wg = key[6]
        if wg <= 0:
            raise InputError("no workgroup size for this dispatch", where=where, key="Workgroup_Size")
        occ = occupancy(self.arch, vgprs=key[1], agprs=key[2], sgprs=key[3], lds_bytes=key[4], workgroup_size=wg,
                        vgprs_include_agprs=False)  # fmt: skip
        self.seen[key] = {
            "kernel": key[0], "vgpr": key[1], "agpr": key[2], "sgpr": key[3], "lds": key[4], "scratch": key[5],
            "workgroup_size": wg, "waves_per_simd": occ.waves_per_simd, "occupancy_pct": round(occ.occupancy_pct, 1),
            "limiter": occ.limiter, "dispatches": n,
        }  # fmt: skip

    def rows(self) -> list[dict]:
        return list(self.seen.values())


def trace_files(path: str | Path) -> list[Path]:
    """The kernel traces `kernel_occupancy` reads at ``path`` (``.csv`` or ``.csv.gz``)."""
    from perfmodel.readers.rocprof_v3 import find

    p = Path(path)
    return find(p, "*_kernel_trace.csv") if p.is_dir() else [p]


def _is_trace_name(p: Path) -> bool:
    return p.name.endswith(("_kernel_trace.csv", "_kernel_trace.csv.gz"))


def validate_traces(path: str | Path) -> list[Path]:
    """The traces `perfmodel validate` reports the occupancy of: under a folder that holds a
    ``*_kernel_trace.csv``, or the file itself when its name says so; none otherwise."""
    p = Path(path)
    if p.is_dir() or _is_trace_name(p):
        return trace_files(p)
    return []


def _open_text(f: Path):
    """A trace as text (gzip by content), a UTF-8 BOM dropped from the header."""
    from perfmodel.readers.opening import open_by_content

    return open_by_content(f, text=True, encoding="utf-8-sig", newline="")


def kernel_occupancy(path: str | Path, arch) -> list[dict]:
    """One row per distinct (kernel, resources) in the trace: registers, LDS, scratch, occupancy.
    Rows stream (memory does not grow with the number of dispatches)."""
    p = Path(path)
    files = trace_files(p)
    if not files:
        raise InputError("no *_kernel_trace.csv here", where=str(p))
    table = OccupancyTable(arch)
    for f in files:
        try:
            with _open_text(f) as fh:
                cols = None
                for line, r in enumerate(csv.DictReader(fh), 2):
                    if cols is None:
                        cols = columns(list(r.keys()), str(f))
                    where = f"{f}:{line}"
                    table.add(resource_key(r, cols, where), where)
        except OSError as e:
            raise InputError(f"cannot read ({e.strerror})", where=str(f)) from None
        except (UnicodeDecodeError, csv.Error, EOFError, zlib.error) as e:
            raise InputError(f"cannot read as CSV text ({type(e).__name__})", where=str(f)) from None
    return table.rows()
