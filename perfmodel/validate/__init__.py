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

import sys
import types

from perfmodel.validate.many import ValidationSet, validate_many
from perfmodel.validate.report import Validation, validate

__all__ = ["Validation", "ValidationSet", "validate", "validate_many"]


class _CallablePackage(types.ModuleType):
    """``perfmodel.validate(path)`` works even after this package was imported: importing it
    binds the name ``perfmodel.validate`` to the package, which would shadow the function."""

    def __call__(self, *args, **kwargs) -> Validation:
        return validate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
