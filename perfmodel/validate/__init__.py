"""Validation: rocprof measurements beside the model's predictions, term by term.

    import perfmodel
    v = perfmodel.validate("workloads/mixbench/mi200")  # arch from sysinfo.csv
    v.rows                                              # one dict per kernel (contract fields)
    v                                                   # a table in Jupyter; print(v.render("md"))
    vs = perfmodel.validate.validate_many(["rank_0", "rank_1"], jobs=2)  # vs.runs, vs.merged, vs.rows

`identify` maps kernel names (the families' registered patterns, or a manifest) to cases,
`compare` joins a Measurement with the prediction, `report` builds the rows the CLI prints.
"""

from __future__ import annotations

from perfmodel.callable_module import make_callable
from perfmodel.validate.many import ValidationSet, validate_many
from perfmodel.validate.report import Validation, validate

__all__ = ["Validation", "ValidationSet", "validate", "validate_many"]

make_callable(__name__, validate)  # `perfmodel.validate(path)` even after this package was imported
