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

- the name patterns the kernel families register (`registry.identifies`): mixbench's
  ``benchmark_func<T, 256, 8u, Nu>``, the rocprof-compute sample ``vecCopy``, ...

A case is only the model's inputs; nothing here knows counters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.errors import InputError, excerpt, one_line
from perfmodel.readers.records import Dispatch


def short_name(kernel: str, width: int = 48) -> str:
    """A readable kernel name: no ``void``, arguments or ``[clone .kd]``; cut to ``width``."""
    s = re.sub(r"\s*\[clone [^\]]*\]", "", kernel)
    s = re.sub(r"\.kd$", "", s)
    s = re.sub(r"^void\s+", "", s)
    s = s.replace("(anonymous namespace)::", "")  # a scope, not the argument list the loop below drops
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
    """The case of a kernel some registered family recognises by name and geometry, or None."""
    from perfmodel.models.registry import all_models

    for model in all_models().values():
        if model.identify is not None:
            case = model.identify(d.kernel, d.grid, d.workgroup)
            if case is not None:
                return case
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
    from perfmodel.yamlio import parse_yaml, read_text

    p = Path(path)
    data = parse_yaml(read_text(p, "a manifest"), str(p))
    if isinstance(data, dict):
        data = data.get("kernels", data.get("cases"))
    if not isinstance(data, list) or not data:
        raise InputError(
            "expected a list of {match: REGEX | dispatch: N, case: {...}} under `kernels:`", where=str(p)
        )
    return Manifest(str(p), [_rule(item, f"{p}: entry {i}") for i, item in enumerate(data, 1)])


def _rule(item, where: str) -> Rule:
    """One manifest entry, checked: a case of a known kernel, and a regex or a dispatch index."""
    from perfmodel.cases import BASE_KEYS
    from perfmodel.models.registry import get_model

    if not isinstance(item, dict) or not isinstance(item.get("case"), dict):
        raise InputError("expected a mapping with `case:` (a case mapping)", where=where)
    if ("match" in item) == ("dispatch" in item):
        raise InputError("give exactly one of `match:` (kernel-name regex) or `dispatch:` (index)", where=where)
    case = dict(item["case"])
    kernel = case.get("kernel")
    if not kernel:
        raise InputError("missing; expected a kernel name such as gemm or mixbench", where=where, key="kernel")
    get_model(str(kernel), where=where).check_keys(case, where, also=BASE_KEYS)
    rule = Rule(case=case)
    if "match" in item:
        if not isinstance(item["match"], str):
            raise InputError(f"expected a regex (text), got {excerpt(item['match'])}", where=where, key="match")
        rule.match = compile_regex(item["match"], where, "match")
    else:
        v = item["dispatch"]
        if isinstance(v, str) and v.strip().isdigit() and len(v.strip()) <= 18:
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**63:
            raise InputError(f"expected a dispatch index (a whole number >= 0), got {excerpt(v)}", where=where, key="dispatch")
        rule.dispatch = v
    return rule


MAX_REGEX = 1000  # characters
MAX_REPEAT = 1000  # the largest {m,n} count in a regex


def compile_regex(text: str, where: str | None, key: str) -> re.Pattern:
    """A user's kernel-name regex, compiled; one error line for a bad one, and no regex whose
    size explodes (a repeat count like ``a{1000000000}`` takes minutes and gigabytes)."""
    if len(text) > MAX_REGEX:
        raise InputError(f"regex of {len(text)} characters; at most {MAX_REGEX}", where=where, key=key)
    counts = [int(n) for n in re.findall(r"\{\s*(\d+)", text) + re.findall(r",\s*(\d+)\s*\}", text)]
    if counts and max(counts) > MAX_REPEAT:
        raise InputError(f"regex repeat count {max(counts)} above {MAX_REPEAT}", where=where, key=key)
    try:
        return re.compile(text)
    except (re.error, OverflowError, RecursionError, ValueError) as e:
        raise InputError(f"bad regex ({one_line(str(e), 100)})", where=where, key=key) from None


def identify(d: Dispatch, manifest: Manifest | None = None) -> tuple[dict | None, str]:
    """(case, how) for one dispatch: how is "manifest", "built-in" or "" (not identified)."""
    if manifest is not None:
        c = manifest.case_for(d)
        if c is not None:
            return c, "manifest"
    c = builtin_case(d)
    return (c, "built-in") if c is not None else (None, "")
