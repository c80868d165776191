"""Compare perfmodel's kernel-scope predictions with a stored device run of cuda_microbench.py.

    python benchmarks/device/compare.py benchmarks/device/results/h200-2026-11-26.json --arch h200

Prints one row per measured kernel (elementwise sweep, norms, attention, GEMMs, the read-only
and elementwise kernels of the `dirty` section after their write flush) with the
predicted / measured ratio and the largest terms; docs/device-measurements.md quotes it.
"""

from __future__ import annotations

import argparse
import json
import statistics

DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}


def cases(run: dict) -> list[tuple[str, str, dict, float]]:
    """(section, label, case, measured kernel us) for every kernel with a cold duration."""
    out = []
    for r in run.get("elementwise_mul", []):
        dt = DTYPES[r["dtype"]]
        case = {"n": r["n"], "dtype": dt, "reads": 1, "writes": 1, "flops_per_element": 1}
        out.append(
            ("elementwise", f"mul {dt} n={r['n']}", {"kernel": "elementwise", **case}, r["cold_kernel_us"])
        )
    for r in run.get("norms", []):
        dt = DTYPES[r["dtype"]]
        case = {"kernel": r["op"], "rows": r["rows"], "cols": r["cols"], "dtype": dt}
        out.append(("norms", f"{r['op']} {dt} {r['rows']}x{r['cols']}", case, r["cold_kernel_us"]))
    for r in run.get("rows", []):
        dt = DTYPES[r["dtype"]]
        case = {"kernel": r["op"], "rows": r["rows"], "cols": r["cols"], "dtype": dt}
        out.append(("rows", f"{r['op']} {dt} {r['rows']}x{r['cols']}", case, r["cold_kernel_us"]))
    for section, r in [("attention", r) for r in run.get("attention_fwd", [])] + [
        ("attention_seq", r) for r in run.get("attention_seq", [])
    ]:
        case = {
            "kernel": "attention",
            "batch": r["batch"],
            "heads": r["heads"],
            "seq_q": r["seq"],
            "head_dim": r["head_dim"],
            "causal": r["causal"],
            "dtype": "bf16",
        }
        case["phase"] = r.get("phase", "fwd")
        label = f"sdpa {r.get('backend', 'flash')} {case['phase']} B{r['batch']} H{r['heads']} N{r['seq']} D{r['head_dim']}"
        label += f" causal={r['causal']}"
        out.append((section, label, case, r["cold_kernel_us"]))
    for section, r in [("gemm", r) for r in run.get("gemm", run.get("gemm_bf16", []))] + [
        ("gemm_k", r) for r in run.get("gemm_k", [])
    ]:
        dt = DTYPES.get(r.get("dtype", ""), "bf16")
        case = {"kernel": "gemm", "m": r["m"], "n": r["n"], "k": r["k"], "dtype": dt}
        out.append((section, f"gemm {dt} {r['m']}x{r['n']}x{r['k']}", case, r["cold_kernel_us"]))
    for r in run.get("gemm_fp8", []):
        if r["scaling"] != "tensor":  # per-row scales: no case key of the model says so
            continue
        case = {"kernel": "gemm", "m": r["m"], "n": r["n"], "k": r["k"], "dtype": "fp8", "scaling": "tensor"}
        out.append(("gemm_fp8", f"gemm fp8 {r['m']}x{r['n']}x{r['k']}", case, r["cold_kernel_us"]))
    for r in run.get("gemm_fp8_block", []):
        case = {"kernel": "gemm", "m": r["m"], "n": r["n"], "k": r["k"], "dtype": "fp8", "scaling": r["scaling"], "out_dtype": "bf16"}
        out.append(("gemm_fp8_block", f"gemm fp8 {r['scaling']} {r['m']}x{r['n']}x{r['k']}", case, r["cold_kernel_us"]))
    for r in run.get("dirty", []):  # measured after the write flush that cold predictions assume
        n = r["bytes"] // 2  # bf16 elements
        if r.get("kernel", "read") == "read":
            case = {"kernel": "reduction", "n": n, "dtype": "bf16"}
        else:
            case = {"kernel": "elementwise", "n": n, "dtype": "bf16", "reads": 1, "writes": 1, "flops_per_element": 1}
        label = f"{r.get('kernel', 'read')} bf16 {r['bytes'] >> 20} MiB after a write flush"
        out.append(("dirty", label, case, r["write_flush_us"]))
    return [c for c in out if c[3]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--arch", default="h200")
    args = ap.parse_args()
    import perfmodel

    data = json.load(open(args.results))
    run: dict = {}
    for r in data.get("runs", [{"result": data}]):  # a later run's section replaces an earlier one
        run.update(r["result"])
    ratios: dict[str, list[float]] = {}
    for section, label, case, measured in cases(run):
        case = dict(case)
        row = perfmodel.predict(case.pop("kernel"), args.arch, **case).rows[0]
        pred = row["time_us"]
        top = sorted(((v, k) for k, v in row["terms_us"].items()), reverse=True)[:2]
        ratios.setdefault(section, []).append(pred / measured)
        terms = " ".join(f"{k}={v:.1f}" for v, k in top)
        print(
            f"{label:40s} measured {measured:9.2f} us  predicted {pred:9.2f} us  ratio {pred / measured:5.2f}  {terms}"
        )
    for section, r in ratios.items():
        print(f"{section}: n={len(r)} ratio {min(r):.2f}..{max(r):.2f}, median {statistics.median(r):.2f}")


if __name__ == "__main__":
    main()
