"""notebooks/02_validate.ipynb runs top to bottom (nbclient, python3 kernel) and shows its figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_notebook_01 import check_figures, execute

NB = Path(__file__).resolve().parents[1] / "notebooks" / "02_validate.ipynb"


def test_notebook_02_executes_and_shows_its_figures():
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    nb = execute(NB, NB.parent)
    assert check_figures(nb) == 2
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "benchmark_func" in out and "counted basis" in out
