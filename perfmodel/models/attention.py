"""Flash attention (FA2-style, fused softmax), forward and backward, with GQA and decode.

Scores: n = Sq*Skv, or with a causal mask (bottom-right aligned, as FlashAttention-2 does for
Sq != Skv) n = Sq*Skv - Sq(Sq-1)/2 when Sq <= Skv and Skv(Skv+1)/2 when Sq > Skv.

- fwd FLOPs: 4*B*H*n*D on the matrix pipe (QK^T and PV, 2*D each per score); one exp per
  score on sfu:fp32; online softmax on valu:fp32 (4 per score: max, scale-and-subtract FMA,
  sum; plus D per query row per KV block to rescale O, and D per row for the final 1/l).
- bwd FLOPs: 10*B*H*n*D (recomputed QK^T, dP = dO V^T, dV += P^T dO, dQ += dS K, dK += dS^T Q:
  2.5x the forward products), one exp per score (P recomputed from the LSE), 4 valu per score
  (P, dS = P*(dP - Delta)), and 2*B*H*Sq*D for Delta = rowsum(dO*O).
- Bytes come from the shared tile traffic model (`tiles.panel_traffic`): fwd tiles are blocks of
  query rows that stream all the K/V they need (K/V re-read once per query block from L2/MALL);
  GQA packs the H/kv_heads query heads of one KV head into the rows of one problem, so they share
  its K/V; decode (Sq=1) splits the KV sequence across workgroups (flash-decoding) so that the
  KV cache streams once over the whole GPU. bwd tiles are blocks of keys (FA2 bwd) that stream
  Q, dO, LSE and Delta, accumulate dQ in fp32 with atomics in L2, and write dK, dV once.
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.models import tiles
from perfmodel.models.registry import Param, register
from perfmodel.work import Launch, Work

Q_BLOCKS = (128, 64, 32, 16)  # fwd: query rows per workgroup; bwd: keys per workgroup
INNER_BLOCKS = (128, 64, 32, 16)  # the block streamed through LDS per step


def _resolve(p: dict, key: str, fallback):
    v = p.get(key)
    if v is None:
        return fallback
    v = np.asarray(v)
    if v.dtype == object:
        return np.where(np.equal(v, None), fallback, v).astype(float)
    return v.astype(float)


def causal_scores(sq, skv):
    """Score elements under a bottom-right-aligned causal mask."""
    return np.where(sq <= skv, sq * skv - sq * (sq - 1.0) / 2.0, skv * (skv + 1.0) / 2.0)


def _candidates(arch, d_max: float, elem: float, phase: str):
    """Legal (outer block, inner block, lanes): LDS holds the streamed block(s), the register
    budget holds the accumulators (fwd: O and S for the query block; bwd: dK, dV and S/dP)."""
    lds, budget = tiles.lds_limit(arch), tiles.acc_vgpr_budget(arch)
    out = []
    for bo in Q_BLOCKS:
        lanes = 256 if bo >= 64 else 64
        if lanes > tiles.max_lanes(arch) or lanes % arch.wave_size:
            continue
        for bi in INNER_BLOCKS:
            if phase == "fwd":  # K and V blocks in LDS; O (bo x D) and S (bo x bi) in registers
                lds_b, acc_b = 2 * bi * d_max * elem, (bo * d_max + bo * bi) * 4
            else:  # Q and dO blocks in LDS; dK, dV (2 x bo x D) and S, dP (2 x bo x bi) in registers
                lds_b, acc_b = 2 * bi * d_max * elem, (2 * bo * d_max + 2 * bo * bi) * 4
            if lds_b <= lds and acc_b / (4.0 * lanes) <= budget:
                out.append((bo, bi, lanes))
                break  # the deepest inner block that fits
    if not out:
        out.append((Q_BLOCKS[-1], INNER_BLOCKS[-1], 64))
    return out


@register(
    "attention",
    params=[
        Param("batch"),
        Param("heads", help="query heads"),
        Param("kv_heads", default=None, help="K/V heads (GQA/MQA); default: heads"),
        Param("seq_q", help="query length (1 = decode)"),
        Param("seq_kv", default=None, help="key/value length; default: seq_q"),
        Param("head_dim"),
        Param("causal", bool, False),
        Param("phase", str, "fwd", choices=("fwd", "bwd")),
        Param("paged", bool, False, help="K/V in a paged cache read through a block table (vLLM)"),
        Param("block_size", default=16, help="tokens per KV-cache block (paged)"),
    ],
    doc="Flash attention fwd/bwd (FA2 accounting), GQA, causal, decode (seq_q=1)",
    default_dtype="bf16",
)
def attention(p: dict, arch, dtype: str) -> Work:
    work = Work()
    b = np.asarray(p["batch"], dtype=float)
    h = np.asarray(p["heads"], dtype=float)
    sq = np.asarray(p["seq_q"], dtype=float)
    d = np.asarray(p["head_dim"], dtype=float)
    hk = _resolve(p, "kv_heads", h)
    skv = _resolve(p, "seq_kv", sq)
    shape = np.broadcast(b, h, sq, d, hk, skv).shape
    b, h, sq, d, hk, skv = (np.broadcast_to(v, shape) for v in (b, h, sq, d, hk, skv))
    if np.any(hk > h) or np.any(np.mod(h, hk) != 0):
        raise InputError("expected kv_heads to divide heads", key="kv_heads")
    causal = bool(p.get("causal", False))
    phase = p.get("phase", "fwd")
    elem = dtypes.size(dtype)
    pipe, pdt = tiles.matrix_pipe(arch, dtype, work.notes)
    r = tiles.Rates.of(arch, pipe, pdt)
    sfu = arch.peak_flops("sfu", "fp32") if arch.has("sfu", "fp32") else arch.peak_flops("valu", "fp32")

    scores = causal_scores(sq, skv) if causal else sq * skv
    frac = scores / (sq * skv)  # share of the K/V (fwd) or Q (bwd) a block needs on average
    n = b * h * scores
    g = h / hk  # query heads per KV head, packed into the rows of one problem
    copies = b * hk
    qrows = g * sq

    # tile choice: outer block by a local time (compute with wave quantization + traffic)
    cands = _candidates(arch, float(np.max(d)), elem, phase)
    if phase == "fwd":
        rows, cols, a_row, b_col = qrows, skv, d * elem, 2.0 * d * elem  # Q rows, K+V per key
    else:
        rows, cols, a_row, b_col = skv, qrows, 2.0 * d * elem, 2.0 * d * elem + 8.0  # K+V; Q, dO, LSE, Delta
    per_score = (4.0 if phase == "fwd" else 10.0) * d
    compulsory = copies * (rows * a_row + cols * b_col)
    t_mem = compulsory / r.bw[r.mem]

    def cost(bo, bi, split):
        grid = np.ceil(rows / bo) * copies * split
        depth = np.ceil(cols * frac / (split * bi)) * bi  # streamed keys (fwd) / queries (bwd)
        t_tile = bo * depth * (per_score * r.cus / r.flops + r.cus / sfu)
        t_l1 = (bo * a_row + depth * b_col) * r.cus / r.bw.get("l1", np.inf)
        req = grid * (bo * a_row + depth * b_col)
        return np.ceil(grid / r.cus) * np.maximum(t_tile, t_l1) + np.maximum(
            req / r.bw.get("l2", np.inf), t_mem
        )

    costs, splits = [], []
    for bo, bi, _ in cands:
        s = np.ones(shape)
        if phase == "fwd":  # split-KV where the query blocks underfill the CUs (decode)
            s = tiles.fill_split(r.cus, np.ceil(rows / bo) * copies, cols, bi)
        c1 = cost(bo, bi, 1.0)
        cs = cost(bo, bi, s)
        costs.append(np.minimum(c1, cs))
        splits.append(np.where(cs < c1, s, 1.0))
    idx, _ = tiles.argmin_candidates(costs, shape)
    table = np.array(cands, dtype=float)
    bo, bi, lanes = (table[idx, j] for j in range(3))
    split = np.choose(idx, splits) if len(splits) > 1 else splits[0]

    # FLOPs
    if phase == "fwd":
        work.add_flops(pipe, pdt, 4.0 * n * d)
        work.add_flops("sfu", "fp32", n)
        rescale = b * h * sq * d * (np.ceil(skv * frac / bi) + 1.0)  # O rescaled per KV block, then 1/l
        work.add_flops("valu", "fp32", 4.0 * n + rescale)
    else:
        work.add_flops(pipe, pdt, 10.0 * n * d)
        work.add_flops("sfu", "fp32", n)
        work.add_flops("valu", "fp32", 4.0 * n + 2.0 * b * h * sq * d)
    if not arch.has("sfu", "fp32"):
        work.notes.append(f"{arch.key} has no sfu pipe: exponentials counted on sfu:fp32 anyway")

    # bytes
    t = tiles.panel_traffic(arch, rows, cols, bo, np.ceil(cols / split), a_row, b_col, copies, b_frac=frac)
    tiles.add_operand_reads(work, arch, t)
    q_bytes = b * h * sq * d * elem
    kv_bytes = 2.0 * b * hk * skv * d * elem
    lse = b * h * sq * 4.0
    waves = lanes / arch.wave_size
    streamed = t["grid"] * cols * frac / split * b_col  # bytes staged in LDS
    work.add_bytes("lds", read=waves * streamed, write=streamed)
    if phase == "fwd":
        tiles.add_cold(work, arch, write=q_bytes + lse)  # O and LSE
        if np.any(split > 1):
            tiles.add_scratch(work, arch, np.where(split > 1, split * (b * h * sq * (d + 1.0) * 4.0), 0.0))
            work.notes.append(
                "split-KV (flash-decoding) where query blocks underfill the CUs: fp32 partial O and LSE reduced"
            )
    else:
        # Delta = rowsum(dO * O): reads O and dO, writes Delta (read back by the main kernel)
        tiles.add_cold(work, arch, read=2.0 * q_bytes, write=lse)
        # dQ accumulated in fp32 by atomics in L2, once per key block; then converted and written
        dq_acc = b * h * sq * d * 4.0
        work.add_bytes(
            "l2", read=t["grid"] / copies * frac * dq_acc, write=t["grid"] / copies * frac * dq_acc
        )
        tiles.add_scratch(work, arch, dq_acc)
        tiles.add_cold(work, arch, write=q_bytes + kv_bytes)  # dQ, dK, dV
    acc_b = (bo * d + bo * bi) * 4.0 if phase == "fwd" else (2.0 * bo * d + 2.0 * bo * bi) * 4.0
    work.launch = Launch(
        grid=t["grid"],
        workgroup_size=lanes,
        vgprs=tiles.vgprs(arch, acc_b, 2.0 * bi * d * elem, lanes),
        lds_bytes=2.0 * bi * d * elem,
        tile_m=bo,
        tile_n=bi,
        tile_k=d,
    )
    if p.get("paged", False):  # one 4-byte block-table entry per block of each sequence
        blocks = np.ceil(skv / np.asarray(p.get("block_size", 16), dtype=float))
        tiles.add_cold(work, arch, read=b * blocks * 4.0)
        work.notes.append("paged KV cache: K/V blocks gathered through a block table (4 B per block)")
    if np.any(g > 1):
        work.notes.append("GQA: the query heads of one KV head are packed into one problem and share its K/V")
    return work
