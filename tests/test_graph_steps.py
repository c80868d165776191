"""validate --model: a serving engine's graph-replayed decode steps paired with the model's step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from perfmodel.cli.main import cli
from perfmodel.traces.chrome import ChromeTrace, Kernel
from perfmodel.traces.graph_steps import match_steps

pytest.importorskip("torch")  # the model's step is traced on the meta device

DATA = Path(__file__).resolve().parent / "data"
DECODE = DATA / "traces" / "sglang_Qwen3-8B_decode.json.gz"
# batch 32: the trace's eager argmax over the logits reads 4,861,952 = 32 x 151,936 values; the
# cached length is not recorded, so 1024 is the test's choice (it moves only the attention)
STEP = ["--model", "qwen3-8b", "--batch", "32", "--kv-len", "1024"]


def _json(*args):
    r = CliRunner().invoke(cli, ["validate", str(DECODE), *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_decode_replay_is_paired_with_the_model_step():
    """The TraceLens SGLang Qwen3-8B decode trace: one hipGraphLaunch of 544 kernels. Its 145
    hipBLASLt GEMMs pair with the model's 4 per layer and the LM head, in order (the gate_up
    projection is the MT256x32x64 kernel, the largest per layer); the paged attention's two
    kernels per layer are one call each; the elementwise kernels (5 per layer against the
    model's 3) stay unmatched, with both counts."""
    before = _json()
    d = _json(*STEP)
    assert before["summary"]["identified_share"] < 0.02 and d["summary"]["identified_share"] > 0.85
    rows = d["kernels"]
    gate_up = next(r for r in rows if r["op"] == "model: layers.*.mlp.gate_up_proj")
    assert "MT256x32x64" in gate_up["kernel_name"] and gate_up["calls"] == 36
    assert (gate_up["shape"]["m"], gate_up["shape"]["n"], gate_up["shape"]["k"]) == (32, 24576, 4096)
    head = next(r for r in rows if r["op"] == "model: lm_head")
    assert head["calls"] == 1 and head["shape"]["n"] == 151936
    gemms = [r for r in rows if r["family"] == "gemm"]
    assert sum(r["calls"] for r in gemms) == 145 and all(r["op"].startswith("model: ") for r in gemms)
    attn = next(r for r in rows if r["op"] == "model: layers.*.self_attn")
    assert attn["kernels_per_call"] == 2 and attn["calls"] == 36 and attn["shape"]["seq_kv"] == 1025
    why = d["summary"]["not_identified"]
    assert any("elementwise kernels in the step, the model's step has" in k for k in why)
    assert any("1 graph replays, " in n for n in d["summary"]["notes"])


def test_model_options_are_checked_in_one_line(tmp_path):
    def run(*args):
        r = CliRunner().invoke(cli, ["validate", *args])
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert r.exit_code == 2 and len(lines) == 1 and "Traceback" not in r.output, r.output
        return lines[0]

    assert "expected --batch and --kv-len with --model" in run(str(DECODE), "--model", "qwen3-8b", "--kv-len", "8")
    assert "only with --model" in run(str(DECODE), "--batch", "32")
    assert "only with --phase prefill" in run(str(DECODE), *STEP, "--tokens", "16")
    assert "expected --tokens with --phase prefill" in run(str(DECODE), *STEP, "--phase", "prefill")
    vcopy = DATA / "rocprof" / "rocprofiler-compute" / "tests_workloads_2024" / "vcopy" / "MI300X_A1"
    assert "--model" in run(str(vcopy), *STEP)


def _trace(names: list[str]) -> ChromeTrace:
    ks = [Kernel(name=n, dur_us=1.0, ts=float(i), correlation=7) for i, n in enumerate(names)]
    return ChromeTrace(path="t", kernels=ks, ops={}, op_names={}, graph_launches={7})


def _op(kernel: str, module: str) -> dict:
    return {"module": module, "op": "aten::x", "case": {"kernel": kernel}}


def test_pairing_by_family_and_order_only_where_the_counts_divide():
    ops = [_op("gemm", "layers.0.a"), _op("attention", "layers.0.attn"), _op("gemm", "layers.0.b"), _op("rmsnorm", "layers.0.n"),
           _op("rmsnorm", "norm")]
    tr = _trace(["Cijk_x", "paged_attention_qkv", "paged_attention_reduce", "Cijk_y", "rms_norm_1", "rms_norm_2", "rms_norm_3",
                 "mystery"])
    m = match_steps(tr, ops)
    assert m.steps == 1 and m.kernels == 8
    assert m.cases[0][1] == "model: layers.*.a" and m.cases[3][1] == "model: layers.*.b"
    assert m.calls[1] == m.calls[2] and m.cases[1][1] == "model: layers.*.attn"  # a run of two kernels: one call
    assert {4, 5, 6} <= set(m.unmatched) and "3 rmsnorm kernels in the step, the model's step has 2" in m.unmatched[4]
    assert "family unknown" in m.unmatched[7]
    eager = _trace(["Cijk_x"])
    eager.kernels[0].ext_id = 3  # launched by an op: not part of a replay
    assert match_steps(eager, ops).steps == 0


def test_python_api_takes_the_model_step():
    import perfmodel

    rep = perfmodel.validate(str(DECODE), model={"model": "qwen3-8b", "batch": 32, "kv_len": 1024})
    assert rep.identified_share > 0.85
    with pytest.raises(perfmodel.InputError, match="kv_len"):
        perfmodel.validate(str(DECODE), model={"model": "qwen3-8b", "batch": 32})
    with pytest.raises(perfmodel.InputError, match="got batchsize"):  # the CLI's checks, one home (graph_steps.step_spec)
        perfmodel.validate(str(DECODE), model={"model": "qwen3-8b", "batch": 32, "kv_len": 8, "batchsize": 3})
    with pytest.raises(perfmodel.InputError, match="expected tokens with phase prefill"):
        perfmodel.validate(str(DECODE), model={"model": "qwen3-8b", "batch": 32, "kv_len": 8, "phase": "prefill"})


def test_without_pytorch_model_steps_are_one_error_line(monkeypatch):
    """The core runs without torch; --model (like perfmodel model) then says how to install it."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    for args in (["validate", str(DECODE), *STEP], ["model", "qwen3-8b"]):
        r = CliRunner().invoke(cli, args)
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert r.exit_code == 2 and len(lines) == 1 and "needs PyTorch: pip install 'perfmodel[torch]'" in lines[0], r.output


def test_a_trace_without_replays_says_so():
    r = CliRunner().invoke(cli, ["validate", str(DATA / "traces" / "torch_compile_triton.json.gz"), *STEP])
    assert r.exit_code == 0 and "no graph replays in this trace" in r.output


SHAPE_KEYS = ("m", "n", "k", "batch", "rows", "cols", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim")


def test_pairing_recovers_the_recorded_shapes_of_a_real_step():
    """The check of the rule on data with the answer in it: the TraceLens SGLang Qwen3-8B prefill
    step (15 x 1024 tokens, eager, every kernel with its op's shapes) with its External ids
    removed and its 527 kernels put in one replay. Paired with qwen3-8b's prefill step by family
    and order (and, among the elementwise kernels, the kinds both names spell: rotary embedding,
    gated activation, KV-cache store), every GEMM (145), attention (36), those elementwise
    kernels (108) and all but one RMSNorm (144 of 145) get the shape their own op recorded; the one that does not is the final norm, which the model applies to
    the last tokens only (vLLM's order) where SGLang normalises all 15,360 rows."""
    import copy

    from perfmodel.frontend.analysis import step_cases
    from perfmodel.frontend.opmap import to_case
    from perfmodel.traces.chrome import read_chrome_trace

    tr = read_chrome_trace(DATA / "traces" / "sglang_Qwen3-8B_prefilldecode.json.gz")
    truth = {i: to_case(tr.ops[k.ext_id])[0] if k.ext_id in tr.ops else None for i, k in enumerate(tr.kernels)}
    replay = copy.deepcopy(tr)
    for k in replay.kernels:
        k.ext_id, k.correlation = None, 1
    replay.graph_launches = {1}
    m = match_steps(replay, step_cases("qwen3-8b", batch=15, tokens=1024, phase="prefill"))
    same, differs = {}, {}
    for i, (case, label) in m.cases.items():
        t = truth[i]
        ok = t is not None and all(str(case[x]) == str(t[x]) for x in SHAPE_KEYS if x in case and x in t)
        (same if ok else differs).setdefault(case["kernel"], []).append(label)
    assert {f: len(v) for f, v in same.items()} == {"gemm": 145, "attention": 36, "rmsnorm": 144, "elementwise": 108}
    assert {x for x in same["elementwise"]} == {"model: layers.*.self_attn.rotary_embedding", "model: layers.*.mlp.silu_and_mul",
                                              "model: layers.*.self_attn.reshape_and_cache"}
    assert differs == {"rmsnorm": ["model: norm.fused_add_rms_norm"]}
