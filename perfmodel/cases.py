"""Cases: the input contract. A case is a flat mapping (id, arch, kernel, dtype, scope, parameters),
given as ``key=value`` words, a YAML list, or JSON lines. Parsing checks every key against the
kernel's registered parameters and reports the case and key of the first problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfmodel import dtypes
from perfmodel.arch import Arch
from perfmodel.errors import InputError, one_line
from perfmodel.models.registry import KernelModel, Param, convert_param, get_model
from perfmodel.vocab import SCOPES

# keys every family accepts; ``scope`` says what a predicted time covers (perfmodel.vocab.SCOPES);
# ``warm`` whether the kernel reruns on the same inputs (a benchmark loop: caches hold what fits)
BASE_KEYS = ("id", "arch", "kernel", "dtype", "scope", "warm")
WARM = Param("warm", bool, False)


@dataclass
class Case:
    """A validated case: parameters converted to their types, defaults filled in."""

    index: int
    id: str | None
    arch: str | Arch  # a key, a spec path, or an Arch (validate's copy with an overridden clock)
    kernel: str
    dtype: str
    params: dict[str, Any]
    model: KernelModel
    scope: str = "kernel"  # what the time covers: kernel, events or host
    warm: bool | None = None  # the case's own warm= key; None: the run's --warm

    @property
    def where(self) -> str:
        return case_label(self.index, self.id)


def case_label(index: int, case_id: Any, source: str | None = None) -> str:
    label = f"case {index + 1}" + (f" (id {case_id})" if case_id not in (None, "") else "")
    return f"{source}: {label}" if source else label


def parse_kv(words: list[str], where: str = "command line") -> dict[str, str]:
    """``["m=4096", "n=4096"]`` -> ``{"m": "4096", "n": "4096"}``."""
    out: dict[str, str] = {}
    for w in words:
        if "=" not in w:
            raise InputError(f"expected key=value, got {w!r}", where=where)
        k, v = w.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError(f"expected key=value, got {w!r}", where=where)
        if k in out:
            raise InputError(f"given twice ({out[k]!r} and {v.strip()!r}); give each key once", where=where, key=k)
        out[k] = v.strip()
    return out


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):  # a key given twice: name it
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"key {k!r} given twice; give each key once")
            seen.add(k)
    return out


# one decoder for every line (json.loads with a hook builds a new one per call)
_JSON_LINE = json.JSONDecoder(object_pairs_hook=_unique_keys)


def load_case_file(path: str) -> list[dict]:
    """A YAML list of mappings, or JSON lines (one object per line)."""
    from perfmodel.yamlio import parse_yaml, read_text

    p = Path(path)
    text = read_text(p, "a cases file (YAML list or JSON lines)")
    stripped = text.lstrip()
    if not stripped:
        raise InputError("the cases file is empty; expected a YAML list or JSON lines", where=str(p))
    if p.suffix in (".jsonl", ".json", ".ndjson") or stripped.startswith("{"):
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = _JSON_LINE.decode(line)
            except json.JSONDecodeError as e:
                raise InputError(f"line {n}: malformed JSON ({e.msg})", where=str(p)) from None
            except (ValueError, RecursionError) as e:  # a key given twice, integers too long, nesting
                raise InputError(f"line {n}: {one_line(str(e), 120)}", where=str(p)) from None
            if not isinstance(obj, dict):
                raise InputError(f"line {n}: expected a JSON object per line", where=str(p))
            rows.append(obj)
        return rows
    data = parse_yaml(text, str(p))
    if isinstance(data, dict) and "cases" in data:
        data = data["cases"]
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise InputError("expected a YAML list of case mappings (or a mapping with a `cases:` list)", where=str(p))
    return data


def normalize(
    raw: dict,
    index: int,
    default_arch: str | None = None,
    default_dtype: str | None = None,
    source: str | None = None,
    default_kernel: str | None = None,
    default_scope: str | None = None,
) -> Case:
    """Check one raw case against its kernel's parameters; convert and fill defaults."""
    cid = raw.get("id")
    where = case_label(index, cid, source)
    kernel = raw.get("kernel", default_kernel)
    if kernel in (None, ""):
        raise InputError("missing; expected a kernel name such as gemm or attention", where=where, key="kernel")
    model = get_model(str(kernel), where=where)
    arch = raw.get("arch", default_arch)
    if arch in (None, ""):
        raise InputError("missing; expected an arch key such as mi300x (or --arch)", where=where, key="arch")
    dtype = str(raw.get("dtype") or default_dtype or model.default_dtype)
    dtypes.size(dtype, where)  # refuses an unknown dtype, naming the case
    scope = raw.get("scope", default_scope)
    scope = "kernel" if scope in (None, "") else scope
    if not isinstance(scope, str) or scope not in SCOPES:
        raise InputError(f"got {scope!r}; expected one of {', '.join(SCOPES)}", where=where, key="scope")
    warm = raw.get("warm")
    if warm not in (None, ""):
        warm = convert_param(WARM, warm, where)
    else:
        warm = None
    model.check_keys(raw, where, also=BASE_KEYS)
    params = {k: convert_param(model.params[k], v, where) for k, v in raw.items() if k not in BASE_KEYS}
    for name, p in model.params.items():
        if name not in params:
            if p.required:
                raise InputError(f"missing required parameter of {model.name} ({p.help or p.kind.__name__})", where=where, key=name)
            params[name] = p.default
    arch = arch if isinstance(arch, Arch) else str(arch)
    return Case(index, None if cid is None else str(cid), arch, model.name, dtype, params, model, scope, warm)
