"""The case key `warm` (a benchmark loop rerunning one kernel on the same inputs): it wins over
--warm / predict(warm=...) for its own case, is kept apart from cold cases of one batch, and a
bad value is one error line."""

from __future__ import annotations

import json

from click.testing import CliRunner

from perfmodel import predict
from perfmodel.cli.main import cli

DECODE = dict(kernel="gemm", m=16, n=8192, k=8192)  # 128 MiB of weights: fits MI300X's 256 MiB MALL


def test_warm_key_wins_and_is_kept_apart_in_one_batch():
    cases = [dict(DECODE, id="cold"), dict(DECODE, id="warm", warm=True), dict(DECODE, id="default")]
    by = {p.id: p for p in predict(cases=cases, arch="mi300x")}
    assert by["warm"].bytes["hbm"] < 0.01 * by["cold"].bytes["hbm"]
    assert by["warm"].time_s < by["cold"].time_s and by["default"].time_s == by["cold"].time_s
    assert "warm: inputs" in by["warm"].notes and "warm" not in (by["cold"].notes or "")
    # warm=false in a case beats predict(warm=True)
    (cold,) = predict(cases=[dict(DECODE, warm="false")], arch="mi300x", warm=True)
    assert cold.time_s == by["cold"].time_s


def test_warm_key_on_the_command_line():
    r = CliRunner().invoke(cli, ["predict", "gemm", "m=16", "n=8192", "k=8192", "warm=true", "--format", "json"])
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)
    assert row["bytes"]["hbm"] < 8192 * 8192 * 2 * 0.01
    # the title line says which assumption ran
    table = CliRunner().invoke(cli, ["predict", "gemm", "m=16", "n=8192", "k=8192", "warm=true"]).output
    cold = CliRunner().invoke(cli, ["predict", "gemm", "m=16", "n=8192", "k=8192"]).output
    assert "warm where a case says warm=true" in table.splitlines()[0]
    assert "cold single run" in cold.splitlines()[0] and "warm" not in cold.splitlines()[0].split(";")[-1]
    bad = CliRunner().invoke(cli, ["predict", "gemm", "m=16", "n=8192", "k=8192", "warm=maybe"])
    lines = [x for x in bad.output.splitlines() if x.strip()]
    assert bad.exit_code == 2 and len(lines) == 1 and "warm" in lines[0] and "true or false" in lines[0]
