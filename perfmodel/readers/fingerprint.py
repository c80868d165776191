"""What produced a profile, from the file contents: the tool and its version, the profiler
backend under it, the schema, where the dispatch times come from, and the evidence for each.

`fingerprint(path)` looks at headers, metadata tables and file openings only (never the
dispatches), so it is cheap on any size. The formats perfmodel reads are named as in
`perfmodel.readers.formats.FORMATS`; two that are not rocprof workloads get a fingerprint too:
torch.profiler chrome traces and RPD databases (rocmProfileData's ``rpd_tracer``, an older
SQLite schema than rocprofv3's rocpd), which `perfmodel validate` reports as traces.

Timing sources (``timing``): ``counter-free`` (a kernel trace or timing pass without counters:
the clean durations), ``counter pass`` (durations taken while counters were collected: counter
overhead inflates them), or a sentence saying which mix a folder holds.
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.errors import InputError, one_line
from perfmodel.readers import formats, rocpd_sqlite, rocprof_json, rocprof_v3
from perfmodel.readers.opening import connect_readonly, open_by_content

CHROME = "torch.profiler chrome trace"
RPD = "rpd sqlite"
COUNTER_FREE = "counter-free"
COUNTER_PASS = "counter pass"


@dataclass
class Fingerprint:
    """What produced a file. ``readable``: whether perfmodel's readers read it (``advice`` says
    what to do with it otherwise)."""

    path: str
    format: str
    tool: str
    version: str | None = None
    backend: str | None = None
    rocm_version: str | None = None
    schema: str | None = None
    timing: str | None = None
    evidence: list[str] = field(default_factory=list)
    readable: bool = True
    advice: str | None = None
    devices: list[str] = field(default_factory=list)


def fingerprint(path: str | Path) -> Fingerprint:
    """The fingerprint of ``path`` (file or folder); InputError when no format matches it."""
    p = Path(path)
    if p.is_file():
        if _is_chrome(p):
            return _chrome(p)
        from perfmodel.traces.rpd import is_rpd

        if is_rpd(p):  # it reads the SQLite header itself
            return _rpd(p)
    fmt = formats.find(p)
    fp = Fingerprint(path=str(p), format=fmt.name, tool="unknown")
    rule = _BY_FORMAT.get(fmt.name)
    if rule is None:  # a format added to the table without a rule here
        fp.evidence.append("no fingerprint rules for this format")
    else:
        rule(p, fp)
    return fp


# --- CSV headers ----------------------------------------------------------------------------------


def _raw_header(path: Path) -> list[str]:
    """A CSV file's first line as written (the readers' aliases not applied); [] if unreadable."""
    try:
        with open_by_content(path) as f:
            line = f.readline(1 << 20).decode("utf-8-sig")
        return [h.strip() for h in next(csv.reader(io.StringIO(line)), [])]
    except (OSError, EOFError, UnicodeDecodeError, csv.Error, zlib.error):
        return []


def csv_backend(header: list[str]) -> tuple[str | None, str]:
    """(the rocprof generation whose CSV this header is, the evidence) from the raw header."""
    h = set(header)
    if {"Index", "KernelName"} <= h or "BeginNs" in h:
        return "rocprof v1", "rocprof v1 header (Index, KernelName, grd/wgr, BeginNs/EndNs)"
    v1 = sorted(h & {"DispatchNs", "CompleteNs", "queue-id", "obj", "sig", "wave_size"})
    if v1:
        return "rocprof v1", f"rocprof v1 columns under rocprof-compute's renamed header ({', '.join(v1)})"
    if {"Agent_Id", "Dispatch_Id", "Kernel_Id"} & h:
        return "rocprofv3", "rocprofv3 CSV column spellings (Agent_Id / Dispatch_Id / Kernel_Id)"
    if "Kernel_ID" in h:
        extra = " and GUID (rocpd-era)" if "GUID" in h else ""
        return "rocprofv3", f"v2-layout header with Kernel_ID{extra}: rocprofv3 output converted by rocprof-compute"
    if "Correlation_ID" in h:
        return "rocprofv2", "v2 header: Correlation_ID without Kernel_ID"
    return None, "header names no rocprof generation"


def _has_counters(header: list[str]) -> bool:
    from perfmodel.readers import csvio

    return any(not csvio.is_metadata(csvio.canonical(c)) for c in header) or "Counter_Name" in header


# --- one function per format ----------------------------------------------------------------------


def _workload(path: Path, fp: Fingerprint) -> None:
    from perfmodel.readers import compute_workload

    fp.tool = "rocprof-compute"
    info = path / "sysinfo.csv"
    if info.is_file():
        from perfmodel.readers.sysinfo import read_sysinfo

        try:
            raw = read_sysinfo(info)[0].get("raw", {})
        except InputError as e:
            raw = {}
            fp.evidence.append(f"sysinfo.csv unreadable ({e.detail})")
        fp.version = raw.get("version") or None
        fp.rocm_version = raw.get("rocm_version") or raw.get("host_rocmver") or None
        if fp.version is None and "host_rocmver" in raw:
            fp.tool = "rocprof-compute (Omniperf 1.x)"
            fp.evidence.append("sysinfo.csv in the 2022 schema (Omniperf 1.x): no version column")
        else:
            fp.evidence.append(f"sysinfo.csv version={fp.version or '?'} rocm_version={fp.rocm_version or '?'}")
        if fp.version and fp.version.split(".")[0] in ("1", "2"):
            fp.tool = "rocprof-compute (Omniperf)"
    else:
        fp.evidence.append("no sysinfo.csv: version unknown")
    passes = sorted(path.glob("pmc_perf_*.csv")) + sorted(path.glob("pmc_perf.csv"))
    if passes:
        fp.backend, why = csv_backend(_raw_header(passes[0]))
        fp.evidence.append(f"{passes[0].name}: {why}")
    fp.timing = (
        f"{COUNTER_FREE} (timestamps.csv timing pass)"
        if compute_workload.is_workload_dir(path) and (path / "timestamps.csv").is_file()
        else f"{COUNTER_PASS} (pmc_perf timestamps, median over the passes)"
    )


def _v3_dir(path: Path, fp: Fingerprint) -> None:
    fp.tool = fp.backend = "rocprofv3"
    counters = rocprof_v3.find(path, rocprof_v3.PATTERNS[0])
    traces = rocprof_v3.find(path, rocprof_v3.PATTERNS[1])
    agents = rocprof_v3.find(path, rocprof_v3.PATTERNS[2])
    fp.evidence.append(
        f"{len(counters)} *_counter_collection, {len(traces)} *_kernel_trace, {len(agents)} *_agent_info CSV file(s)"
    )
    first = (counters or traces)[0]
    fp.evidence.append(f"{first.name}: {csv_backend(_raw_header(first))[1]}")
    fp.evidence.append("rocprofv3 CSV files carry no tool version")
    if traces and not counters:
        fp.timing = f"{COUNTER_FREE} (kernel trace)"
    elif counters and not traces:
        fp.timing = f"{COUNTER_PASS} (counter collection timestamps)"
    elif {t.parent for t in traces}.isdisjoint(c.parent for c in counters):
        fp.timing = f"{COUNTER_FREE} (kernel trace from its own folder, joined to the counter passes)"
    else:
        fp.timing = (
            "kernel trace beside the counter collection (counter-free only if it was a separate run;"
            " one run taking both times the dispatches under counter collection)"
        )


def _passes(path: Path, fp: Fingerprint) -> None:
    """rocprofv3 pass_N/ (pmc_N/) folders of one run; rocprof-compute's when a sysinfo.csv is beside them."""
    from perfmodel.readers import pass_folders

    _v3_dir(path, fp)
    counters = rocprof_v3.find(path, rocprof_v3.PATTERNS[0])
    folders = sorted({pass_folders.pass_folder(path, f) for f in counters} - {None})
    fp.evidence.insert(0, f"{len(folders)} pass folder(s): {', '.join(f.name for f in folders[:6])}")
    info = next((q / "sysinfo.csv" for q in (path, path.parent) if (q / "sysinfo.csv").is_file()), None)
    if info is not None:  # rocprof-compute before analyze: <workload>/out/pmc_N/
        sub = Fingerprint(path=str(info.parent), format="", tool="")
        _workload(info.parent, sub)
        fp.tool, fp.version, fp.rocm_version = sub.tool, sub.version, sub.rocm_version
        fp.evidence.insert(1, f"{info.relative_to(path.parent) if info.parent != path else info.name}: {sub.evidence[0]}")


def _rocpd(path: Path, fp: Fingerprint) -> None:
    fp.tool = fp.backend = "rocprofv3"
    db = path if path.is_file() else rocpd_sqlite.databases(path)[0]
    fp.evidence.append(f"{db.name}: SQLite with the rocpd tables of rocprofiler-sdk")
    try:
        con = connect_readonly(db)
        try:
            tables = rocpd_sqlite.resolve(con, str(db))
            meta = _metadata(con)
            counted = con.execute(f"SELECT EXISTS (SELECT 1 FROM {tables['rocpd_pmc_event']})").fetchone()[0]
        finally:
            con.close()
    except (sqlite3.Error, UnicodeDecodeError, InputError) as e:
        fp.evidence.append(f"database not readable ({one_line(str(e), 100)})")
        return
    fp.schema = meta.get("schema_version")
    fp.evidence.append(
        f"rocpd_metadata schema_version={fp.schema}" if fp.schema else "no rocpd_metadata schema_version"
    )
    versions = {k: v for k, v in meta.items() if "version" in k and k != "schema_version"}
    if versions:
        k = sorted(versions)[0]
        fp.version = versions[k]
        fp.evidence.append(f"rocpd_metadata {k}={fp.version}")
    fp.timing = f"{COUNTER_PASS} (rocpd_kernel_dispatch start/end with counters)" if counted else (
        f"{COUNTER_FREE} (kernel trace: no counter rows)"
    )


def _metadata(con: sqlite3.Connection) -> dict[str, str]:
    """The tag/value rows of rocpd_metadata (uuid-suffixed or plain); {} without one."""
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    table = next((n for n in sorted(names) if n == "rocpd_metadata"), None) or next(
        (n for n in sorted(names) if n.startswith("rocpd_metadata")), None
    )
    if table is None:
        return {}
    out: dict[str, str] = {}
    for tag, value in con.execute(f'SELECT tag, value FROM "{table}" ORDER BY id LIMIT 1000'):
        out.setdefault(str(tag), one_line(str(value), 80))
    return out


def _json(path: Path, fp: Fingerprint) -> None:
    fp.tool = fp.backend = "rocprofv3"
    f = path if path.is_file() else rocprof_json.files(path)[0]
    fp.evidence.append(f'{f.name}: opens with {{"rocprofiler-sdk-tool": (rocprofv3 --output-format json)')
    head = rocprof_json.head(f, 1 << 16).decode("utf-8", "replace")
    # a tool version in the metadata, should a rocprofv3 write one (the 2025 files do not); the
    # agents' gfx_target_version / fw_version and the node's kernel "version" are not it
    found = sorted(set(re.findall(r'"((?:rocprof|sdk|rocm|tool)[A-Za-z_\-]*version)"\s*:\s*"?([0-9][0-9.\-a-z]*)', head)))
    if found:
        fp.version = found[0][1]
        fp.evidence.append(f"{found[0][0]}={fp.version}")
    else:
        fp.evidence.append("metadata names no tool version")
    fp.timing = (
        f"{COUNTER_PASS} (counter_collection dispatch timestamps)"
        if rocprof_json.has_counter_records(f)
        else f"{COUNTER_FREE} (buffer_records.kernel_dispatch)"
    )


def _csv_file(tool_if_unknown: str, timing: str | None = None):
    def fill(path: Path, fp: Fingerprint) -> None:
        header = _raw_header(path)
        fp.backend, why = csv_backend(header)
        fp.tool = fp.backend or tool_if_unknown
        fp.evidence.append(f"{path.name}: {why}")
        if (path.parent / "sysinfo.csv").is_file():  # a file out of a rocprof-compute workload folder
            sub = Fingerprint(path=str(path.parent), format="", tool="")
            _workload(path.parent, sub)
            fp.tool, fp.version, fp.rocm_version = sub.tool, sub.version, sub.rocm_version
            fp.evidence.append("sysinfo.csv beside it: " + sub.evidence[0])
        fp.timing = timing or (
            f"{COUNTER_PASS} (timestamps of the counter run)" if _has_counters(header) else f"{COUNTER_FREE} (timing pass)"
        )

    return fill


_BY_FORMAT = {
    formats.WORKLOAD: _workload,
    formats.PASSES: _passes,
    formats.V3_DIR: _v3_dir,
    formats.SQLITE: _rocpd,
    formats.JSON: _json,
    formats.LONG: _csv_file("rocprofv3", f"{COUNTER_PASS} (counter collection timestamps)"),
    formats.AGENT_INFO: _csv_file("rocprofv3", "none: agent info holds no dispatches"),
    formats.KERNEL_TRACE: _csv_file("rocprofv3", f"{COUNTER_FREE} (kernel trace)"),
    formats.WIDE: _csv_file("rocprof (generation unknown)"),
}


# --- formats perfmodel does not read as rocprof workloads --------------------------------------------


def _is_chrome(path: Path) -> bool:
    """A chrome trace (`traces.chrome.is_chrome_trace`) that is not a rocprofv3 result."""
    from perfmodel.traces.chrome import is_chrome_trace

    return is_chrome_trace(path) and not rocprof_json.is_rocprof_json(path)


def _chrome(path: Path) -> Fingerprint:
    fp = Fingerprint(path=str(path), format=CHROME, tool="torch.profiler (Kineto)", readable=False)
    head = rocprof_json.head(path, 1 << 18).decode("utf-8", "replace")

    def key(name: str) -> str | None:
        m = re.search(rf'"{name}"\s*:\s*"?([0-9][0-9.]*)', head)
        return m.group(1) if m else None

    fp.schema = key("schemaVersion")
    hip = key("hip_runtime_version")
    if hip and hip.isdigit():  # major * 10**7 + minor * 10**5 + patch
        v = int(hip)
        fp.rocm_version = f"HIP {v // 10**7}.{v // 10**5 % 100}.{v % 10**5}"
        fp.evidence.append(f"hip_runtime_version={hip}")
    if key("roctracer_version"):
        fp.backend = f"roctracer {key('roctracer_version')}"
    elif key("cuda_runtime_version"):
        fp.backend = "CUPTI"
    fp.devices = sorted(set(re.findall(r'"name"\s*:\s*"([^"]{1,80})"\s*,\s*"totalGlobalMem"', head)))
    fp.evidence.append(f"a JSON object with traceEvents (Kineto schemaVersion={fp.schema or '?'})")
    if fp.devices:
        fp.evidence.append("deviceProperties: " + ", ".join(fp.devices))
    fp.timing = f"{COUNTER_FREE} (kernel events of the trace)"
    fp.advice = (
        "a torch.profiler trace is not a rocprof workload: `perfmodel validate TRACE` reports its kernels"
        " by name and shape (no counters)"
    )
    return fp


def _rpd(path: Path) -> Fingerprint:
    fp = Fingerprint(path=str(path), format=RPD, tool="rocmProfileData (rpd_tracer)", readable=False)  # not a rocprof workload
    con = connect_readonly(path)
    try:
        meta = _metadata(con)
        try:
            ops = con.execute("SELECT COUNT(*) FROM rocpd_op").fetchone()[0]
        except sqlite3.Error:
            ops = None
    finally:
        con.close()
    fp.schema = meta.get("schema_version")
    fp.backend = "roctracer"
    fp.evidence.append("SQLite with rocpd_op and rocpd_api tables, no rocpd_kernel_dispatch (RPD, not rocprofv3's rocpd)")
    fp.evidence.append(f"rocpd_metadata schema_version={fp.schema or '?'}")
    if ops is not None:
        fp.evidence.append(f"rocpd_op: {ops} GPU operations")
    fp.timing = f"{COUNTER_FREE} (rocpd_op start/end)"
    fp.advice = (
        "an RPD database is a kernel trace, not a rocprof workload: `perfmodel validate FILE --arch KEY` reports"
        " its kernels by name and family (no GPU name, no shapes, no counters: give --arch, and a --cases"
        " manifest to predict them; for counters record with rocprofv3 --pmc)"
    )
    return fp
