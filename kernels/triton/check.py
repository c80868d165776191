"""Run every included kernel on small shapes and compare with its PyTorch reference.

    python kernels/triton/check.py                 # CPU: Triton's interpreter (TRITON_INTERPRET=1)
    python kernels/triton/check.py --device cuda   # a GPU (ROCm PyTorch calls it cuda)
    python kernels/triton/check.py gemm:fp8 softmax

Prints one JSON object per kernel and dtype: name, dtype, max_abs_err, tol, ok. Exit status 1 if
any fails. The interpreter must be chosen before triton is imported, hence a script of its own
(the tests run it in a subprocess, so the same test session can still compile for AMD targets).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", nargs="*", help="NAME or NAME:DTYPE (default: all, default dtypes)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--full", action="store_true", help="default (large) shapes instead of the small ones")
    args = ap.parse_args(argv)
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import torch

    from perfmodel.inspect.catalog import all_specs, resolve

    specs = all_specs()
    todo = []
    for w in args.which or [f"{n}:" for n in specs]:
        name, _, dtype = w.partition(":")
        if name not in specs:
            print(f"error: unknown kernel {name!r}; included: {', '.join(specs)}", file=sys.stderr)
            return 2
        todo.append((specs[name], dtype or None))
    bad = 0
    for spec, dtype in todo:
        words = {} if args.full else {k: str(v) for k, v in spec.small.items()}
        if dtype is None and not args.full and args.device == "cpu":
            dtype = spec.interp_dtype
        keys, _cx, _ = resolve(spec, words, dtype=dtype)
        out, ref = spec.run(keys, args.device)
        err = (out.float() - ref.float()).abs()
        tol = spec.tol * (1 + ref.float().abs())
        ok = bool(torch.isfinite(out.float()).all() and (err <= tol).all() and out.shape == ref.shape)
        bad += not ok
        rec = {
            "name": spec.name,
            "dtype": keys.get("dtype"),
            "shape": {k: v for k, v in keys.items() if k != "dtype"},
        }
        rec.update(max_abs_err=float(err.max()), tol=spec.tol, ok=ok)
        print(json.dumps(rec), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
