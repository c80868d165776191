"""A batch never dies for one case: every invalid case is reported, --keep-going writes the rest,
and the suite skips (and names) the cases a GPU has no rate for."""

from __future__ import annotations

import json

import pytest


def _cases(path, n=10_000, bad=()):
    with open(path, "w") as f:
        for i in range(n):
            c = {"kernel": "gemm", "m": i + 1, "n": 4096, "k": 4096, "dtype": "bf16", "id": f"c{i}"}
            if i in bad:
                c["m"] = -3
            f.write(json.dumps(c) + "\n")
    return path


def test_every_invalid_case_is_reported_and_nothing_written(cli, tmp_path):
    f = _cases(tmp_path / "c.jsonl", n=50, bad=(3, 40))
    out = tmp_path / "out.jsonl"
    r = cli("predict", "--cases", f, "--format", "jsonl", "-O", out)
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 2 and all(x.startswith("error: ") for x in lines)
    assert "case 4 (id c3): m:" in lines[0] and "case 41 (id c40): m:" in lines[1]
    assert not out.exists()


def test_keep_going_writes_9999_rows_of_10000(cli, tmp_path):
    f = _cases(tmp_path / "c.jsonl", bad=(5000,))
    out = tmp_path / "out.jsonl"
    r = cli("predict", "--cases", f, "--format", "jsonl", "-O", out, "--keep-going")
    assert r.exit_code == 2
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 9999 and "c5000" not in {x["id"] for x in rows}
    assert [x for x in r.output.splitlines() if x.strip()] == [
        f"error: {f}: case 5001 (id c5000): m: expected a positive size, got -3"
    ]


def test_keep_going_reports_cases_the_gpu_cannot_run(cli, tmp_path):
    """An fp8 case on MI100 (no fp8 rate) is one error line; the bf16 case still predicts."""
    f = tmp_path / "c.yaml"
    f.write_text(
        "- {id: a, kernel: gemm, m: 64, n: 64, k: 64, dtype: fp8}\n- {id: b, kernel: gemm, m: 64, n: 64, k: 64, dtype: bf16}\n"
    )
    r = cli("predict", "--cases", f, "--arch", "mi100", "--format", "json", "--keep-going")
    assert r.exit_code == 2
    assert "error: " in r.output and "(id a): dtype: mi100" in r.output and "no fp8 rate" in r.output


def test_a_case_the_model_refuses_does_not_take_its_batch_with_it(cli, tmp_path):
    """Cases that share arch, kernel and dtype run as one vectorised model call; attention refuses
    kv_heads that do not divide heads for the whole call. Each invalid case is named (not the
    first of its batch), and --keep-going still writes the valid ones of that batch."""
    f = tmp_path / "c.yaml"
    f.write_text(
        "- {id: a, kernel: attention, batch: 1, heads: 8, kv_heads: 8, seq_q: 128, head_dim: 64}\n"
        "- {id: b, kernel: attention, batch: 1, heads: 8, kv_heads: 3, seq_q: 128, head_dim: 64}\n"
        "- {id: c, kernel: attention, batch: 1, heads: 8, kv_heads: 2, seq_q: 128, head_dim: 64}\n"
        "- {id: d, kernel: gemm, m: 64, n: 64, k: 64, tile: 99999x99999}\n"
    )
    out = tmp_path / "out.jsonl"
    r = cli("predict", "--cases", f, "--format", "jsonl", "-O", out)
    errors = [x for x in r.output.splitlines() if x.startswith("error: ")]
    assert r.exit_code == 2 and not out.exists()
    assert len(errors) == 2 and "(id b): kv_heads:" in errors[0] and "(id d): tile:" in errors[1]
    r = cli("predict", "--cases", f, "--format", "jsonl", "-O", out, "--keep-going")
    assert r.exit_code == 2
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a", "c"]


@pytest.mark.parametrize("arch", ["mi100", "mi210", "rx6900xt", "a100"])
def test_suite_runs_on_gpus_without_fp8_and_says_what_it_skipped(cli, arch, suite_size):
    r = cli("predict", "--suite", "--arch", arch, "--format", "jsonl")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    notes = [x for x in lines if x.startswith("note: skipped ")]
    rows = [json.loads(x) for x in lines if x.startswith("{")]
    assert notes and all("no fp8 rate" in x for x in notes)
    assert len(rows) + len(notes) == suite_size


def test_every_prediction_carries_its_family_error_band(cli):
    """time_band_us = time / p90 .. time / p10 of the family's held-out ratios (error_bands.yaml)."""
    from perfmodel.error_bands import band

    r = cli("predict", "rmsnorm", "rows=4096", "cols=8192", "--format", "json")
    row = json.loads(r.output)[0]
    lo, hi, n, _ = band("rmsnorm")
    assert n > 0 and lo < hi
    assert row["time_band_us"] == pytest.approx([row["time_us"] / hi, row["time_us"] / lo])
    table = cli("predict", "rmsnorm", "rows=4096", "cols=8192").output
    assert "likely_us" in table


def test_a_short_kernel_carries_the_short_kernel_band(cli, tmp_path):
    """A prediction below the short section's limit (5 us) takes the band of the held-out points
    predicted that short, in a batch beside a long case that keeps its family's."""
    from perfmodel.error_bands import band, bands

    cases = (
        '[{"kernel": "rmsnorm", "rows": 1, "cols": 512}, {"kernel": "rmsnorm", "rows": 8192, "cols": 8192}]'
    )
    (tmp_path / "cases.yaml").write_text(cases)
    r = cli("predict", "--cases", tmp_path / "cases.yaml", "--format", "jsonl")
    short, long = (json.loads(x) for x in r.output.splitlines() if x.startswith("{"))
    assert short["time_us"] < 5.0 < long["time_us"]
    lo, hi, _, basis = band("rmsnorm", short["time_us"])
    assert "below 5 us" in basis and (lo, hi) != (bands()["rmsnorm"]["p10"], bands()["rmsnorm"]["p90"])
    assert short["time_band_us"] == pytest.approx([short["time_us"] / hi, short["time_us"] / lo])
    lo, hi, _, _ = band("rmsnorm")
    assert long["time_band_us"] == pytest.approx([long["time_us"] / hi, long["time_us"] / lo])


def test_error_lines_escape_every_line_break():
    """A corrupt file may put any control character in a message (\\x1e from a damaged rocpd
    schema): the error stays one line for splitlines() too."""
    from perfmodel.errors import InputError

    msg = str(InputError("bad\nname\x1eschema\u2028end", where="f.db", key="k"))
    assert len(msg.splitlines()) == 1 and "\\x1e" in msg and "\\n" in msg
