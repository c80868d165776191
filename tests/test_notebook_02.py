"""notebooks/02_validate.ipynb runs top to bottom (nbclient, python3 kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

NB = Path(__file__).resolve().parents[1] / "notebooks" / "02_validate.ipynb"


def test_notebook_02_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NB, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NB.parent)}}
    ).execute()
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "benchmark_func" in out and "memory:hbm" in out or "compute:valu" in out
