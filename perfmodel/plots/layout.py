"""Label placement without overlaps, in display (pixel) coordinates.

matplotlib places text where it is told; these helpers choose where. Ceiling labels are spread
apart along one axis (`spread`); point labels try candidate offsets around their marker and
take the first whose box hits no other label, marker or ceiling label (`place_labels`), with a
leader line when the label sits away from its marker. What cannot be placed cleanly goes into
a numbered key beside the plot.
"""

from __future__ import annotations

from dataclasses import dataclass

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in display pixels


def overlaps(a: Box, b: Box, pad: float = 1.0) -> bool:
    return not (a[2] + pad <= b[0] or b[2] + pad <= a[0] or a[3] + pad <= b[1] or b[3] + pad <= a[1])


def spread(positions: list[float], gap: float) -> list[float]:
    """Move sorted-by-value positions apart so neighbours are at least ``gap`` apart, keeping
    their order and their mean (1-D: the heights of flat roof labels)."""
    if not positions:
        return []
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    ys = [positions[i] for i in order]
    for _ in range(50):
        moved = False
        for i in range(1, len(ys)):
            d = ys[i] - ys[i - 1]
            if d < gap - 1e-9:
                push = (gap - d) / 2
                ys[i - 1] -= push
                ys[i] += push
                moved = True
        if not moved:
            break
    out = [0.0] * len(ys)
    for k, i in enumerate(order):
        out[i] = ys[k]
    return out


def text_box(renderer, text) -> Box:
    bb = text.get_window_extent(renderer)
    return (bb.x0, bb.y0, bb.x1, bb.y1)


@dataclass
class Placement:
    dx: float  # offset of the label's anchor from the marker, in points
    dy: float
    ha: str
    va: str
    leader: bool


# candidate offsets (points): close first, then farther rings with leader lines
_DIRS = [(1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1)]
_RINGS = [5, 14, 26, 40]


def _candidates():
    for r in _RINGS:
        for dx, dy in _DIRS:
            ha = "left" if dx > 0 else ("right" if dx < 0 else "center")
            va = "bottom" if dy > 0 else ("top" if dy < 0 else "center")
            yield Placement(dx * r, dy * r, ha, va, r > _RINGS[0])


def place_labels(ax, items: list[tuple[float, float, str]], obstacles: list[Box], fontsize: float = 7, color="0.15"):
    """Label each (x, y, text) in data coordinates without overlaps where possible.

    Each candidate position is measured as drawn (the text's real extent), so no two placed
    labels overlap each other, a marker, or an obstacle. Returns the indices that could not be
    placed (the caller numbers them in a key).
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    axbox = ax.get_window_extent(renderer)
    placed: list[Box] = list(obstacles)
    marker_boxes = []
    for x, y, _ in items:
        px, py = ax.transData.transform((x, y))
        marker_boxes.append((px - 4, py - 4, px + 4, py + 4))
    failed = []
    for i, (x, y, text) in enumerate(items):
        others = [b for j, b in enumerate(marker_boxes) if j != i]
        done = False
        for c in _candidates():
            t = ax.annotate(text, (x, y), xytext=(c.dx, c.dy), textcoords="offset points", ha=c.ha, va=c.va,
                            fontsize=fontsize, color=color, zorder=6)
            box = text_box(renderer, t)
            inside = box[0] >= axbox.x0 and box[2] <= axbox.x1 and box[1] >= axbox.y0 and box[3] <= axbox.y1
            if inside and not any(overlaps(box, b, 2) for b in placed) and not any(overlaps(box, b, 0) for b in others):
                if c.leader:
                    t.remove()
                    ax.annotate(text, (x, y), xytext=(c.dx, c.dy), textcoords="offset points", ha=c.ha, va=c.va,
                                fontsize=fontsize, color=color, zorder=6,
                                arrowprops={"arrowstyle": "-", "color": "0.55", "lw": 0.6, "shrinkA": 0, "shrinkB": 3})
                placed.append(box)
                done = True
                break
            t.remove()
        if not done:
            failed.append(i)
    return failed


@dataclass
class Segment:
    """A slanted label as its baseline segment and its height (display pixels)."""

    start: tuple[float, float]
    end: tuple[float, float]
    height: float

    def samples(self, n: int = 12):
        (x0, y0), (x1, y1) = self.start, self.end
        # the text's centre line sits half a height above its baseline, normal to it
        dx, dy = x1 - x0, y1 - y0
        norm = max((dx * dx + dy * dy) ** 0.5, 1e-9)
        ox, oy = -dy / norm * self.height / 2, dx / norm * self.height / 2
        return [(x0 + dx * t / (n - 1) + ox, y0 + dy * t / (n - 1) + oy) for t in range(n)]


def seg_hits(seg: Segment, other) -> bool:
    """Whether a slanted label comes within its height of another label (Segment) or of a box
    (a marker or a flat label)."""
    pts = seg.samples()
    if isinstance(other, Segment):
        gap = (seg.height + other.height) / 2
        return any((ax - bx) ** 2 + (ay - by) ** 2 < gap * gap for ax, ay in pts for bx, by in other.samples())
    x0, y0, x1, y1 = other
    r = seg.height / 2
    return any(x0 - r <= px <= x1 + r and y0 - r <= py <= y1 + r for px, py in pts)


def as_boxes(obstacles) -> list[Box]:
    """Boxes for point-label placement: slanted labels become a row of small boxes."""
    out: list[Box] = []
    for o in obstacles:
        if isinstance(o, Segment):
            r = o.height / 2
            out += [(x - r, y - r, x + r, y + r) for x, y in o.samples(16)]
        else:
            out.append(o)
    return out
