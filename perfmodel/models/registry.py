"""The kernel-model registry: kernel name -> parameters and one small formula function.

Shaped like PyTorch's flop counter: each family registers a function with the parameters it
takes. A model is vectorised: numeric parameters arrive as float64 numpy arrays of one shape
(a batch of cases), text/bool parameters as plain scalars (a batch shares them), and the model
returns a `Work` whose values are arrays of that shape. Models know nothing of counters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from perfmodel.errors import InputError, did_you_mean

REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """One case parameter: its type, default, allowed values and lower bound."""

    name: str
    kind: type = int  # int, float, bool or str
    default: Any = REQUIRED
    choices: tuple = ()
    minimum: float = 1  # smallest allowed value for numbers (sizes are >= 1)
    help: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass
class KernelModel:
    name: str
    params: dict[str, Param]
    fn: Callable
    doc: str = ""
    default_dtype: str = "fp16"
    dtype_free: bool = False  # e.g. stream: dtype only sets element size
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def numeric(self) -> list[str]:
        return [n for n, p in self.params.items() if p.kind in (int, float)]

    @property
    def categorical(self) -> list[str]:
        return [n for n, p in self.params.items() if p.kind in (str, bool)]


MODELS: dict[str, KernelModel] = {}


def register(
    name: str,
    params: list[Param],
    doc: str = "",
    default_dtype: str = "fp16",
    aliases: dict | None = None,
    dtype_free: bool = False,
):
    """Decorator: register ``fn(p, arch, dtype) -> Work`` under ``name``."""

    def deco(fn: Callable) -> Callable:
        MODELS[name] = KernelModel(
            name=name,
            params={p.name: p for p in params},
            fn=fn,
            doc=doc or (fn.__doc__ or "").strip().splitlines()[0],
            default_dtype=default_dtype,
            aliases=aliases or {},
            dtype_free=dtype_free,
        )
        return fn

    return deco


def get_model(name: str, where: str | None = None) -> KernelModel:
    from perfmodel.models import load_all_models

    load_all_models()
    if name not in MODELS:
        raise InputError(
            f"unknown kernel '{name}'{did_you_mean(name, MODELS)}; known: {', '.join(sorted(MODELS))}",
            where=where,
            key="kernel",
        )
    return MODELS[name]


def convert_param(p: Param, raw: Any, where: str | None) -> Any:
    """One parameter value from text/YAML/JSON into its type, checked against its bounds."""
    if p.kind is bool:
        if isinstance(raw, bool):
            return raw
        s = str(raw).strip().lower()
        if s in ("1", "true", "yes", "on"):
            return True
        if s in ("0", "false", "no", "off"):
            return False
        raise InputError(f"expected true or false, got {raw!r}", where=where, key=p.name)
    if p.kind is str:
        s = str(raw).strip()
        if p.choices and s not in p.choices:
            raise InputError(f"expected one of {', '.join(p.choices)}, got {raw!r}{did_you_mean(s, p.choices)}", where=where, key=p.name)
        return s
    try:
        if isinstance(raw, bool):
            raise ValueError
        if isinstance(raw, str):
            v = float(raw.replace("_", ""))
        else:
            v = float(raw)
    except (TypeError, ValueError):
        raise InputError(f"expected a number, got {raw!r}", where=where, key=p.name) from None
    if v != v or v in (float("inf"), float("-inf")):
        raise InputError(f"expected a finite number, got {raw!r}", where=where, key=p.name)
    if p.kind is int and v != int(v):
        raise InputError(f"expected a whole number, got {raw!r}", where=where, key=p.name)
    if p.choices and v not in p.choices:
        opts = ", ".join(f"{c:g}" for c in p.choices)
        raise InputError(f"expected one of {opts}, got {raw!r}", where=where, key=p.name)
    if v < p.minimum:
        what = "a positive size" if p.minimum >= 1 else f"a number >= {p.minimum:g}"
        raise InputError(f"expected {what}, got {raw!r}", where=where, key=p.name)
    return v
