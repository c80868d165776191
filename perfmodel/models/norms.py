"""`layernorm` and `rmsnorm` over the last axis of a rows x cols tensor (forward, inference:
mean/rstd are not stored).

layernorm: y = (x - mean) * rstd * gamma + beta. Per element: sum (1), x - mean (1),
sum of squares (FMA, 2), * rstd (1), * gamma + beta (FMA, 2) = 7 VALU; 1 rsqrt per row (SFU).
rmsnorm: y = x * rstd * gamma. Per element: sum of squares (FMA, 2), * rstd (1), * gamma (1)
= 4 VALU; 1 rsqrt per row. layernorm reads gamma and beta (cols each), rmsnorm gamma only.
The VALU is timed by instructions (an FMA is one): layernorm 5 per element, rmsnorm 3.
``phase=bwd``: the input's gradient (and the parameters' as partial sums, then a column
reduction kernel), see LAYERNORM_BWD and `_add_parameter_gradients`.
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.models import streaming_common as sc
from perfmodel.models import traffic
from perfmodel.models.elementwise import elementwise
from perfmodel.models.registry import REQUIRED, Param, register
from perfmodel.work import Work

PARAMS = [Param("rows", int, REQUIRED), Param("cols", int, REQUIRED, help="normalised axis length"), *sc.TENSOR_PARAMS, sc.PHASE_PARAM, *sc.ROW_GEOMETRY_PARAMS]
LAYERNORM = sc.RowOps(param_rows=2, valu_fit=7, valu_multi=7, sfu_fit=(0, 1), sfu_multi=(0, 1), reductions=2, fmas=2)
RMSNORM = sc.RowOps(param_rows=1, valu_fit=4, valu_multi=4, sfu_fit=(0, 1), sfu_multi=(0, 1), reductions=1, fmas=1)
# Backward, from the output gradient dy and the input x with the forward's saved mean and rstd
# (per row, not counted): g = dy * gamma (1); xhat = (x - mean) * rstd (2; RMSNorm: x * rstd, 1);
# the row sums of g (1) and of g * xhat (FMA, 2; RMSNorm only the latter); dx = rstd * (g -
# mean(g) - xhat * mean(g xhat)) (sub 1, FMA 2, mul 1; RMSNorm: FMA 2, mul 1); the gamma (and
# beta) gradients as partial sums per program: dy * xhat (FMA, 2) (and dy, 1), written as fp32
# rows and summed by a second kernel (`_add_parameter_gradients`).
LAYERNORM_BWD = sc.RowOps(param_rows=1, valu_fit=13, valu_multi=13, sfu_fit=(0, 0), sfu_multi=(0, 0), reductions=2, fmas=3, inputs=2)
RMSNORM_BWD = sc.RowOps(param_rows=1, valu_fit=9, valu_multi=9, sfu_fit=(0, 0), sfu_multi=(0, 0), reductions=1, fmas=3, inputs=2)


@register("layernorm", params=PARAMS, doc="LayerNorm over the last axis (gamma and beta)", default_dtype="fp16")
def layernorm(p: dict, arch, dtype: str) -> Work:
    bwd = p.get("phase", "fwd") == "bwd"
    w = sc.row_kernel(arch, dtype, p["rows"], p["cols"], LAYERNORM_BWD if bwd else LAYERNORM, p["reads"], p["writes"], p["block"], p["rows_per_workgroup"])
    if bwd:
        _add_parameter_gradients(w, arch, dtype, p["rows"], p["cols"], 2.0)
    return w


@register("rmsnorm", params=PARAMS, doc="RMSNorm over the last axis (gamma only)", default_dtype="fp16")
def rmsnorm(p: dict, arch, dtype: str) -> Work:
    bwd = p.get("phase", "fwd") == "bwd"
    w = sc.row_kernel(arch, dtype, p["rows"], p["cols"], RMSNORM_BWD if bwd else RMSNORM, p["reads"], p["writes"], p["block"], p["rows_per_workgroup"])
    if bwd:
        _add_parameter_gradients(w, arch, dtype, p["rows"], p["cols"], 1.0)
    return w


def _add_parameter_gradients(w: Work, arch, dtype: str, rows, cols, params: float) -> None:
    """The parameters' gradients of a backward pass: the row kernel leaves them as fp32 partial
    sums, one row of ``cols`` per program and parameter (Liger's `rms_norm_backward`: a grid of one
    program per SM, `_dW = torch.empty((sm_count, n_cols), dtype=torch.float32)`, each summing its
    rows), and a column reduction kernel adds the partials up (`_dW.sum(dim=0)`; Triton's fused
    LayerNorm tutorial has its `_layer_norm_bwd_dwdb` kernel, PyTorch its gamma/beta kernel).
    ``params``: 2 for LayerNorm (gamma and beta), 1 for RMSNorm. The reduction is booked as one
    kernel after the row kernel (`Work.serial`, its own launch), timed as the `elementwise` pass
    over the partials that writes one fp32 result per column; a cast of the result to the
    parameter's type, where a library adds one, is not counted."""
    rows, cols = np.asarray(rows, dtype=float), np.asarray(cols, dtype=float)
    programs = np.minimum(rows, float(arch.cus))
    partials = params * programs * cols
    traffic.add_stream(w, arch, write=partials * dtypes.size("fp32"))
    # the column sum: a streaming pass over the partials (one add each), one result per column
    col_sum = {"n": partials, "reads": 1.0, "writes": 1.0 / programs, "flops_per_element": 1.0, "sfu_per_element": 0.0}
    w.serial.append(elementwise(col_sum, arch, "fp32"))
    w.notes.append("backward: the parameters' fp32 partial gradients (one row per CU) summed by a second kernel")
