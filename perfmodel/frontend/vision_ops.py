"""Op -> case rules of convolutional networks: 2-D convolutions and their backward, batch norm,
max and average pooling, upsampling (`frontend.opmap` dispatches to them by op name)."""

from __future__ import annotations

import math

from perfmodel.frontend.op_record import NO_KERNEL, OpRecord, arg, bytes_of, numel, pair

# Argument positions of the convolution ops: (input, weight, stride, padding, dilation, groups,
# transposed). aten::convolution(input, weight, bias, stride, padding, dilation, transposed,
# output_padding, groups); conv2d(input, weight, bias, stride, padding, dilation, groups);
# miopen/cudnn_convolution(input, weight, bias, padding, stride,
# dilation, groups, ...); convolution_backward(grad_output, input, weight, bias_sizes, stride,
# padding, dilation, transposed, output_padding, groups, output_mask).
CONV_ARGS = {
    "convolution": (0, 1, 3, 4, 5, 8, 6), "_convolution": (0, 1, 3, 4, 5, 8, 6), "conv2d": (0, 1, 3, 4, 5, 6, None),
    "miopen_convolution": (0, 1, 4, 3, 5, 6, None), "cudnn_convolution": (0, 1, 4, 3, 5, 6, None),
    "convolution_backward": (1, 2, 4, 5, 6, 9, 7),
}


def conv(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | str:
    """A 2-D convolution (or its backward: ``phase=bwd``, ``input_grad`` from output_mask[0],
    false for a first layer) at its arguments' positions (`CONV_ARGS`); transposed, dilated and
    grouped ones have no model."""
    at_x, at_w, at_stride, at_pad, at_dil, at_groups, at_transposed = CONV_ARGS[name]
    x, w = ts[at_x], ts[at_w]
    if len(x) != 4 or len(w) != 4:
        return f"{rec.op}: only 2-D convolutions have a model ({rec.shapes_text()})"
    if at_transposed is not None and arg(rec, at_transposed) is True:
        return f"{rec.op}: transposed convolution, no model ({rec.shapes_text()})"
    dilation = arg(rec, at_dil, [1, 1])
    if pair(dilation, 1) != (1, 1):
        return f"{rec.op}: dilated convolution (dilation {dilation}), no model ({rec.shapes_text()})"
    groups = arg(rec, at_groups, 1)
    if isinstance(groups, int) and groups > 1 or w[1] != x[1]:
        return f"{rec.op}: grouped/depthwise convolution, no model"
    stride, pad = pair(arg(rec, at_stride), 1)[0], pair(arg(rec, at_pad), 0)[0]
    case = {"kernel": "conv2d", "n": x[0], "c": x[1], "h": x[2], "w": x[3], "k": w[0], "r": w[2], "s": w[3],
            "stride": max(stride, 1), "pad": max(pad, 0)}
    if name == "convolution_backward":
        mask = arg(rec, 10, [True, True, False])
        if isinstance(mask, str):  # a chrome trace's Concrete Inputs: '[False, True, False]'
            mask = [t.strip() == "True" for t in mask.strip("[]").split(",")]
        case["phase"] = "bwd"
        case["input_grad"] = bool(mask[0]) if isinstance(mask, (list, tuple)) and mask else True
    xs = rec.strides[at_x] if len(rec.strides) > at_x else None
    if xs is not None and len(xs) == 4:
        case["layout"] = "nhwc" if channels_last(x, xs) else "nchw"
    return case


def max_pool(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | str:
    """max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) as a
    stream: read the input once, write the output and its int64 indices, a compare per window
    element; the backward (grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
    indices) reads the output gradient and the indices and writes the input's gradient."""
    bwd = name.endswith("_backward")
    x = ts[1] if bwd else ts[0]
    if len(x) != 4:
        return f"{rec.op}: only 2-D pooling has a model ({rec.shapes_text()})"
    kh, kw, _, n_in, n_out = pool_window(rec, x, 2 if bwd else 1, dilation=True)
    elem = bytes_of(None, dtype)
    if bwd:
        return {"kernel": "elementwise", "n": int(n_in), "reads": round(n_out * (elem + 8) / (n_in * elem), 4), "writes": 1,
                "flops_per_element": 1}
    return {"kernel": "elementwise", "n": int(n_out), "reads": round(n_in / n_out, 4), "writes": round(1 + 8 / elem, 4),
            "flops_per_element": kh * kw}


def pool_window(rec: OpRecord, x: tuple, at: int, dilation: bool) -> tuple[int, int, float, float, float]:
    """(kernel height, width, windows per input element, input elements, output elements) of a
    2-D pooling whose kernel_size, stride, padding[, dilation], ceil_mode arguments start at ``at``."""
    kh, kw = pair(arg(rec, at), 1)
    sh, sw = pair(arg(rec, at + 1), 0)
    sh, sw = sh or kh, sw or kw  # an empty stride is the kernel size
    ph, pw = pair(arg(rec, at + 2), 0)
    dh, dw = pair(arg(rec, at + 3), 1) if dilation else (1, 1)
    rnd = math.ceil if arg(rec, at + (4 if dilation else 3)) is True else math.floor
    out_h = rnd((x[2] + 2 * ph - dh * (kh - 1) - 1) / sh) + 1
    out_w = rnd((x[3] + 2 * pw - dw * (kw - 1) - 1) / sw) + 1
    return kh, kw, math.ceil(kh / sh) * math.ceil(kw / sw), numel(x), x[0] * x[1] * max(out_h, 1) * max(out_w, 1)


def avg_pool(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | str:
    """avg_pool2d(self, kernel_size, stride, padding, ceil_mode, ...) as a stream: read the input
    once, write the output, the window's adds and a scale per output; the backward (grad_output,
    self, kernel_size, ...) reads the output gradient and writes the input's, each input adding
    the windows that cover it."""
    bwd = name.endswith("_backward")
    x = ts[1] if bwd else ts[0]
    if len(x) != 4:
        return f"{rec.op}: only 2-D pooling has a model ({rec.shapes_text()})"
    kh, kw, cover, n_in, n_out = pool_window(rec, x, 2 if bwd else 1, dilation=False)
    if bwd:
        return {"kernel": "elementwise", "n": int(n_in), "reads": round(n_out / n_in, 4), "writes": 1, "flops_per_element": cover}
    return {"kernel": "elementwise", "n": int(n_out), "reads": round(n_in / n_out, 4), "writes": 1, "flops_per_element": kh * kw}


# an output element's (taps, FLOPs): nearest copies its source, bilinear weighs 4 taps (4 multiplies, 3 adds)
UPSAMPLE_TAPS = {"upsample_nearest2d": (1, 0), "_upsample_nearest_exact2d": (1, 0), "upsample_bilinear2d": (4, 7)}


def upsample(rec: OpRecord, name: str, ts: list[tuple], dtype: str) -> dict | str:
    """upsample_*2d(self, output_size, ...) as a stream: read the input elements its outputs tap
    once (the taps they share hit the cache; a smaller output taps fewer), write the output; the
    backward (grad_output, output_size, input_size, ...) reads the output gradient and writes
    the input's."""
    bwd = name.endswith("_backward")
    size = arg(rec, 2 if bwd else 1)
    x = ts[0]
    if bwd:
        if not (isinstance(size, (list, tuple)) and len(size) == 4):
            return f"{rec.op}: input size not recorded ({rec.shapes_text()})"
        n_in, n_out = numel(size), numel(x)
    else:
        out = rec.outputs[0] if rec.outputs and isinstance(rec.outputs[0], tuple) else None
        if out is None and isinstance(size, (list, tuple)) and len(size) == 2 and len(x) == 4:
            out = (x[0], x[1], *size)
        if out is None:
            return f"{rec.op}: output size not recorded ({rec.shapes_text()})"
        n_in, n_out = numel(x), numel(out)
    if min(n_in, n_out) == 0:
        return NO_KERNEL
    taps, flops = UPSAMPLE_TAPS[name.removesuffix("_backward")]
    if bwd:
        return {"kernel": "elementwise", "n": int(n_in), "reads": round(n_out / n_in, 4), "writes": 1,
                "flops_per_element": round(max(flops, 1) * n_out / n_in, 4)}
    return {"kernel": "elementwise", "n": int(n_out), "reads": round(min(n_in, taps * n_out) / n_out, 4), "writes": 1,
            "flops_per_element": flops}


def channels_last(shape, strides) -> bool:
    """Whether a 4-D tensor's strides are PyTorch's channels_last memory format (NHWC in memory:
    strides (H W C, 1, W C, C)); size-1 dimensions may carry any stride."""
    _, c, h, w = shape
    want = (h * w * c, 1, w * c, c)
    return all(size == 1 or got == exp for size, got, exp in zip(shape, strides, want, strict=True)) and c > 1


# BatchNorm ops: (position of the input, position of the training flag or a fixed value).
# native_functions.yaml: native_batch_norm / _native_batch_norm_legit / miopen_batch_norm /
# cudnn_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
# _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum,
# eps); native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
# save_invstd, train, eps, output_mask); miopen/cudnn_batch_norm_backward(input, grad_output, ...),
# training only.
BATCH_NORM = {
    "native_batch_norm": (0, 5, "fwd"), "_native_batch_norm_legit": (0, 5, "fwd"), "miopen_batch_norm": (0, 5, "fwd"),
    "cudnn_batch_norm": (0, 5, "fwd"), "_native_batch_norm_legit_no_training": (0, False, "fwd"),
    "native_batch_norm_backward": (1, 7, "bwd"), "miopen_batch_norm_backward": (0, True, "bwd"),
    "cudnn_batch_norm_backward": (0, True, "bwd"),
}


def batch_norm(rec: OpRecord, name: str, ts: list[tuple], dtype: str):
    """A BatchNorm op over its input's channels (dimension 1, N C ... logical order whatever the
    memory format); the training flag from its position (a bool), else its op's fixed value."""
    at, train, phase = BATCH_NORM[name]
    x = ts[at]
    if len(x) < 2:
        return f"{rec.op}: expected an N x C x ... input ({rec.shapes_text()})"
    if isinstance(train, int) and not isinstance(train, bool):
        flag = rec.kwargs.get("training", rec.kwargs.get("train", arg(rec, train)))
        train = flag if isinstance(flag, bool) else True  # the no-stats overload of _legit: training
    case = {"kernel": "batchnorm", "n": numel(x), "channels": x[1], "training": train, "phase": phase}
    if name.startswith(("native_batch_norm", "_native_batch_norm")):  # PyTorch's own kernels
        xs = rec.strides[at] if len(rec.strides) > at else None
        case["layout"] = batch_norm_layout(x, xs)
        if case["layout"] == "nchw":
            case["spatial"] = numel(x[2:])
    return case


def batch_norm_layout(shape, strides) -> str:
    """Which of PyTorch's batch-norm kernels an N x C x ... input runs: the channels-last ones
    (``nhwc``, device-filling grids) for a channels_last 4-D tensor, else the NCHW ones (one
    workgroup per channel), PyTorch's default contiguous format, also where the trace does not
    record strides."""
    if strides is not None and len(shape) == 4 and len(strides) == 4 and channels_last(shape, strides):
        return "nhwc"
    return "nchw"


# (op names, rule) for `opmap`'s table
RULES = [
    (tuple(CONV_ARGS), conv),
    (tuple(BATCH_NORM), batch_norm),
    (("max_pool2d_with_indices", "max_pool2d_with_indices_backward"), max_pool),
    (("avg_pool2d", "avg_pool2d_backward"), avg_pool),
    (tuple(UPSAMPLE_TAPS) + tuple(f"{u}_backward" for u in UPSAMPLE_TAPS), upsample),
]
