"""Kernel models, one small module per family, registered by name in `registry.MODELS`.

Every module of this package is imported on first use of the registry, so a new family is one
new file here that calls `registry.register`: nothing else to edit. Modules whose name starts
with an underscore are skipped.
"""

from __future__ import annotations

import importlib
import pkgutil

_loaded = False


def models_loaded() -> bool:
    """Whether every family has registered (`load_all_models` ran)."""
    return _loaded


def load_all_models() -> None:
    """Import every module of this package once (each registers its families)."""
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True
