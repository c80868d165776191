"""Every included Triton kernel, run by Triton's CPU interpreter on small shapes, against PyTorch.

Needs the optional extras (`pip install -e '.[test,torch,triton]'`); skipped without them. The
interpreter has to be switched on before triton is imported, so `kernels/triton/check.py` runs
in one subprocess per session and each test reads its verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / "kernels" / "triton" / "check.py"
# every kernel at its interpreter dtype, plus the GEMM's other input types
WHICH = [
    "vector_add", "stream_copy", "stream_scale", "stream_add", "stream_triad", "stream_dot",
    "gemm", "gemm:fp8", "gemm_fp8_blockscale", "softmax", "layernorm", "rmsnorm",
    "flash_attention", "flash_attention_gqa", "decode_attention",
]  # fmt: skip


@pytest.fixture(scope="session")
def verdicts():
    proc = subprocess.run(
        [sys.executable, str(CHECK), *WHICH], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    out = {}
    for line in proc.stdout.splitlines():
        r = json.loads(line)
        out[r["name"] + (":" + r["dtype"] if r["name"] == "gemm" and r["dtype"] == "fp8" else "")] = r
    if not out:
        pytest.fail(f"check.py printed nothing: {proc.stderr[-2000:]}")
    return out, proc.stderr


@pytest.mark.parametrize("which", WHICH)
def test_interpreter_matches_torch(verdicts, which):
    out, stderr = verdicts
    assert which in out, f"{which} did not run: {stderr[-1500:]}"
    r = out[which]
    assert r["ok"], r


def test_every_kernel_maps_to_a_perfmodel_case():
    from perfmodel.inspect.catalog import all_specs, resolve
    from perfmodel.prediction import predict

    specs = all_specs()
    assert set(n.split(":")[0] for n in WHICH) == set(specs)
    for name, spec in specs.items():
        keys, cx, _ = resolve(spec, {})
        case = spec.case(keys)
        rows = predict(case.pop("kernel"), "mi300x", **case).to_dicts()
        assert rows[0]["time_us"] > 0, name
        assert all(g > 0 for g in spec.grid(keys, cx)), name


def test_runner_with_cache_flush():
    """kernels/triton/run.py (what `perfmodel profile` launches), on the CPU interpreter."""
    import os

    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "kernels" / "triton" / "run.py"), "vector_add:n=1000",
         "gemm:m=64,n=64,k=64,dtype=fp16", "--device", "cpu", "--iters", "2", "--flush", "--flush-mib", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count(": ok (2 runs") == 2
