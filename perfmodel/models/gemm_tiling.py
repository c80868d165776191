"""The GEMM tile model: which macro-tile and split-K a library picks for a shape, and the Work
of that configuration. Shared by gemm, grouped_gemm, conv2d (implicit GEMM) and moe; the tile
candidates, panel traffic and launch helpers it builds on are in `tiles`.
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.estimate import select
from perfmodel.models import traffic
from perfmodel.models.registry import Param
from perfmodel.models.tiles import (
    K_TILES,
    PARTIAL_BYTES,
    TILE_FORM,
    TILE_PATTERN,
    Rates,
    Tile,
    acc_size,
    add_operand_reads,
    fill_split,
    gemm_candidates,
    lds_limit,
    matrix_pipe,
    multicast_cluster,
    multicast_requests,
    out_size,
    panel_traffic,
    runs_alone,
    smem_stages,
    user_tile,
    vgprs,
    wave_grid,
    wave_grid_of,
    waves_per_read,
    waves_sharing_operands,
)
from perfmodel.work import Launch, Work


def _gemm_parts(arch, m, n, k, batch, tm, tn, tk, lanes, split, elem, a_unique, rb=1.0):
    """Tile traffic of one GEMM configuration (tile and split may be scalars or arrays):
    (panel traffic, LDS reads, LDS writes, split-K partial bytes). ``rb``: bytes of B per K
    element relative to A's (below 1 for weights stored packed, `weight_only`)."""
    ks = k / split  # K depth one split walks (bytes move for the real K; padding costs only MFMA time)
    a_uni = None if a_unique is None else a_unique / split
    # a cluster's tiles get the shared panel from one L2 read (Hopper's TMA multicast)
    t = panel_traffic(
        arch, m, n, tm, tn, ks * elem, ks * elem * rb, batch * split, a_unique=a_uni, cluster=multicast_cluster(arch)
    )
    wr, wc = wave_grid(tm, tn, lanes, arch.wave_size)
    lds_w = t["grid"] * (tm + tn * rb) * ks * elem  # each K step stored once
    # each wave reads its rows and columns (once per warpgroup where waves share operands)
    share = waves_per_read(wr * wc, waves_sharing_operands(arch))
    lds_r = t["grid"] * (wc * tm + wr * tn * rb) * ks * elem / share
    partial = select(split > 1, batch * split * m * n * PARTIAL_BYTES, 0.0)
    return t, lds_r, lds_w, partial


def _choice_cost(
    r: Rates,
    m,
    n,
    k,
    batch,
    tile: Tile,
    tk: int,
    split,
    elem: float,
    base_mem,
    out_l2,
    wave_size: int,
    ks=None,
    rb: float = 1.0,
    alone: bool = False,
    split_launch: float = 0.0,
    edges: _Edges | None = None,
):
    """Local time used only to rank configurations (the estimator times the final Work).

    Compute with wave quantization (tiles one CU runs back to back x the tile's time on the
    CU's slowest path: MFMA, L1 or LDS) plus the slowest device-wide memory path: L2 (tile
    requests, C, split partials) or device memory (``base_mem``: compulsory time). Summed, not
    overlapped: real tiles do not hide all their traffic, and the sum prefers the tile that
    moves less when two tiles quantize to the same compute time. Split-K partial sums are
    charged where the estimator books them: L2, and the MALL or device memory when they do not
    fit L2. The prologue load and epilogue store latencies are added as the estimator adds
    them (`Launch.serial_latencies`): every round of tiles where a tile runs ``alone`` on its CU
    (`tiles.runs_alone`), else once; so many small rounds cost what they cost there. A split
    grid pays one more dispatch (``split_launch`` seconds) where the library reduces in a kernel
    of its own (`split_k_reduce_kernel`), as the estimator charges it; elsewhere the reduction
    inside the kernel, one workgroup per tile reading the other splits' partial tiles through its
    CU's L1 (`estimate._split_reduction`), at the generic L1 efficiency (`Rates.reduce_s_per_byte`).
    """
    edges = edges or _Edges(m, n, rb)
    tiles_m, tiles_n = edges.tiles_m(tile.m), edges.tiles_n(tile.n)
    bs = batch if np.ndim(split) == 0 and split == 1.0 else batch * split  # x * 1.0 == x exactly
    unit = np.ndim(bs) == 0 and bs == 1.0  # a batch of one problem: x * 1.0 == x, skipped
    grid1 = edges.grid1(tile.m, tile.n)  # shared with the caller's fill test: not changed here
    if ks is None:  # K steps one split walks (the caller passes them when they repeat across tiles)
        ks = np.ceil(k / (split * tk)) * tk
    wr, wc = wave_grid_of(tile.m, tile.n, tile.lanes, wave_size)
    share = float(waves_per_read(wr * wc, r.sharing))  # as `_gemm_parts` books LDS reads
    per_cu = max(
        2.0 * tile.m * tile.n * r.cus / r.flops,
        (tile.m + tile.n * rb) * elem * r.cus / r.bw.get("l1", np.inf),
        float(wc * tile.m + wr * tile.n * rb) * elem * r.cus / r.bw.get("lds", np.inf) / share,
    )
    # in place on the call's scratch arrays (`_Edges.buffer`): the same operations in the same order
    own = edges.shape == np.shape(ks) and (unit or np.shape(bs) == edges.shape)
    if unit:
        rounds = np.multiply(grid1, 1.0 / r.cus, out=edges.buffer("rounds") if own else None)
    else:
        rounds = np.multiply(grid1, bs, out=edges.buffer("rounds") if own else None)
        rounds *= 1.0 / r.cus
    np.ceil(rounds, out=rounds)
    if np.ndim(split) and not split_launch:  # the in-kernel reduction (`estimate._split_reduction`),
        # read by one workgroup per tile through its CU's L1: every round where a tile runs alone
        reduce = (split - 1.0) * (tile.m * tile.n * PARTIAL_BYTES * r.reduce_s_per_byte)
        if alone:
            reduce = reduce * rounds  # before `rounds` is reused below
    cost = np.multiply(rounds, ks, out=edges.buffer("cost") if own else None)
    cost *= per_cu
    if alone:  # x * 2.0 is exact: the same product
        cost += np.multiply(rounds, 2.0 * r.lat, out=rounds)  # the rounds are not needed after
    else:
        cost += 2.0 * r.lat
    if r.cluster <= 1.0 and own:  # `multicast_requests` without a cluster: the sum of the panels
        l2 = np.add(edges.a_part(tile.n), edges.b_part(tile.m), out=edges.buffer("l2"))
    else:
        l2 = multicast_requests(edges.a_part(tile.n), edges.b_part(tile.m), tiles_m, tiles_n, r.cluster)
    if not unit:
        l2 *= bs
    l2 *= ks
    l2 *= elem / r.bw.get("l2", np.inf)
    l2 += out_l2
    if np.ndim(split):
        split_on = split > 1
        if split_launch:
            cost = cost + np.where(split_on, split_launch, 0.0)
        else:
            cost = cost + reduce
        part = bs * m * n * PARTIAL_BYTES  # written once, read back once by the reduction
        l2 += part * (2.0 / r.bw.get("l2", np.inf))
        # beyond L2 where they do not fit it, as the estimator books them (`traffic.add_stream`,
        # within the kernel: the first cache that holds them)
        beyond, t_mall = part > r.caps.get("l2", np.inf), 0.0
        if "mall" in r.caps:
            t_mall = select(beyond, part * (2.0 / r.bw["mall"]), 0.0)
            beyond = beyond & (part > r.caps["mall"])
        base_mem = base_mem + select(beyond, part * (2.0 / r.bw[r.mem]), 0.0)
        cost += np.maximum(np.maximum(l2, base_mem), t_mall)
        return cost
    cost += np.maximum(l2, base_mem, out=l2)
    return cost


class _Edges:
    """Per-call arrays of the tile ranking that depend on one tile edge only (tiles along M and
    N, the A and B panel requests), computed once for the candidates that share that edge."""

    def __init__(self, m, n, rb: float):
        self.m, self.n, self.rb = m, n, rb
        self.shape = np.shape(m)
        self._c: dict = {}

    def buffer(self, name: str) -> np.ndarray:
        """A scratch float array of the shapes, reused by every candidate of the call (a cost is
        read before the next candidate's is made): one the cache has just written is still in
        it, where a fresh array of a chunk costs several times the arithmetic done in it."""
        return self._get(("buffer", name), lambda: np.empty(self.shape))

    def _get(self, key, make):
        v = self._c.get(key)
        if v is None:
            v = self._c[key] = make()
        return v

    def tiles_m(self, tm):
        return self._get(("tm", tm), lambda: np.ceil(self.m * (1.0 / tm)))

    def tiles_n(self, tn):
        return self._get(("tn", tn), lambda: np.ceil(self.n * (1.0 / tn)))

    def a_part(self, tn):  # A rows requested once per tile column
        return self._get(("a", tn), lambda: self.tiles_n(tn) * self.m)

    def b_part(self, tm):  # B columns requested once per tile row
        return self._get(("b", tm), lambda: self.tiles_m(tm) * self.n * self.rb)

    def grid1(self, tm, tn):
        """Tiles of one problem at split 1, in a scratch array that holds the last tile asked for
        (the ranking reads it for one candidate at a time)."""
        if self._c.get("grid1 of") != (tm, tn):
            np.multiply(self.tiles_m(tm), self.tiles_n(tn), out=self.buffer("grid1"))
            self._c["grid1 of"] = (tm, tn)
        return self._c[("buffer", "grid1")]


def split_k_reduce_kernel(arch) -> bool:
    """Whether the target's GEMM library reduces split-K partials in a kernel of its own
    (`gemm_split_k_reduce_kernel` in model_constants.yaml, read from kernel names; unlisted: no)."""
    from perfmodel.rates import constants

    entry = constants()["gemm_split_k_reduce_kernel"].get(arch.gfx)
    return bool(entry and entry["value"])


def _choose(
    arch, r: Rates, m, n, k, batch, elem: float, acc: float, out, rb: float = 1.0, k_tiles=None,
    may_split_k: bool = True, tile: str = "auto", split=None,
):  # fmt: skip
    """The configuration a library would pick per shape: every legal tile timed at split 1 and,
    where its grid underfills the CUs (and ``may_split_k`` allows it), at the split-K that fills
    them; the fastest kept. ``tile`` (``MxN[xK]``) and ``split`` (per shape, 0 = the model's
    choice) pin what the case names: only that tile is timed, only at that split. Returns
    (tile_m, tile_n, tile_k, lanes, split) arrays."""
    shape = m.shape
    if tile == "auto":
        cands = gemm_candidates(arch, elem, acc, k_tiles)
    else:
        cands = [user_tile(arch, tile, elem, acc, k_tiles)]
    pinned = None if split is None or not np.any(split) else np.broadcast_to(np.asarray(split, dtype=float), shape)
    # where split 1 may be kept, where the model may split (None: everywhere, the sweeps' fast path)
    at_one = None if pinned is None else pinned <= 1
    may_fill = may_split_k if pinned is None else (pinned == 0) & may_split_k
    best = np.full(shape, np.inf)
    # the winning candidate (only ever rises: later ones win), in one byte (an eighth of the traffic)
    ix = np.int8 if len(cands) <= 127 else np.int64
    idx = np.zeros(shape, dtype=ix)
    split_at = np.full(shape, -1, dtype=ix)  # the candidate whose split-K won last, at split_of
    split_of = np.ones(shape)
    base_mem = (batch * (m + n * rb) * k * elem + out) / r.bw[r.mem]
    out_l2 = out / r.bw.get("l2", np.inf)  # C written through L2, the same for every tile
    ks_of: dict[int, np.ndarray] = {}  # K steps at split 1, per K tile (shared by the tiles of one tk)
    split_launch = arch.launch_overhead_s if split_k_reduce_kernel(arch) else 0.0
    edges = _Edges(m, n, rb)
    deep_of: dict[int, np.ndarray] = {}  # K deep enough to split, per K tile
    unit = bool(np.all(batch == 1.0))  # one problem per shape: the ranking skips x * 1
    one = 1.0 if unit else batch
    for i, (tile, tk) in enumerate(cands):
        if tk not in ks_of:
            ks_of[tk] = np.ceil(k / (1.0 * tk)) * tk
        alone = runs_alone(arch, tile, tk, elem, acc)
        c = _choice_cost(r, m, n, k, one, tile, tk, 1.0, elem, base_mem, out_l2, arch.wave_size, ks_of[tk], rb, alone, edges=edges)
        if not unit:  # batched shapes only (a sweep of single GEMMs skips the call: the speed target)
            c = c + _reread_excess(arch, r, m, n, k, batch, tile, elem, rb)
        better = c < best if at_one is None else (c < best) & at_one
        _keep_better(best, c, better, at_one is None)
        np.maximum(idx, np.multiply(better, i, dtype=ix), out=idx)  # i where better (i exceeds every earlier winner)
        grid1 = edges.grid1(tile.m, tile.n) if unit else edges.grid1(tile.m, tile.n) * batch
        if tk not in deep_of:
            deep_of[tk] = k >= 4 * tk
        fill = grid1 <= arch.cus / 2  # the same test as grid1 * 2 <= cus for whole tile counts
        fill &= deep_of[tk]
        if may_fill is not True:
            fill &= may_fill
        if pinned is not None:
            fill |= pinned > 1
        if not fill.any():
            continue
        sel = np.nonzero(fill)
        sm, sn, sk, sb = m[sel], n[sel], k[sel], batch[sel]
        s = fill_split(arch.cus, grid1[sel], sk, tk)
        if pinned is not None:
            s = np.where(pinned[sel] > 1, pinned[sel], s)
        c = _choice_cost(r, sm, sn, sk, sb, tile, tk, s, elem, base_mem[sel], out_l2[sel], arch.wave_size, rb=rb, alone=alone, split_launch=split_launch)
        if not unit:  # each split re-reads its K slice of the panels, as `_gemm_parts` books them
            c = c + _reread_excess(arch, r, sm, sn, sk / s, sb, tile, elem, rb, copies=sb * s)
        better = c < best[sel]
        won = tuple(ix[better] for ix in sel)  # only the shapes where the split wins change
        best[won], idx[won], split_at[won], split_of[won] = c[better], i, i, s[better]
    chosen = np.where(split_at == idx, split_of, 1.0)  # a later winner at split 1 took idx past split_at
    table = np.array([(t.m, t.n, tk, t.lanes) for t, tk in cands], dtype=float)
    idx = idx.astype(np.intp)  # once, not in each `take`
    tm, tn, tk, lanes = (np.take(table[:, j], idx) for j in range(4))  # `table[idx, j]`, in a third of the time
    return tm, tn, tk, lanes, chosen


def _reread_excess(arch, r: Rates, m, n, k, batch, tile: Tile, elem: float, rb: float, copies=None):
    """Seconds by which a batched grid's operand re-reads that miss the L2s (`panel_traffic`'s
    ``l2_miss``) at the MALL's achievable rate outlast its device-memory reads (``mem``) at
    device memory's, both rates at the generic efficiencies (`Rates.reread`). `_choice_cost`
    ranks the memory path at theoretical rates, where the MALL (17.2 TB/s in the MI300X spec)
    never looks slower than HBM, while the estimator times those re-reads at the MALL's
    achievable rate, a fraction of that; so a short tile that re-reads every expert's weights
    once per row of tiles from the MALL won the ranking and then timed up to twice as slow as a
    taller one (MoE at 33-63 rows per expert). Zero without a MALL and for
    a shape of one problem (``batch`` 1); ``copies``: the grid's problems where K is split
    (batch x split), as `_gemm_parts` books them."""
    if r.reread is None:
        return 0.0
    t = panel_traffic(arch, m, n, tile.m, tile.n, k * elem, k * elem * rb, batch if copies is None else copies, cluster=r.cluster)
    excess = np.maximum(t["l2_miss"] / r.reread[0] - t["mem"] / r.reread[1], 0.0)
    # per shape, never per call: a shape of one problem ranks alike in any batch of shapes
    return np.where(np.asarray(batch) > 1.0, excess, 0.0)


def _keep_better(best: np.ndarray, c: np.ndarray, better: np.ndarray, everywhere: bool) -> None:
    """``best`` takes ``c`` where ``better`` (``c < best``, and only there where not
    ``everywhere``). The running best of the tile ranking is only compared with, never returned,
    so that is ``np.fmin`` in place: the smaller where ``c < best``, ``best`` where ``c`` is nan
    (``best`` itself never is), either of two equal values elsewhere (0.0 and -0.0 compare
    equal); on a mask that mixes True and False, as a sweep's do, a masked copy costs many times
    as much."""
    if everywhere:
        np.fmin(best, c, out=best)
    else:
        np.copyto(best, c, where=better)


# Output element sizes a case may ask for with ``out_dtype`` (int32 is the int8 GEMM accumulator).
OUT_DTYPES = {"fp32": 4.0, "int32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0}

# Scale granularity of quantized GEMMs (``scaling``), as (K elements per scale, rows of A per scale,
# columns of B per scale, bytes per scale):
# - block: DeepSeek-V3's fine-grained FP8 (arXiv 2412.19437, sec. 3.3.2): 1x128 tiles of the
#   activations, 128x128 blocks of the weights, fp32 scales; partial sums are rescaled and
#   accumulated on the vector units every 128 elements of K ("promotion to CUDA cores").
# - mx: OCP Microscaling (MX) formats v1.0: one E8M0 (1-byte) scale per 32 elements along K, for
#   A and B alike.
SCALING = {"block": (128.0, 1.0, 128.0, 4.0), "mx": (32.0, 1.0, 1.0, 1.0)}
# Matrix instructions that apply MX scales themselves: CDNA4's V_MFMA_SCALE_F32_*_F8F6F4 (AMD
# Instinct MI300/MI350 ISA: CDNA4 instruction set, scaled MFMA); elsewhere the accumulator is
# rescaled on the VALU per scale block.
NATIVE_MX = ("gfx950",)


def scale_k_tiles(arch, pipe: str, scaling: str) -> tuple[int, ...] | None:
    """K steps a kernel that rescales per scale block may take: whole scale blocks, so each K
    step's partial sums are promoted once with one scale (a 128-element DeepSeek block is deeper
    than the default K steps; AITER's CK blockscale instances, csrc/ck_gemm_a8w8_blockscale/
    legacy_gemm_a8w8_blockscale_instance.py: ScaleBlockK 128, KPerBlock 128 or 256); of the default
    K steps (`tiles.K_TILES`), those that hold whole blocks (MX's 32). None: no restriction."""
    if not rescales_on_valu(arch, pipe, scaling):
        return None
    kb = int(SCALING[scaling][0])
    whole = tuple(t for t in K_TILES if t % kb == 0)
    if whole == K_TILES:
        return None
    return whole or (2 * kb, kb)


def rescales_on_valu(arch, pipe: str, scaling: str) -> bool:
    """Whether the kernel rescales partial sums on the VALU per scale block: it then keeps two
    fp32 accumulators per output (the matrix instructions' partial for the current block, and the
    running sum it is promoted into: DeepSeek-V3 sec. 3.3.2, "partial results will be copied to
    FP32 registers on CUDA Cores"), which halves the tile the register file holds."""
    if scaling not in SCALING:
        return False
    return not (scaling == "mx" and arch.gfx in NATIVE_MX) and pipe != "valu"


def add_scaling(work: Work, arch, pipe: str, m, n, k, batch, scaling: str) -> None:
    """Scale traffic and, where the matrix pipe does not apply the scales, the per-K-block
    rescaling of the fp32 accumulators on the VALU: two FLOPs (an FMA) per output element per
    scale block, in the main loop between matrix products (a dependent chain in each wave)."""
    if scaling in ("none", "tensor"):
        if scaling == "tensor":  # one scale per tensor, applied once in the epilogue
            work.add_flops("valu", "fp32", 2.0 * m * n * batch)
        return
    kb, rows, cols, sb = SCALING[scaling]
    blocks = np.ceil(k / kb)
    traffic.add_stream(work, arch, read=batch * (np.ceil(m / rows) + np.ceil(n / cols)) * blocks * sb)
    if scaling == "mx" and arch.gfx in NATIVE_MX:
        work.notes.append(f"{scaling} scales applied by the matrix instructions ({arch.gfx})")
        return
    work.add_flops("valu", "fp32", 2.0 * m * n * batch * blocks)
    _block_scaled_rate(work, arch, pipe, scaling)
    work.dependent.update(
        {f"{pipe}:{f}" for f in ("fp8", "fp6", "fp4", "int8") if f"{pipe}:{f}" in work.flops}
    )
    work.dependent.add("valu:fp32")
    work.notes.append(
        f"{scaling} scaling: fp32 accumulators rescaled on the VALU every {int(kb)} elements of K"
    )


def _block_scaled_rate(work: Work, arch, pipe: str, scaling: str) -> None:
    """Where block-scaled FP8 runs its matrix instructions at another dtype's rate on this
    target (`model_constants.yaml` block_scaled_fp8_rate_as: gfx950, where the CK kernels that
    serve it select the single-rate MFMA), time its FLOPs at that rate (`Work.rate_as`)."""
    from perfmodel.rates import constants

    c = constants().get("block_scaled_fp8_rate_as", {}).get(arch.gfx)
    key = f"{pipe}:fp8"
    if c is None or scaling != "block" or key not in work.flops:
        return
    work.rate_as[key] = (c["rate_as"], c["why"], True)


# Weight-only quantization (``weight_dtype``): B is stored in a narrower type than the
# activations and each workgroup dequantizes the B tile it loads, in the main loop, before the
# matrix instructions read it (AWQ/GPTQ/Marlin W4A16 and W8A16 kernels). Per weight element:
# (integer bit operations, VALU FLOP-equivalents in the activations' packed type). The fast
# conversions of FasterTransformer/CUTLASS (`FastInterleavedAndBiasedNumericArrayConverter`,
# reused by AWQ and vLLM's Marlin `dequant.h`) turn 8 int4 into 8 fp16 with 4 lop3 + 1 shift
# and 2 sub + 2 fma on half2, and 4 uint8 into 4 fp16 with 2 byte-permutes and 2 sub on half2;
# FP4/FP8 -> FP16 is the same bit-op-then-one-flop pattern (Marlin dequant.h). The group scale
# is one more half2 multiply (or FMA with the zero point) per two elements. A packed half2
# instruction counts 4 FLOPs (the packed FMA the VALU rate is quoted in), so convert + scale is
# one packed instruction per element: 4 FLOP-equivalents.
WEIGHT_DTYPES = ("int8", "int4", "fp8", "fp4")
DEQUANT_INT_OPS = {"int4": 5.0 / 8.0, "fp4": 5.0 / 8.0, "int8": 2.0 / 4.0, "fp8": 2.0 / 4.0}
DEQUANT_FLOPS = 2.0  # per element and per fp op (convert, then scale): half a packed instruction
SCALE_BYTES = 2.0  # one fp16/bf16 scale per group of K elements of each column of B

WEIGHT_ONLY_PARAMS = (
    Param("weight_dtype", str, "auto", choices=("auto", *WEIGHT_DTYPES), help="type B (the weights) is stored in, dequantized to dtype in the main loop: int4 = W4A16 (AWQ/GPTQ/Marlin), int8 = W8A16; auto: dtype"),
    Param("group_size", int, 128, minimum=-1, help="K elements per weight scale (weight_dtype); 0 or -1 (GPTQ's spelling): one scale per output column"),
)


# What a case may pin of the configuration (gemm): the kernel the user runs, not the model's pick.
CONFIG_PARAMS = (
    Param("tile", str, "auto", pattern=TILE_PATTERN, pattern_text=TILE_FORM, help="the macro-tile (and K step) the kernel runs; auto: the model's ranking picks one"),
    Param("split_k", int, 0, minimum=0, help="workgroups that share one tile's K (partial sums reduced after); 1: none; 0: the model's choice"),
)


def config_args(p: dict) -> dict:
    """The gemm_work keywords of a case's pinned configuration (`CONFIG_PARAMS`); a split of K
    into more parts than K has elements is refused (each workgroup needs one)."""
    split, k = np.broadcast_arrays(np.asarray(p.get("split_k", 0), dtype=float), np.asarray(p["k"], dtype=float))
    over = split > k
    if np.any(over):
        raise InputError(f"expected at most k ({k[over].flat[0]:.0f}) ways, got {split[over].flat[0]:.0f}", key="split_k")
    return {"tile": p.get("tile", "auto"), "split_k": p.get("split_k", 0)}


def weight_only_args(p: dict) -> dict:
    """The weight-only keys of a case, as `gemm_work` takes them."""
    return {q.name: p.get(q.name, q.default) for q in WEIGHT_ONLY_PARAMS}


def weight_bytes_per_k(weight_dtype: str, group_size, k):
    """Bytes of B per K element of one column: the packed weight plus its share of the group
    scales (``group_size`` 0 or -1: one scale per column, applied once in the epilogue)."""
    g, k = np.asarray(group_size, dtype=float), np.asarray(k, dtype=float)
    per = np.where(g > 0, np.minimum(g, k), k)  # at least one scale per column
    return dtypes.size(weight_dtype) + SCALE_BYTES / per


def add_weight_only(work: Work, arch, dtype: str, pipe: str, pdt: str, m, n, k, batch, tm, weight_dtype, group_size):
    """The main-loop dequantization of a weight-only GEMM: each of the ceil(m / tile_m) tile rows
    converts the whole of B (its workgroups do not share registers), on the VALU, between the
    load and the matrix instruction: a dependent chain in each wave, like block scaling."""
    elems = np.ceil(m / tm) * n * k * batch
    g = np.asarray(group_size, dtype=float)
    vd = dtypes.valu_dtype(arch, dtype)
    # grouped scales multiply every element; per-column scales are applied to C in the epilogue
    fp = np.where(g > 0, 2.0 * DEQUANT_FLOPS * elems, DEQUANT_FLOPS * elems + 2.0 * m * n * batch)
    work.add_flops("valu", vd, fp)
    work.add_iops("valu", "int32", DEQUANT_INT_OPS[weight_dtype] * elems)
    work.dependent.update({f"{pipe}:{pdt}", f"valu:{vd}", "valu:int"})
    work.notes.append(
        f"weight-only {weight_dtype}: B read packed with {dtypes.size(weight_dtype):g} B per weight"
        f" plus a {SCALE_BYTES:g} B scale per group, dequantized to {dtype} on the VALU in the main loop"
    )


# Skinny GEMMs on AMD run a GEMV kernel, not a macro-tile: vLLM's ROCm linear layers send fp16/bf16
# products with at most 4 rows of activations (and K a multiple of 8) to wvSplitK
# (vllm/model_executor/layers/utils.py `rocm_unquantized_gemm_impl`: `m > 8 and 0 < n <= 4`, in
# its naming), and AITER tunes dedicated decode kernels for M = 1..4
# (aiter/configs/bf16_decode_gfx942_m1_m4_canary.csv). vLLM dispatches it on gfx9; the RDNA3
# measurements of the validation set (d3-vllm-wvsplitk-w7900) run the same kernel ported to
# gfx1100, so RDNA keeps the rule. wvSplitK (csrc/rocm/skinny_gemms.cu @ a590bc5) is persistent:
# one workgroup of 64 x 16 lanes per CU (it reserves the LDS for the activations), each wave
# owning YTILE weight rows (columns of C) and splitting K over its lanes, which load A_CHUNK = 8
# elements UNRL times per step; `WVSPLIT_TILE` picks (YTILE, UNRL) from sYT = ceil(N / (CUs x 4))
# (N: C's columns): (1, 4) at sYT <= 1; (2, 2) for one row, where the activations overflow the
# LDS, or at sYT <= 8; (3, 2) at sYT <= 12; else (4, 1) for four rows, (4, 2) otherwise. Its C is
# written in the input type.
GEMV_MAX_M = 4
GEMV_WAVES = 16
GEMV_A_CHUNK = 8


def gemv_rows(arch, dtype: str, m, k, out_dtype: str, weight_only: bool, scaling: str) -> np.ndarray:
    """Where a skinny GEMM runs the GEMV kernel above (bool per shape)."""
    dense16 = dtype in ("fp16", "bf16") and out_dtype in ("auto", dtype) and not weight_only and scaling == "none"
    if arch.vendor == "NVIDIA" or not dense16:
        return np.zeros(np.shape(m), dtype=bool)
    m, k = np.broadcast_arrays(m, k)
    rows = m <= GEMV_MAX_M
    if rows.ndim == 0:
        return rows & (np.mod(k, 8) == 0)
    # K tested only where M is small enough: a float remainder costs ~20 ns a shape
    few = np.nonzero(rows)
    rows[few] = np.mod(k[few], 8) == 0
    return rows


def runs_gemv(arch, dtype: str, m, k, out_dtype: str, weight_dtype: str, scaling: str, tile: str, split_k) -> np.ndarray:
    """Where a linear layer of these shapes runs the GEMV (bool per shape): `gemv_rows`, unless the
    case pins its configuration (a pinned tile or split never runs the GEMV)."""
    weight_only = weight_dtype not in ("auto", dtype)
    return gemv_rows(arch, dtype, m, k, out_dtype, weight_only, scaling) & (tile == "auto") & (np.asarray(split_k) == 0)


def _put(values, where: tuple, part) -> np.ndarray:
    """A float copy of ``values`` with ``part`` (a scalar, or one value per index) at ``where``."""
    out = np.array(values, dtype=float)
    out[where] = part
    return out


def gemv_config(arch, m, n, k, batch) -> dict:
    """The GEMV's launch per shape: ``tm`` 16, the model's smallest matrix tile (the kernel's
    4x4x4 bf16 MFMA or fp16 dot2 work never bounds it); ``tn`` YTILE x waves columns per
    workgroup, with as many waves, up to 16, as spread the columns over every CU (`mindiv(N,
    CUs x YTILE, 16)`); ``tk`` a wave's lanes x A_CHUNK x UNRL elements of K per step; no split-K
    (K is split across one wave's lanes and reduced in registers); ``flight``: each lane keeps
    YTILE x UNRL loads of A_CHUNK weights in flight; ``vgprs``: those, the matching activations
    from LDS and m x YTILE fp32 sums, per lane."""
    syt = np.ceil(n / (arch.cus * 4.0))
    fits_lds = k * m <= arch.capacity("lds") / arch.cus / 2.0  # `max_lds_len`: LDS bytes / 2, in elements
    ytile = np.select([syt <= 1, (m == 1) | ~fits_lds | (syt <= 8), syt <= 12], [1.0, 2.0, 3.0], 4.0)
    unrl = np.select([ytile == 1, ytile < 4, m == 4], [4.0, 2.0, 1.0], 2.0)
    waves = np.clip(np.ceil(n * batch / (ytile * arch.cus)), 1.0, GEMV_WAVES)
    loads = unrl * GEMV_A_CHUNK * 2.0  # bytes of 2-byte elements per lane and row, per step
    return {
        "tm": 16.0,
        "tn": waves * ytile,
        "tk": arch.wave_size * GEMV_A_CHUNK * unrl,
        "lanes": waves * arch.wave_size,
        "split": 1.0,
        "flight": arch.wave_size * ytile * loads,
        "vgprs": ((ytile + m) * loads + 4.0 * m * ytile) / 4.0,
    }


def gemm_work(
    arch,
    dtype: str,
    m,
    n,
    k,
    batch,
    *,
    a_unique=None,
    out_scale=1.0,
    out_dtype: str = "auto",
    weight_dtype: str = WEIGHT_ONLY_PARAMS[0].default,
    group_size=WEIGHT_ONLY_PARAMS[1].default,
    scaling: str = "none",
    work: Work | None = None,
    linear_layer: bool = False,
    may_split_k: bool = True,
    tile: str = "auto",
    split_k=0,
):
    """FLOPs, bytes and launch of ``batch`` GEMMs C[m,n] = A[m,k] B[k,n] on the chosen tile.

    ``a_unique``: distinct bytes of A per problem where fewer than m*k elements (conv2d).
    ``out_scale``: share of C the epilogue writes (0.5 for MoE's fused up+gate -> SiLU*up).
    ``out_dtype``: the type of C when it is not the usual one for ``dtype`` (see `out_size`).
    ``weight_dtype``, ``group_size``: B stored narrower than ``dtype`` and dequantized in the
    main loop (W4A16, W8A16; see `add_weight_only`).
    ``linear_layer``: a plain product (a linear layer, a router), which may run the GEMV below;
    grouped, expert and implicit-convolution GEMMs run their tile kernels at any m.
    ``may_split_k``: False where the epilogue applies a nonlinear function to the finished sums
    (a fused activation: act(sum of partials) is not the sum of act(partials)), so K cannot be
    split across workgroups without a separate reduction kernel.
    ``tile`` (``MxN[xK]``), ``split_k`` (per shape, 0 = the model's choice): the configuration the
    case pins (the kernel the user runs); a pinned case never runs the GEMV below.
    Returns (work, launch).
    """
    work = work if work is not None else Work()
    m, n, k, batch = (np.asarray(v, dtype=float) for v in (m, n, k, batch))
    shape = np.broadcast(m, n, k, batch).shape
    m, n, k, batch = (np.broadcast_to(v, shape) for v in (m, n, k, batch))
    elem, acc = dtypes.size(dtype), acc_size(dtype)
    out_elem = OUT_DTYPES[out_dtype] if out_dtype != "auto" else out_size(dtype)
    pipe, pdt = matrix_pipe(arch, dtype, work.notes)
    if rescales_on_valu(arch, pipe, scaling):  # a second fp32 accumulator per output (see SCALING)
        acc = 2.0 * acc
    r = Rates.of(arch, pipe, pdt)
    out = batch * m * n * out_elem * out_scale
    weight_only = weight_dtype not in ("auto", dtype)
    rb_choice = dtypes.size(weight_dtype) / elem if weight_only else 1.0
    k_tiles = scale_k_tiles(arch, pipe, scaling)
    split_k = np.broadcast_to(np.asarray(split_k, dtype=float), shape)
    tm, tn, tk, lanes, split = _choose(arch, r, m, n, k, batch, elem, acc, out, rb_choice, k_tiles, may_split_k, tile, split_k)
    gemv = runs_gemv(arch, dtype, m, k, out_dtype, weight_dtype, scaling, tile, split_k) & linear_layer
    if np.any(gemv):
        work.note("a GEMV kernel (at most 4 rows, fp16/bf16 on AMD: vLLM wvSplitK, AITER decode): tile = 16 padded rows x the columns of one workgroup", gemv)
        on = np.nonzero(gemv)  # few shapes of a sweep: configured alone, then put in place
        g = gemv_config(arch, m[on], n[on], k[on], batch[on])
        tm, tn, tk, lanes, split = (
            _put(v, on, g[f]) for f, v in zip(("tm", "tn", "tk", "lanes", "split"), (tm, tn, tk, lanes, split), strict=True)
        )
    rb = weight_bytes_per_k(weight_dtype, group_size, k) / elem if weight_only else 1.0
    t, lds_r, lds_w, partial = _gemm_parts(arch, m, n, k, batch, tm, tn, tk, lanes, split, elem, a_unique, rb)
    if np.any(gemv):  # the weights go from memory to registers; only A is staged in LDS, read by every wave
        lds_w = select(gemv, t["grid"] * m * k * elem, lds_w)
        lds_r = select(gemv, lds_w * lanes / arch.wave_size, lds_r)
    work.add_flops(pipe, pdt, 2.0 * m * n * k * batch)
    if weight_only:
        add_weight_only(work, arch, dtype, pipe, pdt, m, n, k, batch, tm, weight_dtype, group_size)
    add_operand_reads(work, arch, t)
    traffic.add_stream(work, arch, write=out)
    if np.any(split > 1):
        traffic.add_stream(work, arch, partial, partial, partial, within_kernel=True)
        work.note("split-K where the tiles underfill the CUs: fp32 partial sums written and reduced", split > 1)
    if "lds" in arch.levels:
        work.add_bytes("lds", read=lds_r, write=lds_w)
    launch = Launch(
        grid=t["grid"],
        workgroup_size=lanes,
        vgprs=vgprs(arch, tm * tn * acc, (tm + tn) * tk * elem, lanes),
        # double-buffered K steps; a pinned tile (`tiles.user_tile`) may outgrow the LDS, which it then fills
        lds_bytes=np.minimum(2.0 * (tm + tn) * tk * elem, lds_limit(arch)),
        tile_m=tm,
        tile_n=tn,
        tile_k=tk,
        serial_latencies=2.0,  # prologue load + epilogue store (split-K: the reduction pass adds one)
        k_steps=np.ceil(k / (split * tk)),
        # the matrix pipe runs whole macro-tiles: Tensile/hipBLASLt and CK guard only the global
        # loads and stores at the matrix edges, so a partial tile's missing rows and columns cost
        # matrix-pipe time like real ones
        useful_fraction=m * n / (np.ceil(m / tm) * tm * np.ceil(n / tn) * tn),
        epilogue_bytes=tm * tn * select(split > 1, PARTIAL_BYTES, out_elem * out_scale),
    )
    if np.any(gemv):  # one GEMV workgroup per CU: it holds the LDS
        lds_cu = min(arch.capacity("lds") / arch.cus, lds_limit(arch))
        launch.lds_bytes = select(gemv, lds_cu, launch.lds_bytes)
        launch.vgprs = _put(launch.vgprs, on, g["vgprs"])
        launch.bytes_in_flight_per_wave = _put(np.zeros(shape), on, g["flight"])  # 0: the default elsewhere
    if np.any(split > 1):
        launch.split_k = split
        if split_k_reduce_kernel(arch):  # one more dispatch; its load-to-store chain is in its launch floor
            launch.kernels = select(split > 1, 2.0, 1.0)
        else:  # reduced inside the GEMM kernel: one more round trip on its critical path
            launch.serial_latencies = select(split > 1, 3.0, 2.0)
            # and its last workgroup per tile reads the other splits' partial tiles alone
            launch.reduce_bytes = select(split > 1, (split - 1.0) * tm * tn * PARTIAL_BYTES, 0.0)
    stage_bytes = (tm + tn * rb) * tk * elem  # one K step of the A and B panels
    stages = smem_stages(arch, stage_bytes)
    if stages is not None:  # a shared-memory pipeline: stages - 1 K steps in flight
        launch.prefetch_depth = stages - 1.0
        launch.bytes_in_flight_per_wave = (stages - 1.0) * stage_bytes / np.ceil(lanes / arch.wave_size)
    return work, launch
