"""Colours and markers shared by every chart: colour by bound class, marker by kernel family.

One place, so the PNG roofline, the HTML roofline and the comparison charts agree.
"""

from __future__ import annotations

from perfmodel.vocab import split_term

# memory levels (roof lines and bandwidth bars)
LEVEL_COLORS = {
    "lds": "#8c564b",
    "l1": "#9467bd",
    "l2": "#2ca02c",
    "mall": "#ff7f0e",
    "hbm": "#1f77b4",
    "vram": "#1f77b4",
}
LEVEL_MARKERS = {"lds": "v", "l1": "^", "l2": "s", "mall": "D", "hbm": "o", "vram": "o"}

# bound classes: compute in reds/purples, memory in the level's colour, the rest grey
BOUND_COLORS = {
    "compute:mfma": "#d62728",
    "compute:wmma": "#d62728",
    "compute:tensor": "#d62728",
    "compute:valu": "#e377c2",
    "compute:sfu": "#bcbd22",
    "latency": "#7f7f7f",
    "launch": "#17becf",
    "unknown": "#c7c7c7",
}

# kernel families: one marker each (families not listed get a generic one)
FAMILY_MARKERS = {
    "gemm": "o",
    "grouped_gemm": "h",
    "attention": "s",
    "softmax": "^",
    "layernorm": "v",
    "rmsnorm": "<",
    "stream": ">",
    "elementwise": "D",
    "reduction": "P",
    "transpose": "X",
    "conv2d": "p",
    "moe": "*",
    "stencil": "d",
    "mixbench": "8",
}
OTHER_MARKER = "H"

# several GPUs on one chart (ceilings and grouped bars)
# (distinct from the level colours, which the roofs of the first GPU use)
ARCH_COLORS = ["#222222", "#c2185b", "#00897b", "#b8860b", "#5c6bc0", "#6d4c41"]

# the SVG shapes of the HTML roofline, by matplotlib marker
SVG_SHAPES = {"o": "circle", "s": "square", "D": "diamond", "d": "diamond", "^": "triangle", "v": "triangle-down"}


def bound_color(bound: str | None) -> str:
    """The colour of a bound class (``memory:<level>`` takes the level's colour)."""
    if not bound:
        return BOUND_COLORS["unknown"]
    if bound in BOUND_COLORS:
        return BOUND_COLORS[bound]
    kind, key = split_term(bound)
    if kind == "memory":
        return LEVEL_COLORS.get(key, "#1f77b4")
    if kind == "compute":
        return BOUND_COLORS["compute:mfma"]
    return BOUND_COLORS["unknown"]


def family_marker(kernel: str) -> str:
    return FAMILY_MARKERS.get(kernel, OTHER_MARKER)


# kernels side by side (the bandwidth chart)
KERNEL_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def kernel_color(i: int) -> str:
    return KERNEL_COLORS[i % len(KERNEL_COLORS)]


def arch_color(i: int) -> str:
    return ARCH_COLORS[i % len(ARCH_COLORS)]


# the fixed and serial terms in greys a reader can tell apart: the pipeline fill, the K-loop's
# latency floor, the kernels run one after another, the timing scope's overhead
OTHER_TERM_COLORS = {"fill": "#7f7f7f", "latency": "#b5b5b5", "serial": "#4a4a4a", "overhead": "#dadada"}


def term_color(term: str) -> str:
    """Colour of one time term in a stacked breakdown: compute by pipe, memory by level."""
    kind, key = split_term(term)
    if kind == "memory":
        return LEVEL_COLORS.get(key, "#1f77b4")
    if kind == "compute":
        pipe = key.split(":")[0]
        return bound_color(f"compute:{pipe}")
    if term == "launch" or kind == "launch":  # the per-dispatch cost (hatched) and the workgroup launches
        return BOUND_COLORS["launch"]
    return OTHER_TERM_COLORS.get(term.split(":")[0], "#7f7f7f")


def term_hatch(term: str) -> str | None:
    """Hatching that sets a term apart from its neighbour of a close colour (VALU beside the
    matrix pipe, launch)."""
    return "//" if term.startswith("compute:valu") or term == "launch" else None
