"""`perfmodel predict` through click's runner: the output contract in every format, case files,
side-by-side archs, and bad cases (one line naming the case and key, exit status 2)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from perfmodel.cli.main import cli

CONTRACT = ("arch", "kernel", "time_us", "bound", "flops", "bytes", "tflops", "ai")
GEMM = ["predict", "gemm", "m=4096", "n=4096", "k=4096", "--arch", "mi300x", "--dtype", "bf16"]


def run(args, **kw):
    return CliRunner().invoke(cli, args, catch_exceptions=False, **kw)


def test_jsonl_contract_fields():
    r = run([*GEMM, "--format", "jsonl"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.output.splitlines()]
    assert len(rows) == 1
    row = rows[0]
    for k in CONTRACT:
        assert k in row, k
    assert row["flops"] == 2 * 4096**3
    assert row["flops_by"] == {"mfma:bf16": 2 * 4096**3}
    assert row["bound"] == "compute:mfma"
    assert set(row["bytes"]) >= {"hbm", "l2"}
    assert row["ai"] == pytest.approx(row["flops"] / row["bytes"]["hbm"])
    assert row["tflops"] == pytest.approx(row["flops"] / (row["time_us"] * 1e-6) / 1e12)
    assert row["time_us"] >= row["roofline_time_us"] and 0 < row["headroom"] <= 1
    assert row["tile"] and row["terms_us"]["launch"] > 0


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "md"])
def test_every_format_carries_the_same_case(fmt):
    r = run([*GEMM, "--format", fmt])
    assert r.exit_code == 0, r.output
    ref = json.loads(run([*GEMM, "--format", "jsonl"]).output)
    if fmt == "json":
        assert json.loads(r.output)[0]["time_us"] == ref["time_us"]
    elif fmt == "csv":
        row = next(csv.DictReader(io.StringIO(r.output)))
        assert float(row["time_us"]) == pytest.approx(ref["time_us"])
        assert row["bound"] == ref["bound"] and float(row["bytes.hbm"]) == ref["bytes"]["hbm"]
    else:
        assert "compute:mfma" in r.output and "gemm" in r.output


def test_case_files_yaml_and_jsonl_agree(tmp_path):
    cases = [
        {"id": "q", "kernel": "gemm", "dtype": "bf16", "m": 2048, "n": 6144, "k": 4096},
        {"id": "norm", "kernel": "rmsnorm", "dtype": "bf16", "rows": 8192, "cols": 4096},
        {"id": "tri", "kernel": "stream", "op": "triad", "n": 2**25},
    ]
    y = tmp_path / "c.yaml"
    import yaml

    y.write_text(yaml.safe_dump(cases))
    j = tmp_path / "c.jsonl"
    j.write_text("".join(json.dumps(c) + "\n" for c in cases))
    a = [json.loads(x) for x in run(["predict", "--cases", str(y), "--format", "jsonl"]).output.splitlines()]
    b = [json.loads(x) for x in run(["predict", "--cases", str(j), "--format", "jsonl"]).output.splitlines()]
    assert [r["id"] for r in a] == ["q", "norm", "tri"]
    assert a == b


def test_several_archs_side_by_side():
    r = run(
        [*GEMM[:-4], "--arch", "mi300x,mi355x", "--arch", "rx7900xtx", "--dtype", "bf16", "--format", "jsonl"]
    )
    rows = [json.loads(x) for x in r.output.splitlines()]
    assert [x["arch"] for x in rows] == ["mi300x", "mi355x", "rx7900xtx"]
    t = {x["arch"]: x["time_us"] for x in rows}
    assert t["mi355x"] < t["mi300x"] < t["rx7900xtx"]


def test_suite_runs_on_every_arch_without_failure(suite_size):
    """All 19 GPUs: exit 0; a case with a dtype the GPU lacks (fp8 on MI210) is skipped with a note."""
    from perfmodel.arch import arch_keys

    for key in arch_keys():
        r = CliRunner().invoke(cli, ["predict", "--suite", "--arch", key, "--format", "jsonl"])
        assert r.exit_code == 0, (key, r.output)
        notes = [x for x in r.output.splitlines() if x.startswith("note: skipped")]
        assert all("has no fp8" in x for x in notes), (key, notes)
        rows = [json.loads(x) for x in r.output.splitlines() if x.startswith("{")]
        assert len(rows) + len(notes) == suite_size and all(x["time_us"] > 0 for x in rows)


def test_warm_serves_small_inputs_from_cache():
    cold = json.loads(run(["predict", "stream", "op=copy", "n=1048576", "--format", "jsonl"]).output)
    warm = json.loads(
        run(["predict", "stream", "op=copy", "n=1048576", "--warm", "--format", "jsonl"]).output
    )
    assert cold["bytes"]["hbm"] == 16 * 2**20 and warm["bytes"]["hbm"] == 0
    assert warm["time_us"] < cold["time_us"]


def test_plot_with_cases(tmp_path):
    out = tmp_path / "p.png"
    r = run(["roofline", "--arch", "mi300x", "--cases", str(_suite()), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:4] == b"\x89PNG"


def _suite():
    from perfmodel.arch import data_path

    return data_path("kernels", "suite.yaml")


BAD = [
    (["predict", "gemmm", "m=1", "n=1", "k=1"], "kernel", "did you mean 'gemm'"),
    (["predict", "gemm", "m=1", "n=1", "kk=1"], "kk", "did you mean 'k'"),
    (["predict", "gemm", "m=1", "n=1"], "k", "missing required"),
    (["predict", "gemm", "m=-4", "n=1", "k=1"], "m", "positive"),
    (["predict", "gemm", "m=4.5", "n=1", "k=1"], "m", "whole number"),
    (["predict", "gemm", "m=abc", "n=1", "k=1"], "m", "expected a number"),
    (["predict", "gemm", "m=1", "n=1", "k=1", "--arch", "mi210", "--dtype", "fp8"], "dtype", "has no fp8"),
    (["predict", "gemm", "m=1", "n=1", "k=1", "--dtype", "fp7"], "dtype", "unknown dtype"),
    (
        ["predict", "gemm", "m=1", "n=1", "k=1", "--arch", "mi301x"],
        "arch",
        "unknown arch 'mi301x' (did you mean",
    ),
    (["predict", "stream", "op=tripe", "n=5"], "op", "did you mean 'triad'"),
    (
        ["predict", "attention", "batch=1", "heads=8", "seq_q=1", "head_dim=64", "causal=maybe"],
        "causal",
        "true or false",
    ),
    (["predict", "gemm", "m"], None, "key=value"),
]


@pytest.mark.parametrize("args,key,text", BAD)
def test_bad_cases_give_one_line_and_exit_2(args, key, text):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    assert "Traceback" not in r.output
    assert text in lines[0]
    if key:
        assert f"{key}:" in lines[0] or f"'{key}'" in lines[0]


def test_bad_case_in_a_file_names_the_case_and_writes_nothing(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(
        json.dumps({"id": "ok", "kernel": "gemm", "m": 1, "n": 1, "k": 1})
        + "\n"
        + json.dumps({"id": "bad", "kernel": "gemm", "m": 0, "n": 1, "k": 1})
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(cli, ["predict", "--cases", str(f), "-O", str(out)])
    assert r.exit_code == 2
    assert "case 2 (id bad)" in r.output and "m:" in r.output
    assert not out.exists()


def test_malformed_case_file(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"kernel": "gemm", "m": 1\n')
    r = CliRunner().invoke(cli, ["predict", "--cases", str(f)])
    assert r.exit_code == 2 and "line 1: malformed JSON" in r.output


def test_jsonl_pieces_are_the_rows_text_byte_for_byte(tmp_path):
    """`predict --cases --format jsonl` writes its lines a thousand at a time (stdout and -O):
    the text is each record's `row()` through the one line encoder, joined, whatever the piece
    size, for a file that needs several pieces and ends mid-piece."""
    from perfmodel import predict
    from perfmodel.output import _dumps_line, jsonl_chunks, render

    kinds = [
        {"kernel": "gemm", "n": 4096, "k": 4096, "dtype": "bf16"},
        {"kernel": "rmsnorm", "cols": 4096, "dtype": "bf16"},
        {"kernel": "stream", "op": "triad"},
    ]
    cases = []
    for i in range(2503):
        c = dict(kinds[i % 3], id=f"c{i}")
        c["m" if c["kernel"] == "gemm" else "rows" if c["kernel"] == "rmsnorm" else "n"] = 1 + 37 * i
        cases.append(c)
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    rows = predict(cases=cases).rows
    expected = "".join(_dumps_line(r) + "\n" for r in rows)
    assert render(rows, "jsonl") == expected
    for size in (1, 7, 1000, 5000):
        pieces = list(jsonl_chunks(rows, size=size))
        assert len(pieces) == -(-len(rows) // size) and "".join(pieces) == expected
    assert list(jsonl_chunks([])) == []
    r = run(["predict", "--cases", str(path), "--format", "jsonl"])
    assert r.exit_code == 0 and r.output == expected
    out = tmp_path / "out.jsonl"
    r = run(["predict", "--cases", str(path), "--format", "jsonl", "-O", str(out)])
    assert r.exit_code == 0 and r.output == "" and out.read_text() == expected


def test_jsonl_pieces_reach_a_text_only_stdout(tmp_path):
    """In-process callers may swap stdout for a text-only stream (no binary buffer): the pieces
    are text, so they still arrive there."""
    import contextlib

    path = tmp_path / "c.jsonl"
    path.write_text('{"kernel": "gemm", "m": 64, "n": 64, "k": 64}\n{"kernel": "stream", "op": "copy", "n": 4096}\n')
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli.main(["predict", "--cases", str(path), "--format", "jsonl"], standalone_mode=False)
    assert buf.getvalue() == run(["predict", "--cases", str(path), "--format", "jsonl"]).output
    assert [json.loads(x)["kernel"] for x in buf.getvalue().splitlines()] == ["gemm", "stream"]
