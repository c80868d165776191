"""Schema of the accuracy data set (validation/*.yaml): every point says what, where, how and from where."""

from pathlib import Path

import numpy as np
import yaml

from perfmodel.fixed_clock import split_key
from perfmodel.models.registry import all_models
from perfmodel.vocab import SCOPES

ROOT = Path(__file__).resolve().parents[1]
FILES = ("measurements.yaml", "trace_measurements.yaml")
UNITS = (
    {"time_us"},
    {"time_ms"},
    {"tflops"},
    {"tbps"},
    {"gbps", "bytes_counted"},
    {"time_ms_baseline", "speedup"},
)
REQUIRED = ("id", "arch", "case", "measured", "scope", "implementation", "source", "source_key", "locator")


def points():
    out = []
    for name in FILES:
        out += yaml.safe_load((ROOT / "validation" / name).read_text())
    return out


def test_ids_unique_and_fields_present():
    pts = points()
    ids = [p["id"] for p in pts]
    assert len(ids) == len(set(ids))
    archs = {f.stem for f in (ROOT / "archspecs").glob("*.yaml")}
    for p in pts:
        missing = [k for k in REQUIRED if not p.get(k)]
        assert not missing, f"{p.get('id')}: missing {missing}"
        base, clock = split_key(p["arch"])  # mi300x@1005mhz: the GPU at a fixed core clock
        assert base in archs and (clock is None or "mhz" in p["arch"]), p["id"]
        assert p["scope"] in SCOPES, p["id"]
        assert p.get("warm", False) in (True, False), f"{p['id']}: warm must be true or false"
        assert str(p["source"]).startswith("https://"), p["id"]


def test_case_keys_belong_to_the_family_and_units_are_known():
    models = all_models()
    bad = []
    for p in points():
        case, m = p["case"], p["measured"]
        if case["kernel"] not in models:
            bad.append(f"{p['id']}: unknown kernel {case['kernel']}")
            continue
        extra = set(case) - {"kernel", "dtype", *models[case["kernel"]].params}
        if extra:
            bad.append(f"{p['id']}: {sorted(extra)} are not {case['kernel']} keys (use case_extra)")
        if not any(u <= set(m) for u in UNITS):
            bad.append(f"{p['id']}: no supported measured unit in {sorted(m)}")
        if ({"tflops"} <= set(m) or {"tbps"} <= set(m)) and p.get("convert") not in ("flops", "bytes"):
            bad.append(f"{p['id']}: a rate needs convert: flops|bytes")
    assert not bad, "; ".join(bad)


def test_published_rates_match_the_recorded_times(accuracy_script):
    """Where a source gives both a time and a rate, the case's standard FLOP count reproduces the rate
    (guards the transcription of shapes, e.g. HipKittens' B=15 runs); a sliding window's rate
    counts W keys per query."""
    acc = accuracy_script
    bad = []
    for p in points():
        m = p["measured"]
        if "published_tflops" not in m:
            continue
        raw = m["time_ms"] if "time_ms" in m else m["time_us"]
        t = float(raw) * (1e-3 if "time_ms" in m else 1e-6)
        case = p["case"]
        if case.get("window"):  # no standard windowed count: the sources' band, W keys per query
            flops = 4.0 * case["batch"] * case["heads"] * case["seq_q"] * min(case["window"], case["seq_kv"]) * case["head_dim"]
        else:
            flops = acc.standard_flops(case)
        if flops is None:  # no standard count for the family (a MoE tuner's own TFLOP/s): nothing to check against
            continue
        rate = flops / t / 1e12
        decimals = len(repr(float(raw)).split(".")[1])  # a time published with few digits is rounded
        published = float(m["published_tflops"])  # and so is a small rate (0.02 TFLOP/s stands for 0.015-0.025)
        rate_decimals = len(np.format_float_positional(published, trim="-").partition(".")[2])
        tol = max(0.02, 0.5 * 10.0**-decimals / float(raw), 0.5 * 10.0**-rate_decimals / published)
        if abs(rate / float(m["published_tflops"]) - 1) > tol:
            bad.append(f"{p['id']}: {rate:.1f} vs published {m['published_tflops']}")
    assert not bad, "; ".join(bad)
