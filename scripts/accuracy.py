"""Accuracy of the time model on real published measurements; writes docs/accuracy.md,
validation/accuracy.json and the error bands (validation/error_bands.yaml, copied to
perfmodel/error_bands.yaml for the package).

Data (validation/README.md): validation/measurements.yaml (published figures with shapes) and
validation/trace_measurements.yaml (kernel times from real torch.profiler traces), plus the
rocprof mixbench/vcopy runs that `perfmodel validate` identifies (reported, not gated: the MI100
and vcopy files live outside the repository).

Every point is predicted twice: as shipped (the archspec's per-GPU measured figures) and with
``first_principles=True`` (no per-GPU figure). A point is **in-sample** for a mode when a model
input of that mode came from the point's source: as shipped, any source named in the arch's
`measured:` section or behind a data-derived constant of model_constants.yaml; first principles,
any source behind a data-derived constant (which pool every archspec's measured figures). All
other points are **held-out**. The naive roofline (`roofline_time_s`: theoretical peaks, no
efficiencies, no launch cost) is the baseline column.

Run:  python scripts/accuracy.py [--out docs/accuracy.md] [--no-rocprof]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

from perfmodel.fixed_clock import split_key

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from band_stats import (  # noqa: E402  (the error-band statistics)
    BAND_MIN_N,
    BAND_MIN_SOURCES,
    CELL_MIN_N,
    CELL_MIN_SOURCES,
    CELL_OFF,
    SHORT_US,
    band_coverage,
    duration_band,
    error_bands,
    off_cells,
    point_band,
)

VALIDATION = ROOT / "validation"
DATA_FILES = ("measurements.yaml", "trace_measurements.yaml")
TESTS = ROOT / "tests" / "data" / "rocprof"
MIX = "rocprofiler-compute/legacy_2022/mixbench/{}"
VCOPY = {
    "MI100": "rocprofiler-compute/tests_workloads_2024/vcopy/MI100",
    "MI210": "rocprofiler-compute/tests_workloads_2024/vcopy/MI200",
    "MI300X": "rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd",
    "MI350": "rocm-systems/tests_workloads_2025/vcopy/MI350",
}
MIXBENCH_TYPE = re.compile(r"benchmark_func<(.+?), 256, 8u, (\d+)u>")


def arch_family(key: str) -> str:
    """The arch family a point is reported under (`perfmodel.error_bands.arch_group`, the one
    the shipped off-cell notes use): the spec's family, NVIDIA parts pooled."""
    from perfmodel.arch import load_arch
    from perfmodel.error_bands import arch_group

    return arch_group(load_arch(key))


# case_extra keys the model ignores but whose effect is small next to the kernel (a bias or
# residual add fused into the epilogue, the activation of an elementwise op, an output dtype
# wider or narrower than the inputs, a GPU variant the source does not name, a paged KV cache
# with blocks of >= 64 tokens, i.e. contiguous runs of >= 16 KiB, gpt-oss's attention sink: one
# learned logit per head added to each query row's softmax denominator, work per row beside the
# scores' work per row and key): covered approximately. Any other case_extra key (block-scaled
# fp8, a fixed clock, paged KV in small blocks, ...) makes the point "not covered".
APPROXIMATE_EXTRAS = {
    "bias_epilogue",
    "fused_residual_add",
    "activation",
    "out_dtype",
    "sku_unverified",
    "paged_kv_block",
    "attention_sink",
}
MODES = ("shipped", "first_principles")


# --- sources ---------------------------------------------------------------------------------
def _sources(x, acc: set) -> set:
    if isinstance(x, dict):
        if isinstance(x.get("source"), str):
            acc.add(x["source"])
        for v in x.values():
            _sources(v, acc)
    elif isinstance(x, list):
        for v in x:
            _sources(v, acc)
    return acc


def spec_source(key: str) -> str:
    """The archspec source id a point's source_key belongs to ("S23-9453" -> "S23")."""
    m = re.match(r"^(S\d+|NV\d+)\b", key)
    return m.group(1) if m else key


# A source_key "S23-<tag>" names one thread of a bag of sources (S23 = GitHub threads): it
# matches an archspec's S23 only when that arch's description of S23 names the thread.
TAG_TEXT = {"torchperf": "torch-performance-test-data"}


def source_matches(key: str, used: dict[str, str]) -> bool:
    """Whether a point's source_key is among the sources `used` (id -> description)."""
    base = spec_source(key)
    if base not in used:
        return False
    tag = key[len(base) + 1 :] if key.startswith(base + "-") else ""
    return not tag or TAG_TEXT.get(tag, tag) in used[base]


def _with_text(ids: set, descr: dict) -> dict[str, str]:
    return {i: str(descr.get(i, "")) for i in ids}


def calibration_sources() -> dict:
    """Per arch: sources of its `measured:` figures; per data-derived constant: its sources
    (each as id -> the archspec's description of that id, pooled over archs)."""
    per_arch: dict[str, dict] = {}
    compute: dict[str, str] = {}
    bandwidth: dict[str, str] = {}
    # per-GPU pointer-chase latencies (memory.<level>.latency) are used in both modes: pooled
    # with the default's source, like the constant they override
    latency: dict[str, str] = {"S19": "te42kyfo/gpu-benches pointer chase"}
    for f in sorted((ROOT / "archspecs").glob("*.yaml")):
        spec = yaml.safe_load(f.read_text()) or {}
        m, descr = spec.get("measured") or {}, spec.get("sources") or {}
        per_arch[f.stem] = _with_text(_sources(m, set()), descr)
        for acc, part in ((compute, "compute"), (bandwidth, "bandwidth")):
            for k, v in _with_text(_sources(m.get(part), set()), descr).items():
                acc[k] = acc.get(k, "") + " | " + v
        lat = [lv.get("latency") for lv in (spec.get("memory") or {}).values() if isinstance(lv, dict)]
        for k, v in _with_text(_sources(lat, set()), descr).items():
            latency[k] = latency.get(k, "") + " | " + v
    mm = {"gemm", "grouped_gemm", "attention", "moe", "conv2d"}
    constants = {
        "matrix_efficiency": {
            "sources": {"S7": "AMD ROCm blog, Measuring Max-Achievable FLOPs part 2"},
            "families": mm,
        },
        "matrix_fraction_of_peak": {"sources": compute, "families": mm},
        "bandwidth_efficiency": {"sources": bandwidth, "families": None},  # every family moves bytes
        "latency_ns": {"sources": latency, "families": None},
        # archspec `launch.workgroup_rate` (gfx942/gfx950): measured on the TraceLens MI350X
        # rocprofv3 trace, from which no validation point comes (so none is in-sample for it)
        "workgroup_rate": {"sources": {"tracelens-mi350x-rocprofv3": "TraceLens 908_results (WGRATE)"}, "families": None},
    }
    return {"per_arch": per_arch, "constants": constants}


# --- points ----------------------------------------------------------------------------------
def load_points() -> list[dict]:
    pts = []
    for name in DATA_FILES:
        path = VALIDATION / name
        if path.exists():
            for e in yaml.safe_load(path.read_text()) or []:
                e["_file"] = name
                pts.append(e)
    return pts


def standard_flops(case: dict) -> float | None:
    """FLOPs by the family's standard accounting (what published TFLOP/s figures divide by)."""
    k = case["kernel"]
    if k == "gemm":
        return 2.0 * case["m"] * case["n"] * case["k"] * case.get("batch", 1)
    if k == "attention":  # QK^T over head_dim and PV over head_dim_v (4 B H Sq Skv D where they agree)
        d, dv = case["head_dim"], case.get("head_dim_v") or case["head_dim"]
        f = 2.0 * case["batch"] * case["heads"] * case["seq_q"] * case.get("seq_kv", case["seq_q"]) * (d + dv)
        f *= 0.5 if case.get("causal") else 1.0
        return f * (2.5 if case.get("phase", "fwd") == "bwd" else 1.0)
    return None


def measured_time(e: dict, pred) -> float:
    """Measured seconds of one point. Ranges (x_min/x_max beside x) use the published midpoint x."""
    m = e["measured"]
    if "time_us" in m:
        return float(m["time_us"]) * 1e-6
    if "time_ms" in m:
        return float(m["time_ms"]) * 1e-3
    if "time_ms_baseline" in m:  # published as a speedup over a timed baseline
        return float(m["time_ms_baseline"]) * 1e-3 / float(m["speedup"])
    if "tflops" in m:
        f = standard_flops(e["case"]) if e.get("convert", "flops") == "flops" else None
        return (f if f is not None else pred.flops) / (float(m["tflops"]) * 1e12)
    if "gbps" in m:  # bandwidth with the byte count the source divides by
        return float(m["bytes_counted"]) / (float(m["gbps"]) * 1e9)
    if "tbps" in m:
        return pred.bytes[pred.memory_level] / (float(m["tbps"]) * 1e12)
    raise ValueError(f"{e['id']}: no measured time, tflops or tbps")


def family(case: dict) -> str:
    return case["kernel"]


def _evaluate(cases: list, first_principles: bool) -> list:
    """Predictions of many validated cases: one batched call, per case if the batch fails."""
    from perfmodel.prediction import evaluate

    try:
        return evaluate(cases, first_principles=first_principles)
    except Exception:
        out = []
        for c in cases:
            try:
                out.append(evaluate([c], first_principles=first_principles)[0])
            except Exception as exc:  # noqa: BLE001 - reported as "not covered"
                out.append(exc)
        return out


def predict_points(pts: list[dict], cal: dict) -> list[dict]:
    from perfmodel.prediction import normalize_all

    rows, todo = [], []
    for e in pts:
        base = split_key(e["arch"])[0]  # mi300x@1005mhz: the GPU at a fixed clock, grouped with its GPU
        r = {
            "id": e["id"],
            "arch": base,
            "arch_family": arch_family(base),
            "family": family(e["case"]),
            "scope": e.get("scope", "?"),
            "source_key": e.get("source_key", e.get("source")),
            "implementation": e.get("implementation"),
            "case": e["case"],
            "origin": "trace" if e.get("_file") == "trace_measurements.yaml" else "published",
        }
        rows.append(r)
        extras = set(e.get("case_extra") or {})
        if extras - APPROXIMATE_EXTRAS:
            r["coverage"] = "not covered: " + ", ".join(sorted(extras - APPROXIMATE_EXTRAS))
            continue
        try:
            # predicted with the point's timing scope: events and host add their overhead term
            # warm: the harness reran the inputs while a cache kept them (validation/README.md)
            raw = {**e["case"], **({"warm": True} if e.get("warm") else {})}
            case = normalize_all([raw], [e["arch"]], scope=e.get("scope", "kernel"))[0]
        except Exception as exc:  # the model cannot represent the case: counted, never dropped
            r["coverage"] = f"not covered: {type(exc).__name__}: {str(exc)[:120]}"
            continue
        r["coverage"] = "approximate" if extras else "covered"
        todo.append((e, r, case))
    preds = {m: _evaluate([c for _, _, c in todo], m == "first_principles") for m in MODES}
    for i, (e, r, _) in enumerate(todo):
        p = {m: preds[m][i] for m in MODES}
        bad = [x for x in p.values() if isinstance(x, Exception)]
        if bad:
            r["coverage"] = f"not covered: {type(bad[0]).__name__}: {str(bad[0])[:120]}"
            continue
        t_meas = measured_time(e, p["shipped"])
        key = str(r["source_key"])
        in_const = any(source_matches(key, c["sources"]) for c in cal["constants"].values())
        r["measured_us"] = t_meas * 1e6
        r["naive_ratio"] = p["shipped"].roofline_time_s / t_meas
        for m, q in p.items():
            in_arch = m == "shipped" and source_matches(key, cal["per_arch"].get(r["arch"], {}))
            r[m] = {
                "pred_us": q.time_s * 1e6,
                "ratio": q.time_s / t_meas,
                "bound": q.bound,
                "in_sample": in_const or in_arch,
            }
    return rows


# Tensile/hipBLASLt kernel names carry the macro tile, MT<i>x<j>x<depth>. PyTorch's row-major
# C = A B reaches hipBLASLt as the column-major C^T = B^T A^T, so Tensile's first free index i
# runs along PyTorch's N and j along its M: the tile is j x i in the model's (tile_m x tile_n).
TENSILE_TILE = re.compile(r"^Cijk_.*?_MT(\d+)x(\d+)x(\d+)_")


def library_tiles(rows: list[dict]) -> dict:
    """Held-out GEMM points whose kernel name gives the library's macro tile, predicted again
    with that tile pinned (`tile=`): how much of their error is the model's own tile choice.
    The split of K stays the model's (hipBLASLt's GSU/stream-K settings are not read)."""
    from perfmodel.prediction import normalize_all

    picked, cases = [], []
    for r in rows:
        m = TENSILE_TILE.match(r.get("implementation") or "")
        if r["family"] != "gemm" or not m or "shipped" not in r or r["shipped"]["in_sample"]:
            continue
        tile = f"{m.group(2)}x{m.group(1)}x{m.group(3)}"
        picked.append((r, tile))
        cases.append(normalize_all([{**r["case"], "tile": tile}], [r["arch"]], scope=r["scope"])[0])
    points = []
    for (r, tile), q in zip(picked, _evaluate(cases, False), strict=True):
        if isinstance(q, Exception):
            continue
        ratio = q.time_s / (r["measured_us"] * 1e-6)
        points.append({"id": r["id"], "tile": tile, "auto": r["shipped"]["ratio"], "pinned": round(ratio, 4)})
    return {
        "auto": stats([p["auto"] for p in points]),
        "pinned": stats([p["pinned"] for p in points]),
        "points": points,
    }


# --- statistics ------------------------------------------------------------------------------
def stats(ratios: list[float]) -> dict:
    r = np.asarray(ratios, dtype=float)
    if r.size == 0:
        return {"n": 0}
    a = np.abs(r - 1)
    return {
        "n": int(r.size),
        "median": round(float(np.median(a)), 4),
        "p90": round(float(np.percentile(a, 90)), 4),
        "bias": round(float(np.median(r)), 4),
    }


BREAKDOWNS = {
    "family": lambda r: r["family"],
    "arch_family": lambda r: r["arch_family"],
    "arch": lambda r: r["arch"],
    "scope": lambda r: r["scope"],
    "measured duration": lambda r: duration_band(r["measured_us"]),
}


def breakdowns(rows: list[dict], mode: str) -> dict:
    """{held_out|in_sample: {by: {key: {model: stats, naive: stats}}}}."""
    out: dict = {}
    cov = [r for r in rows if mode in r]
    for split, flag in (("held_out", False), ("in_sample", True)):
        sel = [r for r in cov if r[mode]["in_sample"] is flag]
        d: dict = {}
        for by, key in BREAKDOWNS.items():
            groups = defaultdict(list)
            for r in sel:
                groups[key(r)].append(r)
            d[by] = {
                k: {
                    "model": stats([r[mode]["ratio"] for r in g]),
                    "naive": stats([r["naive_ratio"] for r in g]),
                }
                for k, g in sorted(groups.items())
            }
        d["all"] = {
            "model": stats([r[mode]["ratio"] for r in sel]),
            "naive": stats([r["naive_ratio"] for r in sel]),
        }
        out[split] = d
    return out


def coverage(rows: list[dict]) -> dict:
    fam = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        c = fam[r["family"]]
        c[0] += 1
        c[1] += r["coverage"] in ("covered", "approximate")
        c[2] += r["coverage"] == "approximate"
    tot = [sum(v[i] for v in fam.values()) for i in range(3)]
    return {
        "points": tot[0],
        "covered": tot[1],
        "approximate": tot[2],
        "coverage": round(tot[1] / tot[0], 4) if tot[0] else 0.0,
        "by_family": {
            k: {"points": v[0], "covered": v[1], "approximate": v[2]} for k, v in sorted(fam.items())
        },
    }


def loso(rows: list[dict], cal: dict) -> list[dict]:
    """For each data-derived constant: first-principles error on points not from its sources."""
    out = []
    for name, c in cal["constants"].items():
        fams = c["families"]
        sel = [r for r in rows if "first_principles" in r and (fams is None or r["family"] in fams)]
        hit = [source_matches(str(r["source_key"]), c["sources"]) for r in sel]
        out_s = [r["first_principles"]["ratio"] for r, h in zip(sel, hit, strict=True) if not h]
        in_s = [r["first_principles"]["ratio"] for r, h in zip(sel, hit, strict=True) if h]
        out.append(
            {
                "constant": name,
                "sources": sorted(c["sources"]),
                "families": "all" if fams is None else ", ".join(sorted(fams)),
                "not_from_sources": stats(out_s),
                "from_sources": stats(in_s),
                "points_from_sources": sum(hit),
            }
        )
    return out


def compute(with_rocprof: bool = False) -> dict:
    """Everything the report and the gate need, as plain data (deterministic)."""
    cal = calibration_sources()
    rows = predict_points(load_points(), cal)
    res = {
        "coverage": coverage(rows),
        "modes": {m: breakdowns(rows, m) for m in MODES},
        "error_bands": error_bands(rows),
        "band_coverage": band_coverage(rows),
        "off_cells": off_cells(rows),
        "loso": loso(rows, cal),
        "library_tiles": library_tiles(rows),
        "points": rows,
    }
    if with_rocprof:
        res["rocprof"] = rocprof_points()
    return res


def gate_figures(res: dict) -> dict:
    """The gated numbers: as-shipped held-out median/p90 per family and pooled, and coverage."""
    h = res["modes"]["shipped"]["held_out"]
    fam = {
        k: {"n": v["model"]["n"], "median": v["model"]["median"], "p90": v["model"]["p90"]}
        for k, v in h["family"].items()
    }
    a = h["all"]["model"]
    return {
        "families": fam,
        "all": {"n": a["n"], "median": a["median"], "p90": a["p90"]},
        "coverage": res["coverage"]["coverage"],
    }


# --- rocprof (reported, not gated) ------------------------------------------------------------
def _find(rel: str) -> Path | None:
    """A rocprof workload copied into tests/data (origin notes in its README), or None."""
    path = TESTS / rel
    return path if path.exists() else None


def rocprof_points() -> list[dict]:
    """Per-kernel (mixbench) and per-dispatch (vcopy) time errors from `perfmodel validate`."""
    from perfmodel.validate import validate

    pts = []
    for gpu in ("mi200", "mi100"):
        path = _find(MIX.format(gpu))
        if path is None:
            continue
        v = validate(str(path))
        for r in v.rows:
            m = MIXBENCH_TYPE.search(r["kernel"])
            if not m or r.get("time_error") is None:
                continue
            # integer kernels (int: v_mul_lo_u32 + v_add_u32, short: v_mad_u16) are timed at the
            # spec's integer VALU rates where it has them all; reported in their own rows
            integer = m.group(1).startswith(("int", "short"))
            timed = not integer or all(v.arch.int_rate("valu", op) for op in ("int32", "int32_mul", "int16"))
            group = f"mixbench {v.arch.key}" + (" int/short" if integer else "")
            pts.append({"group": group, "ratio": 1 + r["time_error"], "timed_fully": timed})
    for gpu, rel in VCOPY.items():
        path = _find(rel)
        if path is None:
            continue
        v = validate(str(path), per_dispatch=True)
        for r in v.rows:
            if r.get("time_error") is not None:
                pts.append({"group": f"vcopy {gpu}", "ratio": 1 + r["time_error"], "timed_fully": True})
    return pts


# --- report ----------------------------------------------------------------------------------
def pct(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def stat_cells(s: dict) -> str:
    if not s.get("n"):
        return "0 | - | - | -"
    return f"{s['n']} | {pct(s['median'])} | {pct(s['p90'])} | {s['bias']:.2f}"


def table(title: str, d: dict, by: str) -> list[str]:
    out = [
        f"#### {title}",
        "",
        f"| {by} | n | median | p90 | bias | naive median | naive p90 | naive bias |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k, v in d[by].items():
        nv = v["naive"]
        out.append(
            f"| {k} | {stat_cells(v['model'])} | {pct(nv.get('median'))} | {pct(nv.get('p90'))} | {nv.get('bias', 0):.2f} |"
        )
    a = d["all"]
    out.append(
        f"| **all** | {stat_cells(a['model'])} | {pct(a['naive'].get('median'))} | {pct(a['naive'].get('p90'))} | {a['naive'].get('bias', 0):.2f} |"
    )
    return out + [""]


# AMD's analytical GEMM model ("origami"), the comparison issue 7 sets for the GEMM subset: its
# published median error on its own GEMM set; the target is half of it
ORIGAMI_GEMM_MEDIAN = 0.384


def subset_lines(rows: list[dict]) -> list[str]:
    """Headline figures of two subsets the acceptance checks name: the published benchmark points
    (held-out, neither trace kernels nor host-timed loops) and the GEMM points."""

    def sel(pred) -> dict:
        return stats([r["shipped"]["ratio"] for r in rows if "shipped" in r and pred(r)])

    pub = sel(lambda r: not r["shipped"]["in_sample"] and r["origin"] == "published" and r["scope"] != "host")
    g_all = sel(lambda r: r["family"] == "gemm")
    g_out = sel(lambda r: r["family"] == "gemm" and not r["shipped"]["in_sample"])
    return [
        f"- As shipped, held-out published benchmark points only (no trace kernels, no host-timed loops): "
        f"n={pub.get('n', 0)}, median {pct(pub.get('median'))}, p90 {pct(pub.get('p90'))}, bias {pub.get('bias', 0):.2f}.",
        f"- GEMM, as shipped: all points (held-out and in-sample) n={g_all.get('n', 0)}, median {pct(g_all.get('median'))}; "
        f"held-out n={g_out.get('n', 0)}, median {pct(g_out.get('median'))}. AMD's analytical GEMM model (origami) "
        f"reports {pct(ORIGAMI_GEMM_MEDIAN)}; half of it is {pct(ORIGAMI_GEMM_MEDIAN / 2)}.",
    ]


def report(res: dict) -> list[str]:
    cov = res["coverage"]
    sh = res["modes"]["shipped"]["held_out"]["all"]["model"]
    fp = res["modes"]["first_principles"]["held_out"]["all"]["model"]
    counts = defaultdict(lambda: defaultdict(int))
    srcs = defaultdict(int)
    for r in res["points"]:
        counts[r["family"]][r["arch_family"]] += 1
        srcs[r["source_key"]] += 1
    afs = sorted({r["arch_family"] for r in res["points"]})
    L = [
        "# Accuracy of the time model on real measurements",
        "",
        "Generated by `python scripts/accuracy.py` (also writes `validation/accuracy.json` and the error",
        "bands `validation/error_bands.yaml` = `perfmodel/error_bands.yaml`); do not edit by hand.",
        "`tests/test_accuracy_gate.py` fails when a held-out figure of `validation/accuracy.json` gets worse.",
        "",
        "Data: `validation/measurements.yaml` (published figures with shapes: vendor blogs, library and",
        "paper benchmark logs) and `validation/trace_measurements.yaml` (kernel times from real",
        "torch.profiler traces); see `validation/README.md`. Ratio = predicted / measured time;",
        "median and p90 are of |ratio - 1|; **bias** is the median ratio (< 1: the model is optimistic,",
        "predicts faster than measured). **Held-out**: no model input came from the point's source;",
        "**in-sample**: one did (the arch's `measured:` figures, or a data-derived constant of",
        "`perfmodel/model_constants.yaml`), so its agreement is partly circular. Sources are matched by",
        "the archspec source ids (S7, S22, ...); a GitHub-thread source `S23-<tag>` matches an arch's S23",
        "only when that arch's description of S23 names the thread. The constants pool every archspec's",
        "measured figures, so a point from any of those sources is in-sample in both modes. *Naive* is",
        "the plain roofline (`roofline_time_s`: theoretical peaks, no efficiencies, no launch cost).",
        "",
        "## Headline",
        "",
        f"- Points: {cov['points']}; covered by the model: {cov['covered']} ({cov['coverage']:.1%}), "
        f"of which {cov['approximate']} approximately (a `case_extra` key the model ignores: fused bias or "
        "residual add, activation, output dtype, unnamed GPU variant, paged KV in large blocks, an attention sink; see validation/README.md); "
        "points not covered are listed at the end.",
        f"- As shipped, held-out: n={sh.get('n', 0)}, median {pct(sh.get('median'))}, p90 {pct(sh.get('p90'))}, bias {sh.get('bias', 0):.2f}.",
        f"- First principles, held-out: n={fp.get('n', 0)}, median {pct(fp.get('median'))}, p90 {pct(fp.get('p90'))}, bias {fp.get('bias', 0):.2f}.",
        *subset_lines(res["points"]),
        "",
        "Caveats, read before the tables:",
        "",
        "- The data-derived constants of `model_constants.yaml` pool every archspec's measured figures",
        "  (S7, S8, S13-S23, S28, ...), so most published library GEMM and STREAM points are in-sample in",
        "  both modes; the held-out set is the trace kernels (small, untuned eager kernels: not the",
        "  fastest implementation of their shapes) and library benchmark logs no archspec cites (AITER,",
        "  FA3/tritonbench, CK, Marlin, DeepGEMM, FlyDSL, ...: see the source table).",
        "- `events` and `host` points include what the model does not time (launch gaps between calls,",
        "  a clone inside the timed lambda, host overhead); `kernel` points are GPU kernel time only.",
        "- A point's ratio uses the published figure as is; where a source gives a rate, the time is",
        "  the family's standard FLOP or byte count divided by it (`validation/README.md`).",
        "",
        "## Data set",
        "",
        "| family | " + " | ".join(afs) + " | all | covered |",
        "|---|" + "---|" * (len(afs) + 2),
    ]
    for f in sorted(counts):
        c = cov["by_family"][f]
        L.append(
            f"| {f} | "
            + " | ".join(str(counts[f].get(a, 0)) for a in afs)
            + f" | {sum(counts[f].values())} | {c['covered']} |"
        )
    L += ["", "| source | points |", "|---|---|"]
    for s, n in sorted(srcs.items(), key=lambda x: (-x[1], x[0])):
        L.append(f"| {s} | {n} |")
    L.append("")
    for mode, title in (
        ("shipped", "As shipped (per-GPU measured figures used)"),
        ("first_principles", "First principles (`first_principles=True`)"),
    ):
        for split in ("held_out", "in_sample"):
            d = res["modes"][mode][split]
            L += [f"## {title}: {split.replace('_', '-')}", ""]
            for by in BREAKDOWNS:
                L += table(f"by {by.replace('_', ' ')}", d, by)
    L += [
        "## Error bands (as shipped, held-out pred/meas, p10-p90)",
        "",
        "| family | p10 | p90 | n | basis |",
        "|---|---|---|---|---|",
    ]
    short = res["error_bands"].get("short", {})
    for f, b in [
        *res["error_bands"].items(),
        *((f"{k}, below {short['below_us']:g} us", v) for k, v in short.items() if k != "below_us"),
    ]:
        if f != "short":
            L.append(f"| {f} | {b['p10']:.2f} | {b['p90']:.2f} | {b['n']} | {b['basis']} |")
    bc = res["band_coverage"]
    worst = bc["worst"]

    def spread(by: str) -> str:  # range of the held-out medians (as shipped) over the groups of a table
        meds = [
            v["model"]["median"] for v in res["modes"]["shipped"]["held_out"][by].values() if v["model"]["n"]
        ]
        return f"{pct(min(meds))} to {pct(max(meds))} median"

    L += [
        "",
        f"How far to trust a band: {bc['own']:.1%} of the {bc['n']} held-out points fall inside their",
        f"band (nominally {bc['nominal']:.0%}; partly circular, the bands come from these points).",
        "A band's percentiles weigh every source the same (each point 1 / its source's point count):",
        "sources, not points, are the independent draws, and a source that published 30 shapes would",
        f"otherwise set the band; a band needs {BAND_MIN_N} points from {BAND_MIN_SOURCES} sources (with fewer, leaving one",
        "source out leaves no spread between sources), else the pooled band applies. A prediction below",
        f"{SHORT_US:g} us takes its band from the held-out points predicted below {SHORT_US:g} us (its family's where the family",
        "has enough of them, else all of them): a dispatch's fixed costs dominate there, and sources scatter most. Against bands computed without the point's own",
        "source (leave one source out, the case of a kernel from a source we never saw),",
        f"{bc['leave_one_source_out']:.1%} do ({bc['without_short']['leave_one_source_out']:.1%} with the family bands alone, which held "
        f"{worst['without_short']['duration']['leave_one_source_out']:.0%} of the",
        f"{worst['without_short']['duration']['n']} points predicted at {worst['without_short']['duration']['group']}). "
        f"Where they say least: kernels predicted at {worst['family']['duration']['group']}",
        f"({worst['family']['duration']['leave_one_source_out']:.0%} of {worst['family']['duration']['n']} points) "
        f"and {worst['family']['family']['group']} ({worst['family']['family']['leave_one_source_out']:.0%} of {worst['family']['family']['n']}).",
        f"Bands per (family, arch family) cell would hold {bc['per_cell']['own']:.1%} with their own points and",
        f"{bc['per_cell']['leave_one_source_out']:.1%} with the point's source left out: finer bands fit the sources they",
        "came from and generalise worse.",
        "Bands per band of predicted duration (every family pooled; the duration bands of the tables above)",
        f"would hold {bc['per_duration']['own']:.1%} with their own points and {bc['per_duration']['leave_one_source_out']:.1%} with the point's source left",
        f"out, and the median band spans x{bc['width']['per_duration']:.2f} (p90 / p10) against x{bc['width']['family']:.2f} for the shipped bands;",
        f"but they leave whole families out: {worst['per_duration']['family']['group']} {worst['per_duration']['family']['leave_one_source_out']:.0%} "
        f"(of {worst['per_duration']['family']['n']}), where the shipped bands hold their weakest family at "
        f"{worst['family']['family']['leave_one_source_out']:.0%}. The held-out median error differs more between families",
        f"({spread('family')}) than between durations ({spread('measured duration')}), so the shipped bands stay per",
        "family, with the short-kernel section as the one split by duration.",
        "",
        "## Where published kernels sit away from the model (off cells)",
        "",
        f"A (family, arch family) cell with at least {CELL_MIN_N} held-out points from {CELL_MIN_SOURCES} or more sources",
        f"whose median pred/meas is below {1 / CELL_OFF:.2f} or above {CELL_OFF:.2f}, with any one source left out as",
        "well. Every prediction in such a cell carries a note with these figures (`perfmodel.error_bands.cell_note`);",
        "the prediction itself is unchanged.",
        "",
        "| cell | n | sources | median pred/meas | p10 | p90 | median, one source left out |",
        "|---|---|---|---|---|---|---|",
        *[
            f"| {k} | {c['n']} | {c['sources']} | {c['median']:.2f} | {c['p10']:.2f} | {c['p90']:.2f} | {c['loso_median_range'][0]:.2f}-{c['loso_median_range'][1]:.2f} |"
            for k, c in res["off_cells"].items()
        ],
        "",
        "## Constants derived from data: error on points not from their sources (first principles)",
        "",
        "`perfmodel/model_constants.yaml` describes these constants as derived from measurements. The",
        "table gives the first-principles error on the points of the families each one affects, split by",
        "whether the point comes from one of the constant's sources (the sources pooled into the constant",
        "are every archspec's `measured:` figures of that kind).",
        "",
        "| constant | sources | families | not from sources: n / median / p90 / bias | from sources: n / median / p90 / bias |",
        "|---|---|---|---|---|",
    ]
    for c in res["loso"]:
        L.append(
            f"| {c['constant']} | {', '.join(c['sources'])} | {c['families']} | {stat_cells(c['not_from_sources']).replace(' | ', ' / ')} | {stat_cells(c['from_sources']).replace(' | ', ' / ')} |"
        )
    lt = res["library_tiles"]
    L += [
        "",
        "## GEMM with the library's own tile (held-out trace kernels that name it)",
        "",
        f"{lt['auto']['n']} held-out GEMM points ran hipBLASLt kernels whose names give the macro tile",
        "(`MT<i>x<j>x<depth>`, read as j x i in the model's m x n: PyTorch's row-major product reaches",
        "hipBLASLt transposed). Each is predicted again with that tile pinned (`tile=`), to separate",
        "the model's tile choice from its time for a given tile.",
        "",
        "| prediction | n | median | p90 | bias |",
        "|---|---|---|---|---|",
        f"| model's tile (as shipped) | {stat_cells(lt['auto'])} |",
        f"| library's tile pinned | {stat_cells(lt['pinned'])} |",
    ]
    if res.get("rocprof"):
        L += [
            "",
            "## rocprof kernels (`perfmodel validate`; reported, not gated)",
            "",
            "Integer mixbench kernels (int, short) are timed at the specs' integer VALU rates (`pipes.valu.int`) and listed apart.",
            "",
            "| data | n | median | p90 | bias |",
            "|---|---|---|---|---|",
        ]
        groups = defaultdict(list)
        for p in res["rocprof"]:
            if p["timed_fully"]:
                groups[p["group"]].append(p["ratio"])
        for g, x in sorted(groups.items()):
            L.append(f"| {g} | {stat_cells(stats(x))} |")
    L += [
        "",
        "## Largest held-out errors (as shipped), five per family",
        "",
        "| family | id | arch | scope | measured us | predicted us | ratio | bound |",
        "|---|---|---|---|---|---|---|---|",
    ]
    held = [r for r in res["points"] if "shipped" in r and not r["shipped"]["in_sample"]]
    for fam in sorted({r["family"] for r in held}):
        worst = sorted(
            (r for r in held if r["family"] == fam), key=lambda r: -abs(r["shipped"]["ratio"] - 1)
        )[:5]
        for r in worst:
            s = r["shipped"]
            L.append(
                f"| {fam} | {r['id']} | {r['arch']} | {r['scope']} | {r['measured_us']:.4g} | {s['pred_us']:.4g} | "
                f"{s['ratio']:.2f} | {s['bound']} |"
            )
    L += ["", "## Points not covered", ""]
    nc = [r for r in res["points"] if r["coverage"].startswith("not covered")]
    L += [f"- `{r['id']}` ({r['arch']}): {r['coverage']}" for r in nc] or ["- none"]
    L += [
        "",
        "## Every point",
        "",
        "`band us` is the error band the prediction carries (predicted / p90 .. predicted / p10; its family's, below",
        f"{SHORT_US:g} us its short-kernel band):",
        "where the measured time is expected to fall, as a user of `perfmodel predict` would be told.",
        "",
        "| id | arch | scope | implementation | measured us | predicted us | band us | shipped ratio | in-sample "
        "| first-pr. ratio | naive ratio | bound |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    bands = res["error_bands"]
    for r in res["points"]:
        if "shipped" not in r:
            continue
        s, f = r["shipped"], r["first_principles"]
        b = point_band(bands, r)
        lo, hi = s["pred_us"] / b["p90"], s["pred_us"] / b["p10"]
        L.append(
            f"| {r['id']} | {r['arch']} | {r['scope']} | {str(r['implementation'])[:40]} | {r['measured_us']:.4g} | "
            f"{s['pred_us']:.4g} | {lo:.3g}-{hi:.3g} | "
            f"{s['ratio']:.2f} | {'yes' if s['in_sample'] else 'no'} | {f['ratio']:.2f} | {r['naive_ratio']:.2f} | {s['bound']} |"
        )
    return L + [""]


def json_rows(rows: list[dict]) -> list[dict]:
    out = []
    for r in rows:
        o = {k: r[k] for k in ("id", "arch", "arch_family", "family", "scope", "source_key", "coverage")}
        if "shipped" in r:
            o["measured_us"] = round(r["measured_us"], 4)
            o["naive_ratio"] = round(r["naive_ratio"], 4)
            for m in MODES:
                o[m] = {
                    "pred_us": round(r[m]["pred_us"], 4),
                    "ratio": round(r[m]["ratio"], 4),
                    "in_sample": r[m]["in_sample"],
                    "bound": r[m]["bound"],
                }
            fam_band = None
            o["band"] = fam_band
        out.append(o)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "accuracy.md"))
    ap.add_argument("--json", default=str(VALIDATION / "accuracy.json"))
    ap.add_argument("--no-rocprof", action="store_true", help="skip the rocprof mixbench/vcopy points")
    args = ap.parse_args(argv)
    res = compute(with_rocprof=not args.no_rocprof)
    bands = res["error_bands"]
    rows = json_rows(res["points"])
    for o in rows:
        if "band" in o:
            b = point_band(bands, o)
            o["band"] = {
                "p10": b["p10"],
                "p90": b["p90"],
                "pred_us_range": [
                    round(o["shipped"]["pred_us"] / b["p90"], 4),
                    round(o["shipped"]["pred_us"] / b["p10"], 4),
                ],
            }
    doc = {
        "generated_by": "scripts/accuracy.py",
        "gate": gate_figures(res),
        "coverage": res["coverage"],
        "modes": res["modes"],
        "error_bands": bands,
        "band_coverage": res["band_coverage"],
        "off_cells": res["off_cells"],
        "loso": res["loso"],
        "library_tiles": res["library_tiles"],
        "points": rows,
    }
    Path(args.json).write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    band_yaml = (
        "# GENERATED by scripts/accuracy.py: per kernel family, p10 and p90 of the held-out\n"
        "# predicted/measured time ratios (as shipped) over validation/; n = held-out points.\n"
        "# A measured time is likely within [predicted / p90, predicted / p10].\n"
        "# short: the same bands over the points predicted below below_us, for predictions that short.\n"
        "# cells: the (family, arch family) pairs whose held-out ratios sit away from the model\n"
        "# (scripts/accuracy.py off_cells); a prediction there carries a note.\n"
        + yaml.safe_dump({**bands, "cells": res["off_cells"]}, sort_keys=False)
    )
    (VALIDATION / "error_bands.yaml").write_text(band_yaml)
    (ROOT / "perfmodel" / "error_bands.yaml").write_text(band_yaml)
    lines = report(res)
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
