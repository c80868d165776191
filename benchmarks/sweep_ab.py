"""Two checkouts' `perfmodel.sweep` on the benchmark's 1M GEMM shapes, interleaved (A B A B).

`predict_speed.py`'s figure moves by 20 % from one minute to the next on a shared machine; runs
taken in turn, each in a fresh process with its checkout first on the path, compare better.
Per run it prints the best of three 1M-shape sweeps (`predict_speed.sweep_rate`) and the
child's CPU time (user + system, `os.wait4`; it includes the warm-up and the shape arrays).
Run:

    OMP_NUM_THREADS=1 python benchmarks/sweep_ab.py OLD_CHECKOUT NEW_CHECKOUT [--runs 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

CHILD = "import sys; sys.path.insert(0, 'benchmarks'); from predict_speed import sweep_rate; print(sweep_rate())"


def run(checkout: str) -> tuple[float, float]:
    """(GEMM estimates/s, best of three sweeps; child CPU s) of one fresh process."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONPATH=os.path.abspath(checkout))
    p = subprocess.Popen([sys.executable, "-c", CHILD], cwd=checkout, env=env, stdout=subprocess.PIPE, text=True)
    rate = float(p.stdout.read())
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        raise SystemExit(f"{checkout}: exit status {status}")
    return rate, ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=4)
    a = ap.parse_args()
    res: dict[str, list] = {"old": [], "new": []}
    for _ in range(a.runs):
        for k, path in (("old", a.old), ("new", a.new)):
            rate, cpu = run(path)
            res[k].append((rate, cpu))
            print(f"{k}: {rate:,.0f} GEMM estimates/s, child CPU {cpu:.2f} s", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    print("| checkout | GEMM estimates/s, best / median | child CPU, best / median |")
    print("|---|---|---|")
    for k, path in (("old", a.old), ("new", a.new)):
        rates, cpus = zip(*res[k], strict=True)
        print(f"| {k} ({path}) | {max(rates):,.0f} / {statistics.median(rates):,.0f} | {min(cpus):.2f} / {statistics.median(cpus):.2f} s |")


if __name__ == "__main__":
    main()
