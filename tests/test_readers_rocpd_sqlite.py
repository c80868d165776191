"""rocpd SQLite: a small database with the published rocprofiler-sdk rocpd schema (tables
suffixed with the session uuid, plain-named views) holding real MI300X vcopy values."""

from __future__ import annotations

import csv
import re
import sqlite3
from pathlib import Path

import pytest

from data_paths import VCOPY_MI300X_LONG
from perfmodel.counters import derive_workload
from perfmodel.errors import InputError
from perfmodel.readers import detect_format, read_workload

UUID = "_0195f0a1_7c2e_7000_8000_000000000001"

SCHEMA = """
CREATE TABLE `rocpd_info_agent{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "guid" TEXT NOT NULL DEFAULT 'g', "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
  "type" TEXT CHECK ("type" IN ('CPU', 'GPU')), "absolute_index" INTEGER, "logical_index" INTEGER,
  "type_index" INTEGER, "uuid" INTEGER, "name" TEXT, "generic_name" TEXT, "model_name" TEXT,
  "vendor_name" TEXT, "product_name" TEXT, "extdata" JSONB DEFAULT '{{}}' NOT NULL);
CREATE TABLE `rocpd_info_pmc{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "guid" TEXT NOT NULL DEFAULT 'g', "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER,
  "target_arch" TEXT, "event_code" INT, "instance_id" INTEGER, "name" TEXT NOT NULL, "symbol" TEXT NOT NULL,
  "qualifier" TEXT, "description" TEXT, "long_description" TEXT DEFAULT '', "component" TEXT,
  "units" TEXT DEFAULT '', "value_type" TEXT, "block" TEXT, "expression" TEXT, "is_constant" INTEGER,
  "is_derived" INTEGER, "extdata" JSONB DEFAULT '{{}}' NOT NULL);
CREATE TABLE `rocpd_info_kernel_symbol{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "guid" TEXT NOT NULL DEFAULT 'g', "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
  "code_object_id" INTEGER NOT NULL, "kernel_name" TEXT, "display_name" TEXT, "kernel_object" INTEGER,
  "kernarg_segment_size" INTEGER, "kernarg_segment_alignment" INTEGER, "group_segment_size" INTEGER,
  "private_segment_size" INTEGER, "sgpr_count" INTEGER, "arch_vgpr_count" INTEGER,
  "accum_vgpr_count" INTEGER, "extdata" JSONB DEFAULT '{{}}' NOT NULL);
CREATE TABLE `rocpd_event{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "guid" TEXT NOT NULL DEFAULT 'g', "category_id" INTEGER, "stack_id" INTEGER, "parent_stack_id" INTEGER,
  "correlation_id" INTEGER, "extdata" JSONB DEFAULT '{{}}' NOT NULL);
CREATE TABLE `rocpd_pmc_event{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "guid" TEXT NOT NULL DEFAULT 'g', "event_id" INTEGER, "pmc_id" INTEGER NOT NULL,
  "value" REAL DEFAULT 0.0, "extdata" JSONB DEFAULT '{{}}');
CREATE TABLE `rocpd_kernel_dispatch{u}` ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "guid" TEXT NOT NULL DEFAULT 'g', "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER,
  "agent_id" INTEGER NOT NULL, "kernel_id" INTEGER NOT NULL, "dispatch_id" INTEGER NOT NULL,
  "queue_id" INTEGER NOT NULL, "stream_id" INTEGER NOT NULL, "start" BIGINT NOT NULL, "end" BIGINT NOT NULL,
  "private_segment_size" INTEGER, "group_segment_size" INTEGER, "workgroup_size_x" INTEGER NOT NULL,
  "workgroup_size_y" INTEGER NOT NULL, "workgroup_size_z" INTEGER NOT NULL, "grid_size_x" INTEGER NOT NULL,
  "grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL, "region_name_id" INTEGER,
  "event_id" INTEGER, "extdata" JSONB DEFAULT '{{}}' NOT NULL);
"""
VIEWS = (
    "rocpd_info_agent",
    "rocpd_info_pmc",
    "rocpd_info_kernel_symbol",
    "rocpd_event",
    "rocpd_pmc_event",
    "rocpd_kernel_dispatch",
)
COUNTERS = (
    "TCC_BUBBLE_sum",
    "TCC_EA0_RDREQ_sum",
    "TCC_EA0_RDREQ_32B_sum",
    "TCC_EA0_WRREQ_sum",
    "TCC_EA0_WRREQ_64B_sum",
    "TCP_TCC_READ_REQ_sum",
    "TCP_TCC_WRITE_REQ_sum",
    "SQ_WAVES",
    "TCP_TCC_ATOMIC_WITH_RET_REQ_sum",
    "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum",
)


def build_db(path: Path, gfx_names=("gfx942",)) -> None:
    with open(VCOPY_MI300X_LONG, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Counter_Name"] in COUNTERS]
    con = sqlite3.connect(path)
    con.executescript(SCHEMA.format(u=UUID))
    for v in VIEWS:
        con.execute(f"CREATE VIEW `{v}` AS SELECT * FROM `{v}{UUID}`")
    for i, g in enumerate(gfx_names, start=1):
        con.execute(
            f"INSERT INTO `rocpd_info_agent{UUID}` (id, nid, pid, type, absolute_index, name, product_name)"
            " VALUES (?, 1, 1, 'GPU', ?, ?, 'AMD Instinct MI300X')",
            (i, i + 1, g),
        )
    con.execute(
        f"INSERT INTO `rocpd_info_kernel_symbol{UUID}` (id, nid, pid, code_object_id, kernel_name,"
        " display_name, arch_vgpr_count, accum_vgpr_count, sgpr_count) VALUES (1, 1, 1, 1, ?, ?, 4, 4, 16)",
        (rows[0]["Kernel_Name"] + ".kd", rows[0]["Kernel_Name"]),
    )
    pmc_ids = {}
    for name in COUNTERS:
        cur = con.execute(
            f"INSERT INTO `rocpd_info_pmc{UUID}` (nid, pid, agent_id, name, symbol) VALUES (1,1,1,?,?)",
            (name, name),
        )
        pmc_ids[name] = cur.lastrowid
    dispatches = sorted({r["Dispatch_ID"] for r in rows}, key=int)
    for k, did in enumerate(dispatches, start=1):
        mine = [r for r in rows if r["Dispatch_ID"] == did]
        t = next(r for r in mine if r["Counter_Name"] == "SQ_WAVES")
        agent = 1 + (k - 1) % len(gfx_names)
        con.execute(f"INSERT INTO `rocpd_event{UUID}` (id, correlation_id) VALUES (?, ?)", (k, k))
        con.execute(
            f"INSERT INTO `rocpd_kernel_dispatch{UUID}` (nid, pid, tid, agent_id, kernel_id, dispatch_id,"
            ' queue_id, stream_id, start, "end", group_segment_size, workgroup_size_x, workgroup_size_y,'
            " workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id)"
            " VALUES (1,1,1,?,1,?,1,0,?,?,0,256,1,1,?,1,1,?)",
            (agent, int(did), int(t["Start_Timestamp"]), int(t["End_Timestamp"]), int(t["Grid_Size"]), k),
        )
        for r in mine:
            con.execute(
                f"INSERT INTO `rocpd_pmc_event{UUID}` (event_id, pmc_id, value) VALUES (?,?,?)",
                (k, pmc_ids[r["Counter_Name"]], float(r["Counter_Value"])),
            )
    con.commit()
    con.close()


def test_rocpd_sqlite_vcopy(tmp_path):
    db = tmp_path / "vcopy_results.db"
    build_db(db)
    assert detect_format(db) == "rocpd sqlite"
    assert detect_format(tmp_path) == "rocpd sqlite"
    wl = read_workload(db)
    assert wl.gfx == "gfx942" and len(wl.dispatches) == 3
    d = wl.dispatches[0]
    assert d.kernel == "vecCopy(double*, double*, double*, int, int)"
    assert d.grid == 1048576 and d.workgroup == 256
    assert d.duration_ns == 13386729952881845 - 13386729952874594
    ms = derive_workload(wl)
    for m in ms:
        assert m.bytes_read["hbm"] == pytest.approx(8 * 2**20, rel=0.01)
        assert m.bytes_write["hbm"] == pytest.approx(8 * 2**20, rel=0.01)


def test_rocpd_sqlite_mixed_gpus(tmp_path):
    db = tmp_path / "mixed.db"
    build_db(db, gfx_names=("gfx942", "gfx90a"))
    with pytest.raises(InputError, match="mixed GPUs") as e:
        read_workload(db)
    assert "\n" not in str(e.value)


def test_rocpd_sqlite_wrong_schema(tmp_path):
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE kernels (name TEXT, start INTEGER)")
    con.commit()
    con.close()
    with pytest.raises(InputError, match=r"rocpd_kernel_dispatch missing \(wrong schema\)") as e:
        read_workload(db)
    assert "\n" not in str(e.value)


def _dispatches(wl):
    return [(d.index, d.kernel, d.begin_ns, d.end_ns, d.grid, d.counters) for d in wl.dispatches]


def test_rocpd_sqlite_streams_and_sums_instances(tmp_path, monkeypatch):
    """Counter rows of one (dispatch, counter) - one per XCC/instance in rocpd - are summed in
    SQL; the dispatches stream (a new query per pass, nothing held), in lockstep chunks when
    there are more counters than one query has columns."""
    from perfmodel.readers import rocpd_sqlite

    whole, split = tmp_path / "whole.db", tmp_path / "split.db"
    build_db(whole)
    build_db(split)
    con = sqlite3.connect(split)
    t = f"`rocpd_pmc_event{UUID}`"
    # each row becomes three: value - 2k, k, k (k = 1 or 2): same totals, three instance rows
    con.execute(f"INSERT INTO {t} (event_id, pmc_id, value) SELECT event_id, pmc_id, 1 + (id % 2) FROM {t}")
    con.execute(f"INSERT INTO {t} (event_id, pmc_id, value) SELECT event_id, pmc_id, value FROM {t} WHERE id > ?",
                (3 * len(COUNTERS),))  # fmt: skip
    con.execute(f"UPDATE {t} SET value = value - 2 * (1 + (id % 2)) WHERE id <= ?", (3 * len(COUNTERS),))
    con.commit()
    assert con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 9 * len(COUNTERS)
    con.close()
    a, b = read_workload(whole), read_workload(split)
    assert not isinstance(b.dispatches, list) and len(b.dispatches) == 3 and b.dispatches
    assert _dispatches(a) == _dispatches(b) == _dispatches(b)  # every pass reads the same
    assert all(len(c) == len(COUNTERS) for *_, c in _dispatches(b))
    monkeypatch.setattr(rocpd_sqlite, "MAX_COLUMNS", 3)  # four queries of <= 3 counters each
    assert _dispatches(read_workload(split)) == _dispatches(a)


@pytest.mark.parametrize(("value", "shown"), [("abc", "value 'abc'"), (None, "value NULL"), (b"\x01", "value X'01'")])
def test_rocpd_sqlite_counter_cell_not_a_number(tmp_path, value, shown):
    """SQL's SUM reads text as 0 and skips NULL: such a cell is named, not summed."""
    db = tmp_path / "run.db"
    build_db(db)
    con = sqlite3.connect(db)
    con.execute(
        f"UPDATE `rocpd_pmc_event{UUID}` SET value = ? WHERE event_id = 2"
        f" AND pmc_id = (SELECT id FROM `rocpd_info_pmc{UUID}` WHERE name = 'SQ_WAVES')",
        (value,),
    )
    con.commit()
    con.close()
    with pytest.raises(InputError, match=f"counter 'SQ_WAVES' of dispatch 2: {re.escape(shown)}") as e:
        list(read_workload(db).dispatches)
    assert "(expected a finite number)" in str(e.value)


def test_rocpd_sqlite_undescribed_dispatch_and_no_counters(tmp_path):
    """A dispatch naming an unknown kernel is left out with a note; one without counter rows
    keeps no counters (missing, not zero)."""
    db = tmp_path / "run.db"
    build_db(db)
    con = sqlite3.connect(db)
    con.execute(f"UPDATE `rocpd_kernel_dispatch{UUID}` SET kernel_id = 99 WHERE dispatch_id = 1")
    con.execute(f"DELETE FROM `rocpd_pmc_event{UUID}` WHERE event_id = 2")
    con.commit()
    con.close()
    wl = read_workload(db)
    assert len(wl.dispatches) == 2 and [d.index for d in wl.dispatches] == [2, 3]
    assert wl.notes == ["1 dispatches name a kernel or agent the database does not describe: left out"]
    assert wl.dispatches[0].counters == {} and len(wl.dispatches[1].counters) == len(COUNTERS)
