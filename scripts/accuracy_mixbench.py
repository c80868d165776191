#!/usr/bin/env python
"""The first closed loop: mixbench (and vcopy) measured by rocprof vs perfmodel's prediction.

Reruns `perfmodel.validate` on the real measurement files and prints, per kernel type, the
time error (median / p90 / max of |predicted / measured - 1|), how many kernels' FLOPs match
the definition exactly (in the counters' convention: a packed v_pk_fma counts once), how many
HBM byte counts are within 5 % of the model (with the explanation of the others) and how many
predicted bound classes agree with the measured one. Writes the same text to
docs/accuracy-validate.md.

    .venv/bin/python scripts/accuracy_mixbench.py [--out docs/accuracy-validate.md]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "data" / "rocprof"
MIX = "rocprofiler-compute/legacy_2022/mixbench/{}"
VCOPY = {
    "MI100": "rocprofiler-compute/tests_workloads_2024/vcopy/MI100",
    "MI210": "rocprofiler-compute/tests_workloads_2024/vcopy/MI200",
    "MI300A": "rocprofiler-compute/tests_workloads_2024/vcopy/MI300A_A1",
    "MI300X": "rocprofiler-compute/tests_workloads_2024/vcopy/MI300X_A1",
    "MI300X (rocpd)": "rocm-systems/tests_workloads_2025/vcopy/MI300X_A1_rocpd",
    "MI350": "rocm-systems/tests_workloads_2025/vcopy/MI350",
}
PAT = re.compile(r"benchmark_func<(.+?), 256, 8u, (\d+)u>")


def find(rel: str) -> Path | None:
    """The workload under tests/data/rocprof (every one this report uses is copied there, with
    its origin in that folder's README), or None."""
    p = TESTS / rel
    return p if p.exists() else None


def pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def p90(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]


def mixbench_section(gpu: str, path: Path) -> list[str]:
    from perfmodel.validate import validate

    v = validate(str(path), per_dispatch=True)
    rows = [r for r in v.rows if PAT.search(r["kernel"])]
    by: dict[str, list[dict]] = {}
    for r in rows:
        t = PAT.search(r["kernel"]).group(1)
        t = {"__half2": "half2", "HIP_vector_type<float, 2u>": "float2"}.get(t, t)
        by.setdefault(t, []).append(r)
    out = [
        f"### mixbench on {gpu} ({v.arch.key}, {len(rows)} kernels; `{path.relative_to(path.parents[3])}`)",
        "",
        "| type | kernels | time error median | p90 | max | FLOPs exact | HBM within 5% | bound agrees | model slower/faster |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    explain: Counter = Counter()
    for t, rs in by.items():
        errs = [abs(r["time_error"]) for r in rs if r.get("time_error") is not None]
        fl = [r["flops_match"] for r in rs]
        fl_txt = (
            "n/a (no FLOP counters)" if all(x is None for x in fl) else f"{sum(1 for x in fl if x)}/{len(rs)}"
        )
        hbm = [r["bytes_ratio"].get("hbm") for r in rs if r.get("bytes_ratio")]
        within = sum(1 for x in hbm if x is not None and abs(x - 1) <= 0.05)
        known = [r for r in rs if r.get("measured_bound") not in (None, "unknown")]  # missing, not disagreeing
        bound = f"{sum(1 for r in known if r['bound'] == r['measured_bound'])}/{len(known)}" if known else "n/a (not measurable)"
        slow = sum(1 for r in rs if (r.get("time_error") or 0) > 0)
        out.append(
            f"| {t} | {len(rs)} | {pct(statistics.median(errs)) if errs else '-'} | {pct(p90(errs)) if errs else '-'} | "
            f"{pct(max(errs)) if errs else '-'} | {fl_txt} | {within}/{len(hbm)} | {bound} | {slow}/{len(rs) - slow} |"
        )
        for r in rs:
            if r.get("explaining_term"):
                explain[(t, r["explaining_term"])] += 1
            for part in (r.get("explain") or "").split("; ")[1:]:
                explain[(t, re.sub(r"[\d.]+x", "Nx", part))] += 1
    out += ["", "Explanations given (kernel type: text or explaining term, count):", ""]
    for (t, what), n in sorted(explain.items()):
        out.append(f"- {t}: {what} ({n})")
    out += [""] + [f"note: {n}" for n in v.notes] + [""]
    return out


def vcopy_section() -> list[str]:
    from perfmodel.validate import validate

    out = [
        "### vcopy (stream copy, fp64, 1 Mi elements: 8 MiB read + 8 MiB written), per dispatch",
        "",
        "| GPU | arch | dispatch | measured us | predicted us | time error | HBM / model | bound (meas / pred) | explanation |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for gpu, rel in VCOPY.items():
        p = find(rel)
        if p is None:
            out.append(f"| {gpu} | - | - | - | - | - | - | - | data not found |")
            continue
        v = validate(str(p), per_dispatch=True)
        for r in v.rows:
            hb = (r.get("bytes_ratio") or {}).get("hbm")
            te = r.get("time_error")
            out.append(
                f"| {gpu} | {v.arch.key} | {r['dispatch']} | {r['time_us'] and round(r['time_us'], 2)} | {r['predicted_time_us']:.2f} | "
                f"{'-' if te is None else f'{te:+.1%}'} | {'-' if hb is None else f'{hb:.3f}'} | {r['measured_bound']} / {r['bound']} | "
                f"{r.get('explain', '')} {'; '.join(r['flags'][:1])} |"
            )
    return out + [""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "accuracy-validate.md"))
    args = ap.parse_args(argv)
    lines = [
        "# Accuracy: measured (rocprof) vs predicted - mixbench and vcopy",
        "",
        "Generated by `scripts/accuracy_mixbench.py` from the real rocprof files in tests/data/rocprof (origin:",
        "its README). Time error = predicted / measured - 1; bound agrees: predicted bound class = the one",
        "the counters measure, over the kernels where they can tell (MI100 has no FLOP counters);",
        "FLOPs exact = counted FLOPs equal the kernel definition in the counters' convention (a packed",
        "v_pk_fma counts once); HBM within 5% = measured HBM bytes / model in [0.95, 1.05].",
        "",
    ]
    for gpu, key in (("MI210", "mi200"), ("MI100", "mi100")):
        p = find(MIX.format(key))
        lines += mixbench_section(gpu, p) if p else [f"### mixbench on {gpu}: data not found", ""]
    lines += vcopy_section()
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
