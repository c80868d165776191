"""GEMM terms the estimator charges for a tile configuration: padding of partial tiles on the
matrix pipe, the K loop's latency floor, split-K partial traffic and serial latencies (fill)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from model_runs import pipeline_fill_s, split_reduction_s

from perfmodel.arch import load_arch
from perfmodel.estimate import estimate
from perfmodel.rates import constants, latency_s
from perfmodel.work import Launch, Work


def _predict(*args):
    cmd = [
        sys.executable,
        "-m",
        "perfmodel.cli",
        "predict",
        "gemm",
        *args,
        "--arch",
        "mi300x",
        "--format",
        "json",
    ]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)[0]


def _time(work, arch):
    return {k: float(np.asarray(v).ravel()[0]) for k, v in estimate(work, arch).terms.items()}


def test_padding_stretches_only_the_matrix_pipe():
    arch = load_arch("mi300x")
    full, half = (
        Work(
            flops={"mfma:bf16": 1e12, "valu:fp32": 1e9},
            launch=Launch(grid=1e4, tile_m=128.0, useful_fraction=u),
        )
        for u in (1.0, 0.5)
    )
    a, b = _time(full, arch), _time(half, arch)
    assert b["compute:mfma:bf16"] == pytest.approx(2 * a["compute:mfma:bf16"])
    assert b["compute:valu:fp32"] == pytest.approx(a["compute:valu:fp32"])


def test_k_loop_floor_counts_rounds_and_steps():
    arch = load_arch("mi300x")
    w = Work(
        flops={"mfma:bf16": 1.0},
        launch=Launch(grid=3 * arch.cus, workgroup_size=256, tile_m=256.0, k_steps=100),
    )
    est = estimate(w, arch)
    rounds = np.ceil(3 * arch.cus / (arch.cus * est.occupancy["wgs_per_cu"]))
    step = latency_s(arch, arch.memory_level) / constants()["k_loop_prefetch_depth"]["value"]
    assert est.terms["latency:k_loop"] == pytest.approx(rounds * 100 * step)
    assert (
        str(np.asarray(est.bound).ravel()[0]) == "latency"
    )  # the floor is the largest term of this tiny kernel
    assert "latency:k_loop" not in estimate(Work(flops={"mfma:bf16": 1.0}), arch).terms


def test_cli_json_split_fill_and_k_loop_agree():
    lat = latency_s(load_arch("mi300x"), "hbm") * 1e6
    step = lat / constants()["k_loop_prefetch_depth"]["value"]
    for (m, n, k), split_expected in (((16, 4096, 8192), True), ((4096, 4096, 4096), False)):
        r = _predict(f"m={m}", f"n={n}", f"k={k}")
        tm, tn, tk = (int(x) for x in r["tile"].split("x"))
        split = r["grid"] / (np.ceil(m / tm) * np.ceil(n / tn))
        assert (split > 1) == split_expected
        assert ("split-K" in (r.get("notes") or "")) == split_expected
        # prologue load + epilogue store, and the split-K reduction's read-back (one workgroup
        # per CU on AMD: plus the exposed C writes, tests/test_estimate.py)
        serial = (3 if split_expected else 2) * lat
        # and the main loop's pipeline fill: one K step of the faster stage (tests/model_runs.py)
        serial += pipeline_fill_s(r["terms_us"], r["grid"], r["wgs_per_cu"], 304, np.ceil(k / (split * tk)))
        if split_expected:  # and the last workgroup of each tile reading the other splits' partials
            serial += split_reduction_s(load_arch("mi300x"), r["tile"], split, r["grid"], r["wgs_per_cu"]) * 1e6
        if r["wgs_per_cu"] >= 2:
            assert r["terms_us"]["fill"] == pytest.approx(serial)
        else:
            assert r["terms_us"]["fill"] > serial
        rounds = np.ceil(r["grid"] / (304 * r["wgs_per_cu"]))
        assert r["terms_us"]["latency:k_loop"] == pytest.approx(rounds * np.ceil(k / (split * tk)) * step)
