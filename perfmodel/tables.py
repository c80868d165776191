"""Tables: which fields of a prediction or a validation row each table shows, and how.

Presentation only: the rows come from `perfmodel.prediction` and `perfmodel.validate`; the
formats (table, md, csv, json, jsonl) from `perfmodel.output`.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfmodel.output import fmt_cell, render

# --- perfmodel predict -------------------------------------------------------------------------
PREDICT_COLUMNS = [
    "id",
    "arch",
    "kernel",
    "dtype",
    "shape",
    "time_us",
    "bound",
    "tflops",
    "ai",
    "roofline_time_us",
    "headroom",
    "tile",
]
PREDICT_HEADERS = {"time_us": "time_us", "roofline_time_us": "roofline_us", "ai": "ai(F/B)"}


def shape_text(shape: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in shape.items())


def predict_table(rows: list[dict], detail: bool) -> tuple[list[dict], list[str]]:
    """Compact rows for table/md/csv: the shape as one text cell; terms only with ``detail``."""
    out = []
    for r in rows:
        t = {k: r.get(k) for k in PREDICT_COLUMNS if k in r or k == "tile"}
        t["shape"] = shape_text(r["shape"])
        if detail:
            for k, v in r["terms_us"].items():
                t[f"{k}_us"] = v
            for lv, b in r["bytes"].items():
                t[f"bytes.{lv}"] = b
        out.append(t)
    cols = [c for c in PREDICT_COLUMNS if any(c in r for r in out)]
    if detail:
        cols += list(dict.fromkeys(k for r in out for k in r if k not in cols))
    return out, cols


def render_predictions(rows: list[dict], fmt: str, detail: bool = False) -> str:
    """`perfmodel predict` output: contract rows as JSON, a compact table otherwise."""
    if fmt in ("json", "jsonl"):
        return render(rows, fmt)
    trows, cols = predict_table(rows, detail or fmt == "csv")
    text = render(trows, fmt, columns=cols, headers=PREDICT_HEADERS, title=None if fmt == "csv" else "perfmodel predict")
    if fmt in ("table", "md"):  # warnings a reader of the table must see (json/csv carry `notes`)
        warn = [f"warning: {r['kernel']} {shape_text(r['shape'])} on {r['arch']}: {n.strip()}"
                for r in rows for n in (r.get("notes") or "").split(";") if n.strip().startswith("shape too large")]
        if warn:
            text += ("\n" if fmt == "md" else "") + "\n".join(warn) + "\n"
    return text


# --- perfmodel validate ------------------------------------------------------------------------
VALIDATE_COLUMNS = [
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
    "flags",
    "explain",
]
VALIDATE_HEADERS = {
    "predicted_time_us": "pred_us",
    "time_error": "err",
    "ai_hbm": "ai(F/B)",
    "hbm_gbs": "hbm GB/s",
    "hbm_ratio": "hbm/model",
}
_VALIDATE_COPIED = ("name", "dispatch", "count", "time_us", "predicted_time_us", "measured_bound", "bound", "flops_match")


def validation_table(v) -> list[dict]:
    """Compact rows of a `Validation`: one line per kernel, the explanation in words at the end."""
    mem = v.arch.memory_level
    out = []
    for r in v.rows:
        t = {k: r.get(k) for k in _VALIDATE_COPIED}
        err = r.get("time_error")
        t["time_error"] = None if err is None else f"{err:+.1%}"
        measured = r["flops"] is not None and r["time_us"]
        t["tflops"] = r["achieved"] and (r["flops"] / (r["time_us"] * 1e-6) / 1e12 if measured else None)
        t["ai_hbm"] = r["ai"].get(mem)
        bw = r["achieved"].get(mem)
        t["hbm_gbs"] = None if bw is None else bw / 1e9
        t["hbm_ratio"] = (r.get("bytes_ratio") or {}).get(mem)
        t["explain"] = r.get("explain")
        t["flags"] = len(r.get("flags") or []) or None
        out.append(t)
    return out


def flag_lines(rows: list[dict]) -> list[str]:
    """Every row's flags, one line each (``flag: <kernel> [dispatch N]: <flag>``): a table shows
    the count, these lines say what cannot be true."""
    out = []
    for r in rows:
        who = r.get("name") or r.get("kernel") or "?"
        if r.get("count", 1) == 1 and r.get("dispatch") is not None:
            who += f" (dispatch {r['dispatch']})"
        out += [f"flag: {who}: {f}" for f in r.get("flags") or []]
    return out


def render_validation(v, fmt: str) -> str:
    """`perfmodel validate` output: every field as JSON/CSV, a compact table otherwise."""
    if fmt in ("json", "jsonl", "csv"):
        return render(v.rows, fmt)
    mode = "per dispatch" if v.per_dispatch else "per kernel (ratio of sums)"
    title = f"perfmodel validate {v.path} on {v.arch.name} ({v.arch.key}), {mode}"
    text = render(validation_table(v), fmt, columns=VALIDATE_COLUMNS, headers=VALIDATE_HEADERS, title=title)
    extra = flag_lines(v.rows) + [f"note: {n}" for n in v.notes]
    if extra:
        text += ("\n" if fmt == "md" else "") + "\n".join(extra) + "\n"
    return text


# --- Jupyter -----------------------------------------------------------------------------------
def _html_cell(v) -> str:
    import html

    if isinstance(v, dict):
        return html.escape(" ".join(f"{k}={fmt_cell(x)}" for k, x in v.items()))
    return html.escape(fmt_cell(v))


def html_table(rows: list[dict], columns: Sequence[str]) -> str:
    """An HTML table of ``columns`` (mappings shown as ``k=v`` pairs), for `_repr_html_`."""
    head = "".join(f"<th>{c}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_html_cell(r.get(c))}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
