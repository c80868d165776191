"""Mixture-of-experts layer with gated SiLU experts (router, up+gate, SiLU*up, down, combine).

- router GEMM tokens x experts x hidden, softmax over experts (1 exp on sfu, 4 valu per logit);
- up+gate: grouped GEMM over the touched experts, N = 2*inter, K = hidden, with SiLU(gate)*up
  fused in its epilogue (writes tokens*topk x inter): 2 sfu (exp, reciprocal) and 3 valu FLOPs
  per element;
- down: grouped GEMM N = hidden, K = inter;
- combine: the topk outputs of a token summed with their routing weights (an FMA per element).

Routing is assumed uniform and independent: each token picks topk of the experts, so the
expected number of experts touched is E_t = experts * (1 - (1 - topk/experts)^tokens), each
receiving tokens*topk/E_t rows on average; every touched expert's weights are read.
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.models import gemm_tiling, tiles, traffic
from perfmodel.models.registry import Param, floats, register
from perfmodel.work import Work


def touched_experts(tokens, experts, topk):
    """Expected number of distinct experts chosen by ``tokens`` tokens under uniform routing."""
    return experts * (1.0 - (1.0 - topk / experts) ** tokens)


@register(
    "moe",
    params=[
        Param("tokens"),
        Param("experts"),
        Param("topk", help="experts per token"),
        Param("hidden", help="model width"),
        Param("inter", help="expert intermediate width"),
    ],
    doc="MoE layer: router GEMM, gated-SiLU experts (grouped up+gate and down GEMMs), combine",
    default_dtype="bf16",
)
def moe(p: dict, arch, dtype: str) -> Work:
    t, e, k, hd, it = floats(p, "tokens", "experts", "topk", "hidden", "inter")
    if np.any(k > e):
        raise InputError("expected topk <= experts", key="topk")
    elem = dtypes.size(dtype)
    work = Work()
    et = touched_experts(t, e, k)
    rows = t * k
    m_e = rows / et
    _, l_router = gemm_tiling.gemm_work(arch, dtype, t, e, hd, 1.0, work=work)
    work.add_flops("sfu", "fp32", t * e)
    work.add_flops("valu", "fp32", 4.0 * t * e)
    _, l_up = gemm_tiling.gemm_work(arch, dtype, m_e, 2.0 * it, hd, et, out_scale=0.5, work=work)
    work.add_flops("sfu", "fp32", 2.0 * rows * it)
    work.add_flops("valu", "fp32", 3.0 * rows * it)
    _, l_down = gemm_tiling.gemm_work(arch, dtype, m_e, hd, it, et, work=work)
    work.add_flops("valu", "fp32", 2.0 * rows * hd)
    traffic.add_stream(work, arch, read=rows * hd * elem, write=t * hd * elem)
    work.launch = tiles.combine_launch([l_router, l_up, l_down])
    work.notes.append(
        "moe: router, up+gate (SiLU fused), down and combine kernels summed; launch = the largest grid of them"
    )
    work.notes.append("moe: uniform routing assumed (expected touched experts); top-k selection not counted")
    return work
