"""Per-GPU load-to-use latencies: an archspec's `memory.<level>.latency` (a published pointer
chase) replaces the one default set of model_constants.yaml for that GPU and level only."""

from __future__ import annotations

import pytest
import yaml

import perfmodel
from perfmodel.arch import archspec_dir, load_all, load_arch
from perfmodel.rates import constants, latency_s, latency_used


def _default_s(level: str) -> float:
    return constants()["latency_ns"][level]["value"] * 1e-9


def test_spec_latency_is_used_where_given_else_the_default():
    a100 = load_arch("a100")
    assert latency_s(a100, "hbm") == pytest.approx(404e-9)
    assert latency_s(a100, "l2") == pytest.approx(149.6e-9)
    assert latency_s(a100, "lds") == pytest.approx(_default_s("lds"))  # no shared-memory figure
    secs, prov = latency_used(a100, "hbm")
    assert secs == pytest.approx(404e-9) and "S19" in prov and "a100_80.txt" in prov
    mi300x = load_arch("mi300x")  # its own pointer chase (gpu-benches result file, GBLAT)
    for lv, ns in (("l1", 57), ("l2", 102), ("mall", 218), ("hbm", 422)):
        assert latency_s(mi300x, lv) == pytest.approx(ns * 1e-9)
        assert "GBLAT" in latency_used(mi300x, lv)[1]
    assert latency_s(mi300x, "lds") == pytest.approx(_default_s("lds"))
    mi355x = load_arch("mi355x")  # an MI350P's mt4g figures, corrected to the pointer chase
    for lv, ns in (("l1", 49.1), ("l2", 79.6), ("mall", 174.8), ("hbm", 323.5)):
        assert latency_s(mi355x, lv) == pytest.approx(ns * 1e-9)
        assert "MT4G" in latency_used(mi355x, lv)[1]
    rdna4 = load_arch("rx9070xt")  # no RDNA4 figure was found
    for lv in rdna4.levels:
        assert rdna4.latency(lv) is None
        assert latency_s(rdna4, lv) == pytest.approx(_default_s(lv))
        assert "model_constants.yaml" in latency_used(rdna4, lv)[1]


def test_shipped_latencies_are_sourced_and_ordered():
    """Every shipped figure cites a declared source with a locator note, and a level never answers
    faster than the level inside it (a pointer chase that missed L1 cannot beat an L1 hit)."""
    seen = 0
    for a in load_all():
        chain = [lv for lv in a.levels if lv != "lds"]
        lat = [latency_s(a, lv) for lv in chain]
        assert lat == sorted(lat), (a.key, dict(zip(chain, lat, strict=True)))
        for lv in a.levels:
            q = a.latency(lv)
            if q is None:
                continue
            seen += 1
            assert q.source in a.sources and q.unit == "ns" and q.note and q.tag in ("R", "D", "S", "A")
            assert 1e-9 <= q.value <= 1e-6
    assert seen >= 10


def test_a_spec_latency_changes_the_latency_terms(tmp_path):
    """Doubling a GPU's device-memory latency doubles a GEMM's fill term, and nothing else of the
    spec changes the estimate's other terms."""
    spec = yaml.safe_load((archspec_dir() / "mi300x.yaml").read_text())
    base = latency_s(load_arch("mi300x"), "hbm")
    spec["memory"]["hbm"]["latency"] = {"value": 2 * base * 1e9, "unit": "ns", "source": "S1", "tag": "A", "note": "test"}
    p = tmp_path / "slow-hbm.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False))
    assert latency_s(load_arch(str(p)), "hbm") == pytest.approx(2 * base)
    (ref,) = perfmodel.predict("gemm", "mi300x", dtype="bf16", m=8192, n=8192, k=8192)
    (slow,) = perfmodel.predict("gemm", str(p), dtype="bf16", m=8192, n=8192, k=8192)
    # the serial latencies double; the exposed C writes (bandwidth, not latency) stay
    rounds = -(-ref.grid // (load_arch("mi300x").cus * ref.wgs_per_cu))
    assert slow.terms_s["fill"] - ref.terms_s["fill"] == pytest.approx(2 * rounds * base)
    assert slow.terms_s["compute:mfma:bf16"] == pytest.approx(ref.terms_s["compute:mfma:bf16"])
    assert slow.time_s > ref.time_s
