"""rocprofv3's rocpd SQLite database (``--output-format rocpd``), read with the stdlib sqlite3.

The published schema (rocprofiler-sdk ``rocpd`` tables) suffixes every table with the session
uuid (``rocpd_kernel_dispatch<uuid>``) and adds plain-named views; both are accepted. Counter
values are summed per (dispatch, counter) - the database keeps one row per XCC/instance - and
rows are fetched with a cursor, never all at once.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from perfmodel.errors import InputError, excerpt, one_line
from perfmodel.readers import csvio
from perfmodel.readers.records import Dispatch, Workload

MAGIC = b"SQLite format 3\x00"
TABLES = (
    "rocpd_kernel_dispatch",
    "rocpd_info_kernel_symbol",
    "rocpd_info_agent",
    "rocpd_pmc_event",
    "rocpd_info_pmc",
)


def is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == MAGIC
    except OSError:
        return False


def _resolve(con: sqlite3.Connection, where: str) -> dict[str, str]:
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")]
    out = {}
    for t in TABLES:
        if t in names:
            out[t] = t
            continue
        cands = [
            n
            for n in names
            if n.startswith(t) and not any(n.startswith(o) for o in TABLES if o != t and len(o) > len(t))
        ]
        if len(cands) != 1:
            raise InputError(
                f"not a rocpd database: table {t} {'missing' if not cands else 'ambiguous'} (wrong schema)",
                where=where,
            )
        out[t] = cands[0]
    return out


def _gfx(name: str | None, extdata: str | None) -> str:
    if name and name.lower().startswith("gfx"):
        return name.lower()
    try:
        ext = json.loads(extdata or "{}")
    except ValueError:
        return ""
    v = ext.get("name") or ext.get("gfx_target") or ""
    return str(v).lower() if str(v).lower().startswith("gfx") else ""


def databases(path: Path) -> list[Path]:
    """The rocpd databases directly in a directory, recognised by magic bytes, not name alone."""
    return [q for q in sorted(path.glob("*.db")) if is_sqlite(q)]


def is_rocpd(path: Path) -> bool:
    """A database file, or a directory holding exactly one (with two, which one is meant?)."""
    return len(databases(path)) == 1 if path.is_dir() else is_sqlite(path)


def read_file_or_dir(path: Path) -> Workload:
    """Read a database given by itself or by the directory holding it."""
    return read(path if path.is_file() else databases(path)[0])


_DISPATCHES = """
    SELECT K.id, K.dispatch_id, K.agent_id, S.kernel_name, K.start, K."end",
           K.grid_size_x * K.grid_size_y * K.grid_size_z,
           K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z,
           K.group_segment_size, S.arch_vgpr_count, S.accum_vgpr_count, S.sgpr_count,
           A.name, A.extdata, A.product_name
    FROM {rocpd_kernel_dispatch} K
    JOIN {rocpd_info_kernel_symbol} S ON S.id = K.kernel_id
    JOIN {rocpd_info_agent} A ON A.id = K.agent_id
    ORDER BY K.start"""

# summed in SQL: the database keeps one row per XCC / instance of a counter
_COUNTERS = """
    SELECT K.id, I.name, SUM(E.value)
    FROM {rocpd_pmc_event} E
    JOIN {rocpd_info_pmc} I ON I.id = E.pmc_id
    JOIN {rocpd_kernel_dispatch} K ON K.event_id = E.event_id
    GROUP BY K.id, I.name"""


def read(path: Path) -> Workload:
    """Every kernel dispatch of one database with its counters; one GPU target only."""
    where = str(path)
    if not is_sqlite(path):
        raise InputError("not an SQLite database", where=where)
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise InputError(f"cannot open database ({e})", where=where) from None
    wl = Workload(path=where, format="rocpd sqlite")
    try:
        tables = _resolve(con, where)
        dispatches = _read_dispatches(con, tables, path, wl)
        _add_counters(con, tables, dispatches, where)
    except (sqlite3.Error, UnicodeDecodeError) as e:  # a corrupted sqlite_master decodes badly
        raise InputError(f"not a readable rocpd database ({one_line(str(e), 120)})", where=where) from None
    finally:
        con.close()
    if not dispatches:
        raise InputError("database holds no kernel dispatches", where=where)
    wl.dispatches = list(dispatches.values())
    return wl


def _whole(v, field: str, row: int, where: str, required: bool = False) -> int | None:
    """An integer column's value: NULL -> None, text/blob/inf/nan -> one error line."""
    if v is None:
        if required:
            raise InputError(f"dispatch row {row}: {field} is NULL (expected an integer)", where=where)
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not abs(v) <= csvio.MAX_CELL:
        raise InputError(f"dispatch row {row}: {field} = {excerpt(v, 40)} (expected an integer)", where=where)
    return int(v)


def _read_dispatches(
    con: sqlite3.Connection, tables: dict[str, str], path: Path, wl: Workload
) -> dict[int, Dispatch]:
    """Dispatches by row id, in start order; sets ``wl.gfx``. A second GPU target is an error."""
    where = str(path)
    dispatches: dict[int, Dispatch] = {}
    gfxs: set[str] = set()
    for row in con.execute(_DISPATCHES.format(**tables)):
        kid, did, agent, kname, start, end, grid, wg, lds, avgpr, accv, sgpr, aname, aext, product = row
        g = _gfx(aname if isinstance(aname, str) else None, aext if isinstance(aext, str) else None)
        gfxs.add(g or str(agent))
        if len(gfxs) > 1:
            raise InputError(
                f"mixed GPUs in one database ({', '.join(sorted(gfxs))}); filter one agent", where=where
            )
        if not isinstance(kname, str):
            raise InputError(f"kernel_name of kernel {kid}: expected text, got {type(kname).__name__}", where=where)

        dispatches[kid] = Dispatch(
            kernel=csvio.clean_kernel(kname),
            index=_whole(did, "dispatch_id", kid, where, required=True),
            grid=_whole(grid, "grid_size", kid, where) or 0,
            workgroup=_whole(wg, "workgroup_size", kid, where) or 0,
            begin_ns=_whole(start, "start", kid, where),
            end_ns=_whole(end, "end", kid, where),
            gpu=str(agent),
            source=where,
            time_source=f"{path.name}: rocpd_kernel_dispatch start/end (counter pass)",
            lds_bytes=_whole(lds, "group_segment_size", kid, where) or 0,
            vgprs=(_whole(avgpr, "arch_vgpr_count", kid, where) or 0) + (_whole(accv, "accum_vgpr_count", kid, where) or 0),
            sgprs=_whole(sgpr, "sgpr_count", kid, where) or 0,
        )
        wl.gfx = g
        if isinstance(product, str) and product.strip():
            wl.sysinfo.setdefault("gpu_model", product.strip())
    return dispatches


def _add_counters(
    con: sqlite3.Connection, tables: dict[str, str], dispatches: dict[int, Dispatch], where: str
) -> None:
    """Each dispatch's counter totals; a non-numeric value is an error, not a silent zero."""
    for kid, name, value in con.execute(_COUNTERS.format(**tables)):
        d = dispatches.get(kid)
        if d is None:
            continue
        if value is None or not isinstance(value, (int, float)) or not abs(value) <= csvio.MAX_CELL:
            raise InputError(
                f"counter {excerpt(name, 40)} of dispatch {d.index}: value {excerpt(value, 40)}"
                " (expected a finite number)",
                where=where,
            )
        d.counters[str(name)] = float(value)
