"""Speed of prediction: vectorised GEMM estimates per second, and CLI cases per second.

Targets (issue 3): >= 1,000,000 GEMM estimates/s through `perfmodel.sweep`, and >= 20,000
cases/s through `perfmodel predict --cases FILE.jsonl --format jsonl` (JSON lines in and out),
on one core. Run:  python benchmarks/predict_speed.py  (prints a markdown table).

    python benchmarks/predict_speed.py --chunks 1000000000,65536,32768,131072 --rounds 3

times only the sweep, in one process, with `perfmodel.sweep.CHUNK` set to each size in turn
(round by round, so a slow minute of a shared machine hits every size alike).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")


def sweep_rate(n: int = 1_000_000, repeats: int = 3) -> float:
    import perfmodel

    rng = np.random.default_rng(0)
    m = rng.integers(1, 16384, n).astype(float)
    k = rng.integers(64, 16384, n).astype(float)
    nn = rng.integers(64, 16384, n).astype(float)
    perfmodel.sweep("gemm", "mi300x", "bf16", m=m[:1000], n=nn[:1000], k=k[:1000])  # warm up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = perfmodel.sweep("gemm", "mi300x", "bf16", m=m, n=nn, k=k)
        _ = s.time_s, s.bound
        best = min(best, time.perf_counter() - t0)
    return n / best


def write_cases(path: str, n: int = 100_000) -> None:
    """The benchmark's JSON-lines file: ``n`` mixed cases (gemm, rmsnorm, stream, attention), seed 1."""
    rng = np.random.default_rng(1)
    kernels = [
        lambda i: {"kernel": "gemm", "m": int(rng.integers(1, 8192)), "n": 4096, "k": 4096, "dtype": "bf16"},
        lambda i: {"kernel": "rmsnorm", "rows": int(rng.integers(1, 8192)), "cols": 4096, "dtype": "bf16"},
        lambda i: {"kernel": "stream", "op": "triad", "n": int(rng.integers(1, 2**28))},
        lambda i: {"kernel": "attention", "batch": 1, "heads": 32, "kv_heads": 8, "seq_q": int(rng.integers(1, 8192)), "head_dim": 128, "dtype": "bf16"},
    ]
    with open(path, "w") as f:
        for i in range(n):
            case = kernels[i % len(kernels)](i)
            case["id"] = f"c{i}"
            f.write(json.dumps(case) + "\n")


def cli_rate(n: int = 100_000) -> tuple[float, float]:
    """(cases/s including start-up, cases/s excluding one empty-run start-up)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cases.jsonl")
        write_cases(path, n)
        small = os.path.join(d, "one.jsonl")
        with open(small, "w") as f:
            f.write(json.dumps({"kernel": "stream", "op": "copy", "n": 1000}) + "\n")
        exe = [sys.executable, "-m", "perfmodel.cli", "predict", "--format", "jsonl", "--arch", "mi300x", "--cases"]
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        t0 = time.perf_counter()
        subprocess.run([*exe, small], check=True, stdout=subprocess.DEVNULL, env=env)
        startup = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = subprocess.run([*exe, path], check=True, stdout=subprocess.PIPE, env=env).stdout
        wall = time.perf_counter() - t0
        assert out.count(b"\n") == n
    return n / wall, n / max(wall - startup, 1e-9)


def chunk_table(chunks: list[int], rounds: int) -> None:
    """Markdown rows of `sweep_rate` per chunk size (`perfmodel.sweep.CHUNK`), sizes interleaved."""
    import importlib

    module = importlib.import_module("perfmodel.sweep")  # the module, whose CHUNK is set here
    rates: dict[int, list[float]] = {c: [] for c in chunks}
    for _ in range(rounds):
        for c in chunks:
            module.CHUNK = c
            rates[c].append(sweep_rate())
    print("| chunk | " + " | ".join(f"round {i + 1}" for i in range(rounds)) + " |")
    print("|---" * (rounds + 1) + "|")
    for c, r in rates.items():
        print(f"| {c:,} | " + " | ".join(f"{x:,.0f} /s" for x in r) + " |")


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", help="comma-separated sweep chunk sizes: time only the sweep at each")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.chunks:
        chunk_table([int(c) for c in args.chunks.split(",")], args.rounds)
        return
    r1 = sweep_rate()
    r2, r2b = cli_rate()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, one thread\n")
    print("| benchmark | measured | target |")
    print("|---|---|---|")
    print(f"| vectorised GEMM estimates (`perfmodel.sweep`, 1M shapes) | {r1:,.0f} /s | >= 1,000,000 /s |")
    print(f"| `perfmodel predict --cases` JSON lines, 100k mixed cases, wall incl. start-up | {r2:,.0f} cases/s | >= 20,000 cases/s |")
    print(f"| same, excluding process start-up | {r2b:,.0f} cases/s | |")


if __name__ == "__main__":
    main()
