"""A large sweep runs in chunks (`perfmodel.sweep.CHUNK`) for speed; its arrays must be the
one-pass arrays bit for bit, for every family, including the joined `Sweep.estimate`."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from test_estimate import BASE, dtype_for, families, scaled

from perfmodel.arch import load_arch
from perfmodel.sweep import sweep

# the module itself, whose CHUNK the tests shrink (``perfmodel.sweep`` may be the function)
sweep_module = importlib.import_module("perfmodel.sweep")

# sizes from 1/64 to 4x the base shape: small and large shapes, so chunks differ in which
# terms, notes and configurations their shapes have
SCALES = np.geomspace(1 / 64, 4, 23)


def _both(monkeypatch, family: str, arch: str):
    a = load_arch(arch)
    params = scaled(BASE[family], SCALES[:, None] * np.ones(2))  # a 2-D sweep of 46 shapes
    whole = sweep(family, a, dtype_for(a, family), **params)
    monkeypatch.setattr(sweep_module, "CHUNK", 5)  # ten chunks, the last of one shape
    chunked = sweep(family, a, dtype_for(a, family), **params)
    return whole, chunked


@pytest.mark.parametrize("arch", ["mi300x", "h100", "rx7900xtx"])
@pytest.mark.parametrize("family", families())
def test_chunked_sweep_is_the_one_pass_sweep(monkeypatch, family, arch):
    whole, chunked = _both(monkeypatch, family, arch)
    assert len(whole.estimates) == 1 and len(chunked.estimates) == 10
    for name in ("time_s", "bound", "tflops", "headroom", "roofline_time_s"):
        a, b = getattr(whole, name), getattr(chunked, name)
        assert a.shape == b.shape == (23, 2), name
        assert np.array_equal(a, b), name
    assert set(chunked.terms) == set(whole.terms)
    for t in whole.terms:
        assert np.array_equal(chunked.term(t), whole.term(t)), t
    joined, one = chunked.estimate, whole.estimate
    assert np.array_equal(joined.time_s, one.time_s)
    assert np.array_equal(joined.tflops, np.broadcast_to(one.tflops, joined.tflops.shape))
    for t, v in one.terms.items():
        assert np.array_equal(joined.terms[t], np.broadcast_to(v, joined.terms[t].shape)), t
    assert set(joined.notes) == set(one.notes)
    for note in one.notes:  # a note applies to the same shapes
        w1 = np.broadcast_to(one.note_where.get(note, True), (46,))
        w2 = np.broadcast_to(joined.note_where.get(note, True), (46,))
        assert np.array_equal(w1, w2), note


def test_a_term_no_shape_has_is_a_key_error():
    s = sweep("gemm", "mi300x", "bf16", m=np.array([1, 8192]), n=4096, k=4096)
    with pytest.raises(KeyError):
        s.term("no such term")


def test_a_rate_of_some_shapes_is_joined_per_shape(monkeypatch):
    """A rate that applies to some shapes only (`Work.rate_as`: AITER's MLA kernel at 128 query
    rows on gfx950, the ranked blocks at 16) stays per shape when the chunks are joined."""
    kw = dict(kv_heads=1, seq_q=1, seq_kv=4096, head_dim=576, head_dim_v=512, kv_shared=True, paged=True,
              block_size=1, batch=64)  # fmt: skip
    heads = np.array([128.0, 16.0, 16.0, 128.0])
    whole = sweep("attention", "mi355x", "fp8", heads=heads, **kw).estimate.rates_used.rate["compute:mfma:fp8"]
    monkeypatch.setattr(sweep_module, "CHUNK", 1)
    joined = sweep("attention", "mi355x", "fp8", heads=heads, **kw).estimate.rates_used.rate["compute:mfma:fp8"]
    assert np.shape(whole) == np.shape(joined) == (4,)
    assert np.array_equal(whole, joined)
    assert joined[0] == joined[3] < joined[1] == joined[2]
