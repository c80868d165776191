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

from perfmodel.errors import InputError
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
           A.name, A.extdata
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
    except sqlite3.DatabaseError as e:
        raise InputError(f"not a readable rocpd database ({e})", where=where) from None
    finally:
        con.close()
    if not dispatches:
        raise InputError("database holds no kernel dispatches", where=where)
    wl.dispatches = list(dispatches.values())
    return wl


def _read_dispatches(
    con: sqlite3.Connection, tables: dict[str, str], path: Path, wl: Workload
) -> dict[int, Dispatch]:
    """Dispatches by row id, in start order; sets ``wl.gfx``. A second GPU target is an error."""
    where = str(path)
    dispatches: dict[int, Dispatch] = {}
    gfxs: set[str] = set()
    for row in con.execute(_DISPATCHES.format(**tables)):
        kid, did, agent, kname, start, end, grid, wg, lds, avgpr, accv, sgpr, aname, aext = row
        g = _gfx(aname, aext)
        gfxs.add(g or str(agent))
        if len(gfxs) > 1:
            raise InputError(
                f"mixed GPUs in one database ({', '.join(sorted(gfxs))}); filter one agent", where=where
            )
        dispatches[kid] = Dispatch(
            kernel=csvio.clean_kernel(kname or ""),
            index=int(did),
            grid=int(grid or 0),
            workgroup=int(wg or 0),
            begin_ns=int(start) if start is not None else None,
            end_ns=int(end) if end is not None else None,
            gpu=str(agent),
            source=where,
            time_source=f"{path.name}: rocpd_kernel_dispatch start/end (counter pass)",
            lds_bytes=int(lds or 0),
            vgprs=int(avgpr or 0) + int(accv or 0),
            sgprs=int(sgpr or 0),
        )
        wl.gfx = g
    return dispatches


def _add_counters(
    con: sqlite3.Connection, tables: dict[str, str], dispatches: dict[int, Dispatch], where: str
) -> None:
    """Each dispatch's counter totals; a non-numeric value is an error, not a silent zero."""
    for kid, name, value in con.execute(_COUNTERS.format(**tables)):
        d = dispatches.get(kid)
        if d is None:
            continue
        if value is None or not isinstance(value, (int, float)):
            raise InputError(
                f"counter {name} of dispatch {d.index}: non-numeric value {value!r}", where=where
            )
        d.counters[str(name)] = float(value)
