"""`layernorm` and `rmsnorm` over the last axis of a rows x cols tensor (forward, inference:
mean/rstd are not stored).

layernorm: y = (x - mean) * rstd * gamma + beta. Per element: sum (1), x - mean (1),
sum of squares (FMA, 2), * rstd (1), * gamma + beta (FMA, 2) = 7 VALU; 1 rsqrt per row (SFU).
rmsnorm: y = x * rstd * gamma. Per element: sum of squares (FMA, 2), * rstd (1), * gamma (1)
= 4 VALU; 1 rsqrt per row. layernorm reads gamma and beta (cols each), rmsnorm gamma only.
The VALU is timed by instructions (an FMA is one): layernorm 5 per element, rmsnorm 3.
"""

from __future__ import annotations

from perfmodel.models import streaming_common as sc
from perfmodel.models.registry import REQUIRED, Param, register
from perfmodel.work import Work

PARAMS = [Param("rows", int, REQUIRED), Param("cols", int, REQUIRED, help="normalised axis length"), *sc.TENSOR_PARAMS]
LAYERNORM = sc.RowOps(param_rows=2, valu_fit=7, valu_multi=7, sfu_fit=(0, 1), sfu_multi=(0, 1), reductions=2, fmas=2)
RMSNORM = sc.RowOps(param_rows=1, valu_fit=4, valu_multi=4, sfu_fit=(0, 1), sfu_multi=(0, 1), reductions=1, fmas=1)


@register("layernorm", params=PARAMS, doc="LayerNorm over the last axis (gamma and beta)", default_dtype="fp16")
def layernorm(p: dict, arch, dtype: str) -> Work:
    return sc.row_kernel(arch, dtype, p["rows"], p["cols"], LAYERNORM, p["reads"], p["writes"])


@register("rmsnorm", params=PARAMS, doc="RMSNorm over the last axis (gamma only)", default_dtype="fp16")
def rmsnorm(p: dict, arch, dtype: str) -> Work:
    return sc.row_kernel(arch, dtype, p["rows"], p["cols"], RMSNORM, p["reads"], p["writes"])
