"""`perfmodel validate --per-dispatch -o FILE`: rows streamed into the file as they are made.

The per-dispatch view keeps every row in memory to render it (a million dispatches, gigabytes);
written to a json, jsonl or csv file, each row goes out as soon as it is made, through the
atomic writer (`output.atomic_file`: the file appears only when complete). The rows are the
ones `validate(per_dispatch=True)` returns, byte for byte (`output.RowWriter`); --top needs
every row to rank them and is not streamed.
"""

from __future__ import annotations

from contextlib import ExitStack

from perfmodel.output import RowWriter, atomic_file
from perfmodel.validate import report
from perfmodel.validate.sums import KernelSums


def validate_to_files(
    path: str,
    targets: list[tuple[str, str]],
    arch=None,
    manifest=None,
    sclk_mhz: float | None = None,
    cus: int | None = None,
    kernel_filter: str | None = None,
) -> int:
    """Write the per-dispatch rows of ``path`` to each (file, format) of ``targets`` (json,
    jsonl or csv); returns how many rows were written. Identical cases are predicted once."""
    from perfmodel.counters.derive import iter_derive

    man, wl, a, _notes, ach, peak, flt, target = report.prepare(path, arch, manifest, sclk_mhz, cus, kernel_filter)
    if hasattr(wl.dispatches, "materialize"):  # a counter collection: read whole, as validate does
        wl.dispatches = wl.dispatches.materialize()
    by_kernel, _ = report.occupancy_by_kernel(path, a)
    sums = KernelSums(a, man)  # only its identification and prediction cache
    n = 0
    with ExitStack() as stack:
        writers = [RowWriter(stack.enter_context(atomic_file(t)), fmt) for t, fmt in targets]
        for i, (d, m) in enumerate(iter_derive(wl, target, peaks=peak)):
            case, how, pred = sums.identify(d, i)
            r = report._row(m, [pred] if pred else [], (case, how), a, ach, peak)
            if flt is not None and not flt.search(r["kernel"]):
                continue
            report.attach_occupancy(r, by_kernel)
            for w in writers:
                w.write(r)
            n += 1
        for w in writers:
            w.close()
    return n
