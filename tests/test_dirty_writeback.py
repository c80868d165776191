"""A cold kernel on a GPU whose spec has a measured figure (`memory.l2.dirty_writeback`, from
benchmarks/device/cuda_microbench.py section `dirty` on an H100 and an H200) writes back the L2
lines another writer left dirty: its device-memory term carries min(share x (R + W),
of_capacity x L2) bytes beyond its own writes W, never both."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.arch import load_arch
from perfmodel.rates import bandwidth
from perfmodel.sweep import sweep


def _hbm(s) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(term seconds, bytes read, bytes written, rate) of a sweep's device-memory term."""
    e = s.estimate
    return e.terms["memory:hbm"], e.work.bytes_read["hbm"], e.work.bytes_write["hbm"], e.rates_used.rate["memory:hbm"]


def _figures(a) -> tuple[float, float]:
    c = a.level("l2")["dirty_writeback"]
    return c["share"].value, c["of_capacity"].value * a.capacity("l2")


@pytest.mark.parametrize("arch", ["h100", "h200"])
def test_read_only_kernel_pays_the_measured_share_up_to_half_the_l2(arch):
    a = load_arch(arch)
    share, cap = _figures(a)
    n = np.array([2**20, 2**23, 2**25, 2**29])  # 2 MB to 1 GB of bf16 summed
    t, r, w, rate = _hbm(sweep("reduction", a, "bf16", n=n))
    extra = np.maximum(np.minimum(share * (r + w), cap) - w, 0.0)
    assert np.all(extra > 0)
    assert np.allclose(t, (r + w + extra) / rate)
    assert extra[-1] + w[-1] == pytest.approx(cap)  # 1 GB: every dirty line written back, no more
    assert cap == pytest.approx(0.5 * a.capacity("l2"), rel=0.1)  # about half the L2, as measured


def test_own_writes_stand_for_the_write_back_they_displace():
    # elementwise out = 2x: W = R, so the write-back of what it displaces (share x 2R) is below W
    t, r, w, rate = _hbm(sweep("elementwise", "h100", "fp32", n=np.array([2**20, 2**24])))
    assert np.allclose(t, (r + w) / rate)


def test_warm_runs_and_targets_without_a_figure_have_no_write_back():
    t, r, w, rate = _hbm(sweep("reduction", "h100", "bf16", n=np.array([2**28]), warm=True))
    assert np.allclose(t, (r + w) / rate)
    for arch in ("mi300x", "a100"):  # no figure measured: no write-back
        t, r, w, rate = _hbm(sweep("reduction", arch, "bf16", n=np.array([2**28])))
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
    share, cap = _figures(a)
    r, w = 8192 * 8192 * 2 + 16 * 8192 * 2, 16 * 8192 * 2
    extra = min(share * (r + w), cap) - w
    rate = bandwidth(a, "hbm", False)[0]
    assert single["terms_us"]["memory:hbm"] - step["terms_us"]["memory:hbm"] == pytest.approx(extra / rate * 1e6, rel=0.02)
    assert "dirty" not in step.get("notes", "")
