"""Predicted vs measured for a torch.profiler trace, weighted by GPU time.

Each GPU kernel is identified, in order, by
1. its launching aten op with shapes -> case (the same rules as the model tracer, `frontend.opmap`);
2. a manifest (``--cases``: kernel-name regex -> case, as for rocprof workloads);
3. its name alone (`names.family`): the family is known but, without shapes, not the case.
Kernels are grouped by (name, case); each group gets calls, measured total and mean, the
prediction per call, efficiency = predicted / measured (1 = at the model's achievable roof) and
the predicted bound: the term that limits the kernel in the model, i.e. where the gap to the
hardware should be looked for, and ``achieved_of_limit``: that term's time over the measured time
less launch (the fraction of the model's achievable rate for that term the kernel reached; a
chrome trace has no counters, so the split of the gap between terms is not measured). Kernels that could not be predicted are listed with their share of
GPU time and the precise reason (no launching op, op recorded without shapes, op without a model,
unknown name).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from perfmodel.errors import InputError
from perfmodel.tables import band_text, in_band_line, shape_text
from perfmodel.traces.chrome import ChromeTrace, prod_dims, read_chrome_trace
from perfmodel.traces.graph_steps import StepMatch
from perfmodel.traces.names import MACRO_TILE, family

ARCH_TOKENS = [
    ("mi355x", r"MI355"), ("mi350x", r"MI350"), ("mi325x", r"MI325"), ("mi308x", r"MI308"), ("mi300a", r"MI300A"),
    ("mi300x", r"MI300"), ("mi250x", r"MI250X"), ("mi250", r"MI250"), ("mi210", r"MI210"), ("mi100", r"MI100"),
    ("h200", r"H200"), ("h100", r"H100"), ("a100", r"A100"),
]


def detect_arch(tr: ChromeTrace) -> tuple[str | None, str]:
    """Arch key from ``deviceProperties`` (name, else gfx major/minor + CU count)."""
    keys, src = recorded_archs(tr)
    return (keys[0] if keys else None), src


def recorded_archs(tr: ChromeTrace) -> tuple[tuple[str, ...], str]:
    """The arch keys the GPU the trace was recorded on fits, and how that was read: one by its
    ``deviceProperties`` name, else every spec with its gfx version and CU count."""
    for d in tr.devices:
        name = str(d.get("name", ""))
        for key, tok in ARCH_TOKENS:
            if re.search(tok, name, re.I):
                return (key,), f"deviceProperties name '{name}'"
    return _by_geometry(tr)


def _by_geometry(tr: ChromeTrace) -> tuple[tuple[str, ...], str]:
    found = []
    for d in tr.devices:  # e.g. an MI250 GCD reporting "AMD Radeon Graphics": match gfx9.0 + CU count
        cus, major, minor = d.get("numSms"), d.get("computeMajor"), d.get("computeMinor")
        if cus is None:
            continue
        from perfmodel.arch import arch_keys, load_arch

        for key in arch_keys():
            a = load_arch(key)
            gfx = a.gfx.replace("gfx", "")
            if a.cus == cus and major is not None and gfx.startswith(f"{major}{minor or 0}") and a.kind != "radeon":
                found.append((key, a.gfx))
        if found:
            also = f"; also matches {', '.join(k for k, _ in found[1:])}: give --arch to choose" if len(found) > 1 else ""
            return tuple(k for k, _ in found), f"deviceProperties {cus} CUs, compute {major}.{minor} ({found[0][1]}){also}"
    return (), "no device name in the trace"


@dataclass
class TraceReport:
    path: str
    arch: str
    arch_source: str
    rows: list[dict]  # one per (kernel name, case), sorted by measured total time
    gpu_time_us: float
    identified_us: float  # kernels with a prediction
    named_us: float  # kernels whose family is known from the name (with or without a case)
    reasons: dict[str, float]  # why not predicted -> GPU time (us)
    notes: list[str] = field(default_factory=list)
    # the GPU the trace was recorded on when the predictions are for another one (--arch): a
    # what-if, where predicted / measured compares two GPUs and is left out
    recorded_on: str | None = None
    top: int | None = 30  # kernel rows a rendered table shows

    def render(self, fmt: str = "table") -> str:
        """The report as ``table``, ``md``, ``csv``, ``json`` or ``jsonl`` text."""
        return render_trace_report(self, fmt, self.top)

    def to_pandas(self):
        """A pandas DataFrame of the kernel rows (needs pandas; perfmodel does not install it)."""
        from perfmodel.tables import to_pandas

        return to_pandas(self.rows)

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.render('table'))}</pre>"

    def __repr__(self) -> str:
        return self.render("table")

    @property
    def identified_share(self) -> float:
        return self.identified_us / self.gpu_time_us if self.gpu_time_us else 0.0

    @property
    def named_share(self) -> float:
        return self.named_us / self.gpu_time_us if self.gpu_time_us else 0.0

    @property
    def predicted_total_us(self) -> float:
        """The model's time for every identified kernel call (each group's prediction x calls)."""
        return sum(r["predicted_us"] * r["calls"] for r in self.rows if r.get("predicted_us") is not None)

    def summary(self) -> dict:
        out = {
            "trace": self.path, "arch": self.arch, "arch_from": self.arch_source, "kernels": sum(r["kernels"] for r in self.rows),
            "gpu_time_us": self.gpu_time_us, "identified_share": self.identified_share, "named_share": self.named_share,
            "identified_us": self.identified_us, "identified_predicted_us": self.predicted_total_us,
            "not_identified": {k: v / self.gpu_time_us for k, v in sorted(self.reasons.items(), key=lambda x: -x[1])} if self.gpu_time_us else {},
        }
        if self.recorded_on is not None:
            out["recorded_on"] = self.recorded_on
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _short(name: str) -> str:
    from perfmodel.validate.identify import short_name

    return short_name(name, 60)


def read_trace(path) -> ChromeTrace:
    """A chrome trace or rocprofv3 JSON (`traces.chrome`), or an RPD database (`traces.rpd`)."""
    from perfmodel.traces.rpd import is_rpd, read_rpd

    return read_rpd(path) if is_rpd(path) else read_chrome_trace(path)


def validate_trace(path, arch: str | None = None, manifest=None, dtype: str = "bf16", step: dict | None = None) -> TraceReport:
    """Read a trace (`read_trace`), identify its kernels, predict them on ``arch`` (default: the
    trace's). ``step``: the model step its graph replays ran (`frontend.analysis.step_cases` keywords:
    model, batch, kv_len, tp, engine), matched by `traces.graph_steps`."""
    from perfmodel.arch import arch_keys
    from perfmodel.prediction import evaluate, normalize_all
    from perfmodel.record import rows as prediction_rows

    tr = read_trace(path)
    recorded, _ = recorded_archs(tr)
    arch, src = _trace_arch(tr, arch, path)
    other = bool(recorded) and arch in arch_keys() and arch not in recorded  # a known GPU the trace was not recorded on
    if not tr.kernels:
        raise InputError("no GPU kernels (cat 'kernel') in this trace; was it recorded with CUDA/HIP activities?", where=str(path))
    man = None
    if manifest:
        from perfmodel.validate.identify import load_manifest

        man = load_manifest(manifest)
    replays = None
    notes = list(tr.notes)
    if step is not None:
        from perfmodel.frontend.analysis import step_cases
        from perfmodel.traces.graph_steps import match_steps

        replays = match_steps(tr, step_cases(**step))
        matched = len(replays.cases)
        what = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in step.items() if k != "model")
        if replays.steps:
            notes.append(f"--model {step['model']} ({what}): {replays.steps} graph replays, {matched} of their {replays.kernels}"
                         f" kernels paired by family and order with the model's {step.get('phase', 'decode')} step (traces/graph_steps.py)")
        else:
            notes.append(f"--model {step['model']}: no graph replays in this trace (kernels of a hipGraphLaunch or"
                         " cudaGraphLaunch call); nothing paired")
    k = _group_kernels(tr, man, dtype, arch, pin=not other, replays=replays)
    preds = evaluate(normalize_all(k.cases, [arch])) if k.cases else []
    pred_rows = prediction_rows(preds)
    rows = []
    identified = 0.0
    total = tr.gpu_time_us
    for (_, key_case, _), g in k.groups.items():
        pred = pred_rows[k.case_index[key_case]] if key_case is not None else None
        row = _report_row(g, pred, total)
        if other and pred is not None:  # measured on one GPU, predicted on another: no like-for-like ratio
            row["efficiency"] = row["achieved_of_limit"] = row["in_band"] = None
        if g["pinned"] is not None:  # the model at the kernel's own tile: does the library's choice explain the gap?
            pinned = preds[k.case_index[_case_key(g["pinned"])]]
            row["kernel_tile"] = g["pinned"]["tile"] + (f" split {g['pinned']['split_k']}" if g["pinned"]["split_k"] > 1 else "")
            row["at_kernel_tile_us"] = pinned.time_us
        rows.append(row)
        if pred is not None:
            identified += g["measured_total_us"]
    rows.sort(key=lambda r: -r["measured_total_us"])
    rep = TraceReport(path=str(path), arch=arch, arch_source=src, rows=rows, gpu_time_us=total, identified_us=identified,
                      named_us=k.named_us, reasons=k.reasons, recorded_on=recorded[0] if other else None, notes=notes)
    return rep


def _trace_arch(tr, arch: str | None, path) -> tuple[str, str]:
    """The arch to predict on and where it came from: --arch, else what the trace says."""
    src = "--arch"
    if arch is None:
        arch, src = detect_arch(tr)
        if arch is None:
            raise InputError(f"cannot tell the GPU ({src}); give --arch", where=str(path), key="--arch")
    return arch, src


@dataclass
class _Grouped:
    """The trace's kernels grouped by (name, case, op), and the distinct cases to predict once each."""

    groups: dict[tuple, dict] = field(default_factory=dict)
    reasons: dict[str, float] = field(default_factory=dict)  # why not identified -> measured us
    cases: list[dict] = field(default_factory=list)
    case_index: dict[tuple, int] = field(default_factory=dict)
    named_us: float = 0.0  # time in kernels with a known family or a case


def _case_problem(case: dict, arch: str, seen: dict) -> str | None:
    """Why a case from a trace is not a valid case (a zero or negative size in the recorded
    shapes, say), or None: such a kernel is listed with the reason, the others still predicted."""
    from perfmodel.cases import normalize_all

    key = _case_key(case)
    if key not in seen:
        try:
            normalize_all([case], [arch])
            seen[key] = None
        except InputError as e:
            seen[key] = f"case not valid: {e.key + ': ' if e.key else ''}{e.detail}"
    return seen[key]


def _group_kernels(tr, man, dtype: str, arch: str, pin: bool = True, replays: StepMatch | None = None) -> _Grouped:
    """Each kernel's case (or why none), summed into its group.

    An op call that launches several kernels (MIOpen's convolution: layout transposes around
    its implicit GEMM; a batch norm's statistics and transform kernels) is one prediction of the
    whole op, so its kernels count as one call of the group of its longest kernel, with their
    durations summed (as validation/extract_traces.py measures an op): comparing each kernel
    with the whole op's prediction would time a transpose against the convolution. ``pin``:
    also time each hipBLASLt kernel at its own tile (`_at_kernel_tile`) and each PyTorch NCHW
    batch norm at the workgroup size its per-channel kernel was launched with; not in a what-if,
    where those are the recorded GPU's library's choices, not ones the other GPU would run."""
    out = _Grouped()
    found = []
    call_kernels: dict[tuple, list[int]] = {}  # op call whose op has a case -> its kernels
    call_of: dict[int, tuple] = {}  # kernel -> its op call (an External id, or a replay's matched op)
    seen: dict = {}
    blocks = _per_channel_blocks(tr) if pin else {}  # the recorded build's choice: not in a what-if
    per_op = Counter(k.ext_id for k in tr.kernels if k.ext_id is not None)  # kernels each op call launched
    for ki, k in enumerate(tr.kernels):
        case, why, op = _kernel_case(tr, k, dtype)
        if case is not None and case.get("layout") == "nchw" and k.ext_id in blocks:
            case = {**case, "block": blocks[k.ext_id]}  # the batch norm's workgroups, as launched
        if pin and case is not None and per_op.get(k.ext_id) == 1:  # a one-kernel op: its launch is the case's
            case = _pinned_row_launch(case, k)
        if case is not None and k.ext_id is not None and op is not None:  # the op's own case, not a manifest's
            call_of[ki] = ("op", k.ext_id)
        if case is None and replays is not None:
            if ki in replays.cases:
                (case, op), why = replays.cases[ki], None
                call_of[ki] = replays.calls[ki]
            elif ki in replays.unmatched:
                why = replays.unmatched[ki]
        if ki in call_of:
            call_kernels.setdefault(call_of[ki], []).append(ki)
        if case is None and man is not None:
            mc = _manifest_case(man, k, ki)
            if mc is not None:
                case, why = mc, None
        if case is not None and (problem := _case_problem(case, arch, seen)) is not None:
            case, why = None, f"{op or 'manifest'}: {problem}"
        found.append((case, why, op))
    for ki, k in enumerate(tr.kernels):
        case, why, op = found[ki]
        dur, n = k.dur_us, 1
        members = call_kernels.get(call_of[ki]) if ki in call_of else None
        if members and len(members) > 1 and ki in members:
            main = max(members, key=lambda i: tr.kernels[i].dur_us)
            if ki != main:
                continue  # counted with the call's longest kernel
            dur, n = sum(tr.kernels[i].dur_us for i in members), len(members)
        fam, detail = family(k.name)
        if fam is not None or case is not None:
            out.named_us += dur
        reason = None
        if case is None:
            reason = _reason_label(why or f"op {op}: no case")
            out.reasons[reason] = out.reasons.get(reason, 0.0) + dur
        key_case = _case_key(case) if case else None
        g = out.groups.setdefault((k.name, key_case, op), {
            "kernel_name": _short(k.name), "family": fam or "-", "op": op or "-", "case": case, "calls": 0,
            "measured_total_us": 0.0, "detail": detail, "reason": None if case else out.reasons and reason,
            "pinned": _at_kernel_tile(k, case) if pin else None, "kernels_per_call": 1, "kernels": 0})
        g["calls"] += 1
        g["kernels"] += n
        g["measured_total_us"] += dur
        g["kernels_per_call"] = max(g["kernels_per_call"], n)
        for c in (case, g["pinned"]):
            key = _case_key(c) if c else None
            if c is not None and key not in out.case_index:
                out.case_index[key] = len(out.cases)
                out.cases.append(c)
    return out


def _pinned_row_launch(case: dict, k) -> dict:
    """A row kernel's case (softmax, layernorm, rmsnorm) pinned to its recorded launch: its
    workgroup size and rows per workgroup (one workgroup per row: PyTorch's LayerNorm, AITER's
    per-head RMSNorm), which the workgroup launch rate then times; not in a what-if, where the
    launch is the recorded build's choice."""
    from perfmodel.models.streaming_common import ROW_FAMILIES, pinned_row_geometry

    if case.get("kernel") not in ROW_FAMILIES or "rows_per_workgroup" in case or not k.workitems or not k.block:
        return case
    lanes = prod_dims(k.block)
    return {**case, **pinned_row_geometry(float(case["rows"]), lanes, k.workitems // lanes)}


def _per_channel_blocks(tr) -> dict:
    """Op call (External id) -> the workgroup size its PyTorch per-channel batch-norm kernel was
    launched with (`batchnorm`'s ``block``: a build's MAX_BLOCK_SIZE), where the trace records it."""
    from perfmodel.models.batchnorm import PER_CHANNEL_KERNELS

    return {k.ext_id: prod_dims(k.block) for k in tr.kernels
            if k.ext_id is not None and k.block and any(p in k.name for p in PER_CHANNEL_KERNELS)}


def _case_key(case: dict) -> tuple:
    """A case as a hashable key: the groups' and the predictions' index."""
    return tuple(sorted((a, str(b)) for a, b in case.items()))


def _at_kernel_tile(k, case: dict | None) -> dict | None:
    """The GEMM case pinned to the configuration a hipBLASLt/Tensile kernel ran: its name's
    ``MT{a}x{b}x{d}`` is ``tile={b}x{a}x{d}`` in PyTorch's m x n (BLAS is column-major; see
    docs/models-tiled.md), its split-K the workgroups over the tiles. None where the launch's
    workgroup count is not a whole multiple of those tiles (the reading is not confirmed)."""
    if not case or case.get("kernel") != "gemm" or not k.name.startswith("Cijk_") or not k.workitems or not k.block:
        return None
    mt = MACRO_TILE.search(k.name)
    if mt is None:
        return None
    a, b, d = (int(v) for v in mt.groups())
    m, n, batch = int(case["m"]), int(case["n"]), int(case.get("batch", 1))
    tiles = -(-m // b) * -(-n // a) * batch
    wgs, rest = divmod(k.workitems, prod_dims(k.block))
    if rest or not wgs or wgs % tiles:
        return None
    return {**case, "tile": f"{b}x{a}x{d}", "split_k": wgs // tiles}


def _kernel_case(tr, k, dtype: str) -> tuple[dict | None, str | None, str | None]:
    """(case, why not, launching op) of one kernel from the host op that launched it."""
    from perfmodel.frontend.opmap import NO_KERNEL, to_case

    case, why, op = None, None, None
    if not tr.has_ops:
        why = f"{tr.format} without host ops: kernel names only, no shapes"
    elif k.ext_id is None and k.correlation is not None and k.correlation in tr.graph_launches:
        why = "graph replay (hipGraphLaunch/cudaGraphLaunch: no op, no shapes); name the step with --model, --batch, --kv-len"
    elif k.ext_id is None:
        why = "no External id: launched before the profiling window or replayed from a HIP/CUDA graph"
    elif k.ext_id not in tr.op_names:
        why = "External id with no cpu_op (library-internal launch)"
    else:
        op = tr.op_names[k.ext_id]
        rec = tr.ops.get(k.ext_id)
        if rec is None:
            why = f"launching op {op} recorded without shapes"
        else:
            case, why = to_case(rec, dtype)
            if why == NO_KERNEL:
                why = f"op {op} maps to no kernel"
    return case, why, op


def _reason_label(reason: str) -> str:
    """A why-not shortened to a label that many kernels share (op name without its shapes)."""
    if ": no kernel model" in reason:
        reason = f"op without a model: {reason.split(':')[0]}::{reason.split('::')[1].split(':')[0]}" if "::" in reason else reason
    if reason.endswith(")") and "(" in reason and "shapes not understood" not in reason:
        reason = reason.split(" (")[0]
    return reason


def _report_row(g: dict, p: dict | None, total: float) -> dict:
    """One report row: the group's measurement and, when identified, its prediction ``p``."""
    row = {"kernel_name": g["kernel_name"], "family": g["family"], "op": g["op"], "calls": g["calls"],
           "measured_total_us": g["measured_total_us"], "share": g["measured_total_us"] / total if total else 0.0,
           "measured_us": g["measured_total_us"] / g["calls"], "kernels": g["kernels"], "kernels_per_call": g["kernels_per_call"]}
    if p is not None:
        lo, hi = p["time_band_us"]
        row.update({"kernel": p["kernel"], "dtype": p["dtype"], "shape": p["shape"], "predicted_us": p["time_us"],
                    "likely_us": [lo, hi], "in_band": lo <= row["measured_us"] <= hi,
                    "efficiency": p["time_us"] / row["measured_us"] if row["measured_us"] > 0 else None,
                    "bound": p["bound"], "terms_us": p["terms_us"]})
        if p.get("notes"):  # what the model assumed or knows of the kernel (a collective's skew, an off cell)
            row["notes"] = p["notes"]
        # the limiting term of the model and the fraction of its rate the measurement implies
        body = {t: v for t, v in p["terms_us"].items() if t != "launch"}
        if body and row["measured_us"] > 0:
            term = max(body, key=body.get)
            launch = p["terms_us"].get("launch", 0.0)
            row["limit_term"] = term
            row["achieved_of_limit"] = body[term] / max(row["measured_us"] - launch, 1e-9)
    else:
        row.update({"kernel": None, "predicted_us": None, "efficiency": None, "bound": None, "why": g["reason"] or g["detail"]})
        if g["detail"]:
            row["detail"] = g["detail"]
    return row


def _manifest_case(man, k, index: int) -> dict | None:
    """The manifest's case for a kernel (``dispatch:`` counts kernels in trace order; ``{grid}``
    is work-items, `chrome.Kernel.workitems`, where the trace records the launch geometry)."""
    from perfmodel.readers.records import Dispatch

    d = Dispatch(index=index, kernel=k.name, grid=k.workitems or 0, workgroup=prod_dims(k.block or (0, 0, 0)))
    return man.case_for(d)


def render_trace_report(rep: TraceReport, fmt: str = "table", top: int | None = 30) -> str:
    from perfmodel.output import render

    s = rep.summary()
    if fmt in ("json",):
        return render([{"summary": s, "kernels": rep.rows}], "json").strip()[1:-1].strip() + "\n"
    if fmt == "jsonl":
        return render(rep.rows, "jsonl")
    cols = ["kernel_name", "family", "op", "calls", "measured_total_us", "share", "measured_us", "predicted_us", "likely_us", "efficiency",
            "bound", "achieved_of_limit", "shape", "why"]
    if any("at_kernel_tile_us" in r for r in rep.rows):
        cols[cols.index("bound"):cols.index("bound")] = ["kernel_tile", "at_kernel_tile_us"]
    rows = []
    for r in rep.rows[: top or None]:
        t = {c: r.get(c) for c in cols}
        if r.get("kernels_per_call", 1) > 1:  # an op call of several kernels, timed as one (`_group_kernels`)
            t["kernel_name"] = f"{t['kernel_name']} +{r['kernels_per_call'] - 1} more"
        if isinstance(t.get("shape"), dict):
            t["shape"] = shape_text(t["shape"], r.get("kernel"))
        t["likely_us"] = band_text(r.get("likely_us"))
        rows.append(t)
    if fmt == "csv":  # every row, not only the top ones; shapes and bands as their table text
        return render([{c: r.get(c) for c in cols} | {"shape": shape_text(r["shape"], r.get("kernel")) if isinstance(r.get("shape"), dict) else r.get("shape"),
                                                      "likely_us": band_text(r.get("likely_us"))} for r in rep.rows], "csv", columns=cols)
    head = (f"{rep.path}\narch {rep.arch} ({rep.arch_source}); {s['kernels']} kernels, {rep.gpu_time_us:,.1f} us of GPU time; "
            f"predicted (identified with a case): {rep.identified_share:.1%}; family known from the name: {rep.named_share:.1%}\n")
    if rep.identified_us > 0:
        where = f" on {rep.recorded_on}" if rep.recorded_on else ""
        head += (f"identified kernels: {rep.identified_us:,.1f} us measured{where}, {rep.predicted_total_us:,.1f} us predicted on "
                 f"{rep.arch} (x {rep.predicted_total_us / rep.identified_us:.3g})\n")
    band = in_band_line(rep.rows, "measured_total_us", "likely_us")
    if band:
        head += band + "\n"
    for n in rep.notes:
        head += f"note: {n}\n"
    if rep.recorded_on:
        head += (f"note: recorded on {rep.recorded_on}, predicted on {rep.arch}: efficiency, achieved_of_limit and the band "
                 "comparison would compare two GPUs and are left out\n")
    text = head + "\n" + render(rows, fmt, columns=cols, title=f"kernels by total time (top {min(len(rep.rows), top or len(rep.rows))} of {len(rep.rows)})")
    fam: dict[str, dict] = {}
    for r in rep.rows:
        f = fam.setdefault(r["family"], {"family": r["family"], "kernels": 0, "share": 0.0, "predicted_share": 0.0})
        f["kernels"] += r["kernels"]
        f["share"] += r["share"]
        if r.get("predicted_us") is not None:
            f["predicted_share"] += r["share"]
    text += "\n" + render(sorted(fam.values(), key=lambda f: -f["share"]), fmt, title="GPU time by kernel family")
    if rep.reasons:
        why = [{"why not predicted": k, "share": v / rep.gpu_time_us, "time_us": v} for k, v in sorted(rep.reasons.items(), key=lambda x: -x[1])]
        text += "\n" + render(why, fmt, title="unidentified GPU time")
    return text
