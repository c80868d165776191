"""rocpd SQLite scaling: `perfmodel validate` on synthetic rocpd databases of 10k, 100k and 1M dispatches.

Each database has the published rocprofiler-sdk rocpd schema (uuid-suffixed tables plus plain
views, as `tests/test_readers_rocpd_sqlite.py` builds it) and is filled by repeating the real
MI300X vcopy measurement in tests/data (rocm-systems 2025, rocpd mode): per dispatch, the rows
of the counters that the gfx942 formulas read, each counter split into ``--instances`` rows
(rocprofv3 keeps one row per XCC/instance; the reader sums them), and the real start/end
timestamps shifted so dispatches do not overlap. Each run is a fresh process; wall time, CPU
time (user + system) and the child's peak RSS (os.wait4) are printed as a markdown table. Not
a test: timings vary. ``--checkout DIR`` times another source tree (e.g. an older commit
exported with ``git archive``) on the same databases.

    .venv/bin/python benchmarks/rocpd_scale.py [--sizes 10000,100000,1000000] [--instances 8]
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from reader_scale import _formula_counters, _source_rows, run  # noqa: E402
from test_readers_rocpd_sqlite import SCHEMA, UUID, VIEWS  # noqa: E402


def write_db(path: Path, n: int, instances: int) -> int:
    """A rocpd database of ``n`` dispatches; returns the pmc_event rows per dispatch."""
    want = _formula_counters()
    by_dispatch: dict[str, list[dict]] = {}
    for r in _source_rows():
        if r["Counter_Name"] in want:
            by_dispatch.setdefault(r["Dispatch_ID"], []).append(r)
    groups = list(by_dispatch.values())
    names = sorted({r["Counter_Name"] for g in groups for r in g})
    first = [next(r for r in g if r["Counter_Name"] == names[0]) for g in groups]
    span = max(int(r["End_Timestamp"]) for r in first) - min(int(r["Start_Timestamp"]) for r in first) + 1000
    con = sqlite3.connect(path)
    con.executescript(SCHEMA.format(u=UUID))
    for v in VIEWS:
        con.execute(f"CREATE VIEW `{v}` AS SELECT * FROM `{v}{UUID}`")
    con.execute(
        f"INSERT INTO `rocpd_info_agent{UUID}` (id, nid, pid, type, absolute_index, name, product_name)"
        " VALUES (1, 1, 1, 'GPU', 2, 'gfx942', 'AMD Instinct MI300X')"
    )
    con.execute(
        f"INSERT INTO `rocpd_info_kernel_symbol{UUID}` (id, nid, pid, code_object_id, kernel_name,"
        " display_name, arch_vgpr_count, accum_vgpr_count, sgpr_count) VALUES (1, 1, 1, 1, ?, ?, 4, 4, 16)",
        (first[0]["Kernel_Name"] + ".kd", first[0]["Kernel_Name"]),
    )
    pmc = {}
    for i, name in enumerate(names, start=1):
        con.execute(f"INSERT INTO `rocpd_info_pmc{UUID}` (id, nid, pid, agent_id, name, symbol) VALUES (?,1,1,1,?,?)",
                    (i, name, name))  # fmt: skip
        pmc[name] = i

    def dispatch_rows():
        for k in range(n):
            r = first[k % len(first)]
            shift = (k // len(first)) * span
            yield (k + 1, k + 1, int(r["Start_Timestamp"]) + shift, int(r["End_Timestamp"]) + shift,
                   int(r["Grid_Size"]), k + 1)  # fmt: skip

    def event_rows():
        for k in range(n):
            for r in groups[k % len(groups)]:
                v = int(float(r["Counter_Value"]))
                for j in range(instances):  # split v over the instances; the parts sum to v
                    yield k + 1, pmc[r["Counter_Name"]], float(v // instances + (v % instances if j == 0 else 0))

    con.executemany(
        f"INSERT INTO `rocpd_kernel_dispatch{UUID}` (id, nid, pid, tid, agent_id, kernel_id, dispatch_id,"
        ' queue_id, stream_id, start, "end", group_segment_size, workgroup_size_x, workgroup_size_y,'
        " workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id)"
        " VALUES (?,1,1,1,1,1,?,1,0,?,?,0,256,1,1,?,1,1,?)",
        dispatch_rows(),
    )
    con.executemany(f"INSERT INTO `rocpd_pmc_event{UUID}` (event_id, pmc_id, value) VALUES (?,?,?)", event_rows())
    con.commit()
    con.close()
    return len(groups[0]) * instances


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--instances", type=int, default=8, help="pmc_event rows per counter (XCCs on MI300X: 8)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--checkout", type=Path, default=ROOT, help="source tree to time (default: this one)")
    ap.add_argument("--keep", type=Path, help="build the databases in this folder and keep them (reused if present)")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(args.checkout.resolve()))
    print(f"# {platform.machine()}, nproc {os.cpu_count()}, Python {platform.python_version()},"
          f" SQLite {sqlite3.sqlite_version}, source {args.checkout}\n")  # fmt: skip
    print("| dispatches | pmc rows each | db MiB | wall s | CPU s | peak RSS MiB | exit |")
    print("|---|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            d = args.keep or Path(tmp)
            d.mkdir(parents=True, exist_ok=True)
            db = d / f"rocpd_{n}_{args.instances}.db"
            rows = len(_formula_counters() & {r["Counter_Name"] for r in _source_rows()}) * args.instances
            if not db.exists():
                rows = write_db(db, n, args.instances)
            mib = db.stat().st_size / 2**20
            out = Path(tmp) / "out.json"
            cmd = [sys.executable, "-m", "perfmodel.cli", "validate", str(db), "--arch", "mi300x",
                   "--format", "json", "-o", str(out)]  # fmt: skip
            # run outside any checkout: `python -m` puts the working directory first on sys.path,
            # ahead of PYTHONPATH, so a perfmodel package there would be the one timed
            wall, cpu, rss, rc = run(cmd, args.timeout, env=env, cwd=Path(tmp))
            wall_s = f"> {args.timeout:g}" if wall == float("inf") else f"{wall:.1f}"
            print(f"| {n:,} | {rows} | {mib:.0f} | {wall_s} | {cpu:.1f} | {rss:.0f} | {rc} |", flush=True)


if __name__ == "__main__":
    main()
