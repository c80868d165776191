"""From a PyTorch model to per-op predictions: meta-device tracing (`trace`), op -> case rules
(`opmap`), transformer configs (`config`, `configs/*.yaml`) and builders (`llm`), and the
analysis (`analyze`). torch is imported only inside the functions that need it.

    import perfmodel
    perfmodel.analyze(module, *example_inputs, arch=["mi300x", "h100"])
"""

from __future__ import annotations


def analyze(module, *example_inputs, arch="mi300x", dtype=None, fused=False, **meta):
    from perfmodel.frontend.analysis import analyze as _analyze

    return _analyze(module, *example_inputs, arch=arch, dtype=dtype, fused=fused, **meta)


def analyze_model(model: str, arch="mi300x", **kw):
    from perfmodel.frontend.analysis import analyze_model as _am

    return _am(model, arch, **kw)


def require_torch(who: str) -> None:
    """One error line where PyTorch, which the model builders trace with, is not installed."""
    import importlib.util

    from perfmodel.errors import InputError

    if importlib.util.find_spec("torch") is None:
        raise InputError(f"{who} needs PyTorch: pip install 'perfmodel[torch]' (torch==2.13.0, CPU build)", key="torch")
