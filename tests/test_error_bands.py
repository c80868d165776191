"""The shipped error-band file and its loader."""

from perfmodel.error_bands import band, bands
from perfmodel.models.registry import all_models


def test_every_band_is_ordered_and_sourced():
    b = bands()
    assert "pooled" in b
    for fam, e in b.items():
        assert 0 < e["p10"] <= e["p90"], fam
        assert e["n"] >= 0 and e["basis"]


def test_band_of_a_family_and_fallback():
    lo, hi, n, basis = band("gemm")
    assert 0 < lo <= hi and n >= 5 and "family" in basis
    lo2, hi2, n2, basis2 = band("no_such_kernel")
    p = bands()["pooled"]
    assert (lo2, hi2, n2) == (p["p10"], p["p90"], 0) and "pooled" in basis2


def test_short_predictions_take_the_short_section():
    """Below ``below_us`` a family with its own short-kernel band gets it, one without gets the
    short pooled band; at or above it, the family's band."""
    from perfmodel.error_bands import entry

    table = {
        "pooled": {"p10": 0.5, "p90": 1.2, "n": 100, "basis": "pooled"},
        "gemm": {"p10": 0.6, "p90": 1.3, "n": 50, "basis": "family"},
        "short": {"below_us": 5.0, "pooled": {"p10": 0.3, "p90": 1.6, "n": 20, "basis": "short pooled"},
                  "gemm": {"p10": 0.4, "p90": 1.5, "n": 8, "basis": "short family"}},
    }  # fmt: skip
    assert entry(table, "gemm", 4.9)["basis"] == "short family"
    assert entry(table, "softmax", 4.9)["basis"] == "short pooled"
    assert entry(table, "gemm", 5.0)["basis"] == "family" and entry(table, "gemm")["basis"] == "family"
    assert entry(table, "softmax", 50.0) is None  # the caller pools
    assert "short" not in bands() and "cells" not in bands()


def test_small_families_fall_back_to_pooled():
    p = bands()["pooled"]
    for fam, e in bands().items():
        if fam != "pooled" and e["n"] < 5:
            assert (e["p10"], e["p90"]) == (p["p10"], p["p90"]) and "pooled" in e["basis"]
    # every family a user can predict gets a band
    for k in all_models():
        assert band(k)[0] > 0


# --- off cells: (family, arch family) pairs whose published measurements sit away from the model


def _held(family: str, arch_family: str, source: str, ratio: float) -> dict:
    return {"family": family, "arch_family": arch_family, "source_key": source,
            "shipped": {"ratio": ratio, "in_sample": False}}  # fmt: skip


def test_off_cells_need_points_sources_and_every_source_left_out(band_stats):
    acc = band_stats
    rows = [_held("attention", "RDNA3", "ABC"[i % 3], 0.4 + 0.01 * i) for i in range(12)]  # off, 3 sources
    rows += [_held("gemm", "CDNA3", "ABC"[i % 3], 0.95 + 0.01 * i) for i in range(12)]  # on the model
    rows += [_held("softmax", "CDNA3", "A", 0.4) for _ in range(12)]  # off, but one source
    rows += [_held("moe", "CDNA3", "AB"[i % 2], 0.4) for i in range(8)]  # off, but 8 points
    # off only through source A: without it the median is 1.0
    rows += [_held("conv2d", "CDNA4", "A", 0.3) for _ in range(8)] + [
        _held("conv2d", "CDNA4", "B", 1.0) for _ in range(6)
    ]
    rows.append({**_held("stream", "CDNA3", "A", 0.1), "shipped": {"ratio": 0.1, "in_sample": True}})
    cells = acc.off_cells(rows)
    assert set(cells) == {"attention/RDNA3"}
    c = cells["attention/RDNA3"]
    assert (
        c["n"] == 12
        and c["sources"] == 3
        and 0.4 < c["median"] < 0.52
        and c["p10"] <= c["median"] <= c["p90"]
    )


def test_a_prediction_in_an_off_cell_carries_its_note(monkeypatch, cli):
    import json

    from perfmodel import error_bands

    cell = {"median": 0.5, "p10": 0.25, "p90": 0.8, "n": 20, "sources": 3}
    monkeypatch.setattr(error_bands, "cells", lambda: {"rmsnorm/CDNA3": cell})
    rows = json.loads(
        cli(
            "predict", "rmsnorm", "rows=4096", "cols=8192", "--arch", "mi300x,h100", "--format", "json"
        ).output
    )
    notes = {r["arch"]: r.get("notes") or "" for r in rows}
    assert error_bands.CELL_NOTE_PREFIX in notes["mi300x"] and "took a median 2x" in notes["mi300x"]
    assert "1.2-4x" in notes["mi300x"]  # the middle 80 %: 1 / p90 .. 1 / p10
    assert error_bands.CELL_NOTE_PREFIX not in notes["h100"]
    # the table prints it once for all the rows of the cell (three CDNA3 parts)
    table = cli("predict", "rmsnorm", "rows=4096", "cols=8192", "--arch", "mi300x,mi308x,mi325x").output
    assert table.count(error_bands.CELL_NOTE_PREFIX) == 1


def test_shipped_off_cells_name_families_and_arch_groups_that_exist():
    from perfmodel.arch import load_all
    from perfmodel.error_bands import arch_group, cells

    groups = {arch_group(a) for a in load_all()}
    for key, c in cells().items():
        fam, group = key.split("/")
        assert fam in all_models() and group in groups, key
        assert c["n"] >= 10 and c["sources"] >= 2 and (c["median"] < 0.8 or c["median"] > 1.25), key


def test_python_api_table_and_html_show_an_off_cell_note_once(monkeypatch):
    import perfmodel
    from perfmodel import error_bands

    cell = {"median": 0.5, "p10": 0.25, "p90": 0.8, "n": 20, "sources": 3}
    monkeypatch.setattr(error_bands, "cells", lambda: {"gemm/CDNA3": cell})
    p = perfmodel.predict("gemm", ["mi300x", "mi325x", "h100"], m=4096, n=4096, k=4096)
    assert repr(p).count(error_bands.CELL_NOTE_PREFIX) == 1
    assert p._repr_html_().count(error_bands.CELL_NOTE_PREFIX) == 1
    q = perfmodel.predict("gemm", "h100", m=4096, n=4096, k=4096)
    assert error_bands.CELL_NOTE_PREFIX not in repr(q) + q._repr_html_()


def test_duration_bands_split_at_their_edges_and_sort_in_time_order(band_stats):
    band = band_stats.duration_band
    assert band(4.99) == "1. 0-5 us"
    assert band(5.0) == "2. 5-15 us"
    assert band(299.0) == "4. 50-300 us"
    assert band(3000.0) == "6. >= 3000 us"
    times = [0.5, 7.0, 20.0, 100.0, 1000.0, 1e5]
    labels = [band(t) for t in times]
    assert labels == sorted(labels) and len(set(labels)) == len(times)
