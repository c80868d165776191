"""`perfmodel model`: the acceptance checks on built-in configs, config.json input, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from perfmodel.cli.main import cli

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ("arch", "kernel", "time_us", "bound", "flops", "bytes", "tflops", "ai")


def run(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


@pytest.fixture(scope="module")
def decode_8b():
    r = run(["model", "llama3-8b", "--arch", "mi300x", "--phase", "decode", "--batch", "1", "--kv-len", "4096", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_decode_rows_follow_the_contract_and_sum_to_the_total(decode_8b):
    ops = decode_8b["ops"]
    assert len(ops) > 32 * 8  # every layer's ops, one row each
    for row in ops:
        for k in (*CONTRACT, "op", "module"):
            assert k in row, k
    total = decode_8b["totals"][0]
    assert total["total_us"] == pytest.approx(sum(r["time_us"] for r in ops), rel=1e-12)
    assert total["decode_us_per_token"] == total["total_us"]
    assert decode_8b["unsupported"] == []
    mods = {r["module"] for r in ops}
    assert "layers.31.mlp.down_proj" in mods and "lm_head" in mods
    attn = [r for r in ops if r["kernel"] == "attention"]
    assert len(attn) == 32 and all(r["shape"]["seq_kv"] == 4097 and r["shape"]["seq_q"] == 1 for r in attn)


def test_decode_is_within_1_5x_of_streaming_weights_and_kv(decode_8b):
    """time >= (weights + KV cache) / measured HBM ceiling, and <= 1.5x of it (MI300X)."""
    import perfmodel

    arch = perfmodel.load_arch("mi300x")
    hbm = arch.achievable_bandwidth("hbm").value
    # bytes recomputed from the config, independent of the model builder
    h, inter, layers, vocab, kvh, d = 4096, 14336, 32, 128256, 8, 128
    weights = (layers * (h * (32 + 2 * kvh) * d + 32 * d * h + 3 * h * inter) + h * vocab) * 2
    kv = layers * 2 * kvh * 4097 * d * 2
    bound_us = (weights + kv) / hbm * 1e6
    t = decode_8b["totals"][0]
    assert t["stream_bound_us"] == pytest.approx(bound_us, rel=1e-9)
    assert bound_us <= t["decode_us_per_token"] <= 1.5 * bound_us


def test_tp8_prefill_has_allreduces_that_follow_the_archspec_links(tmp_path):
    args = ["model", "llama3-70b", "--tp", "8", "--phase", "prefill", "--tokens", "2048", "--format", "jsonl"]
    r = run([*args, "--arch", "mi300x"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.output.splitlines()]
    ar = [x for x in rows if x["kernel"] == "allreduce"]
    assert len(ar) == 2 * 80  # after attention and after the MLP of every layer
    assert all(x["shape"] == {"bytes": 2048 * 8192 * 2, "ranks": 8, "algo": "auto"} for x in ar)
    assert all(x["bound"] == "memory:link" for x in ar)
    gemm = [x for x in rows if x["module"] == "layers.0.self_attn.qkv_proj"][0]
    assert gemm["shape"]["n"] == (64 + 2 * 8) * 128 // 8  # heads and KV heads sharded over 8 ranks
    # twice the per-link bandwidth in the archspec (raw and usable): the bandwidth part of each all-reduce halves
    data = yaml.safe_load((ROOT / "archspecs" / "mi300x.yaml").read_text())
    data["interconnect"][0]["bandwidth"]["value"] *= 2
    data["interconnect"][0]["usable"]["value"] *= 2
    fast = tmp_path / "mi300x-fast-links.yaml"
    fast.write_text(yaml.safe_dump(data))
    r2 = run([*args, "--arch", str(fast)])
    ar2 = [json.loads(x) for x in r2.output.splitlines() if '"allreduce"' in x]
    from perfmodel.models.collectives import STEP_LATENCY_US

    lat = 2 * 7 * STEP_LATENCY_US["xgmi"][1]
    assert ar2[0]["terms_us"]["memory:link"] - lat == pytest.approx((ar[0]["terms_us"]["memory:link"] - lat) / 2, rel=1e-9)


def test_side_by_side_archs_and_table(tmp_path):
    r = run(["model", "llama3-8b", "--arch", "mi300x,mi355x,h100", "--phase", "decode", "--kv-len", "1024", "-o", str(tmp_path / "l.png")])
    assert r.exit_code == 0, r.output
    for a in ("mi300x", "mi355x", "h100"):
        assert a in r.output
    assert (tmp_path / "l.png").stat().st_size > 0 and (tmp_path / "l-roofline.png").stat().st_size > 0


@pytest.mark.parametrize(
    "args",
    [
        ["mixtral-8x7b", "--phase", "decode", "--batch", "8", "--kv-len", "1024", "--ep", "8"],
        ["deepseek-v3", "--phase", "decode", "--batch", "16", "--kv-len", "2048", "--tp", "8"],
        ["deepseek-v3", "--phase", "prefill", "--tokens", "512", "--tp", "8"],
        ["qwen2.5-7b", "--phase", "decode", "--kv-len", "512", "--paged", "--block-size", "16", "--engine", "eager"],
        ["deepseek-v3", "--phase", "decode", "--batch", "32", "--kv-len", "1024", "--tp", "8", "--dtype", "fp8"],
        ["gpt-oss-20b", "--phase", "decode", "--batch", "8", "--kv-len", "4096"],
    ],
)
def test_other_builtin_models(args):
    r = run(["model", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    kernels = {x["kernel"] for x in d["ops"]}
    assert d["unsupported"] == [] and d["totals"][0]["total_us"] > 0
    if "--ep" in args:
        assert {"moe", "alltoall"} <= kernels
    if "deepseek-v3" in args:
        assert "moe" in kernels and "allreduce" in kernels
        attn = [x for x in d["ops"] if x["kernel"] == "attention"][0]["shape"]
        # MLA: decode attends over the latent cache (one KV head of 512 + 64 whose first 512
        # channels are the values, read once), prefill expands heads of 192 (values of 128)
        got = (attn["kv_heads"], attn["head_dim"], attn["head_dim_v"], attn["kv_shared"])
        assert got == ((1, 576, 512, True) if "decode" in args else (16, 192, 128, False))
    if "fp8" in args:
        assert {x["dtype"] for x in d["ops"] if x["kernel"] not in ("allreduce", "alltoall")} == {"fp8"}
    if "--paged" in args:
        assert all(x["shape"]["paged"] for x in d["ops"] if x["kernel"] == "attention")


def test_hf_config_json_and_fused_flag(tmp_path):
    cfg = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 4,
           "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 32000, "torch_dtype": "float16"}
    p = tmp_path / "tiny" / "config.json"
    p.parent.mkdir()
    p.write_text(json.dumps(cfg))
    r = run(["model", str(p), "--phase", "prefill", "--tokens", "128", "--engine", "eager", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["meta"]["model"] == "tiny" and d["meta"]["dtype"] == "fp16"
    assert {x["layer"] for x in d["ops"]} >= {"layers.0", "layers.3", "embed_tokens", "lm_head"}
    r2 = run(["model", str(p), "--phase", "prefill", "--tokens", "128", "--engine", "eager", "--fused", "--format", "json"])
    d2 = json.loads(r2.output)
    assert len(d2["ops"]) < len(d["ops"]) and any(x["op"].startswith("fused(") for x in d2["ops"])


@pytest.mark.parametrize(
    "args, words",
    [
        (["llama9-8b"], ["unknown model 'llama9-8b'", "llama3-8b"]),
        (["llama3-8b", "--tp", "3"], ["--tp", "not divisible by tp=3"]),
        (["mixtral-8x7b", "--ep", "3"], ["--ep", "8 experts"]),
        (["llama3-8b", "--ep", "2"], ["--ep", "no experts"]),
        (["llama3-8b", "--dtype", "fp12"], ["--dtype", "fp12"]),
    ],
)
def test_bad_input_is_one_line_exit_2(args, words):
    r = CliRunner().invoke(cli, ["model", *args])
    assert r.exit_code == 2
    line = r.output.strip()
    assert line.startswith("error: ") and "\n" not in line and "Traceback" not in line
    for w in words:
        assert w in line


def test_bad_config_json_names_the_file_and_key(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 16}))
    r = CliRunner().invoke(cli, ["model", str(p), "-O", str(tmp_path / "out.json"), "--format", "json"])
    assert r.exit_code == 2 and "config.json" in r.output and "num_hidden_layers" in r.output
    assert not (tmp_path / "out.json").exists()
    p.write_text("{not json")
    r = CliRunner().invoke(cli, ["model", str(p)])
    assert r.exit_code == 2 and "malformed JSON" in r.output


def test_model_command_without_torch_is_one_line(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from perfmodel.cli.main import main\n"
        "main(['model', 'llama3-8b'])\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().startswith("error: ") and "perfmodel[torch]" in p.stderr and "Traceback" not in p.stderr


def test_table_csv_and_md_views():
    base = ["model", "llama3-8b", "--phase", "decode", "--kv-len", "256", "--arch", "mi300x,h100"]
    r = run([*base, "--layers"])
    assert r.exit_code == 0 and "time per layer" in r.output and "layers.31" in r.output and "lm_head" in r.output
    r = run([*base, "--format", "csv"])
    lines = r.output.splitlines()
    assert lines[0].startswith("arch,layer,module,op,kernel") and len(lines) == 1 + 2 * 323
    r = run([*base, "--format", "md", "--ops"])
    assert r.output.count("| mi300x |") == 323


def test_deepseek_v2_lite_style_config_without_query_compression(tmp_path):
    cfg = {"model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408,
           "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64,
           "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "q_lora_rank": None,
           "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    r = run(["model", str(p), "--phase", "decode", "--batch", "4", "--kv-len", "256", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    mods = {x["module"] for x in d["ops"]}
    assert "layers.0.self_attn.q_proj" in mods and "layers.1.mlp" in mods
    assert sum(1 for x in d["ops"] if x["kernel"] == "moe") == 2


def test_off_cell_notes_name_the_share_of_step_time_they_cover(monkeypatch):
    """An off cell (here: GEMMs on CDNA3, flagged for the test) gives one note per arch under the
    summary, with the share of that arch's step its ops take; an arch outside it gets none."""
    from perfmodel import error_bands

    cell = {"median": 0.5, "p10": 0.25, "p90": 0.8, "n": 20, "sources": 3}
    monkeypatch.setattr(error_bands, "cells", lambda: {"gemm/CDNA3": cell})
    r = run(["model", "llama3-8b", "--phase", "decode", "--kv-len", "256", "--arch", "mi300x,h100", "--format", "json"])
    ops = json.loads(r.output)["ops"]
    gemm_share = sum(o["share"] for o in ops if o["arch"] == "mi300x" and o["kernel"] == "gemm")
    assert 0.3 < gemm_share < 1.0
    text = run(["model", "llama3-8b", "--phase", "decode", "--kv-len", "256", "--arch", "mi300x,h100"]).output
    notes = [ln for ln in text.splitlines() if ln.startswith("note (")]
    assert len(notes) == 1 and notes[0].startswith(f"note (mi300x, ops taking {gemm_share:.0%} of its time): measured elsewhere:")


GEMMA2 = {"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 4,
          "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000,
          "hidden_activation": "gelu_pytorch_tanh", "sliding_window": 4096, "attn_logit_softcapping": 50.0,
          "final_logit_softcapping": 30.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}


def _model_json(tmp_path, cfg, *args):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    r = run(["model", str(p), "--arch", "mi300x", "--format", "json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("engine", ["vllm", "eager"])
def test_gemma2_slides_every_other_layer_and_caps_its_logits(tmp_path, engine):
    """Gemma 2 (transformers' rule: even layers slide over 4096 keys, odd ones see everything):
    FlashAttention with the window and the logit soft cap on every layer, the tanh GELU MLP,
    four norms a layer, the embeddings scaled; a decode's sliding layers read their window of
    the cache, so they take less time, and the stream floor counts only that window."""
    d = _model_json(tmp_path, GEMMA2, "--phase", "decode", "--batch", "8", "--kv-len", "32768", "--engine", engine)
    att = [x for x in d["ops"] if x["kernel"] == "attention"]
    assert len(att) == 4 and all(x["shape"]["softcap"] == 50.0 for x in att)
    windows = [x["shape"]["window"] for x in sorted(att, key=lambda x: x["layer"])]
    assert windows == [4096, 0, 4096, 0]
    slide, full = (next(x["time_us"] for x in att if x["shape"]["window"] == w) for w in (4096, 0))
    assert slide < 0.25 * full
    norms = [x["module"] for x in d["ops"] if x["kernel"] == "rmsnorm" and x["layer"] == "layers.1"]
    assert len(norms) == 4
    act = [x for x in d["ops"] if x["kernel"] == "elementwise" and x["layer"] == "layers.1" and "mlp" in x["module"]]
    assert any(x["shape"].get("sfu_per_element") == 2.0 for x in act)  # the tanh GELU: exp and rcp
    ctx = 32769
    kv = 2 * 8 * 4 * (2 * 4096 + 2 * ctx) * 256 * 2  # two sliding layers, two full
    assert d["meta"]["stream_bytes"]["kv_cache"] == pytest.approx(kv)


def test_gemma3_multimodal_config_qwen3_mistral_and_qwen2_windows(tmp_path):
    """Gemma 3's language model from a multimodal config (its text_config): five sliding layers
    of every six (sliding_window_pattern) and per-head q/k norms; Qwen3's q/k norms; a
    Mistral-style sliding_window on every layer; Qwen2's use_sliding_window from
    max_window_layers on; an explicit layer_types list wins."""
    g3 = {"model_type": "gemma3", "text_config": {"hidden_size": 640, "intermediate_size": 2048, "num_hidden_layers": 12,
          "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144,
          "sliding_window": 512, "sliding_window_pattern": 6}}
    d = _model_json(tmp_path, g3, "--phase", "prefill", "--tokens", "2048")
    att = sorted((x for x in d["ops"] if x["kernel"] == "attention"), key=lambda x: int(x["layer"].split(".")[1]))
    assert [x["shape"]["window"] for x in att] == ([512] * 5 + [0]) * 2
    assert sum(1 for x in d["ops"] if x["module"].endswith(("q_norm", "k_norm"))) == 24
    base = {"hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 4, "num_attention_heads": 16,
            "num_key_value_heads": 4, "vocab_size": 32000}
    q3 = _model_json(tmp_path, {**base, "model_type": "qwen3", "head_dim": 128}, "--phase", "prefill", "--tokens", "256")
    assert sum(1 for x in q3["ops"] if x["module"].endswith("q_norm")) == 4
    cases = [({"model_type": "mistral", "sliding_window": 1024}, [1024] * 4),
             ({"model_type": "qwen2", "sliding_window": 1024, "use_sliding_window": True, "max_window_layers": 2}, [0, 0, 1024, 1024]),
             ({"model_type": "qwen2", "sliding_window": 1024}, [0] * 4),
             ({"model_type": "mistral", "sliding_window": 1024, "layer_types": ["full_attention", "sliding_attention"] * 2}, [0, 1024] * 2)]
    for extra, want in cases:
        d = _model_json(tmp_path, {**base, **extra}, "--phase", "prefill", "--tokens", "4096")
        att = sorted((x for x in d["ops"] if x["kernel"] == "attention"), key=lambda x: int(x["layer"].split(".")[1]))
        assert [x["shape"].get("window", 0) for x in att] == want, extra


def test_bad_layer_types_names_the_key(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**GEMMA2, "layer_types": ["sliding_attention"] * 3}))
    r = CliRunner().invoke(cli, ["model", str(p)])
    assert r.exit_code == 2 and "layer_types" in r.output and "expected 4 entries" in r.output and "Traceback" not in r.output


def test_qwen_moe_configs_have_their_experts(tmp_path):
    """Qwen3-MoE and Qwen2-MoE configs (num_experts, num_experts_per_tok, moe_intermediate_size;
    decoder_sparse_step and mlp_only_layers choose the MoE layers; Qwen2-MoE's shared expert of
    shared_expert_intermediate_size) were traced as dense models before 2026-11-27."""
    q3 = {"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768,
          "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
          "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936}
    d = _model_json(tmp_path, q3, "--phase", "decode", "--batch", "16", "--kv-len", "1024")
    moe = [x for x in d["ops"] if x["kernel"] == "moe"]
    assert len(moe) == 4 and {(x["shape"]["experts"], x["shape"]["topk"], x["shape"]["inter"]) for x in moe} == {(128, 8, 768)}
    assert not any("mlp.gate_up_proj" in x["module"] for x in d["ops"])
    assert sum(1 for x in d["ops"] if x["module"].endswith("q_norm")) == 4
    q2 = {"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
          "shared_expert_intermediate_size": 5632, "num_hidden_layers": 4, "num_attention_heads": 16,
          "num_key_value_heads": 16, "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1,
          "mlp_only_layers": [0], "vocab_size": 151936}
    d = _model_json(tmp_path, q2, "--phase", "decode", "--batch", "16", "--kv-len", "1024")
    moe_layers = sorted({x["layer"] for x in d["ops"] if x["kernel"] == "moe"})
    assert moe_layers == ["layers.1", "layers.2", "layers.3"]
    shared = [x for x in d["ops"] if x["layer"] == "layers.1" and "shared.gate_up_proj" in x["module"]]
    assert shared and shared[0]["shape"]["n"] == 2 * 5632
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**q2, "shared_expert_intermediate_size": 1000}))
    r = CliRunner().invoke(cli, ["model", str(p)])
    assert r.exit_code == 2 and "shared_expert_intermediate_size" in r.output


GPT_OSS = {"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"], "attention_bias": True, "head_dim": 64,
           "hidden_act": "silu", "hidden_size": 2880, "intermediate_size": 2880, "num_attention_heads": 64,
           "num_key_value_heads": 8, "num_hidden_layers": 4, "num_local_experts": 32, "num_experts_per_tok": 4,
           "layer_types": ["sliding_attention", "full_attention"] * 2, "sliding_window": 128, "vocab_size": 201088,
           "torch_dtype": "bfloat16",
           "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn",
                                   "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}}


def test_builtin_gpt_oss_follows_the_model_card():
    """gpt-oss-120b / -20b (model card, arXiv:2508.10925): 36 / 24 layers of 128 / 32 experts,
    top-4, width 2880, 64 query and 8 KV heads of 64, every other layer a 128-token window
    (the first one banded), MXFP4 experts with a scale per 32 weights."""
    from perfmodel.frontend.config import builtin_names, load_config

    for name, layers, experts in (("gpt-oss-120b", 36, 128), ("gpt-oss-20b", 24, 32)):
        assert name in builtin_names()
        c = load_config(name)
        assert (c.family, c.layers, c.experts, c.topk, c.hidden, c.moe_inter) == ("mixtral", layers, experts, 4, 2880, 2880)
        assert (c.heads, c.kv_heads, c.head_dim, c.window) == (64, 8, 64, 128)
        assert c.window_layers == (True, False) * (layers // 2)
        assert (c.expert_weights, c.expert_group) == ("fp4", 32)


def test_mxfp4_experts_are_timed_as_stored(tmp_path):
    """gpt-oss's quantization_config (quant_method mxfp4) stores the routed experts as FP4 with one
    scale per 32 weights and keeps the rest in bf16: the MoE ops carry weight_dtype=fp4 and
    group_size=32, they and the decode's stream floor read about a quarter of the bf16 expert
    bytes, and the output names the quantization; a method the model does not time is named as
    such (before 2026-11-27 both were timed as bf16 experts without a word)."""
    d = _model_json(tmp_path, GPT_OSS, "--phase", "decode", "--batch", "64", "--kv-len", "8192")
    moe = [x for x in d["ops"] if x["kernel"] == "moe"]
    assert len(moe) == 4 and all((x["shape"]["weight_dtype"], x["shape"]["group_size"]) == ("fp4", 32) for x in moe)
    assert "mxfp4" in d["meta"]["quantization"]
    plain = {k: v for k, v in GPT_OSS.items() if k != "quantization_config"}
    p = _model_json(tmp_path, plain, "--phase", "decode", "--batch", "64", "--kv-len", "8192")
    assert "quantization" not in p["meta"] and all(x["shape"].get("weight_dtype", "auto") == "auto" for x in p["ops"] if x["kernel"] == "moe")
    moe_us = sum(x["time_us"] for x in moe)
    plain_us = sum(x["time_us"] for x in p["ops"] if x["kernel"] == "moe")
    assert moe_us < 0.5 * plain_us
    # expert weights: 0.5 B + a 2 B scale per 32 (the weight-only kernels' accounting) against 2 B
    drop = p["meta"]["stream_bytes"]["weights"] - d["meta"]["stream_bytes"]["weights"]
    from perfmodel.models.moe import touched_experts

    experts = 4 * float(touched_experts(64, 32, 4)) * 3 * 2880 * 2880
    assert drop == pytest.approx(experts * (2 - (0.5 + 2 / 32)))
    other = _model_json(tmp_path, {**GPT_OSS, "quantization_config": {"quant_method": "awq"}}, "--phase", "decode")
    assert other["meta"]["quantization"].startswith("awq: not modelled")
    r = CliRunner().invoke(cli, ["model", str(tmp_path / "config.json")])
    assert "checkpoint quantization: awq: not modelled" in r.output
    (tmp_path / "config.json").write_text(json.dumps({**GPT_OSS, "quantization_config": "mxfp4"}))
    r = CliRunner().invoke(cli, ["model", str(tmp_path / "config.json")])
    assert r.exit_code == 2 and "quantization_config" in r.output and "Traceback" not in r.output


def test_fp8_block_checkpoint_runs_its_linear_layers_in_fp8(tmp_path):
    """DeepSeek-V3's published quantization_config (fp8, 128x128 weight blocks): the decoder's
    linear layers and the experts are block-scaled FP8 GEMMs writing bf16, while attention (and
    MLA's absorbed products), norms and the LM head stay bf16; the decode's stream floor reads
    those weights at 1 B (plus an fp32 scale per block). --dtype bf16 times every op in bf16
    and says so; a malformed weight_block_size is one line naming the key."""
    d = json.loads(run(["model", "deepseek-v3", "--phase", "decode", "--batch", "16", "--kv-len", "2048", "--tp", "8",
                        "--format", "json"]).output)
    by = {}
    for x in d["ops"]:
        name = x["module"].rsplit(".", 1)[-1]
        by.setdefault((x["kernel"], name.endswith("_proj") or name), set()).add((x["dtype"], x["shape"].get("scaling"), x["shape"].get("out_dtype")))
    assert by[("gemm", True)] == {("fp8", "block", "bf16")}
    assert by[("gemm", "lm_head")] == {("bf16", "none", "auto")} and by[("gemm", "self_attn")] == {("bf16", "none", "auto")}
    assert by[("moe", "mlp")] == {("fp8", "block", "bf16")}
    assert {x["dtype"] for x in d["ops"] if x["kernel"] in ("attention", "rmsnorm")} == {"bf16"}
    assert d["meta"]["quantization"].startswith("fp8: decoder linear layers and experts as fp8 GEMMs (128x128 weight blocks")
    b = json.loads(run(["model", "deepseek-v3", "--phase", "decode", "--batch", "16", "--kv-len", "2048", "--tp", "8",
                        "--dtype", "bf16", "--format", "json"]).output)
    assert {x["dtype"] for x in b["ops"] if x["kernel"] in ("gemm", "moe")} == {"bf16"}
    assert b["meta"]["quantization"].endswith("--dtype bf16 given: every op timed in it")
    ratio = d["meta"]["stream_bytes"]["weights"] / b["meta"]["stream_bytes"]["weights"]
    assert 0.5 < ratio < 0.56  # the linear layers halve; LM head, router and absorbed products stay bf16
    assert d["totals"][0]["total_us"] < b["totals"][0]["total_us"]  # half the weight bytes, the block rescale on top
    cfg = yaml.safe_load((ROOT / "perfmodel/frontend/configs/deepseek-v3.yaml").read_text())["config"]
    for bad in ([128], "128x128", [128, 0], [True, True]):
        p = tmp_path / "config.json"
        p.write_text(json.dumps({**cfg, "quantization_config": {"quant_method": "fp8", "weight_block_size": bad}}))
        r = CliRunner().invoke(cli, ["model", str(p)])
        assert r.exit_code == 2 and "weight_block_size" in r.output and "Traceback" not in r.output


def test_resident_bytes_say_whether_a_rank_fits_its_gpu(decode_8b):
    """Llama-3-8B in bf16 holds its 8.03 B parameters (embedding and LM head untied) and the KV
    cache: it fits an MI300X, not a 16 GB RX 9070 XT; DeepSeek-V3 (671 B parameters, fp8) fits
    no single GPU and fits an MI300X at tp 8 / ep 8. A rank that does not fit is said, once per GPU."""
    h, inter, layers, vocab, kvh, d = 4096, 14336, 32, 128256, 8, 128
    weights = (layers * (h * (32 + 2 * kvh) * d + 32 * d * h + 3 * h * inter) + 2 * h * vocab) * 2
    assert weights == pytest.approx(2 * 8.03e9, rel=0.01)
    kv = layers * 2 * kvh * 4097 * d * 2
    t = decode_8b["totals"][0]
    assert t["memory_gb"] * 1e9 == pytest.approx(weights + kv, rel=1e-9) and t["fits"] is True
    r = run(["model", "llama3-8b", "--arch", "mi300x,rx9070xt"])
    assert r.exit_code == 0
    notes = [ln for ln in r.output.splitlines() if "does not fit" in ln]
    assert len(notes) == 1 and notes[0].startswith("note: rx9070xt: does not fit") and "the GPU has 16 GB" in notes[0]
    one = json.loads(run(["model", "deepseek-v3", "--arch", "mi355x", "--format", "json"]).output)
    assert one["totals"][0]["fits"] is False and 650 < one["totals"][0]["memory_gb"] < 700
    eight = json.loads(run(["model", "deepseek-v3", "--arch", "mi300x", "--tp", "8", "--ep", "8", "--format", "json"]).output)
    assert eight["totals"][0]["fits"] is True and eight["totals"][0]["memory_gb"] < 192
