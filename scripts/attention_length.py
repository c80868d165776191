"""Held-out attention forward points by query length: how the model's ratio moves with sequence.

    python scripts/attention_length.py [--scope kernel,events] [--accuracy validation/accuracy.json]

Reads the shipped predictions of `validation/accuracy.json` (written by `scripts/accuracy.py`)
and the points' cases (`accuracy.load_points`, the validation loader), keeps
the held-out attention forward points with at least 128 query tokens (prefill: not MLA's latent
decode, not decodes of a few tokens), RDNA3 apart (its attention is predicted 2-4x fast at any
length: docs/models-tiled.md, "Known weaknesses"), of the timing scopes asked for, and prints per band of query tokens the
points, the median ratio (predicted / measured) and its p10 and p90. A ratio below 1 is an
optimistic prediction. Nothing is asserted: a map for docs/models-tiled.md's known weaknesses.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import accuracy  # noqa: E402  (the validation loader)

BANDS = ((128, 600), (600, 1100), (1100, 2100), (2100, 4500), (4500, None))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--accuracy", default=str(ROOT / "validation" / "accuracy.json"))
    ap.add_argument("--scope", default="kernel,events,host", help="comma-separated timing scopes to keep")
    args = ap.parse_args()
    scopes = set(args.scope.split(","))
    cases = {m["id"]: m["case"] for m in accuracy.load_points()}
    rows = []
    for p in json.loads(Path(args.accuracy).read_text())["points"]:
        s, c = p.get("shipped"), cases.get(p["id"], {})
        if (
            not s
            or s["in_sample"]
            or p["family"] != "attention"
            or p["arch_family"] == "RDNA3"
            or p["scope"] not in scopes
        ):
            continue
        if c.get("phase", "fwd") != "fwd" or c.get("kv_shared") or float(c.get("seq_q", 1)) < 128:
            continue
        rows.append((float(c["seq_q"]), s["ratio"]))
    print("| query tokens | points | median ratio | p10 | p90 |")
    print("|---|---|---|---|---|")
    for lo, hi in BANDS:
        r = np.array([x for q, x in rows if q >= lo and (hi is None or q < hi)])
        label = f"{lo:,}-{hi - 1:,}" if hi else f">= {lo:,}"
        if r.size:
            p10, p50, p90 = np.percentile(r, [10, 50, 90])
            print(f"| {label} | {r.size} | {p50:.2f} | {p10:.2f} | {p90:.2f} |")
        else:
            print(f"| {label} | 0 | - | - | - |")


if __name__ == "__main__":
    main()
