"""Build the two ResNet trace fixtures of tests/data/traces from a real torch.profiler trace in
the project's shared data (TraceLens tests/traces/mi300/resnet_act_checkpoint.json.gz: DDP ResNet
training with activation checkpointing on 8 MI300X, NCCL/RCCL 2.22.3, ROCm 6.4).

- resnet_ddp_comms_cut.json.gz: every ``record_param_comms`` and ``c10d::*`` cpu_op, and the
  first 20 kernels that carry no External id (the ones launched before the profiled host window);
- resnet_batchnorm_cut.json.gz: the first two calls of each ``aten::native_batch_norm`` and
  ``aten::native_batch_norm_backward`` shape (PyTorch's NCHW kernels, launched with 256-lane
  workgroups by that build).

Each keeps the trace's top-level metadata (deviceProperties, distributedInfo ...), the chosen ops,
the GPU kernels those ops launched (same External id) and the runtime launch calls of those
kernels (same correlation id), as recorded. Every other event is left out; no value is changed.
Written with a fixed gzip timestamp, so a rerun gives the same bytes.

    python scripts/make_resnet_trace_fixtures.py [SOURCE]
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared/data/traces/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
TRACES = ROOT / "tests/data/traces"
UNLINKED = 20
BN_OPS = ("aten::native_batch_norm", "aten::native_batch_norm_backward")
BN_CALLS = 2  # calls kept per (op, input dims)


def comm_ops(events: list[dict]) -> set:
    return {e["args"]["External id"] for e in events
            if e.get("cat") == "cpu_op" and (e.get("name") == "record_param_comms" or str(e.get("name", "")).startswith("c10d::"))}


def batch_norm_ops(events: list[dict]) -> set:
    kept, count = set(), {}
    for e in events:
        if e.get("cat") == "cpu_op" and e.get("name") in BN_OPS:
            key = (e["name"], json.dumps(e["args"].get("Input Dims")))
            if count.get(key, 0) < BN_CALLS:
                count[key] = count.get(key, 0) + 1
                kept.add(e["args"]["External id"])
    return kept


def keep(events: list[dict], ops: set, unlinked: int = 0) -> list[dict]:
    """The chosen ops, their kernels and launch calls, and the first unlinked kernels, in trace order."""
    kernels = [e for e in events if e.get("cat") == "kernel" and e.get("args", {}).get("External id") in ops]
    corr = {e["args"].get("correlation") for e in kernels}
    loose = [e for e in events if e.get("cat") == "kernel" and "External id" not in e.get("args", {})][:unlinked]
    chosen = {id(e) for e in kernels + loose}
    out = []
    for e in events:
        a = e.get("args") or {}
        if id(e) in chosen or (e.get("cat") == "cpu_op" and a.get("External id") in ops) or (
                e.get("cat") == "cuda_runtime" and a.get("correlation") in corr):
            out.append(e)
    return out


def write(trace: dict, events: list[dict], target: Path) -> None:
    data = json.dumps({**trace, "traceEvents": events}, separators=(",", ":")).encode()
    with open(target, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    print(f"{target}: {len(events)} events, {target.stat().st_size} bytes")


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE
    with gzip.open(src, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    write(trace, keep(events, comm_ops(events), UNLINKED), TRACES / "resnet_ddp_comms_cut.json.gz")
    write(trace, keep(events, batch_norm_ops(events)), TRACES / "resnet_batchnorm_cut.json.gz")


if __name__ == "__main__":
    main()
