"""An interactive roofline as one self-contained HTML file: inline SVG and a few lines of JS.

No library and no network: the file opens offline, in any browser, years later. The SVG is
drawn here in Python (log-log axes, roofs, one marker per case at its binding level); hovering
a marker shows the case, its predicted and measured times, bound class and time terms; clicking
a legend entry hides or shows that bound class. Each marker also carries an SVG ``<title>``, so
the text shows even where scripts are off.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Sequence

from perfmodel.plots import style
from perfmodel.plots.points import MEASURED, MODEL_BASIS, PREDICTED, Arrow, Point
from perfmodel.roofline import RooflineModel

W, H = 1100, 680
L, R, T, B = 80, 300, 50, 60  # margins: the right one holds the legend


class _Axes:
    def __init__(self, xlim, ylim):
        self.lx = (math.log10(xlim[0]), math.log10(xlim[1]))
        self.ly = (math.log10(ylim[0]), math.log10(ylim[1]))

    def x(self, v: float) -> float:
        return L + (math.log10(v) - self.lx[0]) / (self.lx[1] - self.lx[0]) * (W - L - R)

    def y(self, v: float) -> float:
        return H - B - (math.log10(v) - self.ly[0]) / (self.ly[1] - self.ly[0]) * (H - T - B)


def _shape(marker: str, x: float, y: float, r: float, fill: str, stroke: str, sw: float) -> str:
    a = f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"'
    if marker in ("s", "P", "X"):
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" {a}/>'
    if marker in ("D", "d"):
        return f'<polygon points="{x:.1f},{y - r * 1.3:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r * 1.3:.1f} {x - r:.1f},{y:.1f}" {a}/>'
    if marker in ("^", "v"):
        s = -1 if marker == "v" else 1
        return f'<polygon points="{x:.1f},{y - s * r * 1.2:.1f} {x + r * 1.1:.1f},{y + s * r * 0.8:.1f} {x - r * 1.1:.1f},{y + s * r * 0.8:.1f}" {a}/>'
    if marker in ("<", ">"):
        s = -1 if marker == "<" else 1
        return f'<polygon points="{x + s * r * 1.2:.1f},{y:.1f} {x - s * r * 0.8:.1f},{y - r * 1.1:.1f} {x - s * r * 0.8:.1f},{y + r * 1.1:.1f}" {a}/>'
    if marker in ("*", "p", "h", "H", "8"):
        n = 5 if marker in ("*", "p") else 6
        inner = 0.5 if marker == "*" else 1.0
        pts = []
        for k in range(2 * n if marker == "*" else n):
            rr = r * 1.3 if (marker != "*" or k % 2 == 0) else r * 1.3 * inner
            ang = math.pi / 2 + k * math.pi / (n if marker == "*" else n / 2)
            pts.append(f"{x + rr * math.cos(ang):.1f},{y - rr * math.sin(ang):.1f}")
        return f'<polygon points="{" ".join(pts)}" {a}/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {a}/>'


def _ticks(lo: float, hi: float) -> list[float]:
    return [10.0**k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) if lo <= 10.0**k <= hi]


def _fmt_tick(v: float) -> str:
    return f"{v:g}" if 1e-3 <= v <= 1e5 else f"1e{int(math.log10(v))}"


def roofline_html(
    model: RooflineModel,
    points: Iterable[Point] = (),
    arrows: Iterable[Arrow] = (),
    title: str | None = None,
    subtitle: str | None = None,
    ridge_dtype: str | None = None,
    others: Sequence[RooflineModel] = (),
    notes: Sequence[str] = (),
) -> str:
    """The whole HTML document as text (``notes``: lines shown under the plot)."""
    from perfmodel.plots.roofline_plot import _group_roofs, _limits

    points = [p for p in points if p.xy() is not None]
    roofs = sorted(_group_roofs([c for c in model.compute_filled if not c.sparse]), key=lambda c: -c["theoretical"])[:6]
    if ridge_dtype is None:
        dts = [p.dtype for p in points if p.dtype]
        ridge_dtype = max(set(dts), key=dts.count) if dts else None
    ridge_roof = next((r for r in roofs if ridge_dtype in r["dtypes"]), roofs[0] if roofs else None)
    xlim, ylim = _limits(model, roofs, points, others)
    ax = _Axes(xlim, ylim)
    top = max((c["theoretical"] for c in roofs), default=1e12)
    svg = _svg_axes(ax, xlim, ylim) + _svg_compute_roofs(ax, roofs)
    svg += _svg_memory_roofs(ax, model, others, xlim, ylim, top, ridge_roof, ridge_dtype)
    pts_svg, data = _svg_points(ax, points, arrows)
    svg += pts_svg
    leg = _svg_legend(model, points, others, ridge_roof)
    archs = ", ".join([model.arch.name] + [o.arch.name for o in others])
    head = html.escape(title or f"{archs}: hierarchical roofline")
    sub = html.escape(subtitle or "")
    body = "\n".join(svg + leg)
    return _PAGE.format(
        title=head,
        subtitle=sub,
        w=W,
        h=H,
        body=body,
        data=json.dumps(data).replace("</", "<\\/"),
        basis=(html.escape(MODEL_BASIS + ".") if any(p.kind == MEASURED for p in points) else "")
        + "".join(f"<br>{html.escape(n)}" for n in notes),
    )




def _svg_axes(ax: _Axes, xlim, ylim) -> list[str]:
    """Grid lines, tick labels, the frame and the axis titles."""
    svg: list[str] = []
    for v in _ticks(*xlim):
        svg.append(f'<line x1="{ax.x(v):.1f}" y1="{T}" x2="{ax.x(v):.1f}" y2="{H - B}" class="grid"/>')
        svg.append(f'<text x="{ax.x(v):.1f}" y="{H - B + 16}" class="tick" text-anchor="middle">{_fmt_tick(v)}</text>')
    for v in _ticks(*ylim):
        svg.append(f'<line x1="{L}" y1="{ax.y(v):.1f}" x2="{W - R}" y2="{ax.y(v):.1f}" class="grid"/>')
        svg.append(f'<text x="{L - 6}" y="{ax.y(v) + 4:.1f}" class="tick" text-anchor="end">{_fmt_tick(v)}</text>')
    svg.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" class="frame"/>')
    svg.append(f'<text x="{(L + W - R) / 2}" y="{H - 18}" text-anchor="middle" class="axis">arithmetic intensity (FLOP per byte at the binding level)</text>')
    svg.append(f'<text transform="translate(20,{(T + H - B) / 2}) rotate(-90)" text-anchor="middle" class="axis">performance (TFLOP/s)</text>')
    return svg


def _svg_compute_roofs(ax: _Axes, roofs: list[dict]) -> list[str]:
    """Flat roofs: theoretical dashed with its label, the first achievable figure solid."""
    svg: list[str] = []
    for i, c in enumerate(roofs):
        y = c["theoretical"] / 1e12
        grey = 90 + 25 * i
        svg.append(f'<line x1="{L}" y1="{ax.y(y):.1f}" x2="{W - R}" y2="{ax.y(y):.1f}" stroke="rgb({grey},{grey},{grey})" stroke-dasharray="6,4"><title>{html.escape(c["name"])} theoretical peak {y:,.1f} TFLOP/s</title></line>')
        svg.append(f'<text x="{W - R - 4}" y="{ax.y(y) - 3:.1f}" text-anchor="end" class="roof">{html.escape(c["name"])}: peak {y:,.1f}</text>')
        for name, meas, _fill in c["measured"][:1]:
            ym = meas / 1e12
            svg.append(f'<line x1="{L}" y1="{ax.y(ym):.1f}" x2="{W - R}" y2="{ax.y(ym):.1f}" stroke="rgb({grey},{grey},{grey})" stroke-width="2"><title>{html.escape(name)} achievable {ym:,.1f} TFLOP/s</title></line>')
    return svg


def _svg_memory_roofs(ax: _Axes, model, others, xlim, ylim, top: float, ridge_roof, ridge_dtype) -> list[str]:
    """Slanted roofs per level (clipped to the plot), ridge points, and the other GPUs' roofs."""
    from perfmodel.plots.roofline_plot import _group_roofs

    svg: list[str] = []
    peak = ridge_roof["theoretical"] if ridge_roof else top
    svg.append(f'<clipPath id="plot"><rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}"/></clipPath><g clip-path="url(#plot)">')
    for m in model.memory:
        col = style.LEVEL_COLORS.get(m.name, "#333")
        for bw, dash, wdt, what in ((m.theoretical, "6,4", 1.3, "theoretical"), (m.achievable, "", 2.2, "achievable")):
            if not bw:
                continue
            x0, x1 = xlim[0], min(xlim[1], top / bw)
            d = f'M{ax.x(x0):.1f},{ax.y(max(x0 * bw / 1e12, ylim[0])):.1f} L{ax.x(x1):.1f},{ax.y(x1 * bw / 1e12):.1f} L{ax.x(xlim[1]):.1f},{ax.y(top / 1e12):.1f}'
            svg.append(f'<path d="{d}" fill="none" stroke="{col}" stroke-width="{wdt}" stroke-dasharray="{dash}"><title>{m.name} {what} {bw / 1e12:.3g} TB/s</title></path>')
        r = peak / m.theoretical
        svg.append(f'<circle cx="{ax.x(r):.1f}" cy="{ax.y(peak / 1e12):.1f}" r="4" fill="white" stroke="{col}"><title>ridge {m.name} vs {ridge_roof["name"] if ridge_roof else ""}: {r:,.0f} FLOP/B</title></circle>')
    for i, om in enumerate(others, 1):
        col = style.arch_color(i)
        mem = next(mm for mm in om.memory if mm.name == om.arch.memory_level)
        oroofs = _group_roofs([c for c in om.compute_filled if not c.sparse])
        orf = next((r for r in oroofs if ridge_dtype in r["dtypes"]), max(oroofs, key=lambda r: r["theoretical"]))
        otop = orf["theoretical"]
        x1 = min(xlim[1], otop / mem.theoretical)
        d = f'M{ax.x(xlim[0]):.1f},{ax.y(max(xlim[0] * mem.theoretical / 1e12, ylim[0])):.1f} L{ax.x(x1):.1f},{ax.y(x1 * mem.theoretical / 1e12):.1f} L{ax.x(xlim[1]):.1f},{ax.y(otop / 1e12):.1f}'
        svg.append(f'<path d="{d}" fill="none" stroke="{col}" stroke-width="1.6" stroke-dasharray="8,3,2,3"><title>{om.arch.key}: {mem.name} {mem.theoretical / 1e12:.3g} TB/s, {orf["name"]} {otop / 1e12:,.1f} TFLOP/s</title></path>')
    svg.append("</g>")
    return svg


def _svg_points(ax: _Axes, points: list[Point], arrows) -> tuple[list[str], list[dict]]:
    """Arrows first, then one shape per point with its hover text; the data behind the hovers."""
    svg: list[str] = []
    svg.append('<defs><marker id="ah" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>')
    for a in arrows:
        xy = a.xy()
        if xy:
            (x0, y0), (x1, y1) = xy
            svg.append(f'<line x1="{ax.x(x0):.1f}" y1="{ax.y(y0):.1f}" x2="{ax.x(x1):.1f}" y2="{ax.y(y1):.1f}" stroke="#444" marker-end="url(#ah)"/>')
    data = []
    for i, p in enumerate(points):
        x, y = p.xy()
        col = style.bound_color(p.bound)
        filled = p.kind == PREDICTED
        info = {"label": p.label, "kind": p.kind, "bound": p.bound or "unknown", "level": p.level, **p.info}
        data.append(info)
        tip = html.escape("\n".join(f"{k}: {v}" for k, v in info.items()))
        shape = _shape(style.family_marker(p.kernel), ax.x(x), ax.y(y), 6, col if filled else "white", "#222" if filled else col, 0.8 if filled else 2)
        svg.append(f'<g class="pt" data-i="{i}" data-bound="{html.escape(p.bound or "unknown")}">{shape}<title>{tip}</title></g>')
    return svg, data


def _svg_legend(model, points: list[Point], others, ridge_roof) -> list[str]:
    """Bound classes (click to hide), kernel families, line and marker styles, level rates."""
    lx, ly = W - R + 20, T + 10
    leg = [f'<text x="{lx}" y="{ly}" class="lh">bound class (click to hide)</text>']
    ly += 18
    for b in sorted({p.bound or "unknown" for p in points}):
        leg.append(f'<g class="lg" data-bound="{html.escape(b)}"><rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{style.bound_color(b)}"/><text x="{lx + 18}" y="{ly}">{html.escape(b)}</text></g>')
        ly += 17
    if points:
        ly += 8
        leg.append(f'<text x="{lx}" y="{ly}" class="lh">kernel family</text>')
        ly += 18
        for k in sorted({p.kernel for p in points}):
            leg.append(f'<g>{_shape(style.family_marker(k), lx + 6, ly - 4, 5, "#888", "#222", 0.8)}<text x="{lx + 18}" y="{ly}">{html.escape(k)}</text></g>')
            ly += 17
    ly += 8
    leg.append(f'<text x="{lx}" y="{ly}" class="lh">lines and markers</text>')
    ly += 18
    rows = [
        ("dashed: theoretical peak", None),
        ("solid: achievable (spec's benchmark at a full wave)", None),
        (f"circle: ridge vs {ridge_roof['name'] if ridge_roof else 'top roof'}", None),
        ("filled marker: predicted", None),
    ]
    if any(p.kind == MEASURED for p in points):
        rows += [("hollow marker: measured (rocprof)", None), ("arrow: predicted -> measured", None), ("FLOPs in the model's basis (packed x2)", None)]
    for i, om in enumerate(others, 1):
        rows.append((f"dash-dot: {om.arch.key} {om.arch.memory_level} + compute roof", style.arch_color(i)))
    for m in model.memory:
        rows.append((f"{m.name}: {m.theoretical / 1e12:.3g} TB/s" + (f" ({m.achievable / 1e12:.3g} achievable)" if m.achievable else ""), style.LEVEL_COLORS.get(m.name)))
    for text, col in rows:
        leg.append(f'<text x="{lx}" y="{ly}"{f" fill={chr(34)}{col}{chr(34)}" if col else ""}>{html.escape(text)}</text>')
        ly += 16
    return leg


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px; color: #222; }}
h1 {{ font-size: 18px; margin: 0 0 2px 0; }} .sub {{ color: #666; font-size: 12px; margin-bottom: 6px; }}
svg text {{ font-size: 11px; }} .tick {{ fill: #555; }} .axis {{ font-size: 12px; }}
.roof {{ fill: #444; font-size: 10px; }} .lh {{ font-weight: bold; }}
.grid {{ stroke: #ddd; stroke-dasharray: 2,3; }} .frame {{ fill: none; stroke: #999; }}
.pt {{ cursor: pointer; }} .pt:hover > * {{ stroke-width: 3; }} .lg {{ cursor: pointer; }} .off {{ opacity: 0.3; }}
#tip {{ position: fixed; display: none; background: #fff; border: 1px solid #999; border-radius: 4px; padding: 6px 8px;
  font-size: 12px; box-shadow: 0 2px 6px rgba(0,0,0,.2); max-width: 520px; pointer-events: none; }}
#tip b {{ display: inline-block; min-width: 110px; color: #555; font-weight: normal; }}
</style></head><body>
<h1>{title}</h1><div class="sub">{subtitle}</div>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">
{body}
</svg>
<div class="sub">Hover a marker for the case, its times, bound class and time terms. {basis}</div>
<div id="tip"></div>
<script>
const DATA = {data};
const tip = document.getElementById("tip");
function esc(s) {{ return String(s).replace(/[&<>]/g, c => ({{"&": "&amp;", "<": "&lt;", ">": "&gt;"}})[c]); }}
document.querySelectorAll(".pt").forEach(g => {{
  const t = g.querySelector("title"); if (t) t.remove();
  g.addEventListener("mousemove", e => {{
    const d = DATA[+g.dataset.i];
    tip.innerHTML = Object.entries(d).map(([k, v]) => "<b>" + esc(k) + "</b> " + esc(v)).join("<br>");
    tip.style.display = "block";
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 540) + "px";
    tip.style.top = (e.clientY + 14) + "px";
  }});
  g.addEventListener("mouseleave", () => {{ tip.style.display = "none"; }});
}});
document.querySelectorAll(".lg").forEach(g => g.addEventListener("click", () => {{
  g.classList.toggle("off");
  const hide = g.classList.contains("off");
  document.querySelectorAll('.pt[data-bound="' + g.dataset.bound + '"]').forEach(p => p.style.display = hide ? "none" : "");
}}));
</script>
</body></html>
"""


def write_html(path: str, text: str) -> None:
    from perfmodel.output import write_atomic

    write_atomic(path, text)
