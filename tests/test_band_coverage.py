"""scripts/accuracy.py's band coverage: the share of held-out points inside their family's band,
with the bands computed from all points and with each point's own source left out."""

def _row(source: str, ratio: float, in_sample: bool = False) -> dict:
    return {"family": "gemm", "source_key": source, "shipped": {"ratio": ratio, "in_sample": in_sample}}


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
