"""A cold kernel on a target with a measured figure (model_constants.yaml `cold_dirty_writeback`,
from benchmarks/device/cuda_microbench.py section `dirty` on an H100) writes back the L2 lines
another kernel left dirty: its device-memory term carries min(share x (R + W), l2_share x L2)
bytes beyond its own writes W, never both."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.arch import load_arch
from perfmodel.rates import bandwidth, constants
from perfmodel.sweep import sweep

MB = 1e6


def _hbm(s) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(term seconds, bytes read, bytes written, rate) of a sweep's device-memory term."""
    e = s.estimate
    return e.terms["memory:hbm"], e.work.bytes_read["hbm"], e.work.bytes_write["hbm"], e.rates_used.rate["memory:hbm"]


def test_h100_read_only_kernel_pays_the_measured_share_up_to_half_the_l2():
    a = load_arch("h100")
    c = constants()["cold_dirty_writeback"][a.gfx]
    share, cap = c["share"]["value"], c["l2_share"]["value"] * a.capacity("l2")
    n = np.array([2**20, 2**23, 2**25, 2**29])  # 2 MB to 1 GB of bf16 summed
    t, r, w, rate = _hbm(sweep("reduction", a, "bf16", n=n))
    extra = np.maximum(np.minimum(share * (r + w), cap) - w, 0.0)
    assert np.all(extra > 0)
    assert np.allclose(t, (r + w + extra) / rate)
    assert extra[-1] + w[-1] == pytest.approx(cap)  # 1 GB: every dirty line written back, no more
    assert cap == pytest.approx(25 * MB, rel=0.02)  # half the 50 MB L2, as measured


def test_own_writes_stand_for_the_write_back_they_displace():
    # elementwise out = 2x: W = R, so the write-back of what it displaces (0.32 x 2R) is below W
    t, r, w, rate = _hbm(sweep("elementwise", "h100", "fp32", n=np.array([2**20, 2**24])))
    assert np.allclose(t, (r + w) / rate)


def test_warm_runs_and_targets_without_a_figure_have_no_write_back():
    t, r, w, rate = _hbm(sweep("reduction", "h100", "bf16", n=np.array([2**28]), warm=True))
    assert np.allclose(t, (r + w) / rate)
    t, r, w, rate = _hbm(sweep("reduction", "mi300x", "bf16", n=np.array([2**28])))
    assert np.allclose(t, (r + w) / rate)


def test_the_note_says_so_and_the_bytes_stay_the_kernels_own():
    s = sweep("gemm", "h100", "bf16", m=16, n=8192, k=8192)
    assert any("dirty" in note for note in s.estimate.notes)
    assert s.estimate.work.bytes_write["hbm"][0] == pytest.approx(16 * 8192 * 2, rel=0.01)
    assert not any("dirty" in note for note in sweep("gemm", "mi300x", "bf16", m=16, n=8192, k=8192).estimate.notes)


def test_a_modelled_sequence_charges_each_write_once():
    # in `perfmodel model` every kernel is charged its own writes, so none pays another's again
    import perfmodel
    from perfmodel.models.traffic import writes_charged

    case = {"kernel": "gemm", "m": 16, "n": 8192, "k": 8192, "dtype": "bf16"}
    single = perfmodel.predict(arch="h100", cases=[case]).rows[0]
    with writes_charged():
        step = perfmodel.predict(arch="h100", cases=[case]).rows[0]
    a = load_arch("h100")
    c = constants()["cold_dirty_writeback"][a.gfx]
    r, w = 8192 * 8192 * 2 + 16 * 8192 * 2, 16 * 8192 * 2
    extra = min(c["share"]["value"] * (r + w), c["l2_share"]["value"] * a.capacity("l2")) - w
    rate = bandwidth(a, "hbm", False)[0]
    assert single["terms_us"]["memory:hbm"] - step["terms_us"]["memory:hbm"] == pytest.approx(extra / rate * 1e6, rel=0.02)
    assert "dirty" not in step.get("notes", "")
