"""Build tests/data/rocprof/rocprofv3_json/908_results_cut.json.gz from the real rocprofv3 JSON
result in the project's shared data (TraceLens tests/rocprof/908_results.json.gz, 8x MI350X).

Kept as recorded: metadata, agents, counters, strings, code_objects, host_functions, summary,
callback_records (empty in this run) and the empty buffer-record lists. Cut: the kernel trace
to the 200 dispatches from record 10,900 on (the window with the most distinct kernels: GEMMs,
attention, layer norm, RCCL, elementwise), and kernel_symbols to entry 0 plus the kernels those
dispatches use. No value is changed; keys and records keep their order. Written compact, with
gzip mtime 0, so a rerun gives the same bytes.

    python scripts/make_rocprofv3_json_fixture.py [SOURCE]
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared/data/traces/TraceLens/tests/rocprof/908_results.json.gz"
TARGET = ROOT / "tests/data/rocprof/rocprofv3_json/908_results_cut.json.gz"
FIRST, COUNT = 10_900, 200


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE
    with gzip.open(src, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    tool = doc["rocprofiler-sdk-tool"][0]
    cut = tool["buffer_records"]["kernel_dispatch"][FIRST : FIRST + COUNT]
    tool["buffer_records"]["kernel_dispatch"] = cut
    used = {d["dispatch_info"]["kernel_id"] for d in cut} | {0}
    tool["kernel_symbols"] = [k for k in tool["kernel_symbols"] if k["kernel_id"] in used]
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, separators=(",", ":")).encode()
    with open(TARGET, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as g:
        g.write(text)
    print(f"{TARGET}: {len(cut)} dispatches, {len(tool['kernel_symbols'])} kernel symbols, {TARGET.stat().st_size} bytes")


if __name__ == "__main__":
    main()
