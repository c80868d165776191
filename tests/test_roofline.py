"""Roofline maths: attainable rate, ridge points, per-term times and bound classification."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfmodel.arch import load_arch
from perfmodel.errors import InputError
from perfmodel.roofline import RooflineModel, attainable, classify, ridge, roofline, term_times

PEAK = 1000e12  # 1 PFLOP/s
BW = 5e12  # 5 TB/s -> ridge at 200 FLOP/B


# --- attainable / ridge ------------------------------------------------------------------
def test_ridge():
    assert ridge(PEAK, BW) == pytest.approx(200.0)
    assert ridge(0.0, BW) == 0.0
    assert ridge(PEAK, 0.0) == math.inf


def test_attainable_below_at_above_ridge():
    assert float(attainable(1.0, PEAK, BW)) == pytest.approx(BW)  # memory slope
    assert float(attainable(100.0, PEAK, BW)) == pytest.approx(PEAK / 2)
    assert float(attainable(200.0, PEAK, BW)) == pytest.approx(PEAK)  # exactly at the ridge
    assert float(attainable(200.0 * (1 - 1e-9), PEAK, BW)) < PEAK
    assert float(attainable(1e6, PEAK, BW)) == PEAK  # flat compute roof
    assert float(attainable(math.inf, PEAK, BW)) == PEAK


def test_attainable_zero_ai():
    assert float(attainable(0.0, PEAK, BW)) == 0.0
    assert float(attainable(0, PEAK, 0.0)) == 0.0


def test_attainable_returns_array_for_scalar_and_list():
    r = attainable(50, PEAK, BW)
    assert np.ndim(r) == 0 and float(r) == pytest.approx(PEAK / 4)
    r = attainable([1, 200, 1000], PEAK, BW)
    np.testing.assert_allclose(r, [BW, PEAK, PEAK])


def test_attainable_million_points():
    ai = np.logspace(-3, 5, 1_000_000)
    y = attainable(ai, PEAK, BW)
    assert y.shape == (1_000_000,)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, np.minimum(PEAK, ai * BW))
    assert np.all(np.diff(y) >= 0), "attainable is monotone in AI"
    assert y.max() == PEAK
    below = ai < ridge(PEAK, BW)
    np.testing.assert_allclose(y[below], ai[below] * BW)
    assert np.all(y[~below] == PEAK)


def test_attainable_2d_shape_preserved():
    ai = np.ones((3, 4)) * 10
    assert attainable(ai, PEAK, BW).shape == (3, 4)


def test_attainable_negative_roof_rejected():
    with pytest.raises(ValueError):
        attainable(1.0, -1.0, BW)
    with pytest.raises(ValueError):
        attainable(1.0, PEAK, -1.0)


# --- term_times / classify -----------------------------------------------------------------
def _lab(labels) -> list[str]:
    """Labels as a list, whether classify got scalars (one label) or arrays."""
    return np.atleast_1d(np.asarray(labels, dtype=object)).tolist()


RATES = {"mfma:bf16": PEAK, "valu:fp32": 100e12}
BWS = {"hbm": BW, "l2": 20e12, "lds": 80e12}


def test_term_times_values_and_names():
    t = term_times({"mfma:bf16": 2e12}, {"hbm": 5e9, "l2": 40e9}, RATES, BWS)
    assert set(t) == {"compute:mfma:bf16", "memory:hbm", "memory:l2"}
    assert float(t["compute:mfma:bf16"]) == pytest.approx(2e-3)
    assert float(t["memory:hbm"]) == pytest.approx(1e-3)
    assert float(t["memory:l2"]) == pytest.approx(2e-3)


def test_term_times_missing_rate_is_an_error_not_a_silent_drop():
    with pytest.raises(KeyError):
        term_times({"wmma:fp16": 1.0}, {}, RATES, BWS)
    with pytest.raises(KeyError):
        term_times({}, {"mall": 1.0}, RATES, BWS)


def test_classify_compute_bound():
    labels, t = classify(term_times({"mfma:bf16": 1e15}, {"hbm": 1e9}, RATES, BWS))
    assert _lab(labels) == "compute:mfma".split()
    assert float(t) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("level", "nbytes"),
    [("hbm", 5e12), ("l2", 20e12), ("lds", 80e12)],
)
def test_classify_memory_bound_per_level(level, nbytes):
    by = {"hbm": 1e9, "l2": 1e9, "lds": 1e9}
    by[level] = nbytes  # 1 s at that level, the rest negligible
    labels, t = classify(term_times({"mfma:bf16": 1e12}, by, RATES, BWS))
    assert _lab(labels) == f"memory:{level}".split()
    assert float(t) == pytest.approx(1.0)


def test_classify_vector_pipe_label_collapses_dtype():
    labels, _ = classify(term_times({"valu:fp32": 100e12, "mfma:bf16": 1e12}, {"hbm": 1.0}, RATES, BWS))
    assert _lab(labels) == ["compute:valu"]


def test_classify_tie_takes_the_first_term():
    """Equal times: the first term in the mapping wins (argmax), deterministically."""
    times = {"compute:mfma:bf16": 1.0, "memory:hbm": 1.0}
    labels, t = classify(times)
    assert _lab(labels) == ["compute:mfma"] and float(t) == 1.0
    labels, _ = classify({"memory:hbm": 1.0, "compute:mfma:bf16": 1.0})
    assert _lab(labels) == ["memory:hbm"]


def test_classify_single_term():
    labels, t = classify({"memory:hbm": np.array([1.0, 2.0])})
    assert _lab(labels) == ["memory:hbm", "memory:hbm"]
    np.testing.assert_allclose(t, [1.0, 2.0])


def test_classify_empty_is_an_error():
    with pytest.raises(ValueError, match="nothing to classify"):
        classify({})


def test_classify_vectorised_with_broadcast():
    n = 1_000_000
    flops = np.linspace(0, 2e12, n)  # crosses the hbm term (1 ms) halfway: 1e12 flop / 1e15 = 1 ms
    times = term_times({"mfma:bf16": flops}, {"hbm": 5e9}, RATES, BWS)  # hbm is a scalar
    labels, t = classify(times)
    assert labels.shape == (n,) and t.shape == (n,)
    np.testing.assert_allclose(t, np.maximum(flops / PEAK, 1e-3))
    assert labels[0] == "memory:hbm" and labels[-1] == "compute:mfma"
    switch = np.argmax(labels == "compute:mfma")
    assert flops[switch] / PEAK > 1e-3 and flops[switch - 1] / PEAK <= 1e-3


def test_classify_zero_work_everywhere():
    labels, t = classify(term_times({"mfma:bf16": 0.0}, {"hbm": 0.0}, RATES, BWS))
    assert float(t) == 0.0
    assert _lab(labels)[0] in ("compute:mfma", "memory:hbm")


# --- RooflineModel on a real arch ----------------------------------------------------------
def test_roofline_model_mi300x():
    m = roofline("mi300x")
    assert isinstance(m, RooflineModel)
    a = load_arch("mi300x")
    assert {c.name for c in m.memory} == set(a.levels)
    assert "mfma:bf16" in {c.name for c in m.compute}
    assert all(c.kind == "compute" for c in m.compute) and all(c.kind == "memory" for c in m.memory)


def test_ridge_points_theoretical_and_measured():
    m = roofline("mi300x")
    rows = m.ridge_points()
    assert len(rows) == len(m.compute) * len(m.memory)
    r = next(x for x in rows if x["compute"] == "mfma:bf16" and x["level"] == "hbm")
    a = load_arch("mi300x")
    assert r["ridge_flop_per_byte"] == pytest.approx(a.peak_flops("mfma", "bf16") / a.bandwidth("hbm"))
    assert r["ridge_flop_per_byte"] == pytest.approx(1307.4e12 / 5.3248e12, rel=1e-3)
    meas = m.ridge_points(achievable=True)
    # only ceilings that have a measured value on both sides
    assert 0 < len(meas) < len(rows)
    rb = next(x for x in meas if x["compute"] == "mfma:bf16" and x["level"] == "hbm")
    assert rb["ridge_flop_per_byte"] == pytest.approx(708e12 / 4.11e12)


def test_model_attainable_and_measured_fallback():
    m = roofline("mi300x")
    a = load_arch("mi300x")
    y = m.attainable(np.array([1.0, 1e4]), "mfma:bf16", "hbm")
    np.testing.assert_allclose(y, [a.bandwidth("hbm"), a.peak_flops("mfma", "bf16")])
    ym = m.attainable(np.array([1.0, 1e4]), "mfma:bf16", "hbm", achievable=True)
    np.testing.assert_allclose(ym, [4.11e12, 708e12])
    # a roof without a measured value falls back to the theoretical one
    yl = m.attainable(1e6, "mfma:fp64", "lds", achievable=True)
    assert float(yl) == pytest.approx(a.peak_flops("mfma", "fp64"))


def test_table_rows():
    m = roofline("mi300x")
    rows = m.table()
    assert len(rows) == len(m.compute) + len(m.memory)
    bf16 = next(r for r in rows if r["ceiling"] == "mfma:bf16")
    assert bf16["kind"] == "compute" and bf16["unit"] == "TFLOP/s"
    assert bf16["theoretical"] == pytest.approx(1307.4, rel=1e-3)
    assert bf16["measured"] == pytest.approx(708)
    assert bf16["ridge_vs_hbm"] == pytest.approx(1307.4 / 5.3248, rel=1e-3)
    assert bf16["source"].startswith("S2") and bf16["measured_by"]
    hbm = next(r for r in rows if r["ceiling"] == "hbm")
    assert hbm["kind"] == "memory" and hbm["unit"] == "TB/s"
    assert hbm["theoretical"] == pytest.approx(5.3248)
    assert hbm["measured"] == pytest.approx(4.11)
    assert hbm["ridge_vs_hbm"] is None


def test_table_rdna_uses_vram():
    rows = roofline("rx7900xtx").table()
    assert all("ridge_vs_vram" in r for r in rows)
    assert any(r["ceiling"] == "vram" for r in rows)


def test_roofline_dtype_filter():
    m = roofline("mi300x", dtypes=["bf16"])
    assert {c.name for c in m.compute} == {"mfma:bf16", "valu:bf16"}
    assert len(m.memory) == len(load_arch("mi300x").levels)


def test_roofline_sparse_adds_sparse_roofs():
    m = roofline("mi300x", dtypes=["fp8"], sparse=True)
    sparse = [c for c in m.compute if c.sparse]
    assert [c.name for c in sparse] == ["mfma:fp8"]
    assert sparse[0].theoretical == pytest.approx(2 * load_arch("mi300x").peak_flops("mfma", "fp8"))


def test_roofline_dtype_the_arch_lacks():
    with pytest.raises(InputError, match="fp4") as e:
        roofline("mi300x", dtypes=["bf16", "fp4"])
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="mi100 .* has no fp8"):
        roofline("mi100", dtypes=["fp8"])
    with pytest.raises(InputError, match="rx6900xt .* has no bf16"):
        roofline("rx6900xt", dtypes=["bf16"])


def test_roofline_unknown_arch():
    with pytest.raises(InputError, match="did you mean 'mi300x'"):
        roofline("mi300")


def test_roofline_accepts_arch_object():
    a = load_arch("mi250x")
    assert roofline(a).arch is a


def test_matrix_ceiling_is_the_rate_the_estimator_uses_so_no_prediction_lies_above_it():
    """A measured GEMM rate whose benchmark shape fills the CUs in part (MI300X FP8 8192^3) is
    drawn divided by that fill: the rate the estimator uses, above the benchmark figure."""
    from perfmodel.prediction import predict
    from perfmodel.rates import compute_rate

    model = roofline("mi300x")
    assert all(c.fill == 1.0 for c in model.compute)  # the table's roofs: the published figures
    fp8 = next(c for c in model.compute_filled if c.name == "mfma:fp8")
    assert fp8.fill < 1.0 and fp8.ceiling > fp8.achievable
    assert fp8.ceiling == pytest.approx(compute_rate(model.arch, "mfma", "fp8")[0])
    bf16 = next(c for c in model.compute_filled if c.name == "mfma:bf16")
    assert bf16.ceiling == pytest.approx(compute_rate(model.arch, "mfma", "bf16")[0])
    # the README suite's FP8 prefill GEMM ran above the benchmark figure; it stays under the ceiling
    (p,) = predict("gemm", arch="mi300x", dtype="fp8", m=8192, n=28672, k=8192)
    assert fp8.achievable < p.tflops * 1e12 <= fp8.ceiling
    assert model.attainable(1e9, "mfma:fp8", "hbm", achievable=True) == pytest.approx(fp8.ceiling)
