"""The join: a `Measurement` (rocprof) beside the prediction for the identified case.

For every identified kernel (or dispatch) the comparison gives the residual term by term -
FLOPs per ``pipe:dtype``, bytes per level, time - and one sentence naming the term that
explains most of the time difference. The sentence comes from splitting the difference in two:

- *amounts*: re-time the prediction with the measured FLOPs and bytes, each at the rate the
  estimator used for that term (``amount-implied time``); the change is what wrong amounts
  explain ("HBM bytes 2.1x the model: the memory:hbm term explains most of the difference");
- *rates*: the rest is the binding term running faster or slower than the ceiling the model
  assumed ("compute:valu:fp32 ran at 91% of the rate the model assumed").

Counter conventions that are not model errors are applied before comparing and said in words:
packed VALU instructions (``v_pk_fma_*``, e.g. mixbench's half2/float2) count once in
``SQ_INSTS_VALU_FMA_*`` although they do two FMAs per lane, so the counters see half the FLOPs.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping

from perfmodel.arch import Arch, arch_keys, load_arch
from perfmodel.counters.measurement import Measurement
from perfmodel.errors import InputError

# a byte or FLOP count within this fraction of the model counts as agreeing
TOLERANCE = 0.05


# --- the arch of a workload ---------------------------------------------------------------
def pick_arch(
    wl, arch: str | Arch | None = None, sclk_mhz: float | None = None, cus: int | None = None
) -> tuple[Arch, list[str]]:
    """The Arch for a workload: ``arch`` when given, else from sysinfo (gfx, model name, CUs).

    ``sclk_mhz`` / ``cus`` override the spec's peak clock and CU count (a copy; the shipped
    spec is untouched).
    """
    notes: list[str] = []
    if arch is not None:
        a = load_arch(arch)
    else:
        gfx = (wl.gfx or "").lower()
        if not gfx:
            raise InputError(
                "no sysinfo.csv or agent info to tell the GPU; pass --arch KEY", where=wl.path, key="arch"
            )
        cands = [load_arch(k) for k in arch_keys()]
        cands = [c for c in cands if c.gfx.lower() == gfx]
        if not cands:
            raise InputError(f"no archspec for {gfx}; pass --arch KEY", where=wl.path, key="arch")
        model = str(wl.sysinfo.get("gpu_model") or "").lower().replace("_", "").replace("-", "")
        cu = wl.sysinfo.get("cu")

        def score(c: Arch) -> tuple:
            return (
                c.key in model,
                bool(model) and c.key.startswith(model[: len(c.key) - 1]) and model[:2] == c.key[:2],
                cu is not None and int(cu) == c.cus,
                -len(c.key),
            )

        a = max(sorted(cands, key=lambda c: c.key), key=score)
        notes.append(
            f"arch {a.key} from sysinfo ({gfx}, {wl.sysinfo.get('gpu_model') or '?'}, {int(cu) if cu else '?'} CUs); --arch overrides"
        )
    if sclk_mhz or cus:
        a = copy.copy(a)
        if sclk_mhz:
            a.clock_hz = float(sclk_mhz) * 1e6
            notes.append(f"peak clock overridden: {sclk_mhz:g} MHz")
        if cus:
            a.cus = int(cus)
            notes.append(f"CU count overridden: {cus}")
    return a, notes


def ceilings(arch: Arch) -> tuple[dict[str, float], dict[str, float]]:
    """(achievable, theoretical) rates keyed like a Measurement: level -> B/s, "pipe:dtype" -> FLOP/s."""
    from perfmodel.estimate import bandwidth, compute_rate

    ach: dict[str, float] = {}
    peak: dict[str, float] = {}
    for pipe, dts in arch.pipes().items():
        for dt in dts:
            r, p, _ = compute_rate(arch, pipe, dt)
            ach[f"{pipe}:{dt}"], peak[f"{pipe}:{dt}"] = r, p
    for lv in arch.levels:
        r, p, _ = bandwidth(arch, lv)
        ach[lv], peak[lv] = r, p
    return ach, peak


# --- prediction of one case ---------------------------------------------------------------
def predict_case(raw: dict, arch: Arch, index: int = 0, where: str | None = None) -> dict:
    """The prediction row of one case on ``arch`` (which may carry overridden clock/CUs)."""
    import numpy as np

    from perfmodel.cases import normalize
    from perfmodel.estimate import estimate
    from perfmodel.prediction import result_rows, run_model

    raw = {k: v for k, v in raw.items() if k != "arch"}
    c = normalize(raw, index, arch.key, source=where)
    params = dict(c.params)
    for n in c.model.numeric:
        if params[n] is not None:
            params[n] = np.array([params[n]], dtype=float)
    work = run_model(c.model, params, arch, c.dtype, where=c.where)
    est = estimate(work, arch)
    row = result_rows(est, [c])[0]
    row["case"] = {"kernel": c.kernel, "dtype": c.dtype, **row["shape"]}
    row["bytes_read"] = {lv: float(np.ravel(v)[0]) for lv, v in work.bytes_read.items()}
    row["bytes_write"] = {lv: float(np.ravel(v)[0]) for lv, v in work.bytes_write.items()}
    row["rates"] = {}  # term -> the rate the estimate used (amount / term time)
    ceiling_rates = {t: float(np.ravel(r)[0]) for t, r in est.ceilings.rate.items()}
    for t, us in row["terms_us"].items():
        amt = _amount(row, t)
        if amt and us > 0:
            row["rates"][t] = amt / (us * 1e-6)
        elif t in ceiling_rates:
            row["rates"][t] = ceiling_rates[t]  # nothing predicted there: the ceiling it would use
    return row


def _amount(row: Mapping, term: str) -> float | None:
    kind, _, key = term.partition(":")
    if kind == "compute":
        return row["flops_by"].get(key)
    if kind == "memory":
        return row["bytes"].get(key)
    return None


def sum_predictions(rows: list[dict]) -> dict:
    """One prediction for several dispatches of a kernel: amounts and times summed."""
    if len(rows) == 1:
        return rows[0]
    out = dict(rows[0])

    def add(key):
        acc: dict[str, float] = {}
        for r in rows:
            for k, v in r[key].items():
                acc[k] = acc.get(k, 0.0) + v
        return acc

    out["time_us"] = sum(r["time_us"] for r in rows)
    out["flops"] = sum(r["flops"] for r in rows)
    for key in ("flops_by", "bytes", "bytes_read", "bytes_write", "terms_us"):
        out[key] = add(key)
    out["bound"] = Counter(r["bound"] for r in rows).most_common(1)[0][0]
    return out


# --- counter conventions --------------------------------------------------------------------
def counted_fraction(case: Mapping | None) -> dict[str, float]:
    """Fraction of a case's FLOPs (per "pipe:dtype") that rocprof's VALU counters see."""
    if case and case.get("kernel") == "mixbench" and case.get("elem") in ("half2", "float2"):
        key = "valu:fp16" if case["elem"] == "half2" else "valu:fp32"
        return {key: 0.5}  # one packed instruction, two FMAs per lane, counted once
    return {}


# --- the comparison -------------------------------------------------------------------------
def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0:
        return 1.0 if a == 0 else None
    return a / b


def _fmt_rate(term: str, r: float) -> str:
    return f"{r / 1e12:.3g} TFLOP/s" if term.startswith("compute:") else f"{r / 1e9:.4g} GB/s"


def _what(term: str) -> str:
    kind, _, key = term.partition(":")
    return f"{key} FLOPs" if kind == "compute" else f"{key.upper()} bytes"


def compare(m: Measurement, pred: dict | None, arch: Arch, case: dict | None = None) -> dict:
    """Residuals (measured / predicted) and the explaining term in words; {} without a prediction."""
    if pred is None:
        return {}
    frac = counted_fraction(case)
    flops_not_collected = not m.flops and not _has_flop_formulas(m.gfx)
    out: dict = {}
    # FLOPs per pipe:dtype, in the counters' convention
    fr: dict[str, float | None] = {}
    flops_notes = []
    if flops_not_collected and pred["flops"] > 0:
        flops_notes.append(f"FLOP counters do not exist on {m.gfx or arch.gfx}: FLOPs not compared")
    else:
        for k in sorted(set(pred["flops_by"]) | set(m.flops)):
            p = pred["flops_by"].get(k, 0.0) * frac.get(k, 1.0)
            if p == 0 and not m.flops.get(k):
                continue
            fr[k] = _ratio(m.flops.get(k, 0.0), p)
        if frac:
            flops_notes.append(
                "packed instructions (v_pk_fma) do 2 FMAs per lane but count once: counters see half the FLOPs"
            )
        for k, r in fr.items():
            if r is not None and 0.5 <= r < 1 - 1e-9 and k.startswith("valu:"):
                flops_notes.append(
                    f"{k}: counters see {r:.2f}x the kernel's FLOPs - the compiler packed part of the scalar FMAs into v_pk_fma (counted once)"
                )
    counted = sum(pred["flops_by"].get(k, 0.0) * frac.get(k, 1.0) for k in pred["flops_by"])
    out["predicted_flops_counted"] = counted
    out["flops_ratio"] = fr
    out["flops_match"] = (
        None
        if flops_not_collected
        else all(
            abs(m.flops.get(k, 0.0) - pred["flops_by"].get(k, 0.0) * frac.get(k, 1.0)) < 0.5
            for k in set(pred["flops_by"]) | set(m.flops)
        )
    )
    # bytes per level
    meas_bytes = m.bytes
    br = {lv: _ratio(meas_bytes.get(lv), b) for lv, b in pred["bytes"].items() if lv in meas_bytes}
    out["bytes_ratio"] = br
    out["bytes_explain"] = _explain_bytes(m, pred, arch)
    # time
    t_meas = m.time_s
    t_pred = pred["time_us"] * 1e-6
    out["time_ratio"] = _ratio(t_meas, t_pred)
    out["time_error"] = None if t_meas is None else t_pred / t_meas - 1.0
    expl, term = _explain_time(m, pred, frac, flops_not_collected)
    out["explaining_term"] = term
    out["explain"] = "; ".join(
        [expl, *flops_notes, *([out["bytes_explain"]] if out["bytes_explain"] else [])]
    )
    return out


def _has_flop_formulas(gfx: str) -> bool:
    from perfmodel.counters.formulas import load

    try:
        return any(k.startswith("flops:") for k in load(gfx).quantities)
    except InputError:
        return False


def _measured_amount(
    m: Measurement, term: str, frac: Mapping[str, float], flops_missing: bool
) -> float | None:
    kind, _, key = term.partition(":")
    if kind == "compute":
        if flops_missing:
            return None
        return m.flops.get(key, 0.0) / frac.get(key, 1.0)  # see _explain_time for packed under-counts
    if kind == "memory":
        return m.bytes.get(key)
    return None


def _explain_time(m: Measurement, pred: dict, frac, flops_missing: bool) -> tuple[str, str | None]:
    if m.time_s is None:
        return "no usable measured time: time not compared", None
    t_meas = m.time_s
    t_pred = pred["time_us"] * 1e-6
    launch = pred["terms_us"].get("launch", 0.0) * 1e-6
    rates = pred.get("rates", {})
    body_pred: dict[str, float] = {}
    body_amt: dict[str, float] = {}
    amt_ratio: dict[str, float] = {}
    for t, us in pred["terms_us"].items():
        if t == "launch":
            continue
        body_pred[t] = us * 1e-6
        ma = _measured_amount(m, t, frac, flops_missing)
        pa = _amount(pred, t)
        if t.startswith("compute:valu") and ma is not None and pa and 0.5 <= ma / pa < 1 - TOLERANCE:
            ma = None  # a partly packed kernel: the counters under-count, not the model over-counts
        if ma is not None and t in rates:
            body_amt[t] = ma / rates[t]
            if pa:
                amt_ratio[t] = ma / pa
        else:
            body_amt[t] = body_pred[t]
    if not body_pred:
        return "nothing to time", None
    t_amt = max(body_amt.values()) + launch
    d_amount = t_amt - t_pred
    d_rate = t_meas - t_amt
    ratio = t_meas / t_pred
    head = f"time {ratio:.2f}x the model"
    iops = sum(m.iops.values())
    if not any(t.startswith("compute:") for t in body_pred) and iops > 0 and ratio > 1 + 4 * TOLERANCE:
        return (
            f"{head}: {iops:.3g} integer VALU ops are not timed (the spec has no VALU integer rate); "
            "the missing integer compute term explains the difference",
            "compute:valu:int",
        )
    if abs(d_amount) >= abs(d_rate) and abs(d_amount) > 0:
        if d_amount > 0:
            term = max(body_amt, key=lambda t: body_amt[t] - body_pred[t])
        else:
            term = max(body_pred, key=lambda t: body_pred[t] - body_amt[t])
        r = amt_ratio.get(term)
        what = (
            f"{_what(term)} {r:.2f}x the model" if r is not None else f"{_what(term)} differ from the model"
        )
        return f"{head}: {what}; the {term} term explains most of the difference", term
    term = max(body_amt, key=body_amt.get)
    if launch > max(body_amt.values()):
        return f"{head}: the kernel is launch-bound in the model ({launch * 1e6:.1f} us overhead)", "launch"
    ma = _measured_amount(m, term, frac, flops_missing)
    if ma is None or term not in pred.get("rates", {}) or t_meas <= launch:
        return f"{head}: amounts as modelled; the {term} term ran at another rate than assumed", term
    achieved = ma / max(t_meas - launch, 1e-12)
    assumed = pred["rates"][term]
    r_b = amt_ratio.get(term)
    amounts = (
        "amounts as modelled"
        if r_b is None or abs(r_b - 1) <= TOLERANCE
        else f"{_what(term)} {r_b:.2f}x the model"
    )
    return (
        f"{head} ({amounts}): the binding term {term} ran at {achieved / assumed:.0%} of the rate the model assumed "
        f"({_fmt_rate(term, achieved)} vs {_fmt_rate(term, assumed)})",
        term,
    )


def _explain_bytes(m: Measurement, pred: dict, arch: Arch) -> str:
    """Words for a device-memory byte count outside the tolerance (or not collected)."""
    mem = arch.memory_level
    p = pred["bytes"].get(mem)
    if not p:
        got = m.bytes.get(mem, 0.0)
        if got > 2**20:
            return (
                f"{mem.upper()} bytes {got / 2**20:.1f} MiB where the model expects none: it assumes the working set stays "
                "in an on-chip cache between runs (warm), this run read it from device memory"
            )
        return ""
    if mem not in m.bytes:
        return f"{mem.upper()} bytes not collected in this pass: not compared"
    r = m.bytes[mem] / p
    if abs(r - 1) <= TOLERANCE:
        return ""
    pr = pred.get("bytes_read", {}).get(mem, 0.0)
    pw = pred.get("bytes_write", {}).get(mem, 0.0)
    rd, wr = m.bytes_read.get(mem, 0.0), m.bytes_write.get(mem, 0.0)
    if r < 1 and pw > 0 and wr < pw * (1 - TOLERANCE) and abs(rd - pr) <= TOLERANCE * p:
        l2 = arch.capacity("l2") if "l2" in arch.levels else 0
        return (
            f"{mem.upper()} bytes {r:.2f}x the model: writes {wr / 2**20:.1f} of {pw / 2**20:.1f} MiB reached {mem.upper()} "
            f"within the kernel - dirty lines stayed in the {l2 / 2**20:.0f} MiB L2 (written back later)"
        )
    return f"{mem.upper()} bytes {r:.2f}x the model (read {rd / 2**20:.1f} MiB, write {wr / 2**20:.1f} MiB)"
