"""`layernorm` and `rmsnorm` over the last axis of a rows x cols tensor (forward, inference:
mean/rstd are not stored).

layernorm: y = (x - mean) * rstd * gamma + beta. Per element: sum (1), x - mean (1),
sum of squares (FMA, 2), * rstd (1), * gamma + beta (FMA, 2) = 7 VALU; 1 rsqrt per row (SFU).
rmsnorm: y = x * rstd * gamma. Per element: sum of squares (FMA, 2), * rstd (1), * gamma (1)
= 4 VALU; 1 rsqrt per row. layernorm reads gamma and beta (cols each), rmsnorm gamma only.
The VALU is timed by instructions (an FMA is one): layernorm 5 per element, rmsnorm 3.
``phase=bwd``: the input's gradient (and the parameters' as partial sums), see LAYERNORM_BWD.
"""

from __future__ import annotations

from perfmodel.models import streaming_common as sc
from perfmodel.models.registry import REQUIRED, Param, register
from perfmodel.work import Work

PARAMS = [Param("rows", int, REQUIRED), Param("cols", int, REQUIRED, help="normalised axis length"), *sc.TENSOR_PARAMS, sc.PHASE_PARAM, *sc.ROW_GEOMETRY_PARAMS]
LAYERNORM = sc.RowOps(param_rows=2, valu_fit=7, valu_multi=7, sfu_fit=(0, 1), sfu_multi=(0, 1), reductions=2, fmas=2)
RMSNORM = sc.RowOps(param_rows=1, valu_fit=4, valu_multi=4, sfu_fit=(0, 1), sfu_multi=(0, 1), reductions=1, fmas=1)
# Backward, from the output gradient dy and the input x with the forward's saved mean and rstd
# (per row, not counted): g = dy * gamma (1); xhat = (x - mean) * rstd (2; RMSNorm: x * rstd, 1);
# the row sums of g (1) and of g * xhat (FMA, 2; RMSNorm only the latter); dx = rstd * (g -
# mean(g) - xhat * mean(g xhat)) (sub 1, FMA 2, mul 1; RMSNorm: FMA 2, mul 1); the gamma (and
# beta) gradients as partial sums per workgroup: dy * xhat (FMA, 2) (and dy, 1). Their partials
# (cols per workgroup) are not counted: the fastest kernels (Apex, Triton's fused LayerNorm)
# reduce them in the row kernel, PyTorch in a separate column pass.
LAYERNORM_BWD = sc.RowOps(param_rows=1, valu_fit=13, valu_multi=13, sfu_fit=(0, 0), sfu_multi=(0, 0), reductions=2, fmas=3, inputs=2)
RMSNORM_BWD = sc.RowOps(param_rows=1, valu_fit=9, valu_multi=9, sfu_fit=(0, 0), sfu_multi=(0, 0), reductions=1, fmas=3, inputs=2)


@register("layernorm", params=PARAMS, doc="LayerNorm over the last axis (gamma and beta)", default_dtype="fp16")
def layernorm(p: dict, arch, dtype: str) -> Work:
    ops = LAYERNORM_BWD if p.get("phase", "fwd") == "bwd" else LAYERNORM
    return sc.row_kernel(arch, dtype, p["rows"], p["cols"], ops, p["reads"], p["writes"], p["block"], p["rows_per_workgroup"])


@register("rmsnorm", params=PARAMS, doc="RMSNorm over the last axis (gamma only)", default_dtype="fp16")
def rmsnorm(p: dict, arch, dtype: str) -> Work:
    ops = RMSNORM_BWD if p.get("phase", "fwd") == "bwd" else RMSNORM
    return sc.row_kernel(arch, dtype, p["rows"], p["cols"], ops, p["reads"], p["writes"], p["block"], p["rows_per_workgroup"])
