"""The archspec YAML schema: validation and parsing into plain `SpecValue` trees.

The schema is declared once here, as data (`SCHEMA`), and checked by one walker, so every error
reads the same: ``<file>: <key.path>: <what was expected>``. Numbers are converted to SI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from perfmodel.errors import InputError, did_you_mean
from perfmodel.units import UNITS, dimension, to_si, units_of
from perfmodel.vocab import DTYPES, LEVELS, PIPES

TAGS = ("R", "D", "P", "S", "A")
KINDS = ("instinct", "radeon", "nvidia", "custom")
SCOPES = ("cu", "wgp", "xcd", "channel", "device", "link", "package")


@dataclass
class SpecValue:
    """One number from a spec file, in SI units, with where it came from."""

    value: Any  # float in SI units, or a list for list-valued fields
    unit: str = ""
    source: str = ""  # source id
    tag: str = ""
    note: str = ""
    per: str = "device"
    extra: dict = field(default_factory=dict)  # plain, benchmark, clock, alternatives, raw value
    raw: Any = None  # the value as written, in `unit`

    def describe_source(self, sources: dict[str, str]) -> str:
        text = sources.get(self.source, self.source)
        tag = f" [{self.tag}]" if self.tag else ""
        return f"{self.source}{tag}: {text}" if text != self.source else f"{self.source}{tag}"


# --- schema -------------------------------------------------------------------------------
# A spec node is one of:
#   ("str",) ("int",) ("strlist",) ("choice", options)
#   ("q", dimension, {extra field: spec})        a quantity mapping
#   ("struct", {name: (spec, required)})
#   ("map", allowed_keys_or_None, child_spec)    a mapping with free or restricted keys
#   ("list", child_spec)

_Q_BASE = {"value", "unit", "source", "tag", "note", "per"}


def Q(dim: str, **extra) -> tuple:
    return ("q", dim, extra)


_MEASURED_Q = {"benchmark": ("str",), "clock": ("num",), "alternatives": ("alts",)}

RATE_TABLE = ("map", DTYPES, Q("flops_per_clk", plain=("num",)))
LEVEL = (
    "struct",
    {
        "capacity": (Q("bytes"), True),
        "bandwidth": (("bw",), True),
        "channels": (Q("count"), False),
        "line": (Q("bytes"), False),
    },
)
SCHEMA = (
    "struct",
    {
        "schema": (("int",), True),
        "name": (("str",), True),
        "vendor": (("str",), True),
        "family": (("str",), True),
        "gfx": (("str",), True),
        "kind": (("choice", KINDS), True),
        "sources": (("map", None, ("str",)), True),
        "compute": (
            (
                "struct",
                {
                    "cus": (Q("count"), True),
                    "simds_per_cu": (Q("count"), True),
                    "simd_width": (Q("count"), True),
                    "wave_sizes": (Q("list"), True),
                    "clock": (("map", ("peak", "base", "game", "memory"), Q("frequency")), True),
                },
            ),
            True,
        ),
        "pipes": (("map", PIPES, ("struct", {"dense": (RATE_TABLE, True), "sparse": (RATE_TABLE, False)})), True),
        "memory": (("map", LEVELS, LEVEL), True),
        "occupancy": (
            (
                "struct",
                {
                    "vgprs_per_lane": (Q("count"), True),
                    "vgpr_granule": (Q("count"), True),
                    "sgprs_per_wave": (Q("count"), False),
                    "max_waves_per_simd": (Q("count"), True),
                    "max_workgroup_size": (Q("count"), True),
                    "lds_per_workgroup": (Q("bytes"), True),
                    "lds_granule": (Q("bytes"), False),
                },
            ),
            True,
        ),
        "launch": (("struct", {"overhead": (Q("time"), True)}), True),
        "topology": (
            (
                "struct",
                {
                    "xcds": (Q("count"), False),
                    "dies_per_package": (Q("count"), False),
                    "dispatch": (("str",), False),
                    "partition_modes": (("strlist",), False),
                    "memory_modes": (("strlist",), False),
                    "note": (("str",), False),
                },
            ),
            False,
        ),
        "power": (("struct", {"tdp": (Q("power"), True)}), False),
        "interconnect": (
            ("list", ("struct", {"name": (("str",), True), "links": (Q("count"), True), "bandwidth": (Q("bandwidth"), True)})),
            False,
        ),
        "measured": (
            (
                "struct",
                {
                    "clock": (("map", None, Q("frequency", **_MEASURED_Q)), False),
                    "bandwidth": (("map", LEVELS, Q("bandwidth", **_MEASURED_Q)), False),
                    "compute": (("map", PIPES, ("map", DTYPES, Q("flop_rate", **_MEASURED_Q))), False),
                },
            ),
            False,
        ),
    },
)


class _Walker:
    def __init__(self, where: str):
        self.where = where

    def fail(self, path: str, msg: str):
        raise InputError(msg, where=self.where, key=path or "<top>")

    def walk(self, node: Any, spec: tuple, path: str) -> Any:
        kind = spec[0]
        if kind == "str":
            if not isinstance(node, str):
                self.fail(path, f"expected text, got {type(node).__name__} {node!r}")
            return node
        if kind == "int":
            if not isinstance(node, int) or isinstance(node, bool):
                self.fail(path, f"expected an integer, got {node!r}")
            return node
        if kind == "num":
            return self.number(node, path)
        if kind == "strlist":
            if not isinstance(node, list) or not all(isinstance(x, str) for x in node):
                self.fail(path, f"expected a list of names, got {node!r}")
            return node
        if kind == "choice":
            if node not in spec[1]:
                self.fail(path, f"expected one of {', '.join(spec[1])}, got {node!r}{did_you_mean(node, spec[1])}")
            return node
        if kind == "struct":
            return self.struct(node, spec[1], path)
        if kind == "map":
            return self.mapping(node, spec[1], spec[2], path)
        if kind == "list":
            if not isinstance(node, list):
                self.fail(path, f"expected a list, got {type(node).__name__}")
            return [self.walk(x, spec[1], f"{path}[{i}]") for i, x in enumerate(node)]
        if kind == "q":
            return self.quantity(node, spec[1], spec[2], path)
        if kind == "bw":
            dim = "bytes_per_clk" if isinstance(node, dict) and node.get("unit") == "B/clk" else "bandwidth"
            return self.quantity(node, dim, {}, path)
        if kind == "alts":
            if not isinstance(node, list):
                self.fail(path, "expected a list of alternative measurements")
            return node  # checked by the caller, which knows the dimension
        raise AssertionError(kind)

    def struct(self, node: Any, fields: dict, path: str) -> dict:
        if not isinstance(node, dict):
            self.fail(path, f"expected a mapping with keys {', '.join(fields)}, got {type(node).__name__}")
        for k in node:
            if k not in fields:
                self.fail(_join(path, str(k)), f"unknown key{did_you_mean(k, fields)}; expected one of {', '.join(fields)}")
        out = {}
        for name, (spec, required) in fields.items():
            if name not in node or node[name] is None:
                if required:
                    self.fail(_join(path, name), "missing required field")
                continue
            out[name] = self.walk(node[name], spec, _join(path, name))
        return out

    def mapping(self, node: Any, allowed, child: tuple, path: str) -> dict:
        if not isinstance(node, dict):
            self.fail(path, f"expected a mapping, got {type(node).__name__}")
        out = {}
        for k, v in node.items():
            if allowed is not None and k not in allowed:
                self.fail(_join(path, str(k)), f"unknown name{did_you_mean(k, allowed)}; expected one of {', '.join(allowed)}")
            out[k] = self.walk(v, child, _join(path, str(k)))
        return out

    def number(self, v: Any, path: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(path, f"expected a number, got {v!r}")
        if v != v or v < 0:
            self.fail(path, f"expected a non-negative number, got {v!r}")
        return float(v)

    def quantity(self, node: Any, dim: str, extra: dict, path: str) -> SpecValue:
        if not isinstance(node, dict):
            self.fail(path, f"expected a quantity {{value, unit, source}}, got {node!r}")
        allowed = _Q_BASE | set(extra)
        for k in node:
            if k not in allowed:
                self.fail(_join(path, str(k)), f"unknown key{did_you_mean(k, allowed)}; expected one of {', '.join(sorted(allowed))}")
        for req in ("value", "source"):
            if req not in node:
                self.fail(_join(path, req), "missing required field")
        unit = node.get("unit", "")
        raw = node["value"]
        if dim == "list":
            if not isinstance(raw, list) or not all(isinstance(x, int) and x > 0 for x in raw):
                self.fail(_join(path, "value"), f"expected a list of positive integers, got {raw!r}")
            value: Any = list(raw)
        elif dim == "count":
            if unit not in ("", "lanes"):
                self.fail(_join(path, "unit"), f"expected no unit (a count), got {unit!r}")
            value = self.number(raw, _join(path, "value"))
        else:
            if not unit:
                self.fail(_join(path, "unit"), f"missing unit; expected one of {', '.join(units_of(dim))}")
            if unit not in UNITS or dimension(unit) != dim:
                self.fail(_join(path, "unit"), f"expected a {dim.replace('_', ' ')} unit ({', '.join(units_of(dim))}), got {unit!r}{did_you_mean(unit, units_of(dim))}")
            value = to_si(self.number(raw, _join(path, "value")), unit)
        tag = node.get("tag", "")
        if tag and tag not in TAGS:
            self.fail(_join(path, "tag"), f"expected one of {', '.join(TAGS)}, got {tag!r}")
        per = node.get("per", "device")
        if per not in SCOPES:
            self.fail(_join(path, "per"), f"expected one of {', '.join(SCOPES)}, got {per!r}{did_you_mean(per, SCOPES)}")
        src = node["source"]
        if not isinstance(src, str) or not src:
            self.fail(_join(path, "source"), "expected a source id (a key of `sources`)")
        ex = {}
        for k, spec in extra.items():
            if k in node:
                ex[k] = self.walk(node[k], spec, _join(path, k))
        if "alternatives" in ex:
            ex["alternatives"] = [
                self.quantity(a, dim, {"benchmark": ("str",), "clock": ("num",)}, f"{path}.alternatives[{i}]")
                for i, a in enumerate(ex["alternatives"])
            ]
        note = node.get("note", "")
        if not isinstance(note, str):
            self.fail(_join(path, "note"), "expected text")
        return SpecValue(value=value, unit=unit, source=src, tag=tag, note=note, per=per, extra=ex, raw=raw)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check_sources(tree: dict, where: str) -> None:
    """Every quantity must cite a source id that the file declares."""
    known = tree["sources"]

    def visit(node, path):
        if isinstance(node, SpecValue):
            if node.source not in known:
                raise InputError(
                    f"unknown source id {node.source!r}{did_you_mean(node.source, known)}; declare it under `sources`",
                    where=where,
                    key=f"{path}.source",
                )
            for i, a in enumerate(node.extra.get("alternatives", [])):
                visit(a, f"{path}.alternatives[{i}]")
        elif isinstance(node, dict):
            for k, v in node.items():
                visit(v, _join(path, str(k)))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                visit(v, f"{path}[{i}]")

    visit(tree, "")


def parse_spec(data: Any, where: str) -> dict:
    """Validate a loaded YAML document against SCHEMA; return the tree with Quantities in SI."""
    tree = _Walker(where).walk(data, SCHEMA, "")
    if tree["schema"] != 1:
        raise InputError(f"unsupported schema version {tree['schema']}; expected 1", where=where, key="schema")
    _check_sources(tree, where)
    for name, lv in tree["memory"].items():
        bw = lv["bandwidth"]
        if bw.per == "channel" and "channels" not in lv:
            raise InputError("bandwidth per channel needs a `channels` count", where=where, key=f"memory.{name}.channels")
    return tree
