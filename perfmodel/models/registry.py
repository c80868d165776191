"""The kernel-model registry: kernel name -> parameters and one small formula function.

Shaped like PyTorch's flop counter: each family registers a function with the parameters it
takes. A model is vectorised: numeric parameters arrive as float64 numpy arrays of one shape
(a batch of cases), text/bool parameters as plain scalars (a batch shares them), and the model
returns a `Work` whose values are arrays of that shape. Models know nothing of counters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import Any

from perfmodel.errors import InputError, did_you_mean, excerpt

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
    # free text (str without choices) that must match this regular expression in full, and how
    # the error names the expected form: gemm's ``tile=256x128``
    pattern: str = ""
    pattern_text: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


# identify(kernel_name, grid, workgroup) -> case dict or None: a family's knowledge of which
# profiled kernels are its own (by name and launch geometry), for `perfmodel validate`
Identifier = Callable[[str, int, int], "dict | None"]


@dataclass
class KernelModel:
    """One kernel family: its parameters, its formula function and what it knows of its kernels."""

    name: str
    params: dict[str, Param]
    fn: Callable
    doc: str = ""
    default_dtype: str = "fp16"
    identify: Identifier | None = None
    integer_dtypes: bool = False  # takes int64/int32/int16 (`dtypes.STREAMING_ONLY`; its per-element maths as integer ops)

    def __post_init__(self) -> None:
        # asked once per case when a batch is grouped: computed once per family
        self.numeric: list[str] = [n for n, p in self.params.items() if p.kind in (int, float)]
        self.categorical: list[str] = [n for n, p in self.params.items() if p.kind in (str, bool)]
        # ``params -> (params[n] for n in self.numeric)`` as a tuple, and the same of the categorical
        self.numeric_values = _values_getter(self.numeric)
        self.categorical_values = _values_getter(self.categorical)

    def check_keys(self, keys, where: str | None = None, also: tuple[str, ...] = ()) -> None:
        """Refuse a key that is neither a parameter of this family nor one of ``also``."""
        for k in keys:
            if k not in also and k not in self.params:
                known = list(self.params) + list(also)
                raise InputError(
                    f"unknown parameter for {self.name}{did_you_mean(k, known)}; expected {', '.join(self.params)}",
                    where=where,
                    key=str(k),
                )


def _values_getter(names: list[str]) -> Callable[[dict], tuple]:
    """``params -> tuple of params[n] for n in names``: one C call (`itemgetter`) where there are
    two names or more (a 100k-case file groups its cases by them); picklable either way."""
    return itemgetter(*names) if len(names) >= 2 else partial(_values, tuple(names))


def _values(names: tuple[str, ...], params: dict) -> tuple:
    return tuple([params[n] for n in names])


MODELS: dict[str, KernelModel] = {}


def register(name: str, params: list[Param], doc: str = "", default_dtype: str = "fp16", integer_dtypes: bool = False):
    """Decorator: register ``fn(p, arch, dtype) -> Work`` under ``name``."""

    def deco(fn: Callable) -> Callable:
        MODELS[name] = KernelModel(
            name=name,
            params={p.name: p for p in params},
            fn=fn,
            doc=doc or (fn.__doc__ or "").strip().splitlines()[0],
            default_dtype=default_dtype,
            integer_dtypes=integer_dtypes,
        )
        return fn

    return deco


def identifies(name: str):
    """Decorator: ``fn(kernel_name, grid, workgroup) -> case | None`` recognises the profiled
    kernels of the registered family ``name`` (grid in work-items, workgroup in work-items)."""

    def deco(fn: Identifier) -> Identifier:
        MODELS[name].identify = fn
        return fn

    return deco


def all_models() -> dict[str, KernelModel]:
    """Every registered family, after importing every module of `perfmodel.models`."""
    from perfmodel.models import load_all_models

    load_all_models()
    return MODELS


def get_model(name: str, where: str | None = None) -> KernelModel:
    from perfmodel.models import models_loaded

    m = MODELS.get(name) if models_loaded() else None  # the per-case fast path
    if m is not None:
        return m
    models = all_models()
    if name not in models:
        raise InputError(
            f"unknown kernel '{name}'{did_you_mean(name, models)}; known: {', '.join(sorted(models))}",
            where=where,
            key="kernel",
        )
    return models[name]


def floats(p: dict, *names: str) -> tuple:
    """The numeric parameters ``names`` of a batch as float64 arrays, in that order."""
    import numpy as np

    return tuple(np.asarray(p[n], dtype=float) for n in names)


MAX_PARAM = float(2**53)  # the largest whole number a float64 holds exactly; far beyond any GPU's memory


def numbers_accepted(p: Param, values: list[float]):
    """The column form of `convert_param`'s checks of a numeric parameter, for values already
    plain floats (NaN for anything else): a boolean array, True where `convert_param` would
    return the value unchanged (finite, at most 2**53, whole for an int, one of the choices, at
    least the minimum). Keep the two in step: tests/test_case_batches.py compares them."""
    import numpy as np

    a = np.array(values, dtype=float)
    with np.errstate(invalid="ignore"):
        ok = (a >= max(p.minimum, -MAX_PARAM)) & (a <= MAX_PARAM)
        if p.kind is int:
            ok &= np.floor(a) == a
    if p.choices:
        ok &= np.array([v in p.choices for v in values], dtype=bool)
    return ok


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
        raise InputError(f"expected true or false, got {excerpt(raw)}", where=where, key=p.name)
    if p.kind is str:
        s = str(raw).strip()
        if p.choices and s not in p.choices:
            raise InputError(f"expected one of {', '.join(p.choices)}, got {excerpt(raw)}{did_you_mean(s, p.choices)}", where=where, key=p.name)
        if p.pattern and s != p.default and re.fullmatch(p.pattern, s) is None:
            raise InputError(f"expected {p.pattern_text}, got {excerpt(raw)}", where=where, key=p.name)
        return s
    try:
        if isinstance(raw, bool):
            raise ValueError
        if isinstance(raw, str):
            v = float(raw.replace("_", ""))
        else:
            v = float(raw)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"expected a number, got {excerpt(raw)}", where=where, key=p.name) from None
    if v != v or v in (float("inf"), float("-inf")):
        raise InputError(f"expected a finite number, got {excerpt(raw)}", where=where, key=p.name)
    if abs(v) > MAX_PARAM:
        raise InputError(f"expected at most {MAX_PARAM:.0f} (2**53), got {excerpt(raw)}", where=where, key=p.name)
    if p.kind is int and v != int(v):
        raise InputError(f"expected a whole number, got {excerpt(raw)}", where=where, key=p.name)
    if p.choices and v not in p.choices:
        opts = ", ".join(f"{c:g}" for c in p.choices)
        raise InputError(f"expected one of {opts}, got {excerpt(raw)}", where=where, key=p.name)
    if v < p.minimum:
        what = "a positive size" if p.minimum >= 1 else f"a number >= {p.minimum:g}"
        raise InputError(f"expected {what}, got {excerpt(raw)}", where=where, key=p.name)
    return v
