"""The estimator's and the tile ranking's faster numpy forms give the very bits of the forms they
replace (numbers must not move): the largest term by `np.maximum` where no nan or -0.0 can tell
it from the masked copy, the elementwise maximum of a list without stacking it, whole powers of
two by `np.exp2`, the tile ranking's running best by `np.minimum`."""

from __future__ import annotations

import numpy as np
import pytest

SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1.0, 2.5, 1e300, -3.0])


def _arrays(rng, k: int, n: int, special: float) -> list[np.ndarray]:
    out = []
    for _ in range(k):
        a = rng.random(n) * 10.0 ** rng.integers(-9, 3)
        a[rng.random(n) < 0.3] = rng.choice([1.0, 2.0], 1)[0]  # ties
        mask = rng.random(n) < special
        a[mask] = rng.choice(SPECIAL, mask.sum())
        out.append(a)
    return out


@pytest.fixture
def shortcuts_on_small_arrays(monkeypatch):
    """`select` and `tabled` take their shortcuts from one element up (batches of 1024 and more
    otherwise), so small test arrays exercise them."""
    monkeypatch.setattr("perfmodel.estimate.SHORTCUT_MIN", 1)
    monkeypatch.setattr("perfmodel.models.tiles.SHORTCUT_MIN", 1)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("special", [0.0, 0.01, 0.5])
def test_largest_term_and_maximum_of_a_list(special):
    from perfmodel.estimate import _largest
    from perfmodel.roofline import largest_term

    def reference(arrays):  # the masked copies it replaced
        best = np.array(arrays[0], dtype=float, copy=True)
        idx = np.zeros(best.shape, dtype=np.intp)
        for i, a in enumerate(arrays[1:], 1):
            better = a > best
            np.copyto(best, a, where=better)
            idx[better] = i
        return idx, best

    rng = np.random.default_rng(7)
    for k in (1, 2, 3, 7):
        for n in (1, 5, 1000):
            arrays = _arrays(rng, k, n, special)
            got, want = largest_term(arrays), reference(arrays)
            assert _same(got[0], want[0]) and _same(got[1], want[1])
            assert _same(_largest(arrays), np.maximum.reduce(arrays))
    scalars = [np.array(1.0), np.array(-0.0), np.array(3.0)]
    assert all(_same(g, w) for g, w in zip(largest_term(scalars), reference(scalars), strict=True))


def test_whole_powers_of_two():
    from perfmodel.models.tiles import pow2

    e = np.concatenate((np.arange(-1080.0, 1030.0), [np.inf, -np.inf, np.nan, -0.0]))
    with np.errstate(over="ignore"):
        assert _same(pow2(e), 2.0**e)
    assert _same(pow2(np.floor(np.float64(5.5))), 2.0 ** np.floor(np.float64(5.5)))


def test_tile_ranking_running_best():
    """`_keep_better` (np.fmin, which keeps the best where a cost is nan) leaves every comparison
    the ranking makes as the masked copy does, and falls back to it on a partial mask."""
    from perfmodel.models.gemm_tiling import _keep_better

    rng = np.random.default_rng(3)
    for special in (0.0, 0.2):
        costs = _arrays(rng, 6, 500, special)
        fast, ref = np.full(500, np.inf), np.full(500, np.inf)
        for c in costs:
            better = c < fast
            assert (better == (c < ref)).all()
            _keep_better(fast, c, better, True)
            np.copyto(ref, c, where=better)
            assert np.array_equal(fast, ref)  # the same values (0.0 == -0.0: the comparisons agree)
        only = rng.random(500) < 0.5
        c = rng.random(500)
        better = (c < fast) & only
        before = fast.copy()
        _keep_better(fast, c, better, False)
        assert _same(fast, np.where(better, c, before))


def test_plain_terms_by_their_minimum():
    """`roofline._plain` decides from the minimum where it is positive, as the element tests do."""
    from perfmodel.roofline import _plain

    def reference(a):
        return not (np.signbit(a).any() or np.isnan(a).any())

    rng = np.random.default_rng(11)
    for special in (0.0, 0.001, 0.3):
        for a in _arrays(rng, 8, 300, special):
            assert _plain(a) == reference(a)
    for a in (np.array([]), np.array(-0.0), np.array([0.0, 1.0]), np.array([1.0, np.nan]), np.array([np.inf, 2.0])):
        assert _plain(a) == reference(a)


def test_xcds_per_b_panel_table():
    """`tiles._xcds_per_b_panel` (a table per whole tile count) gives the elementwise
    ``x / gcd(b mod x, x)`` bit for bit, and falls back to it on anything not a small whole count."""
    import math

    from perfmodel.models.tiles import _xcds_per_b_panel

    def reference(x, b):
        gcd = np.array([math.gcd(i, int(x)) for i in range(int(x))], dtype=float)
        return x / np.take(gcd, np.mod(b, x).astype(np.int64))

    rng = np.random.default_rng(5)
    for x in (2.0, 4.0, 8.0, 32.0):
        for b in (rng.integers(1, 320, 1000).astype(float), np.array([1.0]), np.array([5000.0, 3.0]), np.array([2.5, 4.0])):
            assert _same(_xcds_per_b_panel(x, b), reference(x, b))


def test_gemv_rows_k_tested_where_m_is_small():
    """`gemv_rows` tests K's multiple of 8 only where M allows the GEMV: the same mask."""
    from perfmodel.arch import load_arch
    from perfmodel.models.gemm_tiling import GEMV_MAX_M, gemv_rows

    a = load_arch("mi300x")
    rng = np.random.default_rng(9)
    m = rng.integers(1, 9, 2000).astype(float)
    k = rng.integers(1, 100, 2000).astype(float)
    k[:5] = [8.5, 16.0, 0.0, 1e300, 24.0]
    want = (m <= GEMV_MAX_M) & (np.mod(k, 8) == 0)
    assert _same(gemv_rows(a, "bf16", m, k, "auto", False, "none"), want)
    assert _same(gemv_rows(a, "bf16", np.float64(2.0), np.float64(16.0), "auto", False, "none"), np.array(True))
    assert _same(gemv_rows(a, "bf16", m[:, None], k[None, :50], "auto", False, "none"), (m[:, None] <= 4) & (np.mod(k[None, :50], 8) == 0))


def test_take_labels_is_np_take():
    """`estimate.take_labels` (rows of code points) is ``np.take`` of the label list, bit for bit."""
    from perfmodel.estimate import take_labels

    labels = ["compute:mfma", "memory:hbm", "é中文", "", "latency"]
    rng = np.random.default_rng(2)
    for code in (rng.integers(0, 5, 1000), np.array([4]), np.zeros(0, dtype=np.intp), rng.integers(0, 5, (7, 3))):
        assert _same(take_labels(labels, code), np.take(labels, code))
    assert take_labels(labels, np.intp(2)) == np.take(labels, np.intp(2))


def test_cached_tile_questions():
    """`tiles.wave_grid_of` and the remembered `tiles.runs_alone` answer as the uncached forms."""
    from perfmodel.arch import load_arch
    from perfmodel.models.tiles import GEMM_TILES, _runs_alone, runs_alone, wave_grid, wave_grid_of

    for key in ("mi300x", "h100", "rx7900xtx"):
        a = load_arch(key)
        for t in GEMM_TILES:
            wr, wc = wave_grid(t.m, t.n, t.lanes, a.wave_size)
            assert wave_grid_of(t.m, t.n, t.lanes, a.wave_size) == (float(wr), float(wc))
            for tk, elem in ((64, 2.0), (32, 4.0), (16, 1.0)):
                assert runs_alone(a, t, tk, elem, 4.0) == _runs_alone(a, t, tk, elem, 4.0)
                assert runs_alone(a, t, tk, elem, 4.0) == _runs_alone(a, t, tk, elem, 4.0)  # from the cache


def test_tabled_functions_of_whole_numbers(shortcuts_on_small_arrays):
    """`tiles.tabled` (a function of whole numbers tabled once and gathered) gives the function's
    own bits, and calls it directly on anything else; `fill_split` and `wave_grid` through it
    equal their elementwise forms."""
    from perfmodel.models.tiles import SPLITS, pow2, tabled

    f = lambda x: pow2(np.floor(np.log2(np.maximum(304.0 / np.maximum(x, 1.0), 1.0))))  # noqa: E731
    rng = np.random.default_rng(4)
    for x in (rng.integers(0, 5000, 3000).astype(float), np.array([3.0]), np.array([2.5, 4.0]), np.array([-1.0, 2.0]),
              np.array([np.nan, 1.0]), np.array([1e30]), np.zeros(0), np.float64(7.0)):  # fmt: skip
        with np.errstate(all="ignore"):
            assert _same(tabled(f, x, 1 << 16), f(x))
    two = lambda x: (x * 3.0, x / 7.0)  # noqa: E731
    x = rng.integers(0, 50, 100).astype(float)
    assert all(_same(a, b) for a, b in zip(tabled(two, x, 100), two(x), strict=True))

    from perfmodel.models import tiles

    def fill_split_ref(cus, grid1, depth, step):
        grid1 = np.maximum(np.asarray(grid1, dtype=float), 1.0)
        s = pow2(np.floor(np.log2(np.maximum(cus / grid1, 1.0))))
        s = np.minimum(np.minimum(s, SPLITS[-1]), pow2(np.floor(np.log2(np.maximum(np.asarray(depth) / (2.0 * step), 1.0)))))
        return np.where(grid1 * 2 <= cus, s, 1.0)

    def wave_grid_ref(tm, tn, lanes, wave_size):
        w = np.maximum(np.asarray(lanes, dtype=float) / wave_size, 1.0)
        small = pow2(np.floor(np.log2(w) / 2))
        big = w / small
        tall = np.asarray(tm) >= np.asarray(tn)
        return np.where(tall, big, small), np.where(tall, small, big)

    grid = rng.integers(0, 400, 2000).astype(float)
    for depth in (rng.integers(1, 70000, 2000).astype(float), rng.random(2000) * 5e6, np.full(2000, 2.0**40)):
        for step in (16, 32, 64):
            assert _same(tiles.fill_split(304.0, grid, depth, step), fill_split_ref(304.0, grid, depth, step))
    tm, tn = rng.choice([16.0, 64.0, 256.0], 500), rng.choice([64.0, 128.0], 500)
    for lanes in (rng.choice([64.0, 256.0, 1024.0, 96.0], 500), rng.random(500) * 300, np.float64(256.0)):
        for ws in (32, 64):
            assert all(_same(a, b) for a, b in zip(tiles.wave_grid(tm, tn, lanes, ws), wave_grid_ref(tm, tn, lanes, ws), strict=True))


def test_clip_from_one():
    """`estimate.clip_from_one` is ``np.clip(x, 1, hi)`` bit for bit, nan payloads and signed zeros included."""
    from perfmodel.estimate import clip_from_one

    rng = np.random.default_rng(8)
    x, hi = rng.choice(SPECIAL, 5000), rng.choice(SPECIAL, 5000)
    payload = np.frombuffer(np.uint64(0x7FF8000000000123).tobytes(), dtype=np.float64)[0]
    x[:40], hi[40:80], hi[80:120] = payload, payload, -payload
    for h in (hi, 16.0, np.float64(0.0), rng.integers(0, 9, 5000).astype(float)):
        assert _same(clip_from_one(x, h), np.clip(x, 1, h))
        assert _same(clip_from_one(x, h), np.clip(x, 1.0, h))


def test_select_is_np_where(shortcuts_on_small_arrays):
    """`estimate.select` gives np.where's array, bit for bit, on uniform, sparse and even masks,
    scalar and array sides, nan payloads and signed zeros; other operands go to np.where."""
    from perfmodel.estimate import select

    rng = np.random.default_rng(12)
    n = 3000
    payload = np.frombuffer(np.uint64(0x7FF8000000000123).tobytes(), dtype=np.float64)[0]
    x, y = rng.choice(SPECIAL, n), rng.choice(SPECIAL, n)
    x[:30], y[30:60] = payload, -payload
    for p in (0.0, 0.02, 0.5, 0.97, 1.0):
        c = rng.random(n) < p
        for a, b in ((x, y), (x, 2.0), (-0.0, y), (1.5, 2.5), (x[:1], y), (np.float64(3.0), y)):
            got, want = select(c, a, b), np.where(c, a, b)
            assert _same(got, want) and got.flags.writeable
        assert _same(select(c, x, 2), np.where(c, x, 2))  # an int side: np.where itself
    c2 = rng.random((40, 1)) < 0.5
    assert _same(select(c2, x[:30].reshape(1, 30), 0.0), np.where(c2, x[:30].reshape(1, 30), 0.0))
    assert _same(select(np.ones((5, 1), bool), 1.0, rng.random(7)), np.where(np.ones((5, 1), bool), 1.0, rng.random(7)))
    assert _same(select(np.bool_(True), 1.0, 2.0), np.where(np.bool_(True), 1.0, 2.0))


def test_sweep_input_check():
    """`sweep._finite_from` refuses exactly what ``any(v < minimum) or not all(isfinite(v))`` refuses."""
    from perfmodel.sweep import _finite_from

    rng = np.random.default_rng(13)
    for minimum in (0.0, 1.0, -np.inf):
        for _ in range(200):
            v = rng.choice(np.concatenate((SPECIAL, [3.0, 7.0, 0.5])), rng.integers(0, 6))
            assert _finite_from(v, minimum) == (not (np.any(v < minimum) or not np.all(np.isfinite(v))))
