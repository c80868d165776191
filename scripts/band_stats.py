"""Error-band statistics of scripts/accuracy.py: the shipped bands (per family and for short
kernels, every source weighing the same), the off cells, and how often the bands hold for a
source left out. Kept apart from the point loading and the report, which import from here.
"""

from __future__ import annotations

import numpy as np

# a band (a family's, a short-kernel one) needs at least this many held-out points from at least
# this many sources, else the pooled band applies: with fewer than 3 sources, leaving one out
# leaves no spread between sources, and the spread between sources is what a band is for
BAND_MIN_N = 5
BAND_MIN_SOURCES = 3
# A (family, arch family) cell whose held-out measurements sit away from the model gets a note on
# every prediction in it (`off_cells`): at least CELL_MIN_N points from CELL_MIN_SOURCES sources,
# a median pred/meas below 1 / CELL_OFF or above CELL_OFF (off by more than the 20 % the issue
# asks of the median), and the same with any one of its sources left out (not one source's quirk).
CELL_MIN_N = 10
CELL_MIN_SOURCES = 2
CELL_OFF = 1.25


# Upper edges (us) of the duration bands (the tables by measured duration of scripts/accuracy.py,
# the band coverage by predicted duration): below 5 us the fixed costs of a
# dispatch dominate, from 5 to 300 us a kernel runs a few rounds of workgroups, beyond that it is
# long enough for its steady state to dominate
DURATION_EDGES_US = (5.0, 15.0, 50.0, 300.0, 3000.0)
# predictions below the first edge take their error band from the short-kernel points alone
SHORT_US = DURATION_EDGES_US[0]


def source_weighted_percentiles(rows: list[dict], qs: tuple[float, ...] = (10.0, 90.0)) -> list[float]:
    """Percentiles of the rows' shipped pred/meas ratios with every source weighing the same
    (each row 1 / its source's row count): a band is for a kernel from a source we have not
    seen, and sources, not rows, are the independent draws (one source's 30 shapes share its
    harness, software and clock); a plain percentile lets the sources that published many rows
    set the band. Midpoint plotting positions: with equal weights, the Hazen percentile."""
    x = np.array([r["shipped"]["ratio"] for r in rows], dtype=float)
    count: dict[str, int] = {}
    for r in rows:
        count[r["source_key"]] = count.get(r["source_key"], 0) + 1
    w = np.array([1.0 / count[r["source_key"]] for r in rows])
    order = np.argsort(x)
    x, w = x[order], w[order]
    pos = (np.cumsum(w) - 0.5 * w) / w.sum()
    return [float(np.interp(q / 100.0, pos, x)) for q in qs]


def duration_band(us: float) -> str:
    """The duration band of a time, e.g. ``3. 15-50 us`` (labels sort in time order)."""
    lo = 0.0
    for i, hi in enumerate(DURATION_EDGES_US):
        if us < hi:
            return f"{i + 1}. {lo:g}-{hi:g} us"
        lo = hi
    return f"{len(DURATION_EDGES_US) + 1}. >= {lo:g} us"


def _held_out(rows: list[dict]) -> list[dict]:
    return [r for r in rows if "shipped" in r and not r["shipped"]["in_sample"]]


def error_bands(rows: list[dict], short: bool = True) -> dict:
    """Per family p10/p90 of held-out pred/meas (as shipped), every source weighing the same
    (`source_weighted_percentiles`); fewer than BAND_MIN_N points or BAND_MIN_SOURCES sources:
    the pooled band. ``short``: a ``short`` section with the same bands over the points
    predicted below SHORT_US, for the families with enough of them (the others take the short
    pooled band: `perfmodel.error_bands.entry`)."""
    held = _held_out(rows)

    def band(rs: list[dict]) -> list[float]:
        return [round(v, 3) for v in source_weighted_percentiles(rs)]

    def enough(rs: list[dict]) -> bool:
        return len(rs) >= BAND_MIN_N and len({r["source_key"] for r in rs}) >= BAND_MIN_SOURCES

    lo, hi = band(held)
    out = {"pooled": {"p10": lo, "p90": hi, "n": len(held), "basis": "pooled held-out"}}
    fams = sorted({r["family"] for r in rows})
    for f in fams:
        x = [r for r in held if r["family"] == f]
        if enough(x):
            lo, hi = band(x)
            out[f] = {"p10": lo, "p90": hi, "n": len(x), "basis": "family held-out"}
        else:
            n_src = len({r["source_key"] for r in x})
            out[f] = {
                **{k: out["pooled"][k] for k in ("p10", "p90")},
                "n": len(x),
                "basis": f"pooled held-out (family has {len(x)} held-out points from {n_src} sources, "
                f"fewer than {BAND_MIN_N} or {BAND_MIN_SOURCES})",
            }
    quick = [r for r in held if r["shipped"]["pred_us"] < SHORT_US]
    if short and enough(quick):
        lo, hi = band(quick)
        what = f"held-out, predicted below {SHORT_US:g} us"
        sec: dict = {
            "below_us": SHORT_US,
            "pooled": {"p10": lo, "p90": hi, "n": len(quick), "basis": f"pooled {what}"},
        }
        for f in fams:
            x = [r for r in quick if r["family"] == f]
            if enough(x):
                lo, hi = band(x)
                sec[f] = {"p10": lo, "p90": hi, "n": len(x), "basis": f"family {what}"}
        out["short"] = sec
    return out


def point_band(bands: dict, r: dict) -> dict:
    """The band a point's prediction carries, as `perfmodel predict` gives it (`entry`)."""
    from perfmodel.error_bands import entry

    return entry(bands, r["family"], r["shipped"]["pred_us"]) or bands["pooled"]


def off_cells(rows: list[dict]) -> dict:
    """The (family, arch family) cells whose held-out measurements sit systematically away from
    the model (see CELL_MIN_N): ``"<family>/<arch family>" -> {median, p10, p90, n, sources}`` of
    predicted / measured time. Not a correction: the prediction stays; the note says what
    published kernels of the cell ran at."""
    held = _held_out(rows)
    groups: dict[tuple, list] = {}
    for r in held:
        groups.setdefault((r["family"], r["arch_family"]), []).append(r)
    out = {}
    for (fam, af), rs in sorted(groups.items()):
        srcs = sorted({r["source_key"] for r in rs})
        if len(rs) < CELL_MIN_N or len(srcs) < CELL_MIN_SOURCES:
            continue
        x = [r["shipped"]["ratio"] for r in rs]
        meds = [float(np.median(x))] + [
            float(np.median([r["shipped"]["ratio"] for r in rs if r["source_key"] != s])) for s in srcs
        ]
        if all(m < 1.0 / CELL_OFF for m in meds) or all(m > CELL_OFF for m in meds):
            out[f"{fam}/{af}"] = {
                "median": round(meds[0], 3),
                "p10": round(float(np.percentile(x, 10)), 3),
                "p90": round(float(np.percentile(x, 90)), 3),
                "n": len(rs),
                "sources": len(srcs),
                "loso_median_range": [round(min(meds[1:]), 3), round(max(meds[1:]), 3)],
            }
    return out


def band_coverage(rows: list[dict]) -> dict:
    """How often a held-out measurement falls inside its family's band (nominally 80 %).

    ``own``: the bands computed from all held-out points, the ones shipped (partly circular).
    ``leave_one_source_out``: each source's points against bands computed without that source:
    what a user measuring a kernel from a source we never saw should expect.
    ``per_cell``: the same two figures for bands per (family, arch family) cell (a cell with
    too few points or sources for a band takes its family's), the finer bands not shipped.
    ``per_duration``: the same for bands per band of predicted duration (`duration_band`, every
    family pooled), also not shipped; ``width``: the median p90 / p10 of the band a point gets,
    family bands against duration bands (a wider band covers more by being wider).
    """
    from perfmodel.error_bands import entry

    held = _held_out(rows)

    def cell_rows(rs: list[dict]) -> list[dict]:  # the family key made the (family, arch family) pair
        return [{**r, "family": f"{r['family']}/{r.get('arch_family')}"} for r in rs]

    def loso_hits(bands_of, pts: list[dict]) -> dict[str, bool]:
        """Point id -> inside the band computed without the point's source."""
        hits = {}
        for src in sorted({r["source_key"] for r in pts}):
            b = bands_of([r for r in pts if r["source_key"] != src])
            hits.update({r["id"]: inside(r, b) for r in pts if r["source_key"] == src})
        return hits

    def coverage_of(bands_of, pts: list[dict] = held) -> tuple[float, float]:
        own = bands_of(pts)
        hits = loso_hits(bands_of, pts)
        return round(float(np.mean([inside(r, own) for r in pts])), 3), round(
            float(np.mean(list(hits.values()))), 3
        )

    def worst(bands_of, pts: list[dict]) -> dict:
        """The family and the predicted-duration band whose points a left-out source's bands
        hold least often (groups of at least BAND_MIN_N points): where a band says too little."""
        hits = loso_hits(bands_of, pts)
        out = {}
        for by, key in (
            ("family", lambda r: r["family"]),
            ("duration", lambda r: duration_band(r["shipped"]["pred_us"])),
        ):
            groups: dict[str, list[bool]] = {}
            for r in held:
                groups.setdefault(key(r), []).append(hits[r["id"]])
            name, h = min(
                ((k, v) for k, v in groups.items() if len(v) >= BAND_MIN_N), key=lambda kv: np.mean(kv[1])
            )
            label = name.split(". ", 1)[-1]  # a duration band without its sort prefix ("1. 0-5 us")
            out[by] = {"group": label, "leave_one_source_out": round(float(np.mean(h)), 3), "n": len(h)}
        return out

    def band_of(r: dict, bands: dict) -> dict:
        return (
            bands.get(f"{r['family']}/{r.get('arch_family')}")
            or entry(bands, r["family"], r["shipped"]["pred_us"])
            or bands["pooled"]
        )

    def inside(r: dict, bands: dict) -> bool:
        b = band_of(r, bands)
        return b["p10"] <= r["shipped"]["ratio"] <= b["p90"]

    def family_only(rs: list[dict]) -> dict:  # the family bands without their short-kernel section
        return error_bands(rs, short=False)

    def width(pts: list[dict], bands_of) -> float:
        bands = bands_of(pts)
        return round(float(np.median([band_of(r, bands)["p90"] / band_of(r, bands)["p10"] for r in pts])), 2)

    def cell_bands(rs: list[dict]) -> dict:
        fam = error_bands(rs, short=False)
        cells = {
            k: v
            for k, v in error_bands(cell_rows(rs), short=False).items()
            if k != "pooled"
            and v["basis"] == "family held-out"  # a cell with too few points or sources: its family's
        }
        return {**fam, **cells}

    own, loso_cov = coverage_of(error_bands)
    plain_own, plain_loso = coverage_of(family_only)
    cell_own, cell_loso = coverage_of(cell_bands)
    # the family key made the band of the predicted duration (families pooled)
    by_time = [{**r, "family": duration_band(r["shipped"]["pred_us"])} for r in held]
    dur_own, dur_loso = coverage_of(family_only, by_time)
    return {
        "nominal": 0.8,
        "own": own,
        "leave_one_source_out": loso_cov,
        "n": len(held),
        "per_cell": {"own": cell_own, "leave_one_source_out": cell_loso},
        "per_duration": {"own": dur_own, "leave_one_source_out": dur_loso},
        "without_short": {"own": plain_own, "leave_one_source_out": plain_loso},
        "width": {
            "family": width(held, error_bands),
            "without_short": width(held, family_only),
            "per_duration": width(by_time, family_only),
        },
        "worst": {
            "family": worst(error_bands, held),
            "without_short": worst(family_only, held),
            "per_duration": worst(family_only, by_time),
        },
    }
