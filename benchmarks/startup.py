"""Start-up time of the perfmodel console script (target: `perfmodel --help` <= 0.25 s).

Runs each command N times in a fresh process (the console script next to sys.executable),
reports best and median wall time as a markdown table, and which heavy modules `--help`
and `archs` imported (from `python -X importtime`). Not a test: timings vary by machine.

    .venv/bin/python benchmarks/startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = (["--help"], ["archs"])
HEAVY = ("numpy", "matplotlib", "torch", "yaml")


def console_script() -> Path:
    exe = Path(sys.executable).parent / "perfmodel"
    if not exe.exists():
        sys.exit(f"no perfmodel console script next to {sys.executable}; install the package first")
    return exe


def time_runs(cmd: list[str], runs: int) -> list[float]:
    subprocess.run(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )  # warm the page cache
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        out.append(time.perf_counter() - t0)
    return out


def imported_modules(args: list[str]) -> set[str]:
    """Top-level packages imported by `perfmodel <args>`, read from -X importtime."""
    code = "import sys; from perfmodel.cli.main import main; sys.argv = ['perfmodel', *sys.argv[1:]]; main()"
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *args], capture_output=True, text=True, check=False
    )
    mods = set()
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            mods.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return mods


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    exe = console_script()
    print(
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; {a.runs} runs each\n"
    )
    print("| command | best (s) | median (s) | imports " + " / ".join(HEAVY) + " |")
    print("|---|---|---|---|")
    for args in COMMANDS:
        t = time_runs([str(exe), *args], a.runs)
        mods = imported_modules(args)
        flags = " / ".join("yes" if m in mods else "no" for m in HEAVY)
        print(f"| `perfmodel {' '.join(args)}` | {min(t):.3f} | {statistics.median(t):.3f} | {flags} |")
    # the floor: a bare interpreter start on the same machine
    t = time_runs([sys.executable, "-c", "pass"], a.runs)
    print(f"| `python -c pass` (floor) | {min(t):.3f} | {statistics.median(t):.3f} | - |")


if __name__ == "__main__":
    main()
