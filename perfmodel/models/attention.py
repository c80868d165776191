"""Flash attention (FA2-style, fused softmax), forward and backward, with GQA and decode.

Scores: n = Sq*Skv, or with a causal mask (bottom-right aligned, as FlashAttention-2 does for
Sq != Skv) n = Sq*Skv - Sq(Sq-1)/2 when Sq <= Skv and Skv(Skv+1)/2 when Sq > Skv. A sliding
window (``window`` = W, local attention: Mistral, Gemma 2/3, gpt-oss) keeps each query's last W
keys of that mask, its own position included (FlashAttention-2's window_size = (W - 1, 0)): the
keys before the first query's window are never read (Skv becomes min(Skv, Sq + W - 1)), and
`causal_scores` caps every row at W.

Head dims: D for Q and K, Dv for V and O (``head_dim_v``, default D: DeepSeek's MLA prefill runs
D = 192, Dv = 128). ``kv_shared``: V is the first Dv channels of K, one tensor read once (MLA's
absorbed decode: one latent KV head of D = 576 = 512 + 64 rope channels, V its first 512).
Below, D in a product with V or O stands for Dv.

- fwd FLOPs: 4*B*H*n*D on the matrix pipe (QK^T and PV, 2*D each per score); one exp per
  score on sfu:fp32; online softmax on valu:fp32 (4 per score: max, scale-and-subtract FMA,
  sum; plus D per query row per KV block to rescale O, and D per row for the final 1/l).
  The VALU is timed by its instructions (`Work.valu_issue`): 3.5 per score (max, FMA, add, half
  a packed convert of P to the matrix input type) plus the rescale multiplies; backward 4 per
  score (FMA, subtract, multiply, two half converts) plus one FMA per element of Delta.
- bwd FLOPs: 10*B*H*n*D (recomputed QK^T, dP = dO V^T, dV += P^T dO, dQ += dS K, dK += dS^T Q:
  2.5x the forward products), one exp per score (P recomputed from the LSE), 4 valu per score
  (P, dS = P*(dP - Delta)), and 2*B*H*Sq*D for Delta = rowsum(dO*O).
- Bytes come from the shared tile traffic model (`tiles.panel_traffic`): fwd tiles are blocks of
  query rows that stream all the K/V they need (K/V re-read once per query block from L2/MALL);
  GQA packs the H/kv_heads query heads of one KV head into the rows of one problem, so they share
  its K/V; decode (Sq=1) splits the KV sequence across workgroups (flash-decoding) so that the
  KV cache streams once over the whole GPU. bwd tiles are blocks of keys (FA2 bwd) of one query
  head that stream Q, dO, LSE and Delta, accumulate dQ in fp32 with atomics in L2, and write dK,
  dV once (per query head under GQA, then summed over the group, as FA2 does).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.models import activations, elementwise, fewer_rows, tiles, traffic
from perfmodel.models.registry import Param, floats, register
from perfmodel.rates import transcendental_rate
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


def causal_scores(sq, skv, window=np.inf):
    """Score elements under a bottom-right-aligned causal mask, each row capped at ``window``
    keys: query j sees min(j + Skv - Sq + 1, W) keys (none where that is below 1), so the sum is
    C(Skv) - C(max(Skv - Sq, 0)) with C(x) = sum of min(v, W) for v = 1..x."""

    def capped(x):
        w = np.minimum(x, window)
        return w * (w + 1.0) / 2.0 + np.where(x > w, (x - w) * w, 0.0)  # past the window: W each

    return capped(skv) - capped(np.maximum(skv - sq, 0.0))


def window_blocks(outer, inner, window):
    """Inner blocks one outer block meets inside a sliding window: ceil(outer / inner) for the
    block's own span plus ceil((W - 1) / inner) behind it (exact where the blocks are aligned to
    the diagonal, as a square prefill's are); unbounded without a window."""
    return np.ceil(outer / inner) + np.ceil((window - 1.0) / inner)


def _candidates(arch, dims: tuple[float, float, bool], elem: float, phase: str):
    """Legal (outer block, inner block, lanes) for head dims (D, Dv, kv_shared): LDS holds the
    streamed block(s), the register budget holds the accumulators (fwd: O and S for the query
    block; bwd: dK, dV and S/dP)."""
    d, dv, shared = dims
    lds, budget = tiles.lds_limit(arch), tiles.acc_vgpr_budget(arch)
    out = []
    for bo in Q_BLOCKS:
        lanes = 256 if bo >= 64 else 64
        if lanes > tiles.max_lanes(arch) or lanes % arch.wave_size:
            continue
        for bi in INNER_BLOCKS:
            if phase == "fwd":  # K and V blocks in LDS (one when V is K's); O (bo x Dv) and S (bo x bi) in registers
                lds_b, acc_b = bi * (d if shared else d + dv) * elem, (bo * dv + bo * bi) * 4
            else:  # Q and dO blocks in LDS; dK, dV (bo x (D + Dv)) and S, dP (2 x bo x bi) in registers
                lds_b, acc_b = bi * (d + dv) * elem, (bo * (d + dv) + 2 * bo * bi) * 4
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
        Param("head_dim", help="Q and K head dim"),
        Param("head_dim_v", default=None, help="V and output head dim (DeepSeek MLA prefill: 128 beside head_dim 192); default: head_dim"),
        Param("kv_shared", bool, False, help="V is the first head_dim_v channels of K, read once (MLA absorbed decode: kv_heads=1 head_dim=576 head_dim_v=512)"),
        Param("causal", bool, False),
        Param(
            "window", default=0, minimum=0,
            help="sliding window (local attention): each query sees at most this many keys, ending at its own position (Mistral, Gemma, gpt-oss); 0: no window; needs causal=true unless seq_q=1",
        ),
        Param(
            "softcap", float, 0, minimum=0,
            help="logit soft-capping: each score s becomes softcap * tanh(s / softcap) before the softmax (Gemma 2, Grok; FlashAttention's softcap); 0: none",
        ),
        Param("phase", str, "fwd", choices=("fwd", "bwd")),
        Param("paged", bool, False, help="K/V in a paged cache read through a block table (vLLM)"),
        Param("block_size", default=16, help="tokens per KV-cache block (paged)"),
    ],
    doc="Flash attention fwd/bwd (FA2 accounting), GQA, causal, decode (seq_q=1)",
    default_dtype="bf16",
)
def attention(p: dict, arch, dtype: str) -> Work:
    def best(sub: dict, windowed_only: bool = False) -> Work:
        """The kernel's estimate with the other ways of running it (`Work.alternatives`); with
        ``windowed_only``, only for the sliding-window cases (the floors' smaller problems)."""
        w = _attention(sub, arch, dtype)
        if not sub.get("kv_shared", False):
            _add_unshared(w, sub, lambda s: _attention(s, arch, dtype), windowed_only)
        _add_unwindowed_blocks(w, sub, best)
        return w

    work = best(p)
    # the floors' smaller problems: a windowed one is timed as it would be on its own, with its
    # alternatives (the blocks ranked for a narrow window can time far slower than the causal
    # mask's); the others keep the kernel's own estimate (their alternatives cost a fifth of the
    # CLI's speed and moved no held-out point closer)
    floor = functools.partial(best, windowed_only=True)
    fewer_rows.add_floor(work, p, p["seq_q"], floor, _fewer_queries, QUERY_LADDER, np.inf)
    if p.get("kv_shared", False):  # MLA's latent decode: fewer sequences too (see docs/models-tiled.md)
        fewer_rows.add_floor(work, p, p["batch"], floor, fewer_rows.setter("batch"), fewer_rows.BY_FOUR, np.inf)
    return work


# An internal parameter of the windowed alternative (`_add_unwindowed_blocks`): the blocks and
# split are those ranked for the same case without its window.
UNWINDOWED_BLOCKS_KEY = "_blocks_without_window"
UNWINDOWED_NOTE = (
    "sliding window timed with the blocks of the plain causal kernel, skipping the blocks outside"
    " the window: the blocks ranked for the window time slower"
)


def _add_unwindowed_blocks(work: Work, p: dict, fn) -> None:
    """A windowed case can run the blocks and split ranked for its plain causal mask, skipping
    the blocks outside the window (FlashAttention-2 runs one kernel for both masks): an upper
    bound on the fastest windowed kernel (`Work.alternatives`). The block ranking's local cost
    does not see every term the estimator charges (the MALL re-reads of many small query
    blocks), so a narrow window could rank blocks that time slower than the causal mask's."""
    win = p.get("window")
    if win is None or p.get(UNWINDOWED_BLOCKS_KEY):
        return
    shape, win = fewer_rows.batch_rows(p, win)
    at = np.flatnonzero(win > 0)
    if not len(at):
        return
    sub = fewer_rows.cases_of(p, shape, at)
    sub[UNWINDOWED_BLOCKS_KEY] = True
    work.alternatives.append((fn(sub), at, UNWINDOWED_NOTE))


UNSHARED_NOTE = (
    "GQA timed as its heads without shared K/V (each query head reading its KV head, as an MHA kernel"
    " runs them): the packed problem times slower, and sharing only removes device-memory reads"
)


def _add_unshared(work: Work, p: dict, fn, windowed_only: bool = False) -> None:
    """A GQA forward can run as the same query heads each with its own K/V (the grid of an MHA
    kernel, every group's K/V read through the L2), which reads no fewer bytes from the caches
    and as many from device memory at most: the unshared estimate is an upper bound on the
    fastest kernel (`Work.alternatives`). Packing a group's heads into one problem's rows can
    leave too few tiles to fill the GPU (A100 BF16, 128 heads over 32 KV heads, 128 queries of
    1024 keys: 53.5 us packed, 39.0 us unshared). Not backward: there the group's dK/dV must be
    summed, which the unshared problem does not do. Not MLA's latent decode (`kv_shared`): its
    heads share one latent tensor that no unshared kernel has."""
    kvh = p.get("kv_heads")
    if kvh is None or p.get("phase", "fwd") != "fwd":
        return
    shape, heads = fewer_rows.batch_rows(p, p["heads"])
    kvh = np.broadcast_to(_resolve({"kv_heads": kvh}, "kv_heads", np.nan), shape).ravel()
    grouped = kvh < heads  # nan (a batch's heads default) compares false
    if windowed_only:
        grouped &= np.broadcast_to(_resolve(p, "window", 0.0), shape).ravel() > 0
    at = np.flatnonzero(grouped)
    if not len(at):
        return
    sub = fewer_rows.cases_of(p, shape, at)
    sub["kv_heads"] = heads[at]
    work.alternatives.append((fn(sub), at, UNSHARED_NOTE))


# Query counts whose estimates floor a larger count's (`_fewer_queries`): a geometric ladder
# below the smallest query block (16 rows).
QUERY_LADDER = (16.0, 4.0, 1.0)


def _fewer_queries(sub: dict, queries: np.ndarray) -> None:
    """The last ``queries`` of each sequence: a sub-problem of the same attention (the same keys;
    under a causal mask, aligned bottom-right, they see the keys they saw)."""
    if sub.get("seq_kv") is None:  # seq_kv defaults to seq_q: keep the keys of the whole problem
        sub["seq_kv"] = sub["seq_q"]
    sub["seq_q"] = queries


def _attention(p: dict, arch, dtype: str) -> Work:
    work = Work()
    x = _problem(p, arch, dtype)
    pipe, pdt = tiles.matrix_pipe(arch, dtype, work.notes)
    latent, use = _latent(arch, x)
    rate_dtype = latent.get("rate_as", {}).get(pdt) if latent else None
    r = tiles.Rates.of(arch, pipe, pdt)
    ranked = _problem({**p, "window": None}, arch, dtype) if p.get(UNWINDOWED_BLOCKS_KEY) else x  # `_add_unwindowed_blocks`
    bo, bi, lanes, split = _choose_blocks(arch, r, ranked, latent, use)
    persistent = _combine_always(arch, x)  # AITER's persistent MLA decode (see `_combine_always`)
    paged = bool(p.get("paged", False))
    combine = (split > 1) | persistent
    _add_flops(work, arch, x, pipe, pdt, bi)
    if rate_dtype:
        work.rate_as[f"{pipe}:{pdt}"] = (rate_dtype, latent["rate_as_why"], use)
    t = tiles.panel_traffic(
        arch, x.rows, x.cols, bo, np.ceil(x.cols / split), x.a_row, x.b_col, x.copies, a_unique=x.a_unique, b_frac=x.frac
    )
    tiles.add_operand_reads(work, arch, t)
    # a library whose work planner splits the keys (AITER's persistent MLA) reduces the splits in
    # a kernel of its own, on its own grid (`_latent_reduce`)
    planned = use & (latent is not None and "split_planner" in latent)
    _add_bytes(work, arch, x, t, lanes, split, reduce_apart=planned)
    d, dv, elem = x.d, x.dv, x.elem
    acc_b = (bo * dv + bo * bi) * 4.0 if x.phase == "fwd" else (bo * (d + dv) + 2.0 * bo * bi) * 4.0
    lds_b = bi * x.kv_width * elem  # the streamed K (and V) block, or Q and dO (bwd)
    work.launch = Launch(
        grid=t["grid"],
        workgroup_size=lanes,
        vgprs=tiles.vgprs(arch, acc_b, lds_b, lanes),
        lds_bytes=lds_b,
        bytes_in_flight_per_wave=_latent_flight(arch, x, bi, lanes, latent, use),
        tile_m=bo,
        tile_n=bi,
        tile_k=d,
        # Q/K/V prologue, O store (+ combine kernel); paged, the K/V wait for their block-table
        # entry; that entry (or, unpaged, a persistent kernel's loads) waits for the sequence's
        # bounds: its length (vLLM's paged_attention_kernel reads seq_lens[seq_idx] before its
        # block table) or a persistent kernel's work item
        serial_latencies=np.where(combine & ~planned, 3.0, 2.0) + (1.0 if paged else 0.0) + (1.0 if paged or persistent else 0.0),
        # AITER's persistent MLA: the work range a CU reads first, the reduce's two index maps
        # (booked with its own kernel where that is timed apart: `_latent_reduce`)
        kernel_latencies=np.where(planned, 1.0, 3.0) if persistent else 0.0,
        # the main loop's steps: the KV blocks (fwd) or query blocks (bwd) one tile streams, on
        # average under a causal mask (the pipeline fill is one of them)
        k_steps=np.maximum(_mean_tile_steps(x, bo, bi, split), 1.0),
        # flash-decoding's combine kernel (a few rows per workgroup, every split's partials loaded
        # at once) is booked here, not as a kernel of its own: see `_side_kernels`
        kernels=np.where(combine & ~planned, 2.0, 1.0),
        useful_fraction=_useful_fraction(x, bo, bi, split),
        stream_k=False,
        tile_imbalance=_tile_imbalance(x, bo, bi),
        # written after the KV (fwd) or query (bwd) loop: O and its row statistics; dK and dV
        epilogue_bytes=np.where(x.phase == "fwd", bo * (dv * elem + 4.0), bo * (d + dv) * elem),
        # dS goes through LDS to the dK and dQ products, so a backward workgroup's waves meet at
        # a barrier every step (FA2 flash_bwd_kernel.h __syncthreads; FA3
        # mainloop_bwd_sm90_tma_gmma_ws.hpp @ a7e72e8: NamedBarrier PdS over both MMA warpgroups)
        lockstep=x.phase == "bwd",
    )
    work.serial = _side_kernels(arch, dtype, x)
    if np.any(planned):
        work.serial.append(_latent_reduce(arch, x, split, planned))
        work.note(
            "AITER persistent MLA decode: keys split as its work planner splits them (at most"
            f" {latent['split_planner']['max_splits']} workgroups per sequence), then its reduce kernel",
            planned,
        )
    if paged:  # one 4-byte block-table entry per block of each sequence
        blocks = np.ceil(x.skv / np.asarray(p.get("block_size", 16), dtype=float))
        traffic.add_stream(work, arch, read=x.b * blocks * 4.0)
        work.notes.append("paged KV cache: K/V blocks gathered through a block table (4 B per block)")
    work.note("GQA: the query heads of one KV head are packed into one problem and share its K/V", x.h / x.hk > 1)
    return work


def _latent_flight(arch, x: _Problem, bi, lanes, latent: dict | None, use):
    """Bytes a wave keeps in flight in the target's MLA decode kernel: the key blocks it loads
    ahead (`attention_latent_decode_tiles` blocks_in_flight), shared by the workgroup's waves;
    0 (the estimator's default) elsewhere."""
    if latent is None:
        return 0.0
    flight = float(latent["blocks_in_flight"]) * bi * x.kv_width * x.elem / np.ceil(lanes / arch.wave_size)
    return np.where(use, flight, 0.0)


@dataclass
class _Problem:
    """One batch of attention problems as the tile model sees them: GQA packs the g = h/hk query
    heads of one KV head into the rows of one problem (b x hk problems). Forward tiles run over
    query rows and stream K/V; backward tiles run over keys and stream Q, dO, LSE and Delta."""

    b: np.ndarray
    h: np.ndarray
    sq: np.ndarray
    d: np.ndarray  # Q/K head dim
    dv: np.ndarray  # V/O head dim
    shared: bool  # V read from K's memory (absorbed MLA)
    kv_width: np.ndarray  # channels per key streamed through LDS: D + Dv, D when V is K's (fwd); Q and dO's D + Dv (bwd)
    hk: np.ndarray
    skv: np.ndarray
    shape: tuple
    phase: str
    elem: float
    frac: np.ndarray  # share of the K/V (fwd) or Q (bwd) a block needs on average (causal, window)
    window: np.ndarray  # keys a query sees at most (inf: no sliding window)
    n: np.ndarray  # score elements
    copies: np.ndarray
    a_unique: np.ndarray | None  # distinct K/V bytes per bwd problem (the KV head's, shared by g)
    rows: np.ndarray
    cols: np.ndarray
    a_row: np.ndarray
    b_col: np.ndarray
    per_score: np.ndarray  # matrix FLOPs per score element
    sfu: float  # device exp/s
    softcap: np.ndarray  # where the scores are soft-capped (a tanh each: `softcap_cost`)
    dtype: str = ""  # the case's dtype (which MLA decode library path applies: `_latent`)


def _problem(p: dict, arch, dtype: str) -> _Problem:
    b, h, sq, d = floats(p, "batch", "heads", "seq_q", "head_dim")
    hk = _resolve(p, "kv_heads", h)
    skv = _resolve(p, "seq_kv", sq)
    dv = _resolve(p, "head_dim_v", d)
    win = _resolve(p, "window", 0.0)
    cap = _resolve(p, "softcap", 0.0)
    shape = np.broadcast(b, h, sq, d, hk, skv, dv, win, cap).shape
    b, h, sq, d, hk, skv, dv, win, cap = (np.broadcast_to(v, shape) for v in (b, h, sq, d, hk, skv, dv, win, cap))
    if np.any(hk > h) or np.any(np.mod(h, hk) != 0):
        raise InputError("expected kv_heads to divide heads", key="kv_heads")
    causal = bool(p.get("causal", False))
    if not causal and np.any((win > 0) & (sq > 1)):
        raise InputError("expected causal=true with window (the window's right edge is the causal diagonal) unless seq_q=1", key="window")
    window = np.where(win > 0, win, np.inf)
    skv = np.minimum(skv, sq + window - 1.0)  # keys before the first query's window are never read
    phase = p.get("phase", "fwd")
    shared = bool(p.get("kv_shared", False))
    if shared and phase != "fwd":
        raise InputError("expected kv_shared only with phase=fwd (the absorbed MLA form is an inference kernel)", key="kv_shared")
    if shared and np.any(dv > d):
        raise InputError("expected head_dim_v <= head_dim with kv_shared (V is the first head_dim_v channels of K)", key="head_dim_v")
    elem = dtypes.size(dtype)
    scores = causal_scores(sq, skv, window) if causal else sq * skv
    qrows = h / hk * sq
    kv_width = d if shared else d + dv  # channels of one key's K and V in memory
    if phase == "fwd":
        rows, cols, a_row, b_col = qrows, skv, d * elem, kv_width * elem  # Q rows, K+V per key
        copies, a_unique = b * hk, None
    else:  # one problem per query head; its K/V is its KV head's, shared by the g heads of a group
        rows, cols, a_row, b_col = skv, sq, kv_width * elem, (d + dv) * elem + 8.0  # K+V; Q, dO, LSE, Delta
        copies, a_unique = b * h, skv * a_row * hk / h
    sfu = transcendental_rate(arch)
    return _Problem(
        b, h, sq, d, dv, shared, kv_width, hk, skv, shape, phase, elem,
        frac=scores / (sq * skv),
        window=window,
        n=b * h * scores,
        copies=copies,
        a_unique=a_unique,
        rows=rows,
        cols=cols,
        a_row=a_row,
        b_col=b_col,
        # matrix FLOPs per score: fwd QK^T (2D) and PV (2Dv); bwd also dP = dO V^T (2Dv), dV (2Dv), dQ and dK (2D each)
        per_score=2.0 * (d + dv) if phase == "fwd" else 2.0 * (3.0 * d + 2.0 * dv),
        sfu=sfu,
        softcap=cap > 0,
        dtype=dtype,
    )  # fmt: skip


def _library_fwd_blocks(arch, x: _Problem):
    """The target's fastest forward kernel's tile where it has a known table
    (model_constants.yaml `attention_fwd_tiles`: FlashAttention-3 on Hopper): (query block, KV
    block, lanes: q_block / 64 MMA warpgroups and a producer, where it applies) per shape, or
    None. Decode (one query row) keeps the ranked split-KV blocks."""
    from perfmodel.rates import constants

    table = constants().get("attention_fwd_tiles", {}).get(arch.gfx, {}).get(int(x.elem))
    if not table or x.phase != "fwd":
        return None
    causal = x.frac < 1.0
    q_b, kv_b = np.zeros(x.shape), np.zeros(x.shape)
    for row in reversed(table):  # the smallest max_head_dim that holds d wins
        fits = np.maximum(x.d, x.dv) <= row["max_head_dim"]
        q_b = np.where(fits, row["q_block"], q_b)
        kv_b = np.where(fits, np.where(causal, row["kv_block_causal"], row["kv_block"]), kv_b)
    use = (x.sq > 1) & (q_b > 0)
    return q_b, kv_b, (q_b / 64.0 + 1.0) * 4.0 * arch.wave_size, use


def _choose_blocks(arch, r: tiles.Rates, x: _Problem, latent: dict | None, latent_use):
    """Outer block, inner block, lanes and split-KV per shape, ranked by a local time: compute
    with wave quantization plus traffic (split-KV tried where query blocks underfill the CUs)."""
    # each case ranks the blocks legal for its own head dims (never those of another case)
    span = float(np.max(x.dv)) + 1.0  # (D, Dv) as one whole number D span + Dv: one 1-D unique, not a row sort
    dims = x.d * span + x.dv
    legal_of = {k: _candidates(arch, (k // span, k % span, x.shared), x.elem, x.phase) for k in np.unique(dims).tolist()}
    cands = list(dict.fromkeys(c for cs in legal_of.values() for c in cs))
    t_mem = x.copies * (x.rows * x.a_row + x.cols * x.b_col) / r.bw[r.mem]
    sfu_per_score = 1.0 + np.where(x.softcap, softcap_cost(arch.vendor, x.phase)[2], 0.0)  # the exp, the cap's tanh

    def cost(bo, bi, split, lanes):
        grid = np.ceil(x.rows / bo) * x.copies * split
        depth = np.ceil(x.cols * x.frac / (split * bi)) * bi  # streamed keys (fwd) / queries (bwd)
        t_tile = bo * depth * (x.per_score * r.cus / r.flops + sfu_per_score * r.cus / x.sfu)
        t_l1 = (bo * x.a_row + depth * x.b_col) * r.cus / r.bw.get("l1", np.inf)
        # the streamed blocks through LDS: written once, read by each wave (`_add_bytes`)
        readers = tiles.operand_readers(arch, np.asarray(lanes, dtype=float) / arch.wave_size)
        t_l1 = np.maximum(t_l1, (readers + 1.0) * depth * x.b_col * r.cus / r.bw.get("lds", np.inf))
        req = grid * (bo * x.a_row + depth * x.b_col)
        if x.phase == "bwd":  # dQ read and written in L2 once per key block (`_add_bytes`)
            req = req + 2.0 * np.ceil(x.rows / bo) * x.frac * x.b * x.h * x.sq * x.d * 4.0
        return np.ceil(grid / r.cus) * np.maximum(t_tile, t_l1) + np.maximum(req / r.bw.get("l2", np.inf), t_mem)

    def with_split(bo, bi, lanes):
        """(cost, split) of blocks bo x bi: split-KV where the query blocks underfill the CUs
        (decode) and it is cheaper."""
        s = np.ones(x.shape)
        if x.phase == "fwd":
            s = tiles.fill_split(r.cus, np.ceil(x.rows / bo) * x.copies, x.cols, bi)
            if arch.vendor == "AMD" and not x.shared:  # MLA's decode splits to fill the CUs
                s = np.where(x.sq == 1, np.maximum(s, np.ceil(x.cols / 256.0)), s)
        c1, cs = cost(bo, bi, 1.0, lanes), cost(bo, bi, s, lanes)
        return np.minimum(c1, cs), np.where(cs < c1, s, 1.0)

    costs, splits = [], []
    for bo, bi, lanes in cands:
        c, s = with_split(bo, bi, lanes)
        legal = np.isin(dims, [k for k, blocks in legal_of.items() if (bo, bi, lanes) in blocks])
        costs.append(np.where(legal, c, np.inf))
        splits.append(s)
    idx, _ = tiles.argmin_candidates(costs, x.shape)
    table = np.array(cands, dtype=float)
    bo, bi, lanes = (table[idx, j] for j in range(3))
    split = np.choose(idx, splits) if len(splits) > 1 else splits[0]
    lib = _library_fwd_blocks(arch, x)
    if lib is not None:  # the library's own tile; split-KV still where it underfills the CUs
        q_b, kv_b, lib_lanes, use = lib
        _, s = with_split(np.where(use, q_b, bo), np.where(use, kv_b, bi), np.where(use, lib_lanes, lanes))
        bo, bi, lanes = np.where(use, q_b, bo), np.where(use, kv_b, bi), np.where(use, lib_lanes, lanes)
        split = np.where(use, s, split)
    if latent is not None:  # MLA's absorbed decode (`_latent`): the target's MLA kernel's own tile
        lb, li, ll = (np.full(x.shape, float(latent[k])) for k in ("q_block", "kv_block", "lanes"))
        planner = latent.get("split_planner")
        ls = _planned_splits(r.cus, x, np.ceil(x.rows / lb), planner) if planner else with_split(lb, li, ll)[1]
        bo, bi, lanes, split = (np.where(latent_use, a, b) for a, b in ((lb, bo), (li, bi), (ll, lanes), (ls, split)))
    return bo, bi, lanes, split


def _planned_splits(cus: float, x: _Problem, q_tiles, planner: dict) -> np.ndarray:
    """KV splits per sequence as a persistent library's work planner makes them (AITER's MLA
    metadata, `attention_latent_decode_tiles` split_planner): the B sequences' q_tiles query
    tiles, each over n = L / g granules plus a fixed cost of F granules per work item, are spread
    over S = min(CUs, max_splits x B) workgroups, each taking ceil(B q_tiles (n + F) / S)
    granules; a query tile whose keys fit one share is not split, a longer one is cut into
    shares. So a single sequence uses max_splits CUs, not all of them, and short ones stay whole."""
    g, f = float(planner["granule"]), float(planner["fixed_granules"])
    n = np.ceil(x.skv / g)
    workers = np.minimum(cus, float(planner["max_splits"]) * x.b)
    share = np.maximum(np.ceil(x.b * q_tiles * (n + f) / workers), 1.0)
    return np.where(n <= share, 1.0, np.ceil(n / share))


def _combine_always(arch, x: _Problem) -> bool:
    """Whether the target's MLA decode library dispatches its combine kernel even when the
    keys were not split (`attention_latent_decode_combine_always`: AITER's persistent path)."""
    from perfmodel.rates import constants

    return x.shared and arch.gfx in constants().get("attention_latent_decode_combine_always", {})


def _latent(arch, x: _Problem) -> tuple[dict | None, np.ndarray]:
    """The MLA decode kernel's tile (`latent_decode_tile`) and the cases it applies to: absorbed-
    MLA decodes in a dtype that kernel serves (its `dtypes`) with the query rows (heads x new
    tokens) it holds (its `q_rows`, where it lists them: AITER's m16x8 kernels hold exactly 128;
    other head counts run other kernels, which keep the ranked blocks)."""
    latent = latent_decode_tile(arch) if x.shared else None
    if latent is None or ("dtypes" in latent and x.dtype not in latent["dtypes"]):
        return None, np.zeros(x.shape, dtype=bool)
    use = x.rows == float(latent["q_rows"]) if "q_rows" in latent else np.ones(x.shape, dtype=bool)
    return (latent, use) if np.any(use) else (None, use)


def latent_decode_tile(arch) -> dict | None:
    """The MLA decode kernel's tile on this target (`model_constants.yaml`
    `attention_latent_decode_tiles`: FlashMLA on Hopper), or None."""
    from perfmodel.rates import constants

    return constants().get("attention_latent_decode_tiles", {}).get(arch.gfx)


def _executed_scores(x: _Problem, bq, bk, split):
    """Score elements the matrix pipe computes: whole bq x bk blocks (FlashAttention-2, Dao 2023,
    sec. 3.1.1: blocks entirely above the causal diagonal are skipped, the blocks it crosses are
    computed whole and masked; the partial blocks at the sequence ends are padded). The set of
    (query block, key block) pairs is the same whichever loop runs outside, so fwd (query
    blocks outside) and bwd (key blocks outside) count alike.

    Per head, non-causal: ceil(Sq/bq) bq x ceil(Skv/(split bk)) bk split. Causal (bottom-right,
    Sq <= Skv): query block j (1-based) needs keys up to off + min(j bq, Sq), off = Skv - Sq,
    rounded up to bk: the sum over the nq = ceil(Sq/bq) blocks, with the round-up taken as its
    mean over the residues (1 - min(bq, bk)/bk)/2 per block. GQA rows of several heads share
    one block only where Sq < bq (decode): there the packed rows g Sq are padded instead.
    """
    g = x.h / x.hk
    sq, skv = x.sq, x.skv
    keys = np.ceil(skv / (split * bk)) * bk * split
    per_head = np.ceil(sq / bq) * bq * keys
    packed = np.ceil(g * sq / bq) * bq * keys / g  # decode: the g heads' rows share blocks
    full = np.where(sq < bq, packed, per_head)
    if np.all(x.frac >= 1.0):
        return x.b * x.h * full
    nq = np.ceil(sq / bq)
    off = skv - sq
    # query block j streams a + j c key blocks (a: the offset and the mean round-up, c = bq/bk),
    # at most `window_blocks` under a sliding window: the first J blocks below that cap, the rest at it
    a, c = off / bk + (1.0 - np.minimum(bq, bk) / bk) / 2.0, bq / bk
    cap = window_blocks(bq, bk, x.window)
    below = np.clip(np.ceil((cap - a) / c) - 1.0, 0.0, nq)  # all nq without a window (cap inf)
    at_cap = (nq - below) * np.where(np.isfinite(cap), cap, 0.0)
    blocks = below * a + c * below * (below + 1.0) / 2.0 + at_cap - (nq * bq - sq) / bk
    # one query block (Sq < bq: also the packed rows of decode) runs every key block its last
    # query sees, whole; more queries than keys (Sq > Skv) keep the masked share
    causal = np.where(sq > skv, full * x.frac, np.where(sq < bq, full, blocks * bk * bq))
    return x.b * x.h * np.where(x.frac < 1.0, causal, full)


def _side_kernels(arch, dtype: str, x: _Problem) -> list[Work]:
    """The backward's other kernels, each timed on its own grid before or after the main one
    (`Work.serial`): their streaming adds to the main kernel's time instead of hiding under
    its matrix work. FlashAttention-2 runs the dot(dO, O) pre-pass, which also zeroes the fp32
    dQ accumulator (flash_bwd_launch_template.h: flash_bwd_dot_do_o_kernel with Clear_dQaccum),
    the main kernel, then the fp32 -> output dQ conversion (flash_bwd_convert_dq_kernel); for
    GQA/MQA it sums the per-query-head dK/dV over each group (flash_api.cpp mha_bwd:
    at::sum_out). FA3 runs the same (flash_bwd_preprocess, flash_bwd_postprocess_dq). Where a
    kernel is not dispatched it has no bytes and no launch.

    The forward's split-KV combine kernel (flash-decoding: flash_fwd_splitkv_combine_kernel)
    stays booked in the main kernel (`Launch.kernels` 2, one more serial latency): it runs a
    few rows per workgroup and loads every split's partials at once, which the streaming
    kernel's bytes in flight would time as latency-bound (tried: Llama-3-8B decode attention
    on MI300X 15.8 -> 20.1 us per layer)."""
    if x.phase == "fwd":
        return []
    b, h, sq, d, dv, elem = x.b, x.h, x.sq, x.d, x.dv, x.elem
    q = b * h * sq * d  # elements of Q and dQ
    o = b * h * sq * dv  # elements of O and dO
    row = 4.0 / (dv * elem)  # one fp32 statistic per row (Delta), in elements of the dtype

    def kernel(n, reads, writes, flops, where=True, temp_read=0.0, temp_write=0.0):
        """A streaming kernel over n elements of arrays in device memory, plus the fp32 dQ
        accumulator the other kernels of the call share, which stops at the first cache that
        holds it (`traffic.add_stream(within_kernel=True)`)."""
        k = elementwise.helper_kernel(arch, dtype, where, n, reads, writes, flops)
        tr, tw = np.where(where, temp_read, 0.0), np.where(where, temp_write, 0.0)
        traffic.add_stream(k, arch, read=tr, write=tw, working_set=tr + tw, within_kernel=True)
        return k

    ones = np.ones(np.shape(q))
    dq_acc = q * 4.0
    out = [
        kernel(o, 2.0 * ones, row * ones, 2.0 * ones, temp_write=dq_acc),  # Delta = rowsum(dO*O); dQaccum = 0
        kernel(q, 0.0 * ones, ones, 0.0 * ones, temp_read=dq_acc),  # dQ: fp32 accumulator -> output type
    ]
    g = h / x.hk
    if np.any(g > 1):  # dK, dV written per query head, summed over each group of g heads
        out.append(kernel(b * x.hk * x.skv * (d + dv), g, ones, g - 1.0, g > 1))
    return out


def _tile_geometry(x: _Problem, bo, bi):
    """(query-side block, key-side block, the heaviest tile's inner blocks, tiles per head):
    fwd tiles are query blocks streaming key blocks, and the last one sees every key; bwd tiles
    are key blocks streaming query blocks, and the first one sees every query (in both, at most
    a sliding window's blocks: `window_blocks`)."""
    if x.phase == "fwd":
        # per head; where a query block packs the rows of the g heads of a KV head (Sq < bq:
        # decode and speculative decode), each head owns 1/g of its blocks
        g = x.h / x.hk
        per_head = np.where(x.sq < bo, np.ceil(g * x.sq / bo) / g, np.ceil(x.sq / bo))
        return bo, bi, np.minimum(np.ceil(x.skv / bi), window_blocks(bo, bi, x.window)), per_head
    return bi, bo, np.minimum(np.ceil(x.sq / bi), window_blocks(bo, bi, x.window)), np.ceil(x.skv / bo)


def _mean_tile_steps(x: _Problem, bo, bi, split):
    """Inner blocks the mean tile streams (per split of the keys): the executed blocks of
    `_executed_scores` over the tiles, so a causal mask counts the blocks its diagonal crosses
    whole, as the kernel runs them (one 128-row query block over 128 causal keys in 80-key blocks
    runs both blocks, not the 0.53 x 128 / 80 = 0.85 its unmasked scores would fill)."""
    bq, bk, _, tiles = _tile_geometry(x, bo, bi)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = _executed_scores(x, bq, bk, split) / (x.b * x.h * bq * bk * tiles * split)
    return np.nan_to_num(mean, nan=1.0)


def _tile_imbalance(x: _Problem, bo, bi):
    """The heaviest tile's blocks / the mean tile's (1 without a causal mask): ceil(inner
    length / inner block) (`_tile_geometry`) against `_mean_tile_steps` unsplit."""
    heavy = _tile_geometry(x, bo, bi)[2]
    mean = _mean_tile_steps(x, bo, bi, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(mean > 0, heavy / mean, 1.0)
    return np.where(x.frac < 1.0, np.maximum(h, 1.0), 1.0)


def _useful_fraction(x: _Problem, bo, bi, split):
    """Share of the matrix pipe's work that produces scores (the rest is padding and masked
    diagonal blocks); at most 1."""
    bq, bk = (bo, bi) if x.phase == "fwd" else (bi, bo)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = x.n / _executed_scores(x, bq, bk, split)
    return np.clip(np.nan_to_num(f, nan=1.0), 0.0, 1.0)


def _add_flops(work: Work, arch, x: _Problem, pipe: str, pdt: str, bi) -> None:
    """FA2 accounting: QK^T and PV (fwd; bwd adds dV, dP, dS, dQ, dK), one exp per score, the
    softmax and rescaling on the VALU."""
    n, b, h, sq = x.n, x.b, x.h, x.sq
    work.add_flops(pipe, pdt, x.per_score * n)
    if x.phase == "fwd":
        work.add_flops("sfu", "fp32", n)
        rescale = b * h * sq * x.dv * (np.ceil(x.skv * x.frac / bi) + 1.0)  # O rescaled per KV block, then 1/l
        work.add_flops("valu", "fp32", 4.0 * n + rescale)
        # instructions per score: max, the scale-and-subtract FMA, the row-sum add, and half a
        # packed convert of P to the matrix input type; one multiply per rescaled O element
        work.add_valu_issue("fp32", 3.5 * n + rescale)
    else:
        work.add_flops("sfu", "fp32", n)
        work.add_flops("valu", "fp32", 4.0 * n)
        # per score: P's FMA, dP - Delta, times P, and half a packed convert each of P and dS
        # (Delta = rowsum(dO * O) is the pre-pass kernel's, `_side_kernels`)
        work.add_valu_issue("fp32", 4.0 * n)
    _add_softcap(work, arch, x)
    _add_relayout(work, arch, x, pipe)
    if not arch.has("sfu", "fp32"):
        work.notes.append(f"{arch.key} has no sfu pipe: exponentials counted on sfu:fp32 anyway")
    # per KV block: S = QK^T, then max/exp/sum, then PV: one chain in each wave
    work.dependent.update({f"{pipe}:{pdt}", "valu:fp32", "sfu:fp32"})


# Logit soft-capping per score (FlashAttention-2's softcap: `flash_api.cpp` set_params_fprop sets
# params.softcap = softmax_scale / softcap and the softmax scale to the cap, so the kernel
# multiplies each score once, takes its tanh, and the cap rides in the exp's existing FMA): one
# multiply and a tanh. AMD: `activations.PER_ELEMENT["tanh"]` (CDNA and RDNA have no tanh
# instruction: exp, add, rcp, FMA); NVIDIA: FlashAttention's cutlass::fast_tanh is PTX
# tanh.approx.f32 (sm_75 and later), one special-function op. The backward recomputes it and
# multiplies dS by its derivative 1 - t^2 (an FMA and a multiply). Per score, by vendor:
# (VALU FLOPs, VALU instructions, SFU ops).
_TANH_VALU, _TANH_SFU = activations.PER_ELEMENT["tanh"]
SOFTCAP_FWD = {
    "AMD": (1.0 + _TANH_VALU, 1.0 + 3.0, _TANH_SFU),  # the multiply, then the tanh's 3 instructions (4 FLOPs)
    "NVIDIA": (1.0, 1.0, 1.0),  # the multiply, then tanh.approx.f32
}
SOFTCAP_BWD = {v: (f + 3.0, i + 2.0, t) for v, (f, i, t) in SOFTCAP_FWD.items()}


def _add_softcap(work: Work, arch, x: _Problem) -> None:
    """The soft cap's tanh on every executed score, where the case has one (`softcap` > 0)."""
    on = x.softcap
    if not np.any(on):
        return
    valu, issue, sfu = softcap_cost(arch.vendor, x.phase)
    n = np.where(on, x.n, 0.0)
    work.add_flops("sfu", "fp32", sfu * n)
    work.add_flops("valu", "fp32", valu * n)
    work.add_valu_issue("fp32", issue * n)
    work.note("logit soft-capping: a tanh per score between the two matrix products", on)


def softcap_cost(vendor: str, phase: str) -> tuple[float, float, float]:
    """(VALU FLOPs, VALU instructions, SFU ops) the soft cap adds per score (`SOFTCAP_FWD`)."""
    table = SOFTCAP_FWD if phase == "fwd" else SOFTCAP_BWD
    return table["NVIDIA" if vendor == "NVIDIA" else "AMD"]


def _add_relayout(work: Work, arch, x: _Problem, pipe: str) -> None:
    """Where the matrix pipe's results are not laid out as its operands (`Arch.result_relayout`:
    RDNA3 WMMA), each score fed back into a matrix product is permuted on the VALU first: P in
    the forward, P and dS in the backward; the spec counts instructions per packed word of two
    scores. Not FLOPs: only the VALU's instruction count (`Work.valu_issue`) grows."""
    q = arch.result_relayout(pipe)
    if q is None:
        return
    fed_back = 1.0 if x.phase == "fwd" else 2.0
    work.add_valu_issue("fp32", fed_back * q.value / 2.0 * x.n)
    work.notes.append(
        f"{arch.key} {pipe}: scores relaid from the accumulator to the operand layout on the VALU"
        f" ({q.value:g} instructions per packed word)"
    )


def _latent_reduce(arch, x: _Problem, split, where) -> Work:
    """AITER's MLA reduce (mla_reduce_v1), dispatched after every persistent decode call (the
    cases ``where`` holds): per output row it reads each split's fp32 partial O and LSE and
    writes the bf16 O; a sequence that was not split costs it only the dispatch and its
    index-map reads."""
    n = x.b * x.h * x.sq * x.dv
    cut = split > 1
    out = dtypes.size("bf16") / dtypes.size("fp32")  # the bf16 O, in the fp32 elements the kernel is counted in
    k = elementwise.helper_kernel(arch, "fp32", where, n, np.where(cut, split * (1.0 + 1.0 / x.dv), 0.0), np.where(cut, out, 0.0))
    k.launch.kernel_latencies = np.where(where, 2.0, 0.0)  # reduce_indptr, then the partial map, before the partials
    return k


def _add_bytes(work: Work, arch, x: _Problem, t: dict, lanes, split, reduce_apart=False) -> None:
    """LDS staging of the streamed blocks, the outputs, and the split-KV / dQ temporaries."""
    b, h, sq, d, dv, elem = x.b, x.h, x.sq, x.d, x.dv, x.elem
    o_bytes = b * h * sq * dv * elem
    kv_bytes = b * x.hk * x.skv * (d + dv) * elem  # dK and dV (bwd)
    lse = b * h * sq * 4.0
    readers = tiles.operand_readers(arch, lanes / arch.wave_size)  # waves, or warpgroups on Hopper
    streamed = t["grid"] * x.cols * x.frac / split * x.b_col  # bytes staged in LDS
    work.add_bytes("lds", read=readers * streamed, write=streamed)
    if x.phase == "fwd":
        # O and LSE; where a reduce kernel of its own combines the splits (`reduce_apart`), it
        # writes O (`_latent_reduce`) and this kernel writes only the partials
        traffic.add_stream(work, arch, write=np.where(reduce_apart & (split > 1), 0.0, o_bytes + lse))
        # under split-KV, the fp32 partial O and LSE, written and read back by the combine
        p = np.where(split > 1, split * (b * h * sq * (dv + 1.0) * 4.0), 0.0)
        traffic.add_stream(work, arch, read=np.where(reduce_apart, 0.0, p), write=p, working_set=p, within_kernel=True)
        work.note("split-KV (flash-decoding) where query blocks underfill the CUs: fp32 partial O and LSE reduced", split > 1)
        return
    # dQ accumulated in fp32 by atomics in L2, once per key block (zeroed before, converted after)
    dq_acc = b * h * sq * d * 4.0
    work.add_bytes("l2", read=t["grid"] / x.copies * x.frac * dq_acc, write=t["grid"] / x.copies * x.frac * dq_acc)
    # dK, dV; per query head under GQA (summed over each group of g heads afterwards)
    expanded = b * h * x.skv * (d + dv) * elem
    traffic.add_stream(work, arch, write=np.where(x.h > x.hk, expanded, kv_bytes))
    work.note("GQA backward: dK/dV computed per query head, then summed over each group (FA2)", x.h > x.hk)
