"""Validation: rocprof measurements beside the model's predictions, term by term.

    from perfmodel.validate import validate
    v = validate("workloads/mixbench/mi200")          # arch from sysinfo.csv
    v.rows                                             # one dict per kernel (contract fields)
    print(v.render("table"))

`identify` maps kernel names (the families' registered patterns, or a manifest) to cases,
`compare` joins a Measurement with the prediction, `report` builds the rows the CLI prints.
"""

from __future__ import annotations

from perfmodel.validate.report import Validation, validate

__all__ = ["Validation", "validate"]
