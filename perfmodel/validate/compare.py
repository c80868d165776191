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
packed VALU instructions (``v_pk_fma_*``, e.g. mixbench's half2/float2: the FLOP keys a model
marks ``packed``) count once in ``SQ_INSTS_VALU_FMA_*`` although they do two FMAs per lane, so
the counters see half those FLOPs.
"""

from __future__ import annotations

from collections.abc import Mapping

from perfmodel.arch import Arch
from perfmodel.counters.measurement import Measurement
from perfmodel.errors import InputError
from perfmodel.prediction import Prediction
from perfmodel.vocab import (
    COMPUTE,
    FILL,
    INT,
    LAUNCH,
    MEMORY,
    WORKGROUP_LAUNCH,
    compute_term,
    flop_key,
    is_compute,
    split_flop_key,
    split_term,
)

# a byte or FLOP count within this fraction of the model counts as agreeing
TOLERANCE = 0.05


# --- counter conventions --------------------------------------------------------------------
def counted_fraction(pred: Prediction) -> dict[str, float]:
    """Fraction of a prediction's FLOPs (per "pipe:dtype") that rocprof's VALU counters see:
    one packed instruction does two FMAs per lane and is counted once."""
    return {k: 0.5 for k in pred.packed}


# --- the comparison -------------------------------------------------------------------------
def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0:
        return 1.0 if a == 0 else None
    return a / b


def _fmt_rate(term: str, r: float) -> str:
    if is_compute(term) and term.endswith(":" + INT):
        return f"{r / 1e12:.3g} Tops/s"  # integer ops, not FLOPs
    return f"{r / 1e12:.3g} TFLOP/s" if is_compute(term) else f"{r / 1e9:.4g} GB/s"


def _pipe(term: str) -> str | None:
    """The pipe of a compute term (None for memory and launch terms)."""
    return split_flop_key(split_term(term)[1])[0] if is_compute(term) else None


def _what(term: str) -> str:
    kind, key = split_term(term)
    if kind == COMPUTE and key.endswith(":" + INT):
        return f"{key} integer ops"
    return f"{key} FLOPs" if kind == COMPUTE else f"{key.upper()} bytes"


def compare(m: Measurement, pred: Prediction | None, arch: Arch) -> dict:
    """Residuals (measured / predicted) and the explaining term in words; {} without a prediction."""
    if pred is None:
        return {}
    frac = counted_fraction(pred)
    flops_not_collected = not m.flops and not _has_flop_formulas(m.gfx)
    out: dict = {}
    fr, flops_notes = _flops_ratios(m, pred, frac, flops_not_collected, arch)
    out["predicted_flops_counted"] = sum(v * frac.get(k, 1.0) for k, v in pred.flops_by.items())
    out["flops_ratio"] = fr
    out["flops_match"] = (
        None
        if flops_not_collected
        else all(
            abs(m.flops.get(k, 0.0) - pred.flops_by.get(k, 0.0) * frac.get(k, 1.0)) < 0.5
            for k in set(pred.flops_by) | set(m.flops)
        )
    )
    meas_bytes = m.bytes
    out["bytes_ratio"] = {lv: _ratio(meas_bytes.get(lv), b) for lv, b in pred.bytes.items() if lv in meas_bytes}
    out["bytes_explain"] = _explain_bytes(m, pred, arch)
    t_meas = m.time_s
    out["time_ratio"] = _ratio(t_meas, pred.time_s)
    out["time_error"] = None if t_meas is None else pred.time_s / t_meas - 1.0
    # the prediction's error band: where published kernels of its family measured (error_bands)
    lo, hi = pred.time_band_us
    out["likely_us"] = [lo, hi]
    out["in_band"] = None if t_meas is None else bool(lo <= t_meas * 1e6 <= hi)
    expl, term = _explain_time(m, pred, frac, flops_not_collected)
    out["explaining_term"] = term
    out["explain"] = "; ".join([expl, *flops_notes, *([out["bytes_explain"]] if out["bytes_explain"] else [])])
    return out


def _flops_ratios(
    m: Measurement, pred: Prediction, frac: Mapping[str, float], not_collected: bool, arch: Arch
) -> tuple[dict[str, float | None], list[str]]:
    """Measured / predicted FLOPs per key in the counters' convention, and notes on why they
    may differ without a model error."""
    fr: dict[str, float | None] = {}
    notes = []
    if not_collected and pred.flops > 0:
        return fr, [f"FLOP counters do not exist on {m.gfx or arch.gfx}: FLOPs not compared"]
    for k in sorted(set(pred.flops_by) | set(m.flops)):
        p = pred.flops_by.get(k, 0.0) * frac.get(k, 1.0)
        if p == 0 and not m.flops.get(k):
            continue
        fr[k] = _ratio(m.flops.get(k, 0.0), p)
    if frac:
        notes.append("packed instructions (v_pk_fma) do 2 FMAs per lane but count once: counters see half the FLOPs")
    for k, r in fr.items():
        if r is not None and 0.5 <= r < 1 - 1e-9 and k.startswith("valu:"):
            notes.append(
                f"{k}: counters see {r:.2f}x the kernel's FLOPs - the compiler packed part of the scalar FMAs into v_pk_fma (counted once)"
            )
    return fr, notes


def _has_flop_formulas(gfx: str) -> bool:
    from perfmodel.counters.formulas import load

    try:
        return any(k.startswith("flops:") for k in load(gfx).quantities)
    except InputError:
        return False


def _measured_amount(m: Measurement, term: str, frac: Mapping[str, float], flops_missing: bool) -> float | None:
    kind, key = split_term(term)
    if kind == COMPUTE and key.endswith(":" + INT):
        # a pipe's integer term: the counters' 32-bit integer ops (16-bit ones count there too;
        # the 64-bit ones are address arithmetic, which the models do not count)
        got = m.iops.get(key[: -len(INT)] + "int32")
        return None if got is None else got
    if kind == COMPUTE:
        if flops_missing:
            return None
        return m.flops.get(key, 0.0) / frac.get(key, 1.0)  # see _explain_time for packed under-counts
    if kind == MEMORY:
        return m.bytes.get(key)
    return None


def _amount_times(
    m: Measurement, pred: Prediction, frac, flops_missing: bool
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Per term: the predicted time, the time the measured amount would take at the rate the
    model assumed, and measured / predicted amount."""
    rates = pred.rates
    body_pred: dict[str, float] = {}
    body_amt: dict[str, float] = {}
    amt_ratio: dict[str, float] = {}
    for t, s in pred.terms_s.items():
        if t in (LAUNCH, FILL):
            continue
        body_pred[t] = s
        ma = _measured_amount(m, t, frac, flops_missing)
        pa = pred.amount(t)
        if _pipe(t) == "valu" and ma is not None and pa and 0.5 <= ma / pa < 1 - TOLERANCE:
            ma = None  # a partly packed kernel: the counters under-count, not the model over-counts
        if ma is not None and t in rates:
            body_amt[t] = ma / rates[t]
            if pa:
                amt_ratio[t] = ma / pa
        else:
            body_amt[t] = body_pred[t]
    return body_pred, body_amt, amt_ratio


def _explain_time(m: Measurement, pred: Prediction, frac, flops_missing: bool) -> tuple[str, str | None]:
    """One sentence on the time difference and the term that explains most of it."""
    if m.time_s is None:
        return "no usable measured time: time not compared", None
    t_meas, t_pred = m.time_s, pred.time_s
    launch = pred.terms_s.get(LAUNCH, 0.0) + pred.terms_s.get(FILL, 0.0)  # fixed costs beside the body
    body_pred, body_amt, amt_ratio = _amount_times(m, pred, frac, flops_missing)
    if not body_pred:
        return "nothing to time", None
    t_amt = max(body_amt.values()) + launch
    d_amount, d_rate = t_amt - t_pred, t_meas - t_amt
    ratio = t_meas / t_pred
    head = f"time {ratio:.2f}x the model"
    iops = sum(m.iops.values())
    if not any(is_compute(t) for t in body_pred) and iops > 0 and ratio > 1 + 4 * TOLERANCE:
        return (
            f"{head}: {iops:.3g} integer VALU ops are not timed (the spec has no VALU integer rate); "
            "the missing integer compute term explains the difference",
            compute_term(flop_key("valu", "int")),
        )
    if abs(d_amount) >= abs(d_rate) and abs(d_amount) > 0:
        if d_amount > 0:
            term = max(body_amt, key=lambda t: body_amt[t] - body_pred[t])
        else:
            term = max(body_pred, key=lambda t: body_pred[t] - body_amt[t])
        r = amt_ratio.get(term)
        what = f"{_what(term)} {r:.2f}x the model" if r is not None else f"{_what(term)} differ from the model"
        return f"{head}: {what}; the {term} term explains most of the difference", term
    term = max(body_amt, key=body_amt.get)
    if launch > max(body_amt.values()):
        return f"{head}: the kernel is launch-bound in the model ({launch * 1e6:.1f} us overhead)", LAUNCH
    if term == WORKGROUP_LAUNCH:
        return (f"{head}: the model paces the kernel by its workgroup launches ({body_pred[term] * 1e6:.1f} us at the "
                "spec's workgroup launch rate)", term)
    return _explain_rate(m, pred, term, amt_ratio.get(term), head, _measured_amount(m, term, frac, flops_missing))


def _explain_rate(
    m: Measurement, pred: Prediction, term: str, r_b: float | None, head: str, ma: float | None
) -> tuple[str, str]:
    """Amounts as modelled: the binding term ran at another rate than the model assumed."""
    launch = pred.terms_s.get(LAUNCH, 0.0) + pred.terms_s.get(FILL, 0.0)
    rates = pred.rates
    t_meas = m.time_s or 0.0
    if ma is None or term not in rates or t_meas <= launch:
        return f"{head}: amounts as modelled; the {term} term ran at another rate than assumed", term
    achieved = ma / max(t_meas - launch, 1e-12)
    assumed = rates[term]
    amounts = "amounts as modelled" if r_b is None or abs(r_b - 1) <= TOLERANCE else f"{_what(term)} {r_b:.2f}x the model"
    return (
        f"{head} ({amounts}): the binding term {term} ran at {achieved / assumed:.0%} of the rate the model assumed "
        f"({_fmt_rate(term, achieved)} vs {_fmt_rate(term, assumed)})",
        term,
    )


def _explain_bytes(m: Measurement, pred: Prediction, arch: Arch) -> str:
    """Words for a device-memory byte count outside the tolerance (or not collected)."""
    mem = arch.memory_level
    p = pred.bytes.get(mem)
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
    pr = pred.bytes_read.get(mem, 0.0)
    pw = pred.bytes_write.get(mem, 0.0)
    rd, wr = m.bytes_read.get(mem, 0.0), m.bytes_write.get(mem, 0.0)
    if r < 1 and pw > 0 and wr < pw * (1 - TOLERANCE) and abs(rd - pr) <= TOLERANCE * p:
        l2 = arch.capacity("l2") if "l2" in arch.levels else 0
        return (
            f"{mem.upper()} bytes {r:.2f}x the model: writes {wr / 2**20:.1f} of {pw / 2**20:.1f} MiB reached {mem.upper()} "
            f"within the kernel - dirty lines stayed in the {l2 / 2**20:.0f} MiB L2 (written back later)"
        )
    return f"{mem.upper()} bytes {r:.2f}x the model (read {rd / 2**20:.1f} MiB, write {wr / 2**20:.1f} MiB)"
