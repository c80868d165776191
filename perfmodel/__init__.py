"""perfmodel: roofline performance models for AMD Instinct (CDNA) and Radeon (RDNA) GPUs.

The Python API for notebooks::

    import perfmodel
    perfmodel.predict("gemm", "mi300x", dtype="bf16", m=4096, n=4096, k=4096)
    perfmodel.sweep("gemm", "mi300x", "bf16", m=M[:, None], n=N[None, :], k=4096).bound
    perfmodel.load_arch("mi355x").peak_flops("mfma", "fp8")
    perfmodel.validate("workloads/mixbench/mi200")     # rocprof output beside the model
    perfmodel.validate("trace.json.gz", arch="mi355x") # a torch.profiler trace (a what-if on another GPU)
    perfmodel.plot_roofline(preds)                     # a figure (Jupyter shows it inline)
    perfmodel.kernels()                                # every kernel family and its keys

Results show as tables in Jupyter, have ``.rows`` (dicts) and ``.to_pandas()`` (with pandas).

Names are imported on first use, so ``import perfmodel`` (and the CLI) start fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "predict": ("perfmodel.prediction", "predict"),
    "sweep": ("perfmodel.sweep", "sweep"),
    "Predictions": ("perfmodel.prediction", "Predictions"),
    "load_arch": ("perfmodel.arch", "load_arch"),
    "arch_keys": ("perfmodel.arch", "arch_keys"),
    "Arch": ("perfmodel.arch", "Arch"),
    "roofline": ("perfmodel.roofline", "roofline"),
    "estimate": ("perfmodel.estimate", "estimate"),
    "Work": ("perfmodel.work", "Work"),
    "InputError": ("perfmodel.errors", "InputError"),
    "read_workload": ("perfmodel.readers", "read_workload"),
    "analyze": ("perfmodel.frontend", "analyze"),
    "analyze_model": ("perfmodel.frontend", "analyze_model"),
    "validate": ("perfmodel.validate", None),  # the package is callable: validate(path)
    "Validation": ("perfmodel.validate.report", "Validation"),
    "kernels": ("perfmodel.tables", "kernels"),
    "plot_roofline": ("perfmodel.plots.api", "plot_roofline"),
    "plot_bandwidth": ("perfmodel.plots.api", "plot_bandwidth"),
    "plot_times": ("perfmodel.plots.api", "plot_times"),
    "plot_terms": ("perfmodel.plots.api", "plot_terms"),
    "plot_bound_map": ("perfmodel.plots.api", "plot_bound_map"),
    "plot_trace": ("perfmodel.plots.api", "plot_trace"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = importlib.import_module(mod)
        value = getattr(value, attr) if attr else value
        globals()[name] = value
        return value
    raise AttributeError(f"module 'perfmodel' has no attribute {name!r}")
