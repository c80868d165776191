"""`softmax`: numerically stable softmax along the last axis of a rows x cols tensor.

One pass when a row fits the workgroup's on-chip budget (row kept in registers/LDS): per
element max (1), x - max (1), exp (SFU), sum (1), x * (1/sum) (1): 4 VALU + 1 SFU, plus one
reciprocal per row. Otherwise an online softmax: pass 1 reads the row for the running max and
sum (max, sub, exp, add), pass 2 re-reads it (sub, exp, mul): 5 VALU + 2 SFU per element.
``phase=bwd``: the gradient from the output and its gradient (two tensors read, one written).
"""

from __future__ import annotations

from perfmodel.models import streaming_common as sc
from perfmodel.models.registry import REQUIRED, Param, register
from perfmodel.work import Work

SOFTMAX = sc.RowOps(param_rows=0, valu_fit=4, valu_multi=5, sfu_fit=(1, 1), sfu_multi=(2, 1), reductions=2)
# backward (PyTorch's _softmax_backward_data): dx = y * (dy - sum(dy * y)) from the output y and
# its gradient dy: the row's dot product (FMA, 2), dy - sum (1), * y (1); no transcendental
SOFTMAX_BWD = sc.RowOps(param_rows=0, valu_fit=4, valu_multi=4, sfu_fit=(0, 0), sfu_multi=(0, 0), reductions=1, fmas=1, inputs=2)


@register(
    "softmax",
    params=[Param("rows", int, REQUIRED), Param("cols", int, REQUIRED, help="softmax axis length"), *sc.TENSOR_PARAMS, sc.PHASE_PARAM, *sc.ROW_GEOMETRY_PARAMS],
    doc="row-wise softmax over the last axis (one pass if the row fits on chip)",
    default_dtype="fp16",
)
def softmax(p: dict, arch, dtype: str) -> Work:
    ops = SOFTMAX_BWD if p.get("phase", "fwd") == "bwd" else SOFTMAX
    return sc.row_kernel(arch, dtype, p["rows"], p["cols"], ops, p["reads"], p["writes"], p["block"], p["rows_per_workgroup"])
