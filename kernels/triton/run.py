"""Run included kernels on a GPU: what `perfmodel profile` puts under rocprofv3.

    python kernels/triton/run.py gemm softmax:rows=8192,cols=4096 --iters 3 --flush

Each NAME[:key=value,...] runs `iters` times with its default keys (or the given ones); each run
checks the output against the PyTorch reference. ``--flush`` writes a buffer larger than the
last-level caches before every launch (cold caches, as a single profiled run sees them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="+", help="NAME or NAME:key=value,key=value")
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--device", default="cuda", help="torch device (ROCm PyTorch calls the GPU cuda)")
    ap.add_argument("--flush", action="store_true", help="flush caches before each launch")
    ap.add_argument(
        "--flush-mib", type=int, default=1024, help="flush buffer size (> L2 + MALL; MI300X: 256 MiB MALL)"
    )
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _spec
    import torch

    from perfmodel.inspect.catalog import get_spec, resolve

    if args.flush:
        buf = torch.empty(args.flush_mib << 20, dtype=torch.uint8, device=args.device)
        _spec._HOOKS.append(lambda: buf.fill_(1))
    bad = 0
    for item in args.kernels:
        name, _, kv = item.partition(":")
        words = dict(w.split("=", 1) for w in kv.split(",") if w)
        spec = get_spec(name)
        keys, _cx, _ = resolve(spec, words)
        for _ in range(args.iters):
            out, ref = spec.run(keys, args.device)
        if args.device != "cpu":
            torch.cuda.synchronize()
        ok = torch.allclose(out.float(), ref.float(), rtol=spec.tol, atol=spec.tol)
        bad += not ok
        print(f"{name}: {'ok' if ok else 'MISMATCH'} ({args.iters} runs, {keys})", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
