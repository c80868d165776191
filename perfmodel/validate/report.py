"""Rows for `perfmodel validate`: one per kernel (ratio of sums) or per dispatch.

Every row carries the measured contract fields of `Measurement.as_row` (kernel, dispatch,
time_us, flops, flops_by, bytes, bytes_read, bytes_write, measured_bound, ...) plus the
arithmetic intensity per level and the achieved rate against each ceiling; an identified
kernel adds its case, the predicted values (predicted_time_us, bound, predicted_flops,
predicted_bytes, ...) and the residuals of `compare`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from perfmodel.arch import Arch
from perfmodel.errors import InputError
from perfmodel.validate import compare as cmp
from perfmodel.validate.identify import Manifest, identify, load_manifest, short_name


@dataclass
class Validation:
    path: str
    arch: Arch
    rows: list[dict]
    per_dispatch: bool
    notes: list[str] = field(default_factory=list)


def _key(case: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in case.items()))


def validate(
    path: str,
    arch: str | Arch | None = None,
    manifest: str | Manifest | None = None,
    per_dispatch: bool = False,
    sclk_mhz: float | None = None,
    cus: int | None = None,
    kernel_filter: str | None = None,
    top: int | None = None,
) -> Validation:
    """Read a workload, derive measurements, identify kernels, predict them and compare."""
    from pathlib import Path

    from perfmodel.counters import aggregate, derive_workload
    from perfmodel.readers import read_workload

    p = Path(path)
    if not p.exists():
        raise InputError("no such file or directory", where=str(path))
    if p.is_dir() and not any(p.iterdir()):
        raise InputError(
            "empty directory; expected rocprof output (pmc_perf.csv, *_counter_collection.csv, ...)",
            where=str(path),
        )
    man = load_manifest(manifest) if isinstance(manifest, (str, Path)) else manifest
    wl = read_workload(path)
    if not wl.dispatches:
        raise InputError("no kernel dispatches in the file", where=str(path))
    a, notes = cmp.pick_arch(wl, arch, sclk_mhz, cus)
    ach, peak = cmp.ceilings(a)
    ms = derive_workload(wl, None if wl.gfx else a.gfx)
    flt = None
    if kernel_filter:
        try:
            flt = re.compile(kernel_filter)
        except re.error as e:
            raise InputError(f"bad regex ({e})", key="--kernel") from None
    # identify and predict every dispatch (identical cases predicted once)
    cache: dict[tuple, dict] = {}
    ident: dict[int, tuple[dict | None, str]] = {}
    preds: dict[int, dict | None] = {}
    for i, d in enumerate(wl.dispatches):
        case, how = identify(d, man)
        ident[i] = (case, how)
        if case is None:
            preds[i] = None
            continue
        k = _key(case)
        if k not in cache:
            cache[k] = cmp.predict_case(case, a, i, where=f"dispatch {d.index} ({short_name(d.kernel)})")
        preds[i] = cache[k]
    rows: list[dict] = []
    if per_dispatch:
        for i, m in enumerate(ms):
            rows.append(_row(m, [preds[i]] if preds[i] else [], ident[i], a, ach, peak))
    else:
        by_kernel: dict[str, list[int]] = {}
        for i, m in enumerate(ms):
            by_kernel.setdefault(m.kernel, []).append(i)
        for agg in aggregate(ms):
            idx = by_kernel[agg.kernel]
            ps = [preds[i] for i in idx]
            ok = all(ps)
            if not ok and any(ps):
                agg.notes.append(
                    f"{sum(1 for x in ps if x)} of {len(ps)} dispatches identified: no prediction for the kernel"
                )
            rows.append(_row(agg, ps if ok else [], ident[idx[0]], a, ach, peak))
    if flt is not None:
        rows = [r for r in rows if flt.search(r["kernel"])]
    if top:
        keep = sorted(rows, key=lambda r: -(r["time_us"] or 0))[:top]
        ids = {id(r) for r in keep}
        rows = [r for r in rows if id(r) in ids]
    notes += [n for n in wl.notes if n]
    return Validation(str(path), a, rows, per_dispatch, notes)


def _row(m, preds: list[dict], ident: tuple[dict | None, str], arch: Arch, ach: dict, peak: dict) -> dict:
    r = m.as_row(ach)
    r["name"] = short_name(m.kernel)
    r["arch"] = arch.key
    total = m.total_flops
    r["ai"] = {lv: (total / b if b > 0 else None) for lv, b in m.bytes.items()}
    achieved: dict[str, float] = {}
    if m.time_s:
        achieved.update({lv: b / m.time_s for lv, b in m.bytes.items()})
        achieved.update({k: f / m.time_s for k, f in m.flops.items() if f})
    r["achieved"] = achieved
    r["pct_of_peak"] = {k: v / peak[k] for k, v in achieved.items() if peak.get(k)}
    r["pct_of_ceiling"] = {k: v / ach[k] for k, v in achieved.items() if ach.get(k)}
    r["iops_by"] = dict(m.iops)
    case, how = ident
    r["identified"] = how or None
    if preds:
        pred = cmp.sum_predictions(preds)
        r["case"] = pred["case"]
        r["predicted_time_us"] = pred["time_us"]
        r["bound"] = pred["bound"]
        r["predicted_flops"] = pred["flops"]
        r["predicted_flops_by"] = pred["flops_by"]
        r["predicted_bytes"] = pred["bytes"]
        r["predicted_terms_us"] = pred["terms_us"]
        r.update(cmp.compare(m, pred, arch, case))
        if pred.get("notes"):
            r["model_notes"] = pred["notes"]
    return r


# --- presentation ---------------------------------------------------------------------------
TABLE_COLUMNS = [
    "name",
    "dispatch",
    "count",
    "time_us",
    "predicted_time_us",
    "time_error",
    "tflops",
    "ai_hbm",
    "hbm_gbs",
    "hbm_ratio",
    "flops_match",
    "measured_bound",
    "bound",
    "explain",
]
HEADERS = {
    "predicted_time_us": "pred_us",
    "time_error": "err",
    "ai_hbm": "ai(F/B)",
    "hbm_gbs": "hbm GB/s",
    "hbm_ratio": "hbm/model",
}


def table_rows(v: Validation) -> list[dict]:
    """Compact rows for table/md: one line per kernel, the explanation in words at the end."""
    mem = v.arch.memory_level
    out = []
    for r in v.rows:
        t = {
            k: r.get(k)
            for k in (
                "name",
                "dispatch",
                "count",
                "time_us",
                "predicted_time_us",
                "measured_bound",
                "bound",
                "flops_match",
            )
        }
        err = r.get("time_error")
        t["time_error"] = None if err is None else f"{err:+.1%}"
        t["tflops"] = r["achieved"] and (r["flops"] / (r["time_us"] * 1e-6) / 1e12 if r["time_us"] else None)
        t["ai_hbm"] = r["ai"].get(mem)
        bw = r["achieved"].get(mem)
        t["hbm_gbs"] = None if bw is None else bw / 1e9
        hr = (r.get("bytes_ratio") or {}).get(mem)
        t["hbm_ratio"] = hr
        t["explain"] = r.get("explain")
        out.append(t)
    return out


def render_validation(v: Validation, fmt: str) -> str:
    from perfmodel.output import render

    if fmt in ("json", "jsonl"):
        return render(v.rows, fmt)
    if fmt == "csv":
        return render(v.rows, fmt)
    mode = "per dispatch" if v.per_dispatch else "per kernel (ratio of sums)"
    title = f"perfmodel validate {v.path} on {v.arch.name} ({v.arch.key}), {mode}"
    text = render(table_rows(v), fmt, columns=TABLE_COLUMNS, headers=HEADERS, title=title)
    if v.notes:
        text += ("\n" if fmt == "md" else "") + "\n".join(f"note: {n}" for n in v.notes) + "\n"
    return text
