"""The shipped error-band file and its loader."""

from perfmodel.error_bands import band, bands
from perfmodel.models.registry import all_models


def test_every_band_is_ordered_and_sourced():
    b = bands()
    assert "pooled" in b
    for fam, e in b.items():
        assert 0 < e["p10"] <= e["p90"], fam
        assert e["n"] >= 0 and e["basis"]


def test_band_of_a_family_and_fallback():
    lo, hi, n, basis = band("gemm")
    assert 0 < lo <= hi and n >= 5 and "family" in basis
    lo2, hi2, n2, basis2 = band("no_such_kernel")
    p = bands()["pooled"]
    assert (lo2, hi2, n2) == (p["p10"], p["p90"], 0) and "pooled" in basis2


def test_small_families_fall_back_to_pooled():
    p = bands()["pooled"]
    for fam, e in bands().items():
        if fam != "pooled" and e["n"] < 5:
            assert (e["p10"], e["p90"]) == (p["p10"], p["p90"]) and "pooled" in e["basis"]
    # every family a user can predict gets a band
    for k in all_models():
        assert band(k)[0] > 0
