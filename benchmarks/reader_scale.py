"""Reader scaling: `perfmodel validate` on synthetic rocprofv3 output of 10k, 100k and 1M dispatches.

The files are built here by repeating real rows of the MI300X vcopy measurement in tests/data
(rocm-systems 2025, rocpd mode): a kernel trace (one row per dispatch, the real start/end
timestamps shifted so dispatches do not overlap) and a counter collection (per dispatch, the
rows of the counters that the gfx942 formulas read). Each run is a fresh process; wall time and
the child's peak RSS (os.wait4) are reported as a markdown table. Not a test: timings vary.

    .venv/bin/python benchmarks/reader_scale.py [--sizes 10000,100000,1000000] [--timeout 600]
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


def write_kernel_trace(path: Path, n: int, rows: list[dict]) -> None:
    one = [r for r in rows if r["Counter_Name"] == "SQ_WAVES"]
    span = max(int(r["End_Timestamp"]) for r in one) - min(int(r["Start_Timestamp"]) for r in one) + 1000
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Kind", "Agent_Id", "Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp",
                    "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"])  # fmt: skip
        for i in range(n):
            r = one[i % len(one)]
            shift = (i // len(one)) * span
            w.writerow(["KERNEL_DISPATCH", "Agent 2", i, r["Kernel_Name"], int(r["Start_Timestamp"]) + shift,
                        int(r["End_Timestamp"]) + shift, r["Grid_Size"], 1, 1])  # fmt: skip


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


def run(cmd: list[str], timeout: float) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MiB (Linux ru_maxrss is KiB) and exit code of one fresh process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = t0 + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            return float("inf"), ru.ru_maxrss / 1024, -9
        time.sleep(0.02)
    return time.perf_counter() - t0, ru.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--kinds", default="kernel_trace,counter_collection")
    args = ap.parse_args()
    exe = Path(sys.executable).parent / "perfmodel"
    rows = _source_rows()
    print(f"# {platform.machine()}, nproc {os.cpu_count()}, Python {platform.python_version()}\n")
    print("| input | dispatches | file MiB | wall s | peak RSS MiB | exit |")
    print("|---|---|---|---|---|---|")
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
                cmd = [str(exe), "validate", str(d), "--arch", "mi300x", "--format", "json", "-o", str(d / "out.json")]
                wall, rss, rc = run(cmd, args.timeout)
                wall_s = f"> {args.timeout:g}" if wall == float("inf") else f"{wall:.1f}"
                print(f"| {kind}{extra} | {n:,} | {mib:.0f} | {wall_s} | {rss:.0f} | {rc} |", flush=True)


if __name__ == "__main__":
    main()
