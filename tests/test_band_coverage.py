"""scripts/accuracy.py's band coverage: the share of held-out points inside their family's band,
with the bands computed from all points and with each point's own source left out."""

def _row(source: str, ratio: float, in_sample: bool = False, pred_us: float = 100.0) -> dict:
    return {
        "family": "gemm",
        "source_key": source,
        "shipped": {"ratio": ratio, "in_sample": in_sample, "pred_us": pred_us},
    }


def test_two_disjoint_sources_cover_each_other_never(accuracy_script):
    """Source A's ratios near 1, source B's near 2: pooled, their band holds most points; but the
    band of either alone misses every point of the other."""
    acc = accuracy_script
    rows = [_row("A", 0.9 + 0.02 * i) for i in range(10)] + [_row("B", 1.9 + 0.02 * i) for i in range(10)]
    rows.append(_row("C", 5.0, in_sample=True))  # in-sample points take no part
    cov = acc.band_coverage(rows)
    assert cov["n"] == 20
    assert 0.7 <= cov["own"] <= 0.9
    assert cov["leave_one_source_out"] == 0.0


def test_sources_from_one_distribution_keep_their_coverage(accuracy_script):
    acc = accuracy_script
    ratios = [0.5 + 0.05 * i for i in range(20)]
    rows = [_row("ABCD"[i % 4], r) for i, r in enumerate(ratios)]
    cov = acc.band_coverage(rows)
    assert cov["own"] >= 0.75 and cov["leave_one_source_out"] >= 0.6


def test_duration_bands_follow_the_predicted_time_and_report_their_width(accuracy_script):
    """Short kernels of sources A and C run at 2x, long ones of B and D at 1x: a band per
    predicted duration holds the other source of its duration, the family band (both pooled)
    is wider."""
    acc = accuracy_script
    rows = []
    for src, ratio, us in (("A", 2.0, 3.0), ("C", 2.0, 3.0), ("B", 1.0, 1000.0), ("D", 1.0, 1000.0)):
        rows += [_row(src, ratio * (0.97 + 0.01 * i), pred_us=us) for i in range(6)]
    cov = acc.band_coverage(rows)
    assert cov["per_duration"]["leave_one_source_out"] >= 0.6
    assert cov["width"]["per_duration"] < cov["width"]["family"]
