"""Speed of the batched tiled families: shapes per second through `perfmodel.sweep` for an FP8
MoE layer, BF16 grouped GEMMs and MLA's latent decode on MI300X, one core. Their tile ranking
(MoE, grouped GEMM) and floors (all three) cost more per shape than a single GEMM's, which
`predict_speed.py` times. No target: docs/performance.md records the figures beside the commits
that changed them. Run:  python benchmarks/batched_speed.py  (prints a markdown table).
"""

from __future__ import annotations

import os
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")


def rate(kernel: str, dtype: str, shapes: int, repeats: int = 3, **params) -> float:
    """Best of ``repeats`` sweeps of ``shapes`` shapes (after one warm-up on 5), shapes per second."""
    import perfmodel

    perfmodel.sweep(kernel, "mi300x", dtype, **{k: v[:5] if np.ndim(v) else v for k, v in params.items()})
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        perfmodel.sweep(kernel, "mi300x", dtype, **params)
        best = min(best, time.perf_counter() - t0)
    return shapes / best


def main() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    rows = [
        (
            "MoE FP8, 256 experts, top-8, hidden 7168, inter 2048, 1-8191 tokens",
            rate("moe", "fp8", n, tokens=rng.integers(1, 8192, n).astype(float), experts=256, topk=8, hidden=7168, inter=2048),
        ),
        (
            "grouped GEMM BF16, 8 groups of 1-511 x 4096 x 4096",
            rate("grouped_gemm", "bf16", n, groups=8, m=rng.integers(1, 512, n).astype(float), n=4096, k=4096),
        ),
        (
            "MLA latent decode FP8, 128 heads, 1 token, 1-63 sequences of 64-65535 keys",
            rate(
                "attention", "fp8", n // 4, batch=rng.integers(1, 64, n // 4).astype(float), seq_kv=rng.integers(64, 65536, n // 4).astype(float),
                heads=128, kv_heads=1, seq_q=1, head_dim=576, head_dim_v=512, kv_shared=True,
            ),
        ),
    ]  # fmt: skip
    print("| sweep on MI300X | shapes/s |\n|---|---|")
    for name, r in rows:
        print(f"| {name} | {r:,.0f} |")


if __name__ == "__main__":
    main()
