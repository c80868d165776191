"""Build tests/data/traces/resnet_ddp_comms_cut.json.gz from a real torch.profiler trace in the
project's shared data (TraceLens tests/traces/mi300/resnet_act_checkpoint.json.gz: DDP ResNet
training with activation checkpointing on 8 MI300X, NCCL/RCCL 2.22.3).

Kept as recorded: the trace's top-level metadata (deviceProperties, distributedInfo ...), every
``record_param_comms`` and ``c10d::*`` cpu_op, the GPU kernels those ops launched (same External
id), the runtime launch calls of those kernels (same correlation id), and the first 20 kernels
that carry no External id (the ones launched before the profiled host window). Every other event
is left out; no value is changed. Written with a fixed gzip timestamp, so a rerun gives the same
bytes.

    python scripts/make_comms_trace_fixture.py [SOURCE]
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared/data/traces/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
TARGET = ROOT / "tests/data/traces/resnet_ddp_comms_cut.json.gz"
UNLINKED = 20


def keep(events: list[dict]) -> list[dict]:
    """The comm ops, their kernels and launch calls, and the first unlinked kernels, in trace order."""
    comm = {e["args"]["External id"] for e in events
            if e.get("cat") == "cpu_op" and (e.get("name") == "record_param_comms" or str(e.get("name", "")).startswith("c10d::"))}
    kernels = [e for e in events if e.get("cat") == "kernel" and e.get("args", {}).get("External id") in comm]
    corr = {e["args"].get("correlation") for e in kernels}
    unlinked = [e for e in events if e.get("cat") == "kernel" and "External id" not in e.get("args", {})][:UNLINKED]
    chosen = {id(e) for e in kernels + unlinked}
    out = []
    for e in events:
        a = e.get("args") or {}
        if id(e) in chosen or (e.get("cat") == "cpu_op" and a.get("External id") in comm) or (
                e.get("cat") == "cuda_runtime" and a.get("correlation") in corr):
            out.append(e)
    return out


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE
    with gzip.open(src, "rt") as f:
        trace = json.load(f)
    trace["traceEvents"] = keep(trace["traceEvents"])
    data = json.dumps(trace, separators=(",", ":")).encode()
    with open(TARGET, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    print(f"{TARGET}: {len(trace['traceEvents'])} events, {TARGET.stat().st_size} bytes")


if __name__ == "__main__":
    main()
