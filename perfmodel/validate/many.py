"""Several workloads at once: `perfmodel validate A B C` or a folder of per-rank outputs.

Each workload is validated on its own (`validate`), in parallel processes with ``jobs`` > 1;
the results keep the input order whatever order they finish in, so the output does not depend
on ``jobs``. The per-kernel view is then merged across workloads by the same ratio of sums one
workload uses (`Aggregator` over each workload's per-kernel sums, `kernel_row` for the rows).

Which paths are workloads (`expand`): a path that an entry of the format table
(`perfmodel.readers.formats`) reads whole is one workload - a rocprof-compute workload folder,
a rocprofv3 CSV folder (searched to any depth), a folder holding one rocpd database, a file. A
folder that no format reads is a folder of ranks: each entry in it (by name) that a format
reads whole is one workload, and a sub-folder that none reads is searched the same way
(``MAX_DEPTH`` levels). So ``rank_0/ rank_1/`` rocprof-compute workloads, one rocpd ``.db`` per
rank, or ``<host>/<pid>/`` folders of rocpd databases are ranks.

A rocprofv3 CSV folder is one run to its reader (a folder of ``pass_N/`` / ``pmc_N/`` pass
folders and a ``timing/`` trace is joined by `readers.pass_folders`), except where every CSV file
in it lies in a folder named like one process - a process id (rocprofv3's default
``<host>/<pid>/``) or ``rank_N`` / ``rank-N`` / ``rankN`` (``-d out/rank_%rank%``) - and there are
two or more such folders: then each is a rank. Several processes' files in one folder (``out/<pid>_kernel_trace.csv``) stay one
workload; give each process its own folder, or pass the files as separate arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.validate.report import KernelSum, Validation, kernel_row, select, validate

MAX_DEPTH = 4  # folder levels searched for ranks below a folder no format reads
MERGED = "merged"  # the `workload` field of the merged rows
PROCESS_FOLDER = re.compile(r"\d+|rank[_-]?\d+")  # a folder holding one process's rocprofv3 files


@dataclass
class ValidationSet:
    """Validations of several workloads (input order), the merged per-kernel view, and the
    workloads that failed (one error line each, with ``keep_going``)."""

    runs: list[Validation]
    merged: Validation | None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[dict]:
        """Every workload's rows (a ``workload`` field first), then the merged rows (``workload``
        is ``merged``; ``workloads`` counts the workloads the kernel ran in). One workload
        named: its rows as they are."""
        if len(self.runs) == 1 and not self.errors:
            return self.runs[0].rows
        out = [{"workload": v.path, **r} for v in self.runs for r in v.rows]
        if self.merged is not None:
            out += self.merged.rows
        return out

    def render(self, fmt: str = "table") -> str:
        from perfmodel.tables import render_validation_set

        return render_validation_set(self, fmt)

    def to_pandas(self):
        """A pandas DataFrame of `rows` (needs pandas; perfmodel does not install it)."""
        from perfmodel.tables import to_pandas

        return to_pandas(self.rows)

    def _repr_html_(self) -> str:
        from perfmodel.tables import validation_html

        parts = [*self.runs, self.merged] if self.merged is not None else self.runs
        return "".join(validation_html(v) for v in parts)

    def __repr__(self) -> str:
        return self.render("table")


def recognised(path: Path) -> bool:
    """Whether an entry of the format table reads ``path`` whole (an unreadable file: no)."""
    from perfmodel.readers.formats import FORMATS

    try:
        return any(f.detect(path) for f in FORMATS)
    except (InputError, OSError):
        return False


def _process_folders(path: Path) -> list[Path]:
    """The per-process folders of a rocprofv3 CSV folder (see the module docstring); [] when it
    is one run."""
    from perfmodel.readers import rocprof_v3

    files = [f for pat in rocprof_v3.PATTERNS for f in rocprof_v3.find(path, pat)]
    folders: set[Path] = set()
    for f in files:
        up = f.parent
        while up != path and not PROCESS_FOLDER.fullmatch(up.name):
            up = up.parent
        if up == path:
            return []  # a file outside any process folder: one run
        folders.add(up)
    return sorted(folders, key=lambda q: q.relative_to(path).parts) if len(folders) > 1 else []


def _workloads_in(path: Path) -> list[Path]:
    """``path`` as one workload, or its process folders when it holds several processes' runs."""
    from perfmodel.readers.formats import PASSES, V3_DIR, find

    if path.is_dir() and find(path).name in (V3_DIR, PASSES):
        return _process_folders(path) or [path]
    return [path]


def holds_ranks(path: str) -> bool:
    """Whether ``path`` is a folder of several workloads (`expand` has the rules): one that no
    format reads whole, or a rocprofv3 folder of several processes' runs."""
    p = Path(path)
    if not p.is_dir() or not any(p.iterdir()):
        return False
    return not recognised(p) or len(_workloads_in(p)) > 1


def _ranks(folder: Path, depth: int, skipped: list[str]) -> list[Path]:
    """The entries under ``folder`` that a format reads whole, by name, searching sub-folders
    that none reads; ``skipped`` collects the files no format reads."""
    out: list[Path] = []
    for p in sorted(folder.iterdir(), key=lambda q: q.name):
        if p.name.startswith("."):
            continue
        if recognised(p):
            out += _workloads_in(p)
        elif p.is_dir() and depth > 1:
            out += _ranks(p, depth - 1, skipped)
        elif p.is_file():
            skipped.append(str(p))
    return out


def expand(paths: list[str]) -> tuple[list[str], list[str]]:
    """The workloads the paths name, in order (see the module docstring), and notes on the
    files skipped. A folder in which nothing is recognised: the format table's own error."""
    out: list[str] = []
    skipped: list[str] = []
    for arg in paths:
        p = Path(arg)
        if not p.is_dir():
            out.append(str(p))
            continue
        if recognised(p):
            out += [str(q) for q in _workloads_in(p)]
            continue
        # nothing recognised: the folder itself, whose validation says what was expected there
        out += [str(q) for q in _ranks(p, MAX_DEPTH, skipped)] or [str(p)]
    seen: set[str] = set()
    for w in out:
        if w in seen:
            raise InputError("given twice (as an argument or inside a folder given)", where=w)
        seen.add(w)
    notes = []
    if skipped:
        names = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
        notes.append(f"skipped {len(skipped)} file(s) no rocprof format reads: {names}")
    return out, notes


def _validate_one(path: str, options: dict) -> tuple[Validation | None, str | None]:
    """One workload in a worker process: its validation, or its error line (naming it)."""
    from perfmodel import traces

    try:
        if traces.detect(path):
            raise InputError(
                "a torch.profiler trace: validate it on its own, not among rocprof workloads", where=path
            )
        return validate(path, **options), None
    except InputError as e:
        msg = str(e)
        return None, msg if path in msg else f"{path}: {msg}"


def run_all(paths: list[str], options: dict, jobs: int) -> list[tuple[Validation | None, str | None]]:
    """`_validate_one` over ``paths`` with up to ``jobs`` processes, results in input order; a
    progress bar on a terminal."""
    from perfmodel.progress import Bar

    results: list = [None] * len(paths)
    with Bar(f"validating {len(paths)} workloads", total=len(paths)) as bar:
        if jobs <= 1 or len(paths) == 1:
            for i, p in enumerate(paths):
                results[i] = _validate_one(p, options)
                bar.update()
            return results
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
            futures = {pool.submit(_validate_one, p, options): i for i, p in enumerate(paths)}
            for f in as_completed(futures):
                results[futures[f]] = f.result()
                bar.update()
    return results


def _same_arch(runs: list[Validation]) -> bool:
    def ident(v: Validation) -> tuple:
        return (v.arch.key, v.arch.path, v.arch.clock_hz, v.arch.cus)

    return all(ident(v) == ident(runs[0]) for v in runs)


def merge(runs: list[Validation], kernel_filter: str | None = None, top: int | None = None) -> Validation:
    """One per-kernel view of several workloads on one GPU: each kernel's FLOPs, bytes, time and
    dispatches summed across them (ratio of sums), its predictions combined the same way."""
    from perfmodel.counters.aggregate import Aggregator
    from perfmodel.rates import achievable_rates
    from perfmodel.validate.identify import compile_regex

    agg = Aggregator()
    per: dict[str, list] = {}  # kernel -> [first ident, dispatches, identified, runs, workloads]
    for v in runs:
        for k in v.kernel_sums or []:
            agg.add(k.measurement)
            st = per.setdefault(k.measurement.kernel, [k.first, 0, 0, [], 0])
            st[1] += k.dispatches
            st[2] += k.identified
            st[3] += k.runs
            st[4] += 1
    a = runs[0].arch
    ach, peak = achievable_rates(a)
    rows = []
    for m in agg.result():
        first, n, known, preds, where = per[m.kernel]
        row = kernel_row(KernelSum(m, first, n, known, preds), a, ach, peak)
        rows.append({"workload": MERGED, "workloads": where, **row})
    _copy_occupancy(rows, runs)
    flt = compile_regex(kernel_filter, None, "--kernel") if kernel_filter else None
    note = f"each kernel summed over the {len(runs)} workloads it ran in (ratio of sums)"
    return Validation(f"{len(runs)} workloads (merged)", a, select(rows, flt, top), False, [note])


def _copy_occupancy(rows: list[dict], runs: list[Validation]) -> None:
    """A merged row's occupancy: the workloads' own, when all that report it agree."""
    seen: dict[str, list] = {}
    for v in runs:
        for r in v.rows:
            if "occupancy" in r:
                seen.setdefault(r["kernel"], []).append(r["occupancy"])
    for r in rows:
        occ = seen.get(r["kernel"])
        if occ and all(o == occ[0] for o in occ):
            r["occupancy"] = occ[0]


def validate_many(paths: list[str], jobs: int = 1, keep_going: bool = False, **options) -> ValidationSet:
    """Validate every workload ``paths`` name (`expand`), ``jobs`` at a time, and merge them;
    ``options`` are those of `validate` (arch, manifest, per_dispatch, kernel_filter, top, ...).

    A workload that fails: without ``keep_going`` every failure is raised (one line each) and
    nothing is returned; with it the others are returned and ``errors`` holds the lines."""
    from perfmodel.errors import InputErrors

    workloads, notes = expand(paths)
    results = run_all(workloads, options, jobs)
    errors = [e for _, e in results if e]
    if errors and not keep_going:
        raise InputErrors([InputError(e) for e in errors])
    runs = [v for v, _ in results if v is not None]
    merged = None
    if len(runs) > 1 and options.get("per_dispatch"):
        notes.append("no merged view per dispatch: the rows of each workload are listed")
    elif len(runs) > 1 and not _same_arch(runs):
        archs = ", ".join(dict.fromkeys(v.arch.key for v in runs))
        notes.append(f"no merged view: the workloads ran on different GPUs or clocks ({archs})")
    elif len(runs) > 1:
        merged = merge(runs, options.get("kernel_filter"), options.get("top"))
    if errors:
        notes.append(f"{len(errors)} of {len(workloads)} workloads failed (their error lines are on stderr)")
    return ValidationSet(runs, merged, errors, notes)
