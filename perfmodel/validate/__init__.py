"""Validation: rocprof measurements beside the model's predictions, term by term.

    from perfmodel.validate import validate
    v = validate("workloads/mixbench/mi200")          # arch from sysinfo.csv
    v.rows                                             # one dict per kernel (contract fields)

`identify` maps kernel names (built-in patterns, or a manifest) to cases, `compare` joins a
Measurement with the prediction, `report` builds the rows the CLI prints.
"""

from __future__ import annotations

from perfmodel.validate.report import Validation, render_validation, validate

__all__ = ["Validation", "render_validation", "validate"]
