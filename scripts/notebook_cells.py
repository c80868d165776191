"""What the notebook generators (`scripts/make_notebook_0*.py`) share: a code cell that must show a
figure (``metadata.expect_figure``, which the notebook tests check) and writing the unexecuted
notebook under notebooks/."""

from pathlib import Path

import nbformat as nbf

KERNELSPEC = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}


def fig_cell(src: str):
    c = nbf.v4.new_code_cell(src)
    c.metadata["expect_figure"] = True
    return c


def write(cells: list, name: str) -> Path:
    """notebooks/<name>, unexecuted."""
    out = Path(__file__).resolve().parents[1] / "notebooks" / name
    out.write_text(nbf.writes(nbf.v4.new_notebook(cells=cells, metadata=KERNELSPEC)))
    return out
