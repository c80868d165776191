"""notebooks/04_traces.ipynb runs top to bottom (nbclient, python3 kernel) and shows its figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_notebook_01 import check_figures, execute

NB = Path(__file__).resolve().parents[1] / "notebooks" / "04_traces.ipynb"


def test_notebook_04_executes_and_shows_its_figures():
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    nb = execute(NB, NB.parent)
    assert check_figures(nb) == 2
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "identified 100.0%" in out and "recorded on mi300x, predicted on mi355x" in out
    assert "allreduce" in out and "wait for the last rank" in out
