"""Hopper GEMM mechanisms read from cuBLAS's own kernels on an H200 (docs/device-measurements.md):
a shared-memory pipeline as deep as shared memory holds, and TMA multicast of one operand tile to
a cluster of two CTAs; Ampere's cp.async pipelines of at most 6 stages. AMD targets keep Tensile's
prefetch depth and read every tile's panels."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest

import perfmodel
from perfmodel.arch import load_arch
from perfmodel.models.tiles import multicast_cluster, multicast_requests, smem_stages
from perfmodel.rates import constants

# (tile M, tile N, K tile) -> stages, from the nvjet kernel names cuBLAS 13.0 dispatched in our H200
# run (nvjet_sm90_tst_<M>x<N>_<K>x<stages>_<cluster>_...), bf16 operands (2 bytes)
CUBLAS_STAGES = {
    (64, 8, 64): 16,
    (64, 16, 64): 16,
    (64, 48, 64): 15,
    (128, 32, 64): 10,
    (128, 64, 64): 8,
    (128, 128, 64): 6,
    (192, 192, 64): 4,
    (256, 128, 64): 4,
    (320, 128, 64): 3,
}


# FP8 kernels (1-byte operands) of a later run, recorded after the rule was written
CUBLAS_FP8_STAGES = {(144, 128, 128): 6, (128, 128, 128): 6, (128, 64, 128): 8, (64, 16, 128): 16}


@pytest.mark.parametrize("tile, stages", sorted(CUBLAS_STAGES.items()))
def test_the_stage_rule_gives_cublas_stage_counts(tile, stages):
    tm, tn, tk = tile
    assert smem_stages(load_arch("h200"), (tm + tn) * tk * 2.0) == stages


@pytest.mark.parametrize("tile, stages", sorted(CUBLAS_FP8_STAGES.items()))
def test_the_stage_rule_holds_for_fp8_kernels(tile, stages):
    tm, tn, tk = tile
    assert smem_stages(load_arch("h200"), (tm + tn) * tk * 1.0) == stages


def test_amd_targets_keep_the_tensile_prefetch_depth():
    assert smem_stages(load_arch("mi300x"), 48 * 1024.0) is None
    assert multicast_cluster(load_arch("mi300x")) == 1.0
    assert multicast_cluster(load_arch("h100")) == 2.0


def test_multicast_reads_the_larger_panel_once_per_cluster():
    a, b = np.array([400.0]), np.array([100.0])
    two = np.array([4.0])
    assert multicast_requests(a, b, two, two, 2.0)[0] == 200.0 + 100.0
    assert multicast_requests(b, a, two, two, 2.0)[0] == 100.0 + 200.0
    # a single tile along the sharing dimension has no partner to share with
    assert multicast_requests(a, b, two, np.array([1.0]), 2.0)[0] == 500.0
    assert multicast_requests(a, b, two, two, 1.0)[0] == 500.0


def _terms(arch, **shape):
    row = perfmodel.predict("gemm", arch, dtype="bf16", **shape).rows[0]
    return row["terms_us"], row["bytes"]


@contextmanager
def _without(table: str, target: str = "sm_90"):
    """The model with one target's entry of a `model_constants.yaml` table taken out."""
    entries = constants()[table]
    saved = entries.pop(target)
    try:
        yield
    finally:
        entries[target] = saved


def test_hopper_l2_traffic_is_lower_than_without_multicast():
    _, with_mc = _terms("h200", m=8192, n=8192, k=8192)
    with _without("gemm_tma_multicast"):
        _, without = _terms("h200", m=8192, n=8192, k=8192)
    assert with_mc["l2"] < 0.8 * without["l2"]
    assert with_mc["hbm"] == pytest.approx(without["hbm"])


def test_deeper_pipeline_lowers_the_k_loop_floor_of_skinny_hopper_gemms():
    hopper, _ = _terms("h200", m=16, n=8192, k=8192)
    with _without("gemm_smem_stages"):
        tensile, _ = _terms("h200", m=16, n=8192, k=8192)
    assert hopper["latency:k_loop"] < 0.5 * tensile["latency:k_loop"]


def test_ampere_gemms_run_a_multistage_pipeline_of_at_most_six_stages():
    """sm_80 kernels name their cp.async stages (cuBLAS `..._stages_64x6_tn`, CUTLASS `..._32x4_...`,
    NVIDIA/cutlass#1025): the rule fills the 164 KiB of shared memory up to 6 stages, so the
    A100's skinny GEMMs keep several K steps in flight instead of the 2 KiB a warp of the
    Tensile default, and a 16 x 4096 x 4096 FP16 GEMM is bound by device memory, not by Little's
    law over those few bytes (cuBLAS: 24.0 us between events, MLX PR #3255)."""
    a100 = load_arch("a100")
    assert smem_stages(a100, (64 + 64) * 64 * 2.0) == 6  # the cuBLAS 64x64, K 64 kernel's stage size
    assert smem_stages(a100, (128 + 128) * 32 * 2.0) == 6  # 10 fit; capped at the largest named count
    assert smem_stages(a100, (256 + 128) * 64 * 2.0) == 3
    (p,) = perfmodel.predict("gemm", "a100", dtype="fp16", m=16, n=4096, k=4096)
    assert p.bound == "memory:hbm"
    with _without("gemm_smem_stages", "sm_80"):
        (tensile,) = perfmodel.predict("gemm", "a100", dtype="fp16", m=16, n=4096, k=4096)
    assert p.time_s < 0.6 * tensile.time_s


@pytest.mark.parametrize("arch", ["h100", "h200"])
def test_hopper_ranking_charges_shared_memory_reads_per_warpgroup_as_the_estimator_does(arch):
    """The ranking charged every warp's shared-memory reads where the estimator charges each
    warpgroup's once, so it took 256x128 tiles into two rounds of 136 tiles on 132 SMs (vLLM's
    cuBLAS 2048 x 2112 x 7168: 161.6 us) that the estimator times slower than 128x64 (127.7 us)."""
    shape = dict(m=2048, n=2112, k=7168)
    (picked,) = perfmodel.predict("gemm", arch, dtype="bf16", **shape)
    pinned = [perfmodel.predict("gemm", arch, dtype="bf16", tile=t, **shape)[0].time_us for t in ("256x128x64", "128x128x64", "128x64x64")]
    assert picked.tile != "256x128x64"
    assert picked.time_us <= 1.05 * min(pinned)
