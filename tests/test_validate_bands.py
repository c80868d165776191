"""A measured kernel against its prediction's error band (`likely_us`): `perfmodel validate`
says, per kernel and for the workload, whether the measurement fell where published kernels of
its family do."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from data_paths import MIXBENCH_MI200
from perfmodel.error_bands import band
from perfmodel.tables import band_text, in_band_line
from perfmodel.traces.report import render_trace_report, validate_trace
from perfmodel.validate import validate

TRACES = Path(__file__).resolve().parent / "data" / "traces"
PREFILL = TRACES / "sglang_Qwen3-8B_prefilldecode.json.gz"


def test_trace_rows_carry_the_band_and_whether_the_kernel_fell_inside():
    """Each identified row: likely_us = predicted / p90 .. predicted / p10 of its family's band
    (the short-kernel one below 5 us), in_band = the measured time inside it; the header counts them."""
    rep = validate_trace(PREFILL)
    rows = [r for r in rep.rows if r.get("predicted_us") is not None]
    assert rows
    for r in rows:
        p10, p90, _, _ = band(r["kernel"], r["predicted_us"])
        assert r["likely_us"] == pytest.approx([r["predicted_us"] / p90, r["predicted_us"] / p10])
        lo, hi = r["likely_us"]
        assert r["in_band"] == (lo <= r["measured_us"] <= hi)
    assert any(r["in_band"] for r in rows) and not all(r["in_band"] for r in rows)
    text = render_trace_report(rep)
    n_in = sum(r["in_band"] for r in rows)
    assert "likely_us" in text and f"{n_in} of {len(rows)} identified kernels" in text


def test_the_csv_carries_every_row_with_its_shape_and_band():
    """CSV holds every row, not only the table's top ones, each with its shape and band as text."""
    rep = validate_trace(PREFILL)
    out = list(csv.DictReader(io.StringIO(render_trace_report(rep, "csv", top=3))))
    assert len(out) == len(rep.rows) > 3
    for r, c in zip(rep.rows, out, strict=True):
        if r.get("predicted_us") is not None:
            assert c["likely_us"] == band_text(r["likely_us"]) and "=" in c["shape"]
        else:
            assert c["likely_us"] == ""


def test_a_what_if_on_another_gpu_makes_no_band_verdict():
    """Measured on one GPU, predicted on another: the band is the other GPU's, so no verdict."""
    there = validate_trace(PREFILL, arch="mi355x")
    assert all(r.get("in_band") is None for r in there.rows)
    text = render_trace_report(there)
    assert "measured within likely_us" not in text and "the band comparison" in text


def test_rocprof_rows_carry_the_band_and_the_table_shows_it():
    v = validate(str(MIXBENCH_MI200))
    pred = [r for r in v.rows if r.get("predicted_time_us") is not None]
    assert pred
    for r in pred:
        lo, hi = r["likely_us"]
        assert r["in_band"] == (lo <= r["time_us"] <= hi)
    text = v.render("table")
    assert "likely_us" in text and "identified kernels" in text


def test_the_in_band_line_weighs_by_measured_time():
    rows = [
        {"in_band": True, "t": 30.0},
        {"in_band": False, "t": 10.0},
        {"in_band": None, "t": 100.0},  # no verdict: not counted
        {"t": 5.0},  # not identified
    ]
    line = in_band_line(rows, "t", "likely_us")
    assert "1 of 2 identified kernels, 75% of their time" in line
    assert in_band_line([{"t": 1.0}], "t", "likely_us") is None


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_rows_keep_the_band_as_numbers(fmt):
    import json

    rep = validate_trace(PREFILL)
    text = render_trace_report(rep, fmt)
    rows = json.loads(text)["kernels"] if fmt == "json" else [json.loads(x) for x in text.splitlines() if x.strip()]
    b = [r["likely_us"] for r in rows if r.get("likely_us")]
    assert b and all(isinstance(x, float) for pair in b for x in pair)


def test_the_jupyter_view_carries_the_band_line():
    v = validate(str(MIXBENCH_MI200))
    html = v._repr_html_()
    assert "likely_us" in html and "measured within likely_us" in html
