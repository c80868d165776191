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
"""

from __future__ import annotations

import numpy as np

from perfmodel.models import streaming_common as sc
from perfmodel.models.elementwise import elementwise
from perfmodel.models.reduction import reduction
from perfmodel.models.registry import REQUIRED, Param, register
from perfmodel.work import Work

# VALU FLOPs per element of each pass (an FMA counts 2), from the formulas above
STATS_FLOPS = 3.0  # sum (1) and sum of squares (FMA, 2)
TRANSFORM_FLOPS = 2.0  # one FMA with per-channel scale and shift
BWD_REDUCE_FLOPS = 4.0  # sum(dy) (1); x - mean (1); sum(dy * xhat) (FMA, 2)
BWD_ELEMT_FLOPS = 6.0  # xhat (FMA, 2); dy - mean(dy) (1); - xhat * k (FMA, 2); * invstd * gamma (1)


@register(
    "batchnorm",
    params=[
        Param("n", int, REQUIRED, help="elements of the input (N x C x H x W)"),
        Param("channels", int, REQUIRED, help="channels C (one mean and variance each)"),
        Param("training", bool, True, help="batch statistics (true) or the running ones (false: one elementwise pass)"),
        Param("phase", str, "fwd", choices=("fwd", "bwd")),
    ],
    doc="BatchNorm over the channels: statistics then transform (training), as separate streaming kernels",
    default_dtype="bf16",
)
def batchnorm(p: dict, arch, dtype: str) -> Work:
    n = np.asarray(p["n"], dtype=float)
    training, bwd = bool(p.get("training", True)), p.get("phase", "fwd") == "bwd"
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
    return w
