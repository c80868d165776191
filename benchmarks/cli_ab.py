"""Two checkouts' `perfmodel predict --cases` on the benchmark's 100k cases, interleaved (A B A B).

On a shared machine the wall time of one run moves more than a change does; runs taken in turn
and the child's CPU time (user + system, `os.wait4`) compare better. Per run it prints the CPU
and wall with stdout to /dev/null, and the wall with stdout read through a pipe (what
`predict_speed.py`'s `cli_rate` times). Run:

    OMP_NUM_THREADS=1 python benchmarks/cli_ab.py OLD_CHECKOUT NEW_CHECKOUT [--runs 4]

Each checkout is run as ``python -m perfmodel.cli`` from its own folder (its package first on
the path) with this script's interpreter; both outputs are checked byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from predict_speed import write_cases  # noqa: E402


def run(checkout: str, cases: str, pipe: bool) -> tuple[float, float, str]:
    """(child CPU s, wall s, sha256 of stdout)."""
    cmd = [sys.executable, "-m", "perfmodel.cli", "predict", "--format", "jsonl", "--arch", "mi300x", "--cases", cases]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=subprocess.PIPE if pipe else subprocess.DEVNULL)
    digest = hashlib.sha256(p.stdout.read()).hexdigest() if pipe else ""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status:
        raise SystemExit(f"{checkout}: exit status {status}")
    return ru.ru_utime + ru.ru_stime, wall, digest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("-n", type=int, default=100_000)
    a = ap.parse_args()
    names = {"old": a.old, "new": a.new}
    with tempfile.TemporaryDirectory() as d:
        cases = os.path.join(d, "cases.jsonl")
        write_cases(cases, a.n)
        res: dict[str, list] = {k: [] for k in names}
        digests = set()
        for _ in range(a.runs):
            for k, path in names.items():
                cpu, wall, _ = run(path, cases, pipe=False)
                _, pwall, digest = run(path, cases, pipe=True)
                digests.add(digest)
                res[k].append((cpu, wall, pwall))
                print(f"{k}: cpu {cpu:.3f} s, wall {wall:.3f} s; through a pipe {pwall:.3f} s ({a.n / pwall:,.0f} cases/s)", flush=True)
    print(f"\noutputs {'identical' if len(digests) == 1 else 'DIFFER'}; load average {os.getloadavg()[0]:.2f}")
    print("| checkout | CPU best / median | wall, /dev/null, best | wall through a pipe, best / median |")
    print("|---|---|---|---|")
    for k, v in res.items():
        cpu, wall, pwall = zip(*v, strict=True)
        print(f"| {k} ({names[k]}) | {min(cpu):.2f} / {statistics.median(cpu):.2f} s ({a.n / min(cpu):,.0f} cases/CPU-s) "
              f"| {min(wall):.2f} s | {min(pwall):.2f} / {statistics.median(pwall):.2f} s ({a.n / min(pwall):,.0f} cases/s) |")


if __name__ == "__main__":
    main()
