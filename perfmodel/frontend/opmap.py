"""Operator -> case: one small function per aten (or custom) op, as in torch's flop counter.

Input is an `OpRecord`: the op name (``aten::mm``), the shapes of its tensor arguments (a tuple;
a list of tuples for a tensor list; ``None`` for a non-tensor), their dtypes, and the scalar
arguments. The same record comes from the meta-device tracer (`perfmodel.frontend.trace`) and
from a torch.profiler chrome trace (``Input Dims`` / ``Input type`` / ``Concrete Inputs``), so
both paths share these rules. No torch here.

`to_case(rec, dtype)` returns ``(case, None)``, ``(None, reason)`` for a kernel op without a
model (listed, never dropped), or ``(None, NO_KERNEL)`` for ops that launch no kernel (views,
metadata, allocation).
"""

from __future__ import annotations

import math

from perfmodel import dtypes
from perfmodel.frontend import vision_ops
from perfmodel.frontend.op_record import (
    NO_KERNEL,
    OpRecord,
    arg,
    bytes_of,
    dtype_of,
    numel,
    tensor_args,
    tensor_bytes,
    tensors,
)
from perfmodel.frontend.op_tables import (
    ATTENTION_OPS,
    C10D_COLLECTIVES,
    CAT_OPS,
    GATHER_OPS,
    INTEGER_NAMES,
    POINTWISE,
    REDUCE_OPS,
    SCALAR_TYPE_CODES,
    SCALAR_TYPES,
    SCATTER_OPS,
    SECOND_OUTPUT_BYTES,
    VIEW_OPS,
    WRITE_ONLY_OPS,
)
from perfmodel.models import activations

__all__ = ["NO_KERNEL", "OpRecord", "is_view", "to_case"]

def _broadcast(shapes: list[tuple]) -> tuple:
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(nd):
        dims = [s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0]
        out.append(max(dims) if dims else 1)
    return tuple(out)


def _gemm(m, n, k, batch=1) -> dict:
    return {"kernel": "gemm", "m": int(m), "n": int(n), "k": int(k), "batch": int(batch)}


def _elementwise(rec: OpRecord, dtype: str, flops: float, out_shape=None, reads_bytes=None, sfu: float = 0.0,
                 int_muls: float = 0.0) -> dict | None:
    ts = tensors(rec)
    listed = [t for s in rec.inputs if isinstance(s, list) for t in s if isinstance(t, tuple)]  # tensor lists (cat)
    ts += listed
    if out_shape is None:
        out_shape = rec.outputs[0] if rec.outputs and isinstance(rec.outputs[0], tuple) else _broadcast(ts)
    n = numel(out_shape)
    if n == 0:
        return None
    # the case counts arrays of its dtype's elements: a bool or int64 output of a float op is
    # a fraction or a multiple of one
    elem = bytes_of(None, dtype)
    out_elem = bytes_of(rec.out_dtype, dtype) if rec.out_dtype else elem
    if reads_bytes is None:  # a list's tensors have no recorded type: the case's
        reads_bytes = tensor_bytes(tensor_args(rec), dtype) + tensor_bytes([(t, None) for t in listed], dtype)
    written = out_elem + SECOND_OUTPUT_BYTES.get(rec.name, 0.0)
    case = {"kernel": "elementwise", "n": int(n), "reads": round(reads_bytes / (n * elem), 4), "writes": round(written / elem, 4),
            "flops_per_element": flops}
    if sfu:
        case["sfu_per_element"] = sfu
    if int_muls:
        case["int_muls_per_element"] = int_muls
    if rec.name == "copy_":  # dst <- src: read src only (dst is counted as an input above)
        src = ts[1] if len(ts) > 1 else ts[0]
        case["reads"] = round(numel(src) * bytes_of(rec.dtypes[1] if len(rec.dtypes) > 1 else None, dtype) / (n * elem), 4)
    return case


def to_case(rec: OpRecord, default_dtype: str = "bf16") -> tuple[dict | None, str | None]:
    """(case, None), or (None, why not): see the module doc."""
    name = rec.name
    dtype = dtype_of(rec, default_dtype)
    ts = tensors(rec)
    ns = rec.op.split("::")[0] if "::" in rec.op else ""
    try:
        case = _map(rec, name, ns, ts, dtype)
    except (IndexError, TypeError, ValueError, ZeroDivisionError):
        return None, f"{rec.op}: argument shapes not understood ({rec.shapes_text()})"
    if case is None:
        return None, None
    if isinstance(case, str):
        return None, case
    case.pop("_note", None)
    case.setdefault("dtype", dtype)
    return case, None


def _map(rec: OpRecord, name: str, ns: str, ts: list[tuple], dtype: str):
    """The case, a why-not string, NO_KERNEL or None: a rule by op name from the table first; then
    the inference libraries' ops, torch.compile's Triton kernels, the elementwise ops."""
    if ns == "perfmodel":
        return _custom(rec, name, ts, dtype)
    if "collective" in rec.kwargs:
        return _collective(rec)
    rule = _RULES.get(name)
    if rule is not None:
        return rule(rec, name, ts, dtype)
    if ns and ns != "aten":
        out = _inference_op(rec, name, ts, dtype)
        if out is not None:
            return out
    if name.startswith("triton_"):  # a torch.compile'd Triton kernel recorded under its own name
        return _triton(rec, name, ts, dtype)
    if name.startswith("_foreach_"):
        return _foreach(rec, name, dtype)
    base = name if name in POINTWISE else name.rstrip("_")  # in place (clamp_min_: an in-place ReLU): self read and written
    if base in POINTWISE:
        if base == "mul" and dtypes.is_integer(dtype):  # an integer multiply runs on its own (slower) rate
            return _elementwise(rec, dtype, 0, int_muls=1)
        if base in WRITE_ONLY_OPS:
            return _elementwise(rec, dtype, 0, reads_bytes=0.0)
        return _elementwise(rec, dtype, POINTWISE[base])
    act = _activation(rec, name)
    if act is not None:
        valu, sfu = activations.cost(act)
        return _elementwise(rec, dtype, valu, sfu=sfu)
    return f"{rec.op}: no kernel model ({rec.shapes_text()})"


def _foreach(rec: OpRecord, name: str, dtype: str) -> dict | str:
    """An optimizer's multi-tensor op (_foreach_add_(params, grads, alpha), _foreach_mul_,
    _foreach_addcmul_ ...): its pointwise op over every element of its tensor lists, as one
    stream reading each list once and writing one (PyTorch's multi_tensor_apply packs the
    lists into few launches); lists recorded without their shapes have no case."""
    op = name[len("_foreach_"):]
    base = next((b for b in (op.rstrip("_"), op, op.rstrip("_") + "_") if b in POINTWISE), None)
    lists = [x for x in rec.inputs if isinstance(x, list)]
    if base is None:
        return f"{rec.op}: no kernel model ({rec.shapes_text()})"
    if not lists or not lists[0] or not all(isinstance(t, tuple) for t in lists[0]):
        return f"{rec.op}: tensor lists recorded without their shapes"
    n = sum(numel(t) for t in lists[0])
    if n == 0:
        return None
    # self is overwritten, not read, by a copy (which reads its source list) and a fill
    reads = 0.0 if base in WRITE_ONLY_OPS else float(len(lists)) - (1.0 if base == "copy_" else 0.0)
    return {"kernel": "elementwise", "n": int(n), "reads": reads, "writes": 1, "flops_per_element": POINTWISE[base]}


def _collective(rec: OpRecord) -> dict | str:
    """A c10d collective as its ``record_param_comms`` op records it (name, element counts,
    dtype, group size; `traces.chrome.COMM_ARGS`): the interconnect model of its kind over the
    buffer one rank holds. Gather, scatter and point-to-point have no model."""
    kw = rec.kwargs
    name = str(kw["collective"])
    if name not in C10D_COLLECTIVES:
        return f"collective {name}: no kernel model"
    kind, count = C10D_COLLECTIVES[name]
    size, dtype = SCALAR_TYPES.get(str(kw.get("comm_dtype")), (None, None))
    nelems = kw.get(f"{count}_nelems") if isinstance(count, str) else count
    if count == 1:  # a barrier: one byte
        size = 1
    ranks = kw.get("group_size")
    if size is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in (nelems, ranks)) or ranks < 1 or nelems < 0:
        return f"collective {name}: element count, dtype or group size not recorded"
    if nelems == 0:
        return NO_KERNEL
    case = {"kernel": kind, "bytes": float(nelems * size), "ranks": ranks}
    if dtype is not None:
        case["dtype"] = dtype
    return case


def _activation(rec: OpRecord, name: str) -> str | None:
    """The `models.activations` entry of an eager op (in-place ``silu_`` as ``silu``;
    ``gelu(approximate='tanh')`` as ``gelu_tanh``), or None."""
    base = name.rstrip("_")
    if base == "gelu" and "tanh" in (rec.kwargs.get("approximate"), arg(rec, 1)):
        return "gelu_tanh"
    return base if base in activations.PER_ELEMENT else None


def _gated(n: int, act: str) -> dict:
    """act(gate) * up over ``n`` outputs: reads gate and up, writes one array."""
    valu, sfu = activations.cost(act, gated=True)
    return {"kernel": "elementwise", "n": int(n), "reads": 2.0, "writes": 1, "flops_per_element": valu,
            "sfu_per_element": sfu}


def _no_kernel(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> str:
    return NO_KERNEL


def _mm(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    (m, k), (_, n) = (ts[1], ts[2]) if name == "addmm" else (ts[0], ts[1])  # addmm(bias, a, b)
    return _gemm(m, n, k)


def _bmm(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    a, b = (ts[0], ts[1]) if name == "bmm" else (ts[1], ts[2])
    return _gemm(a[1], b[2], a[2], a[0])


def _linear(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    """linear (weight is [n, k]) and matmul (a batched matmul unless the weight is 2-D)."""
    a, w = ts[0], ts[1]
    k = a[-1]
    n = w[0] if name == "linear" else w[-1]
    m = numel(a[:-1]) if name == "linear" or len(w) == 2 else a[-2]
    batch = 1 if name == "linear" or len(w) == 2 else numel(a[:-2])
    return _gemm(m, n, k, batch)


def _layer_norm(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    x = ts[0]
    cols = numel(rec.inputs[1]) if isinstance(rec.inputs[1], tuple) and name == "layer_norm" else None
    shape = arg(rec, 1)
    if isinstance(shape, (list, tuple)) and shape:
        cols = numel(tuple(int(v) for v in shape))
    cols = cols or x[-1]
    return {"kernel": "layernorm", "rows": numel(x) // cols, "cols": int(cols)}


def _rms_norm(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    x = ts[0]
    shape = arg(rec, 1)
    cols = numel(tuple(int(v) for v in shape)) if isinstance(shape, (list, tuple)) and shape else x[-1]
    return {"kernel": "rmsnorm", "rows": numel(x) // cols, "cols": int(cols)}


def _softmax(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    x = ts[0]
    cols = x[int(arg(rec, 1, -1))]
    return {"kernel": "softmax", "rows": numel(x) // cols, "cols": int(cols)}


def _row_backward(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    """The backward of a row kernel: _softmax_backward_data(grad_output, output, dim, ...),
    native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, ...),
    _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight, ...): the row
    length from the softmax axis or the normalised shape of the second tensor."""
    x = ts[1]
    if name == "_softmax_backward_data":
        cols = x[int(arg(rec, 2, -1))]
        kernel = "softmax"
    else:
        shape = arg(rec, 2)
        cols = numel(tuple(int(v) for v in shape)) if isinstance(shape, (list, tuple)) and shape else x[-1]
        kernel = "layernorm" if name == "native_layer_norm_backward" else "rmsnorm"
    return {"kernel": kernel, "rows": numel(x) // cols, "cols": int(cols), "phase": "bwd"}


def _group_norm(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | str:
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps) and its backward
    (grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask): a LayerNorm over each
    group's C / group channels and HxW positions, N x group rows (the per-channel weight and bias
    are counted as a row's parameter vectors, an overcount of C / group x HxW / C)."""
    bwd = name.endswith("_backward")
    x = ts[1] if bwd else ts[0]
    at = 8 if bwd else 6
    groups = arg(rec, at)
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1 or len(x) < 2 or x[1] % groups:
        return f"{rec.op}: no group count among its arguments ({rec.shapes_text()})"
    rows = x[0] * groups
    case = {"kernel": "layernorm", "rows": int(rows), "cols": int(numel(x) // rows)}
    if bwd:
        case["phase"] = "bwd"
    return case


def _gather(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | None:
    """Reads as many elements as it writes (the gathered rows), not the whole table, and its
    index tensors whole (torch.gather's index has one int64 per output element: 8 of the 10
    bytes a bf16 element moves in)."""
    indices = sum(numel(s) * bytes_of(d, dtype) for s, d in zip(rec.inputs, rec.dtypes, strict=False)
                  if isinstance(s, tuple) and d in INTEGER_NAMES)
    if name == "embedding_dense_backward":  # (grad_output, indices, num_weights, ...): the weight's gradient
        # written whole (zeroed), the output gradient read and added into the rows it names
        rows = arg(rec, 2)  # num_weights (a chrome trace records no output shapes)
        out = rec.outputs[0] if rec.outputs else ((int(rows), ts[0][-1]) if isinstance(rows, int) else None)
        if out is None:
            return f"{rec.op}: num_weights not recorded ({rec.shapes_text()})"
        grad = numel(ts[0]) * bytes_of(rec.dtypes[0] if rec.dtypes else None, dtype)
        return _elementwise(rec, dtype, 1, out_shape=out, reads_bytes=2 * grad + indices)
    if name == "embedding":
        w, idx = ts[0], ts[1]
        out = (*idx, w[-1])
        rows = numel(out) * bytes_of(rec.dtypes[0] if rec.dtypes else None, dtype)
        return _elementwise(rec, dtype, 0, out_shape=out, reads_bytes=rows + indices)
    out = rec.outputs[0] if rec.outputs else ts[-1]
    return _elementwise(rec, dtype, 0, out_shape=out, reads_bytes=numel(out) * bytes_of(None, dtype) + indices)


def _copy_like(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | None:
    return _elementwise(rec, dtype, 0)


def _scan(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | None:
    """A prefix scan (cumsum, cumprod) moves what a map does: a single-pass scan with decoupled
    look-back reads each element once and writes it once (Merrill and Garland, NVIDIA 2016; the
    rocPRIM/CUB scans PyTorch calls), one add or multiply per element; the look-back between
    tiles is not timed."""
    return _elementwise(rec, dtype, 1)


def _scatter(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | None:
    """An in-place scatter (`SCATTER_OPS`): the source's elements written into self at the
    indexed places, the source and the index tensors read (an index list recorded as a scalar
    argument is not counted); the accumulating ones (index_add_, scatter_add_, index_put_ with
    accumulate=True) read the destination elements too. A scatter of a scalar value writes one
    element per index."""
    args = tensor_args(rec)[1:]  # self is written
    index = [(s, d) for s, d in args if d in INTEGER_NAMES]
    source = [s for s, d in args if d not in INTEGER_NAMES]
    n = numel(source[-1]) if source else max((numel(s) for s, _ in index), default=0)
    if n == 0:
        return None
    accumulate = SCATTER_OPS[name]
    if accumulate is None:  # index_put_(self, indices, values, accumulate)
        accumulate = arg(rec, 3, False) is True
    elem = bytes_of(None, dtype)
    reads = tensor_bytes(args, dtype) + (n * elem if accumulate else 0.0)
    return _elementwise(rec, dtype, 1 if accumulate else 0, out_shape=(n,), reads_bytes=reads)


# PyTorch's random-number ops -> the distribution they draw each element from
# (`models.random_numbers`); bernoulli(p) reads its tensor of probabilities
RANDOM_OPS = {"normal_": "normal", "uniform_": "uniform", "bernoulli_": "bernoulli", "bernoulli": "bernoulli",
              "exponential_": "exponential", "native_dropout": "dropout"}


def _random(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | None:
    """An `elementwise` case with ``random=`` its distribution: in-place samplers write self and
    read nothing, ``bernoulli_`` with a tensor of probabilities and ``bernoulli`` read it,
    ``native_dropout`` reads its input and writes its output and its bool mask. An eval-mode
    dropout (train false, or p = 0) draws nothing: a copy."""
    if not ts:
        return None
    if name == "native_dropout":
        case = _elementwise(rec, dtype, 0)
        if arg(rec, 2) is False or arg(rec, 1) == 0:
            return case
    elif name == "bernoulli":
        case = _elementwise(rec, dtype, 0, out_shape=ts[0])
    else:  # self is written; bernoulli_(self, p) reads a tensor p
        case = _elementwise(rec, dtype, 0, out_shape=ts[0], reads_bytes=tensor_bytes(tensor_args(rec)[1:], dtype))
    if case is not None:
        case["random"] = RANDOM_OPS[name]
    return case


def _arange(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | None:
    """``arange`` writes its values (one multiply-add of the index each). The tracer records the
    output; a chrome trace only the scalars, by overload: (end, dtype, layout, device,
    pin_memory), (start, end, dtype, ...) or (start, end, step, dtype, ...), the dtype as its
    ScalarType code (4: int64) or absent (int64 when the bounds are whole numbers, as torch
    infers it); the out variants (end, out) and (start, end, step, out), which launch the
    kernel, take the out tensor's type."""
    if rec.outputs and isinstance(rec.outputs[0], tuple):
        return _elementwise(rec, dtype, 2, reads_bytes=0.0)
    values = list(rec.scalars)
    out_spelling = None
    if rec.inputs and isinstance(rec.inputs[-1], tuple):  # the out variants: (end, out), (start, end, step, out)
        out_spelling, values = rec.dtypes[-1] if rec.dtypes else None, values[:-1] + [None]
        bounds = {2: (None, 0, None, 1), 4: (0, 1, 2, 3)}.get(len(values))
    else:
        bounds = {5: (None, 0, None, 1), 6: (0, 1, None, 2), 7: (0, 1, 2, 3)}.get(len(values))
    if bounds is None:
        return f"{rec.op}: arguments not understood ({len(values)} of them)"
    at_start, at_end, at_step, at_dtype = bounds
    start = values[at_start] if at_start is not None else 0
    end, step = values[at_end], values[at_step] if at_step is not None else 1
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end, step)) or step == 0:
        return f"{rec.op}: bounds not recorded"
    n = max(0, math.ceil((end - start) / step))
    if n == 0:
        return None
    code = values[at_dtype]
    out = SCALAR_TYPE_CODES.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
    if out is None and out_spelling:
        out = dtype_of(OpRecord(op=rec.op, dtypes=[out_spelling]), dtype)
    if out is None:
        out = "int64" if all(isinstance(v, int) for v in (start, end, step)) else dtype
    return {"kernel": "elementwise", "n": n, "reads": 0.0, "writes": 1.0, "flops_per_element": 2, "dtype": out}


def _mse_loss_backward(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | None:
    """``mse_loss_backward(grad_output, input, target, reduction[, grad_input])``: reads the
    three (grad_output a scalar under a mean or sum reduction), writes the input's gradient,
    2 (x - y) grad / n: a subtract and two multiplies. The out variant's grad_input is written,
    not read."""
    if len(ts) < 3:
        return f"{rec.op}: argument shapes not understood ({rec.shapes_text()})"
    return _elementwise(rec, dtype, 3, out_shape=ts[1], reads_bytes=tensor_bytes(tensor_args(rec)[:3], dtype))


def _reduce(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict:
    """A reduction of its input; over a dimension (k outputs, from the recorded output shape)
    the first stage alone on k workgroups, each writing its output (`reduction` ``partials``),
    so the outputs' bytes are counted. A chrome trace records no output shapes: one value."""
    n = int(numel(ts[0]))
    out = rec.outputs[0] if rec.outputs and isinstance(rec.outputs[0], tuple) else ()
    k = int(numel(out))
    return {"kernel": "reduction", "n": n, "partials": k} if 1 < k < n else {"kernel": "reduction", "n": n}


def _triton(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | str:
    if not ts:
        return f"{rec.op}: no tensor arguments"
    n = max(numel(t) for t in ts)
    reads = tensor_bytes(tensor_args(rec), dtype) / (n * bytes_of(None, dtype))
    kind = "pointwise" if name.startswith("triton_poi") else "reduction/other"
    return {"kernel": "elementwise", "n": int(n), "reads": round(reads, 4), "writes": 1, "flops_per_element": 1,
            "_note": f"Triton {kind}: bytes of its tensor arguments, output the size of the largest"}


def _fused_add_rmsnorm(x: tuple) -> dict:
    """A residual add fused into an RMSNorm (vLLM `fused_add_rms_norm`, aiter `add_rmsnorm`): a row
    kernel that reads x and the residual and writes the output and the updated residual."""
    return {"kernel": "rmsnorm", "rows": numel(x) // x[-1], "cols": int(x[-1]), "reads": 2, "writes": 2}


def _inference_op(rec: OpRecord, name: str, ts: list[tuple], dtype: str):
    """Serving-engine custom ops (aiter, sgl_kernel, vllm _C) that record their shapes."""
    if name in ("rmsnorm", "rms_norm", "rmsnorm2d_fwd"):
        x = ts[0]
        return {"kernel": "rmsnorm", "rows": numel(x) // x[-1], "cols": int(x[-1])}
    if name in ("add_rmsnorm", "fused_add_rms_norm", "rmsnorm2d_fwd_with_add"):
        return _fused_add_rmsnorm(ts[0])
    if name in ("gemm_a16w16", "gemm_a8w8", "tgemm_mm"):
        (m, k), (n, _) = ts[0], ts[1]
        return _gemm(m, n, k)
    if name in ("wvSplitK", "wvSplitKQ", "LLMM1"):  # vLLM's ROCm skinny GEMMs take the weight first: (weight [n, k], x [m, k], ...)
        (n, k), (m, _) = ts[0], ts[1]
        return _gemm(m, n, k)
    if name in ("rotary_embedding", "batched_rotary_embedding"):
        q, k = ts[1], ts[2]
        return {"kernel": "elementwise", "n": int(numel(q) + numel(k)), "reads": 1.0, "writes": 1, "flops_per_element": 3}
    if name in ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul", "act_and_mul", "scaled_act_and_mul"):
        x = max(ts, key=numel)  # act_and_mul takes its activation as an argument: SiLU, the common one
        return _gated(numel(x) // 2, name.removesuffix("_and_mul") if name.startswith("gelu") else "silu")
    if name in ("store_cache", "reshape_and_cache", "reshape_and_cache_flash", "set_kv_buffer"):
        k, v = ts[0], ts[1]
        return {"kernel": "elementwise", "n": int(numel(k) + numel(v)), "reads": 1.0, "writes": 1, "flops_per_element": 0}
    if name in VARLEN_ATTENTION:
        return _varlen_attention(rec, name, ts)
    if name in PAGED_DECODE:
        return _paged_decode(rec, name, ts)
    return None


# vLLM's paged-attention kernels (csrc/torch_bindings.cpp, csrc/rocm/torch_bindings.cpp): the
# query's index among the tensors, the positions of num_kv_heads and of block_size and
# max_seq_len (the ROCm op gained an optional query_start_loc before them: one position later).
PAGED_DECODE = {"paged_attention_v1": (1, 4, 8), "paged_attention_v2": (4, 7, 11), "paged_attention": (4, 7, 11)}


def _paged_decode(rec: OpRecord, name: str, ts: list[tuple]):
    """A decode (or a mixed batch: q [tokens, heads, dim] over seq_lens) over vLLM's paged cache
    [blocks, kv_heads, dim / x, block_size, x], the keys of each sequence up to max_seq_len."""
    at_q, at_kvh, at_block = PAGED_DECODE[name]
    q, kc = ts[at_q], ts[at_q + 1]
    if name == "paged_attention" and not isinstance(arg(rec, at_block), int):
        at_block += 1  # ROCm: query_start_loc at 11
    seqs = ts[at_q + 4][0] if len(ts) > at_q + 4 and len(ts[at_q + 4]) == 1 else q[0]  # seq_lens [sequences]
    skv = arg(rec, at_block + 1)
    block = arg(rec, at_block, kc[3] if len(kc) == 5 else 16)  # else vLLM's default block_size
    if not isinstance(skv, int) or isinstance(skv, bool) or skv < 1:
        return f"{rec.op}: no max_seq_len among its arguments ({rec.shapes_text()})"
    sq = max(1, q[0] // max(1, seqs))
    return {"kernel": "attention", "batch": seqs, "heads": q[1], "kv_heads": int(arg(rec, at_kvh, kc[1])), "seq_q": sq,
            "seq_kv": skv, "head_dim": q[-1], "causal": sq > 1, "paged": True, "block_size": int(block)}


# Variable-length (packed) attention ops: q [tokens, heads, dim], cu_seqlens_q [batch + 1] (the
# fourth tensor). Positions of (is_causal, window left, window right, softcap) in the recorded
# arguments, None where the op has none: aiter's mha_varlen_fwd (csrc/include/mha_varlen_fwd.h:
# q, k, v, cu_q, cu_k, max_q, max_k, p_dropout, scale, zero_tensors, is_causal, left, right),
# FlashAttention's flash_attn_varlen_func (..., dropout_p, softmax_scale, causal, window_size
# pair, softcap) and its custom op _flash_attn_varlen_forward (2.6.3+: ..., causal, left,
# right, softcap), aiter's paged mha_batch_prefill (max_seqlen_k at 7, is_causal at 12).
VARLEN_ATTENTION = {
    "mha_varlen_fwd": (10, 11, 12, None),
    "flash_attn_varlen_func": (9, 10, None, 11),
    "_flash_attn_varlen_forward": (9, 10, 11, 12),
    "mha_batch_prefill": (12, None, None, None),
}


def _varlen_attention(rec: OpRecord, name: str, ts: list[tuple]):
    """A packed batch of sequences, taken as equal: seq_q = query tokens / sequences, and seq_kv
    the same mean of the packed keys (k [tokens, kv_heads, dim]); aiter's paged prefill reads its
    keys from a page pool, so its max_seqlen_k stands for them."""
    q, kc = ts[0], ts[1]
    batch = max(1, ts[3][0] - 1)
    sq = q[0] // batch
    at_causal, at_left, at_right, at_cap = VARLEN_ATTENTION[name]
    if name == "mha_batch_prefill":
        skv = arg(rec, 7, sq)
        skv = int(skv) if isinstance(skv, (int, float)) and not isinstance(skv, bool) else sq
    else:
        skv = kc[0] // batch
    causal = rec.kwargs.get("causal", rec.kwargs.get("is_causal", arg(rec, at_causal, True)))
    case = {"kernel": "attention", "batch": batch, "heads": q[1], "kv_heads": kc[1], "seq_q": max(1, sq),
            "seq_kv": max(1, skv), "head_dim": q[2], "causal": bool(causal)}
    if name == "mha_batch_prefill" and len(ts) > 5:
        case["paged"] = True
        case["block_size"] = max(1, round(batch * case["seq_kv"] / max(1, ts[5][0])))
    pair = rec.kwargs.get("window_size", arg(rec, at_left) if at_left is not None else None)
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        left, right = pair
    else:
        left = rec.kwargs.get("window_size_left", pair)
        right = rec.kwargs.get("window_size_right", arg(rec, at_right) if at_right is not None else None)
    softcap = rec.kwargs.get("softcap", arg(rec, at_cap) if at_cap is not None else None)
    return _local_attention(rec, case, left, right, softcap)


def _attention(rec: OpRecord, name: str, ts: list[tuple], dtype: str):
    q, k = ts[0], ts[1]
    # V's head dim (DeepSeek prefill: 128 beside 192): the third tensor where it has Q's rank
    dv = ts[2][-1] if len(ts) > 2 and len(ts[2]) == len(q) else q[-1]
    causal = bool(rec.kwargs.get("is_causal", False))
    left = right = None  # FlashAttention's window_size_left/right: keys before/after the query (-1 or None: unbounded)
    softcap = rec.kwargs.get("softcap")  # FlashAttention's logit soft cap (0: none)
    if name in ("_flash_attention_forward", "flash_attn_func", "_flash_attn_forward", "mha_fwd", "fmha_fwd", "_efficient_attention_forward"):
        # [batch, seq, heads, dim] layout (FlashAttention / aiter / aten's flash and memory-efficient kernels)
        b, sq, h, d = q
        skv, hk = k[1], k[2]
        if name == "_flash_attention_forward":  # aten: (..., dropout_p, is_causal, return_debug_mask, scale, window_size_left, ...)
            causal = causal or bool(arg(rec, 8, False))
            left, right = rec.kwargs.get("window_size_left", arg(rec, 11)), rec.kwargs.get("window_size_right", arg(rec, 12))
        elif name in ("flash_attn_func", "_flash_attn_forward"):  # Dao: (q, k, v, dropout_p, softmax_scale, causal, window_size...)
            causal = causal or bool(rec.kwargs.get("causal", arg(rec, 5, False)))
            pair = rec.kwargs.get("window_size", arg(rec, 6))  # flash_attn_func: a (left, right) pair
            if isinstance(pair, (list, tuple)) and len(pair) == 2:  # then softcap follows at 7
                left, right = pair
                cap_at = 7
            else:  # _flash_attn_forward since 2.6.3: window_size_left, window_size_right, softcap
                left, right = rec.kwargs.get("window_size_left", pair), rec.kwargs.get("window_size_right", arg(rec, 7))
                cap_at = 8
            softcap = softcap if softcap is not None else arg(rec, cap_at)
        elif name == "mha_fwd":  # aiter: (q, k, v, dropout_p, softmax_scale, is_causal, window_size_left, window_size_right, ...)
            causal = causal or bool(arg(rec, 5, False))
            left, right = rec.kwargs.get("window_size_left", arg(rec, 6)), rec.kwargs.get("window_size_right", arg(rec, 7))
        elif name == "_efficient_attention_forward":  # aten: (..., dropout_p, custom_mask_type at 9: 1, 2 causal)
            causal = causal or rec.kwargs.get("custom_mask_type", arg(rec, 9, 0)) in (1, 2)
    else:  # [batch, heads, seq, dim] (sdpa and its aten backends)
        b, h, sq, d = q if len(q) == 4 else (1, *q)
        hk, skv = (k[1], k[2]) if len(k) == 4 else (k[0], k[1])
        pos = {"scaled_dot_product_attention": 5, "_scaled_dot_product_flash_attention": 4,
               "_scaled_dot_product_efficient_attention": 6, "_scaled_dot_product_cudnn_attention": 6}.get(name)
        if pos is not None and len(rec.scalars) > pos and isinstance(rec.scalars[pos], bool):
            causal = causal or rec.scalars[pos]
    case = {"kernel": "attention", "batch": b, "heads": h, "kv_heads": hk, "seq_q": sq, "seq_kv": skv, "head_dim": d, "causal": causal}
    if dv != d:
        case["head_dim_v"] = dv
    if h % hk:
        return f"{rec.op}: {h} query heads not a multiple of {hk} KV heads ({rec.shapes_text()})"
    return _local_attention(rec, case, left, right, softcap)


# Attention backward ops: (layout, position of is_causal or of the mask type, window left, window
# right, softcap), None where the op has none. pytorch native_functions.yaml:
# _flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
# max_q, max_k, dropout_p, is_causal, rng_state, unused, *, scale, window_size_left,
# window_size_right); the SDPA flash and efficient backward wrappers take is_causal at 11 too,
# in [batch, heads, seq, dim]; _efficient_attention_backward (BMHK) its custom_mask_type at 14.
# FlashAttention's custom op _flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv,
# dropout_p, softmax_scale, causal, window_size_left, window_size_right, softcap, ...). aiter's
# mha_bwd (aiter/ops/mha.py: dout, q, k, v, out, softmax_lse, dropout_p, softmax_scale, is_causal,
# window_size_left, window_size_right, deterministic, ...), [batch, seq, heads, dim] like mha_fwd;
# aten's _scaled_dot_product_cudnn_attention_backward(grad_out, query, key, value, out,
# logsumexp, philox_seed, philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
# dropout_p, is_causal, *, scale), [batch, heads, seq, dim] like the other SDPA wrappers.
ATTENTION_BACKWARD = {
    "_flash_attention_backward": ("bshd", 11, 15, 16, None),
    "_scaled_dot_product_flash_attention_backward": ("bhsd", 11, None, None, None),
    "_scaled_dot_product_efficient_attention_backward": ("bhsd", 11, None, None, None),
    "_efficient_attention_backward": ("bshd", ("mask", 14), None, None, None),
    "_flash_attn_backward": ("bshd", 11, 12, 13, 14),
    "mha_bwd": ("bshd", 8, 9, 10, None),
    "_scaled_dot_product_cudnn_attention_backward": ("bhsd", 14, None, None, None),
}


def _attention_backward(rec: OpRecord, name: str, ts: list[tuple], dtype: str):
    """An attention backward kernel (dQ, dK, dV from dO): its query, key and value follow the
    output gradient in the arguments."""
    layout, at_causal, at_left, at_right, at_cap = ATTENTION_BACKWARD[name]
    q, k, v = ts[1], ts[2], ts[3]
    if layout == "bshd":
        (b, sq, h, d), (skv, hk) = q, (k[1], k[2])
    else:
        (b, h, sq, d), (hk, skv) = q, (k[1], k[2])
    if isinstance(at_causal, tuple):  # the memory-efficient kernel's mask type: 1, 2 causal
        causal = rec.kwargs.get("custom_mask_type", arg(rec, at_causal[1], 0)) in (1, 2)
    else:
        causal = bool(rec.kwargs.get("is_causal", rec.kwargs.get("causal", arg(rec, at_causal, False))))
    case = {"kernel": "attention", "batch": b, "heads": h, "kv_heads": hk, "seq_q": sq, "seq_kv": skv, "head_dim": d,
            "causal": causal, "phase": "bwd"}
    if v[-1] != d:
        case["head_dim_v"] = v[-1]
    if h % hk:
        return f"{rec.op}: {h} query heads not a multiple of {hk} KV heads ({rec.shapes_text()})"
    left = rec.kwargs.get("window_size_left", arg(rec, at_left) if at_left is not None else None)
    right = rec.kwargs.get("window_size_right", arg(rec, at_right) if at_right is not None else None)
    softcap = rec.kwargs.get("softcap", arg(rec, at_cap) if at_cap is not None else None)
    return _local_attention(rec, case, left, right, softcap)


def _local_attention(rec: OpRecord, case: dict, left, right, softcap):
    """FlashAttention's sliding window (window_size_left/right: keys before/after the query, -1
    or None unbounded) and logit soft cap (0: none) on an attention case, or why it has no model."""
    if isinstance(softcap, (int, float)) and not isinstance(softcap, bool) and softcap > 0:
        case["softcap"] = float(softcap)
    if isinstance(left, int) and not isinstance(left, bool) and 0 <= left < case["seq_kv"]:
        causal = case["causal"] = case["causal"] or right == 0  # no keys after the query: the causal local mask
        if not causal and case["seq_q"] > 1:
            return f"{rec.op}: a sliding window without a causal mask (keys on both sides) has no model ({rec.shapes_text()})"
        case["window"] = left + 1  # the query's own key and the `left` before it
    return case


def _custom(rec: OpRecord, name: str, ts: list[tuple], dtype: str):
    """perfmodel's own marker ops, recorded by the model builder (see `frontend.ops`)."""
    if name == "collective":
        kind, ranks, scale = rec.scalars[1], int(rec.scalars[2]), float(rec.scalars[3])
        nbytes = numel(ts[0]) * bytes_of(rec.dtypes[0] if rec.dtypes else None, dtype) * scale
        return {"kernel": kind, "bytes": float(nbytes), "ranks": ranks}
    if name == "moe":
        x = ts[0]
        experts, topk, inter = (int(v) for v in rec.scalars[1:4])
        tokens = numel(x[:-1])
        if topk > experts:  # fewer local experts than top-k (expert parallel): same rows per rank
            tokens, topk = tokens * topk // experts, experts
        case = {"kernel": "moe", "tokens": tokens, "experts": experts, "topk": topk, "hidden": x[-1], "inter": inter}
        if len(rec.scalars) > 5 and rec.scalars[4] not in (None, "auto"):  # experts stored narrower (MXFP4)
            case["weight_dtype"], case["group_size"] = str(rec.scalars[4]), int(rec.scalars[5])
        return case
    if name == "rotary_embedding":
        q, k = ts[0], ts[1]
        n = numel(q) + numel(k)
        return {"kernel": "elementwise", "n": n, "reads": 1.0, "writes": 1, "flops_per_element": 3}
    if name == "fused_add_rms_norm":
        return _fused_add_rmsnorm(ts[0])
    if name in ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul"):  # reads gate and up (2n), writes n
        return _gated(numel(ts[0]) // 2, name.removesuffix("_and_mul"))
    if name == "local_attention":  # q [B, H, Sq, D], k and v [B, Hkv, Skv, D]
        (b, h, sq, d), (hk, skv) = ts[0], ts[1][1:3]
        case = {"kernel": "attention", "batch": b, "heads": h, "kv_heads": hk, "seq_q": sq, "seq_kv": skv, "head_dim": d,
                "causal": bool(rec.scalars[3])}
        window = int(rec.scalars[4])
        return _local_attention(rec, case, window - 1 if window > 0 else -1, 0, float(rec.scalars[5]))
    if name == "reshape_and_cache":  # copies the new K and V into the cache
        n = numel(ts[0]) + numel(ts[1])
        return {"kernel": "elementwise", "n": n, "reads": 1.0, "writes": 1, "flops_per_element": 0}
    if name == "latent_attention":  # MLA absorbed: one latent KV head, V its first v_dim channels
        (b, h, sq, d), skv = ts[0], ts[1][2]
        return {"kernel": "attention", "batch": b, "heads": h, "kv_heads": 1, "seq_q": sq, "seq_kv": skv, "head_dim": d,
                "head_dim_v": int(rec.scalars[2]), "kv_shared": True, "causal": bool(rec.scalars[3])}
    if name == "paged_attention":
        q, kc = ts[0], ts[1]
        b, h, sq, d = q
        block = int(rec.scalars[3])
        case = {"kernel": "attention", "batch": b, "heads": h, "kv_heads": kc[1], "seq_q": sq, "seq_kv": kc[2], "head_dim": d,
                "causal": sq > 1, "paged": True, "block_size": block}
        window = int(arg(rec, 4, 0))
        return _local_attention(rec, case, window - 1 if window > 0 else -1, 0, float(arg(rec, 5, 0.0)))
    return f"{rec.op}: no kernel model ({rec.shapes_text()})"


def is_view(rec: OpRecord) -> bool:
    return rec.name in VIEW_OPS


def _rule_table() -> dict:
    """aten op name -> its mapping function; the first group that lists a name wins."""
    groups = [
        (VIEW_OPS, _no_kernel), (("mm", "_scaled_mm", "addmm"), _mm), (("bmm", "baddbmm"), _bmm),
        (("linear", "matmul"), _linear), (ATTENTION_OPS, _attention), (tuple(ATTENTION_BACKWARD), _attention_backward),
        (("native_layer_norm", "layer_norm"), _layer_norm),
        (("rms_norm", "_fused_rms_norm"), _rms_norm),
        (("_softmax", "softmax", "_safe_softmax", "_log_softmax", "log_softmax"), _softmax),
        (("_softmax_backward_data", "native_layer_norm_backward", "_fused_rms_norm_backward"), _row_backward),
        (("native_group_norm", "native_group_norm_backward"), _group_norm),
        (GATHER_OPS, _gather), (CAT_OPS, _copy_like), (REDUCE_OPS, _reduce), (("cumsum", "cumsum_", "cumprod"), _scan),
        (tuple(SCATTER_OPS), _scatter),
        *vision_ops.RULES,
        (tuple(RANDOM_OPS), _random),
        (("arange",), _arange), (("mse_loss_backward",), _mse_loss_backward),
    ]
    table: dict = {}
    for names, fn in groups:
        for n in names:
            table.setdefault(n, fn)
    return table


_RULES = _rule_table()
