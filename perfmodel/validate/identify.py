"""Identify measured kernels: which model case (kernel + shape) a dispatch ran.

Two sources, the manifest first:

- a manifest YAML (``--cases manifest.yaml``) mapping kernel-name regexes or dispatch indices to
  case dicts. String values may use ``{grid}`` (work-items), ``{workgroups}``, ``{workgroup}``
  (work-items per workgroup) and the regex's named groups::

      kernels:
        - match: "my_gemm_kernel"            # re.search on the kernel name
          case: {kernel: gemm, dtype: bf16, m: 4096, n: 4096, k: 4096}
        - dispatch: 12                        # one dispatch index
          case: {kernel: stream, op: copy, dtype: fp64, n: "{grid}"}

- built-in name patterns for known kernels: mixbench's ``benchmark_func<T, 256, 8u, Nu>`` and
  the rocprof-compute sample ``vecCopy`` (a BabelStream-style fp64 copy, one element per work-item).

A case is only the model's inputs; nothing here knows counters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.errors import InputError, did_you_mean
from perfmodel.readers.records import Dispatch

MIXBENCH = re.compile(
    r"benchmark_func<\s*(?P<T>.+?),\s*(?P<block>\d+)u?,\s*(?P<gran>\d+)u?,\s*(?P<ci>\d+)u?\s*>"
)
VCOPY = re.compile(r"\bvecCopy\b")


def short_name(kernel: str, width: int = 48) -> str:
    """A readable kernel name: no ``void``, arguments or ``[clone .kd]``; cut to ``width``."""
    s = re.sub(r"\s*\[clone [^\]]*\]", "", kernel)
    s = re.sub(r"\.kd$", "", s)
    s = re.sub(r"^void\s+", "", s)
    s = s.replace("HIP_vector_type<float, 2u>", "float2").replace("__half2", "half2")
    depth, cut = 0, len(s)
    for i, ch in enumerate(s):  # drop the argument list, keep template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    s = s[:cut].strip()
    return s if len(s) <= width else s[: width - 1] + "~"


def builtin_case(d: Dispatch) -> dict | None:
    """The case of a known kernel from its name and geometry, or None."""
    m = MIXBENCH.search(d.kernel)
    if m:
        from perfmodel.models.mixbench import ELEM, ELEM_ALIASES

        t = m.group("T").strip()
        elem = ELEM_ALIASES.get(t, t)
        if elem not in ELEM or not d.grid:
            return None
        gran = int(m.group("gran"))
        return {
            "kernel": "mixbench",
            "elem": elem,
            "block": int(m.group("block")),
            "granularity": gran,
            "compute_iters": int(m.group("ci")),
            "n": int(d.grid) * gran,
        }
    if VCOPY.search(d.kernel) and d.grid:
        return {"kernel": "stream", "op": "copy", "dtype": "fp64", "n": int(d.grid)}
    return None


@dataclass
class Rule:
    case: dict
    match: re.Pattern | None = None
    dispatch: int | None = None


@dataclass
class Manifest:
    path: str
    rules: list[Rule] = field(default_factory=list)

    def case_for(self, d: Dispatch) -> dict | None:
        for r in self.rules:
            if r.dispatch is not None and r.dispatch == d.index:
                return _fill(r.case, d, {}, self.path)
        for r in self.rules:
            if r.match is not None:
                m = r.match.search(d.kernel)
                if m:
                    return _fill(r.case, d, m.groupdict(), self.path)
        return None


def _fill(case: dict, d: Dispatch, groups: dict, where: str) -> dict:
    env = {
        "grid": d.grid,
        "workgroups": d.grid // d.workgroup if d.workgroup else 0,
        "workgroup": d.workgroup,
        **groups,
    }
    out = {}
    for k, v in case.items():
        if isinstance(v, str) and "{" in v:
            try:
                v = v.format(**env)
            except (KeyError, IndexError, ValueError) as e:
                raise InputError(
                    f"cannot fill {v!r} ({e}); known: {', '.join(env)}", where=where, key=k
                ) from None
        out[k] = v
    return out


def load_manifest(path: str | Path) -> Manifest:
    """Read and check a manifest: every case names a known kernel and only its parameters."""
    import yaml

    from perfmodel.cases import BASE_KEYS
    from perfmodel.models.registry import get_model

    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise InputError(f"cannot read manifest ({e.strerror})", where=str(p)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"malformed YAML at line {mark.line + 1 if mark else '?'}", where=str(p)) from None
    if isinstance(data, dict):
        data = data.get("kernels", data.get("cases"))
    if not isinstance(data, list) or not data:
        raise InputError(
            "expected a list of {match: REGEX | dispatch: N, case: {...}} under `kernels:`", where=str(p)
        )
    man = Manifest(str(p))
    for i, item in enumerate(data, 1):
        where = f"{p}: entry {i}"
        if not isinstance(item, dict) or not isinstance(item.get("case"), dict):
            raise InputError("expected a mapping with `case:` (a case mapping)", where=where)
        if ("match" in item) == ("dispatch" in item):
            raise InputError(
                "give exactly one of `match:` (kernel-name regex) or `dispatch:` (index)", where=where
            )
        case = dict(item["case"])
        kernel = case.get("kernel")
        if not kernel:
            raise InputError(
                "missing; expected a kernel name such as gemm or mixbench", where=where, key="kernel"
            )
        model = get_model(str(kernel), where=where)
        for k in case:
            if k not in BASE_KEYS and k not in model.params:
                known = list(model.params) + list(BASE_KEYS)
                raise InputError(
                    f"unknown parameter for {model.name}{did_you_mean(k, known)}; expected {', '.join(model.params)}",
                    where=where,
                    key=str(k),
                )
        rule = Rule(case=case)
        if "match" in item:
            try:
                rule.match = re.compile(str(item["match"]))
            except re.error as e:
                raise InputError(f"bad regex ({e})", where=where, key="match") from None
        else:
            try:
                rule.dispatch = int(item["dispatch"])
            except (TypeError, ValueError):
                raise InputError(
                    f"expected a dispatch index, got {item['dispatch']!r}", where=where, key="dispatch"
                ) from None
        man.rules.append(rule)
    return man


def identify(d: Dispatch, manifest: Manifest | None = None) -> tuple[dict | None, str]:
    """(case, how) for one dispatch: how is "manifest", "built-in" or "" (not identified)."""
    if manifest is not None:
        c = manifest.case_for(d)
        if c is not None:
            return c, "manifest"
    c = builtin_case(d)
    return (c, "built-in") if c is not None else (None, "")
