"""torch.profiler (Kineto) chrome traces: GPU kernels joined to the aten op that launched them.

A trace is a JSON object with ``traceEvents``: ``cat: "kernel"`` events (name, ``dur`` in us,
``args``: ``External id``, ``correlation``, ``grid``, ``block``, ``stream``) and ``cat: "cpu_op"``
events (name ``aten::mm``, ``args``: ``External id``, ``Input Dims``, ``Input type``,
``Concrete Inputs`` when recorded with ``record_shapes=True``). A kernel's op is the cpu_op with
the same External id; several nested ops may share one id (``aten::linear`` > ``aten::addmm``):
the innermost (latest-starting) is taken. Where a kernel has no External id, the runtime launch
event (``cat: "cuda_runtime"``) with the same ``correlation`` gives it, as the ``ac2g`` flow does.

``.json.gz`` is read through gzip; the file is parsed once (json) and only the kernel and op
events are kept.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.frontend.op_record import OpRecord
from perfmodel.readers.opening import open_by_content


@dataclass
class Kernel:
    name: str
    dur_us: float
    ts: float
    grid: tuple | None = None
    block: tuple | None = None
    ext_id: int | None = None
    correlation: int | None = None
    stream: int | None = None
    # total work-items of the launch (grid x block where the grid counts workgroups; the grid
    # alone where the launch API took a global size: `GLOBAL_SIZE_LAUNCHES`, rocprofv3)
    workitems: int | None = None


# HIP launch calls that take the global work size in work-items, not a grid of workgroups; the
# tracer records that size as the kernel's grid (rocmProfileData's roctracer logger:
# `krow.gridX = params.globalWorkSizeX` for hipExtModuleLaunchKernel and hipHccModuleLaunchKernel,
# `params.gridDimX` for hipModuleLaunchKernel). hipBLASLt/Tensile launch this way: MT256x192 on
# 15360 x 6144 in the TraceLens SGLang trace records grid 491520 with block 256, i.e. its 1920 tiles.
GLOBAL_SIZE_LAUNCHES = ("hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel")
# the runtime calls that replay a captured HIP/CUDA graph: its kernels carry the call's
# correlation id and no External id (one replay = one serving engine's decode step)
GRAPH_LAUNCHES = ("hipGraphLaunch", "cudaGraphLaunch", "cudaGraphLaunch_v10000")


def prod_dims(t) -> int:
    out = 1
    for x in t:
        out *= int(x or 1)
    return out


def launch_workitems(grid, block, api: str | None) -> int:
    """Work-items of a recorded launch: the grid counts workgroups, except where the launching
    call took the global size (`GLOBAL_SIZE_LAUNCHES`), whose grid is the work-items already."""
    return prod_dims(grid) * (1 if api in GLOBAL_SIZE_LAUNCHES else prod_dims(block or ()))


@dataclass
class ChromeTrace:
    path: str
    kernels: list[Kernel]
    ops: dict[int, OpRecord]  # External id -> innermost op with shapes
    op_names: dict[int, str]  # External id -> innermost op name (with or without shapes)
    devices: list[dict] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    has_ops: bool = True  # False: a kernel-only trace (rocprofv3 JSON, a GPU-only capture)
    format: str = "torch.profiler chrome trace"
    graph_launches: set = field(default_factory=set)  # correlation ids of graph replays (`GRAPH_LAUNCHES`)

    @property
    def gpu_time_us(self) -> float:
        return sum(k.dur_us for k in self.kernels)


# How far into a JSON file `is_chrome_trace` looks for its keys: TraceLens's traces put a
# metadata object of about 10 kB before ``traceEvents``; the scan stops at the first match.
DETECT_BYTES = 16 * 2**20
_DETECT_KEYS = ('"traceEvents"', '"rocprofiler-sdk-tool"')


def is_chrome_trace(path: str | Path) -> bool:
    """True for a (gzipped) JSON file whose top-level object holds ``traceEvents`` (or a
    rocprofv3 JSON result), found within its first `DETECT_BYTES`."""
    p = Path(path)
    if not p.is_file():
        return False
    try:
        with open_by_content(p, text=True) as f:
            head = f.read(4096)
            if not head.lstrip().startswith(("{", "[")):
                return False
            seen, tail = len(head), ""
            while head:
                text = tail + head
                if any(k in text for k in _DETECT_KEYS):
                    return True
                if seen >= DETECT_BYTES:
                    return False
                tail = text[-32:]  # a key split across two reads
                head = f.read(2**16)
                seen += len(head)
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error):
        return False
    return False


def _concrete(v):
    if isinstance(v, (bool, int, float)):  # a writer that stored the value itself, not its text
        return v
    if not isinstance(v, str):
        return None
    s = v.strip()
    if s == "":
        return None
    if s in ("True", "False"):
        return s == "True"
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        pass
    if s.startswith("[") and s.endswith("]"):
        try:
            return [int(x) if x.strip().lstrip("-").isdigit() else float(x) for x in s[1:-1].split(",") if x.strip()]
        except ValueError:
            return s
    return s


# What c10d records of a collective on its ``record_param_comms`` op (torch's ParamCommsUtils,
# filled by each ProcessGroup's RECORD_PARAM_COMMS_DATA): the args' names -> the record's kwargs.
COMM_ARGS = {"Collective name": "collective", "In msg nelems": "in_nelems", "Out msg nelems": "out_nelems",
             "dtype": "comm_dtype", "Group size": "group_size"}


def op_record(ev: dict, index: int = 0) -> OpRecord | None:
    """An `OpRecord` from a cpu_op event with ``Input Dims``; None without shapes."""
    a = _args(ev)
    dims = a.get("Input Dims")
    if not isinstance(dims, list):  # absent, or not what torch.profiler writes: no shapes
        if "Collective name" not in a:
            return None
        dims = []  # a collective's sizes are in its comm args
    types, conc, raw_strides = (_list(a.get(k)) for k in ("Input type", "Concrete Inputs", "Input Strides"))
    inputs, dtypes, scalars = [], [], []
    for i, d in enumerate(dims):
        t = types[i] if i < len(types) and isinstance(types[i], str) else ""
        c = conc[i] if i < len(conc) else ""
        d = d if _sizes(d) else None  # anything but sizes (or lists of them) is no shape
        if isinstance(d, list) and (t == "TensorList" or (d and isinstance(d[0], list))):
            inputs.append([tuple(x) for x in d if isinstance(x, list)])
            dtypes.append(None)
            scalars.append(None)
        elif isinstance(d, list) and (d or t not in ("", "Scalar", "ScalarList") and not c):
            inputs.append(tuple(d) if t not in ("", "Scalar", "ScalarList") else None)
            dtypes.append(t if t not in ("", "Scalar", "ScalarList") else None)
            scalars.append(None if t not in ("", "Scalar", "ScalarList") else _concrete(c))
        else:
            inputs.append(None)
            dtypes.append(None)
            scalars.append(_concrete(c))
    strides = [_strides(raw_strides[i] if i < len(raw_strides) else None, x) for i, x in enumerate(inputs)]
    kwargs = {key: a[arg] for arg, key in COMM_ARGS.items() if arg in a}
    return OpRecord(op=str(ev.get("name", "")), inputs=inputs, dtypes=dtypes, scalars=scalars, index=index, strides=strides,
                    kwargs=kwargs)


def _size(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _sizes(d) -> bool:
    """``Input Dims`` entry as torch.profiler writes it: a list of sizes, or of lists of sizes."""
    return isinstance(d, list) and all(_size(x) or (isinstance(x, list) and all(_size(y) for y in x)) for x in d)


def _args(ev: dict) -> dict:
    """An event's ``args`` (an empty dict where a writer put something else there)."""
    a = ev.get("args")
    return a if isinstance(a, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _id(v) -> int | str | None:
    """An External id or correlation: an int (or its text); anything else is no id."""
    return v if isinstance(v, (int, str)) and not isinstance(v, bool) else None


def _time(ev: dict, key: str, where: str, index: int) -> float:
    """A kernel event's ``dur`` or ``ts`` in us: missing is 0 (as torch.profiler omits a zero),
    anything but a finite number is one error line naming the event."""
    v = ev.get(key, 0.0)
    if v is None:
        v = 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (key == "dur" and v < 0):
        raise InputError(f"traceEvents[{index}] (kernel {str(ev.get('name', ''))[:60]!r}): {key}: expected a "
                         f"{'non-negative ' if key == 'dur' else ''}number of microseconds, got {v!r}"[:300], where=where, key=key)
    return float(v)


def _strides(raw, shape) -> tuple | None:
    """A tensor argument's ``Input Strides`` entry as a tuple of ints, when it matches its shape."""
    if not isinstance(shape, tuple) or not isinstance(raw, list) or len(raw) != len(shape):
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in raw):
        return None
    return tuple(raw)


def _dims(v) -> tuple | None:
    """A launch's grid or block: three positive integers, else unknown."""
    if isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in v):
        return tuple(v)
    return None


def read_chrome_trace(path: str | Path) -> ChromeTrace:
    p = Path(path)
    where = str(p)
    if not p.is_file():
        raise InputError("no such file", where=where)
    try:
        with open_by_content(p, text=True) as f:
            data = json.load(f)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise InputError(f"cannot read file ({e})", where=where) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"not JSON ({e}); expected a torch.profiler chrome trace", where=where) from None
    if isinstance(data, dict) and "rocprofiler-sdk-tool" in data:
        return _read_rocprofv3(data, where)
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise InputError("expected a JSON object with a `traceEvents` list (torch.profiler export_chrome_trace)", where=where, key="traceEvents")
    kernels: list[Kernel] = []
    ops: dict[int, tuple[float, OpRecord | None, str]] = {}
    launch_ext: dict[int, int] = {}
    launch_api: dict[int, str] = {}  # correlation -> the runtime call that launched the kernel
    for i, ev in enumerate(data["traceEvents"]):
        if not isinstance(ev, dict):
            continue
        cat = ev.get("cat")
        a = _args(ev)
        if cat == "kernel":
            g, b = a.get("grid"), a.get("block")
            kernels.append(Kernel(
                name=str(ev.get("name", "")), dur_us=_time(ev, "dur", where, i), ts=_time(ev, "ts", where, i),
                grid=_dims(g), block=_dims(b), ext_id=_id(a.get("External id")), correlation=_id(a.get("correlation")),
                stream=_id(a.get("stream")),
            ))
        elif cat in ("cpu_op", "user_annotation") and _id(a.get("External id")) is not None:
            eid = a["External id"]
            ts = ev.get("ts", 0.0)
            ts = float(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) and math.isfinite(ts) else 0.0
            prev = ops.get(eid)
            if prev is None or ts >= prev[0]:
                ops[eid] = (ts, op_record(ev, i) if cat == "cpu_op" else None, str(ev.get("name", "")))
        elif cat == "cuda_runtime" and _id(a.get("correlation")) is not None:
            launch_api[a["correlation"]] = str(ev.get("name", ""))
            if _id(a.get("External id")) is not None:
                launch_ext[a["correlation"]] = a["External id"]
    for k in kernels:
        if k.ext_id is None and k.correlation in launch_ext:
            k.ext_id = launch_ext[k.correlation]
        if k.grid is not None:
            k.workitems = launch_workitems(k.grid, k.block, launch_api.get(k.correlation))
    devs = data.get("deviceProperties") or []
    has_ops = bool(ops)
    return ChromeTrace(
        path=where, kernels=kernels, ops={e: r for e, (_, r, _) in ops.items() if r is not None},
        op_names={e: n for e, (_, _, n) in ops.items()}, devices=devs if isinstance(devs, list) else [],
        meta={k: data.get(k) for k in ("record_shapes", "hip_runtime_version", "cuda_runtime_version") if k in data},
        has_ops=has_ops, graph_launches={c for c, api in launch_api.items() if api in GRAPH_LAUNCHES},
    )


def _read_rocprofv3(data: dict, where: str) -> ChromeTrace:
    """rocprofv3 ``--output-format json`` (rocprofiler-sdk-tool): kernel dispatches with names,
    timestamps (ns) and geometry; no host ops, so no shapes."""
    try:
        tool = data["rocprofiler-sdk-tool"][0]
        symbols = {k["kernel_id"]: (k.get("formatted_kernel_name") or k.get("kernel_name") or "") for k in tool["kernel_symbols"]}
        dispatches = tool["buffer_records"]["kernel_dispatch"]
    except (KeyError, IndexError, TypeError) as e:
        raise InputError(f"rocprofv3 JSON without {e}; expected rocprofiler-sdk-tool[0].kernel_symbols and buffer_records.kernel_dispatch", where=where) from None
    kernels = []
    for d in dispatches:
        info = d.get("dispatch_info", {})
        g, b = info.get("grid_size", {}), info.get("workgroup_size", {})
        kernels.append(Kernel(
            name=symbols.get(info.get("kernel_id"), str(info.get("kernel_id"))),
            dur_us=(d.get("end_timestamp", 0) - d.get("start_timestamp", 0)) / 1e3, ts=d.get("start_timestamp", 0) / 1e3,
            grid=(g.get("x", 1), g.get("y", 1), g.get("z", 1)), block=(b.get("x", 1), b.get("y", 1), b.get("z", 1)),
        ))
        kernels[-1].workitems = prod_dims(kernels[-1].grid)  # rocprofiler-sdk's grid_size counts work-items
    devs = [{"name": a.get("product_name", ""), "numSms": a.get("cu_count"), "gfx": a.get("name")} for a in tool.get("agents", []) if a.get("type") == 2]
    return ChromeTrace(path=where, kernels=kernels, ops={}, op_names={}, devices=devs, has_ops=False, format="rocprofv3 JSON")
