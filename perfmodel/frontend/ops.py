"""Marker ops for what one kernel does in an inference engine but several aten ops in eager
PyTorch (or what aten has no op for): collectives, a fused MoE layer, rotary embedding, paged
attention, FlashAttention with a sliding window or a logit soft cap (SDPA has neither), MLA's
latent attention, vLLM's fused gated activations. Each is a ``torch.library`` custom op with a fake (meta)
implementation, so the dispatch-mode tracer records it as one op with its shapes
(`opmap._custom` maps it to a case).

Registered on first use (torch is imported only here and in the tracer).
"""

from __future__ import annotations

_OPS = None


def ops():
    """The namespace ``torch.ops.perfmodel`` after registering the marker ops once."""
    global _OPS
    if _OPS is not None:
        return _OPS
    import torch

    _register_like_input(
        "collective", "(Tensor x, str kind, int ranks, float scale) -> Tensor",
        "kind: allreduce | allgather | reducescatter | alltoall; bytes = x.nbytes * scale.",
    )  # fmt: skip
    _register_like_input(
        "moe", "(Tensor x, int experts, int topk, int inter, str weight_dtype, int group_size) -> Tensor",
        "Router, gated-SiLU experts and combine over ``experts`` local experts (weights stored as weight_dtype: 'auto' the input's).",
    )  # fmt: skip
    _register_like_input(
        "paged_attention", "(Tensor q, Tensor k_cache, Tensor v_cache, int block_size, int window, float softcap) -> Tensor",
        "Attention of q [B, H, Sq, D] over a paged cache viewed as [B, Hkv, Skv, D] (window, softcap: 0 none).",
    )  # fmt: skip
    _register_like_input(
        "local_attention", "(Tensor q, Tensor k, Tensor v, bool causal, int window, float softcap) -> Tensor",
        "FlashAttention with a sliding window of ``window`` keys and a logit soft cap (0: none) on q [B, H, Sq, D].",
    )  # fmt: skip
    _register_latent_attention()
    _register_vllm_fused()
    _OPS = torch.ops.perfmodel
    return _OPS


def _register_like_input(name: str, schema: str, doc: str) -> None:
    """A marker op whose output is shaped like its first argument: one definition for the ops
    that differ only in name and schema (eager: a copy; fake: an empty tensor like it)."""
    import torch
    from torch.library import custom_op

    def impl(x: torch.Tensor, *args) -> torch.Tensor:
        return x.clone()

    impl.__doc__ = doc
    op = custom_op(f"perfmodel::{name}", impl, mutates_args=(), schema=schema)

    @op.register_fake
    def _(x, *args):
        return torch.empty_like(x)


def _register_latent_attention() -> None:
    """MLA's absorbed attention (FlashMLA, AITER's MLA decode): q [B, H, Sq, D] over a latent
    cache [B, 1, Skv, D] whose first ``v_dim`` channels are also the values, read once; the
    output is [B, H, Sq, v_dim]. aten's SDPA would take V as a second tensor."""
    import torch
    from torch.library import custom_op

    @custom_op("perfmodel::latent_attention", mutates_args=(), schema="(Tensor q, Tensor cache, int v_dim, bool causal) -> Tensor")
    def latent_attention(q: torch.Tensor, cache: torch.Tensor, v_dim: int, causal: bool) -> torch.Tensor:
        return q.new_zeros((*q.shape[:-1], v_dim))

    @latent_attention.register_fake
    def _(q, cache, v_dim, causal):
        return q.new_empty((*q.shape[:-1], v_dim))


def _register_vllm_fused() -> None:
    """vLLM's fused kernels, each recorded as one op: RoPE on q and k, the residual add fused
    into RMSNorm, SiLU-and-mul, the KV-cache write."""
    import torch
    from torch.library import custom_op

    @custom_op("perfmodel::rotary_embedding", mutates_args=(), schema="(Tensor q, Tensor k, int position) -> (Tensor, Tensor)")
    def rotary_embedding(q: torch.Tensor, k: torch.Tensor, position: int) -> tuple[torch.Tensor, torch.Tensor]:
        """RoPE on q and k in one kernel (vLLM's rotary_embedding)."""
        return q.clone(), k.clone()

    @rotary_embedding.register_fake
    def _(q, k, position):
        return torch.empty_like(q), torch.empty_like(k)

    @custom_op("perfmodel::fused_add_rms_norm", mutates_args=(), schema="(Tensor x, Tensor residual, Tensor weight) -> (Tensor, Tensor)")
    def fused_add_rms_norm(x, residual, weight):
        """residual += x; x = rmsnorm(residual) * weight, in one kernel (vLLM)."""
        return x.clone(), residual.clone()

    @fused_add_rms_norm.register_fake
    def _(x, residual, weight):
        return torch.empty_like(x), torch.empty_like(residual)

    for act in ("silu", "gelu", "gelu_tanh"):  # vLLM's SiluAndMul, GeluAndMul (exact and tanh)
        _register_act_and_mul(act)

    @custom_op("perfmodel::reshape_and_cache", mutates_args=(), schema="(Tensor k, Tensor v, Tensor k_cache, Tensor v_cache) -> ()")
    def reshape_and_cache(k, v, k_cache, v_cache):
        """Write the new K and V into the cache in one kernel (vLLM)."""

    @reshape_and_cache.register_fake
    def _(k, v, k_cache, v_cache):
        return None


def _register_act_and_mul(act: str) -> None:
    """``act(x[..., :d]) * x[..., d:]`` in one kernel (vLLM's fused gated activations)."""
    from torch.library import custom_op

    def impl(x):
        return x[..., : x.shape[-1] // 2].clone()

    op = custom_op(f"perfmodel::{act}_and_mul", impl, mutates_args=(), schema="(Tensor x) -> Tensor")

    @op.register_fake
    def _(x):
        return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))
