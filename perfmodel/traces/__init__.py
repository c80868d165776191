"""Real profiler traces: torch.profiler chrome traces (``.json`` / ``.json.gz``) read, kernels
joined to their aten ops, identified, predicted and compared, weighted by GPU time; rocprofv3
kernel traces (JSON) and RPD databases give kernels without ops.

The hook for `perfmodel validate` (and the readers' format table): `detect(path)` says whether a
path is such a trace, `validate_trace(path, ...)` returns its report (`traces.report.TraceReport`).
"""

from __future__ import annotations


def detect(path) -> bool:
    """A chrome trace, a rocprofv3 JSON result without counter records (a kernel trace,
    reported like a chrome trace), or an RPD database (`traces.rpd`). A rocprofv3 JSON with
    counter records is a rocprof workload: the readers read its counters
    (`perfmodel.readers.rocprof_json`)."""
    from perfmodel.readers.rocprof_json import has_counter_records
    from perfmodel.traces.chrome import is_chrome_trace
    from perfmodel.traces.rpd import is_rpd

    return (is_chrome_trace(path) and not has_counter_records(path)) or is_rpd(path)


def refuse_options(path, **options) -> None:
    """One error line naming the rocprof-only options given for a trace (per-dispatch rows,
    clock and CU overrides, the kernel-name filter), which the trace report would ignore."""
    from perfmodel.errors import InputError

    given = [name for name, value in options.items() if value]
    if given:
        also = f" (nor {', '.join(given[1:])})" if len(given) > 1 else ""
        raise InputError(f"only for rocprof workloads, not a torch.profiler trace{also}", where=str(path), key=given[0])


def validate_trace(path, arch=None, manifest=None, dtype="bf16", step=None):
    from perfmodel.traces.report import validate_trace as _v

    return _v(path, arch=arch, manifest=manifest, dtype=dtype, step=step)

