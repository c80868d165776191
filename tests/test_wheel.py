"""The built wheel carries the archspecs and the suite, and works in a clean venv outside the repo.

Needs the package registry (pip fetches hatchling to build, and pyyaml + click for the clean venv).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
KEYS = sorted(p.stem for p in (REPO / "archspecs").glob("*.yaml"))


def _run(cmd: list, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    p = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert p.returncode == 0, (
        f"{' '.join(map(str, cmd))} -> {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    )
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, REPO], cwd=out)
    wheels = list(out.glob("perfmodel-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "perfmodel/_data/archspecs/mi300x.yaml" in names
    assert "perfmodel/_data/kernels/suite.yaml" in names
    shipped = sorted(
        Path(n).stem for n in names if n.startswith("perfmodel/_data/archspecs/") and n.endswith(".yaml")
    )
    assert shipped == KEYS and len(KEYS) == 22
    assert "perfmodel/cli/main.py" in names
    assert not any(n.startswith("tests/") for n in names)
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "perfmodel = perfmodel.cli.main:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_wheel_in_clean_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    py = venv / "bin" / "python"
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg
    _run([py, "-m", "pip", "install", "-q", "--no-deps", wheel], cwd=tmp_path)
    _run([py, "-m", "pip", "install", "-q", "pyyaml", "click"], cwd=tmp_path)

    work = tmp_path / "elsewhere"
    work.mkdir()
    check = (
        "import json, perfmodel\n"
        "from perfmodel.arch import load_arch, arch_keys, archspec_dir\n"
        "a = load_arch('mi300x')\n"
        "assert len(arch_keys()) == 22, arch_keys()\n"
        "print(json.dumps({'name': a.name, 'pkg': perfmodel.__file__, 'specs': str(archspec_dir()),"
        " 'bf16': a.peak_flops('mfma', 'bf16')}))\n"
    )
    res = json.loads(_run([py, "-c", check], cwd=work).stdout)
    assert res["name"] == "AMD Instinct MI300X"
    site = str(venv)
    assert res["pkg"].startswith(site), f"imported from {res['pkg']}, not the clean venv"
    assert res["specs"].startswith(site) and res["specs"].endswith("perfmodel/_data/archspecs")
    assert res["bf16"] == pytest.approx(1307.4e12, rel=1e-3)

    # the console script works without numpy or matplotlib for a command that does not plot
    out = _run([venv / "bin" / "perfmodel", "archs", "--format", "json"], cwd=work).stdout
    assert [r["key"] for r in json.loads(out)] == KEYS
    assert "Usage:" in _run([venv / "bin" / "perfmodel", "--help"], cwd=work).stdout
