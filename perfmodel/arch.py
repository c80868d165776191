"""`Arch`: one GPU, loaded from ``archspecs/<key>.yaml`` (or a user's file), with derived peaks.

Peaks are derived, never typed twice: compute peak = rate per CU per clock x CUs x clock;
a bandwidth given in bytes per clock is multiplied out over its scope (CU, channel, device).
Theoretical and measured (achievable) ceilings are kept side by side, each with its source.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from perfmodel.archspec import SpecValue, parse_spec
from perfmodel.errors import InputError, did_you_mean
from perfmodel.vocab import DEVICE_MEMORY, MATRIX_PIPES, flop_key

DEFAULT_ARCH = "mi300x"


def archspec_dir() -> Path:
    """Where the shipped specs are: inside the wheel, or the repo's top-level folder."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_data" / "archspecs", here.parent / "archspecs"):
        if cand.is_dir():
            return cand
    raise InputError("the shipped archspecs folder is missing from this installation")


def data_path(*parts: str) -> Path:
    """A shipped data file (archspecs/, kernels/suite.yaml) in the wheel or the repo."""
    here = Path(__file__).resolve().parent
    for base in (here / "_data", here.parent):
        cand = base.joinpath(*parts)
        if cand.exists():
            return cand
    raise InputError(f"the shipped file {'/'.join(parts)} is missing from this installation")


def arch_keys() -> list[str]:
    return sorted(p.stem for p in archspec_dir().glob("*.yaml"))


@dataclass(frozen=True)
class Roof:
    """One roof: a compute rate (FLOP/s) or a bandwidth (B/s), theoretical and achievable.

    The achievable figure is the archspec's benchmark measurement (its ``measured:`` section);
    a rocprof measurement of a kernel is a `Measurement`, never a roof.
    """

    kind: str  # "compute" or "memory"
    name: str  # "mfma:bf16" or "hbm"
    theoretical: float
    achievable: float | None
    source: str
    achievable_source: str = ""
    sparse: bool = False
    # share of the CU-rounds the benchmark GEMM of a matrix figure kept busy (`rates.benchmark_fill`,
    # set by `RooflineModel.compute_filled`); 1 for every other roof
    fill: float = 1.0

    @property
    def ceiling(self) -> float | None:
        """The achievable rate the estimator uses: the benchmark figure at a full wave (the
        benchmark divided by its own fill), so no prediction lies above it."""
        return self.achievable / self.fill if self.achievable else None


class Arch:
    """A GPU: compute pipes, memory levels, limits, measured ceilings, sources."""

    def __init__(self, key: str, tree: dict, path: str):
        self.key = key
        self.path = path
        self.tree = tree
        self.name: str = tree["name"]
        self.vendor: str = tree["vendor"]
        self.family: str = tree["family"]
        self.gfx: str = tree["gfx"]
        self.kind: str = tree["kind"]
        self.sources: dict[str, str] = tree["sources"]
        c = tree["compute"]
        self.cus = int(c["cus"].value)
        self.simds_per_cu = int(c["simds_per_cu"].value)
        self.simd_width = int(c["simd_width"].value)
        self.wave_sizes: list[int] = c["wave_sizes"].value
        self.clock_hz: float = c["clock"]["peak"].value
        topo = tree.get("topology", {})
        self.xcds = int(topo["xcds"].value) if "xcds" in topo else 1
        self.occupancy: dict[str, SpecValue] = tree["occupancy"]
        self.launch_overhead_s: float = tree["launch"]["overhead"].value
        self._workgroup_rate: SpecValue | None = tree["launch"].get("workgroup_rate")
        self._measured = tree.get("measured", {})
        # peak / fixed clock for a GPU at a fixed core clock (`perfmodel.fixed_clock`): the cycles
        # of a default latency at a core-clocked level (`rates.latency_used`) last longer
        self.core_latency_scale = 1.0

    # --- identity -----------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"Arch({self.key!r}, {self.name!r}, {self.gfx}, {self.cus} CUs)"

    @property
    def wave_size(self) -> int:
        """The native wavefront size (64 on CDNA, 32 on RDNA and NVIDIA warps)."""
        return self.wave_sizes[0]

    @property
    def memory_level(self) -> str:
        """The device-memory level name: ``hbm`` or ``vram``."""
        return next(lv for lv in DEVICE_MEMORY if lv in self.tree["memory"])

    @property
    def levels(self) -> list[str]:
        """Memory levels, innermost first."""
        return list(self.tree["memory"])

    @property
    def matrix_pipe(self) -> str | None:
        return next((p for p in MATRIX_PIPES if p in self.tree["pipes"]), None)

    def pipes(self) -> dict[str, list[str]]:
        """Pipe -> dtypes it has a dense rate for."""
        return {p: list(t["dense"]) for p, t in self.tree["pipes"].items()}

    # --- compute ------------------------------------------------------------------------
    def rate(self, pipe: str, dtype: str, sparse: bool = False) -> SpecValue:
        """FLOPs per clock per CU for (pipe, dtype); InputError naming what exists otherwise."""
        pipes = self.tree["pipes"]
        if pipe not in pipes:
            raise InputError(f"{self.key} has no '{pipe}' pipe{did_you_mean(pipe, pipes)}; it has {', '.join(pipes)}", key="pipe")
        table = pipes[pipe].get("sparse" if sparse else "dense", {})
        if dtype not in table:
            kind = "sparse " if sparse else ""
            have = ", ".join(table) or "none"
            raise InputError(f"{self.key} ({self.name}) has no {kind}{dtype} rate on the {pipe} pipe; it has {have}", key="dtype")
        return table[dtype]

    def int_rate(self, pipe: str, op: str) -> SpecValue | None:
        """Integer ops per clock per CU of one op class (``perfmodel.vocab.INT_OPS``), or None."""
        return self.tree["pipes"].get(pipe, {}).get("int", {}).get(op)

    def peak_iops(self, pipe: str, op: str, clock_hz: float | None = None) -> float | None:
        """Theoretical integer op/s of one op class: rate x CUs x clock (None without a rate)."""
        q = self.int_rate(pipe, op)
        return None if q is None else q.value * self.cus * (clock_hz or self.clock_hz)

    def valu_coexec(self, pipe: str) -> SpecValue | None:
        """Share of a matrix instruction's cycles the VALU can run beside it, where the spec says."""
        return self.tree["pipes"].get(pipe, {}).get("valu_coexec")

    def result_relayout(self, pipe: str) -> SpecValue | None:
        """VALU instructions per packed word that turn a matrix result into the next matrix
        instruction's operand (RDNA3 WMMA), where the spec says; None: no relayout needed."""
        return self.tree["pipes"].get(pipe, {}).get("result_relayout")

    def has(self, pipe: str, dtype: str) -> bool:
        return dtype in self.tree["pipes"].get(pipe, {}).get("dense", {})

    def peak_flops(self, pipe: str, dtype: str, sparse: bool = False, clock_hz: float | None = None, plain: bool = False) -> float:
        """Theoretical FLOP/s: rate x CUs x clock (peak clock unless another is given)."""
        q = self.rate(pipe, dtype, sparse)
        per_clk = q.extra.get("plain", q.value) if plain else q.value
        return per_clk * self.cus * (clock_hz or self.clock_hz)

    def achievable_flops(self, pipe: str, dtype: str) -> SpecValue | None:
        return self._measured.get("compute", {}).get(pipe, {}).get(dtype)

    def measured_clock(self, what: str = "mfma") -> SpecValue | None:
        """The spec's measured clock under a sustained load of one pipe (`measured: clock:`), or None."""
        return self._measured.get("clock", {}).get(what)

    def clock_under_load(self, what: str = "mfma") -> float:
        """The clock a sustained load runs at (measured), falling back to the peak clock."""
        q = self.measured_clock(what)
        return q.value if q is not None else self.clock_hz

    def workgroups_per_s(self) -> float | None:
        """Workgroups the dispatchers launch per second (archspec `launch.workgroup_rate`, per
        clock and per XCD or device, times the core clock), or None where no figure is known."""
        q = self._workgroup_rate
        return None if q is None else q.value * self._scope_count(q.per) * self.clock_hz

    # --- memory -------------------------------------------------------------------------
    def level(self, name: str) -> dict:
        mem = self.tree["memory"]
        if name not in mem:
            raise InputError(f"{self.key} has no '{name}' memory level{did_you_mean(name, mem)}; it has {', '.join(mem)}", key="level")
        return mem[name]

    def _scope_count(self, per: str, lv: dict | None = None) -> float:
        if per == "cu":
            return self.cus
        if per == "wgp":
            return self.cus / 2
        if per == "xcd":
            return self.xcds
        if per == "channel":
            ch = lv["channels"]
            return ch.value * self._scope_count(ch.per)
        return 1.0

    def capacity(self, name: str) -> float:
        """Total bytes of a level over the device (per-CU capacities summed)."""
        q = self.level(name)["capacity"]
        return q.value * self._scope_count(q.per)

    def capacity_per(self, name: str) -> tuple[float, str]:
        """Capacity of one instance and its scope (64 KiB per CU, 4 MiB per XCD, ...)."""
        q = self.level(name)["capacity"]
        return q.value, q.per

    def bandwidth(self, name: str, clock_hz: float | None = None) -> float:
        """Theoretical bytes/s of a level, derived from bytes per clock where given so."""
        lv = self.level(name)
        q = lv["bandwidth"]
        if q.unit == "B/clk":
            return q.value * self._scope_count(q.per, lv) * (clock_hz or self.clock_hz)
        return q.value * self._scope_count(q.per, lv)

    def latency(self, name: str) -> SpecValue | None:
        """The level's load-to-use latency from the spec (a published pointer chase), or None."""
        return self.tree["memory"].get(name, {}).get("latency")

    def achievable_bandwidth(self, name: str) -> SpecValue | None:
        return self._measured.get("bandwidth", {}).get(name)

    # --- ceilings -----------------------------------------------------------------------
    def roofs(self, dtypes: list[str] | None = None, sparse: bool = False) -> list[Roof]:
        """All roofs: one per (pipe, dtype) and one per memory level, theoretical and achievable."""
        out: list[Roof] = []
        for pipe, table in self.tree["pipes"].items():
            for dtype, q in table["dense"].items():
                if dtypes and dtype not in dtypes:
                    continue
                m = self.achievable_flops(pipe, dtype)
                out.append(
                    Roof(
                        "compute",
                        flop_key(pipe, dtype),
                        self.peak_flops(pipe, dtype),
                        m.value if m else None,
                        q.describe_source(self.sources),
                        m.extra.get("benchmark", "") if m else "",
                    )
                )
                if sparse and dtype in table.get("sparse", {}):
                    out.append(Roof("compute", flop_key(pipe, dtype), self.peak_flops(pipe, dtype, sparse=True), None, "", sparse=True))
        for name in self.levels:
            m = self.achievable_bandwidth(name)
            out.append(
                Roof(
                    "memory",
                    name,
                    self.bandwidth(name),
                    m.value if m else None,
                    self.level(name)["bandwidth"].describe_source(self.sources),
                    m.extra.get("benchmark", "") if m else "",
                )
            )
        return out


@functools.lru_cache(maxsize=64)
def _load_path(path: str, mtime: float) -> Arch:
    p = Path(path)
    from perfmodel.yamlio import load_yaml

    tree = parse_spec(load_yaml(p, "an archspec mapping", shipped=p.parent == archspec_dir()), where=str(p))
    a = Arch(p.stem, tree, str(p))
    _check_measured(a)
    return a


MEASURED_TOLERANCE = 1.02  # a benchmark may read a little above the nominal peak (clock rounding)


def _check_measured(a: Arch) -> None:
    """A measured (achievable) ceiling above its theoretical peak is a wrong spec: refuse it
    rather than predict faster than the hardware allows."""
    for pipe, by_dtype in a._measured.get("compute", {}).items():
        for dtype, q in by_dtype.items():
            if not a.has(pipe, dtype):
                raise InputError(
                    f"a measured rate for {pipe} {dtype}, which the spec's pipes do not list",
                    where=a.path,
                    key=f"measured.compute.{pipe}.{dtype}",
                )
            peak = a.peak_flops(pipe, dtype)
            if q.value > peak * MEASURED_TOLERANCE:
                raise InputError(
                    f"measured {q.value / 1e12:.4g} TFLOP/s is above the theoretical peak {peak / 1e12:.4g} TFLOP/s"
                    " (rate per CU per clock x CUs x peak clock)",
                    where=a.path,
                    key=f"measured.compute.{pipe}.{dtype}",
                )
    for level, q in a._measured.get("bandwidth", {}).items():
        if level not in a.levels:
            raise InputError("a measured bandwidth for a level the spec does not have", where=a.path, key=f"measured.bandwidth.{level}")
        peak = a.bandwidth(level)
        if q.value > peak * MEASURED_TOLERANCE:
            raise InputError(
                f"measured {q.value / 1e9:.4g} GB/s is above the theoretical peak {peak / 1e9:.4g} GB/s",
                where=a.path,
                key=f"measured.bandwidth.{level}",
            )


def load_arch(key_or_path: str | os.PathLike | Arch) -> Arch:
    """Load a shipped arch by key (``mi300x``) or a user's YAML by path (``./my-gpu.yaml``);
    ``KEY@1005mhz`` is either with its core clock fixed there."""
    if isinstance(key_or_path, Arch):
        return key_or_path
    s = str(key_or_path)
    if "@" in s and not Path(s).is_file():  # mi300x@1005mhz: the GPU at a fixed core clock (`perfmodel.fixed_clock`)
        from perfmodel.fixed_clock import at_clock, split_key

        base, hz = split_key(s)
        return at_clock(load_arch(base), hz)
    looks_like_path = s.endswith((".yaml", ".yml")) or os.sep in s or "/" in s
    if looks_like_path:
        p = Path(s)
        if not p.is_file():
            raise InputError(f"no such archspec file '{s}'", key="arch")
        return _load_path(str(p.resolve()), p.stat().st_mtime)
    key = s.lower()
    p = archspec_dir() / f"{key}.yaml"
    if not p.is_file():
        keys = arch_keys()
        raise InputError(f"unknown arch '{s}'{did_you_mean(key, keys)}; known: {', '.join(keys)}", key="arch")
    return _load_path(str(p), p.stat().st_mtime)


def load_all() -> list[Arch]:
    return [load_arch(k) for k in arch_keys()]
