"""Execute notebooks/03_model.ipynb top to bottom (needs the torch extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB = Path(__file__).resolve().parents[1] / "notebooks" / "03_model.ipynb"


def test_notebook_03_executes(tmp_path):
    nb = nbformat.read(NB, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    for arch in ("mi300x", "mi355x", "h100"):
        assert arch in text
    assert "us/token" in text and "allreduce_us" in text
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 4  # decode bars, prefill bars, two rooflines (plus the TP bars)
