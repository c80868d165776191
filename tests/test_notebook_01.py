"""Execute notebooks/01_predict.ipynb top to bottom: every cell runs, every figure is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB = Path(__file__).resolve().parents[1] / "notebooks" / "01_predict.ipynb"


def execute(path: Path, cwd: Path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def check_figures(nb) -> int:
    """Every cell marked ``expect_figure`` shows an image/png; none errors; only the public API."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.get("output_type") == "error"]
    assert not [c for c in code if "perfmodel.cli" in c.source or "matplotlib.use" in c.source]
    expected = [c for c in code if c.metadata.get("expect_figure")]
    for c in expected:
        pngs = [o for o in c.outputs if "image/png" in o.get("data", {})]
        assert len(pngs) == 1, f"cell shows {len(pngs)} figures, expected 1:\n{c.source}"
    return len(expected)


def output_text(nb) -> str:
    """The text the notebook's code cells printed."""
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_notebook_01_executes_and_shows_its_figures(tmp_path):
    nb = execute(NB, tmp_path)
    assert check_figures(nb) == 6
    text = output_text(nb)
    assert "mi300x" in text and "memory:hbm" in text
    html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "<table>" in html and "head_dim" in html  # predictions and the kernels' keys as tables
