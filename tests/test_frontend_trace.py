"""The meta-device tracer and the op -> case rules on small hand-made modules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from perfmodel.frontend.opmap import OpRecord, to_case

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


class Block(nn.Module):
    def __init__(self, d=64, h=4):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, s, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = self.out(o.transpose(1, 2).reshape(b, s, d))
        return torch.sort(F.gelu(y) + x, dim=1).values  # sort: a kernel op with no model


def _trace(module, *inputs):
    from perfmodel.frontend.trace import trace

    return trace(module, *inputs)


def test_sdpa_is_one_op_and_module_paths_are_kept():
    with torch.device("meta"):
        m = Block()
    recs = _trace(m, torch.empty(2, 16, 64, device="meta"))
    names = [r.op for r in recs]
    assert names.count("aten::scaled_dot_product_attention") == 1
    assert "aten::bmm" not in names and "aten::_softmax" not in names  # no decomposition recorded
    mm = [r for r in recs if r.name in ("mm", "addmm")]
    assert [r.module for r in mm] == ["qkv", "out"]
    case, why = to_case(next(r for r in recs if r.name == "scaled_dot_product_attention"))
    assert why is None
    assert case == {"kernel": "attention", "batch": 2, "heads": 4, "kv_heads": 4, "seq_q": 16, "seq_kv": 16,
                    "head_dim": 16, "causal": True, "dtype": "fp32"}
    qkv, _ = to_case(mm[0])
    assert qkv == {"kernel": "gemm", "m": 32, "n": 192, "k": 64, "batch": 1, "dtype": "fp32"}


def test_analyze_lists_unsupported_ops_and_sums_only_predicted_ones():
    import perfmodel

    with torch.device("meta"):
        m = Block()
    a = perfmodel.analyze(m, torch.empty(2, 16, 64, device="meta"), arch=["mi300x", "h100"], dtype="bf16")
    assert a.archs == ["mi300x", "h100"]
    assert [u["op"] for u in a.unsupported] == ["aten::sort"]
    assert "2x16x64" in a.unsupported[0]["shapes"]
    for arch in a.archs:
        rows = [r for r in a.rows if r["arch"] == arch]
        assert {"op", "module", "layer", "time_us", "bound", "flops", "bytes", "share"} <= set(rows[0])
        assert a.total_us(arch) == pytest.approx(sum(r["time_us"] for r in rows))
        assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    kernels = {r["kernel"] for r in a.rows}
    assert {"gemm", "attention", "layernorm", "elementwise"} <= kernels
    assert a.no_kernel.get("view", 0) >= 1  # views are counted, not timed


def test_real_weights_are_traced_on_a_meta_copy():
    import perfmodel

    m = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8))
    a = perfmodel.analyze(m, torch.randn(4, 32), arch="mi300x")
    assert m[0].weight.device.type == "cpu"  # the caller's module is untouched
    gemms = [r for r in a.rows if r["kernel"] == "gemm"]
    assert [r["shape"]["n"] for r in gemms] == [32, 8]
    assert [r["module"] for r in gemms] == ["0", "2"]


def test_fused_merges_an_elementwise_chain():
    from perfmodel.frontend.analysis import analyze_records

    recs = [
        OpRecord(op="aten::silu", module="mlp", inputs=[(8, 128)], dtypes=["torch.bfloat16"], outputs=[(8, 128)], out_dtype="torch.bfloat16"),
        OpRecord(op="aten::mul", module="mlp", inputs=[(8, 128), (8, 128)], dtypes=["torch.bfloat16"] * 2, outputs=[(8, 128)], out_dtype="torch.bfloat16"),
    ]
    plain = analyze_records(recs, "mi300x")
    fused = analyze_records(recs, "mi300x", fused=True)
    assert len(plain.rows) == 2 and len(fused.rows) == 1
    assert fused.rows[0]["op"] == "fused(silu+mul)"
    # silu (3 VALU + 2 SFU per element, models.activations) then the gating multiply (1 VALU)
    shape = fused.rows[0]["shape"]
    assert shape["reads"] == 2 and shape["flops_per_element"] == 4 and shape["sfu_per_element"] == 2
    assert fused.total_us("mi300x") < plain.total_us("mi300x")


def test_core_imports_and_predicts_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import perfmodel\n"
        "r = perfmodel.predict('allreduce', 'mi300x', bytes=2**20, ranks=8)[0]\n"
        "from perfmodel.frontend.opmap import to_case\n"
        "import perfmodel.traces, perfmodel.frontend.config\n"
        "print(r.bound, 'torch' in sys.modules and sys.modules['torch'] is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-1] == "False"


def test_an_all_unsupported_module_still_has_totals():
    import perfmodel

    class Only(nn.Module):
        def forward(self, x):
            return torch.sort(x, 0).values

    a = perfmodel.analyze(Only(), torch.empty(16, 16, device="meta"), arch=["mi300x", "h100"])
    assert a.rows == [] and len(a.unsupported) == 1
    assert [(t["arch"], t["total_us"], t["unsupported_ops"]) for t in a.totals()] == [("mi300x", 0, 1), ("h100", 0, 1)]


def test_channels_last_convolution_is_traced_as_nhwc():
    """The tracer records strides: a channels_last input makes the conv case NHWC (no layout
    transposes), a contiguous one NCHW, and the NCHW prediction is the slower."""
    import perfmodel
    from perfmodel.frontend.trace import trace

    conv = torch.nn.Conv2d(64, 64, 3, padding=1)
    x = torch.randn(8, 64, 56, 56)
    cases = {}
    for fmt in (torch.contiguous_format, torch.channels_last):
        recs = [r for r in trace(conv.to(memory_format=fmt), x.to(memory_format=fmt)) if "conv" in r.op]
        case, why = to_case(recs[0], "bf16")
        assert why is None
        cases[fmt] = case
    assert cases[torch.channels_last]["layout"] == "nhwc" and cases[torch.contiguous_format]["layout"] == "nchw"
    t = {fmt: perfmodel.predict(**{**c, "arch": "mi300x"})[0].time_us for fmt, c in cases.items()}
    assert t[torch.contiguous_format] > t[torch.channels_last]


def test_a_channels_last_model_stays_channels_last_after_its_first_convolution():
    """On a GPU a convolution of a channels_last input returns a channels_last output; the meta
    device's returns a contiguous one, so the second convolution and the batch norm of a
    channels_last model read as NCHW (PyTorch's per-channel batch-norm kernels, layout
    transposes around the conv) until the tracer restores the GPU's memory format."""
    from perfmodel.frontend.trace import trace

    m = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.Conv2d(16, 16, 1))
    for fmt, want in ((torch.channels_last, "nhwc"), (torch.contiguous_format, "nchw")):
        recs = trace(m.to(memory_format=fmt), torch.randn(2, 16, 8, 8).to(memory_format=fmt))
        cases = [to_case(r, "bf16")[0] for r in recs if "conv" in r.op or "batch_norm" in r.op]
        assert [c["kernel"] for c in cases] == ["conv2d", "batchnorm", "conv2d"]
        assert [c["layout"] for c in cases] == [want] * 3
        assert not any(r.op in ("aten::clone", "aten::copy_") for r in recs)  # the restored format is no op


def test_fused_add_rmsnorm_ops_are_row_kernels_moving_two_tensors_each_way():
    """aiter::add_rmsnorm (out, x, residual_in, residual_out, weight), vLLM's fused_add_rms_norm and
    perfmodel's own marker op: an RMSNorm row kernel with reads=2 writes=2, not a flat elementwise op."""
    from perfmodel.frontend.opmap import to_case

    x = (15360, 4096)
    recs = [
        OpRecord(op="aiter::add_rmsnorm", inputs=[x, x, x, x, (4096,)], dtypes=["c10::BFloat16"] * 5),
        OpRecord(op="_C::fused_add_rms_norm", inputs=[x, x, (4096,)], dtypes=["c10::BFloat16"] * 3),
        OpRecord(op="perfmodel::fused_add_rms_norm", inputs=[x, x, (4096,)], dtypes=["torch.bfloat16"] * 3),
    ]
    for rec in recs:
        case, why = to_case(rec)
        assert why is None, rec.op
        assert case == {"kernel": "rmsnorm", "rows": 15360, "cols": 4096, "reads": 2, "writes": 2, "dtype": "bf16"}, rec.op


def test_flash_attention_ops_carry_their_causal_flag_and_window():
    """FlashAttention's own spellings: flash_attn_func(q, k, v, dropout_p, softmax_scale, causal,
    window_size=(left, right)) and aten::_flash_attention_forward(..., is_causal at 8,
    window_size_left/right at 11/12). A left window of 1023 keeps the query and 1023 keys before
    it (window=1024); a window with keys on both sides has no model."""
    q = (2, 4096, 32, 128)
    kv = (2, 4096, 8, 128)
    bf = ["c10::BFloat16"] * 3
    rec = OpRecord(op="flash_attn::flash_attn_func", inputs=[q, kv, kv], dtypes=bf, kwargs={"causal": True, "window_size": (1023, 0)})
    case, why = to_case(rec)
    assert why is None and case["causal"] is True and case["window"] == 1024
    scalars = [None] * 3 + [0.0, None, True, 1023, 0]  # _flash_attn_forward: positional causal, left, right
    case, _ = to_case(OpRecord(op="flash_attn::_flash_attn_forward", inputs=[q, kv, kv], dtypes=bf, scalars=scalars))
    assert case["causal"] is True and case["window"] == 1024
    aten = [None] * 7 + [0.0, False, False, None, 511, 0]  # not is_causal, but no keys after the query
    case, _ = to_case(OpRecord(op="aten::_flash_attention_forward", inputs=[q, kv, kv] + [None] * 4, dtypes=bf, scalars=aten))
    assert case["causal"] is True and case["window"] == 512
    plain, _ = to_case(OpRecord(op="flash_attn::flash_attn_func", inputs=[q, kv, kv], dtypes=bf, kwargs={"window_size": (-1, -1)}))
    assert "window" not in plain and plain["causal"] is False
    _, why = to_case(OpRecord(op="flash_attn::flash_attn_func", inputs=[q, kv, kv], dtypes=bf, kwargs={"window_size": (256, 256)}))
    assert why and "sliding window" in why


def test_flash_attention_ops_carry_their_softcap():
    """FlashAttention's logit soft cap (Gemma 2): the `softcap` keyword, or its position after the
    window (flash_attn_func: the (left, right) pair at 6, softcap at 7; _flash_attn_forward since
    2.6.3: window_size_left/right at 6/7, softcap at 8). 0 means none; aten's flash op has none."""
    q = kv = (1, 2048, 16, 256)
    bf = ["c10::BFloat16"] * 3
    case, why = to_case(OpRecord(op="flash_attn::flash_attn_func", inputs=[q, kv, kv], dtypes=bf, kwargs={"causal": True, "softcap": 50.0}))
    assert why is None and case["softcap"] == 50.0
    scalars = [None] * 3 + [0.0, None, True, (-1, -1), 30.0]
    case, _ = to_case(OpRecord(op="flash_attn::flash_attn_func", inputs=[q, kv, kv], dtypes=bf, scalars=scalars))
    assert case["softcap"] == 30.0 and "window" not in case
    scalars = [None] * 3 + [0.0, None, True, 1023, 0, 50.0]
    case, _ = to_case(OpRecord(op="flash_attn::_flash_attn_forward", inputs=[q, kv, kv], dtypes=bf, scalars=scalars))
    assert case["softcap"] == 50.0 and case["window"] == 1024
    none, _ = to_case(OpRecord(op="flash_attn::flash_attn_func", inputs=[q, kv, kv], dtypes=bf, kwargs={"softcap": 0.0}))
    assert "softcap" not in none


def test_aiter_mha_fwd_carries_its_causal_flag_and_window():
    """aiter's mha_fwd(q, k, v, dropout_p, softmax_scale, is_causal, window_size_left,
    window_size_right, ...) (ROCm/aiter csrc/include/mha_fwd.h): a torch.profiler trace records
    them as positional scalars, which the rules read (before, only an `is_causal` keyword counted,
    so a traced causal call was predicted with twice its FLOPs). No softcap there."""
    q = kv = (1, 4096, 32, 128)
    bf = ["c10::BFloat16"] * 3
    scalars = [None] * 3 + [0.0, 0.0884, True, -1, -1, True, False]
    case, why = to_case(OpRecord(op="aiter::mha_fwd", inputs=[q, kv, kv], dtypes=bf, scalars=scalars))
    assert why is None and case["causal"] is True and "window" not in case and "softcap" not in case
    scalars = [None] * 3 + [0.0, 0.0884, False, 1023, 0, True, False]
    case, _ = to_case(OpRecord(op="aiter::mha_fwd", inputs=[q, kv, kv], dtypes=bf, scalars=scalars))
    assert case["causal"] is True and case["window"] == 1024
    plain, _ = to_case(OpRecord(op="aiter::mha_fwd", inputs=[q, kv, kv], dtypes=bf, scalars=[None] * 3 + [0.0, 0.0884, False, -1, -1]))
    assert plain["causal"] is False


def test_varlen_attention_ops_read_their_own_positions():
    """Packed (varlen) attention: q [tokens, heads, dim] and cu_seqlens_q [batch + 1]. aiter's
    mha_varlen_fwd was matched by the 4-D attention rule until 2026-11-27 and came out as one
    sequence of 32 queries over 8 keys with 8192 heads; its causal flag sits at 10 and its window
    at 11/12 (csrc/include/mha_varlen_fwd.h); FlashAttention's _flash_attn_varlen_forward has
    causal, window and softcap at 9-12. seq_kv is the packed keys over the sequences."""
    q, kv, cu = (8192, 32, 128), (6144, 8, 128), (5,)
    dt = ["c10::BFloat16"] * 3 + ["int"] * 2
    aiter = [None] * 5 + [2048, 2048, 0.0, 0.088, False, True, -1, -1, True, False]
    case, why = to_case(OpRecord(op="aiter::mha_varlen_fwd", inputs=[q, kv, kv, cu, cu], dtypes=dt, scalars=aiter))
    assert why is None
    assert (case["batch"], case["heads"], case["kv_heads"], case["seq_q"], case["seq_kv"]) == (4, 32, 8, 2048, 1536)
    assert case["causal"] is True and "window" not in case
    fa = [None] * 5 + [2048, 2048, 0.0, 0.088, False, 1023, 0, 30.0]
    case, _ = to_case(OpRecord(op="flash_attn::_flash_attn_varlen_forward", inputs=[q, kv, kv, cu, cu], dtypes=dt, scalars=fa))
    assert case["causal"] is True and case["window"] == 1024 and case["softcap"] == 30.0
    fa = [None] * 5 + [2048, 2048, 0.0, 0.088, False, -1, -1, 0.0]
    case, _ = to_case(OpRecord(op="flash_attn::_flash_attn_varlen_forward", inputs=[q, kv, kv, cu, cu], dtypes=dt, scalars=fa))
    assert case["causal"] is False and "window" not in case and "softcap" not in case


def test_aten_attention_backends_read_their_own_layout_and_mask():
    """SDPA's backends as a trace records them (pytorch native_functions.yaml):
    _scaled_dot_product_cudnn_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p,
    is_causal at 6, ...) takes [batch, heads, seq, dim]; the memory-efficient kernel
    _efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
    max_seqlen_k, dropout_p, custom_mask_type at 9, ...) takes [batch, seq, heads, dim] (xformers'
    BMHK) and is causal for mask types 1 and 2. Before 2026-11-27 the first lost its causal flag
    and the second was read with seq and heads swapped."""
    bf = ["c10::BFloat16"] * 3
    bhsd = (2, 16, 4096, 128)
    case, why = to_case(OpRecord(op="aten::_scaled_dot_product_cudnn_attention", inputs=[bhsd] * 3, dtypes=bf, scalars=[None] * 4 + [True, 0.0, True, False]))
    assert why is None and case["causal"] is True and (case["heads"], case["seq_q"]) == (16, 4096)
    bshd = (2, 4096, 16, 128)
    scalars = [None] * 8 + [0.0, 2, True]
    case, _ = to_case(OpRecord(op="aten::_efficient_attention_forward", inputs=[bshd] * 3, dtypes=bf, scalars=scalars))
    assert (case["batch"], case["heads"], case["seq_q"], case["seq_kv"], case["head_dim"]) == (2, 16, 4096, 4096, 128)
    assert case["causal"] is True
    scalars = [None] * 8 + [0.0, 0, True]
    case, _ = to_case(OpRecord(op="aten::_efficient_attention_forward", inputs=[bshd] * 3, dtypes=bf, scalars=scalars))
    assert case["causal"] is False


def test_attention_backward_ops_become_backward_cases():
    """Training traces: the attention backward kernels' ops (aten's flash and memory-efficient
    backward, SDPA's wrappers, FlashAttention's _flash_attn_backward) map to `phase=bwd` cases,
    their query, key and value after the output gradient, causal flag, window and soft cap from
    their signatures' positions."""
    bf = ["c10::BFloat16"] * 6
    bshd, kv, lse = (2, 4096, 32, 128), (2, 4096, 8, 128), (2, 32, 4096)
    aten = [None] * 10 + [0.0, True, None, None, 0.088, None, None]
    case, why = to_case(OpRecord(op="aten::_flash_attention_backward", inputs=[bshd, bshd, kv, kv, bshd, lse], dtypes=bf, scalars=aten))
    assert why is None and case["phase"] == "bwd" and case["causal"] is True
    assert (case["batch"], case["heads"], case["kv_heads"], case["seq_q"], case["seq_kv"]) == (2, 32, 8, 4096, 4096)
    fa = [None] * 9 + [0.0, 0.088, True, 1023, 0, 30.0]
    case, _ = to_case(OpRecord(op="flash_attn::_flash_attn_backward", inputs=[bshd, bshd, kv, kv, bshd, lse], dtypes=bf, scalars=fa))
    assert case["window"] == 1024 and case["softcap"] == 30.0 and case["phase"] == "bwd"
    bhsd, kvh = (2, 32, 4096, 128), (2, 8, 4096, 128)
    sdpa = [None] * 10 + [0.0, False]
    case, _ = to_case(OpRecord(op="aten::_scaled_dot_product_flash_attention_backward", inputs=[bhsd, bhsd, kvh, kvh, bhsd, lse], dtypes=bf, scalars=sdpa))
    assert case["causal"] is False and (case["heads"], case["seq_q"]) == (32, 4096)
    mem = [None] * 14 + [1, False]
    case, _ = to_case(OpRecord(op="aten::_efficient_attention_backward", inputs=[bshd, bshd, kv, kv, bshd, lse], dtypes=bf, scalars=mem))
    assert case["causal"] is True and case["seq_q"] == 4096
    aiter = [None] * 6 + [0.0, 0.088, True, 127, 0, False]  # aiter's mha_bwd: is_causal at 8, window at 9-10
    case, why = to_case(OpRecord(op="aiter::mha_bwd", inputs=[bshd, bshd, kv, kv, bshd, lse], dtypes=bf, scalars=aiter))
    assert why is None and case["phase"] == "bwd" and case["causal"] is True and case["window"] == 128
    assert (case["heads"], case["kv_heads"], case["seq_kv"]) == (32, 8, 4096)
    cudnn = [None] * 13 + [0.0, True]  # aten's cuDNN SDPA backward: is_causal at 14
    case, why = to_case(OpRecord(op="aten::_scaled_dot_product_cudnn_attention_backward", inputs=[bhsd, bhsd, kvh, kvh, bhsd, lse], dtypes=bf, scalars=cudnn))
    assert why is None and case["phase"] == "bwd" and case["causal"] is True and (case["heads"], case["kv_heads"]) == (32, 8)


def test_vllm_paged_attention_ops_are_decodes_over_the_paged_cache():
    """vLLM's paged-attention kernels (_C::paged_attention_v1/v2, _rocm_C::paged_attention) take a
    3-D query [sequences, heads, dim]; until 2026-11-27 the ROCm op fell to the 4-D attention rule
    (sequences read as heads). Sequences from seq_lens, max_seq_len as the keys, num_kv_heads and
    block_size from their positions (the ROCm op's query_start_loc shifts them by one)."""
    q, kc, bt, sl = (32, 32, 128), (5000, 8, 16, 16, 8), (32, 256), (32,)
    bf = ["c10::BFloat16"] * 12
    rocm = [None] * 7 + [8, 0.088, None, None, None, 16, 4096, None, "auto"]
    case, why = to_case(OpRecord(op="_rocm_C::paged_attention", inputs=[q, (32, 32, 16), (32, 32, 16), (32, 32, 16, 128), q, kc, kc, 8, 0.1, bt, sl], dtypes=bf, scalars=rocm))
    assert why is None
    want = {"batch": 32, "heads": 32, "kv_heads": 8, "seq_q": 1, "seq_kv": 4096, "head_dim": 128, "paged": True, "block_size": 16}
    assert {k: case[k] for k in want} == want
    old_rocm = [None] * 7 + [8, 0.088, None, None, 16, 2048]  # before query_start_loc
    case, _ = to_case(OpRecord(op="_rocm_C::paged_attention", inputs=[q, (32, 32, 16), (32, 32, 16), (32, 32, 16, 128), q, kc, kc, 8, 0.1, bt, sl], dtypes=bf, scalars=old_rocm))
    assert case["seq_kv"] == 2048 and case["block_size"] == 16
    v1 = [None] * 4 + [8, 0.088, None, None, 16, 4096]
    case, _ = to_case(OpRecord(op="_C::paged_attention_v1", inputs=[q, q, kc, kc, 8, 0.1, bt, sl], dtypes=bf, scalars=v1))
    assert {k: case[k] for k in want} == want


def test_transposed_and_dilated_convolutions_have_no_model():
    """aten::convolution(input, weight, bias, stride, padding, dilation, transposed, ...): a
    transposed convolution upsamples; with as many input as output channels its weight passed the
    grouped check and it was timed as a strided forward convolution (a quarter of its work at
    stride 2)."""
    x, w = (1, 256, 32, 32), (256, 256, 4, 4)
    scalars = [None] * 3 + [[2, 2], [1, 1], [1, 1], True, [0, 0], 1]
    case, why = to_case(OpRecord(op="aten::convolution", inputs=[x, w, None], dtypes=["c10::BFloat16"] * 2, scalars=scalars))
    assert case is None and "transposed" in why
    scalars[6] = False
    case, why = to_case(OpRecord(op="aten::convolution", inputs=[x, w, None], dtypes=["c10::BFloat16"] * 2, scalars=scalars))
    assert why is None and case["stride"] == 2
    scalars[5] = [2, 2]  # a dilated kernel covers more input than r x s: the model has no dilation
    case, why = to_case(OpRecord(op="aten::convolution", inputs=[x, w, None], dtypes=["c10::BFloat16"] * 2, scalars=scalars))
    assert case is None and "dilated" in why


def test_vllm_skinny_gemms_take_the_weight_first():
    """vLLM's ROCm skinny GEMMs are called as ops.wvSplitK(weight, x, cu_count, bias) and
    ops.LLMM1(weight, x, rows_per_block) (vllm/model_executor/layers/utils.py): the decode's few
    rows are the second tensor. Read the other way round they came out as thousands of rows times
    a handful of columns, which the model times as a tiled GEMM instead of a GEMV."""
    w, x = (4096, 7168), (2, 7168)
    for op in ("_rocm_C::wvSplitK", "_rocm_C::LLMM1"):
        case, why = to_case(OpRecord(op=op, inputs=[w, x], dtypes=["c10::BFloat16"] * 2, scalars=[None, None, 304]))
        assert why is None and (case["m"], case["n"], case["k"]) == (2, 4096, 7168), op


def test_in_place_pointwise_ops_map_like_their_out_of_place_form():
    """An in-place pointwise op (clamp_min_: torchvision's in-place ReLU, 2 % of the MI300X
    ResNet-18 training trace's GPU time) reads and writes self like its out-of-place form; before
    2026-11-27 only the in-place spellings listed in the table had a model."""
    x = (512, 64, 56, 56)
    case, why = to_case(OpRecord(op="aten::clamp_min_", inputs=[x], dtypes=["c10::BFloat16"], scalars=[None, 0]))
    ref, _ = to_case(OpRecord(op="aten::clamp_min", inputs=[x], dtypes=["c10::BFloat16"], scalars=[None, 0]))
    assert why is None and case == ref and case["n"] == 512 * 64 * 56 * 56 and case["reads"] == 1
    case, why = to_case(OpRecord(op="aten::not_a_pointwise_op_", inputs=[x], dtypes=["c10::BFloat16"]))
    assert case is None and "no kernel model" in why


def test_batch_norm_ops_become_batchnorm_cases():
    """BatchNorm ops (training flag at position 5 forward and 7 in native_batch_norm_backward,
    whose input follows grad_out; the no-training and MIOpen/cuDNN backward spellings fixed):
    43 % of the GPU time of the MI300X ResNet-18 training trace had no model before 2026-11-27."""
    x, c = (512, 64, 56, 56), ["c10::BFloat16"] + ["float"] * 4
    fwd = [None] * 5 + [True, 0.1, 1e-5]
    case, why = to_case(OpRecord(op="aten::native_batch_norm", inputs=[x, (64,), (64,), (64,), (64,)], dtypes=c, scalars=fwd))
    assert why is None and case == {"kernel": "batchnorm", "n": 512 * 64 * 56 * 56, "channels": 64, "training": True,
                                    "phase": "fwd", "layout": "nchw", "spatial": 56 * 56, "dtype": "bf16"}
    case, _ = to_case(OpRecord(op="aten::_native_batch_norm_legit_no_training", inputs=[x, (64,), (64,), (64,), (64,)], dtypes=c,
                               scalars=[None] * 5 + [0.1, 1e-5]))
    assert case["training"] is False
    bwd = [None] * 7 + [True, 1e-5, [True, True, True]]
    case, _ = to_case(OpRecord(op="aten::native_batch_norm_backward", inputs=[x, x, (64,), (64,), (64,), (64,), (64,)],
                               dtypes=["c10::BFloat16"] * 2 + ["float"] * 5, scalars=bwd))
    assert (case["phase"], case["training"], case["channels"], case["n"]) == ("bwd", True, 64, 512 * 64 * 56 * 56)
    case, _ = to_case(OpRecord(op="aten::miopen_batch_norm_backward", inputs=[x, x, (64,), (64,), (64,), (64,), (64,)],
                               dtypes=["c10::BFloat16"] * 2 + ["float"] * 5, scalars=[None] * 7 + [1e-5]))
    assert (case["phase"], case["training"]) == ("bwd", True)
    case, why = to_case(OpRecord(op="aten::native_batch_norm", inputs=[(64,)], dtypes=["float"], scalars=fwd))
    assert case is None and "N x C" in why


def test_batch_norm_layout_follows_the_input_strides():
    """PyTorch runs its NCHW batch-norm kernels (one workgroup per channel) for a contiguous input
    and its channels-last ones for a channels_last tensor; MIOpen's and cuDNN's ops are library
    kernels whatever the layout (the device-filling default)."""
    x, c = (8, 64, 28, 28), ["c10::BFloat16"] + ["float"] * 4
    fwd = [None] * 5 + [True, 0.1, 1e-5]
    args = dict(inputs=[x, (64,), (64,), (64,), (64,)], dtypes=c, scalars=fwd)
    nchw, _ = to_case(OpRecord(op="aten::native_batch_norm", strides=[(64 * 784, 784, 28, 1)], **args))
    nhwc, _ = to_case(OpRecord(op="aten::native_batch_norm", strides=[(784 * 64, 1, 28 * 64, 64)], **args))
    lib, _ = to_case(OpRecord(op="aten::miopen_batch_norm", strides=[(64 * 784, 784, 28, 1)], **args))
    assert (nchw["layout"], nchw["spatial"]) == ("nchw", 784)
    assert nhwc["layout"] == "nhwc" and "spatial" not in nhwc
    assert "layout" not in lib


def test_convolution_backward_is_a_backward_conv2d_case():
    """aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
    dilation, transposed, output_padding, groups, output_mask): the forward's shape with
    phase=bwd; output_mask[0] false (a first layer: no input gradient), also as a chrome trace
    records it, a string."""
    dy, x, w = (512, 64, 112, 112), (512, 3, 224, 224), (64, 3, 7, 7)
    bf = ["c10::BFloat16"] * 3
    scalars = [None] * 3 + [[0], [2, 2], [3, 3], [1, 1], False, [0, 0], 1, "[False, True, False]"]
    case, why = to_case(OpRecord(op="aten::convolution_backward", inputs=[dy, x, w], dtypes=bf, scalars=scalars))
    assert why is None
    assert {k: case[k] for k in ("n", "c", "h", "k", "r", "stride", "pad", "phase", "input_grad")} == \
        {"n": 512, "c": 3, "h": 224, "k": 64, "r": 7, "stride": 2, "pad": 3, "phase": "bwd", "input_grad": False}
    scalars[-1] = [True, True, False]
    case, _ = to_case(OpRecord(op="aten::convolution_backward", inputs=[dy, x, w], dtypes=bf, scalars=scalars))
    assert case["input_grad"] is True
    scalars[7] = True
    case, why = to_case(OpRecord(op="aten::convolution_backward", inputs=[dy, x, w], dtypes=bf, scalars=scalars))
    assert case is None and "transposed" in why


def test_max_pool_ops_are_streams():
    """max_pool2d_with_indices (3x3, stride 2, pad 1 on 112 x 112: 56 x 56 out) reads the input
    once and writes the output and its int64 indices; its backward reads the output gradient and
    the indices and writes the input's gradient."""
    x, bf = (512, 64, 112, 112), ["c10::BFloat16"]
    case, why = to_case(OpRecord(op="aten::max_pool2d_with_indices", inputs=[x], dtypes=bf,
                                 scalars=[None, [3, 3], [2, 2], [1, 1], [1, 1], False]))
    n_out = 512 * 64 * 56 * 56
    assert why is None and case == {"kernel": "elementwise", "n": n_out, "reads": 4.0, "writes": 5.0, "flops_per_element": 9,
                                    "dtype": "bf16"}
    y = (512, 64, 56, 56)
    case, why = to_case(OpRecord(op="aten::max_pool2d_with_indices_backward", inputs=[y, x, None, None, None, None, None, y],
                                 dtypes=bf * 2 + [None] * 5 + ["long int"],
                                 scalars=[None, None, [3, 3], [2, 2], [1, 1], [1, 1], False, None]))
    assert why is None and case["n"] == 512 * 64 * 112 * 112 and case["reads"] == pytest.approx(0.25 * 5) and case["writes"] == 1


def test_row_kernel_backward_ops_become_phase_bwd_cases():
    """Transformer training traces: _softmax_backward_data (axis at position 2 of the output),
    native_layer_norm_backward and _fused_rms_norm_backward (normalised shape at position 2)."""
    y, bf = (8, 16, 1024, 1024), ["c10::BFloat16"] * 2
    case, why = to_case(OpRecord(op="aten::_softmax_backward_data", inputs=[y, y], dtypes=bf, scalars=[None, None, -1, None]))
    assert why is None and case == {"kernel": "softmax", "rows": 8 * 16 * 1024, "cols": 1024, "phase": "bwd", "dtype": "bf16"}
    x = (4, 2048, 4096)
    ln = [None, None, [4096], None, None, None, None, [True, True, True]]
    case, _ = to_case(OpRecord(op="aten::native_layer_norm_backward", inputs=[x, x, None, (4, 2048, 1), (4, 2048, 1), (4096,), (4096,)],
                               dtypes=bf + ["float"] * 4, scalars=ln))
    assert (case["kernel"], case["rows"], case["cols"], case["phase"]) == ("layernorm", 8192, 4096, "bwd")
    case, _ = to_case(OpRecord(op="aten::_fused_rms_norm_backward", inputs=[x, x, None, (4, 2048, 1), (4096,)],
                               dtypes=bf + ["float"] * 2, scalars=[None, None, [4096], None, None, [True, True]]))
    assert (case["kernel"], case["rows"], case["phase"]) == ("rmsnorm", 8192, "bwd")


def test_group_norm_ops_are_layernorms_over_each_group():
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps): a LayerNorm of N x group
    rows of C / group x HxW; the backward's group at position 8."""
    x, bf = (2, 320, 64, 64), ["c10::BFloat16"] * 3
    case, why = to_case(OpRecord(op="aten::native_group_norm", inputs=[x, (320,), (320,)], dtypes=bf,
                                 scalars=[None, None, None, 2, 320, 4096, 32, 1e-5]))
    assert why is None and (case["kernel"], case["rows"], case["cols"]) == ("layernorm", 64, 10 * 4096)
    case, _ = to_case(OpRecord(op="aten::native_group_norm_backward", inputs=[x, x, (2, 32), (2, 32), (320,)], dtypes=bf + ["float"] * 2,
                               scalars=[None] * 5 + [2, 320, 4096, 32, [True, True, True]]))
    assert (case["rows"], case["phase"]) == (64, "bwd")
    case, why = to_case(OpRecord(op="aten::native_group_norm", inputs=[x, (320,), (320,)], dtypes=bf,
                                 scalars=[None, None, None, 2, 320, 4096, 7, 1e-5]))
    assert case is None and "group" in why


def test_foreach_ops_stream_over_their_tensor_lists():
    """An optimizer step's _foreach_add_(params, grads, alpha=-lr) (the HTA MI250 trace): the add
    over every element of the lists, each list read once and one written; lists recorded without
    shapes (the ResNet-18 trace) say so."""
    lists = [[(128, 128), (128,)], [(128, 128), (128,)], None]
    case, why = to_case(OpRecord(op="aten::_foreach_add_", inputs=lists, dtypes=[None] * 3, scalars=[None, None, -0.001]))
    assert why is None and case == {"kernel": "elementwise", "n": 128 * 128 + 128, "reads": 2.0, "writes": 1, "flops_per_element": 1,
                                    "dtype": "bf16"}
    case, why = to_case(OpRecord(op="aten::_foreach_add_", inputs=[[], [], None], dtypes=[None] * 3, scalars=[None, None, -0.001]))
    assert case is None and "without their shapes" in why
    case, why = to_case(OpRecord(op="aten::_foreach_norm", inputs=lists[:1], dtypes=[None]))
    assert case is None and "no kernel model" in why


def test_integer_and_bool_tensors_move_their_own_bytes():
    """A comparison's bool output is a byte an element beside its float input; ops on int64 alone
    (position ids) are int64 cases; a multiply of integers is an integer multiply; cumsum is a scan
    that reads and writes once (int32 in, int64 out, as PyTorch promotes)."""
    n = 1 << 20
    gt, _ = to_case(OpRecord(op="aten::gt", inputs=[(n,)], dtypes=["torch.float32"], outputs=[(n,)], out_dtype="torch.bool"))
    assert gt["dtype"] == "fp32" and gt["reads"] == 1 and gt["writes"] == 0.25  # 4 + 1 bytes an element
    add, _ = to_case(OpRecord(op="aten::add", inputs=[(n,)], dtypes=["torch.int64"], outputs=[(n,)], out_dtype="torch.int64"))
    assert add["dtype"] == "int64" and add["reads"] == 1 and add["writes"] == 1
    mul, _ = to_case(OpRecord(op="aten::mul", inputs=[(n,), (n,)], dtypes=["torch.int32"] * 2, outputs=[(n,)], out_dtype="torch.int32"))
    assert mul["dtype"] == "int32" and mul["int_muls_per_element"] == 1 and mul["flops_per_element"] == 0
    fmul, _ = to_case(OpRecord(op="aten::mul", inputs=[(n,), (n,)], dtypes=["torch.float32"] * 2, outputs=[(n,)], out_dtype="torch.float32"))
    assert "int_muls_per_element" not in fmul and fmul["flops_per_element"] == 1
    scan, why = to_case(OpRecord(op="aten::cumsum", inputs=[(n,)], dtypes=["torch.int32"], outputs=[(n,)], out_dtype="torch.int64"))
    assert why is None and scan["kernel"] == "elementwise" and scan["dtype"] == "int64"
    assert scan["reads"] == 0.5 and scan["writes"] == 1  # 4 bytes read, 8 written


def test_analyze_times_integer_ops_at_their_bytes():
    import perfmodel

    class Ids(nn.Module):
        def forward(self, ids):
            return ids + 1

    a = perfmodel.analyze(Ids(), torch.empty(1 << 24, dtype=torch.int64, device="meta"), arch="mi300x", dtype="bf16")
    (r,) = a.rows
    assert r["dtype"] == "int64" and r["bytes"]["hbm"] == 16 * (1 << 24)  # before: 4 bytes an element, as bf16
    assert r["flops"] == 0 and r["iops_by"]["valu:int32"] == 2 * (1 << 24)


def test_gathers_read_their_index_tensors():
    n = 1 << 20
    g, _ = to_case(OpRecord(op="aten::gather", inputs=[(n, 8), (n, 1)], dtypes=["c10::BFloat16", "long int"],
                            outputs=[(n, 1)], out_dtype="c10::BFloat16"))
    assert g["dtype"] == "bf16" and g["reads"] == 5 and g["writes"] == 1  # 2 bytes gathered + 8 of index, per output
    e, _ = to_case(OpRecord(op="aten::embedding", inputs=[(32000, 4096), (16,)], dtypes=["c10::BFloat16", "long int"]))
    assert e["n"] == 16 * 4096 and e["reads"] == pytest.approx(1 + 16 * 8 / (16 * 4096 * 2), abs=1e-4)


def test_triton_kernels_count_each_argument_at_its_own_size():
    x = (4096, 2048)
    t, _ = to_case(OpRecord(op="triton_poi_fused_add_0", inputs=[x, x, (2048,), None], dtypes=["c10::BFloat16", "float", "float", None],
                            scalars=[None, None, None, 8388608]))
    assert t["dtype"] == "bf16" and t["reads"] == pytest.approx(1 + 2 + 2 / 4096, abs=1e-4)  # the fp32 argument is 2 bf16 arrays


def test_fills_write_without_reading():
    n = 1 << 20
    for op in ("aten::zero_", "aten::fill_", "aten::zeros_like", "aten::full_like"):
        c, _ = to_case(OpRecord(op=op, inputs=[(n,)], dtypes=["c10::BFloat16"], outputs=[(n,)], out_dtype="c10::BFloat16"))
        assert c["reads"] == 0 and c["writes"] == 1, op
    add, _ = to_case(OpRecord(op="aten::add_", inputs=[(n,), (n,)], dtypes=["c10::BFloat16"] * 2, outputs=[(n,)], out_dtype="c10::BFloat16"))
    assert add["reads"] == 2  # an in-place add still reads self


def test_in_place_scatters_move_the_scattered_elements_not_the_destination():
    """A KV-cache update (index_copy_ of one token into an 8192-token cache) writes the token: it
    counted the whole cache twice (33.6 MB) before; an accumulating scatter reads its places too."""
    cache, tok = (1, 8, 8192, 128), (1, 8, 1, 128)
    c, _ = to_case(OpRecord(op="aten::index_copy_", inputs=[cache, None, (1,), tok], dtypes=["c10::BFloat16", None, "long int", "c10::BFloat16"],
                            scalars=[None, 2, None, None], outputs=[cache], out_dtype="c10::BFloat16"))
    assert c["n"] == 1024 and c["reads"] == pytest.approx(1 + 8 / 2048, abs=1e-4) and c["writes"] == 1
    add, _ = to_case(OpRecord(op="aten::index_add_", inputs=[cache, None, (1,), tok], dtypes=["c10::BFloat16", None, "long int", "c10::BFloat16"],
                              scalars=[None, 2, None, None], outputs=[cache], out_dtype="c10::BFloat16"))
    assert add["n"] == 1024 and add["reads"] == pytest.approx(2 + 8 / 2048, abs=1e-4)
    sc, _ = to_case(OpRecord(op="aten::scatter_", inputs=[cache, None, tok, tok], dtypes=["c10::BFloat16", None, "long int", "c10::BFloat16"],
                             scalars=[None, 2, None, None], outputs=[cache], out_dtype="c10::BFloat16"))
    assert sc["n"] == 1024 and sc["reads"] == 5  # 2 bytes of source and 8 of index per element, over 2
    out, _ = to_case(OpRecord(op="aten::index_copy", inputs=[cache, None, (1,), tok], dtypes=["c10::BFloat16", None, "long int", "c10::BFloat16"],
                              scalars=[None, 2, None, None], outputs=[cache], out_dtype="c10::BFloat16"))
    assert out["n"] == 8 * 8192 * 128  # out of place: a copy of the whole destination


def test_embedding_backward_writes_the_table_and_reads_the_gradient():
    grad, ids, table = (2048, 4096), (2048,), (128256, 4096)
    c, _ = to_case(OpRecord(op="aten::embedding_dense_backward", inputs=[grad, ids, None, None, None],
                            dtypes=["c10::BFloat16", "long int", None, None, None], scalars=[None, None, 128256, -1, False],
                            outputs=[table], out_dtype="c10::BFloat16"))
    assert c["n"] == 128256 * 4096 and c["writes"] == 1
    assert c["reads"] == pytest.approx((2 * 2048 * 4096 * 2 + 2048 * 8) / (128256 * 4096 * 2), abs=1e-4)  # was 1: the table read
    no_out, _ = to_case(OpRecord(op="aten::embedding_dense_backward", inputs=[grad, ids, None, None, None],
                                 dtypes=["c10::BFloat16", "long int", None, None, None], scalars=[None, None, 128256, -1, False]))
    assert no_out == c  # from num_weights where the output shape is not recorded (chrome traces)


def test_dropout_writes_its_keep_mask():
    n = 1 << 20
    c, _ = to_case(OpRecord(op="aten::native_dropout", inputs=[(n,), None, None], dtypes=["c10::BFloat16", None, None]))
    assert c["reads"] == 1 and c["writes"] == 1.5  # the output (2 bytes) and the bool mask (1 byte)
    b, _ = to_case(OpRecord(op="aten::native_dropout_backward", inputs=[(n,), (n,), None], dtypes=["c10::BFloat16", "bool", None]))
    assert b["reads"] == 1.5 and b["writes"] == 1


def test_reductions_over_a_dimension_write_their_outputs():
    x = (4096, 4096)
    rows, _ = to_case(OpRecord(op="aten::sum", inputs=[x, None], dtypes=["float", None], outputs=[(4096,)], out_dtype="float"))
    assert rows == {"kernel": "reduction", "n": 4096 * 4096, "partials": 4096, "dtype": "fp32"}
    pairs, _ = to_case(OpRecord(op="aten::sum", inputs=[(1 << 20, 2), None], dtypes=["float", None], outputs=[(1 << 20,)], out_dtype="float"))
    assert pairs["partials"] == 1 << 20  # half the input's bytes written back
    whole, _ = to_case(OpRecord(op="aten::mean", inputs=[x], dtypes=["float"], outputs=[()], out_dtype="float"))
    chrome, _ = to_case(OpRecord(op="aten::sum", inputs=[x, None], dtypes=["float", None]))  # no output shape recorded
    assert "partials" not in whole and "partials" not in chrome


def test_in_place_views_launch_no_kernel():
    for op in ("aten::squeeze_", "aten::unsqueeze_", "aten::t_", "aten::transpose_"):
        assert to_case(OpRecord(op=op, inputs=[(16, 1), None], dtypes=["float", None])) == (None, "no kernel"), op


def test_avg_pool_and_upsample_ops_are_streams():
    x, f = (2, 64, 32, 32), ["float"]
    avg, why = to_case(OpRecord(op="aten::avg_pool2d", inputs=[x, None], dtypes=f + [None], scalars=[None, [2, 2]]))
    assert why is None and avg == {"kernel": "elementwise", "n": 2 * 64 * 16 * 16, "reads": 4.0, "writes": 1, "flops_per_element": 4,
                                   "dtype": "fp32"}
    back, _ = to_case(OpRecord(op="aten::avg_pool2d_backward", inputs=[(2, 64, 16, 16), x], dtypes=f * 2,
                               scalars=[None, None, [2, 2], [], [0, 0], False, True, None]))
    assert back["n"] == 2 * 64 * 32 * 32 and back["reads"] == 0.25 and back["flops_per_element"] == 1
    up, _ = to_case(OpRecord(op="aten::upsample_bilinear2d", inputs=[x, None, None, None, None], dtypes=f + [None] * 4,
                             scalars=[None, [64, 64], False, 2.0, 2.0]))  # output size from its argument (chrome traces)
    assert up["n"] == 2 * 64 * 64 * 64 and up["reads"] == 0.25 and up["flops_per_element"] == 7
    down, _ = to_case(OpRecord(op="aten::upsample_nearest2d", inputs=[x, None], dtypes=f + [None], scalars=[None, [16, 16]]))
    assert down["n"] == 2 * 64 * 16 * 16 and down["reads"] == 1  # one tap an output: a quarter of the input
    bwd, _ = to_case(OpRecord(op="aten::upsample_nearest2d_backward", inputs=[(2, 64, 64, 64), None, None], dtypes=f + [None] * 2,
                              scalars=[None, [64, 64], [2, 64, 32, 32]]))
    assert bwd["n"] == 2 * 64 * 32 * 32 and bwd["reads"] == 4 and bwd["flops_per_element"] == 4
    none, why = to_case(OpRecord(op="aten::upsample_nearest2d", inputs=[x, None], dtypes=f + [None]))
    assert none is None and "output size not recorded" in why


def test_random_number_ops_are_elementwise_draws():
    """normal_ writes self and reads nothing, drawing each element from the normal distribution
    (`elementwise random=normal`: Philox4x32-10 plus Box-Muller); bernoulli_ with a tensor of
    probabilities reads it."""
    n = 5 * 128
    c, why = to_case(OpRecord(op="aten::normal_", inputs=[(5, 128), None, None, None], dtypes=["float", None, None, None],
                              scalars=[None, 0.0, 1.0, None]))
    assert why is None and c == {"kernel": "elementwise", "n": n, "reads": 0.0, "writes": 1, "flops_per_element": 0,
                                 "random": "normal", "dtype": "fp32"}
    d, _ = to_case(OpRecord(op="aten::uniform_", inputs=[(n,), None, None, None], dtypes=["double", None, None, None]))
    assert d["random"] == "uniform" and d["dtype"] == "fp64"
    p, _ = to_case(OpRecord(op="aten::bernoulli_", inputs=[(n,), (n,), None], dtypes=["float", "float", None]))
    assert p["reads"] == 1.0 and p["writes"] == 1 and p["random"] == "bernoulli"  # a tensor of probabilities is read
    s, _ = to_case(OpRecord(op="aten::bernoulli_", inputs=[(n,), None, None], dtypes=["float", None, None], scalars=[None, 0.5, None]))
    assert s["reads"] == 0.0


def test_eval_mode_dropout_is_a_copy():
    x = [(1 << 20,), None, None]
    train, _ = to_case(OpRecord(op="aten::native_dropout", inputs=x, dtypes=["float", None, None], scalars=[None, 0.1, True]))
    evals, _ = to_case(OpRecord(op="aten::native_dropout", inputs=x, dtypes=["float", None, None], scalars=[None, 0.1, False]))
    assert train["random"] == "dropout" and train["writes"] == 1.25  # fp32 output and its bool mask
    assert "random" not in evals and evals["flops_per_element"] == 0


def test_arange_counts_its_values_from_the_recorded_bounds():
    """The SGLang decode trace's arange(238, 270, dtype=torch.long) and the out variant it calls
    (start, end, step, out): 32 int64 values; float bounds give the default float type."""
    def rec(scalars, inputs=None, dtypes=None):
        inputs = inputs or [None] * len(scalars)
        return OpRecord(op="aten::arange", inputs=inputs, dtypes=dtypes or [None] * len(scalars), scalars=scalars)

    c, _ = to_case(rec([238, 270, 4, None, None, False]))
    assert c["n"] == 32 and c["dtype"] == "int64" and c["reads"] == 0.0
    out, _ = to_case(rec([238, 270, 1, None], [None, None, None, (0,)], [None, None, None, "long int"]))
    assert out["n"] == 32 and out["dtype"] == "int64"
    f, _ = to_case(rec([0.0, 1.0, 0.25, None, None, None, False]))
    assert f["n"] == 4 and f["dtype"] == "bf16"
    e, _ = to_case(rec([559, None, None, None, False]))
    assert e["n"] == 559
    bad, why = to_case(rec([1, 2, 3]))
    assert bad is None and "arguments not understood" in why


def test_mse_loss_and_its_backward_are_streams():
    """The HTA MI250 trace's mse_loss over 5 x 128 (its mean is a child op) and the out variant
    of its backward, whose grad_input argument is written, not read."""
    x, f = (5, 128), ["float"]
    loss, _ = to_case(OpRecord(op="aten::mse_loss", inputs=[x, x, None], dtypes=f * 2 + [None], scalars=[None, None, 1]))
    assert loss == {"kernel": "elementwise", "n": 640, "reads": 2.0, "writes": 1, "flops_per_element": 2, "dtype": "fp32"}
    back, _ = to_case(OpRecord(op="aten::mse_loss_backward", inputs=[(), x, x, None, x], dtypes=f * 3 + [None] + f,
                               scalars=[None, None, None, 1, None]))
    assert back["n"] == 640 and back["reads"] == pytest.approx(2 + 1 / 640, abs=1e-4) and back["flops_per_element"] == 3


def test_foreach_copy_reads_its_source_list_only():
    lists = [[(32,), (32,)], [(32,), (32,)], None]
    c, why = to_case(OpRecord(op="aten::_foreach_copy_", inputs=lists, dtypes=[None] * 3, scalars=[None, None, False]))
    assert why is None and c["n"] == 64 and c["reads"] == 1.0 and c["flops_per_element"] == 0
    z, _ = to_case(OpRecord(op="aten::_foreach_zero_", inputs=lists[:1], dtypes=[None]))
    assert z["reads"] == 0.0
