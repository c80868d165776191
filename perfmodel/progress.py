"""A progress bar on standard error, shown only when it is a terminal (quiet when piped).

No dependency: one line redrawn with a carriage return at most ten times a second, erased when
the work ends so the output that follows starts on a clean line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


def enabled(stream=None) -> bool:
    s = stream or sys.stderr
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError):
        return False


class Bar:
    """``with Bar("predicting", total=n) as bar: bar.update(k)``; draws nothing when disabled."""

    def __init__(self, label: str, total: int | None = None, stream=None, force: bool | None = None):
        self.label, self.total, self.done = label, total, 0
        self.stream = stream or sys.stderr
        self.on = enabled(self.stream) if force is None else force
        self.start = self.last = time.monotonic()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.on and now - self.last >= 0.1:
            self.last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        el = now - self.start
        if self.total:
            f = min(self.done / self.total, 1.0)
            fill = int(f * 30)
            eta = el / f - el if f > 0 else 0
            line = f"{self.label} [{'#' * fill}{'.' * (30 - fill)}] {self.done:,}/{self.total:,} {el:.0f}s, ~{eta:.0f}s left"
        elif self.done:
            line = f"{self.label} ... {self.done:,} {el:.0f}s"
        else:
            line = f"{self.label} ..."
        self.stream.write("\r" + line[:120])
        self.stream.flush()

    def close(self) -> None:
        if self.on:
            self.stream.write("\r" + " " * 120 + "\r")
            self.stream.flush()

    def __enter__(self) -> Bar:
        if self.on:
            self._draw(time.monotonic())
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(items: Iterable, label: str, total: int | None = None, min_items: int = 0) -> Iterator:
    """Iterate ``items`` with a bar (when stderr is a terminal and there are enough of them)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    if total is not None and total < min_items:
        yield from items
        return
    with Bar(label, total) as bar:
        for x in items:
            yield x
            bar.update()


@contextmanager
def status(label: str):
    """An indeterminate line (``reading trace ...``) for work that cannot count its steps."""
    with Bar(label) as bar:
        yield bar
