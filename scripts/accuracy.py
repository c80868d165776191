"""Accuracy of `perfmodel predict` on every real measurement we can see; writes docs/accuracy.md.

Two sources of truth, both real:
1. rocprof durations of identified kernels: mixbench (MI210 from tests/data; MI100 from
   ../shared/data when present) and vcopy (MI100, MI210, MI300X rocpd, MI350; the 2024
   MI300A/MI300X files have corrupt timestamps and are left out, as `validate` flags them).
2. Published achievable figures with a known kernel shape (scripts/published_measurements.yaml,
   copied from reference/archspecs.md §9), turned into times.

A published point whose figure is itself the ceiling the estimator used (the archspec's
`measured:` entry) is in-sample: its agreement is circular. The report gives the statistics with
and without them, and for the first-principles estimate (`first_principles=True`: no per-GPU
measurement at all), which is the honest view for GPUs we hold no measurement of.

Run:  python scripts/accuracy.py [--out docs/accuracy.md]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "data" / "rocprof"
SHARED = ROOT.parent / "shared" / "data" / "rocprof"
MIX = "rocprofiler-compute/legacy_2022/mixbench/{}"
VCOPY = {
    "MI100": "rocprofiler-compute/tests_workloads_2024/vcopy/MI100",
    "MI210": "rocprofiler-compute/tests_workloads_2024/vcopy/MI200",
    "MI300X": "rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd",
    "MI350": "rocm-systems/tests_workloads_2025/vcopy/MI350",
}
MIXBENCH_TYPE = re.compile(r"benchmark_func<(.+?), 256, 8u, (\d+)u>")


def find(rel: str) -> Path | None:
    for base in (TESTS, SHARED):
        if (base / rel).exists():
            return base / rel
    return None


def stats(errs: list[float]) -> dict:
    a = np.abs(np.asarray(errs, dtype=float))
    if a.size == 0:
        return {"n": 0}
    return {"n": int(a.size), "median": float(np.median(a)), "p90": float(np.percentile(a, 90)), "max": float(a.max())}


def rocprof_points() -> list[dict]:
    """Per-kernel (mixbench) and per-dispatch (vcopy) time errors from `perfmodel validate`."""
    from perfmodel.validate import validate

    pts = []
    for gpu in ("mi200", "mi100"):
        path = find(MIX.format(gpu))
        if path is None:
            continue
        v = validate(str(path))
        for r in v.rows:
            m = MIXBENCH_TYPE.search(r["kernel"])
            if not m or r.get("time_error") is None:
                continue
            elem = m.group(1)
            timed = not elem.startswith(("int", "short"))  # no integer VALU rate in the specs
            pts.append(
                {
                    "group": f"mixbench {v.arch.key}",
                    "what": f"{elem} ci={m.group(2)}",
                    "error": r["time_error"],
                    "bound_agrees": r.get("bound") == r.get("measured_bound"),
                    "in_sample": False,
                    "timed_fully": timed,
                }
            )
    for gpu, rel in VCOPY.items():
        path = find(rel)
        if path is None:
            continue
        v = validate(str(path), per_dispatch=True)
        for r in v.rows:
            if r.get("time_error") is None:
                continue
            pts.append(
                {
                    "group": "vcopy",
                    "what": f"{gpu} dispatch {r['dispatch']}",
                    "error": r["time_error"],
                    "bound_agrees": r.get("bound") == r.get("measured_bound"),
                    "in_sample": False,
                    "timed_fully": True,
                }
            )
    return pts


def published_points(first_principles: bool) -> list[dict]:
    from perfmodel.arch import load_arch
    from perfmodel.estimate import gemm_level_figures
    from perfmodel.prediction import evaluate, normalize_all

    pts = []
    for p in yaml.safe_load((ROOT / "scripts" / "published_measurements.yaml").read_text()):
        arch = load_arch(p["arch"])
        value = float(p["measured"])
        row = evaluate(normalize_all([dict(p["case"])], [p["arch"]]), first_principles=first_principles)[0]
        if p["metric"] == "flops":
            t_meas = row.flops / value
            figs = gemm_level_figures(arch, arch.matrix_pipe) if arch.matrix_pipe else {}
            ceilings = [figs.get(row.dtype)]
        else:
            t_meas = row.bytes[arch.memory_level] / value
            ceilings = [arch.achievable_bandwidth(arch.memory_level)]
        # in-sample: the figure is the very ceiling the estimator used for this point
        in_sample = not first_principles and any(c is not None and abs(c.value - value) <= 0.01 * value for c in ceilings)
        pts.append(
            {
                "group": "published " + ("GEMM" if p["metric"] == "flops" else "stream"),
                "what": f"{p['arch']} {p['case']['kernel']} {row.dtype} {' '.join(f'{k}={v}' for k, v in p['case'].items() if k not in ('kernel', 'dtype'))}",
                "error": row.time_s / t_meas - 1,
                "bound_agrees": None,
                "in_sample": in_sample,
                "timed_fully": True,
                "source": p["source"],
            }
        )
    return pts


def table(title: str, pts: list[dict]) -> list[str]:
    groups = sorted({p["group"] for p in pts})
    out = [f"### {title}", "", "| data | points | median abs error | p90 | max | bound agrees |", "|---|---|---|---|---|---|"]
    for g in [*groups, "all"]:
        sel = [p for p in pts if g in ("all", p["group"])]
        s = stats([p["error"] for p in sel])
        if not s["n"]:
            continue
        b = [p["bound_agrees"] for p in sel if p["bound_agrees"] is not None]
        bt = f"{sum(b)}/{len(b)}" if b else "-"
        out.append(f"| {g} | {s['n']} | {s['median']:.1%} | {s['p90']:.1%} | {s['max']:.1%} | {bt} |")
    return out + [""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "accuracy.md"))
    args = ap.parse_args(argv)
    roc = rocprof_points()
    pub = published_points(first_principles=False)
    pub_fp = published_points(first_principles=True)
    timed = [p for p in roc if p["timed_fully"]]
    held_out = timed + [p for p in pub if not p["in_sample"]]
    lines = [
        "# Accuracy of the time model on real measurements",
        "",
        "Generated by `python scripts/accuracy.py` (rerun it to refresh this page). Error = predicted",
        "time / measured time - 1; statistics are over absolute errors. Nothing is fitted per shape:",
        "the estimator uses the archspec figures (theoretical peaks, and the measured ceilings and",
        "clocks each GPU's spec lists) and the generic efficiencies in `perfmodel/model_constants.yaml`.",
        "",
        "Data: rocprof durations of kernels identified by `perfmodel validate` (mixbench on MI210",
        "from `tests/data`, on MI100 from `../shared/data` when present; vcopy on MI100, MI210,",
        "MI300X and MI350), and published achievable figures with known shapes",
        "(`scripts/published_measurements.yaml`, from reference/archspecs.md §9).",
        "",
        *table("Headline: every point that is not in-sample (integer mixbench kernels excluded, see below)", held_out),
        *table("rocprof kernels, all (integer mixbench kernels included: the specs have no integer VALU rate, so their compute is not timed)", roc),
        *table("Published figures, as shipped (in-sample points included)", pub),
        *table("Published figures, first principles (`first_principles=True`: no per-GPU measurement used)", pub_fp),
        "### Published points, one by one",
        "",
        "| point | source | error as shipped | in-sample | error first-principles |",
        "|---|---|---|---|---|",
    ]
    for a, b in zip(pub, pub_fp, strict=True):
        lines.append(f"| {a['what']} | {a['source']} | {a['error']:+.1%} | {'yes' if a['in_sample'] else 'no'} | {b['error']:+.1%} |")
    lines += [
        "",
        "### What the errors say",
        "",
        "- Memory-bound mixbench kernels on MI210 are read-only streams that reach ~1.5 TB/s, above",
        "  the 1305 GB/s triad ceiling in `archspecs/mi210.yaml`: the model is 11-16% slow on them.",
        "  A read-only HBM ceiling per GPU would fix this; we do not fit one to the data we validate on.",
        "- vcopy's first dispatch is ~30% slower than the next two on every GPU (cold TLB/clock ramp);",
        "  later dispatches agree within ~10% on MI100, MI210 and MI300X. MI350's vcopy runs 3-4x",
        "  slower than the model: a 16 MiB copy at ~1 TB/s on a part that streams 6.9 TB/s, which",
        "  `perfmodel validate` attributes to the memory term running far below its ceiling.",
        "- GPUs whose specs carry a measured GEMM rate (MI300X, MI325X, MI355X, H200, RDNA3/4) agree",
        "  closely on the big GEMMs, partly by construction (in-sample). The first-principles column",
        "  shows the cost of not knowing the clock a part sustains under dense matrix load: MI300X",
        "  runs its GEMMs at ~1.2 GHz of 2.1, so first principles are 30-50% optimistic there.",
        "",
        "See `docs/accuracy-validate.md` (`python scripts/accuracy_mixbench.py`) for the",
        "kernel-by-kernel closed loop: FLOPs, HBM bytes and bound class per mixbench type.",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
