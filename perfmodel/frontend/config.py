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
    family: str  # llama | mixtral | deepseek | qwen2
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
    q_lora_rank: int = 0  # MLA (DeepSeek): 0 = a plain GQA attention
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    source: str = ""

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def is_moe_layer(self, i: int) -> bool:
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
        qkv_bias=bool(cfg.get("attention_bias", family == "qwen2" and mtype == "qwen2")),
        source=source,
    )
    if c.heads % c.kv_heads:
        raise InputError(f"num_attention_heads {c.heads} is not a multiple of num_key_value_heads {c.kv_heads}", where=where, key="num_key_value_heads")
    _set_moe(c, cfg, where)
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
    elif mtype in ("qwen2", "qwen3") or "Qwen" in arches:
        family = "qwen2"
    elif mtype in ("llama", "mistral", "") or "Llama" in arches or "Mistral" in arches:
        family = "llama"
    else:
        raise InputError(
            f"unsupported model_type {mtype!r}; expected a Llama-, Mixtral-, Qwen2- or DeepSeek-style decoder",
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
