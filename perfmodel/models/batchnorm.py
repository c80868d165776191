"""`batchnorm`: BatchNorm over the channels of an N x C x ... tensor of n elements, as the
streaming kernels a library runs for it (PyTorch's ``batch_norm_collect_statistics`` then
``batch_norm_transform_input``; ``batch_norm_backward_reduce`` then ``batch_norm_backward_elemt``;
MIOpen's multi-pass batch norm), each timed on its own device-filling grid, one after another.

A channel's statistics span the whole batch and every position, so in training each pass is
its own kernel and the input is read once per pass: the statistics need all of a channel
before any output is normalised.

- fwd, training: statistics (read x; sum and sum of squares: 3 VALU FLOPs per element, one
  partial pair per workgroup), then the transform (read x, write y: (x - mean) * scale + shift
  as one FMA per element with per-channel scale and shift).
- fwd, inference (``training=false``, running statistics): the transform alone.
- bwd, training: the reduce (read dy and x; sum(dy) and sum(dy * (x - mean)): 4 FLOPs per
  element), then the elementwise pass (read dy and x, write dx: dx = (dy - mean(dy) -
  xhat * k) * invstd * gamma, 6 FLOPs).
- bwd, inference: dx = dy * invstd * gamma (read dy, write dx).
The per-channel parameters (2-4 C values) are negligible beside n and not counted.

``layout=nchw`` is PyTorch's own kernels for a contiguous N x C x H x W input (eager BatchNorm
on ROCm and CUDA; aten/src/ATen/native/cuda/Normalization.cuh, `batch_norm_stats_cuda_template`,
`batch_norm_elementwise`, `batch_norm_backward_cuda_template`): the statistics and the fused
training backward run one workgroup per channel, whose lanes walk the channel's N rows of H x W
elements with scalar loads, one round trip to memory per loop iteration (`_per_channel`); the
transform is a device-filling grid of scalar loads (`_transform`). ``layout=nhwc`` (the default)
is the device-filling kernels above: channels-last and library (MIOpen) batch norms.
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.models import streaming_common as sc
from perfmodel.models import traffic
from perfmodel.models.elementwise import elementwise
from perfmodel.models.reduction import reduction
from perfmodel.models.registry import REQUIRED, Param, register
from perfmodel.work import Launch, Work

# VALU FLOPs per element of each pass (an FMA counts 2), from the formulas above
STATS_FLOPS = 3.0  # sum (1) and sum of squares (FMA, 2)
TRANSFORM_FLOPS = 2.0  # one FMA with per-channel scale and shift
BWD_REDUCE_FLOPS = 4.0  # sum(dy) (1); x - mean (1); sum(dy * xhat) (FMA, 2)
BWD_ELEMT_FLOPS = 6.0  # xhat (FMA, 2); dy - mean(dy) (1); - xhat * k (FMA, 2); * invstd * gamma (1)

# PyTorch's NCHW kernels (aten/src/ATen/native/cuda/Normalization.cuh), per (vendor, MAX_BLOCK_SIZE):
# the thread sizes of getNumThreads (a workgroup is (tf, MAX_BLOCK_SIZE / tf) lanes, tf the
# smallest size that covers a row of H x W, else the largest) and UNRL, the elements each lane of
# the statistics and backward reduce loops loads before it uses them. Current source: ROCm 1024
# lanes and UNRL 4 ("load deserilize factor"), CUDA 512 and one; older ROCm source (pytorch @
# 045df43): 256 lanes, sizes from 16, one element per iteration.
NCHW_KERNELS = {
    ("AMD", 1024): ((64.0, 128.0, 256.0, 512.0, 1024.0), 4.0),
    ("AMD", 256): ((16.0, 32.0, 64.0, 128.0, 256.0), 1.0),
    ("NVIDIA", 512): ((32.0, 64.0, 128.0, 256.0, 512.0), 1.0),
}
CURRENT_BLOCK = {"AMD": 1024, "NVIDIA": 512}
# the kernels of those that run one workgroup per channel: a trace's launch of one gives `block`
PER_CHANNEL_KERNELS = ("batch_norm_collect_statistics_kernel", "batch_norm_backward_kernel")
TRANSFORM_ROWS = 256.0 * 1024.0  # `batch_norm_elementwise`: grid.y = min(256 x 1024 / C, ...)
MAX_GRID = 65535.0


@register(
    "batchnorm",
    params=[
        Param("n", int, REQUIRED, help="elements of the input (N x C x H x W)"),
        Param("channels", int, REQUIRED, help="channels C (one mean and variance each)"),
        Param("training", bool, True, help="batch statistics (true) or the running ones (false: one elementwise pass)"),
        Param("phase", str, "fwd", choices=("fwd", "bwd")),
        Param("layout", str, "nhwc", choices=("nhwc", "nchw"), help="nchw: PyTorch's kernels for a contiguous NCHW input "
              "(one workgroup per channel for the statistics and the backward); nhwc: device-filling kernels"),
        Param("spatial", int, 0, minimum=0, help="H x W elements of one image's channel (layout=nchw); 0: n / channels, one image"),
        Param("block", int, 0, minimum=0, help="layout=nchw: lanes of PyTorch's per-channel workgroups (its MAX_BLOCK_SIZE: 1024 on "
              "ROCm, 256 in older ROCm builds, 512 on CUDA); 0: the current one"),
    ],
    doc="BatchNorm over the channels: statistics then transform (training), as separate streaming kernels",
    default_dtype="bf16",
)
def batchnorm(p: dict, arch, dtype: str) -> Work:
    n, c = np.asarray(p["n"], dtype=float), np.asarray(p["channels"], dtype=float)
    per_channel = n / c
    bad = (per_channel < 1) | (per_channel != np.floor(per_channel))
    if np.any(bad):  # n = N x C x H x W: whole elements in every channel
        first = [float(np.broadcast_to(x, bad.shape)[bad].flat[0]) for x in (c, n)]
        raise InputError(f"expected a whole multiple of channels ({first[0]:.0f}; n = N x C x ...), got {first[1]:.0f}", key="n")
    training, bwd = bool(p.get("training", True)), p.get("phase", "fwd") == "bwd"
    spatial = np.asarray(p.get("spatial", 0), dtype=float)
    hw = _image_size(n, c, spatial)  # checked in either layout: a given H x W must fit n
    if p.get("layout", "nhwc") == "nchw":
        kernels = _nchw_kernels(arch, p.get("block", 0))
        return _nchw(n, c, hw, arch, dtype, training, bwd, kernels)
    elem = {"n": n, "reads": 2.0 if bwd and training else 1.0, "writes": 1.0,
            "flops_per_element": BWD_ELEMT_FLOPS if bwd and training else TRANSFORM_FLOPS, "sfu_per_element": 0.0}
    if not training:
        w = elementwise(elem, arch, dtype)
        w.notes.append("batchnorm: running statistics, one elementwise pass")
        return w
    arrays = 2.0 if bwd else 1.0  # the reduce pass reads dy and x backward, x forward
    w = reduction({"n": n * arrays}, arch, dtype)  # one pass over the arrays, partials per workgroup
    extra = (BWD_REDUCE_FLOPS if bwd else STATS_FLOPS) * n - n * arrays  # reduction counted one add per element
    w.add_flops("valu", sc.acc_dtype(arch, dtype), extra)
    w.serial.append(elementwise(elem, arch, dtype))
    w.notes.append(
        "batchnorm: " + ("reduce (dy, x) then elementwise (dx)" if bwd else "statistics then transform")
        + " kernels, each timed with its own grid, one after another; the second pass reads its inputs again"
    )
    _add_whole_channel(w, arch, dtype, per_channel, c, bwd)
    return w


# A channel held whole in one workgroup's shared memory: one kernel reads it once, reduces it and
# writes it normalised (forward: sum and sum of squares, then one FMA per element with the
# channel's scale and shift; backward: the two sums over dy and dy * xhat, then dx), one row of a
# row kernel per channel. VALU FLOPs per element as the two-kernel passes above count them.
WHOLE_CHANNEL = sc.RowOps(param_rows=0, valu_fit=STATS_FLOPS + TRANSFORM_FLOPS, valu_multi=STATS_FLOPS + TRANSFORM_FLOPS,
                          sfu_fit=(0, 1), sfu_multi=(0, 1), reductions=2, fmas=2)
WHOLE_CHANNEL_BWD = sc.RowOps(param_rows=0, valu_fit=BWD_REDUCE_FLOPS + BWD_ELEMT_FLOPS, valu_multi=BWD_REDUCE_FLOPS + BWD_ELEMT_FLOPS,
                              sfu_fit=(0, 0), sfu_multi=(0, 0), reductions=2, fmas=3, inputs=2)
WHOLE_CHANNEL_NOTE = ("batchnorm: predicted as one kernel, each channel held whole in one workgroup's shared memory and "
                      "read once (the persistent path of TileOPs PR #324), faster here than the two passes")


def _add_whole_channel(w: Work, arch, dtype: str, length, c, bwd: bool) -> None:
    """Where one channel's elements fit one workgroup's LDS (shared memory), a library can run the
    training pass as a single kernel that loads the channel once, keeps it on chip through its
    reductions and writes the result: TileOPs' BatchNorm forward and backward kernels take that
    "persistent path" for channels of up to 8192 elements, the channel copied into shared memory
    (tile-ai/TileOPs PR #324, "Performance design"; issue #1263: `block_l = L`, one tile), where
    the two-kernel passes read the input twice and pay two dispatches. It is the row kernel of
    the norms with one channel per row (`streaming_common.row_kernel`), an alternative the
    estimator takes where it is faster (`Work.alternatives`). ``length``: elements per channel."""
    length, c = np.broadcast_arrays(length, c)
    fits = length * dtypes.size(dtype) <= sc.lds_limit(arch)
    at = np.flatnonzero(fits)
    if not len(at):
        return
    ops = WHOLE_CHANNEL_BWD if bwd else WHOLE_CHANNEL
    sub = sc.row_kernel(arch, dtype, c.ravel()[at], length.ravel()[at], ops)
    w.alternatives.append((sub, at, WHOLE_CHANNEL_NOTE))


def _nchw_kernels(arch, block) -> tuple[np.ndarray, np.ndarray]:
    """(thread sizes, UNRL) of PyTorch's NCHW kernels for the workgroup size each case names: the
    sizes as an array with the five sizes along its first axis."""
    b = np.asarray(block, dtype=float)
    b = np.where(b > 0, b, CURRENT_BLOCK.get(arch.vendor, 1024))
    known = sorted(k for v, k in NCHW_KERNELS if v == arch.vendor)
    bad = ~np.isin(b, known)
    if np.any(bad):
        raise InputError(
            f"expected one of {', '.join(map(str, known))} for {arch.vendor} (PyTorch's MAX_BLOCK_SIZE), got {b[bad].flat[0]:.0f}",
            key="block",
        )
    sizes = np.zeros((5, *b.shape))
    unrl = np.ones(b.shape)
    for k in known:
        at = b == k
        table, u = NCHW_KERNELS[(arch.vendor, k)]
        sizes = np.where(at, np.reshape(table, (5,) + (1,) * b.ndim), sizes)
        unrl = np.where(at, u, unrl)
    return sizes, unrl


def _threads(sizes: np.ndarray, x):
    """`getNumThreads(x)`: the smallest thread size that covers x elements, else the largest."""
    x = np.asarray(x, dtype=float)
    return np.select([x <= sizes[i] for i in range(4)], [sizes[i] for i in range(4)], sizes[4])


def _image_size(n, c, spatial):
    """H x W of one image's channel: ``spatial``, or n / channels (one image) where 0; refused
    where it does not divide n / channels into whole images."""
    hw = np.where(spatial > 0, spatial, n / c)
    images = n / (c * hw)
    bad = (images != np.floor(images)) | (images < 1)
    if np.any(bad):
        raise InputError(
            f"expected H x W elements that divide n / channels into whole images, got {np.broadcast_to(spatial, bad.shape)[bad].flat[0]:.0f}"
            f" for n / channels = {np.broadcast_to(n / c, bad.shape)[bad].flat[0]:g}",
            key="spatial",
        )
    return hw


def _nchw(n, c, hw, arch, dtype: str, training: bool, bwd: bool, kernels: tuple) -> Work:
    """PyTorch's NCHW batch norm: the per-channel kernel (statistics forward, fused reduce and
    elementwise backward) where training, then (forward) the transform; inference: the transform
    (forward) or its elementwise backward, dx = dy x invstd x gamma. ``hw``: one image's channel."""
    images = n / (c * hw)
    s = dtypes.size(dtype)
    if training:
        w = _per_channel(arch, dtype, c, images, hw, s, bwd, kernels)
        if not bwd:
            w.serial.append(_transform(arch, dtype, c, images, hw, s, TRANSFORM_FLOPS, kernels[0]))
    else:
        w = _transform(arch, dtype, c, images, hw, s, 2.0 if bwd else TRANSFORM_FLOPS, kernels[0])
    w.notes.append(
        "batchnorm layout=nchw: PyTorch's kernels"
        + (" (one workgroup per channel, one round trip to memory per loop iteration)" if training else "")
    )
    return w


def _per_channel(arch, dtype: str, c, images, hw, s: float, bwd: bool, kernels: tuple) -> Work:
    """One workgroup per channel (`batch_norm_collect_statistics_kernel`, `batch_norm_backward_kernel`):
    lanes (tf, MAX / tf) walk the channel's images by MAX / tf and each image's H x W elements by
    tf x UNRL in the reduce loop (and by tf in the backward's elementwise loop: dy and x loaded,
    dx stored). Each iteration waits for its own loads, so the loop lasts its iterations x one
    memory round trip: the Little's-law cap of the estimator, with the bytes the workgroup moves
    per iteration in flight."""
    sizes, u = kernels
    lanes = sizes[4]
    tf = _threads(sizes, hw)
    rows = np.ceil(images / (lanes / tf))  # images each lane row walks
    iters = rows * np.ceil(hw / (tf * u))  # reduce loop
    if bwd:
        iters = iters + rows * np.ceil(hw / tf)  # elementwise loop
    n = c * images * hw
    w = Work()
    read, write = (4.0 * n * s, n * s) if bwd else (n * s, 0.0)
    traffic.add_stream(w, arch, read, write, read + write)
    a = sc.acc_dtype(arch, dtype)
    w.add_flops("valu", a, (BWD_REDUCE_FLOPS if bwd else STATS_FLOPS) * n)
    if bwd:
        w.add_flops("valu", dtypes.valu_dtype(arch, dtype), BWD_ELEMT_FLOPS * n)
    waves = lanes / arch.wave_size
    flight = (read + write) / c / iters / waves  # bytes one wave moves per loop iteration
    # its block reduction's `__shared__ int shared_n[2 * 2 * C10_WARP_SIZE + C10_WARP_SIZE]`
    lds = 5.0 * 4.0 * arch.wave_size
    w.launch = Launch(grid=c, workgroup_size=lanes, lds_bytes=lds, bytes_in_flight_per_wave=flight)
    return w


def _transform(arch, dtype: str, c, images, hw, s: float, flops: float, sizes: np.ndarray) -> Work:
    """`batch_norm_transform_input_kernel` (and the inference backward's elementwise pass): a
    (C, min(256 x 1024 / C, images / tb)) grid of (tf, tb) lanes, tf = max(getNumThreads(H W / 4),
    min(getNumThreads(H W), 64)), tb = max(64 / tf, 1); each lane loads one element, writes one,
    then moves on (one element of each in flight)."""
    tf = np.maximum(_threads(sizes, np.floor(hw / 4.0)), np.minimum(_threads(sizes, hw), 64.0))
    tb = np.maximum(np.floor(64.0 / tf), 1.0)
    gy = np.clip(np.minimum(np.floor(TRANSFORM_ROWS / c), np.ceil(images / tb)), 1.0, MAX_GRID)
    n = c * images * hw
    w = Work()
    traffic.add_stream(w, arch, n * s, n * s, 2.0 * n * s)
    w.add_flops("valu", dtypes.valu_dtype(arch, dtype), flops * n)
    busy = hw / (tf * np.ceil(hw / tf))  # lanes with an element in each row pass
    w.launch = Launch(grid=c * gy, workgroup_size=tf * tb, bytes_in_flight_per_wave=2.0 * s * arch.wave_size * busy)
    return w
