"""RPD databases (rocmProfileData's ``rpd_tracer``, the SQLite file vLLM's and SGLang's ROCm
profiling writes): their GPU kernels, as a kernel-only trace for the trace report.

An RPD records each kernel dispatch as a ``rocpd_op`` (GPU start and end in ns) linked through
``rocpd_api_ops`` to the launching ``rocpd_api`` call and its ``rocpd_kernelapi`` row (kernel
name, grid, workgroup); its own ``kernel`` view joins them. No GPU name is recorded (only a
``gpuId``), so the report asks for ``--arch``; no host op shapes either (its optional
``ext_autogradapi`` table is not read), so kernels get their family from the name and are
predicted through a ``--cases`` manifest. Read-only; nothing is written to the database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers.opening import connect_readonly, is_sqlite
from perfmodel.traces.chrome import ChromeTrace, Kernel, launch_workitems

FORMAT = "RPD (rocmProfileData)"

# kernel dispatches with their launching call: the columns of RPD's `kernel` view, read from its
# tables so that a database without the view (a cut or an older writer) reads the same
_KERNELS = """
SELECT o.gpuId, o.start, o."end", k.gridX, k.gridY, k.gridZ, k.workgroupX, k.workgroupY, k.workgroupZ,
       n.string, a.string, k.api_ptr_id
FROM rocpd_api_ops x
JOIN rocpd_op o ON o.id = x.op_id
JOIN rocpd_kernelapi k ON k.api_ptr_id = x.api_id
JOIN rocpd_api c ON c.id = x.api_id
JOIN rocpd_string n ON n.id = k.kernelName_id
JOIN rocpd_string a ON a.id = c.apiName_id
ORDER BY o.start
"""


def is_rpd(path: str | Path) -> bool:
    """A SQLite file with RPD's ``rocpd_op`` and ``rocpd_api`` tables and none of rocprofv3's
    ``rocpd_kernel_dispatch`` (rocprofv3's rocpd database is a rocprof workload instead)."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        if not is_sqlite(p):
            return False
        con = connect_readonly(p)
        try:
            names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        finally:
            con.close()
    except (OSError, sqlite3.Error, UnicodeDecodeError):
        return False
    return {"rocpd_op", "rocpd_api"} <= names and not any(n.startswith("rocpd_kernel_dispatch") for n in names)


def read_rpd(path: str | Path) -> ChromeTrace:
    """The database's kernel dispatches in start order (durations in us). A launch through
    hipExtModuleLaunchKernel records its global size as the grid (`GLOBAL_SIZE_LAUNCHES`), so
    its work-items are the grid alone."""
    where = str(path)
    kernels, gpus = [], set()
    try:
        con = connect_readonly(path)
        try:
            _add_kernels(con.execute(_KERNELS), kernels, gpus, where)  # row by row: no copy of the whole table
        finally:
            con.close()
    except sqlite3.Error as e:
        raise InputError(f"cannot read the RPD kernel tables ({e}); expected rocpd_op, rocpd_api_ops, rocpd_kernelapi, rocpd_string",
                         where=where) from None
    notes = [f"kernels of {len(gpus)} GPUs (gpuId {', '.join(map(str, sorted(gpus)))}) reported together"] if len(gpus) > 1 else []
    return ChromeTrace(path=where, kernels=kernels, ops={}, op_names={}, devices=[], notes=notes, has_ops=False, format=FORMAT)


def _add_kernels(rows, kernels: list, gpus: set, where: str) -> None:
    for i, (gpu, start, end, gx, gy, gz, wx, wy, wz, name, api, api_id) in enumerate(rows):
        if not all(isinstance(v, int) for v in (start, end)) or end < start:
            raise InputError(f"kernel dispatch {i + 1} ({str(name)[:60]}): start/end expected as ns with end >= start,"
                             f" got {start!r}, {end!r}", where=where, key="rocpd_op")
        k = Kernel(name=str(name), dur_us=(end - start) / 1e3, ts=start / 1e3, grid=(gx, gy, gz), block=(wx, wy, wz),
                   correlation=api_id, stream=None)
        k.workitems = launch_workitems(k.grid, k.block, api)
        kernels.append(k)
        gpus.add(gpu)
