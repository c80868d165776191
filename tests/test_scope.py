"""The timing scope (case key `scope`, `--scope`): kernel | events | host | loop, per-platform overheads."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from perfmodel import predict
from perfmodel.arch import load_arch
from perfmodel.cli.main import cli
from perfmodel.rates import constants, platform, scope_overhead_s
from perfmodel.vocab import FLOOR_SCOPES, SCOPES, bound_label, is_bound_label, overhead_term

SMALL = dict(n=1024)
BIG = dict(m=8192, n=8192, k=8192)


def test_platform_from_vendor():
    assert platform(load_arch("mi300x")) == "rocm"
    assert platform(load_arch("rx7900xtx")) == "rocm"
    assert platform(load_arch("h100")) == "cuda"
    assert platform(load_arch("a100")) == "cuda"


def test_every_overhead_is_sourced():
    table = constants()["scope_overhead"]
    assert set(table) == {"rocm", "cuda"}
    for plat, scopes in table.items():
        assert set(scopes) == set(SCOPES) - {"kernel"}, plat
        for scope, q in scopes.items():
            assert q["unit"] == "us" and q["value"] > 0, (plat, scope)
            assert q["tag"] in ("R", "D", "A") and len(q["source"]) > 40, (plat, scope)
            # the floor scopes say so in the table, and only they
            assert bool(q.get("per_call_floor")) == (scope in FLOOR_SCOPES), (plat, scope)
        # a host wall clock includes a launch: it can never be cheaper than the events gap
        assert scopes["host"]["value"] > scopes["events"]["value"]


@pytest.mark.parametrize("arch", ["mi300x", "h100"])
@pytest.mark.parametrize("scope", ["events", "host"])
def test_scope_adds_exactly_its_overhead(arch, scope):
    (k,) = predict("elementwise", arch, **SMALL)
    (s,) = predict("elementwise", arch, scope=scope, **SMALL)
    over = scope_overhead_s(load_arch(arch), scope)
    want = constants()["scope_overhead"][platform(load_arch(arch))][scope]["value"] * 1e-6
    assert over == pytest.approx(want)
    assert s.time_s == pytest.approx(k.time_s + over)
    assert s.terms_s[overhead_term(scope)] == pytest.approx(over)
    assert overhead_term(scope) not in k.terms_s
    assert s.roofline_time_s == k.roofline_time_s  # the naive roofline never includes it
    assert s.bound == "launch" and k.scope == "kernel" and s.scope == scope
    assert s.row()["scope"] == scope and s.row()["terms_us"][overhead_term(scope)] == pytest.approx(over * 1e6)


def test_a_large_kernel_keeps_its_bound():
    (k,) = predict("gemm", "mi300x", **BIG)
    (h,) = predict("gemm", "mi300x", scope="host", **BIG)
    assert h.bound == k.bound == "compute:mfma"
    assert h.time_s - k.time_s == pytest.approx(scope_overhead_s(load_arch("mi300x"), "host"))


def test_kernel_scope_is_the_default_and_unchanged():
    (a,) = predict("gemm", "mi300x", **BIG)
    (b,) = predict("gemm", "mi300x", scope="kernel", **BIG)
    assert a.time_s == b.time_s and a.terms_s == b.terms_s and a.row()["scope"] == "kernel"


def test_scopes_in_one_batch_are_kept_apart():
    cases = [dict(kernel="elementwise", n=4096, scope=s, id=s) for s in SCOPES]
    preds = predict(cases=cases, arch="mi300x")
    by = {p.id: p for p in preds}
    assert [p.scope for p in preds] == list(SCOPES)
    assert by["kernel"].time_s < by["events"].time_s < by["host"].time_s


@pytest.mark.parametrize("arch", ["mi300x", "h100"])
def test_loop_floors_a_tiny_kernel_at_the_dispatch_spacing(arch):
    spacing = scope_overhead_s(load_arch(arch), "loop")
    (k,) = predict("elementwise", arch, **SMALL)
    (lp,) = predict("elementwise", arch, scope="loop", **SMALL)
    assert k.time_s < spacing  # the case is one whose kernel is shorter than the spacing
    assert lp.time_s == pytest.approx(spacing) and lp.bound == "launch"
    assert lp.terms_s[overhead_term("loop")] == pytest.approx(spacing)
    assert lp.roofline_time_s == k.roofline_time_s and lp.row()["scope"] == "loop"


@pytest.mark.parametrize("arch", ["mi300x", "h100"])
def test_loop_leaves_a_long_kernel_as_it_is(arch):
    (k,) = predict("gemm", arch, **BIG)
    (lp,) = predict("gemm", arch, scope="loop", **BIG)
    assert lp.time_s == k.time_s and lp.bound == k.bound  # no addition: the spacing is a floor
    assert lp.terms_s[overhead_term("loop")] < k.time_s


@pytest.mark.parametrize("arch", ["mi300x", "h100", "rx7900xtx"])
def test_loop_lies_between_kernel_and_events(arch):
    cases = [dict(kernel="elementwise", n=n, scope=s) for n in (1, 2**14, 2**20, 2**26) for s in ("kernel", "loop", "events")]
    t = [p.time_s for p in predict(cases=cases, arch=arch)]
    for kern, loop, events in zip(t[0::3], t[1::3], t[2::3], strict=True):
        assert kern <= loop <= events


def test_a_loop_pays_no_write_back_for_dirty_lines_of_other_writers():
    """In a loop of back-to-back calls the L2's dirty lines are the previous call's output, which
    this call's own writes stand for (`traffic.writes_charged`): the cold single run's extra
    write-back (H100/H200, measured) is not charged, so a GEMV that streams 256 MiB of weights
    reads faster in a loop than in one cold call."""
    kw = dict(m=1, n=16384, k=8192, dtype="bf16")
    (k,) = predict("gemm", "h100", **kw)
    (lp,) = predict("gemm", "h100", scope="loop", **kw)
    assert "dirty" in (k.notes or "") and "dirty" not in (lp.notes or "")
    assert lp.time_s < k.time_s and lp.bound == k.bound == "memory:hbm"


def test_loop_floor_counts_every_dispatch():
    """A split-K GEMM whose partial sums another kernel reduces (H100), and attention backward
    with its pre- and post-pass kernels (`Work.serial`), take one spacing per dispatch."""
    h100 = load_arch("h100")
    (g,) = predict("gemm", "h100", m=16, n=16, k=65536, scope="loop")
    kernels = g.terms_s["launch"] / h100.launch_overhead_s
    assert kernels == pytest.approx(2.0)  # the GEMM and its reduction kernel
    assert g.terms_s[overhead_term("loop")] == pytest.approx(kernels * scope_overhead_s(h100, "loop"))
    (b,) = predict("attention", "mi300x", batch=1, heads=1, seq_q=16, head_dim=64, phase="bwd", scope="loop")
    per = b.terms_s[overhead_term("loop")] / scope_overhead_s(load_arch("mi300x"), "loop")
    assert per == pytest.approx(round(per)) and per >= 2  # the main kernel and its side kernels


def test_bound_label_of_overheads():
    for s in ("events", "host", "loop"):
        assert bound_label(overhead_term(s)) == "launch"
    assert is_bound_label("launch")


def _run(args):
    return CliRunner().invoke(cli, args)


def test_cli_scope_option_and_case_key():
    r = _run(["predict", "elementwise", "n=1024", "--scope", "events", "--format", "json"])
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)
    assert row["scope"] == "events" and "overhead:events" in row["terms_us"]
    # a case's own scope= wins over --scope
    r = _run(["predict", "elementwise", "n=1024", "scope=host", "--scope", "events", "--format", "json"])
    (row,) = json.loads(r.output)
    assert row["scope"] == "host" and "overhead:events" not in row["terms_us"]
    # the table shows a scope column only when some row is not kernel-scoped
    plain = _run(["predict", "elementwise", "n=1024"]).output
    scoped = _run(["predict", "elementwise", "n=1024", "--scope", "host"]).output
    assert "scope" not in plain.splitlines()[2] and "scope" in scoped.splitlines()[2]


def test_cli_loop_scope():
    r = _run(["predict", "elementwise", "n=1024", "--scope", "loop", "--format", "json", "--arch", "mi300x"])
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)
    assert row["scope"] == "loop" and row["bound"] == "launch"
    spacing_us = scope_overhead_s(load_arch("mi300x"), "loop") * 1e6
    assert row["time_us"] == pytest.approx(row["terms_us"]["overhead:loop"]) == pytest.approx(spacing_us)


@pytest.mark.parametrize("word", ["scope=wall", "scope=Kernel", "scope="])
def test_bad_scope_is_one_error_line(word):
    r = _run(["predict", "elementwise", "n=1024", word])
    if word == "scope=":  # an empty value means the default
        assert r.exit_code == 0
        return
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: case 1") and "scope" in lines[0]


def test_bad_scope_in_a_case_file(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("- {id: a, kernel: elementwise, n: 64, scope: device}\n")
    r = _run(["predict", "--cases", str(f)])
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "(id a)" in lines[0] and "scope" in lines[0]
