"""rocprofv3's rocpd SQLite database (``--output-format rocpd``), read with the stdlib sqlite3.

The published schema (rocprofiler-sdk ``rocpd`` tables) suffixes every table with the session
uuid (``rocpd_kernel_dispatch<uuid>``) and adds plain-named views; both are accepted.

Dispatches stream from one SQL query: a grouped subquery sums the rows of each (event,
counter) - the database keeps one row per XCC/instance - a second grouping pivots those totals
into one column per counter name in use, and the pivot is LEFT JOINed to the dispatches in start
order, so each result row is one `Dispatch`. Nothing is kept per dispatch; every pass over
``Workload.dispatches`` runs the query again. SQLite allows 2,000 result columns and merged
rocprof-compute runs name ~2,000 counters, so past MAX_COLUMNS counters the same query runs once
per group of counters and the cursors are read in lockstep. (Packing the counters into one JSON
or text column instead would change values: SQLite's text form of a REAL keeps 15-16 digits.)
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from perfmodel.errors import InputError, excerpt, one_line
from perfmodel.readers import csvio
from perfmodel.readers.opening import connect_readonly, is_sqlite
from perfmodel.readers.records import Dispatch, Workload

TABLES = (
    "rocpd_kernel_dispatch",
    "rocpd_info_kernel_symbol",
    "rocpd_info_agent",
    "rocpd_pmc_event",
    "rocpd_info_pmc",
)


def resolve(con: sqlite3.Connection, where: str) -> dict[str, str]:
    """The name of each rocpd table (or plain view) in this database; InputError when one is missing."""
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


_FROM = """
    FROM {rocpd_kernel_dispatch} K
    JOIN {rocpd_info_kernel_symbol} S ON S.id = K.kernel_id
    JOIN {rocpd_info_agent} A ON A.id = K.agent_id"""

# the GPU agents dispatched to, and how many dispatches the stream will give
_AGENTS = "SELECT DISTINCT K.agent_id, A.name, A.extdata, A.product_name" + _FROM + " ORDER BY K.agent_id"
_COUNT = "SELECT COUNT(*)" + _FROM
_ALL = "SELECT COUNT(*) FROM {rocpd_kernel_dispatch}"
# the counters that hold values (rocpd_info_pmc may describe every counter of the GPU)
_IN_USE = "SELECT id, name FROM {rocpd_info_pmc} WHERE id IN (SELECT DISTINCT pmc_id FROM {rocpd_pmc_event})"

_DISPATCH = """K.id, K.dispatch_id, K.agent_id, S.kernel_name, K.start, K."end",
           K.grid_size_x * K.grid_size_y * K.grid_size_z,
           K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z,
           K.group_segment_size, S.arch_vgpr_count, S.accum_vgpr_count, S.sgpr_count, K.event_id"""
_N_DISPATCH = 13  # columns of _DISPATCH

# The pivot: the rows of one (event, counter) summed (one per XCC/instance), flagged when a
# cell is not a number (SUM would read text as 0 and skip NULL); then one row per event with a
# column per counter name, and the first counter holding such a cell.
_PIVOT = """
    SELECT G.event_id AS event_id, {columns}, MIN(CASE WHEN G.bad THEN G.pmc_id END) AS bad
    FROM (
        SELECT E.event_id AS event_id, E.pmc_id AS pmc_id, SUM(E.value) AS total,
               MAX(typeof(E.value) NOT IN ('integer', 'real')) AS bad
        FROM {rocpd_pmc_event} E
        WHERE E.pmc_id IN ({ids})
        GROUP BY E.event_id, E.pmc_id
    ) G
    GROUP BY G.event_id"""
_COLUMN = "SUM(CASE WHEN G.pmc_id IN ({ids}) THEN G.total END)"
MAX_COLUMNS = 500  # counter columns per query (SQLite allows 2,000 result columns); more run in lockstep


def _query(tables: dict[str, str], counters: list[tuple[str, list[int]]], dispatch: bool) -> str:
    """Dispatches in start order, each joined to its row of the pivot over ``counters`` (name,
    pmc ids); ``dispatch`` says whether the dispatch's own columns are selected."""
    head = _DISPATCH if dispatch else "K.id"
    if not counters:
        return f"SELECT {head} {_FROM.format(**tables)} ORDER BY K.start, K.id"
    ids = lambda group: ", ".join(str(int(i)) for i in group)  # noqa: E731
    columns = ", ".join(_COLUMN.format(ids=ids(g)) + f" AS c{j}" for j, (_, g) in enumerate(counters))
    pivot = _PIVOT.format(columns=columns, ids=ids(i for _, g in counters for i in g), **tables)
    return (
        f"SELECT {head}, P.* {_FROM.format(**tables)} LEFT JOIN ({pivot}) P ON P.event_id = K.event_id"
        " ORDER BY K.start, K.id"
    )


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return connect_readonly(path)
    except (sqlite3.Error, OSError) as e:
        raise InputError(f"cannot open database ({e})", where=str(path)) from None


def _unreadable(e: Exception, where: str) -> InputError:
    # a corrupted sqlite_master decodes badly (UnicodeDecodeError, no sqlite3.Error)
    return InputError(f"not a readable rocpd database ({one_line(str(e), 120)})", where=where)


def read(path: Path) -> Workload:
    """The database's GPU target and its dispatches as a stream (`Dispatches`); one GPU target only.

    The checks that need no pass over the counters run here: the schema, the agents (mixed GPU
    targets are an error), the dispatch count."""
    where = str(path)
    if not is_sqlite(path):
        raise InputError("not an SQLite database", where=where)
    con = _connect(path)
    wl = Workload(path=where, format="rocpd sqlite")
    try:
        tables = resolve(con, where)
        _read_agents(con, tables, wl)
        n = con.execute(_COUNT.format(**tables)).fetchone()[0]
        left_out = con.execute(_ALL.format(**tables)).fetchone()[0] - n
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise _unreadable(e, where) from None
    finally:
        con.close()
    if not n:
        raise InputError("database holds no kernel dispatches", where=where)
    if left_out:
        wl.notes.append(
            f"{left_out} dispatches name a kernel or agent the database does not describe: left out"
        )
    wl.dispatches = Dispatches(path, tables, n)
    return wl


def _read_agents(con: sqlite3.Connection, tables: dict[str, str], wl: Workload) -> None:
    """``wl.gfx`` and the GPU model from the agents dispatched to; a second GPU target is an error."""
    gfxs: set[str] = set()
    for agent, aname, aext, product in con.execute(_AGENTS.format(**tables)):
        g = _gfx(aname if isinstance(aname, str) else None, aext if isinstance(aext, str) else None)
        gfxs.add(g or str(agent))
        wl.gfx = g
        if isinstance(product, str) and product.strip():
            wl.sysinfo.setdefault("gpu_model", product.strip())
    if len(gfxs) > 1:
        raise InputError(f"mixed GPUs in one database ({', '.join(sorted(gfxs))}); filter one agent", where=wl.path)


class Dispatches:
    """The dispatches of one database, streamed by one query on every pass and never held in
    memory (`perfmodel validate` aggregates them per kernel as they go by). len() is known
    from the count taken when the database was opened; indexing and `materialize` read all."""

    def __init__(self, path: Path, tables: dict[str, str], count: int):
        self.path, self.tables, self.count = path, tables, count

    def __iter__(self):
        return stream(self.path, self.tables)

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    def __getitem__(self, i):
        return self.materialize()[i]

    def materialize(self) -> list[Dispatch]:
        return list(self)


def stream(path: Path, tables: dict[str, str]) -> Iterator[Dispatch]:
    """Each dispatch with its counter totals, in start order, one at a time (one query; with
    more than MAX_COLUMNS counters, one per group of counters, read in lockstep)."""
    where = str(path)
    con = _connect(path)
    try:
        by_name: dict[str, list[int]] = {}
        for pmc_id, name in con.execute(_IN_USE.format(**tables)):
            if isinstance(pmc_id, int):
                by_name.setdefault(str(name), []).append(pmc_id)
        counters = sorted(by_name.items())
        chunks = [counters[i : i + MAX_COLUMNS] for i in range(0, len(counters), MAX_COLUMNS)] or [[]]
        names = {i: n for n, g in counters for i in g}
        cursors = [con.execute(_query(tables, c, dispatch=j == 0)) for j, c in enumerate(chunks)]
        for rows in zip(*cursors, strict=True):
            d = _dispatch(rows[0], path)
            for j, (chunk, row) in enumerate(zip(chunks, rows, strict=True)):
                if not chunk:
                    continue
                # row: the dispatch's columns (or K.id), P.event_id, one column per counter, bad
                values = row[_N_DISPATCH + 1 if j == 0 else 2 : -1]
                if row[-1] is not None:
                    _bad_cell(con, tables, d, rows[0][_N_DISPATCH - 1], row[-1], names, where)
                for (name, _), v in zip(chunk, values, strict=True):
                    if v is not None:
                        _add_counter(d, name, v, where)
            yield d
    except (sqlite3.Error, UnicodeDecodeError) as e:
        raise _unreadable(e, where) from None
    finally:
        con.close()


def _whole(v, field: str, row: int, where: str, required: bool = False) -> int | None:
    """An integer column's value: NULL -> None, text/blob/inf/nan -> one error line."""
    if v is None:
        if required:
            raise InputError(f"dispatch row {row}: {field} is NULL (expected an integer)", where=where)
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not abs(v) <= csvio.MAX_CELL:
        raise InputError(f"dispatch row {row}: {field} = {excerpt(v, 40)} (expected an integer)", where=where)
    return int(v)


def _dispatch(row: tuple, path: Path) -> Dispatch:
    """The `Dispatch` of one result row (its counters are added row by row)."""
    where = str(path)
    kid, did, agent, kname, start, end, grid, wg, lds, avgpr, accv, sgpr = row[:12]
    if not isinstance(kname, str):
        raise InputError(f"kernel_name of kernel {kid}: expected text, got {type(kname).__name__}", where=where)
    return Dispatch(
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


def _add_counter(d: Dispatch, name: str, value, where: str) -> None:
    """One counter total; inf (or a total past the cell limit) is an error, not a number."""
    if not isinstance(value, (int, float)) or not abs(value) <= csvio.MAX_CELL:
        raise InputError(
            f"counter {excerpt(name, 40)} of dispatch {d.index}: value {excerpt(value, 40)} (expected a finite number)",
            where=where,
        )
    d.counters[name] = float(value)


def _bad_cell(con, tables: dict[str, str], d: Dispatch, event, pmc_id, names: dict, where: str) -> None:
    """A counter cell that is not a number (text, blob, NULL): one error line naming it."""
    cell = con.execute(
        f"SELECT quote(value) FROM {tables['rocpd_pmc_event']} WHERE event_id IS ? AND pmc_id = ?"
        " AND typeof(value) NOT IN ('integer', 'real') LIMIT 1",
        (event, pmc_id),
    ).fetchone()
    raise InputError(
        f"counter {excerpt(names.get(pmc_id, pmc_id), 40)} of dispatch {d.index}:"
        f" value {one_line(str(cell[0] if cell else '?'), 40)} (expected a finite number)",
        where=where,
    )
