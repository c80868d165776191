"""`perfmodel doctor PATH`: what produced a profile, what it holds, and what the analysis will lack.

Walks the readers' format table (`perfmodel.readers.formats.FORMATS`) to name the format, reads
the file the way `validate` would (streamed where the reader streams), and reports the tool and
version where the files say, the gfx target, the dispatch and kernel counts, the counters present
and which measured quantities of the gfx target's counter formulas those counters cannot give.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from perfmodel.cli.options import emit, output_option

# format name -> the tool that writes it
TOOLS = {
    "rocprof-compute workload": "rocprof-compute (Omniperf)",
    "rocprofv3 csv directory": "rocprofv3",
    "rocpd sqlite": "rocprofv3 (rocpd database)",
    "counter csv (long)": "rocprof-compute (rocpd mode) or rocprofv3 counter collection",
    "rocprofv3 agent info": "rocprofv3",
    "rocprofv3 kernel trace": "rocprofv3",
    "rocprof csv (wide)": "rocprof v1/v2 or rocprof-compute (per-pass CSV)",
}


def diagnose(path: str) -> dict:
    """The doctor's findings for ``path`` as a plain dict; InputError on unreadable input."""
    from perfmodel.readers.formats import find

    p = Path(path)
    fmt = find(p)
    wl = fmt.read(p)
    raw = (wl.sysinfo or {}).get("raw", {}) if isinstance(wl.sysinfo, dict) else {}
    version = raw.get("version") or None
    rocm = raw.get("rocm_version") or None
    dispatches = 0
    kernels: set[str] = set()
    counters: set[str] = set()
    timed = 0
    for d in wl.dispatches:
        dispatches += 1
        kernels.add(d.kernel)
        counters.update(d.counters)
        if d.duration_ns is not None and d.duration_ns > 0:
            timed += 1
    out: dict = {
        "path": str(p),
        "format": fmt.name,
        "tool": TOOLS.get(fmt.name, "unknown"),
        "tool_version": version,
        "rocm_version": rocm,
        "gfx": wl.gfx or None,
        "gpu_model": (wl.sysinfo or {}).get("gpu_model") or None,
        "dispatches": dispatches,
        "kernels": len(kernels),
        "timed_dispatches": timed,
        "counters": sorted(counters),
        "computable": [],
        "not_computable": {},
        "lacks": [],
    }
    if not wl.gfx:
        out["lacks"].append("gfx target unknown (no sysinfo.csv or agent info): pass --arch to validate")
    else:
        from perfmodel.counters.formulas import available_targets, load

        if wl.gfx not in available_targets():
            out["lacks"].append(f"no counter formulas for {wl.gfx}: measured FLOPs and bytes unavailable")
        else:
            fs = load(wl.gfx)
            known = counters | set(fs.constants)
            for key, q in fs.quantities.items():
                if any(a.expr.names <= known for a in q.alternatives):
                    out["computable"].append(key)
                else:
                    out["not_computable"][key] = sorted(q.alternatives[0].expr.names - known)
            if not any(k.startswith("flops:") for k in out["computable"]):
                out["lacks"].append(
                    "no FLOP quantity computable: compute is unmeasured, the measured bound unknown"
                )
            if out["not_computable"]:
                out["lacks"].append(f"{len(out['not_computable'])} formula quantities lack counters")
    if timed < dispatches:
        out["lacks"].append(f"{dispatches - timed} of {dispatches} dispatches have no usable duration")
    if not counters:
        out["lacks"].append("no counters (a timing-only trace): times only, no measured work")
    return out


def _text(r: dict) -> str:
    lines = [
        f"{r['path']}",
        f"  format      {r['format']}",
        f"  tool        {r['tool']}"
        + (f" (version {r['tool_version']})" if r["tool_version"] else "")
        + (f", ROCm {r['rocm_version']}" if r["rocm_version"] else ""),
        f"  gfx         {r['gfx'] or 'unknown'}" + (f" ({r['gpu_model']})" if r["gpu_model"] else ""),
        f"  dispatches  {r['dispatches']} ({r['kernels']} kernels, {r['timed_dispatches']} timed)",
        f"  counters    {len(r['counters'])}"
        + (f": {', '.join(r['counters'][:12])}" if r["counters"] else ""),
    ]
    if len(r["counters"]) > 12:
        lines[-1] += f", ... (+{len(r['counters']) - 12})"
    if r["computable"]:
        lines.append(f"  measures    {', '.join(r['computable'])}")
    for key, missing in r["not_computable"].items():
        lines.append(f"  missing     {key}: needs {', '.join(missing)}")
    for lack in r["lacks"]:
        lines.append(f"  lacks       {lack}")
    return "\n".join(lines) + "\n"


@click.command("doctor")
@click.argument("path", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", help="Output format.")
@output_option
def doctor_command(path, fmt, output):
    """Say what produced a profile (tool, version, gfx), what it holds and what the analysis will lack."""
    r = diagnose(path)
    emit(json.dumps(r, indent=2) + "\n" if fmt == "json" else _text(r), output)
