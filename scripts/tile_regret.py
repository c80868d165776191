"""How consistent the GEMM tile ranking is with the estimator (no measurement involved).

For every held-out `gemm` point of validation/ (the shapes, not the times), time the tile the
ranking picks (`gemm_tiling._choose`) and every candidate of `tiles.gemm_candidates` with the
full estimator, at split 1 and at the split-K factors 2-16 that leave each split at least one K
step; print the regret, the pick's time over the best of them, against the split-1 tiles alone
and against all. A regret of 1 means the ranking picks what the estimator itself times fastest.
GEMV-path shapes (m <= 4 on 16-row tiles) are left out: they do not rank tiles.

    python scripts/tile_regret.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import accuracy  # noqa: E402  (the validation loader)
from forced_config import FORCED as _forced  # noqa: E402
from forced_config import install  # noqa: E402

from perfmodel import dtypes  # noqa: E402
from perfmodel.arch import load_arch  # noqa: E402
from perfmodel.cases import normalize_all  # noqa: E402
from perfmodel.estimate import estimate  # noqa: E402
from perfmodel.models import tiles  # noqa: E402
from perfmodel.models.registry import get_model  # noqa: E402


def main() -> None:
    install()
    points = json.loads((ROOT / "validation" / "accuracy.json").read_text())["points"]
    held = {p["id"] for p in points if p.get("shipped") and not p["shipped"]["in_sample"]}
    model = get_model("gemm")
    regrets, regrets_split = [], []
    for e in accuracy.load_points():
        if e["id"] not in held or e["case"]["kernel"] != "gemm":
            continue
        case = normalize_all([dict(e["case"])], [e["arch"]], scope="kernel")[0]
        arch = load_arch(e["arch"])
        params = {
            key: np.atleast_1d(np.asarray(v, dtype=float)) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
            for key, v in case.params.items()
        }
        _forced.clear()
        work = model.fn(params, arch, case.dtype)
        if float(np.ravel(work.launch.tile_m)[0]) <= 16 and case.params.get("m", 99) <= 4:
            continue
        picked = float(np.ravel(estimate(work, arch).time_s)[0])
        best = best_split = picked
        k = float(case.params["k"])
        for tile, tk in tiles.gemm_candidates(arch, dtypes.size(case.dtype), 4.0):
            for split in (1, 2, 4, 8, 16):
                if split > 1 and k / split < tk:
                    break
                _forced.update(tm=tile.m, tn=tile.n, tk=tk, lanes=tile.lanes, split=split)
                t = float(np.ravel(estimate(model.fn(params, arch, case.dtype), arch).time_s)[0])
                best_split = min(best_split, t)
                if split == 1:
                    best = min(best, t)
        _forced.clear()
        regrets.append(picked / best)
        regrets_split.append(picked / best_split)
    for label, values in (("best split-1 tile", regrets), ("best tile at any split", regrets_split)):
        r = np.array(values)
        print(
            f"held-out GEMM shapes: {len(r)}; regret (ranked pick / estimator's {label}): "
            f"median {np.median(r):.3f}, mean {r.mean():.3f}, p90 {np.percentile(r, 90):.3f}, "
            f"above 1.05: {(r > 1.05).mean():.0%}"
        )


if __name__ == "__main__":
    main()
