"""Tile choice and tile traffic: the one implementation shared by every tiled kernel model.

GEMM, grouped GEMM, conv2d (implicit GEMM), attention and MoE all run as a grid of workgroups,
each computing one output tile from a row panel of one operand and a column panel of the other.
This module decides the tile like a good library would (hipBLASLt / CK / Tensile: evaluate the
legal macro-tiles and keep the fastest) and derives the bytes each memory level sees from the
tile, the wave of concurrent workgroups and the XCD structure. See ``docs/models-tiled.md``.

Everything here is vectorised over a batch of shapes: a shape parameter is a float64 array and
every result has its shape. Loops run only over the handful of candidate tiles.
"""

from __future__ import annotations

import functools
import math
import weakref
from dataclasses import dataclass

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.estimate import SHORTCUT_MIN, clip_from_one, select, workgroups_per_cu
from perfmodel.models import traffic
from perfmodel.work import Work

# Output (C) element size for input types whose products are not stored in the input type:
# fp8/fp6/fp4 GEMMs write bf16 (hipBLASLt's usual fp8 -> bf16 output), int8 GEMMs write int32.
OUT_SIZE = {"fp8": 2.0, "fp6": 2.0, "fp4": 2.0, "int8": 4.0, "int4": 4.0}
LOW_PRECISION = ("fp8", "fp6", "fp4", "int8", "int4")
PARTIAL_BYTES = 4.0  # split-K / split-KV partial sums are fp32


def out_size(dtype: str) -> float:
    return OUT_SIZE.get(dtype, dtypes.size(dtype))


def acc_size(dtype: str) -> float:
    """Accumulator bytes per output element: fp64 accumulates in fp64, everything else in fp32/int32."""
    return 8.0 if dtype == "fp64" else 4.0


# --- which pipe runs the matrix products ---------------------------------------------------


def matrix_pipe(arch, dtype: str, notes: list[str]) -> tuple[str, str]:
    """(pipe, dtype) that runs the matrix products of ``dtype`` on ``arch``.

    The arch's matrix pipe when it has a rate for the dtype; otherwise VALU in the closest VALU
    type, with a note. Narrow types (fp8/fp6/fp4/int8) that no pipe of the arch supports raise
    the standard InputError from ``arch.rate``.
    """
    mp = arch.matrix_pipe
    if mp and arch.has(mp, dtype):
        return mp, dtype
    if dtype in LOW_PRECISION:
        for pipe in arch.pipes():
            if arch.has(pipe, dtype):
                notes.append(
                    f"{arch.key} has no {dtype} rate on the {mp or 'matrix'} pipe: matrix products counted on {pipe}:{dtype}"
                )
                return pipe, dtype
        arch.rate(mp or "valu", dtype)  # raises InputError naming what the arch has
    vd = dtypes.valu_dtype(arch, dtype)
    notes.append(
        f"{arch.key} has no {dtype} rate on the {mp or 'matrix'} pipe: matrix products counted on valu:{vd}"
    )
    return "valu", vd


def flop_rate(arch, pipe: str, dtype: str) -> float:
    """Device FLOP/s of (pipe, dtype) at the peak clock (used only to rank candidate tiles)."""
    return arch.peak_flops(pipe, dtype)


# --- candidate tiles -----------------------------------------------------------------------


@dataclass(frozen=True)
class Tile:
    m: int  # macro-tile rows (output rows per workgroup)
    n: int  # macro-tile columns
    lanes: int  # work-items per workgroup


# Macro-tiles of hipBLASLt/Tensile/CK kernels: 256 lanes (4 wave64 / 8 wave32) for the large
# tiles, 64 lanes for the skinny ones used by decode GEMMs (AMD's fp16/bf16 products of at most
# 4 rows run the GEMV of `gemm_tiling.gemv_config` instead). All are multiples of 16, the M and
# N of the smallest MFMA/WMMA instruction shapes (16x16xK) on every target. The 64 lanes are the
# model's, not the libraries' (their skinny kernels run four waves): with four, the skinny
# block-scaled FP8 GEMMs came out too fast, see docs/models-tiled.md "Known weaknesses".
GEMM_TILES = (
    Tile(256, 256, 256),
    Tile(256, 128, 256),
    Tile(128, 256, 256),
    Tile(128, 128, 256),
    Tile(128, 64, 256),
    Tile(64, 128, 256),
    Tile(64, 64, 256),
    Tile(32, 64, 64),
    Tile(16, 64, 64),
)
# Tensile's widths between the powers of two, which hipBLASLt uses to fill the CUs better (it
# runs no stream-K on gfx942: `model_constants.yaml` gemm_stream_k): MT256x192 is dispatched in
# the TraceLens MI300X traces (sglang Qwen3-8B prefill, torch.compile) and fills the 304 CUs of
# AMD's MI300X FP8 MAF GEMM (M=4096, N=3648 = 19 x 192); MT256x192 and MT192x256 are among the
# kernels hipBLASLt loaded in the MI350X rocprofv3 trace (its kernel_symbols; it also has
# MT128x192/MT192x128, left out: every candidate slows the vectorised ranking; adding these two
# took `benchmarks/predict_speed.py`'s sweep from 1.39 to 1.22 M GEMM estimates/s, all four to
# 0.98 M, the same minute). AMD targets only: no cuBLAS/CUTLASS kernel of the H100 traces uses them.
TENSILE_TILES = (Tile(256, 192, 256), Tile(192, 256, 256))
K_TILES = (64, 32, 16)  # depth of one K step in elements; the deepest that fits LDS is used
SPLITS = (2, 4, 8, 16, 32, 64)  # split-K / split-KV factors tried when the grid underfills the CUs


def _whole_powers_of_two():
    """``e -> 2.0 ** e`` for whole-number exponents (the floor or ceil of a log2, in the split
    and wave counts): `np.exp2`, a sixth of the time of the general power function, where it
    gives the very bits of ``2.0 **`` on every whole exponent a double has and on inf and nan
    (checked here, once, at import), else ``2.0 **`` itself."""
    e = np.concatenate((np.arange(-1080.0, 1030.0), [np.inf, -np.inf, np.nan]))
    with np.errstate(over="ignore"):
        exact = np.exp2(e).tobytes() == (2.0**e).tobytes()
    return np.exp2 if exact else lambda e: 2.0**e


pow2 = _whole_powers_of_two()

# 8-bit register fields address 256 architectural VGPRs per lane (AMD ISA guides; a CUDA thread
# addresses at most 255 registers); CDNA's MFMA targets add 256 accumulation registers (AGPRs;
# unified with the VGPRs from gfx90a on). A larger file (RDNA3's 1536 per wave32 lane) holds more
# waves, not a bigger one. On AMD accumulators may take half of what one lane addresses; the
# other half holds the MFMA/WMMA operand fragments, the global-load staging (no asynchronous
# copy to LDS), addresses.
ADDRESSABLE_VGPRS = 256
ACC_VGPRS_MFMA = 256
# NVIDIA: FlashAttention-2 (sm80, csrc/flash_attn/src/flash_bwd_launch_template.h @ 073afd5:
# Flash_bwd_kernel_traits<128, 64, 128, 8 warps>) and FlashAttention-3 (sm90,
# hopper/flash_bwd_launch_template.h @ fc8e93c: 64 x 128 at head dim 128, 128 x 128 at 64, two
# MMA warpgroups that setmaxnreg gives 240 registers each, hopper/flash_bwd_kernel_sm90.h @
# 51b5c15) run the backward with dK, dV (2 x 128 x d) and S, dP (2 x 64 x 128 at d = 128,
# 2 x 128 x 128 at d = 64) in fp32 over 256 threads: 192 accumulator registers a thread.
# mma.sync fragments are a few registers per K step, cp.async and TMA copy to shared memory
# without staging registers, and wgmma reads its operands from shared memory.
ACC_VGPRS_NVIDIA = 192


def lds_limit(arch) -> float:
    """Bytes of LDS (shared memory) one workgroup may allocate: the budget of a tile's staged
    K steps and of a row kernel's on-chip row (`streaming_common.row_budget`)."""
    return float(arch.occupancy["lds_per_workgroup"].value)


def smem_stages(arch, stage_bytes):
    """Stages of a shared-memory main-loop pipeline on a target whose GEMMs run one
    (model_constants.yaml `gemm_smem_stages`: Hopper's TMA kernels, Ampere's cp.async stages),
    else None: as many K steps as shared memory holds beside the epilogue's carve-out, at most
    the library's cap."""
    from perfmodel.rates import constants

    c = constants()["gemm_smem_stages"].get(arch.gfx)
    if c is None:
        return None
    room = lds_limit(arch) - c["carveout_kib"] * 1024.0
    return np.clip(np.floor(room / np.asarray(stage_bytes, dtype=float)), 2.0, c["max_stages"])


def lane_registers(arch) -> float:
    """Registers one lane can address (see ADDRESSABLE_VGPRS): 255 for a CUDA thread; on AMD the
    256 architectural VGPRs plus CDNA's 256 accumulation registers, at most the file's share."""
    if arch.vendor == "NVIDIA":
        return float(ADDRESSABLE_VGPRS - 1)
    addressable = ADDRESSABLE_VGPRS + (ACC_VGPRS_MFMA if "mfma" in arch.pipes() else 0)
    return min(float(arch.occupancy["vgprs_per_lane"].value), addressable)


def acc_vgpr_budget(arch) -> float:
    """Registers per lane a tile's fp32 accumulators may take (see ADDRESSABLE_VGPRS)."""
    if arch.vendor == "NVIDIA":
        return float(ACC_VGPRS_NVIDIA)
    return lane_registers(arch) / 2


def max_lanes(arch) -> float:
    q = arch.occupancy.get("max_workgroup_size")
    return float(q.value) if q is not None else 1024.0


def vgprs(arch, acc_bytes_per_wg, stage_bytes_per_wg, lanes):
    """VGPRs per lane: accumulators plus one K step of global->LDS staging, rounded to the granule."""
    g = arch.occupancy.get("vgpr_granule")
    g = float(g.value) if g is not None else 1.0
    regs = (np.asarray(acc_bytes_per_wg) + np.asarray(stage_bytes_per_wg)) / (4.0 * np.asarray(lanes))
    return np.ceil(regs / g) * g


# runs_alone per arch (by identity; dropped with the arch) and (tile, tk, elem, acc): a sweep
# asks the same few questions once per chunk, each ~60 us of numpy on scalars
_ALONE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def runs_alone(arch, tile: Tile, tk: int, elem: float, acc: float) -> bool:
    """Whether one workgroup of this tile fills a CU, so no other tile hides its prologue and
    epilogue: the estimator's occupancy (`estimate.workgroups_per_cu`) of the registers and the
    double-buffered LDS that `gemm_tiling.gemm_work` gives the tile's launch (remembered per arch)."""
    known = _ALONE.setdefault(arch, {})
    key = (tile, tk, elem, acc)
    if key not in known:
        known[key] = _runs_alone(arch, tile, tk, elem, acc)
    return known[key]


def _runs_alone(arch, tile: Tile, tk: int, elem: float, acc: float) -> bool:
    regs = vgprs(arch, tile.m * tile.n * acc, (tile.m + tile.n) * tk * elem, tile.lanes)
    wgs, _ = workgroups_per_cu(arch, tile.lanes, regs, 2.0 * (tile.m + tile.n) * tk * elem)
    return bool(wgs < 2)


def gemm_candidates(arch, elem: float, acc: float, k_tiles=None) -> list[tuple[Tile, int]]:
    """Legal (tile, k_tile) pairs: double-buffered A and B K-steps fit the LDS of one workgroup,
    the fp32 accumulators fit the register budget, the workgroup fits the lane limit. ``k_tiles``:
    the K steps allowed, deepest first (default `K_TILES`; block-scaled GEMMs step whole scale
    blocks, `gemm_tiling.scale_k_tiles`)."""
    k_tiles = k_tiles or K_TILES
    out = []
    lds, budget, lanes_max = lds_limit(arch), acc_vgpr_budget(arch), max_lanes(arch)
    for t in GEMM_TILES + (TENSILE_TILES if arch.vendor == "AMD" else ()):
        if t.lanes > lanes_max or t.lanes % arch.wave_size:
            continue
        if t.m * t.n * acc / (4.0 * t.lanes) > budget:
            continue
        tk = next((k for k in k_tiles if 2 * (t.m + t.n) * k * elem <= lds), None)
        if tk is not None:
            out.append((t, tk))
    if not out:  # nothing fits (tiny LDS): the smallest tile at the smallest K step
        out.append((GEMM_TILES[-1], k_tiles[-1]))
    return out


TILE_PATTERN = r"[1-9][0-9]*x[1-9][0-9]*(x[1-9][0-9]*)?"
TILE_FORM = "auto, MxN or MxNxK (a macro-tile, e.g. 256x128 or 256x128x64)"


def user_tile(arch, text: str, elem: float, acc: float, k_tiles=None) -> tuple[Tile, int]:
    """The (tile, k_tile) a case pins with ``tile=MxN[xK]``: the kernel the user runs, not the
    one the model would rank first, so the model's own legality rules (half the registers for
    accumulators, double-buffered LDS) do not apply: library kernels step outside them (Tensile's
    MT320x224x64 on MI300X holds 280 accumulators a lane and loads A straight to registers,
    `DTVA1`, beside a single LDS buffer, `LDSB0`). Lanes as the model's own tiles have them (256
    from 64x64 up, 64 below), doubled only while the accumulators exceed every register a lane
    has; K the given depth, else the deepest of ``k_tiles`` whose two staged steps fit the LDS
    (one step, else the shallowest). Refused (`InputError`) only where no workgroup of this GPU
    could hold the accumulators at all."""
    dims = [int(v) for v in text.split("x")]
    tm, tn = dims[0], dims[1]
    regs = lane_registers(arch)
    lanes, lanes_max = (256 if tm * tn >= 64 * 64 else 64), max_lanes(arch)
    lanes = max(lanes, arch.wave_size)
    while tm * tn * acc / (4.0 * lanes) > regs and lanes * 2 <= lanes_max:
        lanes *= 2
    if tm * tn * acc / (4.0 * lanes) > regs:
        raise InputError(
            f"{tm}x{tn}: its accumulators need {tm * tn * acc / (4.0 * lanes):.0f} registers per lane at "
            f"{lanes:.0f} lanes; a lane of {arch.key} has {regs:.0f}",
            key="tile",
        )
    if len(dims) == 3:
        return Tile(tm, tn, int(lanes)), dims[2]
    lds, steps = lds_limit(arch), k_tiles or K_TILES
    fits = [k for k in steps if 2 * (tm + tn) * k * elem <= lds] or [k for k in steps if (tm + tn) * k * elem <= lds]
    return Tile(tm, tn, int(lanes)), (fits or [steps[-1]])[0]


# Hopper's wgmma: the four warps of a warpgroup issue one matrix instruction whose shared-memory
# operands are read once for the whole group (NVIDIA PTX ISA, "Asynchronous Warpgroup Level
# Matrix Multiply-Accumulate Instructions": wgmma.mma_async is executed by a warpgroup of four
# contiguous warps, B (and optionally A) through a shared-memory matrix descriptor). Elsewhere
# (MFMA, WMMA, Ampere mma.sync after ldmatrix) each wave reads its own operand fragments.
WAVES_SHARING_OPERANDS = {"sm_90": 4}


def waves_sharing_operands(arch) -> float:
    """Waves that issue one matrix instruction together and so read its LDS operands once."""
    return float(WAVES_SHARING_OPERANDS.get(arch.gfx, 1))


def operand_readers(arch, waves):
    """How many separate reads of a shared (LDS) operand the waves of a workgroup make."""
    return _readers(waves, waves_sharing_operands(arch))


def _readers(waves, sharing: float):
    return np.maximum(np.asarray(waves, dtype=float) / sharing, 1.0)


def waves_per_read(waves, sharing: float):
    """Waves served by each read of an LDS operand (1, or the warpgroup on Hopper): the divisor of
    the per-wave LDS reads, the same in the estimator's tile traffic and the tile ranking."""
    return np.maximum(np.asarray(waves, dtype=float) / _readers(waves, sharing), 1.0)


@functools.lru_cache(maxsize=1024)
def wave_grid_of(tm: int, tn: int, lanes: int, wave_size: int) -> tuple[float, float]:
    """`wave_grid` of one tile, as floats (the tile ranking asks it per candidate and chunk)."""
    wr, wc = wave_grid(tm, tn, lanes, wave_size)
    return float(wr), float(wc)


def wave_grid(tm, tn, lanes, wave_size):
    """(wr, wc): waves per workgroup arranged wr x wc over the tile, more along the longer side."""
    small, big = tabled(lambda lanes: _wave_sides(lanes, wave_size), lanes, 1 << 16)
    tall = np.asarray(tm) >= np.asarray(tn)
    return select(tall, big, small), select(tall, small, big)


def _wave_sides(lanes, wave_size):
    """(the shorter, the longer side) of the wave grid of workgroups of ``lanes`` lanes."""
    w = np.maximum(np.asarray(lanes, dtype=float) / wave_size, 1.0)
    small = pow2(np.floor(np.log2(w) / 2))
    return small, w / small


def tabled(f, x, top: int, table=None):
    """``f(x)`` (an elementwise function of one float array, giving an array or a tuple of arrays)
    where every ``x`` is a whole number from 0 to ``top``: ``f`` of the doubles 0, 1, ..., max(x)
    (or the ``table`` given, made so and long enough), gathered at ``x``, the very bits of ``f(x)``
    (the same function of the same doubles) where ``f`` costs far more than a gather (a log2 and
    a power of two per element: tile sizes, tile counts and K of a sweep take few values). Any
    other ``x``: ``f(x)`` itself."""
    x = np.asarray(x, dtype=float)
    if x.size < SHORTCUT_MIN or not (x.min() >= 0.0 and x.max() <= top):  # a nan fails too
        return f(x)
    whole = x.astype(np.int64)
    if not np.array_equal(whole, x):
        return f(x)
    if table is None or len(np.atleast_1d(table[0] if isinstance(table, tuple) else table)) <= whole.max():
        table = _table(f, int(whole.max()) + 1)
    if isinstance(table, tuple):
        return tuple(np.take(t, whole) for t in table)
    return np.take(table, whole)


def _table(f, size: int):
    """``f`` of the doubles 0 .. size - 1 (entries no shape asks for, such as a count of 0 where
    counts start at 1, may divide by zero: quietly, their values are never gathered)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return f(np.arange(size, dtype=float))


@functools.lru_cache(maxsize=16)
def _depth_table(step: float, size: int) -> np.ndarray:
    """`fill_split`'s split bound by K of the whole K 0 .. size - 1 (one table per K step)."""
    return _table(lambda d: _depth_split(d, step), size)


def _depth_split(depth, step: float):
    return pow2(np.floor(np.log2(np.maximum(np.asarray(depth) / (2.0 * step), 1.0))))


# --- traffic of a tiled kernel -------------------------------------------------------------


def _l2_per_xcd(arch) -> float:
    cap, per = arch.capacity_per("l2")
    return cap if per == "xcd" else arch.capacity("l2") / max(arch.xcds, 1)


def panel_traffic(arch, rows, cols, tm, tn, a_row, b_col, copies, *, a_unique=None, b_frac=1.0, cluster=1.0):
    """Operand read bytes per level for a grid of tm x tn tiles over a rows x cols output.

    Every tile reads the row panel of its tm rows (``a_row`` bytes per row) and the column
    panel of its tn columns (``b_col`` bytes per column; a fraction ``b_frac`` of it where the
    tile needs only part, e.g. causal attention). ``copies`` independent problems (batch,
    groups, K-splits) run one after another in grid order. ``a_unique``: distinct bytes behind
    the A requests where they are fewer than ``rows * a_row`` (conv2d's im2col rows overlap).
    ``cluster``: tiles of a cluster that get the larger panel from one L2 read (`multicast_requests`).

    Returns dict: ``req`` (bytes the tiles request: L1 and L2 see them), ``l2_miss`` (bytes the
    L2s fetch from beyond: MALL / fabric), ``mem`` (bytes from device memory), ``grid``.

    Model (see docs/models-tiled.md): workgroups run in waves of min(CUs, tiles) concurrent
    tiles, rasterised as a near-square block of a x b tiles (grouped ordering). Within a wave the
    tiles of one row share an A panel and those of one column a B panel, and those re-reads hit
    in L2 -- except across XCDs: workgroups go round-robin over the XCDs, each with a private
    L2, so an A panel whose b tiles land on min(xcds, b) XCDs is fetched by each of them, and a
    B panel by xcds/gcd(b, xcds) of them (at most a). Across waves a panel is re-read once per
    wave that needs it unless it is still resident: the resident fraction is
    min(1, capacity / footprint) of the cache that would serve it (per-XCD L2, then the MALL).
    """
    rows = np.asarray(rows, dtype=float)
    cols = np.asarray(cols, dtype=float)
    tm = np.asarray(tm, dtype=float)
    tn = np.asarray(tn, dtype=float)
    copies = np.asarray(copies, dtype=float)
    b_frac = np.asarray(b_frac, dtype=float)
    tiles_m = np.ceil(rows / tm)
    tiles_n = np.ceil(cols / tn)
    per_copy = tiles_m * tiles_n
    a_req = rows * a_row  # bytes of A one column of tiles requests
    a_bytes = a_req if a_unique is None else np.asarray(a_unique, dtype=float)
    b_bytes = cols * b_col
    # x * 1.0 is x, bit for bit: the whole of each B panel (all but causal attention) skips it
    whole_b = b_frac.ndim == 0 and b_frac == 1.0
    req = copies * multicast_requests(
        tiles_n * a_req, tiles_m * b_bytes if whole_b else tiles_m * b_bytes * b_frac, tiles_m, tiles_n, cluster
    )

    cus = float(arch.cus)
    x = float(max(arch.xcds, 1))
    a, b, r_a, r_b = _raster(cus, x, tiles_m, tiles_n, per_copy)
    b_need = np.ceil(tiles_m / a) if whole_b else np.ceil(tiles_m / a) * b_frac
    b_need = np.maximum(b_need, 1.0)  # waves needing each B panel (>= once)
    floor_l2 = r_a * a_bytes + r_b * b_bytes  # each XCD fetches its panels at least once
    waves_l2 = r_a * np.ceil(tiles_n / b) * a_bytes + r_b * b_need * b_bytes
    concurrent = np.maximum(1.0, np.minimum(copies, cus / per_copy))  # copies sharing one wave
    hit = np.minimum(1.0, _l2_per_xcd(arch) * x / np.maximum(concurrent * floor_l2, 1.0))
    l2_miss = copies * (floor_l2 + (1.0 - hit) * np.maximum(waves_l2 - floor_l2, 0.0))
    l2_miss = np.minimum(l2_miss, req)
    compulsory = copies * (a_bytes + b_bytes)
    if "mall" in arch.levels:
        hit_m = np.minimum(1.0, arch.capacity("mall") / np.maximum(concurrent * (a_bytes + b_bytes), 1.0))
        # XCD copies of a panel within a wave are fetched at about the same time (the XCDs walk
        # K together), so the MALL serves them from the current K slab; only re-reads by later
        # waves need the whole footprint resident
        waves_mem = copies * (np.ceil(tiles_n / b) * a_bytes + b_need * b_bytes)
        mem = compulsory + (1.0 - hit_m) * (1.0 - hit) * np.maximum(waves_mem - compulsory, 0.0)
    else:
        mem = np.maximum(l2_miss, compulsory)
    return {"req": req, "l2_miss": l2_miss, "mem": mem, "grid": copies * per_copy, "unique": compulsory}


def _raster(cus: float, x: float, tiles_m, tiles_n, per_copy):
    """(a, b, r_a, r_b): one wave of min(CUs, tiles) tiles as a near-square a x b block, and how
    many XCDs fetch each A panel (r_a) and each B panel (r_b) in it."""
    wave = np.minimum(cus, per_copy)
    a = clip_from_one(np.ceil(np.sqrt(wave)), tiles_m)
    b = clip_from_one(np.ceil(wave / a), tiles_n)
    if x > 1:  # a library rasterises whole rows of xcds tiles, so a B panel stays on one XCD
        b = select(tiles_n >= x, np.minimum(np.ceil(b / x) * x, tiles_n), b)
    a = clip_from_one(np.ceil(wave / b), tiles_m)
    if x <= 1:
        return a, b, 1.0, 1.0
    return a, b, np.minimum(x, b), np.minimum(a, _xcds_per_b_panel(x, b))


def _xcds_per_b_panel(x: float, b: np.ndarray) -> np.ndarray:
    """``x / gcd(b mod x, x)`` for the whole tile counts ``b`` (a wave's columns, 1 <= b <= the
    CUs or a few more, so exact as int64): the quotients tabled once per value of ``b``, the very
    divisions the elementwise form makes, where the float remainder costs ~20 ns a shape. Any
    other ``b`` (or a huge one) takes the elementwise form."""
    gcd = np.array([math.gcd(i, int(x)) for i in range(int(x))], dtype=float)
    top = float(np.max(b)) if np.size(b) else 0.0
    if not (np.min(b, initial=1.0) >= 1.0 and top <= 4096.0):  # also catches nan
        return x / np.take(gcd, np.mod(b, x).astype(np.int64))
    whole = np.asarray(b).astype(np.int64)
    table = x / np.take(gcd, np.mod(np.arange(int(top) + 1, dtype=np.int64), int(x)))
    if np.array_equal(whole, b):
        return np.take(table, whole)
    return x / np.take(gcd, np.mod(b, x).astype(np.int64))


def add_operand_reads(work: Work, arch, t: dict) -> None:
    """Book `panel_traffic` reads on the arch's global-memory levels.

    Under `traffic.warm_caches` (a kernel repeated on the same operands, as a decode step reruns
    its weight GEMMs) operands whose distinct bytes fit the memory-side cache are served from
    it: device memory sees none of them, the same residency rule `traffic.stream_traffic`
    applies to streaming kernels.
    """
    mem = t["mem"] if "mall" in arch.levels else t["l2_miss"]
    if traffic.is_warm() and "mall" in arch.levels:
        mem = np.where(np.asarray(t["unique"]) <= arch.capacity("mall"), 0.0, mem)
    for lv in traffic.chain(arch):
        if lv in ("l1", "l2"):
            work.add_bytes(lv, read=t["req"])
        elif lv == "mall":
            work.add_bytes(lv, read=t["l2_miss"])
        else:  # device memory
            work.add_bytes(lv, read=mem)


# --- the GEMM tile model -------------------------------------------------------------------


@dataclass
class Rates:
    """What the local tile cost needs from the arch (resolved once per call)."""

    flops: float  # device FLOP/s of the matrix pipe in use
    cus: float
    bw: dict  # level -> device bytes/s (theoretical, peak clock)
    mem: str  # the device-memory level
    caps: dict  # cache level -> device-wide bytes it holds (`traffic.serving_capacities`)
    cluster: float = 1.0  # workgroups that share one operand tile's L2 read (`multicast_cluster`)
    lat: float = 0.0  # device-memory load latency, s (`rates.latency_s`): a round's prologue and epilogue
    # achievable B/s of the MALL and of device memory where the arch has a MALL: the generic
    # efficiencies of `rates.bandwidth(first_principles=True)`, so the ranking, which both modes
    # share, takes no measured figure; the rates the estimator times L2-missing re-reads at
    reread: tuple[float, float] | None = None
    # seconds per byte one CU reads through its L1 (the generic efficiency, as `reread`): the
    # in-kernel split-K reduction's reads by the last workgroup of each tile (`Launch.reduce_bytes`)
    reduce_s_per_byte: float = 0.0
    # waves whose shared-memory operand reads are one (`WAVES_SHARING_OPERANDS`), as the estimator
    # books a tile's LDS reads (`gemm_tiling._gemm_parts`)
    sharing: float = 1.0

    @classmethod
    def of(cls, arch, pipe: str, dtype: str) -> Rates:
        bw = {lv: arch.bandwidth(lv) for lv in arch.levels}
        caps = traffic.serving_capacities(arch)
        cluster = multicast_cluster(arch)
        from perfmodel.rates import bandwidth, latency_s

        lat = latency_s(arch, arch.memory_level)
        mem = arch.memory_level
        reread = (bandwidth(arch, "mall", True)[0], bandwidth(arch, mem, True)[0]) if "mall" in arch.levels else None
        reduce = arch.cus / bandwidth(arch, "l1", True)[0] if "l1" in arch.levels else 0.0
        sharing = waves_sharing_operands(arch)
        return cls(flop_rate(arch, pipe, dtype), float(arch.cus), bw, mem, caps, cluster, lat, reread, reduce, sharing)


def multicast_cluster(arch) -> float:
    """Workgroups of a GEMM cluster that receive one operand tile from a single L2 read
    (model_constants.yaml `gemm_tma_multicast`: Hopper's TMA multicast), 1 where there is none."""
    from perfmodel.rates import constants

    c = constants()["gemm_tma_multicast"].get(arch.gfx)
    return float(c["cluster"]) if c else 1.0


def multicast_requests(a_part, b_part, tiles_m, tiles_n, cluster: float):
    """L2 requests of a tile grid whose clusters share the larger operand panel: the A panel
    (``a_part``, requested once per tile column) is read once per cluster of ``cluster`` tiles
    along N, or the B panel once per cluster along M, where that many tiles exist."""
    if cluster <= 1.0:
        return a_part + b_part
    keep = 1.0 / cluster
    share_a = (a_part >= b_part) & (tiles_n >= cluster)
    share_b = (a_part < b_part) & (tiles_m >= cluster)
    return np.where(share_a, a_part * keep, a_part) + np.where(share_b, b_part * keep, b_part)


def argmin_candidates(costs, shape) -> tuple[np.ndarray, np.ndarray]:
    """(index of the cheapest candidate, its cost) per shape, from an iterable of cost arrays."""
    best = np.full(shape, np.inf)
    idx = np.zeros(shape, dtype=np.int64)
    for i, c in enumerate(costs):
        better = c < best
        np.copyto(best, c, where=better)
        np.copyto(idx, i, where=better)
    return idx, best


def fill_split(cus: float, grid1, depth, step):
    """The split (a power of two, at most SPLITS[-1]) that fills ``cus`` CUs with a grid of
    ``grid1`` tiles, keeping at least two ``step``-deep steps of ``depth`` per split; 1 where
    the grid already fills half the CUs."""
    grid1 = np.maximum(np.asarray(grid1, dtype=float), 1.0)
    by_grid = lambda g: pow2(np.floor(np.log2(np.maximum(cus / g, 1.0))))  # noqa: E731
    if np.ndim(cus) or np.ndim(step) or np.ndim(grid1) != np.ndim(depth):  # elementwise
        s, by_k = by_grid(grid1), _depth_split(depth, step)
    else:  # by tables of the whole tile counts and K (`tabled`): the same bits
        s = tabled(by_grid, grid1, 1 << 16)
        top = np.max(depth, initial=0.0) if np.size(depth) else 0.0
        size = 1 << max(10, int(top).bit_length()) if 0.0 <= top <= 1 << 20 else 0
        by_k = tabled(lambda d: _depth_split(d, step), depth, size - 1, _depth_table(float(step), size) if size else None)
    s = np.minimum(np.minimum(s, SPLITS[-1]), by_k)
    return select(grid1 * 2 <= cus, s, 1.0)
