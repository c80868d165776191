"""Modules named like the function the package exports (`perfmodel.sweep`, `perfmodel.estimate`,
`perfmodel.roofline`, `perfmodel.validate`).

Importing such a module, which perfmodel itself does on first use (`perfmodel.predict` imports
`perfmodel.estimate`), binds the package's attribute to the module and shadows the function
`perfmodel/__init__.py` exports lazily: `perfmodel.estimate(work, arch)` would then fail. Making
the module callable keeps `perfmodel.<name>(...)` the function's call either way.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable


def make_callable(module_name: str, fn: Callable) -> None:
    """Calling the module ``module_name`` calls ``fn``."""

    class _CallableModule(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return fn(*args, **kwargs)

    _CallableModule.__doc__ = f"The module {module_name}; calling it calls {fn.__name__}."
    sys.modules[module_name].__class__ = _CallableModule
