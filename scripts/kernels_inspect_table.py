"""Markdown table of every included Triton kernel compiled for some GPUs (docs/kernels.md).

    python scripts/kernels_inspect_table.py mi300x mi355x rx7900xtx

Needs the triton extra; no GPU. Every number is from the compiler's output (registers, LDS,
instruction counts) or the archspec limits (occupancy), via `perfmodel kernel inspect`.
"""

from __future__ import annotations

import sys

from perfmodel.inspect.catalog import all_specs
from perfmodel.inspect.report import inspect_included


def main(archs: list[str]) -> None:
    cols = ["kernel", "arch", "tile", "wg", "vgpr", "agpr", "sgpr", "spill", "lds_B", "waves/SIMD", "limiter",
            "matrix", "vmem ld", "lds rd/wr", "mismatch"]  # fmt: skip
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for arch in archs:
        for name in all_specs():
            r = inspect_included(name, arch, {})
            res, occ, ins, k = r["resources"], r["occupancy"], r["instructions"], r["kernel"]
            st = ins["static"]
            mat = st.get("mfma", 0) + st.get("wmma", 0)
            shapes = ", ".join(s.replace("v_", "") for s in {**ins["mfma"], **ins["wmma"]})
            widths = " ".join(f"{n}x{w}" for w, n in ins["global_load_widths"].items())
            mism = "; ".join(m.split(":")[0] for m in r["mismatches"]) or "-"
            row = [name, arch, k["tile"] or "-", k["workgroup_size"], res["vgpr"], res.get("agpr", "-"), res["sgpr"],
                   res.get("vgpr_spill", 0), res["lds"], occ["waves_per_simd"], occ["limiter"],
                   f"{mat} {shapes}".strip() if mat else "0", widths or "-",
                   f"{ins['lds_reads']}/{ins['lds_writes']}", mism]  # fmt: skip
            print("| " + " | ".join(str(x) for x in row) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["mi300x"])
