"""Rows for `perfmodel validate`: one per kernel (ratio of sums) or per dispatch.

Every row carries the measured contract fields of `Measurement.as_row` (kernel, dispatch,
time_us, flops, flops_by, bytes, bytes_read, bytes_write, measured_bound, ...) plus the
arithmetic intensity per level and the achieved rate against each ceiling; an identified
kernel adds its case, the predicted values (predicted_time_us, bound, predicted_flops,
predicted_bytes, ...) and the residuals of `compare`. Tables of these rows are presentation:
`perfmodel.tables`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.arch import Arch
from perfmodel.errors import InputError
from perfmodel.prediction import Prediction, predict_on
from perfmodel.readers import csvio
from perfmodel.readers.rocprof_v3 import Restart
from perfmodel.validate import columnar
from perfmodel.validate.compare import compare
from perfmodel.validate.identify import Manifest, compile_regex, identify, load_manifest, short_name
from perfmodel.validate.sums import KernelSum, KernelSums, case_key
from perfmodel.validate.workload_arch import pick_arch


@dataclass
class Validation:
    path: str
    arch: Arch
    rows: list[dict]
    per_dispatch: bool
    notes: list[str] = field(default_factory=list)
    # per kernel, before --kernel/--top: the sums the rows come from, so several workloads'
    # rows can be merged by the same ratio of sums (`perfmodel.validate.many`); None per dispatch
    kernel_sums: list[KernelSum] | None = field(default=None, repr=False)

    def render(self, fmt: str = "table") -> str:
        """The validation as ``table``, ``md``, ``csv``, ``json`` or ``jsonl`` text."""
        from perfmodel.tables import render_validation

        return render_validation(self, fmt)

    def to_pandas(self):
        """A pandas DataFrame of the rows (needs pandas; perfmodel does not install it)."""
        from perfmodel.tables import to_pandas

        return to_pandas(self.rows)

    def _repr_html_(self) -> str:
        from perfmodel.tables import validation_html

        return validation_html(self)

    def __repr__(self) -> str:
        return self.render("table")


def _open(path: str):
    """The workload at ``path``, read; one line naming the path when there is none."""
    from perfmodel.readers import read_workload

    p = Path(path)
    if not p.exists():
        raise InputError("no such file or directory", where=str(path))
    if p.is_dir() and not any(p.iterdir()):
        raise InputError(
            "empty directory; expected rocprof output (pmc_perf.csv, *_counter_collection.csv, ...)",
            where=str(path),
        )
    wl = read_workload(path)
    if not wl.dispatches:
        raise InputError("no kernel dispatches in the file", where=str(path))
    return wl


def _predict_dispatches(wl, arch: Arch, man: Manifest | None) -> tuple[dict, dict]:
    """Identify every dispatch and predict its case (identical cases once): (ident, preds)."""
    cache: dict[tuple, Prediction] = {}
    ident: dict[int, tuple[dict | None, str]] = {}
    preds: dict[int, Prediction | None] = {}
    for i, d in enumerate(wl.dispatches):
        case, how = identify(d, man)
        ident[i] = (case, how)
        if case is None:
            preds[i] = None
            continue
        k = case_key(case)
        if k not in cache:
            cache[k] = predict_on(case, arch, i, source=f"dispatch {d.index} ({short_name(d.kernel)})")
        preds[i] = cache[k]
    return ident, preds


def validate(
    path: str,
    arch: str | Arch | None = None,
    manifest: str | Manifest | None = None,
    per_dispatch: bool = False,
    sclk_mhz: float | None = None,
    cus: int | None = None,
    kernel_filter: str | None = None,
    top: int | None = None,
    model: dict | None = None,
) -> Validation:
    """Read a workload, derive measurements, identify kernels, predict them and compare. A
    torch.profiler chrome trace (or a rocprofv3 kernel-trace JSON, or an RPD database) gives its
    `TraceReport` instead, as `perfmodel validate TRACE` prints it; ``model`` names the decode
    step its graph replays ran (``{"model": "qwen3-8b", "batch": 32, "kv_len": 1024}``, plus
    ``tp``, ``engine``, ``phase`` and ``tokens``), as ``--model`` does."""
    from perfmodel import traces
    from perfmodel.counters import derive_workload
    from perfmodel.errors import InputError

    if traces.detect(path):
        traces.refuse_options(path, per_dispatch=per_dispatch, sclk_mhz=sclk_mhz, cus=cus, kernel_filter=kernel_filter)
        step = None
        if model is not None:
            from perfmodel.traces.graph_steps import step_spec

            step = step_spec(model)
        rep = traces.validate_trace(path, arch=arch.key if isinstance(arch, Arch) else arch, manifest=manifest, step=step)
        rep.top = top or rep.top
        return rep
    if model is not None:
        raise InputError("only for a trace with graph-replayed steps, not a rocprof workload", where=str(path), key="model")

    man, wl, a, notes, ach, peak, flt, target = prepare(path, arch, manifest, sclk_mhz, cus, kernel_filter)
    rows: list[dict] = []
    time_sources: set[str] = set()
    sums = None
    occupancy = None  # read from the traces by _attach_occupancy unless the columnar path counted it
    if per_dispatch:
        if hasattr(wl.dispatches, "materialize"):
            wl.dispatches = wl.dispatches.materialize()
        ms = derive_workload(wl, target, peaks=peak)
        ident, preds = _predict_dispatches(wl, a, man)
        for i, m in enumerate(ms):
            rows.append(_row(m, [preds[i]] if preds[i] else [], ident[i], a, ach, peak))
        time_sources = {d.time_source for d in wl.dispatches}
    else:
        fast = columnar.trace_sums(wl, path, target, a, man, peak) if columnar.trace_paths(wl) else None
        if fast is not None:  # a kernel trace, a chunk of rows at a time (same sums, same order)
            sums, time_sources, occupancy = fast
        else:
            try:
                sums, time_sources = _kernel_sums(wl, target, a, man, peak)
            except Restart:  # a counter file that could not be streamed: now read whole, go again
                sums, time_sources = _kernel_sums(wl, target, a, man, peak)
        rows = [kernel_row(k, a, ach, peak) for k in sums]
    rows = select(rows, flt, top)
    notes += [n for n in wl.notes if n]
    notes += _attach_occupancy(rows, path, a, occupancy)
    inflated = sorted({s for s in time_sources if _counter_pass_timing(s)})
    if inflated:
        notes.append(
            "no counter-free timing: durations come from counter-collection passes, which counter overhead"
            f" inflates ({'; '.join(inflated)[:200]})"
        )
    return Validation(str(path), a, rows, per_dispatch, notes, kernel_sums=sums)


def prepare(path: str, arch, manifest, sclk_mhz: float | None, cus: int | None, kernel_filter: str | None):
    """What every validation starts from: (manifest, workload read, Arch, notes, achievable and
    peak rates, compiled --kernel regex or None, gfx target override or None)."""
    from perfmodel.rates import achievable_rates

    man = load_manifest(manifest) if isinstance(manifest, (str, Path)) else manifest
    wl = _open(path)
    a, notes = pick_arch(wl, arch, sclk_mhz, cus)
    ach, peak = achievable_rates(a)
    if not wl.sysinfo.get("max_sclk_mhz"):  # so a clock above the chip's maximum is still flagged
        wl.sysinfo["max_sclk_mhz_archspec"] = a.clock_hz / 1e6
    flt = compile_regex(kernel_filter, None, "--kernel") if kernel_filter else None
    target = None if wl.gfx else a.gfx
    return man, wl, a, notes, ach, peak, flt, target


def select(rows: list[dict], flt, top: int | None) -> list[dict]:
    """The rows whose kernel matches ``flt`` (a compiled regex), then the ``top`` longest, in
    their original order."""
    if flt is not None:
        rows = [r for r in rows if flt.search(r["kernel"])]
    if top:
        keep = sorted(rows, key=lambda r: -(r["time_us"] or 0))[:top]
        ids = {id(r) for r in keep}
        rows = [r for r in rows if id(r) in ids]
    return rows


def _kernel_sums(wl, target, a: Arch, man, peak: dict) -> tuple[list[KernelSum], set[str]]:
    """Per-kernel sums, aggregated while reading: nothing is kept per dispatch."""
    from perfmodel.counters.derive import iter_derive

    sums = KernelSums(a, man)
    for d, m in iter_derive(wl, target, peaks=peak):
        sums.add(d, m)
    return sums.result()


def kernel_row(k: KernelSum, a: Arch, ach: dict, peak: dict) -> dict:
    """The row of one kernel's sums: a prediction only when every dispatch was identified."""
    ok = k.identified == k.dispatches
    r = _row(k.measurement, [(p, c) for p, c in k.runs] if ok else [], k.first, a, ach, peak)
    if not ok and k.identified:
        r["notes"].append(f"{k.identified} of {k.dispatches} dispatches identified: no prediction for the kernel")
    return r


def _counter_pass_timing(source: str) -> bool:
    """Whether a dispatch's duration was taken from a counter-collection pass."""
    return any(s in source for s in ("counter pass", "same pass as the counters"))


def _row(m, preds: list[Prediction], ident: tuple[dict | None, str], arch: Arch, ach: dict, peak: dict) -> dict:
    # the 32-bit integer counter against the full-rate int32 peak: integer kernels can be compute-bound
    int32 = arch.peak_iops("valu", "int32")
    r = m.as_row({**ach, "valu:int32": int32} if int32 else ach)
    r["name"] = short_name(m.kernel)
    r["arch"] = arch.key
    total = m.total_flops
    if not m.flops:  # no FLOP counter measured: no FLOP total, no intensity (not zero)
        r["flops"] = None
    r["ai"] = {lv: (total / b if b > 0 and m.flops else None) for lv, b in m.bytes.items()}
    achieved: dict[str, float] = {}
    if m.time_s:
        achieved.update({lv: b / m.time_s for lv, b in m.bytes.items()})
        achieved.update({k: f / m.time_s for k, f in m.flops.items() if f})
    r["achieved"] = achieved
    r["pct_of_peak"] = {k: v / peak[k] for k, v in achieved.items() if peak.get(k)}
    r["pct_of_ceiling"] = {k: v / ach[k] for k, v in achieved.items() if ach.get(k)}
    r["iops_by"] = dict(m.iops)
    _case, how = ident
    r["identified"] = how or None
    if preds:
        # a list of predictions (one per dispatch) or of (prediction, repeats) runs
        pred = Prediction.combine_runs(preds) if isinstance(preds[0], tuple) else Prediction.combine(preds)
        r["case"] = pred.case
        r["predicted_time_us"] = pred.time_us
        r["bound"] = pred.bound
        r["predicted_flops"] = pred.flops
        r["predicted_flops_by"] = pred.flops_by
        r["predicted_bytes"] = pred.bytes
        r["predicted_terms_us"] = pred.terms_us
        r.update(compare(m, pred, arch))
        if pred.notes:
            r["model_notes"] = pred.notes
    return r


def _attach_occupancy(rows: list[dict], path, arch: Arch, found=None) -> list[str]:
    """The occupancy each measured kernel really had, from the register, LDS and scratch
    columns of rocprofv3 kernel traces (same rules as `perfmodel kernel inspect`): an
    ``occupancy`` field per row whose kernel is in a trace. ``found``: the rows (or the error)
    the columnar trace path counted while reading; None: read the traces here. Returns notes."""
    by_kernel, notes = occupancy_by_kernel(path, arch, found)
    for r in rows:
        attach_occupancy(r, by_kernel)
    return notes


def attach_occupancy(row: dict, by_kernel: dict[str, list[dict]]) -> None:
    occ = by_kernel.get(row["kernel"])
    if occ:
        row["occupancy"] = occ[0] if len(occ) == 1 else occ


def occupancy_by_kernel(path, arch: Arch, found=None) -> tuple[dict[str, list[dict]], list[str]]:
    """Occupancy entries per kernel name (see `_attach_occupancy`) and notes."""
    from perfmodel.inspect.trace_occupancy import kernel_occupancy, validate_traces

    p = Path(path)
    if not validate_traces(p):
        return {}, []
    try:
        if isinstance(found, InputError):
            raise found
        if found is None:
            found = kernel_occupancy(p, arch)
    except InputError as e:
        return {}, [f"occupancy not reported: {e}"]
    by_kernel: dict[str, list[dict]] = {}
    for o in found:
        # the name as the validate rows spell it (" [clone .kd]" and ".kd" dropped)
        by_kernel.setdefault(csvio.clean_kernel(o["kernel"]), []).append(
            {k: o[k] for k in ("vgpr", "agpr", "sgpr", "lds", "scratch", "workgroup_size", "waves_per_simd", "limiter", "dispatches")}
        )
    return by_kernel, []
