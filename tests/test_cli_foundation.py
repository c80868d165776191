"""The foundation commands through click's test runner: archs, arch show, roofline, --help, imports."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from perfmodel.cli.main import cli

KEYS = sorted(
    "mi100 mi210 mi250 mi250x mi300a mi300x mi308x mi325x mi350x mi355x "
    "rx6900xt w6800 rx7900xtx w7900 rx9070xt r9700 a100 h100 h200 radeon8050s radeon860m krackan2".split()
)
FORMATS = ("table", "json", "jsonl", "csv", "md")


def _ok(args: list[str]) -> str:
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, f"{args}: exit {r.exit_code}\n{r.output}\n{r.exception!r}"
    return r.output


# --- archs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_archs_lists_every_key(fmt):
    out = _ok(["archs", "--format", fmt])
    for k in KEYS:
        assert k in out, f"{k} missing from archs --format {fmt}"


def test_archs_json_fields():
    rows = json.loads(_ok(["archs", "--format", "json"]))
    assert [r["key"] for r in rows] == KEYS
    mi = next(r for r in rows if r["key"] == "mi300x")
    assert mi["name"] == "AMD Instinct MI300X" and mi["gfx"] == "gfx942" and mi["cus"] == 304
    assert mi["clock_mhz"] == pytest.approx(2100)
    assert mi["mem_tbs"] == pytest.approx(5.3248)
    assert mi["matrix_bf16"] == pytest.approx(1307.4, rel=1e-3)
    assert mi["matrix_fp8"] == pytest.approx(2614.9, rel=1e-3)
    assert mi["vector_fp64"] == pytest.approx(81.7, rel=1e-3)
    assert mi["matrix_fp4"] is None  # CDNA3 has no FP4: null, not an invented number
    rdna2 = next(r for r in rows if r["key"] == "rx6900xt")
    assert rdna2["matrix_bf16"] is None


def test_archs_jsonl_one_object_per_line():
    lines = _ok(["archs", "--format", "jsonl"]).splitlines()
    assert len(lines) == len(KEYS)
    assert [json.loads(ln)["key"] for ln in lines] == KEYS


def test_archs_csv_fields():
    rows = list(csv.DictReader(io.StringIO(_ok(["archs", "--format", "csv"]))))
    assert [r["key"] for r in rows] == KEYS
    mi = next(r for r in rows if r["key"] == "mi300x")
    assert float(mi["matrix_bf16"]) == pytest.approx(1307.4, rel=1e-3)
    assert mi["matrix_fp4"] == ""
    assert {"key", "name", "gfx", "cus", "clock_mhz", "mem_tbs"} <= set(rows[0])


def test_archs_md_is_a_table():
    out = _ok(["archs", "--format", "md"])
    table = [ln for ln in out.splitlines() if ln.startswith("|")]
    assert len(table) == len(KEYS) + 2
    assert table[1].startswith("|---")


def test_archs_output_file(tmp_path):
    p = tmp_path / "archs.json"
    out = _ok(["archs", "--format", "json", "--output", str(p)])
    assert out == ""
    assert [r["key"] for r in json.loads(p.read_text())] == KEYS
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".perfmodel-")], "temp file left behind"


# --- arch show -------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_arch_show_every_format(fmt):
    out = _ok(["arch", "show", "mi300x", "--format", fmt])
    assert "mfma:bf16" in out
    assert "hbm" in out
    assert "rocm.docs.amd.com" in out  # a source text
    if fmt in ("table", "md"):
        assert "1,307.4" in out  # derived MFMA BF16 peak, TFLOP/s
    if fmt == "csv":
        assert "1307.4" in out


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_arch_show_json_structure(fmt):
    out = _ok(["arch", "show", "mi300x", "--format", fmt])
    if fmt == "jsonl":
        assert len(out.strip().splitlines()) == 1
    doc = json.loads(out)
    assert doc["key"] == "mi300x" and doc["gfx"] == "gfx942"
    derived = {d["ceiling"]: d for d in doc["derived"]}
    assert derived["mfma:bf16"]["theoretical"] == pytest.approx(1307.4, rel=1e-3)
    assert derived["mfma:bf16"]["measured"] == pytest.approx(708)
    assert "304 CUs" in derived["mfma:bf16"]["derivation"]
    assert derived["mfma:fp8 (sparse)"]["theoretical"] == pytest.approx(5229.8, rel=1e-3)
    assert derived["hbm"]["theoretical"] == pytest.approx(5.3248)
    assert derived["l2"]["derivation"].startswith("128 B/clk per channel")
    spec = {s["field"]: s for s in doc["spec"]}
    assert spec["compute.cus"]["value"] == 304
    assert "rocm.docs.amd.com" in spec["compute.cus"]["source"]
    assert all(
        s["source"]
        for s in doc["spec"]
        if s["field"] != "schema" and (s["unit"] or isinstance(s["value"], (int, float)))
    ), "every number shows its source"


def test_arch_show_the_clock_under_matrix_load_measured_or_implied():
    """The clock a matrix kernel's other pipes run at: MI300X's is measured (1207 MHz), MI355X's
    only implied by its GEMM rates, which stays out of the measured column; MI308X has neither."""
    rows = {}
    for key in ("mi300x", "mi355x", "mi308x"):
        doc = json.loads(_ok(["arch", "show", key, "--format", "json"]))
        rows[key] = {d["ceiling"]: d for d in doc["derived"]}["clock under mfma load"]
    assert rows["mi300x"]["measured"] == pytest.approx(1207) and "hipBLASLt" in rows["mi300x"]["measured_by"]
    assert rows["mi355x"]["measured"] is None and "implied by the measured GEMM rates" in rows["mi355x"]["derivation"]
    assert rows["mi355x"]["theoretical"] == pytest.approx(2400)
    assert rows["mi308x"]["measured"] is None and "the spec clock" in rows["mi308x"]["derivation"]


def test_arch_show_rdna(tmp_path):
    out = _ok(["arch", "show", "rx7900xtx"])
    assert "wmma:fp16" in out and "vram" in out


def test_arch_show_output_file(tmp_path):
    p = tmp_path / "show.md"
    assert _ok(["arch", "show", "mi300x", "--format", "md", "-O", str(p)]) == ""
    assert "mfma:bf16" in p.read_text()


# --- roofline --------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_roofline_table_every_format(fmt):
    out = _ok(["roofline", "--arch", "mi300x", "--format", fmt])
    assert "mfma:bf16" in out and "hbm" in out
    if fmt == "json":
        rows = json.loads(out)
        bf16 = next(r for r in rows if r["ceiling"] == "mfma:bf16")
        assert bf16["theoretical"] == pytest.approx(1307.4, rel=1e-3)
    if fmt == "table":
        assert "ridge points" in out


MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF"}


@pytest.mark.parametrize("ext", ["png", "svg", "pdf"])
def test_roofline_plot_file(tmp_path, ext):
    p = tmp_path / f"x.{ext}"
    out = _ok(["roofline", "--arch", "mi300x", "--dtype", "bf16", "--dtype", "fp8", "-o", str(p)])
    assert f"roofline written to {p}" in out
    data = p.read_bytes()
    assert len(data) > 1000
    if ext == "svg":
        head = data[:2000].decode()
        assert "<svg" in head
        assert data.rstrip().endswith(b"</svg>")
    else:
        assert data.startswith(MAGIC[ext])
    if ext == "png":
        import matplotlib.image as mpimg

        img = mpimg.imread(str(p))
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    if ext == "pdf":
        assert b"%%EOF" in data[-64:]


def test_roofline_plot_rdna(tmp_path):
    p = tmp_path / "rdna.png"
    _ok(["roofline", "--arch", "rx9070xt", "-o", str(p)])
    assert p.read_bytes().startswith(MAGIC["png"])


def test_roofline_plot_and_table_output(tmp_path):
    plot, table = tmp_path / "r.svg", tmp_path / "r.csv"
    assert (
        CliRunner().invoke(cli, ["roofline", "--arch", "mi250x", "-o", str(plot), "--format", "csv", "--output", str(table)]).stdout
        == ""
    )
    assert b"<svg" in plot.read_bytes()[:2000]
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert any(r["ceiling"] == "hbm" for r in rows)


@pytest.mark.parametrize("name", ["x.jpg", "x.txt", "noext"])
def test_roofline_unsupported_plot_extension(tmp_path, name):
    p = tmp_path / name
    r = CliRunner().invoke(cli, ["roofline", "--arch", "mi300x", "-o", str(p)])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "unsupported plot format" in lines[0]
    assert not p.exists()
    assert list(tmp_path.iterdir()) == []


def test_roofline_bad_dtype_exit_2():
    r = CliRunner().invoke(cli, ["roofline", "--arch", "mi100", "--dtype", "fp8"])
    assert r.exit_code == 2
    assert r.output.strip().startswith("error: ") and "fp8" in r.output and "Traceback" not in r.output


# --- help ------------------------------------------------------------------------------------
def test_help_lists_commands():
    out = _ok(["--help"])
    for name in ("archs", "arch", "roofline"):
        assert f"  {name} " in out
    assert _ok(["-h"]) == out


@pytest.mark.parametrize(
    "args", [["archs", "--help"], ["arch", "--help"], ["arch", "show", "--help"], ["roofline", "--help"]]
)
def test_subcommand_help(args):
    assert "Usage:" in _ok(args)


def test_unknown_command_is_usage_error():
    r = CliRunner().invoke(cli, ["rooflin"])
    assert r.exit_code == 2 and "Traceback" not in r.output


# --- no heavy imports for commands that do not plot ------------------------------------------
_PROBE = textwrap.dedent(
    """
    import json, sys
    from perfmodel.cli.main import main
    sys.argv = ["perfmodel", *json.loads(sys.argv[1])]
    try:
        main()
    except SystemExit as e:
        code = e.code
    else:
        code = 0
    heavy = sorted(m for m in ("matplotlib", "torch", "numpy", "scipy", "pandas") if m in sys.modules)
    print("\\nPROBE " + json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
    """
)


def _probe(args: list[str], tmp_path) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    line = next(ln for ln in p.stderr.splitlines() if ln.startswith("PROBE "))
    return json.loads(line[6:])


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (["--help"], set()),
        (["--version"], set()),
        (["archs"], set()),
        (["archs", "--format", "json"], set()),
        (["arch", "show", "mi300x"], set()),
        (["arch", "template"], set()),
        (["roofline", "--help"], set()),
        (["roofline", "--arch", "mi300x"], {"numpy"}),  # maths, but no plot
        (["predict", "--help"], set()),
        (["kernels"], {"numpy"}),  # the registry is filled by importing the models (docs/usage.md)
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_no_heavy_imports(tmp_path, args, allowed):
    res = _probe(args, tmp_path)
    assert res["code"] in (0, None), res
    assert set(res["heavy"]) <= allowed, f"perfmodel {' '.join(args)} imported {res['heavy']}"


def test_plotting_does_import_matplotlib(tmp_path):
    """The probe is real: a command that plots does load matplotlib."""
    res = _probe(["roofline", "--arch", "mi300x", "-o", str(tmp_path / "p.png")], tmp_path)
    assert res["code"] in (0, None) and "matplotlib" in res["heavy"]
    assert "torch" not in res["heavy"]


def test_arch_key_alone_shows_the_spec():
    """`perfmodel arch mi300x` is what people type first: it reads as `arch show mi300x`."""
    assert _ok(["arch", "mi300x", "--format", "json"]) == _ok(["arch", "show", "mi300x", "--format", "json"])
    r = CliRunner().invoke(cli, ["arch", "mi300xx"])
    assert r.exit_code == 2 and "did you mean 'mi300x'" in r.output and "Traceback" not in r.output
    assert "template" in _ok(["arch", "--help"])
    typo = CliRunner().invoke(cli, ["arch", "shwo", "mi300x"])  # a misspelt subcommand stays one
    assert typo.exit_code == 2 and "show" in typo.output and "unknown arch" not in typo.output


def test_arch_all_predicts_every_gpu_and_skips_those_without_the_dtype(cli):
    import json

    from perfmodel.arch import arch_keys

    r = cli("predict", "gemm", "m=256", "n=256", "k=256", "--dtype", "bf16", "--arch", "all", "--format", "json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    with_bf16 = [k for k in arch_keys() if not any(f"dtype: {k} (" in ln for ln in r.stderr.splitlines())]
    assert [row["arch"] for row in rows] == with_bf16 and len(rows) >= 15
    fp8 = cli("predict", "gemm", "m=256", "n=256", "k=256", "--dtype", "fp8", "--arch", "all,mi300x@1005mhz")
    assert fp8.exit_code == 0 and "note: skipped case 1: dtype: mi100 (AMD Instinct MI100) has no fp8" in fp8.stderr
    assert "mi300x@1005mhz" in fp8.stdout
    one = cli("predict", "gemm", "m=256", "n=256", "k=256", "--dtype", "fp8", "--arch", "mi100")
    assert one.exit_code == 2  # a GPU named alone is not skipped: its missing dtype is the error
