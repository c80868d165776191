"""`perfmodel kernel inspect` on the included Triton kernels, compiled for AMD targets on the CPU.

Needs the optional extra (`pip install -e '.[triton]'`); skipped without it. Compiles are cached
per process (and by Triton on disk), so each kernel/target pair is compiled once per session.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

pytest.importorskip("triton")

from perfmodel.cli.main import cli  # noqa: E402

TARGETS = {
    "gfx942": "mi300x",
    "gfx90a": "mi250x",
    "gfx950": "mi355x",
    "gfx1100": "rx7900xtx",
    "gfx1201": "rx9070xt",
}
MATRIX = ("gemm", "flash_attention", "flash_attention_gqa")


def _compiled(name, gfx, words=None):
    from perfmodel.inspect.catalog import get_spec, resolve
    from perfmodel.inspect.compile import compile_spec

    spec = get_spec(name)
    keys, cx, opts = resolve(spec, words or {}, gfx=gfx)
    return compile_spec(spec, keys, cx, opts, gfx)


@pytest.mark.parametrize("gfx", list(TARGETS))
def test_every_kernel_compiles(gfx):
    from perfmodel.inspect.catalog import all_specs
    from perfmodel.inspect.isa import instruction_mix, kernel_metadata, resources

    for name in all_specs():
        c = _compiled(name, gfx)
        res = resources(kernel_metadata(c.asm)[0])
        assert res["vgpr"] > 0 and res["sgpr"] > 0, (gfx, name)
        assert res["wave_size"] == (64 if gfx.startswith("gfx9") else 32)
        counts = instruction_mix(c.asm, c.name).counts()
        assert counts.get("global_store", 0) + counts.get("global_atomic", 0) > 0, (gfx, name)
        if name in MATRIX:
            unit = "mfma" if gfx.startswith("gfx9") else "wmma"
            assert counts.get(unit, 0) > 0, (gfx, name, counts)
        if name == "gemm_fp8_blockscale" and gfx in ("gfx942", "gfx950", "gfx1201"):
            assert counts.get("mfma", 0) + counts.get("wmma", 0) > 0, (gfx, name)


def test_inspect_gemm_json_acceptance():
    r = CliRunner().invoke(cli, ["kernel", "inspect", "gemm", "--arch", "mi300x", "--format", "json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    res, occ, ins = rep["resources"], rep["occupancy"], rep["instructions"]
    assert res["vgpr"] > 0 and res["sgpr"] > 0 and "agpr" in res and res["lds"] > 0
    assert occ["limiter"] in ("vgpr", "sgpr", "lds", "wave_slots", "barriers")
    assert 0 < occ["waves_per_simd"] <= occ["max_waves_per_simd"]
    assert ins["static"]["mfma"] > 0 and any(k.startswith("v_mfma") for k in ins["mfma"])
    assert ins["global_load_widths"] and ins["s_waitcnt"] > 0
    # the ISA's matrix FLOPs over the whole grid agree with the model's FLOPs
    assert not [m for m in rep["mismatches"] if m.startswith("flops")]
    assert rep["static_per_workgroup"]["matrix_flops_total"] == pytest.approx(rep["model"]["flops"], rel=0.1)


def test_numbers_agree_with_the_compilers_own_notes(tmp_path):
    """Registers from the report == the assembly's .vgpr_count (read by a plain regex here) ==
    the code object's NT_AMDGPU_METADATA note; LDS == Triton's metadata."""
    from perfmodel.inspect.elf import read_code_object
    from perfmodel.inspect.report import inspect_included

    rep = inspect_included("gemm", "mi300x", {})
    c = _compiled("gemm", "gfx942")
    for key, field in (("vgpr", "vgpr_count"), ("sgpr", "sgpr_count"), ("agpr", "agpr_count")):
        asm_val = int(re.search(rf"\.{field}:\s+(\d+)", c.asm).group(1))
        assert rep["resources"][key] == asm_val
    p = tmp_path / "gemm.hsaco"
    p.write_bytes(c.hsaco)
    note = read_code_object(str(p))["kernels"][0]
    assert note[".vgpr_count"] == rep["resources"]["vgpr"] and note[".sgpr_count"] == rep["resources"]["sgpr"]
    assert rep["resources"]["lds"] == c.shared
    # reading the code object through the CLI gives the same registers
    r = CliRunner().invoke(cli, ["kernel", "inspect", str(p), "--arch", "mi300x", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)[0]["resources"]["vgpr"] == rep["resources"]["vgpr"]


def test_rdna_uses_wmma_and_wave32():
    from perfmodel.inspect.report import inspect_included

    for arch in ("rx7900xtx", "rx9070xt"):
        rep = inspect_included("gemm", arch, {})
        assert rep["instructions"]["static"]["wmma"] > 0 and rep["kernel"]["wave_size"] == 32
        assert all(k.startswith("v_wmma") for k in rep["instructions"]["wmma"])


def test_from_kernel_uses_the_compiled_occupancy():
    from perfmodel.inspect.report import inspect_included

    rep = inspect_included("gemm", "mi300x", {"m": "8192", "n": "8192", "k": "4096"}, from_kernel=True)
    fk = rep["from_kernel"]
    assert fk["assumed"]["waves_per_simd"] == rep["occupancy"]["waves_per_simd"]
    assert fk["grid"] == rep["kernel"]["workgroups"] and fk["time_us"] > 0


def test_tile_override_and_mismatch_called_out():
    from perfmodel.inspect.report import inspect_included

    rep = inspect_included(
        "gemm", "mi300x", {"BLOCK_M": "64", "BLOCK_N": "64", "BLOCK_K": "32", "num_warps": "4"}
    )
    assert rep["kernel"]["tile"] == "64x64x32" and rep["kernel"]["workgroup_size"] == 256
    assert any(m.startswith("tile:") for m in rep["mismatches"])


def test_user_file(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(
        "import triton\nimport triton.language as tl\nfrom _spec import Spec\n\n"
        "@triton.jit\ndef twice(x, y, n, BLOCK: tl.constexpr):\n"
        "    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(y + o, 2 * tl.load(x + o, mask=o < n), mask=o < n)\n\n"
        "KERNELS = [Spec(name='twice', fn=twice, doc='y = 2x', keys={'n': 4096, 'dtype': 'fp32'},\n"
        "    constexprs={'BLOCK': 256}, signature=lambda k, g: {'x': '*fp32', 'y': '*fp32', 'n': 'i32'},\n"
        "    case=lambda k: {'kernel': 'elementwise', 'n': k['n'], 'dtype': 'fp32'},\n"
        "    grid=lambda k, cx: (k['n'] // cx['BLOCK'],), run=None)]\n"
    )
    r = CliRunner().invoke(cli, ["kernel", "inspect", f"{f}::twice", "--arch", "mi300x", "--format", "json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["kernel"]["grid"] == [16] and rep["resources"]["vgpr"] > 0


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["kernel", "inspect", "gemmm", "--arch", "mi300x"], "unknown kernel 'gemmm'"),
        (["kernel", "inspect", "gemm", "mm=4", "--arch", "mi300x"], "gemm: mm: unknown key"),
        (["kernel", "inspect", "gemm", "m=-4", "--arch", "mi300x"], "expected a positive integer"),
        (["kernel", "inspect", "gemm", "--arch", "h100"], "not an AMD GPU"),
        (["kernel", "inspect", "gemm", "--arch", "mi300x", "--dtype", "fp64"], "dtype 'fp64' not supported"),
        (["kernel", "inspect", "missing.hsaco", "--arch", "mi300x"], "cannot read the code object"),
        (["kernel", "inspect", "nofile.py::k", "--arch", "mi300x"], "no such kernel file"),
        (["kernel", "inspect", "kernels/triton/gemm.py", "--arch", "mi300x"], "FILE.py::name"),
        (["profile", "--dry-run", "-o", "p", "--set", "m=8"], "--set applies to one kernel"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, match, tmp_path):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0], r.output


def test_inspect_writes_output_atomically(tmp_path):
    out = tmp_path / "r.json"
    r = CliRunner().invoke(
        cli, ["kernel", "inspect", "softmax", "--arch", "mi300x", "--format", "json", "-O", str(out)]
    )
    assert r.exit_code == 0 and json.loads(out.read_text())["kernel"]["name"] == "softmax"
    r = CliRunner().invoke(
        cli, ["kernel", "inspect", "softmax", "bad=1", "--format", "json", "-O", str(tmp_path / "x.json")]
    )
    assert r.exit_code == 2 and not (tmp_path / "x.json").exists()
