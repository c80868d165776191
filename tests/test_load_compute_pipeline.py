"""A tiled kernel's load -> matrix pipeline with a finite prefetch buffer runs slower than its
slower stage near the ridge (two-stage line with exponential stages, K = prefetch depth + 3)."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.estimate import _load_compute_pipeline, _Terms
from perfmodel.rates import constants
from perfmodel.work import Launch, Work

K = constants()["k_loop_prefetch_depth"]["value"] + 3.0


def _run(compute, memory, tiled=True):
    w = Work()
    w.launch = Launch(grid=100, workgroup_size=256, tile_m=256.0 if tiled else 0.0)
    t = _Terms(time={"compute:mfma:bf16": np.array(compute, dtype=float), "memory:hbm": np.array(memory, dtype=float)})
    _load_compute_pipeline(w, t, np.shape(np.asarray(compute)))
    return t.time["compute:mfma:bf16"], t.time["memory:hbm"]


def test_equal_stages_take_k_plus_one_over_k():
    c, m = _run([2.0], [2.0])
    assert float(c[0]) == pytest.approx(2.0 * (K + 1) / K)  # 1.2 with Tensile's prefetch depth 2
    assert float(m[0]) == pytest.approx(2.0 * (K + 1) / K)


def test_the_slower_stage_is_stretched_by_the_closed_form():
    c, m = _run([1.0, 4.0], [2.0, 1.0])
    r = np.array([0.5, 0.25])
    f = (1 - r ** (K + 1)) / (1 - r**K)
    assert float(m[0]) == pytest.approx(2.0 * f[0]) and float(c[0]) == 1.0  # memory is the slower stage
    assert float(c[1]) == pytest.approx(4.0 * f[1]) and float(m[1]) == 1.0
    assert 1.0 < f[1] < f[0] < (K + 1) / K  # far from the ridge the line runs at its slower stage


def test_streaming_kernels_are_not_pipelines_of_tiles():
    c, m = _run([2.0], [2.0], tiled=False)
    assert float(c[0]) == 2.0 and float(m[0]) == 2.0


def _simulated_throughput(mean_load, mean_compute, buffer, n=40000, seed=1, fixed_compute=False):
    """Two stations in series, exponential service (the compute stage constant if
    `fixed_compute`), `buffer` places between them; the first holds a finished item while the
    buffer is full (blocking after service)."""
    rng = np.random.default_rng(seed)
    load = rng.exponential(mean_load, n)
    comp = np.full(n, mean_compute) if fixed_compute else rng.exponential(mean_compute, n)
    start2, end2 = np.zeros(n), np.zeros(n)
    t1 = 0.0
    for i in range(n):
        t1 += load[i]
        if i > buffer:
            t1 = max(t1, start2[i - buffer - 1])
        start2[i] = max(t1, end2[i - 1] if i else 0.0)
        end2[i] = start2[i] + comp[i]
    return n / end2[-1]


@pytest.mark.parametrize(("buffer", "ratio"), [(0, 1.0), (2, 1.0), (2, 0.5)])
def test_the_closed_form_matches_a_simulated_line(buffer, ratio):
    k = buffer + 3.0
    expect = (1 - ratio**k) / (1 - ratio ** (k + 1)) if ratio < 1 else k / (k + 1)  # x the slow rate
    got = _simulated_throughput(1.0, ratio, buffer)  # slow stage: loads at rate 1
    assert got == pytest.approx(expect, rel=0.02)


def test_a_chain_of_one_wave_is_serial_and_more_waves_hide_more():
    from perfmodel.estimate import _closed_cycle_stretch

    short, long = np.array([1.0, 1.0, 1.0, 1.0]), np.array([2.0, 2.0, 2.0, 2.0])
    f = _closed_cycle_stretch(short, long, np.array([1.0, 2.0, 4.0, 64.0]))
    assert float(f[0]) == pytest.approx(1.5)  # one wave: matrix then softmax, the sum
    assert f[0] > f[1] > f[2] > f[3] >= 1.0 and float(f[3]) == pytest.approx(1.0, abs=1e-12)
    assert float(_closed_cycle_stretch(np.array([2.0]), np.array([2.0]), np.array([2.0]))[0]) == pytest.approx(1.5)


def test_a_constant_compute_stage_loses_less_than_the_closed_form():
    """The closed form's exponential compute stage is the pessimistic end (docs/models-tiled.md):
    with a constant compute stage the line at the ridge is x 1.12 slower, not x 1.2 (B = 2)."""
    got = 1.0 / _simulated_throughput(1.0, 1.0, 2, fixed_compute=True)
    assert got == pytest.approx(1.12, abs=0.02)
    assert got < (K + 1) / K


def _fill(compute, memory, steps, grid=100, wgs_per_cu=2.0, cus=100, tiled=True):
    from perfmodel.estimate import _pipeline_fill

    w = Work()
    w.launch = Launch(grid=grid, workgroup_size=256, tile_m=256.0 if tiled else 0.0, k_steps=steps)
    t = _Terms(time={"compute:mfma:bf16": np.array([compute]), "memory:hbm": np.array([memory])})
    faster = _load_compute_pipeline(w, t, (1,))
    rounds = np.array([np.ceil(grid / (cus * wgs_per_cu))])
    return float(_pipeline_fill(w.launch, faster, rounds, np.array([wgs_per_cu < 2]), (1,))[0])


@pytest.mark.parametrize(("load", "comp", "n"), [(1.0, 3.0, 1), (3.0, 1.0, 4), (2.0, 2.0, 8)])
def test_a_short_loop_lasts_n_slower_steps_plus_one_faster(load, comp, n):
    """Loads of step i+1 overlap the matrix work of step i; the first load and the last matrix
    step have nothing beside them: a deterministic two-stage line of n steps takes
    n max(a, b) + min(a, b), which is the body (n max) plus the fill `_pipeline_fill` adds."""
    t_load, t_comp = 0.0, 0.0
    for _ in range(n):  # the line with constant stage times, unlimited buffer
        t_load += load
        t_comp = max(t_comp, t_load) + comp
    body = n * max(load, comp)
    # one round of tiles (grid <= CUs): the whole kernel is one such line per CU
    assert t_comp - body == pytest.approx(_fill(n * comp, n * load, n, grid=100, cus=100))


def test_the_pipeline_fill_is_paid_per_round_only_where_a_tile_runs_alone():
    # 4 rounds of 8 steps, compute 32 s in all: one step of one round is 1 s of the faster stage
    assert _fill(32.0, 64.0, 8, grid=400, wgs_per_cu=1.0, cus=100) == pytest.approx(4.0)  # alone: every round
    assert _fill(32.0, 64.0, 8, grid=800, wgs_per_cu=2.0, cus=100) == pytest.approx(1.0)  # hidden after the first
    assert _fill(32.0, 64.0, 0) == 0.0 and _fill(32.0, 64.0, 8, tiled=False) == 0.0
