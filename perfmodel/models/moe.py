"""Mixture-of-experts layer (router, up or up+gate, activation, down, combine).

- router GEMM tokens x experts x hidden, softmax over experts (1 exp on sfu, 4 valu per logit);
  the router stays in the input dtype, unscaled (``scaling`` applies to the expert GEMMs);
  ``router=false`` leaves it out (fused-MoE benchmarks time the expert kernels alone);
- up: grouped GEMM over the touched experts, K = hidden. ``gated=true`` (default): up and gate
  fused, N = 2*inter, the epilogue writes act(gate)*up (tokens*topk x inter); ``gated=false``:
  a plain up projection, N = inter, the epilogue writes act(up). The activation's per-element
  work is in `activations.PER_ELEMENT`; the gating multiply adds one VALU FLOP per element.
  The activation needs each output's whole K sum, so this kernel never splits K, however few
  tiles a decode-sized batch gives it;
- down: grouped GEMM N = hidden, K = inter;
- combine: the topk outputs of a token summed with their routing weights (an FMA per element).

``out_dtype`` is the type of what the expert GEMMs write (the activation and the expert
outputs, which the combine reads back); ``scaling`` adds the quantization scales of both expert
GEMMs exactly as for `gemm` (`gemm_tiling.add_scaling`); ``weight_dtype``/``group_size`` store the
expert weights packed and dequantize them in the main loop, as for `gemm` (the router stays in
the input dtype).

Routing is assumed uniform and independent: each token picks topk of the experts, so the
expected number of experts touched is E_t = experts * (1 - (1 - topk/experts)^tokens), each
receiving tokens*topk/E_t rows on average; every touched expert's weights are read.
"""

from __future__ import annotations

import numpy as np

from perfmodel.errors import InputError
from perfmodel.models import activations, fewer_rows, gemm_tiling, tiles, traffic
from perfmodel.models.registry import Param, floats, register
from perfmodel.work import Work


def touched_experts(tokens, experts, topk):
    """Expected number of distinct experts chosen by ``tokens`` tokens under uniform routing."""
    return experts * (1.0 - (1.0 - topk / experts) ** tokens)


def rows_per_expert(tokens, experts, topk):
    """Expected rows (token-expert pairs) each touched expert receives under uniform routing."""
    return tokens * topk / touched_experts(tokens, experts, topk)


# An internal parameter of the padded alternative (`fewer_rows.add_ceiling`): the expert GEMMs run
# with at least this many rows per expert (a tile's height), the extra rows masked.
PADDED_ROWS_KEY = "_padded_rows_per_expert"


@register(
    "moe",
    params=[
        Param("tokens"),
        Param("experts"),
        Param("topk", help="experts per token"),
        Param("hidden", help="model width"),
        Param("inter", help="expert intermediate width"),
        Param("gated", bool, True, help="true: up and gate fused (N = 2*inter, act(gate)*up); false: a plain up projection (N = inter)"),
        Param("activation", str, "silu", choices=activations.GEMM_ACTIVATIONS, help="activation of the experts (gelu: erf form; gelu_tanh: tanh approximation)"),
        Param("out_dtype", str, "auto", choices=("auto", *gemm_tiling.OUT_DTYPES), help="type the expert GEMMs write (auto: bf16 for fp8/fp6/fp4, int32 for int8, else the input type)"),
        Param("scaling", str, "none", choices=("none", "tensor", "block", "mx"), help="quantization scales of the expert GEMMs, as for gemm"),
        *gemm_tiling.WEIGHT_ONLY_PARAMS,
        Param("router", bool, True, help="include the router GEMM and its softmax (false: the expert kernels alone, as fused-MoE benchmarks time them)"),
    ],
    doc="MoE layer: router GEMM, experts (grouped up[+gate] GEMM with fused activation, down GEMM), combine",
    default_dtype="bf16",
)
def moe(p: dict, arch, dtype: str) -> Work:
    work = _moe(p, arch, dtype)
    t, e, k = floats(p, "tokens", "experts", "topk")
    rows = rows_per_expert(t, e, k)
    fewer_rows.add_floor(work, p, rows, lambda sub: _moe(sub, arch, dtype), _fewer_tokens)
    fewer_rows.add_ceiling(work, p, rows, lambda sub: _moe(sub, arch, dtype), fewer_rows.setter(PADDED_ROWS_KEY))
    return work


def _fewer_tokens(sub: dict, rows: np.ndarray) -> None:
    """The most tokens whose experts get at most ``rows`` rows each: a sub-problem of the layer
    (fewer tokens), found by bisection (rows per expert grow with the tokens)."""
    t, e, k, rows = np.broadcast_arrays(*(np.asarray(sub[x], dtype=float) for x in ("tokens", "experts", "topk")), rows)

    def fits(tokens):
        return rows_per_expert(tokens, e, k) <= rows

    lo, hi = np.ones_like(t), t.copy()
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        ok = fits(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    whole = np.floor(hi)  # hi is just above the last token count that fits: whole tokens
    sub["tokens"] = np.maximum(np.where(fits(whole), whole, whole - 1.0), 1.0)


def _moe(p: dict, arch, dtype: str) -> Work:
    t, e, k, hd, it = floats(p, "tokens", "experts", "topk", "hidden", "inter")
    if np.any(k > e):
        raise InputError("expected topk <= experts", key="topk")
    gated = bool(p.get("gated", True))
    act = p.get("activation", "silu")
    out_dtype = p.get("out_dtype", "auto")
    scaling = p.get("scaling", "none")
    out_elem = gemm_tiling.OUT_DTYPES[out_dtype] if out_dtype != "auto" else tiles.out_size(dtype)
    et = touched_experts(t, e, k)
    rows = t * k
    m_e = rows / et
    if PADDED_ROWS_KEY in p:  # the padded alternative (`moe`): the expert GEMMs run a tile tall
        m_e = np.maximum(m_e, np.asarray(p[PADDED_ROWS_KEY], dtype=float))
    n_up = (2.0 if gated else 1.0) * it
    wo = gemm_tiling.weight_only_args(p)
    work = Work()  # the up (+gate) kernel with its fused activation; the others run after it
    _, work.launch = gemm_tiling.gemm_work(
        arch, dtype, m_e, n_up, hd, et, out_scale=0.5 if gated else 1.0, out_dtype=out_dtype, scaling=scaling, work=work,
        may_split_k=False, **wo  # the activation needs the whole K sum (see `gemm_tiling.gemm_work`)
    )
    pipe = next(iter(work.flops)).split(":")[0]
    gemm_tiling.add_scaling(work, arch, pipe, m_e, n_up, hd, et, scaling)
    valu, sfu = activations.cost(act, gated=gated)
    if sfu:
        work.add_flops("sfu", "fp32", sfu * rows * it)
    work.add_flops("valu", "fp32", valu * rows * it)
    down = Work()  # the down GEMM, the weighted combine in its epilogue
    _, down.launch = gemm_tiling.gemm_work(
        arch, dtype, m_e, hd, it, et, out_dtype=out_dtype, scaling=scaling, work=down, **wo
    )
    gemm_tiling.add_scaling(down, arch, pipe, m_e, hd, it, et, scaling)
    down.add_flops("valu", "fp32", 2.0 * rows * hd)
    traffic.add_stream(down, arch, read=rows * hd * out_elem, write=t * hd * out_elem)
    work.serial.append(down)
    if bool(p.get("router", True)):
        router = Work()
        _, router.launch = gemm_tiling.gemm_work(arch, dtype, t, e, hd, 1.0, work=router, linear_layer=True)
        router.add_flops("sfu", "fp32", t * e)
        router.add_flops("valu", "fp32", 4.0 * t * e)
        work.serial.insert(0, router)
    glu = f"{act}(gate)*up" if gated else f"{act}(up)"
    work.notes.append(
        f"moe: {'router, ' if len(work.serial) > 1 else ''}{'up+gate' if gated else 'up'} ({glu} fused) and down"
        " (+ combine) kernels, each timed with its own launch geometry, one after another"
    )
    work.notes.append("moe: uniform routing assumed (expected touched experts); top-k selection not counted")
    return work
