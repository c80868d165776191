"""Tables: which fields of a prediction or a validation row each table shows, and how.

Presentation only: the rows come from `perfmodel.prediction` and `perfmodel.validate`; the
formats (table, md, csv, json, jsonl) from `perfmodel.output`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from perfmodel import dtypes
from perfmodel.output import fmt_cell, render
from perfmodel.vocab import DTYPE_BYTES

# --- perfmodel predict -------------------------------------------------------------------------
PREDICT_COLUMNS = [
    "id",
    "arch",
    "kernel",
    "dtype",
    "scope",
    "shape",
    "time_us",
    "likely_us",
    "bound",
    "tflops",
    "ai",
    "roofline_time_us",
    "headroom",
    "tile",
]
PREDICT_HEADERS = {"time_us": "time_us", "roofline_time_us": "roofline_us", "ai": "ai(F/B)"}


def shape_text(shape: dict, kernel: str | None = None) -> str:
    """``k=v`` words of a case's shape; with ``kernel``, keys left at their family default are
    omitted (the JSON rows carry every key)."""
    defaults: dict = {}
    if kernel is not None:
        from perfmodel.models.registry import MODELS

        m = MODELS.get(kernel)
        defaults = {n: p.default for n, p in m.params.items() if not p.required} if m else {}
    return " ".join(f"{k}={v}" for k, v in shape.items() if k not in defaults or defaults[k] != v)


def band_text(band: Sequence[float] | None) -> str | None:
    """A ``likely_us`` cell: the ``lo-hi`` of a prediction's error band (``time_band_us``), where
    a measurement of the kernel likely falls (`perfmodel.error_bands`)."""
    if not band:
        return None
    lo, hi = band
    return f"{fmt_cell(lo)}-{fmt_cell(hi)}"


def in_band_line(rows: Iterable[dict], measured: str, band: str) -> str | None:
    """How many identified rows were measured inside their prediction's error band, and their
    share of the measured time: the band holds about 80 % of published kernels of a family, so
    far fewer inside says this workload's kernels run unlike them. None without such rows."""
    inside = [r for r in rows if r.get("in_band") is not None and r.get(measured)]
    if not inside:
        return None
    t_in = sum(r[measured] for r in inside if r["in_band"])
    t_all = sum(r[measured] for r in inside)
    n_in = sum(1 for r in inside if r["in_band"])
    return (f"measured within {band} (the band that holds about 80 % of published kernels of a family): "
            f"{n_in} of {len(inside)} identified kernels, {t_in / t_all:.0%} of their time")


def predict_table(rows: list[dict], detail: bool) -> tuple[list[dict], list[str]]:
    """Compact rows for table/md/csv: the shape as one text cell; terms only with ``detail``;
    the timing scope only where some row is not kernel-scoped."""
    out = []
    scoped = any(r.get("scope", "kernel") != "kernel" for r in rows)
    for r in rows:
        t = {k: r.get(k) for k in PREDICT_COLUMNS if k in r or k == "tile"}
        if not scoped:
            t.pop("scope", None)
        t.pop("likely_us", None)
        t["shape"] = shape_text(r["shape"], r["kernel"])
        t["likely_us"] = band_text(r["time_band_us"])
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


def cell_notes(rows: Iterable[dict]) -> list[str]:
    """The off-cell notes among ``rows``' notes, each once (`perfmodel.error_bands.cell_note`:
    it holds for every row of its kernel family and arch family, so a table prints it once)."""
    from perfmodel.error_bands import cell_notes_in

    return list(dict.fromkeys(n for r in rows for n in cell_notes_in(r.get("notes"))))


def render_predictions(rows: Iterable[dict], fmt: str, detail: bool = False, title: str | None = None) -> str:
    """`perfmodel predict` output: contract rows as JSON, a compact table otherwise; ``title``
    says what was run (the default is the command name). ``rows`` may be a generator (jsonl
    then writes each row as it is made)."""
    if fmt in ("json", "jsonl"):
        return render(rows, fmt)
    rows = list(rows)
    trows, cols = predict_table(rows, detail or fmt == "csv")
    text = render(trows, fmt, columns=cols, headers=PREDICT_HEADERS, title=None if fmt == "csv" else (title or "perfmodel predict"))
    if fmt in ("table", "md"):  # warnings a reader of the table must see (json/csv carry `notes`)
        warn = [f"warning: {r['kernel']} {shape_text(r['shape'], r['kernel'])} on {r['arch']}: {n.strip()}"
                for r in rows for n in (r.get("notes") or "").split(";") if n.strip().startswith("shape too large")]
        warn += [f"note: {c}" for c in cell_notes(rows)]
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
    "likely_us",
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
        t["likely_us"] = band_text(r.get("likely_us"))
        measured = r["flops"] is not None and r["time_us"]
        t["tflops"] = r["achieved"] and (r["flops"] / (r["time_us"] * 1e-6) / 1e12 if measured else None)
        t["ai_hbm"] = r["ai"].get(mem)
        bw = r["achieved"].get(mem)
        t["hbm_gbs"] = None if bw is None else bw / 1e9
        t["hbm_ratio"] = (r.get("bytes_ratio") or {}).get(mem)
        occ = r.get("occupancy")
        if isinstance(occ, dict):
            t["occupancy"] = f"{occ['waves_per_simd']:g}/SIMD ({occ['limiter']})"
        if "workloads" in r:  # a row merged over several workloads: in how many the kernel ran
            t["workloads"] = r["workloads"]
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
    trows = validation_table(v)
    cols = VALIDATE_COLUMNS
    if any("occupancy" in t for t in trows):  # kernel traces with register columns: waves per SIMD
        cols = [*VALIDATE_COLUMNS[:-1], "occupancy", VALIDATE_COLUMNS[-1]]
    if any("workloads" in t for t in trows):
        cols = [*cols[:3], "workloads", *cols[3:]]
    text = render(trows, fmt, columns=cols, headers=VALIDATE_HEADERS, title=title)
    band = in_band_line(v.rows, "time_us", "likely_us")
    extra = ([band] if band else []) + flag_lines(v.rows) + [f"note: {n}" for n in v.notes]
    if extra:
        text += ("\n" if fmt == "md" else "") + "\n".join(extra) + "\n"
    return text


def render_validation_set(vs, fmt: str) -> str:
    """Several workloads (`perfmodel.validate.many.ValidationSet`): JSON/CSV hold every row with
    its ``workload`` field, each workload's rows then the merged ones; table/md show one table per
    workload, then the merged table, then the notes on the whole set."""
    if fmt in ("json", "jsonl", "csv"):
        return render(vs.rows, fmt)
    parts = [render_validation(v, fmt) for v in vs.runs]
    if vs.merged is not None:
        parts.append(render_validation(vs.merged, fmt))
    text = "\n".join(parts)
    if vs.notes:
        text += "\n" + "\n".join(f"note: {n}" for n in vs.notes) + "\n"
    return text


def validation_html(v) -> str:
    """A `Validation` in Jupyter: the compact table and its notes."""
    import html

    mode = "per dispatch" if v.per_dispatch else "per kernel (ratio of sums)"
    head = f"<p><b>perfmodel validate {html.escape(str(v.path))} on {html.escape(v.arch.name)} ({v.arch.key}), {mode}</b></p>"
    rows = validation_table(v)
    band = in_band_line(v.rows, "time_us", "likely_us")
    notes = "".join(f"<br><i>{html.escape(n)}</i>" for n in ([band] if band else []) + [f"note: {n}" for n in v.notes])
    return head + html_table(rows, VALIDATE_COLUMNS) + notes


# --- Jupyter and scripts -----------------------------------------------------------------------
def to_pandas(rows: list[dict]):
    """A pandas DataFrame of ``rows`` (nested mappings flattened to ``bytes.hbm`` columns).

    pandas is optional (never a dependency of perfmodel): without it this says how to get it."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas() needs pandas, which perfmodel does not install: pip install pandas") from None
    from perfmodel.output import _flatten

    return pd.DataFrame([_flatten(r) for r in rows])


class Table:
    """Rows with a title: a table in Jupyter, text in a terminal, ``.rows``, ``.to_pandas()``."""

    def __init__(self, rows: list[dict], title: str | None = None, columns: Sequence[str] | None = None):
        self.rows = rows
        self.title = title
        self.columns = list(columns) if columns else list(dict.fromkeys(k for r in rows for k in r))

    def to_pandas(self):
        return to_pandas(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def _repr_html_(self) -> str:
        head = f"<p><b>{self.title}</b></p>" if self.title else ""
        return head + html_table(self.rows, self.columns)

    def __repr__(self) -> str:
        return render(self.rows, "table", columns=self.columns, title=self.title)


def kernels(*names: str) -> Table:
    """Every kernel family (or the named ones) with its keys: type, default, allowed values."""
    from perfmodel.models.registry import all_models, get_model

    models = [get_model(n) for n in names] if names else [all_models()[k] for k in sorted(all_models())]
    return Table(kernel_key_rows(kernel_families(models)), "kernel families and their case keys")


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


# --- perfmodel kernels -------------------------------------------------------------------------
def _param_default(p):
    return None if p.required else p.default


def kernel_families(models) -> list[dict]:
    """One dict per family: name, what it models, its default dtype and its parameters."""
    out = []
    for m in models:
        params = []
        for p in m.params.values():
            params.append(
                {
                    "name": p.name,
                    "type": p.kind.__name__,
                    "required": p.required,
                    "default": _param_default(p),
                    "choices": list(p.choices) or None,
                    "minimum": p.minimum if p.kind in (int, float) else None,
                    "form": p.pattern_text or None,
                    "help": p.help,
                }
            )
        out.append(
            {
                "kernel": m.name,
                "doc": m.doc,
                "default_dtype": m.default_dtype,
                "dtypes": [d for d in DTYPE_BYTES if dtypes.accepted(d, m)],
                "identifies_profiled_kernels": m.identify is not None,
                "params": params,
            }
        )
    return out


def _allowed(p: dict) -> str:
    if p["choices"]:
        return ", ".join(str(c) for c in p["choices"])
    if p.get("form"):
        return p["form"]
    if p["type"] == "bool":
        return "true, false"
    if p["minimum"] is not None:
        return f">= {p['minimum']:g}"
    return ""


def kernel_key_rows(families: list[dict]) -> list[dict]:
    """Flat rows, one per (family, key), for table/md/csv."""
    rows = []
    for f in families:
        for p in f["params"]:
            rows.append(
                {
                    "kernel": f["kernel"],
                    "key": p["name"],
                    "type": p["type"],
                    "default": "(required)" if p["required"] else p["default"],
                    "allowed": _allowed(p),
                    "meaning": p["help"],
                }
            )
    return rows


def _integer_note(family: dict) -> str:
    """``; also int32, int16`` for a family that takes the streaming-only integer types."""
    extra = [d for d in dtypes.STREAMING_ONLY if d in family["dtypes"]]
    return f"; also {', '.join(extra)}" if extra else ""


def render_kernels(families: list[dict], fmt: str) -> str:
    """`perfmodel kernels`: JSON keeps one object per family; the tables one row per key."""
    if fmt in ("json", "jsonl"):
        return render(families, fmt)
    rows = kernel_key_rows(families)
    text = render(rows, fmt, title=None if fmt == "csv" else "perfmodel kernels: case keys per family (key=value)")
    if fmt in ("table", "md"):
        lines = [f"{f['kernel']:14s} {f['doc']} [default dtype {f['default_dtype']}{_integer_note(f)}]" for f in families]
        text += "\n" + "\n".join(lines) + "\n"
        text += "\nEvery case also takes id, arch, dtype. Sizes are element counts.\n"
    return text


def family_help(model) -> str:
    """The keys of one family as plain text, for `perfmodel predict KERNEL --help`."""
    (family,) = kernel_families([model])
    rows = kernel_key_rows([family])
    lines = [f"{model.name}: {model.doc} (default dtype {model.default_dtype}{_integer_note(family)})", ""]
    width = max([16] + [len(r["key"]) + 2 for r in rows])  # a long key still gets a space after it
    for r in rows:
        d = "required" if r["default"] == "(required)" else f"default {fmt_cell(r['default'])}"
        extra = f"; {r['allowed']}" if r["allowed"] else ""
        lines.append(f"  {r['key']:<{width}}{r['type']}, {d}{extra}" + (f". {r['meaning']}" if r["meaning"] else ""))
    return "\n".join(lines)
