"""`perfmodel doctor PATH`: what produced a profile, what it holds, and what the analysis will lack.

Fingerprints the path (`perfmodel.readers.fingerprint`: tool, version, backend, schema, timing
source and the evidence, from the file contents), reads it the way `validate` would (streamed
where the reader streams), and reports the gfx target, the dispatch and kernel counts, the
counters present and which measured quantities of the gfx target's counter formulas those
counters cannot give. A torch.profiler trace or an RPD database gets its fingerprint and advice.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from perfmodel.cli.options import emit, output_option


def diagnose(path: str) -> dict:
    """The doctor's findings for ``path`` as a plain dict; InputError on unreadable input.

    The fingerprint (`perfmodel.readers.fingerprint`) says what produced the file; a format the
    readers do not take (a torch.profiler trace, an RPD database) stops there with advice."""
    from perfmodel.readers.fingerprint import COUNTER_PASS, fingerprint
    from perfmodel.readers.formats import find

    p = Path(path)
    fp = fingerprint(p)
    out: dict = {
        "path": str(p),
        "format": fp.format,
        "tool": fp.tool,
        "tool_version": fp.version,
        "rocm_version": fp.rocm_version,
        "backend": fp.backend,
        "schema": fp.schema,
        "timing": fp.timing,
        "evidence": fp.evidence,
        "readable": fp.readable,
    }
    if not fp.readable:
        out.update(devices=fp.devices, lacks=[fp.advice] if fp.advice else [])
        return out
    wl = find(p).read(p)
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
    out.update({
        "gfx": wl.gfx or None,
        "gpu_model": (wl.sysinfo or {}).get("gpu_model") or None,
        "dispatches": dispatches,
        "kernels": len(kernels),
        "timed_dispatches": timed,
        "counters": sorted(counters),
        "computable": [],
        "not_computable": {},
        "lacks": [],
    })
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
    if (fp.timing or "").startswith(COUNTER_PASS):
        out["lacks"].append(
            "no counter-free timing: durations come from counter passes, which counter overhead inflates"
        )
    return out


def _rocm(version: str) -> str:
    return f", {version}" if version.startswith("HIP") else f", ROCm {version}"


def _text(r: dict) -> str:
    lines = [
        f"{r['path']}",
        f"  format      {r['format']}" + ("" if r["readable"] else " (not a rocprof workload: `perfmodel validate` reports it as a trace)"),
        f"  tool        {r['tool']}"
        + (f" (version {r['tool_version']})" if r["tool_version"] else "")
        + (_rocm(r["rocm_version"]) if r["rocm_version"] else ""),
    ]
    for key in ("backend", "schema", "timing"):
        if r[key]:
            lines.append(f"  {key:<11} {r[key]}")
    lines += [f"  evidence    {e}" for e in r["evidence"]]
    if not r["readable"]:
        if r["devices"]:
            lines.append(f"  devices     {', '.join(r['devices'])}")
        lines += [f"  lacks       {lack}" for lack in r["lacks"]]
        return "\n".join(lines) + "\n"
    lines += [
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
