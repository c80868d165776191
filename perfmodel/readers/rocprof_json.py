"""rocprofv3 JSON output (``--output-format json``: ``<pid>_results.json``, gzip read by content).

The file is one object, ``{"rocprofiler-sdk-tool": [tool]}`` (rocprofiler-sdk's tool schema):
``agents`` (gfx target, product name, CU and XCC counts), ``kernel_symbols`` (names, registers,
by ``kernel_id``), ``counters`` (counter names by ``id.handle``), ``buffer_records.kernel_dispatch``
(the kernel trace: every dispatch's start/end in ns and geometry) and
``callback_records.counter_collection`` (per profiled dispatch: ``dispatch_data`` with its
timestamps and ``records`` of ``counter_id`` / ``value``, one record per counter instance:
summed here, as rocprofv3's own CSV does).

With counter records, they are the dispatches (timed in the counter pass; a kernel trace of the
same run ran under the same serialisation); without, the kernel trace is, timing only. The
file is parsed whole (the json module), so memory grows with its size.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from pathlib import Path

from perfmodel.errors import InputError, excerpt, one_line
from perfmodel.readers import csvio
from perfmodel.readers.opening import open_by_content
from perfmodel.readers.records import Dispatch, Workload

FORMAT = "rocprofv3 json"
ROOT = "rocprofiler-sdk-tool"
_HEAD = re.compile(rb'\A\s*\{\s*"rocprofiler-sdk-tool"\s*:')
GPU = (2, "GPU", "AGENT_TYPE_GPU")  # rocprofiler_agent_type_t: 1 CPU, 2 GPU (an enum name in some versions)


def head(path: Path, n: int = 512) -> bytes:
    """The first ``n`` bytes of a file, decompressed when it is gzip; b"" when unreadable."""
    try:
        with open_by_content(path) as f:
            return f.read(n)
    except (OSError, EOFError, zlib.error):
        return b""


def is_rocprof_json(path: Path) -> bool:
    """A file whose content starts ``{"rocprofiler-sdk-tool":`` (plain or gzip), whatever its name."""
    return path.is_file() and bool(_HEAD.match(head(path)))


_COUNTED = re.compile(rb'"counter_collection"\s*:\s*\[\s*\{')


def has_counter_records(path: str | Path) -> bool:
    """Whether a rocprofv3 JSON result holds counter-collection records (scanned, not parsed)."""
    path = Path(path)
    if not is_rocprof_json(path):
        return False
    tail = b""
    try:
        with open_by_content(path) as f:
            while chunk := f.read(1 << 20):
                if _COUNTED.search(tail + chunk):
                    return True
                tail = chunk[-64:]
    except (OSError, EOFError, zlib.error):
        return False
    return False


def files(path: Path) -> list[Path]:
    """The rocprofv3 JSON results under a directory (any depth), by content."""
    return sorted(q for pat in ("*.json", "*.json.gz") for q in path.rglob(pat) if is_rocprof_json(q))


def is_json_dir(path: Path) -> bool:
    """A directory holding exactly one rocprofv3 JSON result (with two, which is meant?)."""
    return path.is_dir() and len(files(path)) == 1


def read_file_or_dir(path: Path) -> Workload:
    return read(path if path.is_file() else files(path)[0])


def load(path: Path) -> dict:
    """The tool record of a results file; one InputError line when it is not one."""
    where = str(path)
    try:
        with open_by_content(path) as f:
            data = json.load(f)
    except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise InputError(f"cannot read file ({one_line(str(e), 120)})", where=where) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise InputError(f"not JSON ({one_line(str(e), 120)})", where=where) from None
    tools = data.get(ROOT) if isinstance(data, dict) else None
    if not isinstance(tools, list) or not tools or not isinstance(tools[0], dict):
        raise InputError(f"expected a JSON object whose {ROOT} is a list of tool records", where=where, key=ROOT)
    if len(tools) > 1:
        raise InputError(f"{len(tools)} tool records in one file; expected one", where=where, key=ROOT)
    return tools[0]


def _list(obj: dict, key: str, where: str) -> list:
    v = obj.get(key, [])
    if not isinstance(v, list):
        raise InputError(f"expected a list, got {type(v).__name__}", where=where, key=key)
    return v


def _dict(obj, key: str, field: str, where: str) -> dict:
    v = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(v, dict):
        raise InputError(f"{field}.{key}: expected an object, got {excerpt(v, 40)}", where=where)
    return v


def _int(v, field: str, where: str, default: int | None = None) -> int | None:
    """An integer field: absent -> ``default``; text, bool, fraction or out of range -> one error line."""
    if v is None:
        return default
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or not abs(v) <= csvio.MAX_CELL
        or (isinstance(v, float) and not v.is_integer())
    ):
        raise InputError(f"{field} = {excerpt(v, 40)} (expected an integer)", where=where)
    return int(v)


def _handle(v, field: str, where: str) -> int | None:
    """An id written as ``{"handle": N}`` (or a bare N)."""
    return _int(v.get("handle") if isinstance(v, dict) else v, field, where)


def _agents(tool: dict, where: str) -> dict[int, dict]:
    """GPU agents by handle."""
    out = {}
    for i, a in enumerate(_list(tool, "agents", where)):
        if isinstance(a, dict) and a.get("type") in GPU:
            out[_handle(a.get("id"), f"agents[{i}].id", where)] = a
    return out


def _sysinfo(agent: dict) -> dict:
    """The normalised sysinfo of one GPU agent (the keys `rocprof_v3.read_agent_info` gives)."""
    info = {"gfx": str(agent.get("name", "")).strip().lower()}
    for key in ("product_name", "marketing_name"):
        if isinstance(agent.get(key), str) and agent[key].strip() and "gpu_model" not in info:
            info["gpu_model"] = agent[key].strip()
    for key, name in (("num_xcd", "num_xcc"), ("wave_size", "wave_front_size"), ("cu", "cu_count")):
        v = agent.get(name)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
            info[key] = float(v)
    return info


def _symbols(tool: dict, where: str) -> dict[int, dict]:
    out = {}
    for i, k in enumerate(_list(tool, "kernel_symbols", where)):
        if isinstance(k, dict):
            out[_int(k.get("kernel_id"), f"kernel_symbols[{i}].kernel_id", where, -1)] = k
    return out


def _counter_names(tool: dict, where: str) -> dict[int, str]:
    out = {}
    for i, c in enumerate(_list(tool, "counters", where)):
        if isinstance(c, dict):
            out[_handle(c.get("id"), f"counters[{i}].id", where)] = str(c.get("name", ""))
    return out


def read(path: Path) -> Workload:
    """The dispatches of one results file (with counters where it has counter records)."""
    where = str(path)
    tool = load(path)
    agents = _agents(tool, where)
    symbols = _symbols(tool, where)
    callbacks = tool.get("callback_records") if isinstance(tool.get("callback_records"), dict) else {}
    buffers = tool.get("buffer_records") if isinstance(tool.get("buffer_records"), dict) else {}
    counted = _list(callbacks, "counter_collection", where)
    traced = _list(buffers, "kernel_dispatch", where)
    wl = Workload(path=where, format=FORMAT)
    if counted:
        names = _counter_names(tool, where)
        source = f"{path.name}: counter_collection dispatch timestamps (counter pass)"
        wl.dispatches = [
            _dispatch(r, f"callback_records.counter_collection[{i}]", symbols, source, path, names)
            for i, r in enumerate(counted)
        ]
        if traced:
            wl.notes.append(
                f"kernel trace of {len(traced)} dispatches not used: counter records of {len(counted)} dispatches"
                " are timed in the same run"
            )
    elif traced:
        source = f"{path.name} (kernel trace)"
        wl.dispatches = [
            _dispatch(r, f"buffer_records.kernel_dispatch[{i}]", symbols, source, path)
            for i, r in enumerate(traced)
        ]
    else:
        raise InputError(
            "no kernel dispatches: callback_records.counter_collection and buffer_records.kernel_dispatch are empty",
            where=where,
        )
    used = sorted({d.gpu for d in wl.dispatches})
    infos = [_sysinfo(agents[int(g)]) for g in used if g.lstrip("-").isdigit() and int(g) in agents]
    targets = sorted({i["gfx"] for i in infos if i["gfx"]})
    if len(targets) > 1:
        raise InputError(f"mixed GPUs in one profile ({', '.join(targets)}); read one agent at a time", where=where)
    if infos:
        wl.sysinfo = infos[0]
        wl.gfx = infos[0]["gfx"]
    for d in wl.dispatches:  # the agent's node id, as rocprofv3's CSV names it (Agent_Id "Agent N")
        a = agents.get(int(d.gpu)) if d.gpu.lstrip("-").isdigit() else None
        if a is not None and isinstance(a.get("node_id"), int):
            d.gpu = str(a["node_id"])
    return wl


def _dispatch(
    rec, field: str, symbols: dict[int, dict], source: str, path: Path, names: dict[int, str] | None = None
) -> Dispatch:
    """One dispatch from a kernel-trace record or (with ``names``) a counter-collection record,
    whose ``dispatch_data`` holds what a kernel-trace record holds."""
    where = str(path)
    if not isinstance(rec, dict):
        raise InputError(f"{field}: expected an object, got {excerpt(rec, 40)}", where=where)
    data, fd = (_dict(rec, "dispatch_data", field, where), field + ".dispatch_data") if names is not None else (rec, field)
    info, fi = _dict(data, "dispatch_info", fd, where), fd + ".dispatch_info"
    kid = _int(info.get("kernel_id"), fi + ".kernel_id", where)
    sym = symbols.get(kid, {}) if kid is not None else {}
    name = next((sym[k] for k in ("formatted_kernel_name", "demangled_kernel_name", "kernel_name")
                 if isinstance(sym.get(k), str) and sym[k].strip()), None)  # fmt: skip
    if name is None:
        raise InputError(f"{fi}.kernel_id = {excerpt(kid, 20)}: no such entry in kernel_symbols", where=where)

    def size(key: str) -> int:
        v = info.get(key)
        if not isinstance(v, dict):
            return _int(v, f"{fi}.{key}", where, 0)
        return math.prod(_int(v.get(a), f"{fi}.{key}.{a}", where, 1) for a in "xyz")

    d = Dispatch(
        kernel=csvio.clean_kernel(name),
        index=_int(info.get("dispatch_id"), fi + ".dispatch_id", where, 0),
        grid=size("grid_size"),
        workgroup=size("workgroup_size"),
        begin_ns=_int(data.get("start_timestamp"), fd + ".start_timestamp", where),  # int: ns exceed 2**53
        end_ns=_int(data.get("end_timestamp"), fd + ".end_timestamp", where),
        gpu=str(_handle(info.get("agent_id"), fi + ".agent_id", where)),
        source=where,
        time_source=source,
        lds_bytes=_int(info.get("group_segment_size"), fi + ".group_segment_size", where, 0),
        vgprs=sum(_int(sym.get(k), f"kernel_symbols[{kid}].{k}", where, 0) for k in ("arch_vgpr_count", "accum_vgpr_count")),
        sgprs=_int(sym.get("sgpr_count"), f"kernel_symbols[{kid}].sgpr_count", where, 0),
    )
    if names is not None:
        for j, r in enumerate(_list(rec, "records", where)):
            cid = _handle(r.get("counter_id") if isinstance(r, dict) else None, f"{field}.records[{j}].counter_id", where)
            if cid not in names:
                raise InputError(f"{field}.records[{j}].counter_id = {cid}: not in the file's counters", where=where)
            v = r.get("value")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not abs(v) <= csvio.MAX_CELL:
                raise InputError(
                    f"counter {excerpt(names[cid], 40)} of dispatch {d.index}: value {excerpt(v, 40)}"
                    " (expected a finite number)",
                    where=where,
                )
            d.counters[names[cid]] = d.counters.get(names[cid], 0.0) + float(v)
    return d
