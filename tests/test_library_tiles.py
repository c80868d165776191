"""scripts/accuracy.py's library-tile diagnostic: a hipBLASLt kernel name's macro tile is read in
the model's m x n order (PyTorch's row-major product reaches hipBLASLt transposed) and pinned."""

import pytest


def _row(impl: str, m: int, n: int, k: int, in_sample: bool = False) -> dict:
    return {
        "id": f"x{m}x{n}x{k}",
        "arch": "mi300x",
        "family": "gemm",
        "scope": "kernel",
        "implementation": impl,
        "case": {"kernel": "gemm", "dtype": "bf16", "m": m, "n": n, "k": k},
        "measured_us": 10.0,
        "shipped": {"ratio": 0.5, "in_sample": in_sample, "pred_us": 5.0},
    }


NAME = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x16x64_MI16x16x1_SN_LDSB1"


def test_tile_is_read_transposed_and_pinned(accuracy_script):
    """Tensile's MT256x16 (i along PyTorch's N) is the model's 16x256 tile for m = 15: pinned,
    the prediction is the estimator's time for that tile, not the model's own pick."""
    from perfmodel import predict

    out = accuracy_script.library_tiles([_row(NAME, 15, 151936, 4096)])
    (p,) = out["points"]
    assert p["tile"] == "16x256x64"
    want = predict("gemm", arch="mi300x", dtype="bf16", m=15, n=151936, k=4096, tile="16x256x64")
    assert p["pinned"] == pytest.approx(list(want)[0].time_s / 10e-6, rel=1e-3)
    assert out["auto"]["n"] == out["pinned"]["n"] == 1


def test_only_held_out_gemms_with_a_tensile_name_count(accuracy_script):
    rows = [
        _row(NAME, 15, 4096, 4096, in_sample=True),  # in-sample: left out
        _row("AITER CK a8w8 blockscale GEMM (256x16x64x256)", 16, 4096, 4096),  # no MT tile
        {**_row(NAME, 15, 4096, 4096), "family": "moe"},
    ]
    out = accuracy_script.library_tiles(rows)
    assert out["points"] == [] and out["auto"].get("n", 0) == 0
