"""CI gate: the held-out accuracy committed in validation/accuracy.json must not get worse.

Recomputes the held-out statistics of scripts/accuracy.py (no rocprof, no plots, no writing) and
fails when a per-family or pooled held-out median or p90 (as shipped) grows by more than
TOLERANCE, or coverage falls. After a model change that improves the figures, rerun
`python scripts/accuracy.py` and commit the regenerated files.
"""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.005  # 0.5 percentage point


@pytest.fixture(scope="module")
def figures(accuracy_script):
    mod = accuracy_script
    now = mod.gate_figures(mod.compute(with_rocprof=False))
    committed = json.loads((ROOT / "validation" / "accuracy.json").read_text())["gate"]
    return now, committed


def test_coverage_does_not_fall(figures):
    now, committed = figures
    assert now["coverage"] >= committed["coverage"] - 1e-9


@pytest.mark.parametrize("stat", ["median", "p90"])
def test_held_out_error_does_not_grow(figures, stat):
    now, committed = figures
    worse = []
    for fam, c in [*committed["families"].items(), ("all", committed["all"])]:
        n = now["all"] if fam == "all" else now["families"].get(fam)
        if n is None:
            worse.append(f"{fam}: no held-out points any more (committed n={c['n']})")
        elif n[stat] > c[stat] + TOLERANCE:
            worse.append(f"{fam}: held-out {stat} {n[stat]:.1%} > committed {c[stat]:.1%}")
    assert not worse, "; ".join(worse)


def test_committed_json_matches_data(figures):
    """The committed figures were generated from the committed data (rerun the script if not)."""
    now, committed = figures
    assert {k: v["n"] for k, v in now["families"].items()} == {
        k: v["n"] for k, v in committed["families"].items()
    }
