"""Triton and PyTorch stay optional: the core imports, starts and predicts without them, and the
commands that need Triton say so in one line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_PROBE = textwrap.dedent(
    """
    import json, sys
    if sys.argv[2] == "block":
        sys.modules["triton"] = None  # import triton -> ImportError, as if not installed
        sys.modules["torch"] = None
    from perfmodel.cli.main import main
    try:
        main(json.loads(sys.argv[1]))
    except SystemExit as e:
        code = e.code
    else:
        code = 0
    heavy = sorted(m for m in ("triton", "torch") if sys.modules.get(m) is not None)
    print("\\nPROBE " + json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
    """
)


def _probe(args, tmp_path, mode="open"):
    p = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args), mode], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)  # fmt: skip
    line = next(ln for ln in p.stderr.splitlines() if ln.startswith("PROBE "))
    return json.loads(line[6:]), p.stdout, p.stderr


def test_help_and_predict_do_not_import_triton(tmp_path):
    for args in (
        ["--help"],
        ["kernel", "--help"],
        ["profile", "--help"],
        ["predict", "gemm", "m=64", "n=64", "k=64"],
    ):
        res, _, _ = _probe(args, tmp_path)
        assert res["code"] in (0, None) and res["heavy"] == [], (args, res)


def test_without_triton(tmp_path):
    res, out, _ = _probe(["predict", "gemm", "m=64", "n=64", "k=64", "--format", "json"], tmp_path, "block")
    assert res["code"] in (0, None) and json.loads(out)[0]["time_us"] > 0
    res, _, err = _probe(["kernel", "inspect", "gemm", "--arch", "mi300x"], tmp_path, "block")
    assert res["code"] == 2 and "error: triton: this command needs Triton" in err
    res, _, _ = _probe(["profile", "--dry-run", "-o", str(tmp_path / "p"), "--cmd", "./a", "--case", "gemm m=8 n=8 k=8"],
                       tmp_path, "block")  # fmt: skip
    assert res["code"] in (0, None) and (tmp_path / "p" / "input.yaml").is_file()
    import perfmodel.inspect.occupancy  # noqa: F401 - importable without triton too
