"""Regenerate every image the README and docs show (docs/img/), through the CLI as a user runs it.

    python scripts/make_readme_images.py

Each image is the output of one `perfmodel` command, printed as it runs, so a reader can
reproduce any of them. Run it after a change to the models, the archspecs or the plots.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = "docs/img"
ROC = "tests/data/rocprof/rocprofiler-compute"
LLAMA = "docs/img/llama-cases.yaml"
GPUS = "mi300x,mi355x,rx7900xtx"

# one command per image, as a user types it (paths relative to the repository root)
COMMANDS = [
    ["predict", "--suite", "--arch", "mi300x", "-o", f"{IMG}/suite-mi300x.png"],
    ["predict", "--suite", "--arch", "mi300x", "-o", f"{IMG}/suite-mi300x.html"],
    ["predict", "--cases", LLAMA, "--arch", GPUS, "-o", f"{IMG}/llama-3gpus.png"],
    ["predict", "--cases", LLAMA, "--arch", GPUS, "--chart", "times", "-o", f"{IMG}/llama-times.png"],
    ["predict", "--cases", LLAMA, "--arch", "mi300x", "--chart", "terms", "-o", f"{IMG}/llama-terms-mi300x.png"],
    [
        "roofline", "--measured", f"{ROC}/legacy_2022/mixbench/mi200",
        "--kernel", "benchmark_func<(float|double|__half2|HIP_vector)", "--top", "8", "-o", f"{IMG}/mixbench-mi210.png",
    ],
    ["roofline", "--measured", f"{ROC}/tests_workloads_2024/vcopy/MI200", "-o", f"{IMG}/vcopy-mi210.png"],
    ["validate", "tests/data/traces/sglang_Qwen3-8B_prefilldecode.json.gz", "-o", f"{IMG}/trace-sglang-mi300x.png"],
]


def main() -> None:
    import os
    import shlex

    from perfmodel.cli.main import main as cli

    os.chdir(ROOT)
    Path(IMG).mkdir(parents=True, exist_ok=True)
    for args in COMMANDS:
        print("$ perfmodel " + shlex.join(args), file=sys.stderr)
        try:
            cli([*args, "--format", "csv", "-O", os.devnull])
        except SystemExit as e:
            if e.code not in (0, None):
                raise


if __name__ == "__main__":
    main()
