"""Kernel models, one small module per family, registered by name in `registry.MODELS`."""

from __future__ import annotations

import importlib
import importlib.util

# Modules that register models. A module listed here that does not exist yet is skipped, so the
# registry grows as families are added.
MODEL_MODULES = (
    "stream",
    "elementwise",
    "reduction",
    "transpose",
    "softmax",
    "norms",
    "stencil",
    "gemm",
    "grouped_gemm",
    "attention",
    "conv2d",
    "moe",
    "mixbench",
    "collectives",
)

_loaded = False


def load_all_models() -> None:
    global _loaded
    if _loaded:
        return
    for m in MODEL_MODULES:
        name = f"perfmodel.models.{m}"
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
    _loaded = True
