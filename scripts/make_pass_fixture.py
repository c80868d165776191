"""Build tests/data/rocprof/derived/vcopy_MI300X_2pass: a rocprofv3 two-pass output folder made
from the real MI300X vcopy measurement (rocprof-compute 2025, rocpd long CSV, tests/data).

That file holds 12 replay passes per dispatch (one Start/End timestamp pair each). This script
keeps the counters the gfx942 formulas read, puts the first 6 replay passes of every dispatch in
``pass_1/`` and the other 6 in ``pass_2/``, and writes them as rocprofv3 ``-i input.yaml -o
%hostname%/vcopy`` would: ``pass_N/<hostname>/vcopy_counter_collection.csv`` (rocprofv3 headers)
and ``vcopy_agent_info.csv``. No measured value is changed: counter values, timestamps, grid and
kernel names are copied. Agent_Id is written ``Agent 2`` in pass_1 (newer rocprofv3) and ``2``
in pass_2 (older), as the source's GPU_ID 2. The agent info is sysinfo.csv's gfx942 shape (CUs,
XCDs, wave size) under the same node id. Rerun with ``python scripts/make_pass_fixture.py``.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from data_paths import VCOPY_MI300X_LONG  # noqa: E402
from perfmodel.counters.formulas import load  # noqa: E402

OUT = ROOT / "tests/data/rocprof/derived/vcopy_MI300X_2pass"
FIRST_PASS_REPLAYS = 6  # replay passes 1-6 -> pass_1/, 7-12 -> pass_2/
HEADER = [
    "Dispatch_Id", "Agent_Id", "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size",
    "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name", "Counter_Value",
    "Start_Timestamp", "End_Timestamp",
]  # fmt: skip
SOURCE = [
    "Dispatch_ID", "GPU_ID", "Grid_Size", "Kernel_ID", "Kernel_Name", "Workgroup_Size", "LDS_Per_Workgroup",
    "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR", "Counter_Name", "Counter_Value",
    "Start_Timestamp", "End_Timestamp",
]  # fmt: skip


def main() -> None:
    fs = load("gfx942")
    needed = set(fs.counters()) - set(fs.constants)
    with open(VCOPY_MI300X_LONG, newline="") as fh:
        rows = list(csv.DictReader(fh))
    # replay pass of each row: the rank of its start timestamp among its dispatch's passes
    starts: dict[str, list[str]] = {}
    for r in rows:
        s = starts.setdefault(r["Dispatch_ID"], [])
        if r["Start_Timestamp"] not in s:
            s.append(r["Start_Timestamp"])
    rank = {(d, s): i for d, ss in starts.items() for i, s in enumerate(sorted(ss, key=int))}
    sysinfo = next(csv.DictReader(open(VCOPY_MI300X_LONG.parent / "sysinfo.csv", newline="")))
    host = sysinfo["hostname"]
    for n, agent in ((1, "Agent {}"), (2, "{}")):
        folder = OUT / f"pass_{n}" / host
        folder.mkdir(parents=True, exist_ok=True)
        keep = [
            r
            for r in rows
            if r["Counter_Name"] in needed
            and (rank[(r["Dispatch_ID"], r["Start_Timestamp"])] < FIRST_PASS_REPLAYS) == (n == 1)
        ]
        with open(folder / "vcopy_counter_collection.csv", "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(HEADER)
            for r in keep:
                cells = [r[c] for c in SOURCE]
                cells[1] = agent.format(r["GPU_ID"])
                w.writerow(cells)
        gpu = rows[0]["GPU_ID"]
        with open(folder / "vcopy_agent_info.csv", "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["Node_Id", "Agent_Type", "Name", "Product_Name", "Cu_Count", "Num_Xcc", "Wave_Front_Size"])
            w.writerow([gpu, "GPU", sysinfo["gpu_arch"], sysinfo["gpu_model"], sysinfo["cu_per_gpu"],
                        sysinfo["num_xcd"], sysinfo["wave_size"]])  # fmt: skip
        print(f"{folder.relative_to(ROOT)}: {len(keep)} rows")


if __name__ == "__main__":
    main()
