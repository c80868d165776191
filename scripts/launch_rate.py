"""Workgroup launch rates read off recorded traces and our H200 run: the figures behind the
archspecs' `launch.workgroup_rate` (docs/models-streaming.md, "Workgroup launch rate").

    python scripts/launch_rate.py [--traces ../shared/data/traces]

For each trace, the kernels launched with the most workgroups per second of their duration
(workgroups = the launch's work-items / its workgroup size, as `perfmodel validate` reads them),
each (kernel, grid) with its fastest and median dispatch, and that rate per core clock and XCD
at the GPU's spec clock; then the H200's one-store kernel of benchmarks/device (section grid).
A trace's rate is a lower bound on what the GPU can launch: a dispatch also does its own work.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from perfmodel.arch import load_arch
from perfmodel.traces.chrome import prod_dims
from perfmodel.traces.report import read_trace

ROOT = Path(__file__).resolve().parents[1]
# trace (relative to --traces) -> the archspec of the GPU it was recorded on (its clock and XCDs)
TRACES = {
    "TraceLens/tests/rocprof/908_results.json.gz": "mi350x",
    "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz": "mi300x",
    "TraceLens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz": "mi300x",
    "TraceLens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz": "mi210",
}
H200_RUN = ROOT / "benchmarks" / "device" / "results" / "h200-2026-11-26.json"
H200_RUN_CLOCK_HZ = 1980e6  # nvidia-smi's SM clock after the run (the file's `machine` line)


def trace_rates(path: Path, arch_key: str, top: int) -> None:
    arch = load_arch(arch_key)
    per = defaultdict(list)  # (name, workgroups, lanes) -> durations, us
    for k in read_trace(path).kernels:
        lanes = prod_dims(k.block or ())
        if k.workitems and lanes and k.dur_us > 0:
            per[(k.name[:60], k.workitems // lanes, lanes)].append(k.dur_us)
    rows = sorted(per.items(), key=lambda kv: -kv[0][1] / min(kv[1]))[:top]
    print(f"\n{path.name} ({arch.key}: {arch.xcds} XCD, {arch.clock_hz / 1e6:.0f} MHz)")
    print("| kernel | workgroups | lanes | dispatches | fastest us | median us | G wg/s at fastest | per clock per XCD (fastest / median) |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, wgs, lanes), durs in rows:
        lo, med = min(durs), statistics.median(durs)
        per_clk = [wgs / (d * 1e-6) / arch.clock_hz / arch.xcds for d in (lo, med)]
        print(f"| {name} | {wgs:,} | {lanes} | {len(durs)} | {lo:.1f} | {med:.1f} | {wgs / lo / 1e3:.3f} | {per_clk[0]:.3f} / {per_clk[1]:.3f} |")


def h200_rates() -> None:
    runs = [r["result"]["grid_floor"] for r in json.loads(H200_RUN.read_text())["runs"] if "grid_floor" in r.get("result", {})]
    print(f"\n{H200_RUN.relative_to(ROOT)}: one store per block, {len(runs)} runs (SM clock {H200_RUN_CLOCK_HZ / 1e6:.0f} MHz)")
    print("| blocks | warps | kernel us (runs) | G blocks/s | per clock (device) |")
    print("|---|---|---|---|---|")
    by = defaultdict(list)
    for run in runs:
        for r in run:
            by[(r["blocks"], r["num_warps"])].append(r["cold_kernel_us"])
    for (blocks, warps), us in sorted(by.items()):
        med = statistics.median(us)
        print(f"| {blocks:,} | {warps} | {', '.join(f'{u:.2f}' for u in us)} | {blocks / med / 1e3:.3f} | {blocks / (med * 1e-6) / H200_RUN_CLOCK_HZ:.3f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=str(ROOT.parent / "shared" / "data" / "traces"))
    ap.add_argument("--top", type=int, default=4, help="kernels listed per trace")
    args = ap.parse_args(argv)
    for rel, arch in TRACES.items():
        p = Path(args.traces) / rel
        if p.exists():
            trace_rates(p, arch, args.top)
        else:
            print(f"\nmissing {p}")
    h200_rates()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
