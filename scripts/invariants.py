"""Physical invariants of the attention model over a grid of shapes, per GPU: where they break.

    python scripts/invariants.py [--arch mi300x,h100,...]

A fastest implementation never gets slower when it has less to do, so for the same shape:

- causal: a causal mask skips work, so causal time <= non-causal time (the heaviest tile can keep
  them about equal; more than 1.1x is a defect of the model);
- seq_kv x 2: twice the keys is never faster (below 0.95x is a defect);
- GQA: sharing K/V among g query heads reads less and computes the same, so GQA time <= the time
  of the same heads without sharing (above 1.1x is a defect: the kernel could run it unshared).

Prints, per GPU and invariant, the worst ratio, how many shapes break it and the worst shape.
Nothing is asserted: this is a map of where the tile ranking and the estimator disagree.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

ARCHS = "mi300x,mi355x,mi250x,rx7900xtx,h100,a100"


def grid():
    """(batch, heads, kv_heads, seq_q, seq_kv, head_dim) arrays: decode to prefill, MHA to MQA."""
    rows = [
        (b, h, h // g, sq, skv, d)
        for b, h, g, sq, skv, d in itertools.product(
            [1, 8, 64], [8, 32, 128], [1, 4, 8], [1, 2, 4, 16, 128, 1024, 4096], [128, 1024, 8192], [64, 128, 256]
        )
        if h % g == 0 and sq <= skv
    ]
    return [np.array(c, dtype=float) for c in zip(*rows, strict=True)]


def times(arch: str, b, h, hk, sq, skv, d, causal=False):
    import perfmodel

    return np.asarray(
        perfmodel.sweep("attention", arch, "bf16", batch=b, heads=h, kv_heads=hk, seq_q=sq, seq_kv=skv, head_dim=d, causal=causal).time_s
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default=ARCHS)
    args = ap.parse_args()
    b, h, hk, sq, skv, d = grid()
    print(f"{len(b)} shapes per GPU\n")
    print("| arch | invariant | worst ratio | shapes breaking it | worst shape (batch heads kv_heads seq_q seq_kv head_dim) |")
    print("|---|---|---|---|---|")
    for arch in args.arch.split(","):
        base = times(arch, b, h, hk, sq, skv, d)
        checks = {
            "causal / non-causal <= 1.1": (times(arch, b, h, hk, sq, skv, d, causal=True) / base, 1.1, max),
            "seq_kv x 2 / seq_kv >= 0.95": (times(arch, b, h, hk, sq, 2 * skv, d) / base, 0.95, min),
            "GQA / unshared heads <= 1.1": (base / times(arch, b, h, h, sq, skv, d), 1.1, max),
        }
        for name, (r, limit, worst) in checks.items():
            i = int(np.argmax(r) if worst is max else np.argmin(r))
            broken = int(np.sum(r > limit) if worst is max else np.sum(r < limit))
            shape = " ".join(str(int(v[i])) for v in (b, h, hk, sq, skv, d))
            print(f"| {arch} | {name} | {r[i]:.2f} | {broken} | {shape} |")


if __name__ == "__main__":
    main()
