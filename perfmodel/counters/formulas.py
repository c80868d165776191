"""Load the counter formulas of one gfx target from YAML (the one source of every formula).

A target file names its `base:` (one file or a list, merged in order, later wins) so that a
formula common to several chips is written once. Every formula is parsed by the safe
evaluator when the file is loaded, so a typo fails at once with the file and key named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

from perfmodel.counters.expr import Expr, ExprError, parse
from perfmodel.errors import InputError

FORMULA_DIR = Path(__file__).with_name("formulas")
_KEY = re.compile(
    r"^(flops:[a-z0-9]+:[a-z0-9_]+|iops:[a-z0-9]+:[a-z0-9_]+|(read|write|bytes):[a-z0-9]+|cycles|waves)$"
)


@dataclass(frozen=True)
class Alternative:
    """One way to compute a quantity; `note` says what it assumes when it is a fallback."""

    expr: Expr
    note: str = ""


@dataclass(frozen=True)
class CounterFormula:
    """A measured quantity (`flops:mfma:bf16`, `read:hbm`, ...) and its formulas, in order."""

    key: str
    alternatives: tuple[Alternative, ...]
    doc: str = ""

    @cached_property
    def counters(self) -> frozenset[str]:
        """Every name any alternative reads (constants included); computed once."""
        out: set[str] = set()
        for a in self.alternatives:
            out |= a.expr.names
        return frozenset(out)


@dataclass(frozen=True)
class FormulaSet:
    """All formulas of one gfx target plus its default constants."""

    gfx: str
    quantities: dict[str, CounterFormula] = field(hash=False)
    constants: dict[str, float] = field(hash=False)
    files: tuple[str, ...] = ()

    def counters(self) -> set[str]:
        """Counter names the formulas may read (for readers that keep only what is needed).

        Computed once per formula set (it is asked once per dispatch); a fresh set is returned.
        """
        cached = self.__dict__.get("_counters")
        if cached is None:
            out: set[str] = set()
            for q in self.quantities.values():
                out |= q.counters
            cached = frozenset(out - set(self.constants))
            object.__setattr__(self, "_counters", cached)
        return set(cached)


def available_targets() -> list[str]:
    """gfx targets with a formula file (files without `gfx:` are shared bases)."""
    from perfmodel.yamlio import parse_yaml, read_text

    out = []
    for p in sorted(FORMULA_DIR.glob("*.yaml")):
        data = parse_yaml(read_text(p, "counter formulas"), str(p), shipped=True) or {}
        if data.get("gfx"):
            out.append(str(data["gfx"]))
    return out


def _raw(name: str, seen: tuple[str, ...]) -> tuple[dict, dict, tuple[str, ...]]:
    from perfmodel.yamlio import parse_yaml, read_text

    path = FORMULA_DIR / f"{name}.yaml"
    if name in seen:
        raise InputError(f"formula base cycle {' -> '.join((*seen, name))}", where=str(path))
    if not path.is_file():
        from perfmodel.errors import did_you_mean

        raise InputError(
            f"no counter formulas for '{name}'; known: {', '.join(available_targets())}"
            + did_you_mean(name, available_targets()),
            key="gfx",
        )
    data = parse_yaml(read_text(path, "counter formulas"), str(path), shipped=True) or {}
    bases = data.get("base") or []
    if isinstance(bases, str):
        bases = [bases]
    quantities: dict = {}
    constants: dict = {}
    files: tuple[str, ...] = ()
    for b in bases:
        q, c, f = _raw(str(b), (*seen, name))
        quantities.update(q)
        constants.update(c)
        files += f
    for k, v in (data.get("quantities") or {}).items():
        quantities[str(k)] = (v, path.name)
    constants.update({str(k): float(v) for k, v in (data.get("constants") or {}).items()})
    return quantities, constants, (*files, path.name)


def _quantity(key: str, spec, fname: str) -> CounterFormula:
    where = f"{fname}: {key}"
    if not _KEY.match(key):
        raise InputError("quantity key must look like flops:<pipe>:<dtype>, read:<level>, ...", where=where)
    if isinstance(spec, str):
        spec = {"formula": spec}
    if not isinstance(spec, dict):
        raise InputError("expected a formula string or a mapping", where=where)
    alts_spec = spec.get("alternatives") or [{"formula": spec.get("formula"), "note": spec.get("note", "")}]
    alts = []
    for a in alts_spec:
        if not isinstance(a, dict) or not a.get("formula"):
            raise InputError("every alternative needs a `formula`", where=where)
        try:
            alts.append(Alternative(parse(a["formula"]), str(a.get("note") or "")))
        except ExprError as e:
            raise InputError(str(e), where=where) from None
    return CounterFormula(key, tuple(alts), str(spec.get("doc") or ""))


@cache
def load(gfx: str) -> FormulaSet:
    """The formulas of `gfx` (e.g. ``"gfx942"``), bases merged; raises InputError if unknown."""
    gfx = str(gfx).strip().lower()
    if not re.fullmatch(r"gfx[0-9a-f]+", gfx):
        raise InputError(f"'{gfx}' is not a gfx target name (expected e.g. gfx90a)", key="gfx")
    raw, constants, files = _raw(gfx, ())
    quantities = {k: _quantity(k, spec, fname) for k, (spec, fname) in raw.items()}
    return FormulaSet(gfx, quantities, constants, files)
