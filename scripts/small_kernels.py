"""Durations of small kernels read off recorded traces: the figures behind the "Small kernels'
fixed costs" paragraph and the MIOpen cast note of docs/models-tiled.md.

    python scripts/small_kernels.py [--traces ../shared/data/traces]

1. One-workgroup PyTorch elementwise kernels (launched work-items <= the workgroup size) in the
   traces that give no validation point: their fastest and median durations, what a dispatch of
   (almost) no work costs at best and typically in a workload.
2. MIOpen's tensor-op helper kernels (`SubTensorOp*`, the split-K zero fill and cast around an
   igemm convolution) in the TraceLens MI300X batch-10 ResNet trace, by launched work-items.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

from perfmodel.traces.chrome import prod_dims
from perfmodel.traces.report import read_trace

ROOT = Path(__file__).resolve().parents[1]
# traces from which no validation point comes (validation/extract_traces.py does not read them)
NO_POINT_TRACES = (
    "rocmProfileData/raptor/tests/mytrace.rpd.gz",  # MI300X-class (gfx942)
    "TraceLens/tests/rocprof/908_results.json.gz",  # MI350X (gfx950), rocprofv3
)
MIOPEN_TRACE = "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"  # MI300X, batch 10


def _table(title: str, rows: dict) -> None:
    print(f"\n{title}")
    print("| kernel | work-items | calls | fastest us | median us |")
    print("|---|---|---|---|---|")
    for (name, items), durs in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        print(f"| {name} | {items if items is not None else '-'} | {len(durs)} | {min(durs):.2f} | {statistics.median(durs):.2f} |")


def one_workgroup(path: Path) -> None:
    rows = defaultdict(list)
    for k in read_trace(path).kernels:
        lanes = prod_dims(k.block or ())
        if k.workitems and lanes and k.workitems <= lanes and "elementwise" in k.name and k.dur_us > 0:
            rows[(k.name[:80], k.workitems)].append(k.dur_us)
    _table(f"{path.name}: one-workgroup elementwise kernels", rows)


def miopen_helpers(path: Path) -> None:
    """Per kernel name, launched work-items and the aten op that dispatched it (with its first
    three input shapes): the same kernel at the same launch for tensors of different sizes."""
    trace = read_trace(path)
    rows = defaultdict(list)
    for k in trace.kernels:
        if k.name.startswith("SubTensorOp") and k.dur_us > 0:
            op = trace.ops.get(k.ext_id)
            where = f"{op.op} {op.inputs[:3]}" if op else "(no op)"
            rows[(f"{k.name} <- {where}", k.workitems)].append(k.dur_us)
    _table(f"{path.name}: MIOpen tensor-op kernels", rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=str(ROOT.parent / "shared" / "data" / "traces"))
    args = ap.parse_args(argv)
    base = Path(args.traces)
    for rel in NO_POINT_TRACES:
        p = base / rel
        one_workgroup(p) if p.exists() else print(f"\nmissing {p}")
    p = base / MIOPEN_TRACE
    miopen_helpers(p) if p.exists() else print(f"\nmissing {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
