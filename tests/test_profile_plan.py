"""`perfmodel profile`: the rocprofv3 plan covers what the model needs, within per-block limits."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from perfmodel.cli.main import cli
from perfmodel.counters.formulas import load
from perfmodel.profile_plan import block_limits, block_of, pack, quantities_for_terms


def test_block_of():
    assert [block_of(c) for c in ("SQ_WAVES", "TCC_EA0_RDREQ_sum", "TCP_TCC_READ_REQ_sum", "GRBM_GUI_ACTIVE")] == [
        "SQ", "TCC", "TCP", "GRBM",
    ]  # fmt: skip


def test_pack_respects_limits_and_keeps_groups():
    limits = {"SQ": 8, "TCC": 4}
    groups = [(f"q{i}", [f"SQ_A{i}", f"SQ_B{i}", f"SQ_C{i}"]) for i in range(4)] + [("t", ["TCC_X", "TCC_Y"])]
    passes = pack(groups, limits)
    for p in passes:
        assert sum(block_of(c) == "SQ" for c in p) <= 8 and sum(block_of(c) == "TCC" for c in p) <= 4
    for i in range(4):  # each quantity's three counters share a pass
        assert any({f"SQ_A{i}", f"SQ_B{i}", f"SQ_C{i}"} <= set(p) for p in passes)
    assert sorted(c for p in passes for c in p) == sorted(c for _, cs in groups for c in cs)


def test_quantities_for_terms():
    q = quantities_for_terms(["compute:mfma:bf16", "memory:hbm", "memory:lds"])
    assert q == ["flops:mfma:bf16", "read:hbm", "write:hbm", "bytes:lds", "cycles", "waves"]


def _plan_cli(tmp_path, *extra):
    out = tmp_path / "plan"
    r = CliRunner().invoke(cli, ["profile", "--dry-run", "--arch", "mi300x", "-o", str(out), *extra])
    return r, out


def test_user_command_plan_covers_every_needed_formula(tmp_path):
    """No Triton needed: a user's command with the cases it runs."""
    cases = ["gemm m=4096 n=4096 k=4096", "softmax rows=4096 cols=4096", "attention batch=1 heads=32 seq_q=4096 head_dim=128 causal=true",
             "stream op=triad n=67108864", "gemm m=4096 n=4096 k=4096 dtype=fp8"]  # fmt: skip
    args = ["--cmd", "./app --run"] + [a for c in cases for a in ("--case", c)]
    r, out = _plan_cli(tmp_path, *args)
    assert r.exit_code == 0, r.output
    data = yaml.safe_load((out / "input.yaml").read_text())
    assert data == json.loads((out / "input.json").read_text())
    jobs = data["jobs"]
    passes = [j["pmc"] for j in jobs if "pmc" in j]
    assert len(jobs) == len(passes) + 1 and jobs[-1]["kernel_trace"] is True and "pmc" not in jobs[-1]
    limits = block_limits("gfx942")
    for p in passes:
        for b in {block_of(c) for c in p}:
            assert sum(block_of(c) == b for c in p) <= limits[b], (b, p)
    collected = {c for p in passes for c in p}
    fs = load("gfx942")
    from perfmodel.prediction import predict

    needed = set()
    for c in cases:
        w = c.split()
        raw = dict(x.split("=") for x in w[1:])
        for t in predict(w[0], "mi300x", **raw).to_dicts()[0]["terms_us"]:
            if t != "launch":
                needed |= set(quantities_for_terms([t]))
    needed |= {"cycles", "waves"}
    for q in needed:
        if q in fs.quantities:
            assert fs.quantities[q].counters - set(fs.constants) <= collected, q
    assert {"flops:mfma:bf16", "flops:mfma:fp8", "read:hbm", "write:hbm", "flops:sfu:fp32"} <= needed
    plan_json = json.loads((out / "plan.json").read_text())
    assert plan_json["rocprofv3"][:3] == ["rocprofv3", "-i", "input.yaml"] and plan_json["command"] == [
        "./app",
        "--run",
    ]
    assert "read:mall" in plan_json["unmeasurable"]
    assert (out / "run.sh").read_text().startswith("#!/bin/sh")


def test_included_kernels_plan(tmp_path):
    pytest.importorskip("triton")
    r, out = _plan_cli(tmp_path)
    assert r.exit_code == 0, r.output
    p = json.loads((out / "plan.json").read_text())
    assert len(p["kernels"]) >= 14 and p["cold"] is True
    assert "--flush" in p["command"] and "gemm" in p["command"]
    fs = load("gfx942")
    collected = {c for q in p["passes"] for c in q["counters"]}
    for q, counters in p["quantities"].items():
        assert set(counters) <= collected
        assert set(counters) == fs.quantities[q].counters - set(fs.constants)
    for q in p["passes"]:
        assert all(n <= p["block_limits"][b] for b, n in q["per_block"].items())
    regex = yaml.safe_load((out / "input.yaml").read_text())["jobs"][0]["kernel_include_regex"]
    assert "gemm_kernel" in regex.split("|")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--arch", "h100", "--cmd", "x", "--case", "gemm m=1 n=1 k=1"], "not an AMD GPU"),
        (
            ["--arch", "rx7900xtx", "--cmd", "x", "--case", "gemm m=1 n=1 k=1"],
            "no per-block counter limits for gfx1100",
        ),
        (["--arch", "mi300x", "--cmd", "x"], "--cmd needs at least one --case"),
        (["--arch", "mi300x", "--cmd", "x", "--case", "gemm m=1 n=1 kk=1"], "kk"),
    ],
)
def test_bad_plans_exit_2_and_write_nothing(tmp_path, args, match):
    out = tmp_path / "plan"
    r = CliRunner().invoke(cli, ["profile", "--dry-run", "-o", str(out), *args])
    assert r.exit_code == 2, r.output
    assert r.output.startswith("error: ") and match in r.output
    assert not out.exists()


def test_without_gpu_needs_dry_run(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "plan"
    r = CliRunner().invoke(
        cli, ["profile", "--arch", "mi300x", "-o", str(out), "--cmd", "x", "--case", "gemm m=8 n=8 k=8"]
    )
    assert r.exit_code == 2 and "--dry-run" in r.output and not out.exists()


def test_plan_passes_join_in_the_reader(tmp_path):
    """The plan's out/pass_N folders are one run each: the rocprofv3 reader joins them per dispatch."""
    from perfmodel.readers import read_workload

    head = "Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,Kernel_Id,Kernel_Name,Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,Counter_Name,Counter_Value,Start_Timestamp,End_Timestamp"
    for i, (name, value) in enumerate((("SQ_WAVES", 64), ("GRBM_GUI_ACTIVE", 1000)), 1):
        d = tmp_path / "out" / f"pass_{i}"
        d.mkdir(parents=True)
        rows = [
            f"{k},{k},1,1,7,7,65536,3,gemm_kernel,256,0,0,128,0,38,{name},{value},{100 * k},{100 * k + 50}"
            for k in (1, 2)
        ]
        (d / "7_counter_collection.csv").write_text(head + "\n" + "\n".join(rows) + "\n")
    wl = read_workload(tmp_path / "out")
    assert len(wl.dispatches) == 2
    assert wl.dispatches[0].counters == {"SQ_WAVES": 64, "GRBM_GUI_ACTIVE": 1000}
