"""Decoder-only transformers built from a `ModelConfig` as small torch modules on the meta
device (no weights, no download): Llama/Qwen-style GQA, Mixtral-style MoE, DeepSeek-V3 MLA + MoE.

What one forward pass issues is what an inference engine runs for one step of one rank:

- prefill: ``tokens`` new tokens per sequence, causal attention over them; the LM head only for
  the last token (vLLM/SGLang compute logits for the sampled position only);
- decode: one new token per sequence attending over ``kv_len`` cached tokens plus itself; the
  cache is a static buffer (the new K/V are copied into it: one small copy each), so the step
  reads the cache once, as flash-decoding / paged attention kernels do;
- RoPE as one op on q and k (vLLM's ``rotary_embedding``); RMSNorm, SDPA as one op each;
- tensor parallel (``tp``): heads, KV heads (replicated when fewer than tp) and the MLP width
  sharded, an all-reduce after o_proj and after the MLP (Megatron-LM); the vocabulary of the
  LM head sharded (its all-gather of logits is not modelled);
- expert parallel (``ep``): ``experts / ep`` experts per rank; an all-to-all before (dispatch)
  and after (combine) the experts, each moving tokens x topk x hidden elements;
- MLA (DeepSeek): prefill expands K/V from the latent (kv_b_proj) and runs attention with
  q/k head dim nope+rope and v head dim v_head_dim; decode uses the absorbed form (q through W_UK
  into the latent space, attention over the latent cache as one KV head of kv_lora+rope dims
  whose first kv_lora channels are the values, read once: ``latent_attention``; W_UV after).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perfmodel.errors import InputError
from perfmodel.frontend.config import ModelConfig

# the dtype the module is traced in; fp8 is traced as bfloat16 (torch has no fp8 matmul on the
# meta device) and the analysis models every op in fp8 (same shapes)
TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "bfloat16", "int8": "bfloat16"}


@dataclass
class Step:
    phase: str = "decode"  # prefill | decode
    batch: int = 1
    tokens: int = 1  # new tokens per sequence (prefill); decode is 1
    kv_len: int = 0  # cached tokens per sequence before this step
    tp: int = 1
    ep: int = 1
    paged: bool = False
    block_size: int = 16
    engine: str = "vllm"  # vllm: fused qkv / gate_up GEMMs and vLLM's fused kernels; eager: HF-style ops

    def check(self, cfg: ModelConfig) -> None:
        if self.engine not in ("vllm", "eager"):
            raise InputError(f"expected vllm or eager, got {self.engine!r}", key="--engine")
        if self.phase not in ("prefill", "decode"):
            raise InputError(f"expected prefill or decode, got {self.phase!r}", key="--phase")
        for k in ("batch", "tokens", "tp", "ep", "block_size"):
            if int(getattr(self, k)) < 1:
                raise InputError(f"expected a positive whole number, got {getattr(self, k)!r}", key=f"--{k.replace('_', '-')}")
        if self.kv_len < 0:
            raise InputError(f"expected a length >= 0, got {self.kv_len!r}", key="--kv-len")
        if cfg.heads % self.tp:
            raise InputError(f"{cfg.name} has {cfg.heads} attention heads, not divisible by tp={self.tp}", key="--tp")
        if cfg.inter % self.tp or (cfg.moe_inter and cfg.moe_inter % self.tp and self.ep == 1):
            raise InputError(f"{cfg.name}'s MLP width is not divisible by tp={self.tp}", key="--tp")
        if self.ep > 1 and not cfg.experts:
            raise InputError(f"{cfg.name} has no experts; --ep needs a MoE model", key="--ep")
        if cfg.experts and cfg.experts % self.ep:
            raise InputError(f"{cfg.name} has {cfg.experts} experts, not divisible by ep={self.ep}", key="--ep")

    @property
    def new_tokens(self) -> int:
        return 1 if self.phase == "decode" else self.tokens


@dataclass
class _Ctx:
    """What every module of one build shares (config, step, shapes, dtype, ops): one object
    instead of a closure over build's locals, so each module class has its own small factory."""

    cfg: ModelConfig
    step: Step
    dt: Any  # torch.dtype (torch is imported lazily)
    P: Any  # perfmodel.frontend.ops namespace
    B: int  # sequences
    T: int  # new tokens per sequence
    L: int  # keys attended per sequence
    vllm: bool

    def lin(self, i: int, o: int, bias: bool = False) -> Any:
        """A Linear on the meta device in the traced dtype."""
        from torch import nn

        return nn.Linear(i, o, bias=bias, device="meta", dtype=self.dt)

    def empty(self, *shape: int) -> Any:
        """A static buffer (KV cache) on the meta device."""
        import torch

        return torch.empty(*shape, device="meta", dtype=self.dt)

    def allreduce(self, x: Any) -> Any:
        """The tensor-parallel all-reduce after a row-sharded projection (none at tp=1)."""
        tp = self.step.tp
        return self.P.collective(x, "allreduce", tp, 1.0) if tp > 1 else x


def _rmsnorm_class(c: _Ctx) -> type:
    """RMSNorm; with a residual it is vLLM's fused add + norm (one op)."""
    from torch import nn
    from torch.nn import functional as F

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(c.empty(d))

        def forward(self, x, residual=None):
            if residual is not None:  # vLLM: residual add fused into the norm
                return c.P.fused_add_rms_norm(x, residual, self.weight)
            return F.rms_norm(x, (x.shape[-1],), self.weight, 1e-6)

    return RMSNorm


def _attention_class(c: _Ctx, RMSNorm: type) -> type:
    """GQA attention (Llama/Qwen/Mixtral/Gemma): q/k/v projections, the per-head q/k norms where
    the config has them, RoPE, the KV cache write, SDPA or paged attention (FlashAttention with
    the layer's sliding window and the logit soft cap where the config has them), o_proj and its
    all-reduce."""
    from torch import nn
    from torch.nn import functional as F

    cfg, step, P, B, T, L, vllm, tp = c.cfg, c.step, c.P, c.B, c.T, c.L, c.vllm, c.step.tp

    class Attention(nn.Module):
        def __init__(self, i):
            super().__init__()
            self.window, self.cap = cfg.window_of(i), cfg.attn_softcap
            self.h = cfg.heads // tp
            self.hk = max(1, cfg.kv_heads // tp)
            self.d = cfg.head_dim
            if cfg.qk_norm:
                self.q_norm, self.k_norm = RMSNorm(self.d), RMSNorm(self.d)
            if vllm:
                self.qkv_proj = c.lin(cfg.hidden, (self.h + 2 * self.hk) * self.d, cfg.qkv_bias)
            else:
                self.q_proj = c.lin(cfg.hidden, self.h * self.d, cfg.qkv_bias)
                self.k_proj = c.lin(cfg.hidden, self.hk * self.d, cfg.qkv_bias)
                self.v_proj = c.lin(cfg.hidden, self.hk * self.d, cfg.qkv_bias)
            self.o_proj = c.lin(self.h * self.d, cfg.hidden)

        def forward(self, x):
            h, hk, d = self.h, self.hk, self.d
            if vllm:
                qkv = self.qkv_proj(x)
                q, k, v = qkv[..., : h * d], qkv[..., h * d : (h + hk) * d], qkv[..., (h + hk) * d :]
            else:
                q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
            q, k, v = q.view(B, T, h, d), k.view(B, T, hk, d), v.view(B, T, hk, d)
            if cfg.qk_norm:
                q, k = self.q_norm(q), self.k_norm(k)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            q, k = P.rotary_embedding(q, k, step.kv_len)
            kc = c.empty(B, hk, L, d)  # the KV cache (static)
            vc = c.empty(B, hk, L, d)
            if vllm:
                P.reshape_and_cache(k, v, kc, vc)
            else:
                kc[:, :, L - T :].copy_(k)
                vc[:, :, L - T :].copy_(v)
            if step.paged:
                o = P.paged_attention(q, kc, vc, step.block_size, self.window, self.cap)
            else:
                k_, v_ = (kc, vc) if step.phase == "decode" or step.kv_len else (k, v)
                if self.window or self.cap:  # SDPA has neither: FlashAttention's window and softcap
                    o = P.local_attention(q, k_, v_, T > 1, self.window, self.cap)
                else:
                    o = F.scaled_dot_product_attention(q, k_, v_, is_causal=T > 1, enable_gqa=self.hk != self.h)
            return c.allreduce(self.o_proj(o.transpose(1, 2).reshape(B, T, self.h * self.d)))

    return Attention


def _mla_class(c: _Ctx, RMSNorm: type) -> type:
    """DeepSeek-V3 multi-head latent attention (see the module doc)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    cfg, step, P, B, T, L, tp = c.cfg, c.step, c.P, c.B, c.T, c.L, c.step.tp

    class MLA(nn.Module):
        """DeepSeek-V3 multi-head latent attention (see the module doc)."""

        def __init__(self):
            super().__init__()
            self.h = cfg.heads // tp
            self.nope, self.rope, self.vd, self.r = cfg.qk_nope_dim, cfg.qk_rope_dim, cfg.v_head_dim, cfg.kv_lora_rank
            if cfg.q_lora_rank:
                self.q_a_proj = c.lin(cfg.hidden, cfg.q_lora_rank)
                self.q_a_norm = RMSNorm(cfg.q_lora_rank)
                self.q_b_proj = c.lin(cfg.q_lora_rank, self.h * (self.nope + self.rope))
            else:  # no query compression (DeepSeek-V2-Lite)
                self.q_proj = c.lin(cfg.hidden, self.h * (self.nope + self.rope))
            self.kv_a_proj = c.lin(cfg.hidden, self.r + self.rope)
            self.kv_a_norm = RMSNorm(self.r)
            self.kv_b_proj = c.lin(self.r, self.h * (self.nope + self.vd))
            self.o_proj = c.lin(self.h * self.vd, cfg.hidden)

        def forward(self, x):
            h, nope, rope, vd, r = self.h, self.nope, self.rope, self.vd, self.r
            q = self.q_b_proj(self.q_a_norm(self.q_a_proj(x))) if cfg.q_lora_rank else self.q_proj(x)
            q = q.view(B, T, h, nope + rope).transpose(1, 2)
            kv = self.kv_a_proj(x)
            latent = self.kv_a_norm(kv[..., :r])
            k_rope = kv[..., r:].reshape(B, 1, T, rope)
            q_rope, k_rope = P.rotary_embedding(q[..., nope:], k_rope, step.kv_len)
            cache = c.empty(B, 1, L, r + rope)  # latent + rope key per token
            cache[:, :, L - T :, :r].copy_(latent.view(B, 1, T, r))
            cache[:, :, L - T :, r:].copy_(k_rope)
            if step.phase == "prefill" and not step.kv_len:
                kvb = self.kv_b_proj(latent).view(B, T, h, nope + vd).transpose(1, 2)
                k = torch.cat([kvb[..., :nope], k_rope.expand(B, h, T, rope)], dim=-1)
                qf = torch.cat([q[..., :nope], q_rope], dim=-1)
                o = F.scaled_dot_product_attention(qf, k, kvb[..., nope:], is_causal=T > 1)
            else:  # absorbed: q_nope W_UK -> latent space; attend over the latent cache; W_UV after
                w = self.kv_b_proj.weight.view(h, nope + vd, r)
                q_n = q[..., :nope].permute(1, 0, 2, 3).reshape(h, B * T, nope)
                q_lat = torch.bmm(q_n, w[:, :nope, :]).view(h, B, T, r).permute(1, 0, 2, 3)
                qf = torch.cat([q_lat, q_rope], dim=-1)
                o_lat = P.latent_attention(qf, cache, r, T > 1)  # V: the cache's first r channels
                o = torch.bmm(o_lat.permute(1, 0, 2, 3).reshape(h, B * T, r), w[:, nope:, :].transpose(1, 2))
                o = o.view(h, B, T, vd).permute(1, 0, 2, 3)
            return c.allreduce(self.o_proj(o.transpose(1, 2).reshape(B, T, h * vd)))

    return MLA


def _mlp_class(c: _Ctx) -> type:
    """The gated MLP (SiLU, or Gemma's tanh GELU), sharded over tp; vLLM fuses gate and up into
    one GEMM and the activation with the gating multiply into one kernel."""
    from torch import nn
    from torch.nn import functional as F

    cfg, P, vllm, tp = c.cfg, c.P, c.vllm, c.step.tp

    class MLP(nn.Module):
        def __init__(self, inter):
            super().__init__()
            if vllm:
                self.gate_up_proj = c.lin(cfg.hidden, 2 * (inter // tp))
            else:
                self.gate_proj = c.lin(cfg.hidden, inter // tp)
                self.up_proj = c.lin(cfg.hidden, inter // tp)
            self.down_proj = c.lin(inter // tp, cfg.hidden)

        def forward(self, x, reduce=True):
            if vllm:
                y = self.down_proj(getattr(P, f"{cfg.act}_and_mul")(self.gate_up_proj(x)))
            else:
                y = self.down_proj(_activation(F, cfg.act, self.gate_proj(x)) * self.up_proj(x))
            return c.allreduce(y) if reduce else y

    return MLP


def _activation(F: Any, act: str, x: Any) -> Any:
    """The eager activation op of a config's MLP."""
    if act == "silu":
        return F.silu(x)
    return F.gelu(x, approximate="tanh" if act == "gelu_tanh" else "none")


def _moe_class(c: _Ctx, MLP: type) -> type:
    """The routed experts as one op, the all-to-alls around them (ep > 1), the shared experts."""
    from torch import nn

    cfg, P, tp, ep = c.cfg, c.P, c.step.tp, c.step.ep

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.local = cfg.experts // ep
            self.inter = cfg.moe_inter // (tp if ep == 1 else 1)
            # expert weights (gate+up, down) for the parameter count; the op reads them itself
            self.w13 = nn.Parameter(c.empty(self.local, 2 * self.inter, cfg.hidden))
            self.w2 = nn.Parameter(c.empty(self.local, cfg.hidden, self.inter))
            self.router = nn.Parameter(c.empty(cfg.experts, cfg.hidden))
            self.shared = MLP(cfg.moe_inter * cfg.shared_experts) if cfg.shared_experts else None

        def forward(self, x):
            scale = float(cfg.topk)
            y = P.collective(x, "alltoall", ep, scale) if ep > 1 else x
            y = P.moe(y, self.local, cfg.topk, self.inter, cfg.expert_weights or "auto", cfg.expert_group)
            if ep > 1:
                y = P.collective(y, "alltoall", ep, scale)
            if self.shared is not None:
                y = y + self.shared(x, reduce=False)
            return c.allreduce(y) if ep == 1 else y

    return MoE


def _layer_class(c: _Ctx, RMSNorm: type) -> type:
    """One decoder layer: norm, attention (GQA or MLA), norm, MLP or MoE; vLLM carries the
    residual into the next fused add + norm instead of adding it here."""
    from torch import nn

    cfg, vllm = c.cfg, c.vllm
    mla = cfg.mla
    Attn = _mla_class(c, RMSNorm) if mla else _attention_class(c, RMSNorm)
    MLP = _mlp_class(c)
    MoE = _moe_class(c, MLP)

    class Layer(nn.Module):
        def __init__(self, i):
            super().__init__()
            self.input_layernorm = RMSNorm(cfg.hidden)
            self.self_attn = Attn() if mla else Attn(i)
            self.post_attention_layernorm = RMSNorm(cfg.hidden)
            if cfg.sandwich_norm:  # Gemma: post_attention_layernorm normalises the attention's output
                self.pre_feedforward_layernorm = RMSNorm(cfg.hidden)
                self.post_feedforward_layernorm = RMSNorm(cfg.hidden)
            self.mlp = MoE() if cfg.is_moe_layer(i) else MLP(cfg.inter)

        def forward(self, x, residual=None):
            if cfg.sandwich_norm:
                return self._sandwich(x, residual)
            if not vllm:
                x = x + self.self_attn(self.input_layernorm(x))
                return x + self.mlp(self.post_attention_layernorm(x)), None
            if residual is None:
                x, residual = self.input_layernorm(x), x
            else:
                x, residual = self.input_layernorm(x, residual)
            x = self.self_attn(x)
            x, residual = self.post_attention_layernorm(x, residual)
            return self.mlp(x), residual

        def _sandwich(self, x, residual):
            """Gemma 2/3: a norm before and after each of attention and the MLP (vLLM fuses the
            residual add into the norms before them)."""
            if not vllm:
                x = x + self.post_attention_layernorm(self.self_attn(self.input_layernorm(x)))
                return x + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x))), None
            if residual is None:
                x, residual = self.input_layernorm(x), x
            else:
                x, residual = self.input_layernorm(x, residual)
            x = self.post_attention_layernorm(self.self_attn(x))
            x, residual = self.pre_feedforward_layernorm(x, residual)
            return self.post_feedforward_layernorm(self.mlp(x)), residual

    return Layer


def _model_class(c: _Ctx) -> type:
    """Embedding, the layers, the final norm and the LM head (last token only)."""
    import torch
    from torch import nn

    cfg, tp = c.cfg, c.step.tp
    RMSNorm = _rmsnorm_class(c)
    Layer = _layer_class(c, RMSNorm)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            # _weight skips the normal_ initialisation of a 128k x 4k table (pointless on meta)
            self.embed_tokens = nn.Embedding(cfg.vocab, cfg.hidden, _weight=c.empty(cfg.vocab, cfg.hidden))
            self.layers = nn.ModuleList([Layer(i) for i in range(cfg.layers)])
            self.norm = RMSNorm(cfg.hidden)
            self.lm_head = c.lin(cfg.hidden, cfg.vocab // tp)

        def forward(self, ids):
            x = self.embed_tokens(ids)
            if cfg.embed_scale:  # Gemma: embeddings times sqrt(hidden_size)
                x = x * cfg.hidden**0.5
            residual = None
            for layer in self.layers:
                x, residual = layer(x, residual)
            x = x[:, -1:]
            x = self.norm(x, residual[:, -1:])[0] if residual is not None else self.norm(x)
            logits = self.lm_head(x)
            if cfg.final_softcap:  # Gemma 2: cap * tanh(logits / cap)
                logits = torch.tanh(logits / cfg.final_softcap) * cfg.final_softcap
            return logits

    return Model


def build(cfg: ModelConfig, step: Step, dtype: str | None = None):
    """The module and its example inputs (meta tensors) for one step of one rank."""
    import torch

    from perfmodel.frontend.ops import ops

    P = ops()
    step.check(cfg)
    dt = getattr(torch, TORCH_DTYPES.get(dtype or cfg.dtype, "bfloat16"))
    B, T = step.batch, step.new_tokens
    c = _Ctx(cfg, step, dt, P, B, T, L=step.kv_len + T, vllm=step.engine == "vllm")
    meta = torch.device("meta")
    with torch.device(meta):
        model = _model_class(c)()
    ids = torch.empty(B, T, dtype=torch.long, device=meta)
    return model, (ids,)


def stream_bytes(cfg: ModelConfig, step: Step, dtype: str | None = None, linears: tuple[str, str] | None = None,
                 resident: bool = False) -> dict:
    """Bytes one decode step must read from memory on one rank at least: every weight a token
    touches once (embedding: only the gathered rows; MoE: the experts the batch touches under
    uniform routing) and the KV cache. The floor of `perfmodel model` decode time. ``resident``:
    the bytes the rank must hold instead, at least (every local expert, the embedding table
    unless tied to the LM head, the step's KV cache; no activations or workspace). ``linears``:
    the (dtype, scaling) a quantized checkpoint's linear layers and experts are stored in
    (`analysis.quantize_linear`); the LM head, the router and MLA's absorbed products keep ``dtype``."""
    from perfmodel.dtypes import SIZE
    from perfmodel.models.gemm_tiling import SCALING, weight_bytes_per_k
    from perfmodel.models.moe import touched_experts

    e = SIZE[dtype or cfg.dtype]
    # a linear layer's bytes per weight: the stored type plus its share of the weight scales
    # (`gemm_tiling.SCALING`: block, one fp32 per 128 x 128), or as traced
    lin = e
    if linears:
        kb, _, cols, scale_bytes = SCALING.get(linears[1], (1.0, 1.0, 1.0, 0.0))
        lin = SIZE[linears[0]] + scale_bytes / (kb * cols)
    tp, ep = step.tp, step.ep
    h, d = cfg.hidden, cfg.head_dim
    absorbed = 0.0  # MLA's absorbed up-projections, batched products in the attention's dtype
    if cfg.mla:
        hh = cfg.heads // tp
        q = h * cfg.q_lora_rank + cfg.q_lora_rank * hh * d if cfg.q_lora_rank else h * hh * d
        attn = q + h * (cfg.kv_lora_rank + cfg.qk_rope_dim) + hh * cfg.v_head_dim * h
        absorbed = cfg.kv_lora_rank * hh * (cfg.qk_nope_dim + cfg.v_head_dim)
        kv = step.batch * (step.kv_len + step.new_tokens) * (cfg.kv_lora_rank + cfg.qk_rope_dim) * e
    else:
        hq, hk = cfg.heads // tp, max(1, cfg.kv_heads // tp)
        attn = h * (hq + 2 * hk) * d + hq * d * h
        ctx = step.kv_len + step.new_tokens  # a sliding layer reads its window of it
        kv = sum(2 * step.batch * hk * min(ctx, cfg.window_of(i) or ctx) * d * e for i in range(cfg.layers)) / cfg.layers
    dense = 3 * h * (cfg.inter // tp)
    # routed experts stored narrower (MXFP4): their bytes per weight as the MoE kernel counts them
    expert_e = float(weight_bytes_per_k(cfg.expert_weights, cfg.expert_group, h)) if cfg.expert_weights else lin
    weights = 0.0
    tokens = step.batch * step.new_tokens
    for i in range(cfg.layers):
        w = attn * lin + absorbed * e
        if cfg.is_moe_layer(i):
            local = cfg.experts // ep
            inter = cfg.moe_inter // (tp if ep == 1 else 1)
            per_rank_tokens = tokens * ep
            touched = float(touched_experts(per_rank_tokens, cfg.experts, cfg.topk)) / ep
            w += (local if resident else min(local, touched)) * 3 * h * inter * expert_e + cfg.experts * h * e
            w += 3 * h * cfg.moe_inter * cfg.shared_experts // (tp if ep == 1 else 1) * lin
        else:
            w += dense * lin
        weights += w
    weights += h * (cfg.vocab // tp) * e  # LM head
    if resident and not cfg.tie_embeddings:
        weights += h * (cfg.vocab // tp) * e  # the embedding table (vocab-parallel, as vLLM shards it)
    return {"weights": weights, "kv_cache": kv * cfg.layers, "total": weights + kv * cfg.layers}
