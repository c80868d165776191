"""Kernel-scope points from the real torch.profiler traces in ../shared/data/traces.

Writes validation/trace_measurements.yaml (committed; rerun only when the trace set changes):
one entry per (trace, op, input shapes, input dtypes) whose op maps onto a perfmodel kernel
family. The measured time is the GPU kernel time of one op call: the durations of every kernel
launched for that call (kernels whose `External id` is the op's) are summed; over the calls of
the same op and shapes in the trace the entry keeps the median, min, max and count. Nothing else
is computed from the trace; durations are the `dur` fields (microseconds) as recorded.

Run:  python validation/extract_traces.py [--traces DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
from collections import defaultdict
from math import prod
from pathlib import Path

import yaml

# torch dtype spellings -> perfmodel dtypes: the one table the trace reader and the tracer use
from perfmodel.frontend.op_tables import DTYPE_NAMES as DTYPE
from perfmodel.frontend.vision_ops import batch_norm_layout
from perfmodel.models.batchnorm import PER_CHANNEL_KERNELS
from perfmodel.models.streaming_common import ROW_FAMILIES, pinned_row_geometry
from perfmodel.traces.chrome import launch_workitems

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT.parent / "shared" / "data" / "traces"
URL = {
    "TraceLens": "https://github.com/AMD-AGI/TraceLens/blob/171dd74721ca1ec45709e5805b68ae1f65e27811/",
    "HolisticTraceAnalysis": "https://github.com/facebookresearch/HolisticTraceAnalysis/blob/"
    "f4d0062c382f42bd8a74838bcdad1916c7d5d2da/",
}
# case keys left out of a point's id, added after ids were first given (ids stay stable)
ID_LEFT_OUT = ("spatial", "block", "rows_per_workgroup")
# trace file (relative to TRACES) -> (arch key, source key, workload)
FILES = {
    "TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz": (
        "mi300x",
        "tracelens-mi300x-bert",
    ),
    "TraceLens/tests/traces/mi300/Falconsai_nsfw_image_detection__1016002.json.gz": (
        "mi300x",
        "tracelens-mi300x-vit",
    ),
    "TraceLens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz": (
        "mi300x",
        "tracelens-mi300x-qwen",
    ),
    "TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz": (
        "mi300x",
        "tracelens-mi300x-norm",
    ),
    "TraceLens/tests/traces/torch_compile_triton/trace.json.gz": ("mi300x", "tracelens-mi300x-compile"),
    "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz": ("mi300x", "tracelens-mi300x-resnet"),
    "TraceLens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz": (
        "mi300x",
        "tracelens-mi300x-resnet18",
    ),
    "TraceLens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz": (
        "mi300x",
        "tracelens-mi300x-sglang",
    ),
    "TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz": (
        "h100",
        "tracelens-h100-bert",
    ),
    "TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz": (
        "h100",
        "tracelens-h100-vit",
    ),
    "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz": ("h100", "tracelens-h100-qwen"),
    "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz": (
        "mi250",
        "hta-mi250-toy",
    ),
}
ELEMENTWISE = {  # op -> (reads, writes, flops per element) for same-shape tensor operands
    "aten::add": (2, 1, 1),
    "aten::add_": (2, 1, 1),
    "aten::mul": (2, 1, 1),
    "aten::mul_": (2, 1, 1),
    "aten::gelu": (1, 1, 1),
    "aten::silu": (1, 1, 1),
    "aten::neg": (1, 1, 1),
    "aten::relu": (1, 1, 1),
    "aten::clamp_min": (1, 1, 1),
}


def tensor_dims(dims, types):
    return [
        (d, DTYPE.get(t))
        for d, t in zip(dims, types, strict=False)
        if isinstance(d, list) and d and t in DTYPE
    ]


def to_case(name: str, args: dict) -> tuple[dict, dict, str] | None:
    """(case, case_extra, notes) for an op the model has a family for, else None."""
    dims, types = args.get("Input Dims") or [], args.get("Input type") or []
    conc = args.get("Concrete Inputs") or []
    ts = tensor_dims(dims, types)
    if not ts:
        return None
    if name == "aten::convolution_backward":
        # (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
        # output_padding, groups, output_mask); mixed dtypes are fine (bias_sizes is an int list)
        x, wt = dims[1], dims[2]
        try:
            stride, pad, dil = (json.loads(conc[i]) for i in (4, 5, 6))
            transposed, groups, mask = conc[7], json.loads(conc[9]), conc[10]
        except (IndexError, ValueError):
            return None
        if (len(x) != 4 or len(wt) != 4 or groups != 1 or dil != [1, 1] or transposed != "False"
                or len(set(pad)) != 1 or len(set(stride)) != 1):
            return None
        case = {"kernel": "conv2d", "dtype": ts[1][1], "n": x[0], "c": x[1], "h": x[2], "w": x[3], "k": wt[0], "r": wt[2],
                "s": wt[3], "stride": stride[0], "pad": pad[0], "phase": "bwd",
                "input_grad": not mask.replace(" ", "").startswith("[False")}
        return case, {}, "torch convolution_backward (MIOpen/cuDNN dgrad and wgrad)"
    if name == "aten::native_layer_norm_backward":
        # (grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask): mean and
        # rstd are fp32, so the dtype is the gradient's; the row length is the weight's size
        x, norm = dims[1], dims[5] if len(dims) > 5 else None
        if not norm or not x:
            return None
        cols = prod(norm)
        return ({"kernel": "layernorm", "dtype": ts[0][1], "rows": prod(x) // cols, "cols": cols, "phase": "bwd"}, {},
                "torch layer_norm bwd (input gradient; PyTorch runs the gamma/beta gradients as a second kernel)")
    if name in ("aten::native_batch_norm", "aten::native_batch_norm_backward"):
        # (input, weight, bias, running_mean, running_var, training, ...) / (grad_out, input, ...,
        # save_invstd, train, ...): the input's dtype (the statistics and parameters are fp32)
        bwd = name.endswith("backward")
        x, flag = (dims[1], conc[7] if len(conc) > 7 else "") if bwd else (dims[0], conc[5] if len(conc) > 5 else "")
        if len(x) < 2 or flag not in ("True", "False"):
            return None
        case = {"kernel": "batchnorm", "dtype": ts[0][1], "n": prod(x), "channels": x[1], "training": flag == "True",
                "phase": "bwd" if bwd else "fwd"}
        strides = args.get("Input Strides") or []
        strides = json.loads(strides) if isinstance(strides, str) else strides
        xs = strides[1 if bwd else 0] if len(strides) > (1 if bwd else 0) else None
        layout = batch_norm_layout(x, xs)
        case.update({"layout": layout, "spatial": prod(x[2:])} if layout == "nchw" else {"layout": layout})
        blocks = args.get("blocks") or set()
        if layout == "nchw" and len(blocks) == 1:  # the per-channel kernels' workgroup size, as launched
            case["block"] = blocks.pop()
        return case, {}, f"torch {name.split('::')[1]} (PyTorch's native batch-norm kernels)"
    dtypes = {t for _, t in ts}
    if len(dtypes) != 1:
        return None  # mixed input dtypes (casts): no single-dtype family
    dt = ts[0][1]
    if name in ("aten::mm", "aten::addmm"):
        a, b = (ts[1][0], ts[2][0]) if name == "aten::addmm" else (ts[0][0], ts[1][0])
        if len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            return None
        extra = {"bias_epilogue": True} if name == "aten::addmm" else {}
        return (
            {"kernel": "gemm", "dtype": dt, "m": a[0], "n": b[1], "k": a[1]},
            extra,
            "torch linear layer (A row-major, B = weight view)",
        )
    if name in ("aten::miopen_convolution", "aten::cudnn_convolution"):
        # miopen: (input, weight, bias, padding, stride, dilation, groups, ...);
        # cudnn: (input, weight, padding, stride, dilation, groups, ...)
        off = 3 if name == "aten::miopen_convolution" else 2
        x, wt = dims[0], dims[1]
        try:
            pad, stride, dil, groups = (json.loads(conc[off + i]) for i in range(4))
        except (IndexError, ValueError):
            return None
        if (
            len(x) != 4
            or len(wt) != 4
            or groups != 1
            or dil != [1, 1]
            or len(set(pad)) != 1
            or len(set(stride)) != 1
        ):
            return None
        case = {
            "kernel": "conv2d",
            "dtype": dt,
            "n": x[0],
            "c": x[1],
            "h": x[2],
            "w": x[3],
            "k": wt[0],
            "r": wt[2],
            "s": wt[3],
            "stride": stride[0],
            "pad": pad[0],
        }
        return case, {}, f"torch {name.split('::')[1]} (forward)"
    if name == "aten::_flash_attention_forward":
        q, k = dims[0], dims[1]
        causal = len(conc) > 8 and conc[8] == "True"
        case = {
            "kernel": "attention",
            "dtype": dt,
            "batch": q[0],
            "heads": q[2],
            "kv_heads": k[2],
            "seq_q": q[1],
            "seq_kv": k[1],
            "head_dim": q[3],
            "causal": causal,
            "phase": "fwd",
        }
        return case, {}, "PyTorch SDPA flash path (AOTriton on ROCm, FA2 on CUDA)"
    if name == "aten::native_layer_norm":
        x, norm = dims[0], dims[2] if len(dims) > 2 else None
        if not norm:
            return None
        cols = prod(norm)
        return (
            {"kernel": "layernorm", "dtype": dt, "rows": prod(x) // cols, "cols": cols},
            {},
            "torch layer_norm fwd",
        )
    if name == "aiter::rmsnorm":
        x = dims[0]
        return {"kernel": "rmsnorm", "dtype": dt, "rows": x[0], "cols": x[1]}, {}, "aiter rmsnorm"
    if name == "aiter::add_rmsnorm":
        # out, input, residual_in, residual_out, weight: the input and the residual read, both written
        x = dims[0]
        return (
            {"kernel": "rmsnorm", "dtype": dt, "rows": x[0], "cols": x[1], "reads": 2, "writes": 2},
            {},
            "aiter fused add+rmsnorm",
        )
    if name.startswith("triton_red_fused") and "mean_mul_pow_rsqrt" in name and len(dims[0]) == 3:
        x = dims[0]
        extra = {"fused_residual_add": True} if "add" in name.split("mean")[0] else {}
        return (
            {"kernel": "rmsnorm", "dtype": dt, "rows": x[0] * x[1], "cols": x[2]},
            extra,
            "torch.compile Triton rmsnorm",
        )
    if name in ELEMENTWISE:
        r, w, f = ELEMENTWISE[name]
        shapes = [d for d, _ in ts]
        if len(shapes) != r or any(s != shapes[0] for s in shapes):
            return None  # broadcasts / scalars: not a plain same-shape stream
        n = prod(shapes[0])
        return (
            {"kernel": "elementwise", "dtype": dt, "n": n, "reads": r, "writes": w, "flops_per_element": f},
            {},
            f"torch {name}",
        )
    if name == "sgl_kernel::silu_and_mul":
        out = dims[0]
        return (
            {
                "kernel": "elementwise",
                "dtype": dt,
                "n": prod(out),
                "reads": 2,
                "writes": 1,
                "flops_per_element": 1,
            },
            {"activation": "silu"},
            "sgl_kernel silu(gate)*up: two halves of one input read, one output",
        )
    return None


def extract(path: Path) -> dict:
    d = json.load(gzip.open(path))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    ops = defaultdict(list)
    for e in ev:
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            ops[e["args"]["External id"]].append(e)
    per_call: dict[int, list] = defaultdict(list)
    api: dict = {}  # correlation -> the runtime call that launched the kernel (the grid's unit)
    for e in ev:
        if e.get("cat") == "kernel" and e.get("args", {}).get("External id") in ops:
            per_call[e["args"]["External id"]].append(e)
        elif e.get("cat") in ("cuda_runtime", "cuda_driver", "hip_runtime") and "correlation" in e.get("args", {}):
            api[e["args"]["correlation"]] = e.get("name", "")
    groups: dict[tuple, list] = defaultdict(list)
    launches: dict[tuple, dict] = {}
    for xid, kernels in per_call.items():
        op = max(ops[xid], key=lambda o: o["ts"])  # innermost op of the call
        a = op["args"]
        key = (
            op["name"],
            json.dumps(a.get("Input Dims")),
            json.dumps(a.get("Input type")),
            json.dumps(a.get("Concrete Inputs")),
        )
        groups[key].append((sum(k["dur"] for k in kernels), len(kernels), kernels[0]["name"]))
        seen = launches.setdefault(key, {"Input Strides": a.get("Input Strides"), "blocks": set(), "row_launches": set()})
        if len(kernels) == 1:  # a one-kernel op's launch: (work-items per workgroup, workgroups)
            ka = kernels[0].get("args", {})
            g, b = ka.get("grid"), ka.get("block")
            if isinstance(g, list) and isinstance(b, list) and prod(b) > 0:
                items = launch_workitems(g, b, api.get(ka.get("correlation")))
                seen["row_launches"].add((prod(b), items // prod(b)))
        for k in kernels:  # the workgroup size of PyTorch's per-channel batch-norm kernels, as launched
            if any(p in k["name"] for p in PER_CHANNEL_KERNELS) and isinstance(k.get("args", {}).get("block"), list):
                seen["blocks"].add(prod(k["args"]["block"]))
    return {"groups": groups, "ops": ops, "launches": launches}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=str(TRACES))
    ap.add_argument("--out", default=str(ROOT / "validation" / "trace_measurements.yaml"))
    args = ap.parse_args(argv)
    out = []
    for rel, (arch, skey) in FILES.items():
        path = Path(args.traces) / rel
        if not path.exists():
            print(f"missing {path}")
            continue
        found = extract(path)
        g = found["groups"]
        repo = rel.split("/")[0]
        url = URL[repo] + rel.split("/", 1)[1]
        for (name, dims, types, conc), calls in sorted(g.items()):
            m = to_case(
                name,
                {
                    "Input Dims": json.loads(dims),
                    "Input type": json.loads(types),
                    "Concrete Inputs": json.loads(conc),
                    **found["launches"][(name, dims, types, conc)],
                },
            )
            if m is None:
                continue
            case, extra, note = m
            rl = found["launches"][(name, dims, types, conc)]["row_launches"]
            if case["kernel"] in ROW_FAMILIES and len(rl) == 1:  # the row kernel's launch, as recorded
                case.update(pinned_row_geometry(case["rows"], *next(iter(rl))))
            durs = sorted(c[0] for c in calls)
            nk = sorted({c[1] for c in calls})
            entry = {
                "id": f"{skey}:{name.split('::')[-1]}:{'x'.join(str(v) for k, v in case.items() if isinstance(v, int) and not isinstance(v, bool) and k not in ID_LEFT_OUT)}:{case['dtype']}",
                "arch": arch,
                "case": case,
                "measured": {
                    "time_us": round(statistics.median(durs), 3),
                    "time_us_min": durs[0],
                    "time_us_max": durs[-1],
                    "calls": len(durs),
                },
                "scope": "kernel",
                "implementation": calls[0][2][:90],
                "source": url,
                "source_key": skey,
                "locator": f"torch.profiler trace: cpu_op {name} Input Dims {dims}; GPU kernel dur summed per call "
                f"({'/'.join(map(str, nk))} kernel(s) per call), median over {len(durs)} calls",
                "notes": note
                + "; trace is a test/education recording, not a tuned benchmark (TraceLens README)",
            }
            if extra:
                entry["case_extra"] = extra
            out.append(entry)
    # ids unique
    seen: dict[str, int] = {}
    for e in out:
        if e["id"] in seen:
            seen[e["id"]] += 1
            e["id"] += f"#{seen[e['id']]}"
        else:
            seen[e["id"]] = 0
    header = (
        "# GENERATED by validation/extract_traces.py from ../shared/data/traces (see its README for\n"
        "# origin and licence: TraceLens MIT (c) AMD, HolisticTraceAnalysis MIT (c) Meta). Do not edit.\n"
        "# time_us: median over calls of the summed GPU kernel durations of one op call (kernel scope).\n"
    )
    Path(args.out).write_text(header + yaml.safe_dump(out, sort_keys=False, width=140))
    print(f"{len(out)} points -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
