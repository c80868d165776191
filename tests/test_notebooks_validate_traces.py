"""notebooks/02_validate.ipynb and 04_traces.ipynb run top to bottom (nbclient, python3 kernel)
and show their figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_notebook_01 import check_figures, execute, output_text

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.mark.parametrize("name,figures,texts", [
    ("02_validate.ipynb", 2, ("benchmark_func", "counted basis")),
    ("04_traces.ipynb", 3, ("identified 100.0%", "recorded on mi300x, predicted on mi355x", "allreduce", "wait for the last rank",
                            "predicted share: 0.9% without the model, 96.0% with it")),
])
def test_notebook_executes_and_shows_its_figures(name, figures, texts):
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    nb = execute(NOTEBOOKS / name, NOTEBOOKS)
    assert check_figures(nb) == figures
    out = output_text(nb)
    assert all(t in out for t in texts)
