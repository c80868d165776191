"""Reader scaling: `perfmodel validate` on synthetic rocprofv3 output of 10k, 100k and 1M dispatches.

The files are built here by repeating real rows of the MI300X vcopy measurement in tests/data
(rocm-systems 2025, rocpd mode): a kernel trace (one row per dispatch, the real start/end
timestamps shifted so dispatches do not overlap; rocprofv3's 22 columns) and a counter
collection (per dispatch, the rows of the counters that the gfx942 formulas read). Each run is
a fresh process; wall time, the child's CPU time and peak RSS (os.wait4) are reported as a
markdown table, with the machine's load average. Not a test: timings vary.

    .venv/bin/python benchmarks/reader_scale.py [--sizes 10000,100000,1000000] [--timeout 600]
        [--kinds kernel_trace,counter_collection] [--per-dispatch] [--checkout DIR]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tests/data/rocprof/rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd/pmc_perf.csv"
FORMULAS = [ROOT / "perfmodel/counters/formulas" / f for f in ("gfx942.yaml", "cdna_memory.yaml", "cdna_flops.yaml")]


def _source_rows() -> list[dict]:
    with open(SRC, newline="") as fh:
        return list(csv.DictReader(fh))


def _formula_counters() -> set[str]:
    text = " ".join(f.read_text() for f in FORMULAS if f.exists())
    return set(re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", text))


TRACE_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name",
                "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
                "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
                "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]  # fmt: skip  -- rocprofv3's kernel-trace columns


def write_kernel_trace(path: Path, n: int, rows: list[dict]) -> None:
    """rocprofv3's 22 kernel-trace columns (registers, LDS and workgroup too, so the occupancy is
    computed), one row per dispatch, LF line ends."""
    one = [r for r in rows if r["Counter_Name"] == "SQ_WAVES"]
    span = max(int(r["End_Timestamp"]) for r in one) - min(int(r["Start_Timestamp"]) for r in one) + 1000
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(TRACE_HEADER)
        for i in range(n):
            r = one[i % len(one)]
            shift = (i // len(one)) * span
            w.writerow(["KERNEL_DISPATCH", 2, 1, 0, 4242, i + 1, r["Kernel_ID"], r["Kernel_Name"], i + 1,
                        int(r["Start_Timestamp"]) + shift, int(r["End_Timestamp"]) + shift, r["LDS_Per_Workgroup"],
                        r["Scratch_Per_Workitem"], r["Arch_VGPR"], r["Accum_VGPR"], r["SGPR"], r["Workgroup_Size"], 1, 1,
                        r["Grid_Size"], 1, 1])  # fmt: skip


def write_counter_collection(path: Path, n: int, rows: list[dict]) -> int:
    want = _formula_counters()
    by_dispatch: dict[str, list[dict]] = {}
    for r in rows:
        if r["Counter_Name"] in want:
            by_dispatch.setdefault(r["Dispatch_ID"], []).append(r)
    groups = list(by_dispatch.values())
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Correlation_Id", "Dispatch_Id", "Agent_Id", "Grid_Size", "Kernel_Name", "Workgroup_Size",
                    "LDS_Block_Size", "Counter_Name", "Counter_Value"])  # fmt: skip
        for i in range(n):
            for r in groups[i % len(groups)]:
                w.writerow([i, i, "Agent 2", r["Grid_Size"], r["Kernel_Name"], r["Workgroup_Size"],
                            r["LDS_Per_Workgroup"], r["Counter_Name"], r["Counter_Value"]])  # fmt: skip
    return len(groups[0])


def run(cmd: list[str], timeout: float, env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MiB (Linux ru_maxrss is KiB) and
    exit code of one fresh process. CPU time is the steadier figure on a shared machine."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    deadline = t0 + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            return float("inf"), ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, -9
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--kinds", default="kernel_trace,counter_collection")
    ap.add_argument("--per-dispatch", action="store_true", help="also time --per-dispatch -o out.jsonl")
    ap.add_argument("--checkout", help="time the perfmodel of this checkout (python -m perfmodel run in it)")
    args = ap.parse_args()
    exe = [str(Path(sys.executable).parent / "perfmodel")]
    if args.checkout:
        exe = [sys.executable, "-m", "perfmodel"]
        os.chdir(args.checkout)
    rows = _source_rows()
    load = os.getloadavg()[0]
    print(f"# {platform.machine()}, nproc {os.cpu_count()}, Python {platform.python_version()}, load {load:.1f}\n")
    print("| input | view | dispatches | file MiB | wall s | CPU s | peak RSS MiB | exit |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                d = Path(tmp)
                f = d / f"1_{kind}.csv"
                extra = ""
                if kind == "kernel_trace":
                    write_kernel_trace(f, n, rows)
                else:
                    extra = f" ({write_counter_collection(f, n, rows)} counter rows each)"
                mib = f.stat().st_size / 2**20
                views = [("per kernel", ["--format", "json", "-o", str(d / "out.json")])]
                if args.per_dispatch:
                    views.append(("per dispatch", ["--per-dispatch", "-o", str(d / "out.jsonl")]))
                for view, opts in views:
                    cmd = [*exe, "validate", str(d), "--arch", "mi300x", *opts]
                    wall, cpu, rss, rc = run(cmd, args.timeout)
                    wall_s = f"> {args.timeout:g}" if wall == float("inf") else f"{wall:.1f}"
                    print(f"| {kind}{extra} | {view} | {n:,} | {mib:.0f} | {wall_s} | {cpu:.1f} | {rss:.0f} | {rc} |", flush=True)


if __name__ == "__main__":
    main()
