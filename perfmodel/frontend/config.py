"""Transformer configs: the built-in YAML files (`configs/*.yaml`, each citing the published
config.json it copies) or a Hugging Face ``config.json``, read into one `ModelConfig`.

No torch here: a config is plain data, checked field by field (bad input -> InputError naming
the file and the key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from perfmodel.errors import InputError, did_you_mean

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float8_e4m3fn": "fp8"}


@dataclass
class ModelConfig:
    name: str
    family: str  # llama | mixtral | deepseek | qwen2 | gemma
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    inter: int
    vocab: int
    dtype: str = "bf16"
    tie_embeddings: bool = False
    qkv_bias: bool = False
    experts: int = 0  # routed experts (0 = dense MLP)
    topk: int = 0
    moe_inter: int = 0
    shared_experts: int = 0
    first_dense: int = 0  # leading layers with a dense MLP (DeepSeek first_k_dense_replace)
    moe_layers: tuple = ()  # one flag per layer where the config says which are MoE (Qwen MoE); empty: first_dense
    q_lora_rank: int = 0  # MLA (DeepSeek): 0 = a plain GQA attention
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    # local attention: ``window`` keys (the query's own and those before it) on the layers that
    # ``window_layers`` marks (one flag per layer; empty: none); soft caps (0: none)
    window: int = 0
    window_layers: tuple = ()
    attn_softcap: float = 0.0
    final_softcap: float = 0.0
    act: str = "silu"  # the gated MLP's activation (activations.GEMM_ACTIVATIONS)
    qk_norm: bool = False  # RMSNorm over each head of q and k before RoPE (Qwen3, Gemma 3)
    sandwich_norm: bool = False  # Gemma 2/3: norms after attention and after the MLP too
    embed_scale: bool = False  # Gemma: the embeddings multiplied by sqrt(hidden_size)
    # routed experts stored narrower than ``dtype`` (a checkpoint's quantization_config; "":
    # as ``dtype``), dequantized in the expert GEMMs, ``expert_group`` K elements per scale
    expert_weights: str = ""
    expert_group: int = 0
    # the decoder's linear layers and experts computed in a narrower type (fp8 checkpoints):
    # the GEMMs' dtype and scaling (block: 128x128 weight blocks, 1x128 activation groups)
    linear_dtype: str = ""
    linear_scaling: str = ""
    quantization: str = ""  # what the checkpoint's quantization_config says and how it is timed
    source: str = ""

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def window_of(self, i: int) -> int:
        """Keys a query of layer ``i`` sees at most (0: the whole causal context)."""
        return self.window if self.window_layers and self.window_layers[i] else 0

    def is_moe_layer(self, i: int) -> bool:
        if self.moe_layers:
            return self.moe_layers[i]
        return self.experts > 0 and i >= self.first_dense


def builtin_names() -> list[str]:
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))


def _int(cfg: dict, key: str, where: str, default=None, minimum: int = 1) -> int:
    v = cfg.get(key)
    if v is None:  # absent or null (DeepSeek-V2-Lite has q_lora_rank: null)
        v = default
    if v is None:
        raise InputError("missing required field (a whole number)", where=where, key=key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v < minimum:
        raise InputError(f"expected a whole number >= {minimum}, got {v!r}", where=where, key=key)
    return int(v)


def from_hf(cfg: dict, where: str, name: str | None = None, source: str = "") -> ModelConfig:
    """A `ModelConfig` from the keys of a Hugging Face config.json."""
    if not isinstance(cfg, dict):
        raise InputError(f"expected a JSON object of config keys, got {type(cfg).__name__}", where=where)
    if str(cfg.get("model_type", "")).lower() == "gemma3" and isinstance(cfg.get("text_config"), dict):
        cfg = {"model_type": "gemma3_text", **cfg["text_config"]}  # a multimodal config: its language model
    family, mtype = _family(cfg, where)
    hidden = _int(cfg, "hidden_size", where)
    heads = _int(cfg, "num_attention_heads", where)
    if hidden % heads and "head_dim" not in cfg:
        raise InputError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}; give head_dim", where=where, key="head_dim")
    dt = cfg.get("torch_dtype", "bfloat16")
    c = ModelConfig(
        name=name or cfg.get("_name_or_path") or mtype or "model",
        family=family,
        hidden=hidden,
        layers=_int(cfg, "num_hidden_layers", where),
        heads=heads,
        kv_heads=_int(cfg, "num_key_value_heads", where, default=heads),
        head_dim=_int(cfg, "head_dim", where, default=hidden // heads) if cfg.get("head_dim") is not None else hidden // heads,
        inter=_int(cfg, "intermediate_size", where),
        vocab=_int(cfg, "vocab_size", where),
        dtype=DTYPES.get(str(dt), "bf16"),
        tie_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        qkv_bias=bool(cfg.get("attention_bias", family == "qwen2" and mtype in ("qwen2", "qwen2_moe"))),
        source=source,
    )
    if c.heads % c.kv_heads:
        raise InputError(f"num_attention_heads {c.heads} is not a multiple of num_key_value_heads {c.kv_heads}", where=where, key="num_key_value_heads")
    _set_moe(c, cfg, where)
    _set_layer_features(c, cfg, mtype, where)
    _set_quantization(c, cfg, where)
    if c.experts and c.topk > c.experts:
        raise InputError(f"num_experts_per_tok {c.topk} exceeds the {c.experts} experts", where=where, key="num_experts_per_tok")
    return c


def _family(cfg: dict, where: str) -> tuple[str, str]:
    """(family, lower-case model_type): which decoder layout the config describes, from its
    model_type or architectures (either may be missing in hand-written configs)."""
    mtype = str(cfg.get("model_type", "")).lower()
    arches = " ".join(cfg.get("architectures") or [])
    if "deepseek" in mtype or "Deepseek" in arches:
        family = "deepseek"
    elif "mixtral" in mtype or cfg.get("num_local_experts"):
        family = "mixtral"
    elif mtype in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe") or "Qwen" in arches:
        family = "qwen2"
    elif mtype in ("llama", "mistral", "") or "Llama" in arches or "Mistral" in arches:
        family = "llama"
    elif mtype in ("gemma2", "gemma3_text"):
        family = "gemma"
    else:
        raise InputError(
            f"unsupported model_type {mtype!r}; expected a Llama-, Mixtral-, Qwen2-, Gemma 2/3- or DeepSeek-style decoder",
            where=where,
            key="model_type",
        )
    return family, mtype


def _set_moe(c: ModelConfig, cfg: dict, where: str) -> None:
    """The experts of a Mixtral- or DeepSeek-style config, and DeepSeek's MLA dims (kv_lora_rank
    set), onto ``c``; dense families keep the defaults."""
    if c.family == "mixtral":
        c.experts = _int(cfg, "num_local_experts", where)
        c.topk = _int(cfg, "num_experts_per_tok", where)
        c.moe_inter = c.inter
    if c.family == "qwen2" and cfg.get("num_experts"):  # Qwen2-MoE / Qwen3-MoE
        c.experts = _int(cfg, "num_experts", where)
        c.topk = _int(cfg, "num_experts_per_tok", where)
        c.moe_inter = _int(cfg, "moe_intermediate_size", where)
        shared = _int(cfg, "shared_expert_intermediate_size", where, default=0, minimum=0)
        if shared % c.moe_inter:
            raise InputError(
                f"expected a multiple of moe_intermediate_size {c.moe_inter}, got {shared}", where=where, key="shared_expert_intermediate_size"
            )
        c.shared_experts = shared // c.moe_inter  # one gated expert of that width (Qwen2-MoE); Qwen3-MoE has none
        step = _int(cfg, "decoder_sparse_step", where, default=1)
        dense = cfg.get("mlp_only_layers") or []
        if not isinstance(dense, list) or not all(isinstance(i, int) for i in dense):
            raise InputError(f"expected a list of layer indices, got {dense!r}", where=where, key="mlp_only_layers")
        c.moe_layers = tuple(i not in dense and (i + 1) % step == 0 for i in range(c.layers))
    if c.family == "deepseek":
        c.experts = _int(cfg, "n_routed_experts", where)
        c.topk = _int(cfg, "num_experts_per_tok", where)
        c.moe_inter = _int(cfg, "moe_intermediate_size", where)
        c.shared_experts = _int(cfg, "n_shared_experts", where, default=0, minimum=0)
        c.first_dense = _int(cfg, "first_k_dense_replace", where, default=0, minimum=0)
        if cfg.get("kv_lora_rank"):
            c.q_lora_rank = _int(cfg, "q_lora_rank", where, default=0, minimum=0)
            c.kv_lora_rank = _int(cfg, "kv_lora_rank", where)
            c.qk_nope_dim = _int(cfg, "qk_nope_head_dim", where)
            c.qk_rope_dim = _int(cfg, "qk_rope_head_dim", where)
            c.v_head_dim = _int(cfg, "v_head_dim", where)
            c.head_dim = c.qk_nope_dim + c.qk_rope_dim


# quantization_config methods whose stored expert weights the MoE kernel times: the weight type
# and K elements per scale. MXFP4 (OCP Microscaling spec v1.0: 32 FP4 E2M1 elements share one
# E8M0 scale) is gpt-oss's: its modules_to_not_convert keep attention, router, embeddings and
# LM head in the model dtype, so only the routed experts are FP4.
EXPERT_QUANT = {"mxfp4": ("fp4", 32)}


def _set_quantization(c: ModelConfig, cfg: dict, where: str) -> None:
    """A checkpoint's quantization_config. MXFP4 experts are timed as stored (fp4 weights
    dequantized in the expert GEMMs). FP8 (quant_method fp8: DeepSeek-V3/R1, Qwen3-FP8) runs the
    decoder's linear layers and experts as FP8 GEMMs with dynamically quantized activations,
    block-scaled where the config gives weight_block_size (its 128x128 weight blocks and 1x128
    activation groups), else per tensor; attention, norms and the LM head stay in the model
    dtype (vLLM's Fp8LinearMethod on every decoder linear, the router and LM head unquantized).
    Any other method is named in the output and its weights timed in the traced dtype."""
    q = cfg.get("quantization_config")
    if q is None:
        return
    if not isinstance(q, dict):
        raise InputError(f"expected a mapping with quant_method, got {q!r}"[:200], where=where, key="quantization_config")
    method = str(q.get("quant_method") or "").lower() or "unnamed"
    if method in EXPERT_QUANT and c.experts:
        c.expert_weights, c.expert_group = EXPERT_QUANT[method]
        c.quantization = f"{method}: routed experts stored as {c.expert_weights} ({c.expert_group} weights per scale), the rest in the model dtype"
    elif method == "fp8":
        block = q.get("weight_block_size")
        if block is not None and (not isinstance(block, list) or len(block) != 2 or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)):
            raise InputError(f"expected two positive whole numbers, got {block!r}"[:200], where=where, key="weight_block_size")
        c.linear_dtype, c.linear_scaling = "fp8", "block" if block else "tensor"
        scales = f"{block[0]}x{block[1]} weight blocks, dynamic 1x{block[1]} activation groups" if block else "per-tensor scales"
        if block and block != [128, 128]:
            scales += ", timed as 128x128 blocks"
        c.quantization = f"fp8: decoder linear layers and experts as fp8 GEMMs ({scales}), attention, norms and LM head in the model dtype"
    else:
        c.quantization = f"{method}: not modelled, weights timed in the traced dtype"


# Hugging Face's `hidden_activation`/`hidden_act` names -> the MLP activations the models cost
ACTIVATIONS = {"silu": "silu", "swish": "silu", "gelu_pytorch_tanh": "gelu_tanh", "gelu_new": "gelu_tanh", "gelu": "gelu"}


def _set_layer_features(c: ModelConfig, cfg: dict, mtype: str, where: str) -> None:
    """The per-layer features a config states: the MLP activation, the norms, soft caps and
    sliding windows.

    Which layers slide: the config's ``layer_types`` ("sliding_attention" / "full_attention")
    where it has them (transformers writes them since 4.53); else the family's rule in
    transformers: Gemma 2 every even layer, Gemma 3 all but every ``sliding_window_pattern``-th
    (default 6), Qwen2 with ``use_sliding_window`` the layers from ``max_window_layers`` on,
    Mistral-style configs with a ``sliding_window`` every layer."""
    gemma = c.family == "gemma"
    act = str(cfg.get("hidden_activation") or cfg.get("hidden_act") or ("gelu_pytorch_tanh" if gemma else "silu"))
    if act not in ACTIVATIONS:
        raise InputError(f"unsupported activation {act!r}; expected one of {', '.join(ACTIVATIONS)}", where=where, key="hidden_act")
    c.act = ACTIVATIONS[act]
    c.sandwich_norm = c.embed_scale = gemma
    c.qk_norm = mtype in ("qwen3", "qwen3_moe", "gemma3_text")
    for key, attr in (("attn_logit_softcapping", "attn_softcap"), ("final_logit_softcapping", "final_softcap")):
        v = cfg.get(key)
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise InputError(f"expected a number >= 0 or null, got {v!r}", where=where, key=key)
            setattr(c, attr, float(v))
    if cfg.get("sliding_window") is None or (c.family == "qwen2" and not cfg.get("use_sliding_window", False)):
        return
    c.window = _int(cfg, "sliding_window", where)
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != c.layers or not set(types) <= {"sliding_attention", "full_attention"}:
            raise InputError(
                f"expected {c.layers} entries of sliding_attention / full_attention, got {types!r}"[:200], where=where, key="layer_types"
            )
        c.window_layers = tuple(t == "sliding_attention" for t in types)
    elif mtype == "gemma2":
        c.window_layers = tuple(i % 2 == 0 for i in range(c.layers))
    elif mtype == "gemma3_text":
        every = _int(cfg, "sliding_window_pattern", where, default=6)
        c.window_layers = tuple((i + 1) % every != 0 for i in range(c.layers))
    elif c.family == "qwen2":
        first = _int(cfg, "max_window_layers", where, default=c.layers, minimum=0)
        c.window_layers = tuple(i >= first for i in range(c.layers))
    else:
        c.window_layers = (True,) * c.layers


def load_config(name_or_path: str) -> ModelConfig:
    """A built-in name (``llama3-8b``) or a path to a config.json / YAML with a `config:` block."""
    s = str(name_or_path)
    p = Path(s)
    builtin = CONFIG_DIR / f"{s.lower()}.yaml"
    if builtin.is_file() and not p.exists():
        return _load_yaml(builtin)
    if not p.exists():
        names = builtin_names()
        raise InputError(
            f"unknown model '{s}'{did_you_mean(s.lower(), names)}; built-in: {', '.join(names)}, or a path to a config.json",
            key="model",
        )
    if p.suffix in (".yaml", ".yml"):
        return _load_yaml(p)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read file ({e})", where=str(p)) from None
    except json.JSONDecodeError as e:
        raise InputError(f"malformed JSON at line {e.lineno}: {e.msg}; expected a Hugging Face config.json", where=str(p)) from None
    return from_hf(data, str(p), name=p.parent.name if p.name == "config.json" else p.stem, source=str(p))


def _load_yaml(p: Path) -> ModelConfig:
    from perfmodel.yamlio import load_yaml

    data = load_yaml(p, "a model config")
    if not isinstance(data, dict) or "config" not in data:
        raise InputError("expected a mapping with `name`, `source` and `config`", where=str(p), key="config")
    return from_hf(data["config"], str(p), name=data.get("name", p.stem), source=data.get("source", ""))
