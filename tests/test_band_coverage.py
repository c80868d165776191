"""scripts/band_stats.py's band coverage: the share of held-out points inside their family's band,
with the bands computed from all points and with each point's own source left out."""

from itertools import count

_ids = count()


def _row(source: str, ratio: float, in_sample: bool = False, pred_us: float = 100.0) -> dict:
    return {
        "id": f"p{next(_ids)}",
        "family": "gemm",
        "source_key": source,
        "shipped": {"ratio": ratio, "in_sample": in_sample, "pred_us": pred_us},
    }


def test_two_disjoint_sources_cover_each_other_never(band_stats):
    """Source A's ratios near 1, source B's near 2: pooled, their band holds most points; but the
    band of either alone misses every point of the other."""
    acc = band_stats
    rows = [_row("A", 0.9 + 0.02 * i) for i in range(10)] + [_row("B", 1.9 + 0.02 * i) for i in range(10)]
    rows.append(_row("C", 5.0, in_sample=True))  # in-sample points take no part
    cov = acc.band_coverage(rows)
    assert cov["n"] == 20
    assert 0.7 <= cov["own"] <= 0.9
    assert cov["leave_one_source_out"] == 0.0


def test_sources_from_one_distribution_keep_their_coverage(band_stats):
    acc = band_stats
    ratios = [0.5 + 0.05 * i for i in range(20)]
    rows = [_row("ABCD"[i % 4], r) for i, r in enumerate(ratios)]
    cov = acc.band_coverage(rows)
    assert cov["own"] >= 0.75 and cov["leave_one_source_out"] >= 0.6


def test_duration_bands_follow_the_predicted_time_and_report_their_width(band_stats):
    """Kernels of 10 us from sources A, C, E and G run at 2x, long ones of B, D, F and H at 1x:
    a band per predicted duration holds the sources of its duration left out (three remain),
    the family band (both pooled) is wider."""
    acc = band_stats
    rows = []
    for srcs, ratio, us in (("ACEG", 2.0, 10.0), ("BDFH", 1.0, 1000.0)):
        for src in srcs:
            rows += [_row(src, ratio * (0.97 + 0.01 * i), pred_us=us) for i in range(6)]
    cov = acc.band_coverage(rows)
    assert cov["per_duration"]["leave_one_source_out"] >= 0.6
    assert cov["width"]["per_duration"] < cov["width"]["family"]


def test_band_percentiles_weigh_every_source_the_same(band_stats):
    """30 points of source A at 1.0 and one point each of four other sources at 0.3, 0.5, 2 and 3:
    plain percentiles put both ends of the band at A's 1.0; weighted by source, the band spans the
    other sources too. With one point per source the weights are equal: Hazen percentiles."""
    acc = band_stats
    rows = [_row("A", 1.0) for _ in range(30)] + [
        _row(s, r) for s, r in zip("BCDE", (0.3, 0.5, 2.0, 3.0), strict=True)
    ]
    p10, p90 = acc.source_weighted_percentiles(rows)
    assert p10 < 0.5 and p90 > 2.0
    single = [_row(f"s{i}", float(i)) for i in range(1, 11)]
    assert acc.source_weighted_percentiles(single, (10.0, 50.0, 90.0)) == [1.5, 5.5, 9.5]


def test_the_weakest_duration_band_is_named(band_stats):
    """Short kernels spread over 1-4x by source, long ones all at 1x: the family band (pooled) holds
    the long ones and misses short ones, so the short band is the weakest."""
    acc = band_stats
    rows = []
    for src, ratio in zip("ABCDEF", (1.0, 1.5, 2.0, 3.0, 4.0, 0.5), strict=True):
        rows += [_row(src, ratio, pred_us=3.0) for _ in range(3)]
    for src in "GHIJKL":
        rows += [_row(src, 1.0 + 0.01 * i, pred_us=1000.0) for i in range(3)]
    w = acc.band_coverage(rows)["worst"]["family"]["duration"]
    assert w["group"] == "0-5 us" and w["n"] == 18 and w["leave_one_source_out"] < 0.8


def test_a_band_needs_three_sources(band_stats):
    """Ten gemm points from two sources take the pooled band; with a third source, their own."""
    acc = band_stats
    pooled = [{**_row(f"p{i}", 1.0), "family": "stream"} for i in range(10)]
    two = [_row("AB"[i % 2], 0.5 + 0.01 * i) for i in range(10)]
    b = acc.error_bands(pooled + two, short=False)
    assert (b["gemm"]["p10"], b["gemm"]["p90"]) == (b["pooled"]["p10"], b["pooled"]["p90"])
    assert "2 sources" in b["gemm"]["basis"]
    b = acc.error_bands(pooled + two + [_row("C", 0.6)], short=False)
    assert b["gemm"]["basis"] == "family held-out" and b["gemm"]["p90"] < 0.7
