"""Occupancy per kernel from the register and LDS columns of a rocprofv3 kernel trace.

rocprofv3's ``*_kernel_trace.csv`` (and the counter-collection CSV) carry, per dispatch,
``VGPR_Count``, ``Accum_VGPR_Count``, ``SGPR_Count``, ``LDS_Block_Size``, ``Scratch_Size`` and the
workgroup size (``Workgroup_Size_X/Y/Z`` or ``Workgroup_Size``); older builds name LDS and
scratch ``Group_Segment_Size`` / ``Private_Segment_Size``. This helper turns them into waves per
SIMD with the limiting resource, using the same rules as `perfmodel kernel inspect`, so
`validate` can show the occupancy each measured kernel really had. VGPR_Count is taken as the
architectural VGPRs and Accum_VGPR_Count as the AGPRs; on gfx90a and later the unified total
is align(VGPRs, 4) + AGPRs.
"""

from __future__ import annotations

import csv
from pathlib import Path

from perfmodel.errors import InputError

ALIASES = {
    "vgpr": ("VGPR_Count", "Vgpr_Count", "Arch_VGPR", "arch_vgpr"),
    "agpr": ("Accum_VGPR_Count", "Accum_Vgpr_Count", "Accum_VGPR", "accum_vgpr"),
    "sgpr": ("SGPR_Count", "Sgpr_Count", "SGPR", "sgpr"),
    "lds": ("LDS_Block_Size", "Lds_Block_Size", "Group_Segment_Size", "LDS_Per_Workgroup", "lds"),
    "scratch": ("Scratch_Size", "Private_Segment_Size", "Scratch_Per_Workitem", "scr"),
    "kernel": ("Kernel_Name", "KernelName"),
}


def _col(header: list[str], what: str) -> str | None:
    return next((h for h in ALIASES[what] if h in header), None)


def kernel_occupancy(path: str | Path, arch) -> list[dict]:
    """One row per distinct (kernel, resources) in the trace: registers, LDS, scratch, occupancy."""
    from perfmodel.inspect.occupancy import occupancy

    p = Path(path)
    files = sorted(p.rglob("*_kernel_trace.csv")) if p.is_dir() else [p]
    if not files:
        raise InputError("no *_kernel_trace.csv here", where=str(p))
    seen: dict[tuple, dict] = {}
    for f in files:
        try:
            with open(f, newline="") as fh:
                rows = list(csv.DictReader(fh))
        except OSError as e:
            raise InputError(f"cannot read ({e.strerror})", where=str(f)) from None
        if not rows:
            continue
        header = list(rows[0].keys())
        cols = {w: _col(header, w) for w in ALIASES}
        for w in ("kernel", "vgpr", "lds"):
            if cols[w] is None:
                raise InputError(
                    f"no {' / '.join(ALIASES[w])} column (a rocprofv3 kernel trace has one)", where=str(f)
                )
        for line, r in enumerate(rows, 2):

            def num(w, r=r, line=line, f=f, cols=cols):
                c = cols[w]
                if c is None or not str(r.get(c, "")).strip():
                    return 0
                try:
                    return int(float(r[c]))
                except ValueError:
                    raise InputError(f"expected a number, got {r[c]!r}", where=f"{f}:{line}", key=c) from None

            if "Workgroup_Size_X" in r:
                wg = 1
                for a in "XYZ":
                    wg *= max(1, int(float(r.get(f"Workgroup_Size_{a}") or 1)))
            else:
                wg = int(float(r.get("Workgroup_Size") or r.get("wgr") or 0))
            key = (r[cols["kernel"]], num("vgpr"), num("agpr"), num("sgpr"), num("lds"), num("scratch"), wg)
            if key in seen:
                seen[key]["dispatches"] += 1
                continue
            if wg <= 0:
                raise InputError(
                    "no workgroup size for this dispatch", where=f"{f}:{line}", key="Workgroup_Size"
                )
            occ = occupancy(arch, vgprs=key[1], agprs=key[2], sgprs=key[3], lds_bytes=key[4], workgroup_size=wg,
                            vgprs_include_agprs=False)  # fmt: skip
            seen[key] = {
                "kernel": key[0], "vgpr": key[1], "agpr": key[2], "sgpr": key[3], "lds": key[4], "scratch": key[5],
                "workgroup_size": wg, "waves_per_simd": occ.waves_per_simd, "occupancy_pct": round(occ.occupancy_pct, 1),
                "limiter": occ.limiter, "dispatches": 1,
            }  # fmt: skip
    return list(seen.values())
