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
    """`_keep_better` (np.minimum where the costs hold no nan) leaves every comparison the
    ranking makes as the masked copy does, and falls back to it on a nan or a partial mask."""
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
