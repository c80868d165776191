"""Per-kernel sums of `perfmodel validate`'s default view, built while reading: nothing is kept
per dispatch. Dispatches come one at a time (`KernelSums.add`, every reader) or a chunk of
kernel-trace rows at a time (`KernelSums.add_trace_rows`, the columnar trace path); both give
the same sums, added in the same order, so the output is byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfmodel.arch import Arch
from perfmodel.counters.aggregate import Aggregator
from perfmodel.counters.measurement import Measurement
from perfmodel.prediction import Prediction, predict_on
from perfmodel.readers.records import Dispatch
from perfmodel.validate.identify import Manifest, identify, short_name


@dataclass
class KernelSum:
    """One kernel of a workload, summed over its dispatches: the measurement (ratio of sums),
    how its first dispatch was identified, its dispatch count, how many were identified, and
    the run-length list of their predictions."""

    measurement: Measurement
    first: tuple[dict | None, str]
    dispatches: int
    identified: int
    runs: list[list]


def case_key(case: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in case.items()))


class KernelSums:
    """The per-kernel state: an `Aggregator` of the measurements and, per kernel, the
    identification of its first dispatch, its dispatch and identified counts and the runs of
    its predictions (one prediction per distinct case, made at the first dispatch of that case)."""

    def __init__(self, arch: Arch, manifest: Manifest | None):
        self.arch = arch
        self.manifest = manifest
        self.agg = Aggregator()
        self.cache: dict[tuple, Prediction] = {}
        # kernel -> [ident of its first dispatch, dispatches, identified, runs of [prediction, n]]
        self.per: dict[str, list] = {}
        self.time_sources: set[str] = set()
        self.n = 0  # dispatches so far: the ordinal a new prediction is made with

    def identify(self, d: Dispatch, i: int) -> tuple[dict | None, str, Prediction | None]:
        """(case, how, prediction) of dispatch ``d`` (the ``i``-th of the workload)."""
        case, how = identify(d, self.manifest)
        pred = None
        if case is not None:
            k = case_key(case)
            pred = self.cache.get(k)
            if pred is None:
                pred = self.cache[k] = predict_on(
                    case, self.arch, i, source=f"dispatch {d.index} ({short_name(d.kernel)})"
                )
        return case, how, pred

    def add(self, d: Dispatch, m: Measurement) -> None:
        """One dispatch and its measurement."""
        i = self.n
        self.n += 1
        self.time_sources.add(d.time_source)
        self.agg.add(m)
        case, how, pred = self.identify(d, i)
        st = self._kernel(m.kernel, (case, how))
        st[1] += 1
        if pred is not None:
            st[2] += 1
            self._run(st[3], pred, 1)

    def _kernel(self, kernel: str, first: tuple[dict | None, str]) -> list:
        st = self.per.get(kernel)
        if st is None:
            st = self.per[kernel] = [first, 0, 0, []]
        return st

    @staticmethod
    def _run(runs: list[list], pred: Prediction, n: int) -> None:
        if runs and runs[-1][0] is pred:
            runs[-1][1] += n
        else:
            runs.append([pred, n])

    def add_trace_rows(
        self,
        kernels: list[str],
        kernel: np.ndarray,
        pred: np.ndarray,
        preds: list[Prediction],
        idents: list[tuple[dict | None, str]],
        ident: np.ndarray,
        index: np.ndarray,
        times: np.ndarray,
        timed: np.ndarray,
        row_flags: dict[int, list[str]],
        template: Measurement,
    ) -> None:
        """A chunk of kernel-trace rows, as if each was `add`-ed in order. Per row: ``kernel``
        (into ``kernels``), ``pred`` (into ``preds``, -1: none), ``ident`` (into ``idents``),
        ``index`` (Dispatch_ID), ``times`` (s) where ``timed``; ``row_flags``: the timestamp
        flags of the untimed rows by row. ``template``: what every row's measurement shares
        (gfx, source, time source, the formula notes)."""
        n = len(kernel)
        if not n:
            return
        self.time_sources.add(template.time_source)
        order = np.argsort(kernel, kind="stable")
        ks = kernel[order]
        bounds = np.flatnonzero(np.diff(ks)) + 1
        starts = np.concatenate(([0], bounds))
        stops = np.concatenate((bounds, [n]))
        groups = sorted(zip(order[starts].tolist(), starts.tolist(), stops.tolist(), strict=True))  # by first row
        for first_row, a, b in groups:
            rows = order[a:b]
            name = kernels[int(kernel[first_row])]
            m = Measurement(
                kernel=name,
                dispatch=int(index[first_row]),
                gfx=template.gfx,
                source=template.source,
                time_source=template.time_source,
                flags=list(template.flags),
                notes=list(template.notes),
            )
            t = timed[rows]
            flags: set[str] = set()
            for r in rows[~t].tolist():
                flags.update(row_flags.get(r, ()))
            self.agg.add_timed_only(m, times[rows[t]], int((~t).sum()), flags)
            st = self._kernel(name, idents[int(ident[first_row])])
            st[1] += len(rows)
            p = pred[rows]
            p = p[p >= 0]
            st[2] += len(p)
            if len(p):
                change = np.flatnonzero(np.diff(p)) + 1
                run_starts = np.concatenate(([0], change))
                run_lens = np.diff(np.concatenate((run_starts, [len(p)])))
                for s, c in zip(p[run_starts].tolist(), run_lens.tolist(), strict=True):
                    self._run(st[3], preds[s], c)
        self.n += n

    def result(self) -> tuple[list[KernelSum], set[str]]:
        return [KernelSum(m, *self.per[m.kernel]) for m in self.agg.result()], self.time_sources
