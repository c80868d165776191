"""The archspec YAML schema: validation and parsing into plain `SpecValue` trees.

The schema is declared once here, as data (`SCHEMA`), and checked by one walker, so every error
reads the same: ``<file>: <key.path>: <what was expected>``. Numbers are converted to SI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from perfmodel.errors import InputError, did_you_mean, excerpt
from perfmodel.units import UNITS, dimension, to_si, units_of
from perfmodel.vocab import DTYPES, INT_OPS, LEVELS, PIPES

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


# The physically plausible range of every number, per dimension, in SI units (inclusive). A value
# outside it is a typo or a fuzzed file, refused at load with the file and key: zero CUs or a
# zero bandwidth would divide by zero, a trillion XCDs would loop for hours.
RANGES: dict[str, tuple[float, float]] = {
    "count": (1, 1e5),
    "bytes": (1, 1e15),
    "bandwidth": (1, 1e16),  # B/s
    "bytes_per_clk": (1e-3, 1e6),
    "flops_per_clk": (1e-3, 1e6),  # per CU per clock
    "iops_per_clk": (1e-3, 1e6),  # integer ops per CU per clock
    "workgroups_per_clk": (1e-4, 1e2),  # workgroup launches per clock (per XCD or device)
    "flop_rate": (1e6, 1e18),
    "frequency": (1e6, 1e10),  # 1 MHz .. 10 GHz
    "time": (1e-9, 1.0),
    "power": (1, 1e5),
    "fraction": (0.0, 1.0),  # a share of something, no unit
}
WAVE_SIZES = (1, 1024)


LATENCY_RANGE = (1e-9, 1e-5)  # a load-to-use latency, in seconds


def Q(dim: str, range: tuple[float, float] | None = None, **extra) -> tuple:
    return ("q", dim, extra, range or RANGES.get(dim))


CLOCK_MHZ = ("num", (1, 1e4))  # a benchmark's clock, in MHz
# the GEMM a measured matrix rate was taken on (the estimator times that shape's own wave
# quantization out of the rate: `rates.benchmark_fill`)
GEMM_SHAPE = ("struct", {d: (("num", (1, 2**31)), True) for d in ("m", "n", "k")})
_MEASURED_Q = {"benchmark": ("str",), "clock": CLOCK_MHZ, "alternatives": ("alts",), "shape": GEMM_SHAPE}

RATE_TABLE = ("map", DTYPES, Q("flops_per_clk", plain=("num", RANGES["flops_per_clk"])))
INT_TABLE = ("map", tuple(INT_OPS), Q("iops_per_clk"))  # integer VALU ops: not FLOPs
LEVEL = (
    "struct",
    {
        "capacity": (Q("bytes"), True),
        "bandwidth": (("bw",), True),
        "channels": (Q("count"), False),
        "line": (Q("bytes"), False),
        # idle load-to-use latency of one access that hits this level (a pointer chase); 1 ns .. 10 us
        "latency": (Q("time", LATENCY_RANGE), False),
        # a write-back cache: the device-memory write-back a cold kernel pays for lines another
        # writer left dirty here, as `share` of the bytes it allocates, at most `of_capacity` of
        # this level (measured: `traffic.dirty_writeback`)
        "dirty_writeback": (("struct", {"share": (Q("fraction"), True), "of_capacity": (Q("fraction"), True)}), False),
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
        "pipes": (
            (
                "map",
                PIPES,
                (
                    "struct",
                    {
                        "dense": (RATE_TABLE, True),
                        "sparse": (RATE_TABLE, False),
                        "int": (INT_TABLE, False),
                        # matrix pipes: the share of a matrix instruction's cycles during which the
                        # SIMD can execute VALU instructions beside it (AMD's matrix instruction
                        # calculator: "VALU co-execution cycles possible" / "Execution cycles");
                        # absent: as far as the waves allow (`estimate._dependent_chain`)
                        "valu_coexec": (Q("fraction"), False),
                        # matrix pipes whose accumulator layout differs from their operand layout:
                        # VALU instructions per packed 32-bit word to turn a result into the A/B
                        # operand of the next matrix instruction (a fused GEMM-GEMM: attention's
                        # P = softmax(QK^T) fed to PV); absent: the result is already an operand
                        "result_relayout": (Q("count"), False),
                    },
                ),
            ),
            True,
        ),
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
        "launch": (("struct", {"overhead": (Q("time"), True), "workgroup_rate": (Q("workgroups_per_clk"), False)}), True),
        "topology": (
            (
                "struct",
                {
                    "xcds": (Q("count", (1, 64)), False),
                    "dies_per_package": (Q("count", (1, 64)), False),
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
            (
                "list",
                (
                    "struct",
                    {
                        "name": (("str",), True),
                        "links": (Q("count"), True),
                        "bandwidth": (Q("bandwidth"), True),
                        # per link and direction, what the collective library plans with (collectives.fabric)
                        "usable": (Q("bandwidth"), False),
                        # the switch reduces and multicasts (NVLink SHARP), with its source: NCCL's NVLS
                        "in_network_reduction": (("str",), False),
                    },
                ),
            ),
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
                self.fail(path, f"expected text, got {type(node).__name__} {excerpt(node)}")
            return node
        if kind == "int":
            if not isinstance(node, int) or isinstance(node, bool):
                self.fail(path, f"expected an integer, got {excerpt(node)}")
            return node
        if kind == "num":
            return self.number(node, path, spec[1])
        if kind == "strlist":
            if not isinstance(node, list) or not all(isinstance(x, str) for x in node):
                self.fail(path, f"expected a list of names, got {excerpt(node)}")
            return node
        if kind == "choice":
            if not isinstance(node, str) or node not in spec[1]:
                self.fail(path, f"expected one of {', '.join(spec[1])}, got {excerpt(node)}{did_you_mean(node, spec[1])}")
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
            return self.quantity(node, spec[1], spec[2], path, spec[3])
        if kind == "bw":
            dim = "bytes_per_clk" if isinstance(node, dict) and node.get("unit") == "B/clk" else "bandwidth"
            return self.quantity(node, dim, {}, path, RANGES[dim])
        if kind == "alts":
            if not isinstance(node, list):
                self.fail(path, "expected a list of alternative measurements")
            return node  # checked by the caller, which knows the dimension
        raise AssertionError(kind)

    def struct(self, node: Any, fields: dict, path: str) -> dict:
        if not isinstance(node, dict):
            self.fail(path, f"expected a mapping with keys {', '.join(fields)}, got {type(node).__name__}")
        for k in node:
            if not isinstance(k, str) or k not in fields:
                self.fail(_join(path, _name(k)), f"unknown key{did_you_mean(k, fields)}; expected one of {', '.join(fields)}")
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
            if not isinstance(k, str) or (allowed is not None and k not in allowed):
                what = f"; expected one of {', '.join(allowed)}" if allowed is not None else "; expected a name"
                self.fail(_join(path, _name(k)), f"unknown name{did_you_mean(k, allowed or ())}{what}")
            out[k] = self.walk(v, child, _join(path, str(k)))
        return out

    def number(self, v: Any, path: str, bounds: tuple[float, float] | None = None, factor: float = 1.0) -> float:
        """A finite number inside ``bounds`` once multiplied by ``factor`` (the unit's, to SI)."""
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(path, f"expected a number, got {excerpt(v)}")
        if v != v or v in (float("inf"), float("-inf")):
            self.fail(path, f"expected a finite number, got {v!r}")
        lo, hi = bounds or (0, float("inf"))
        if not lo / factor <= v <= hi / factor:
            self.fail(path, f"expected a number between {lo / factor:g} and {hi / factor:g}, got {excerpt(v, 40)}")
        return float(v)

    def quantity(self, node: Any, dim: str, extra: dict, path: str, bounds=None) -> SpecValue:
        if not isinstance(node, dict):
            self.fail(path, f"expected a quantity {{value, unit, source}}, got {excerpt(node)}")
        allowed = _Q_BASE | set(extra)
        for k in node:
            if not isinstance(k, str) or k not in allowed:
                self.fail(_join(path, _name(k)), f"unknown key{did_you_mean(k, allowed)}; expected one of {', '.join(sorted(allowed))}")
        for req in ("value", "source"):
            if req not in node:
                self.fail(_join(path, req), "missing required field")
        unit = node.get("unit", "")
        if not isinstance(unit, str):
            self.fail(_join(path, "unit"), f"expected a unit name, got {excerpt(unit)}")
        raw = node["value"]
        if dim == "list":
            lo, hi = WAVE_SIZES
            if (
                not isinstance(raw, list)
                or not raw
                or not all(isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi for x in raw)
            ):
                self.fail(_join(path, "value"), f"expected a non-empty list of integers {lo}..{hi}, got {excerpt(raw)}")
            value: Any = list(raw)
        elif dim in ("count", "fraction"):
            if unit not in (("", "lanes") if dim == "count" else ("",)):
                self.fail(_join(path, "unit"), f"expected no unit (a {dim}), got {unit!r}")
            value = self.number(raw, _join(path, "value"), bounds)
        else:
            if not unit:
                self.fail(_join(path, "unit"), f"missing unit; expected one of {', '.join(units_of(dim))}")
            if unit not in UNITS or dimension(unit) != dim:
                self.fail(_join(path, "unit"), f"expected a {dim.replace('_', ' ')} unit ({', '.join(units_of(dim))}), got {excerpt(unit)}{did_you_mean(unit, units_of(dim))}")
            value = to_si(self.number(raw, _join(path, "value"), bounds, UNITS[unit][1]), unit)
        tag = node.get("tag", "")
        if tag and (not isinstance(tag, str) or tag not in TAGS):
            self.fail(_join(path, "tag"), f"expected one of {', '.join(TAGS)}, got {excerpt(tag)}")
        per = node.get("per", "device")
        if not isinstance(per, str) or per not in SCOPES:
            self.fail(_join(path, "per"), f"expected one of {', '.join(SCOPES)}, got {excerpt(per)}{did_you_mean(per, SCOPES)}")
        src = node["source"]
        if not isinstance(src, str) or not src:
            self.fail(_join(path, "source"), "expected a source id (a key of `sources`)")
        ex = {}
        for k, spec in extra.items():
            if k in node:
                ex[k] = self.walk(node[k], spec, _join(path, k))
        if "alternatives" in ex:
            ex["alternatives"] = [
                self.quantity(a, dim, {"benchmark": ("str",), "clock": CLOCK_MHZ}, f"{path}.alternatives[{i}]", bounds)
                for i, a in enumerate(ex["alternatives"])
            ]
        note = node.get("note", "")
        if not isinstance(note, str):
            self.fail(_join(path, "note"), "expected text")
        return SpecValue(value=value, unit=unit, source=src, tag=tag, note=note, per=per, extra=ex, raw=raw)


def _name(key: Any) -> str:
    """A mapping key for an error path: as written when it is short text, else an excerpt."""
    return key if isinstance(key, str) and len(key) <= 40 and "\n" not in key else excerpt(key, 40)


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
