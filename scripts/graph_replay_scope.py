"""How the held-out graph-replay points score as filed (`events`) and as `kernel` time.

A CUDA/HIP graph of repeated calls replayed between one event pair, with no cache flush between
calls (vLLM's and FlashInfer's `do_bench_cudagraph`, PyTorch's graph benchmarks), is filed as
`events` in validation/. This prints the held-out points whose notes or implementation name a
graph replay under four readings: scope `events` or `kernel`, each with and without the write-back
of L2 lines another writer left dirty (without: `traffic.writes_charged`, as nothing flushes the
cache between replays); then the median ratio per source. No figure of the repository changes.

    python scripts/graph_replay_scope.py
"""

from __future__ import annotations

import collections
import contextlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import accuracy  # noqa: E402  (the validation loader)

from perfmodel.cases import normalize_all  # noqa: E402
from perfmodel.models import traffic  # noqa: E402
from perfmodel.prediction import evaluate  # noqa: E402

WORDS = ("cudagraph", "cuda graph", "hipgraph", "graph replay")


def graph_points() -> list[dict]:
    shipped = {p["id"]: p.get("shipped") for p in json.loads((ROOT / "validation" / "accuracy.json").read_text())["points"]}
    out = []
    for e in accuracy.load_points():
        text = (str(e.get("notes", "")) + str(e.get("implementation", ""))).lower()
        s = shipped.get(e["id"])
        if e["scope"] == "events" and any(w in text for w in WORDS) and s and not s["in_sample"]:
            out.append(e)
    return out


def ratios(points: list[dict], measured: dict, scope: str, dirty: bool) -> dict:
    with contextlib.nullcontext() if dirty else traffic.writes_charged():
        cases = [normalize_all([{**e["case"], **({"warm": True} if e.get("warm") else {})}], [e["arch"]], scope=scope)[0] for e in points]
        return {e["id"]: p.time_us / measured[e["id"]] for e, p in zip(points, evaluate(cases), strict=True)}


def main() -> None:
    points = graph_points()
    acc = {p["id"]: p for p in json.loads((ROOT / "validation" / "accuracy.json").read_text())["points"]}
    measured = {e["id"]: acc[e["id"]]["measured_us"] for e in points}
    print(f"held-out graph-replay points: {len(points)}")
    runs = {}
    for scope in ("events", "kernel"):
        for dirty in (True, False):
            r = ratios(points, measured, scope, dirty)
            runs[(scope, dirty)] = r
            err = np.abs(np.array(list(r.values())) - 1.0)
            print(
                f"scope {scope:6s} dirty write-back {'yes' if dirty else 'no ':3s}: median error {np.median(err):.1%}, "
                f"p90 {np.percentile(err, 90):.1%}, beyond 50 % {int((err > 0.5).sum())}"
            )
    by = collections.defaultdict(list)
    for e in points:
        by[e["source_key"]].append((runs[("events", True)][e["id"]], runs[("kernel", False)][e["id"]]))
    for key, v in sorted(by.items()):
        print(f"  {key}: {len(v)} points, median ratio as filed {np.median([a for a, _ in v]):.2f}, as kernel without write-back {np.median([b for _, b in v]):.2f}")


if __name__ == "__main__":
    main()
