"""Ceilings that cannot contradict the hardware: a cache on the global-memory path is never
slower than the level behind it, and a placeholder ceiling says so in the output."""

from __future__ import annotations

import pytest

from perfmodel.arch import arch_keys, load_arch
from perfmodel.rates import bandwidth
from perfmodel.vocab import GLOBAL_PATH


@pytest.mark.parametrize("key", arch_keys())
@pytest.mark.parametrize("first_principles", [False, True])
def test_achievable_bandwidth_never_rises_outward(key, first_principles):
    a = load_arch(key)
    path = [lv for lv in GLOBAL_PATH if lv in a.levels and lv != "l1"]  # l1 is per CU, off the shared path
    rates = [bandwidth(a, lv, first_principles)[0] for lv in path]
    assert all(inner >= outer for inner, outer in zip(rates, rates[1:], strict=False)), dict(zip(path, rates, strict=True))


def test_mi355x_mall_placeholder_is_raised_to_hbm_and_said():
    import perfmodel

    a = load_arch("mi355x")
    rate, _, prov = bandwidth(a, "mall")
    assert rate == bandwidth(a, "hbm")[0] and "hbm ceiling is used" in prov and "tag A" in prov
    (p,) = perfmodel.predict("gemm", "mi355x", dtype="bf16", m=16, n=8192, k=8192, warm=True)
    assert "mall ceiling of mi355x is a placeholder" in (p.notes or "")
