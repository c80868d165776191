"""A kernel family is one new file under perfmodel/models/: the registry finds it with no other edit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TOY = '''
"""`toy`: a family dropped into the package by the discovery test."""
from perfmodel.models import traffic
from perfmodel.models.registry import REQUIRED, Param, floats, register
from perfmodel.work import Work


@register("toy", params=[Param("n", int, REQUIRED, help="elements")], doc="toy copy", default_dtype="fp32")
def toy(p, arch, dtype):
    (n,) = floats(p, "n")
    w = Work()
    traffic.add_stream(w, arch, 4.0 * n, 4.0 * n)
    return w
'''


def test_a_new_module_in_models_appears_in_predict(tmp_path):
    pkg = tmp_path / "perfmodel"
    shutil.copytree(ROOT / "perfmodel", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "archspecs", tmp_path / "archspecs")
    (pkg / "models" / "toy.py").write_text(TOY)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    run = [
        sys.executable,
        "-m",
        "perfmodel",
        "predict",
        "toy",
        "n=1048576",
        "--arch",
        "mi300x",
        "--format",
        "json",
    ]
    out = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)[0]
    assert row["kernel"] == "toy"
    assert row["bytes"]["hbm"] == 8.0 * 1048576
    assert row["bound"].startswith("memory:") or row["bound"] in ("latency", "launch")


def test_every_shipped_family_is_discovered():
    """The families on disk are exactly what the registry lists (no list to keep in sync)."""
    from perfmodel.models.registry import all_models

    names = set(all_models())
    for fam in (
        "gemm",
        "grouped_gemm",
        "attention",
        "softmax",
        "layernorm",
        "rmsnorm",
        "stream",
        "elementwise",
        "reduction",
        "transpose",
        "conv2d",
        "moe",
        "stencil",
        "mixbench",
    ):
        assert fam in names
    assert "toy" not in names


def test_families_identify_their_own_kernels():
    """Kernel-name knowledge lives with the family: mixbench and vecCopy are recognised through
    the registry, and an unknown kernel by nobody."""
    from perfmodel.readers.records import Dispatch
    from perfmodel.validate.identify import builtin_case

    mix = Dispatch(
        index=0,
        kernel="void benchmark_func<float, 256u, 8u, 16u>(float, float*) [clone .kd]",
        grid=1048576,
        workgroup=256,
    )
    assert builtin_case(mix) == {
        "kernel": "mixbench",
        "elem": "float",
        "block": 256,
        "granularity": 8,
        "compute_iters": 16,
        "n": 8388608,
    }
    vc = Dispatch(index=1, kernel="vecCopy(double*, double*, double*, int, int)", grid=1048576, workgroup=64)
    assert builtin_case(vc) == {"kernel": "stream", "op": "copy", "dtype": "fp64", "n": 1048576}
    assert builtin_case(Dispatch(index=2, kernel="my_kernel", grid=64, workgroup=64)) is None
