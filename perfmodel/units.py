"""Units accepted in archspec quantities, with their dimension and factor to SI.

Data files say what unit a number is in; code works in SI base units (seconds, bytes, FLOPs,
hertz) and converts only for display.
"""

from __future__ import annotations

# unit -> (dimension, factor to SI)
UNITS: dict[str, tuple[str, float]] = {
    # sizes
    "B": ("bytes", 1.0),
    "KiB": ("bytes", 1024.0),
    "MiB": ("bytes", 1024.0**2),
    "GiB": ("bytes", 1024.0**3),
    "KB": ("bytes", 1e3),
    "MB": ("bytes", 1e6),
    "GB": ("bytes", 1e9),
    "TB": ("bytes", 1e12),
    # bandwidth
    "B/s": ("bandwidth", 1.0),
    "GB/s": ("bandwidth", 1e9),
    "TB/s": ("bandwidth", 1e12),
    "B/clk": ("bytes_per_clk", 1.0),
    # compute
    "flop/clk/cu": ("flops_per_clk", 1.0),
    "op/clk/cu": ("iops_per_clk", 1.0),  # integer ops (one lane of one instruction) per clock per CU
    "wg/clk": ("workgroups_per_clk", 1.0),  # workgroups a dispatcher launches per clock
    "FLOP/s": ("flop_rate", 1.0),
    "GFLOP/s": ("flop_rate", 1e9),
    "TFLOP/s": ("flop_rate", 1e12),
    "TOP/s": ("flop_rate", 1e12),
    # frequency and time
    "Hz": ("frequency", 1.0),
    "MHz": ("frequency", 1e6),
    "GHz": ("frequency", 1e9),
    "s": ("time", 1.0),
    "ms": ("time", 1e-3),
    "us": ("time", 1e-6),
    "ns": ("time", 1e-9),
    # counts
    "lanes": ("count", 1.0),
    "W": ("power", 1.0),
}


def to_si(value: float, unit: str) -> float:
    return float(value) * UNITS[unit][1]


def dimension(unit: str) -> str:
    return UNITS[unit][0]


def units_of(dim: str) -> list[str]:
    return [u for u, (d, _) in UNITS.items() if d == dim]
