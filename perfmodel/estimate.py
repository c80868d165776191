"""The time estimator: `Work` on an `Arch` -> `Estimate`, vectorised over a batch of shapes.

time = launch overhead + the timing scope's overhead (events, host; none for kernel; loop floors the
time at the dispatch spacing) + the largest of
  - compute terms: FLOPs / achievable rate of the pipe (matrix pipes at the clock they sustain
    under load, from the archspec's measurements), stretched by wave quantization over the CUs
    (under-filled grids; tiled kernels that fill the GPU are balanced by stream-K);
  - memory terms: bytes / achievable bandwidth of each level, where the achievable bandwidth is
    the measured ceiling (or theoretical x efficiency) capped by Little's law: the bytes the
    resident waves keep in flight divided by the level's latency.
Tiled kernels (a K loop of loads feeding the matrix pipe) take the slower of their largest
compute and memory terms stretched as a two-stage pipeline with a finite prefetch buffer
(`_load_compute_pipeline`); dependent chains (flash attention) last as a closed cycle of the
resident waves (`_closed_cycle_stretch`). Every term is reported, with the ceiling it used; the
naive roofline (theoretical peaks, no quantization, no latency, no launch) is reported beside it,
and headroom = roofline / time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from perfmodel.arch import Arch
from perfmodel.callable_module import make_callable
from perfmodel.models.traffic import dirty_writeback
from perfmodel.rates import (
    CORE_CLOCKED_LEVELS,
    bandwidth,
    compute_rate,
    constants,
    latency_s,
    loaded_core_clock,
    scope_overhead_s,
)
from perfmodel.roofline import largest_term
from perfmodel.vocab import (
    DEVICE_MEMORY,
    FEWER_ROWS,
    FILL,
    FLOOR_SCOPES,
    GLOBAL_PATH,
    INT,
    K_LOOP,
    LATENCY,
    LAUNCH,
    MATRIX_PIPES,
    PER_CU_LEVELS,
    SERIAL,
    UNKNOWN,
    WORKGROUP_LAUNCH,
    bound_label,
    compute_term,
    flop_key,
    is_compute,
    memory_term,
    overhead_term,
    split_flop_key,
)
from perfmodel.work import Work, add_note

# the one term of a kernel that does no work at all (neither FLOPs nor bytes)
NO_WORK = compute_term("none")


@dataclass
class RatesUsed:
    """The rates one estimate used, per term, with where each came from."""

    rate: dict[str, float] = field(default_factory=dict)  # term -> FLOP/s or B/s (achievable)
    peak: dict[str, float] = field(default_factory=dict)  # term -> theoretical
    provenance: dict[str, str] = field(default_factory=dict)


@dataclass
class Estimate:
    """Arrays of one batch: per-term seconds, total time, bound class, headroom."""

    arch: Arch
    work: Work
    terms: dict[str, np.ndarray]  # term key (see perfmodel.vocab) -> seconds
    time_s: np.ndarray
    bound: np.ndarray  # object array of labels
    roofline_time_s: np.ndarray
    roofline_bound: np.ndarray
    rates_used: RatesUsed
    occupancy: dict[str, np.ndarray]
    notes: list[str]
    # the cases a note applies to, where not all (`Work.note_where`)
    note_where: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def headroom(self) -> np.ndarray:
        """Time at the theoretical roof / predicted time (1 = at the roof)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.time_s > 0, self.roofline_time_s / self.time_s, 1.0)

    @property
    def flops(self) -> np.ndarray:
        return np.asarray(self.work.total_flops, dtype=float) * np.ones_like(self.time_s)

    @property
    def tflops(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.time_s > 0, self.flops / self.time_s / 1e12, 0.0)


# --- exact shortcuts for large batches ------------------------------------------------------
SHORTCUT_MIN = 1024  # elements below which `select` and `tiles.tabled` go straight to the plain form


def select(cond, x, y):
    """``np.where(cond, x, y)`` of float64 arrays and floats: the same new array, bit for bit
    (tests/test_exact_shortcuts.py). np.where picks element by element (~8 instructions each, and
    a mispredicted branch at every other one on a mask that mixes True and False evenly). Where
    ``cond`` is all False or all True this copies the one side; where it mixes them evenly and
    both sides are arrays of its shape, it takes each side's bits under an integer mask."""
    if not (isinstance(cond, np.ndarray) and cond.dtype == bool and cond.size >= SHORTCUT_MIN and _is_float(x) and _is_float(y)):
        return np.where(cond, x, y)  # (a short batch: the tests here would cost more than they save)
    n = np.count_nonzero(cond)
    if n == 0 or n == cond.size:
        return np.array(np.broadcast_to(x if n else y, np.broadcast_shapes(cond.shape, np.shape(x), np.shape(y))))
    if 10 * n < cond.size or 10 * n > 9 * cond.size or not (
        isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.shape == y.shape == cond.shape
    ):
        return np.where(cond, x, y)
    mask = cond.astype(np.int64)
    np.negative(mask, out=mask)  # all ones where cond
    xi, yi = x.view(np.int64), y.view(np.int64)
    out = np.bitwise_xor(xi, yi)
    out &= mask
    out ^= yi
    return out.view(np.float64)


def _is_float(v) -> bool:
    return isinstance(v, float) or (isinstance(v, np.ndarray) and v.dtype == np.float64)


# --- occupancy ----------------------------------------------------------------------------
def clip_from_one(x, hi):
    """``np.clip(x, 1, hi)``, bit for bit (tests/test_exact_shortcuts.py, with nan, inf and signed
    zeros): np.clip's float loop runs an element at a time, np.maximum and np.minimum vectorised;
    with 1 as the lower bound no 0.0 can meet a -0.0, and a nan passes through either form."""
    return np.minimum(np.maximum(x, 1.0), hi)


def workgroups_per_cu(arch: Arch, wg_size, vgprs, lds) -> tuple[np.ndarray, np.ndarray]:
    """(workgroups one CU holds at once, at least 1; waves per workgroup) for workgroups of
    ``wg_size`` lanes using ``vgprs`` registers per lane (0: unknown, no limit) and ``lds`` bytes:
    the wave slots the registers leave on each SIMD, and the CU's LDS."""
    occ = arch.occupancy
    wg_size, vgprs, lds = (np.asarray(x, dtype=float) for x in (wg_size, vgprs, lds))
    waves_per_wg = np.maximum(1.0, np.ceil(wg_size / arch.wave_size))
    max_w = occ["max_waves_per_simd"].value
    gran = occ["vgpr_granule"].value
    per_lane = occ["vgprs_per_lane"].value
    with np.errstate(divide="ignore", invalid="ignore"):
        by_vgpr = select(vgprs > 0, np.floor(per_lane / (np.ceil(vgprs / gran) * gran)), max_w)
    wave_slots = clip_from_one(by_vgpr, max_w) * arch.simds_per_cu
    wg_by_waves = np.floor(wave_slots / waves_per_wg)
    lds_per_cu = arch.capacity("lds") / arch.cus
    with np.errstate(divide="ignore", invalid="ignore"):
        wg_by_lds = select(lds > 0, np.floor(lds_per_cu / np.maximum(lds, 1)), np.inf)
    return np.maximum(1.0, np.minimum(wg_by_waves, wg_by_lds)), waves_per_wg


def _busy_cu_workgroups(grid, arch: Arch, wgs_per_cu) -> np.ndarray:
    """Workgroups resident at once on a CU that has work: the grid's share per CU, at least one
    (a grid smaller than the CUs leaves some idle, not the busy ones emptier), at most what the
    CU holds."""
    return clip_from_one(grid / arch.cus, wgs_per_cu)


def occupancy(arch: Arch, work: Work, shape) -> dict[str, np.ndarray]:
    """Resident workgroups per CU from registers, LDS, wave slots; waves on the device."""
    L = work.launch
    ones = np.ones(shape)
    wg_size = np.asarray(L.workgroup_size if L else 256, dtype=float) * ones
    grid = np.asarray(L.grid if L else 0, dtype=float) * ones
    vgprs = np.asarray(L.vgprs if L else 0, dtype=float) * ones
    lds = np.asarray(L.lds_bytes if L else 0, dtype=float) * ones
    wgs_per_cu, waves_per_wg = workgroups_per_cu(arch, wg_size, vgprs, lds)
    # grid 0 means "enough work to fill the GPU" (a model that does not say)
    grid_eff = select(grid > 0, grid, arch.cus * wgs_per_cu * 4)
    resident_wgs = np.minimum(grid_eff, arch.cus * wgs_per_cu)
    return {
        "grid": grid_eff,
        "waves_per_wg": waves_per_wg,
        "wgs_per_cu": wgs_per_cu,
        # waves one SIMD of a busy CU interleaves (the kernel's own, resident at once): a CU
        # with work holds at least one workgroup however many CUs the grid leaves idle
        "waves_per_simd": _busy_cu_workgroups(grid_eff, arch, wgs_per_cu) * waves_per_wg / arch.simds_per_cu,
        "resident_waves": resident_wgs * waves_per_wg,
        # fraction of the CU-rounds doing work: (grid / CUs) / ceil(grid / CUs)
        "quantization": _quantization(grid_eff, arch, work),
    }


def library_stream_k(arch: Arch) -> bool:
    """Whether the GEMM library of this target runs stream-K (`gemm_stream_k` in
    model_constants.yaml, read from the kernel names of real traces; unlisted: no)."""
    entry = constants()["gemm_stream_k"].get(arch.gfx)
    return bool(entry and entry["value"])


def _quantization(grid: np.ndarray, arch: Arch, work: Work) -> np.ndarray:
    """Fraction of CU time doing work: (grid / CUs) / ceil(grid / CUs).

    Tiles run in rounds of one tile per CU (per resident slot); the last round's idle CUs are the
    wave-quantization tail. Tiled GEMMs with at least half a wave of tiles are exempt only on a
    target whose library runs stream-K (`library_stream_k`: the K loop of the last wave spread
    over the idle CUs); below half a wave the kernel models choose split-K themselves, and what
    remains under-filled keeps the penalty. Attention (`Launch.stream_k` False) runs one tile per
    workgroup (FlashAttention-2 sec. 3.2: parallel over batch, heads and query blocks) and always
    keeps it. Unequal tiles (`Launch.tile_imbalance`) cap it further: an under-filled grid lasts
    its heaviest tile.
    """
    cus = arch.cus
    q = grid / cus
    q = q / np.ceil(q)  # the same two quotients as (grid / cus) / np.ceil(grid / cus)
    L = work.launch
    if L is not None:
        tiled = np.asarray(L.tile_m) > 0
        if L.stream_k and library_stream_k(arch):
            q = np.where(tiled & (grid >= cus / 2), 1.0, q)
        # unequal tiles: the kernel lasts at least as long as its heaviest tile, which takes
        # imbalance x the mean tile's share of one CU (grid / cus of it per CU at q = 1)
        h = np.asarray(L.tile_imbalance, dtype=float)
        if np.any(h > 1.0):
            q = np.minimum(q, grid / (cus * np.maximum(h, 1.0)))
    return q


# --- the estimate -------------------------------------------------------------------------
def _shape(work: Work) -> tuple:
    arrays = [
        np.asarray(v) for d in (work.flops, work.iops, work.bytes_read, work.bytes_write) for v in d.values()
    ]
    return np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()


@dataclass
class _Terms:
    """Per-term seconds as the estimator times them, and as the naive roofline does."""

    time: dict[str, np.ndarray] = field(default_factory=dict)
    naive: dict[str, np.ndarray] = field(default_factory=dict)
    latency_limited: dict[str, np.ndarray] = field(default_factory=dict)
    # where a VALU term's time is already in another's (`_one_vector_alu`): True there
    absorbed: dict[str, np.ndarray] = field(default_factory=dict)

    def own(self, key: str) -> np.ndarray:
        """A term's time where another term does not already hold it (0 where absorbed)."""
        t = self.time[key]
        return np.where(self.absorbed[key], 0.0, t) if key in self.absorbed else t


def _compute_terms(
    work: Work,
    arch: Arch,
    q,
    used: RatesUsed,
    terms: _Terms,
    notes: tuple[list, dict],
    first_principles: bool,
    clock: tuple[float, str],
) -> None:
    """FLOPs / achievable rate, stretched by wave quantization (and, on the matrix pipes, by the
    padding of partial tiles: `Launch.useful_fraction`); FLOPs / peak for the naive roof. The
    other pipes run at the core clock of the kernel (`rates.loaded_core_clock`). A VALU key whose
    instructions the model counted (`Work.valu_issue`, not packed) is timed by them: the FLOP rate
    counts each lane slot as an FMA's 2 FLOPs, so a slot takes 2 FLOP-equivalents. A key in
    `Work.rate_as` is timed at the named dtype's achievable rate; its naive roof stays its own
    dtype's peak."""
    useful = np.asarray(work.launch.useful_fraction if work.launch else 1.0, dtype=float)
    for key, f in work.flops.items():
        pipe, dtype = split_flop_key(key)
        rate, peak, prov = compute_rate(arch, pipe, dtype, first_principles, packed=key in work.packed)
        if key in work.rate_as:  # the kernel's instructions run at another dtype's rate
            as_dtype, why, where = work.rate_as[key]
            as_rate, _, as_prov = compute_rate(arch, pipe, as_dtype, first_principles)
            every = np.all(where)
            rate = as_rate if every else np.where(where, as_rate, rate)
            prov = f"the {as_dtype} rate ({as_prov}){'' if every else ' where it applies'}: {why}"
            add_note(*notes, f"{key} timed at the {as_dtype} rate: {why}", None if every else where)
        if pipe not in MATRIX_PIPES and clock[0] < 1.0:
            rate, prov = rate * clock[0], f"{prov}; {clock[1]}"
        t = compute_term(key)
        used.rate[t], used.peak[t], used.provenance[t] = rate, peak, prov
        f = np.asarray(f, dtype=float)
        timed = 2.0 * np.asarray(work.valu_issue[key], dtype=float) if key in work.valu_issue and key not in work.packed else f
        terms.time[t] = timed / (rate * (q * useful if pipe in MATRIX_PIPES else q))
        terms.naive[t] = f / peak


def _integer_terms(
    work: Work, arch: Arch, q, used: RatesUsed, terms: _Terms, notes: tuple[list, dict], clock: tuple[float, str]
) -> None:
    """Integer VALU ops, one term per pipe (``compute:valu:int``): the op classes issue one
    after another on the same VALU, so their times add: sum of ops / the spec's integer rate of
    each class, stretched by wave quantization like the FLOP terms. The naive roofline uses the
    same theoretical rates. A class without a rate in the spec is not timed, and a note says so."""
    by_pipe: dict[str, list[tuple[str, np.ndarray]]] = {}
    for key, n in work.iops.items():
        pipe, op = split_flop_key(key)
        by_pipe.setdefault(pipe, []).append((op, np.asarray(n, dtype=float)))
    for pipe, items in by_pipe.items():
        secs, ops, srcs = 0.0, 0.0, []
        for op, n in items:
            peak = arch.peak_iops(pipe, op)
            if peak is None:
                add_note(
                    *notes, f"{arch.key} has no {pipe} {op} integer rate in its spec: those integer ops are not timed", n > 0
                )
                continue
            secs = secs + n / (peak * clock[0])
            ops = ops + n
            srcs.append(f"{op} {arch.int_rate(pipe, op).value:g} op/clk/CU")
        if not srcs:
            continue
        t = compute_term(flop_key(pipe, INT))
        with np.errstate(divide="ignore", invalid="ignore"):
            eff = np.where(np.asarray(secs) > 0, ops / np.where(np.asarray(secs) > 0, secs, 1.0), 0.0)
        used.rate[t] = used.peak[t] = eff
        used.provenance[t] = (
            f"theoretical integer rates ({', '.join(srcs)}), summed per op class; integer ops, not FLOPs"
            + (f"; {clock[1]}" if clock[0] < 1.0 else "")
        )
        terms.time[t] = secs / q
        terms.naive[t] = secs


def _memory_terms(
    work: Work,
    arch: Arch,
    occ: dict,
    shape,
    used: RatesUsed,
    terms: _Terms,
    notes: tuple[list, dict],
    first_principles: bool,
    clock: tuple[float, str],
) -> None:
    """Bytes / achievable bandwidth, capped by Little's law over the bytes the waves keep in flight.
    The on-chip levels run at the core clock of the kernel (`rates.loaded_core_clock`)."""
    q = occ["quantization"]
    L = work.launch
    bpw = np.asarray(L.bytes_in_flight_per_wave if L else 0, dtype=float) * np.ones(shape)
    bpw = np.where(bpw > 0, bpw, constants()["bytes_in_flight_per_lane"]["value"] * arch.wave_size)
    in_flight = occ["resident_waves"] * bpw
    whole = in_flight.shape == np.broadcast_shapes(np.shape(q), in_flight.shape)
    scratch = [np.empty(in_flight.shape) for _ in range(3)] if whole else []
    for level, b in work.bytes.items():
        b = np.asarray(b, dtype=float)
        extra = _dirty_writeback(work, arch, level, notes)
        if level not in arch.levels:
            add_note(*notes, f"{arch.key} has no '{level}' level: its bytes are not timed", b > 0)
            continue
        rate, peak, prov = bandwidth(arch, level, first_principles)
        if level in CORE_CLOCKED_LEVELS and clock[0] < 1.0:
            rate, prov = rate * clock[0], f"{prov}; {clock[1]}"
        if "tag A" in prov:
            add_note(*notes, f"the {level} ceiling of {arch.key} is a placeholder (an assumption in its spec, tag A)", b > 0)
        t = memory_term(level)
        used.rate[t], used.peak[t], used.provenance[t] = rate, peak, prov
        # the level's temporaries in three scratch arrays of the call (a chunk-sized array the cache
        # has just written costs a fraction of a fresh one); the same operations
        little = np.divide(in_flight, latency_s(arch, level), out=scratch[0] if whole else None)
        # per-CU resources (LDS, L1) idle on CUs without work: scale by the quantization
        per_cu_rate = np.multiply(rate, q, out=scratch[1] if whole else None) if level in PER_CU_LEVELS else rate
        eff_bw = np.minimum(per_cu_rate, little, out=scratch[2] if whole else None)
        terms.time[t] = (b + extra) / eff_bw  # eff_bw > 0: at least one wave is resident
        terms.latency_limited[t] = little < per_cu_rate
        terms.naive[t] = b / peak


def _dirty_writeback(work: Work, arch: Arch, level: str, notes: tuple[list, dict]):
    """Bytes a cold kernel's device-memory term adds for L2 lines another kernel left dirty
    (`traffic.dirty_writeback`; 0 at other levels, in a warm run or a modelled sequence
    (`Work.dirty_l2`), or without a measured figure).
    Timed with the level's own bytes; the kernel's byte counts and the naive roofline leave
    them out, since they are not this kernel's data."""
    if level not in DEVICE_MEMORY or not work.dirty_l2:
        return 0.0
    extra = dirty_writeback(arch, work.bytes_read.get(level, 0.0), work.bytes_write.get(level, 0.0))
    if extra is None:
        return 0.0
    add_note(
        *notes,
        f"cold run: {level} also writes back the L2 lines left dirty by the write before this kernel (measured on the {arch.key})",
        extra > 0,
    )
    return extra


def _one_vector_alu(arch: Arch, terms: _Terms) -> None:
    """On AMD every VALU instruction, integer or floating point of any width, issues on the one
    vector ALU of its SIMD (AMD CDNA3 ISA guide, "Vector ALU Operations": the VOP1/VOP2/VOP3
    integer and float opcodes share the VALU), so a kernel's VALU terms of several types add: the
    longest stands for their sum and the others are marked as held by it (`_Terms.absorbed`), as
    a dependent chain's longest term stands for the chain. A Philox random-number kernel
    (integer multiplies and adds) that also converts and scales floats takes both. NVIDIA SMs
    have INT32 cores beside the FP32 ones (Ampere and Hopper whitepapers), so their terms stay
    apart there (a lower bound where IMADs share the FMA pipe). On gfx9 (GCN, CDNA1-4) the
    transcendentals are VALU instructions too, at quarter rate (LLVM SISchedule.td: the gfx908,
    gfx90a and gfx942 models have no transcendental resource; CLRX GcnTimings: V_EXP_F32 holds
    the VALU 16 cycles per wave64 against 4 for V_FMA_F32), so the SFU term joins the sum; RDNA
    issues them on a unit of their own beside the VALU (AMD's RDNA deck: "Non-transcendental
    instructions can execute in parallel"; SISchedule.td's HWTransVALU from gfx10), so there it
    stays apart."""
    if arch.vendor != "AMD":
        return
    keys = sorted(k for k in terms.time if k.startswith(compute_term("valu:")))
    if arch.gfx.startswith("gfx9"):  # GCN/CDNA: transcendentals hold the VALU 4 cycles (no unit of their own)
        keys += sorted(k for k in terms.time if k.startswith(compute_term("sfu:")))
    if len(keys) < 2:
        return
    times = [terms.time[k] for k in keys]
    longest = _largest(times)
    total = np.sum(times, axis=0)
    held = np.zeros(np.shape(total), dtype=bool)
    for k, t in zip(keys, times, strict=True):
        top = (t >= longest) & ~held  # the first key of a tie stands for the sum
        terms.absorbed[k] = ~top
        terms.time[k] = np.where(top, total, t)
        held = held | top


def _dependent_chain(work: Work, arch: Arch, occ: dict, terms: _Terms) -> None:
    """Serialise the compute terms of a dependent chain as far as the waves cannot hide them.

    A wave runs its chain (matrix product, then the softmax on VALU and SFU, then the next
    product) in order: alone on its SIMD, the chain takes the sum of its parts. Other resident
    waves issue their VALU work while one wave's MFMA runs (the matrix core and the VALU are
    separate units fed by one instruction arbiter per SIMD: AMD CDNA3 ISA guide, "MFMA ...
    dependent and independent instructions"; FA3's ping-pong scheduling on Hopper is the same
    idea): the w waves cycle between the two stations, the longest term and the rest (the sum of
    the others), and `_closed_cycle_stretch` gives the chain's time, from the sum at w = 1 to the
    slower station alone as w grows (the rest, where the softmax outlasts the matrix product).
    The longest term stands for the chain; the others keep their own time.

    Where the spec gives a matrix pipe's VALU co-execution share c (`valu_coexec`), VALU work
    runs beside the matrix term only in that share of its cycles, chained or not: matrix time M
    and VALU-side time O (VALU, SFU) take M + max(0, O - h c M), h = min(1, w - 1) for a chain
    and 1 for independent work. RDNA3's WMMA has c = 0 (AMD's matrix instruction calculator:
    "Can co-execute with VALU: False"), so there the two always add and the waves do not matter;
    no shipped spec has a share between 0 and 1.

    Where a workgroup's waves meet at a barrier every step (`Launch.lockstep`: attention
    backward), they run each phase together, so the customers of the cycle are the workgroups
    resident on a CU, not the waves of a SIMD (`_chain_customers`).
    """
    coexec = {p: arch.valu_coexec(p) for p in MATRIX_PIPES if arch.valu_coexec(p) is not None}
    if coexec and _coexec_chain(work, _chain_customers(work, arch, occ), terms, coexec):
        return
    # sorted: summing in set order would make the last digit depend on the hash seed
    keys = [compute_term(k) for k in sorted(work.dependent) if compute_term(k) in terms.time]
    if len(keys) < 2:
        return
    times = [terms.own(k) for k in keys]
    longest = _largest(times)
    rest = np.sum(times, axis=0) - longest
    # the two stations: the longest term and the rest; the slower of them paces the cycle
    slow, fast = np.maximum(longest, rest), np.minimum(longest, rest)
    _stretch_longest(terms, keys, slow * _closed_cycle_stretch(fast, slow, _chain_customers(work, arch, occ)))


def _chain_customers(work: Work, arch: Arch, occ: dict) -> np.ndarray:
    """Who cycles through a dependent chain independently: the waves of a SIMD, or, where a
    workgroup's waves meet at a barrier every step (`Launch.lockstep`), the workgroups of a CU."""
    if work.launch is not None and work.launch.lockstep:
        return _busy_cu_workgroups(occ["grid"], arch, occ["wgs_per_cu"])
    return occ["waves_per_simd"]


def _closed_cycle_stretch(short: np.ndarray, long: np.ndarray, waves: np.ndarray) -> np.ndarray:
    """How much longer than its longest stage a chain runs when w waves cycle through it.

    Each wave alternates between the longest stage (the matrix product) and the rest (softmax
    on the VALU and SFU); the w customers (the resident waves of a SIMD, or the workgroups of a
    CU where their waves run in lockstep: `_chain_customers`) cycle through a closed network of
    these two stations. With exponential service its throughput is
    mu_long (1 - r^w) / (1 - r^(w+1)), r = mu_long / mu_short (Gordon and Newell 1967; Buzen 1973),
    so the chain lasts the longest stage x `_two_station_stretch`: the sum of the stages for
    one wave, x (w+1)/w when the two are equal, the longest stage alone as w grows."""
    return _two_station_stretch(short, long, np.maximum(np.asarray(waves, dtype=float), 1.0))


def _two_station_stretch(fast: np.ndarray, slow: np.ndarray, n) -> np.ndarray:
    """(1 - r^(n+1)) / (1 - r^n), r = fast / slow stage time: by how much two stations with
    exponential service, coupled by n places (waves in a closed cycle, or a pipeline's buffer
    plus three), run slower than their slower station; (n+1)/n at r = 1, 1 at r = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = slow > 0
        # arrays of one shape whose slower stage is positive everywhere (a GEMM sweep's): both
        # np.where would pick fast / slow, and below the test of r every stretch
        whole = np.ndim(fast) > 0 and np.shape(fast) == np.shape(slow)
        r = fast / slow if whole and pos.all() else np.where(pos, fast / np.where(pos, slow, 1.0), 0.0)
        if isinstance(n, int):  # r^n by multiplication: cheaper than pow on the GEMM sweeps
            rn = r.copy()
            for _ in range(n - 1):
                rn *= r
        else:
            rn = r**n
        apart = r < 1.0 - 1e-9
        stretch = (1.0 - rn * r) / (1.0 - rn)
        return stretch if whole and apart.all() else np.where(apart, stretch, (n + 1.0) / n)


def _coexec_chain(work: Work, customers: np.ndarray, terms: _Terms, coexec: dict) -> bool:
    """`_dependent_chain` on a spec with a matrix pipe's `valu_coexec`; False if it does not apply."""
    compute = sorted(k for k in terms.time if is_compute(k))
    pipe_of = {k: split_flop_key(k.split(":", 1)[1])[0] for k in compute}
    matrix = [k for k in compute if pipe_of[k] in coexec]
    side = [k for k in compute if pipe_of[k] in ("valu", "sfu")]
    if not matrix or not side:
        return False
    m = np.sum([terms.own(k) for k in matrix], axis=0)
    o = np.sum([terms.own(k) for k in side], axis=0)
    c = min(coexec[pipe_of[k]].value for k in matrix)
    chained = any(compute_term(k) in matrix for k in work.dependent)
    h = np.clip(customers - 1.0, 0.0, 1.0) if chained else 1.0
    _stretch_longest(terms, matrix + side, m + np.maximum(0.0, o - h * c * m))
    return True


def _stretch_longest(terms: _Terms, keys: list[str], chain) -> None:
    """Let the longest of ``keys`` stand for the chain's time; the others keep their own."""
    longest = _largest([terms.time[k] for k in keys])
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(longest > 0, chain / longest, 1.0)
    for k in keys:
        terms.time[k] = np.where(terms.time[k] >= longest, terms.time[k] * scale, terms.time[k])


def _k_loop(work: Work, arch: Arch, occ: dict, terms: _Terms) -> None:
    """The latency floor of a tiled kernel's main loop: each K step's matrix instructions wait
    for operands whose global loads were issued `k_loop_prefetch_depth` steps earlier, so a
    step takes at least the device-memory latency / that depth, however little work it holds.
    Tiles resident on one CU overlap their chains; the rounds of tiles a CU runs add up. Short
    K and small tiles (skinny GEMMs, split-K) are where this floor exceeds the other terms."""
    L = work.launch
    steps = np.asarray(L.k_steps if L else 0.0, dtype=float)
    if not np.any(steps > 0):
        return
    rounds = np.ceil(occ["grid"] / (arch.cus * occ["wgs_per_cu"]))
    per_step = latency_s(arch, arch.memory_level) / prefetch_depth(L)
    terms.time[K_LOOP] = _busiest_steps(L, steps, rounds) * per_step


def _busiest_steps(L, steps, rounds) -> np.ndarray:
    """K steps the busiest CU runs one after another: its rounds of mean tiles, or the heaviest
    tile alone where unequal tiles (`Launch.tile_imbalance`: a causal mask's full-length query
    blocks) outlast them. `Launch.k_steps` is the mean tile's count, so a masked kernel with one
    round would otherwise time its loop as if every tile were the mean one."""
    h = np.maximum(np.asarray(L.tile_imbalance, dtype=float), 1.0)
    return np.maximum(rounds * steps, steps * h)


def prefetch_depth(L):
    """K steps a tiled main loop's loads run ahead: the launch's own where it gives one (a
    shared-memory pipeline as deep as shared memory holds), else `k_loop_prefetch_depth`."""
    const = constants()["k_loop_prefetch_depth"]["value"]
    d = np.asarray(L.prefetch_depth, dtype=float)
    if not np.any(d > 0):
        return const
    return np.where(d > 0, d, const)


def take_labels(labels: list[str], code) -> np.ndarray:
    """``np.take(labels, code)``, the same unicode array bit for bit, gathered as rows of the
    labels' code points (uint32): a fixed-width string element is copied as one odd-sized item,
    a row of words a third faster (the bound classes of a sweep are its largest arrays)."""
    table = np.asarray(labels)
    if table.dtype.kind != "U" or table.itemsize == 0 or table.ndim != 1 or np.ndim(code) == 0:
        return np.take(table, code)
    rows = table.view(np.uint32).reshape(len(table), -1)
    return np.take(rows, code, axis=0).view(table.dtype).reshape(np.shape(code))


def _largest(arrays: list) -> np.ndarray:
    """The elementwise maximum of float arrays of one shape, a new array: ``np.maximum.reduce``'s,
    bit for bit (the same comparisons in the same order), without first copying the arrays into
    one stacked 2-D array as the reduction of a list does."""
    if len(arrays) == 1:
        return np.array(arrays[0])
    out = np.maximum(arrays[0], arrays[1])
    for a in arrays[2:]:
        np.maximum(out, a, out=out)
    return out


def _load_compute_pipeline(work: Work, terms: _Terms, shape) -> np.ndarray | None:
    """A tiled kernel's main loop is a two-stage pipeline: loads fill a buffer of
    `prefetch_depth` K steps (Tensile's 2, or a Hopper tile's shared-memory stages - 1) that the
    matrix pipe drains. With variable stage times the line runs slower than its slower stage when
    the two are close (a finite buffer cannot absorb every fluctuation): for two stages with
    exponential service times and B buffer places between them, the throughput is
    mu_slow (1 - r^K) / (1 - r^(K+1)), r = mu_slow / mu_fast,
    K = B + 3 (the two-station line with blocking, Hillier & Boling 1967; Buzacott &
    Shanthikumar, Stochastic Models of Manufacturing Systems, 1993). So the body lasts the
    slower stage's time x (1 - r^(K+1)) / (1 - r^K): x (K+1)/K when the compute and memory
    terms are equal (1.2 at B = 2), x 1.02 at r = 0.5, x 1 far from the ridge
    (`_two_station_stretch` with K places). The slower of the largest compute and memory terms
    stands for the stretched body. Returns the faster of the two, which the stretch leaves as it
    is (`_pipeline_fill` adds one step of it), or None where the kernel is no such pipeline."""
    L = work.launch
    if L is None or not np.any(np.asarray(L.tile_m) > 0):
        return None
    comp = [np.broadcast_to(v, shape) for k, v in terms.time.items() if is_compute(k)]
    mem = [np.broadcast_to(v, shape) for k, v in terms.time.items() if k.startswith("memory:")]
    if not comp or not mem:
        return None
    c, m = _largest(comp), _largest(mem)
    slow, fast = np.maximum(c, m), np.minimum(c, m)
    depth = prefetch_depth(L)
    factor = _two_station_stretch(fast, slow, int(depth) + 3 if np.ndim(depth) == 0 else depth + 3.0)
    tiled = np.asarray(L.tile_m) > 0
    if not np.all(tiled):
        factor = np.where(tiled, factor, 1.0)
    for key in [k2 for k2 in terms.time if is_compute(k2) or k2.startswith("memory:")]:
        t = np.broadcast_to(terms.time[key], shape)
        on = t >= slow
        if not on.any() and _own_array(terms.time[key], shape):
            continue  # never the slowest stage: np.where's copy would hold the same bits
        terms.time[key] = select(on, t * factor, t)
    return fast


def _own_array(a, shape) -> bool:
    """Whether ``a`` is a whole float64 array of ``shape`` that may stand for a copy of itself."""
    return isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == shape and a.flags.writeable


def _pipeline_fill(L, faster: np.ndarray | None, rounds, alone, shape) -> np.ndarray:
    """Seconds a tiled kernel's main loop adds by filling and draining its load-compute pipeline.

    A loop of n steps whose loads take a and whose matrix work takes b per step overlaps the two
    for n - 1 steps: the first step's loads have no matrix work beside them, the last step's
    matrix work no loads, so the loop lasts n max(a, b) + min(a, b), one step of the faster stage
    (``faster``: `_load_compute_pipeline`) more than the body. The first round of tiles pays it;
    where a tile runs ``alone`` (one workgroup per CU of a non-persistent AMD grid) every round
    does, as it pays the prologue and epilogue latencies. Short loops are where it shows:
    attention over a few KV blocks (`Launch.k_steps`), short-K GEMMs."""
    if faster is None:
        return np.zeros(shape)
    steps = np.asarray(L.k_steps, dtype=float) * np.ones(shape)
    per_round = faster / _busiest_steps(L, np.maximum(steps, 1.0), rounds)  # one step of one round
    return select((np.asarray(L.tile_m) > 0) & (steps > 0), per_round * select(alone, rounds, 1.0), 0.0)


def _exposed_epilogue(
    arch: Arch, occ: dict, L, terms: _Terms, alone, rounds, shape, first_principles, clock: float
) -> np.ndarray:
    """What the epilogue writes add to the body when each round's write follows its compute.

    A round then lasts its compute plus its write, so the kernel lasts at least the compute
    terms plus the rounds' writes; a memory term that already exceeds that (the writes are in
    it) needs nothing more. Only the excess over the body is added (AMD: `_epilogue_drain`)."""
    drain = select(alone, rounds * _epilogue_drain(arch, occ, L, first_principles, clock), 0.0)
    if not np.any(drain > 0):
        return np.zeros(shape)
    comp = [np.broadcast_to(v, shape) for k, v in terms.time.items() if is_compute(k)]
    if not comp:
        return np.zeros(shape)
    body = _largest([np.broadcast_to(v, shape) for v in terms.time.values()])
    return np.maximum(0.0, _largest(comp) + drain - body)


def _epilogue_drain(arch: Arch, occ: dict, L, first_principles: bool, clock: float = 1.0) -> np.ndarray:
    """Seconds one round of tiles takes to write its epilogue (C, O) when nothing overlaps it.

    A wave ends only after its stores are acknowledged (S_ENDPGM waits for the outstanding
    memory counters), so with one workgroup per CU the next tile starts after the last one's
    write; the tiles of a round finish together, so their writes share the write path: the
    round's bytes at the bandwidth of the first level that holds them (L2, else the MALL, else
    device memory), as split-K partials are booked; the L2 at the kernel's core clock."""
    per_wg = np.asarray(L.epilogue_bytes, dtype=float)
    if not np.any(per_wg > 0):
        return np.zeros(np.shape(occ["grid"]))
    burst = np.minimum(occ["grid"], arch.cus * occ["wgs_per_cu"]) * per_wg
    secs = burst / bandwidth(arch, arch.memory_level, first_principles)[0]
    for level in reversed([lv for lv in ("l2", "mall") if lv in arch.levels]):
        fits = burst <= arch.capacity(level)
        rate = bandwidth(arch, level, first_principles)[0] * (clock if level in CORE_CLOCKED_LEVELS else 1.0)
        secs = select(fits, burst / rate, secs)
    return secs


def _split_reduction(arch: Arch, occ: dict, L, alone, rounds, first_principles: bool, clock: float):
    """Seconds an in-kernel split-K reduction adds after the main loop (`Launch.reduce_bytes`).

    hipBLASLt's MultipleBufferSingleKernel split-K (and CK's): every split writes its fp32
    partial tile, and the last workgroup to reach a tile reads the other splits' partials and
    sums them before it writes C. That read is one workgroup's, through its own CU's L1, while
    the other splits' CUs have finished; the tiles reduced at once share the L2. AMD's analytical
    GEMM model times it the same way: (GSU - 1) x MT0 x MT1 x 4 B over one CU's L1 bus width,
    against the L2's width per reducing CU (ROCm/rocm-libraries `shared/origami`, tensilelite
    simulator `getMultipleBufferSingleKernelOverhead`). Paid by every round where a tile runs
    ``alone`` on its CU, else once (other resident tiles run their main loops meanwhile)."""
    per_wg = np.asarray(L.reduce_bytes, dtype=float)
    if not np.any(per_wg > 0):
        return 0.0
    secs = np.zeros(np.shape(per_wg))
    if "l1" in arch.levels:
        secs = per_wg / (bandwidth(arch, "l1", first_principles)[0] * clock / arch.cus)
    if "l2" in arch.levels:
        reducers = np.minimum(occ["grid"], arch.cus * occ["wgs_per_cu"]) / np.maximum(np.asarray(L.split_k, dtype=float), 1.0)
        secs = np.maximum(secs, reducers * per_wg / (bandwidth(arch, "l2", first_principles)[0] * clock))
    return secs * select(alone, rounds, 1.0)


def _timed_terms(work: Work, shape, terms: _Terms) -> None:
    """Terms a model timed itself (interconnect transfers: bytes / link bandwidth + per-step
    latency); the naive roofline keeps the bandwidth part, and the term is latency-bound when
    the latency part dominates."""
    ones = np.ones(shape)
    for t, secs in work.timed.items():
        secs = np.asarray(secs, dtype=float) * ones
        lat = np.asarray(work.timed_latency.get(t, 0.0), dtype=float) * ones
        terms.time[t] = secs
        terms.naive[t] = secs - lat
        terms.latency_limited[t] = lat > secs - lat


def _workgroup_launch(work: Work, arch: Arch, shape, terms: _Terms, clock: float = 1.0) -> None:
    """The dispatchers launch workgroups at a finite rate (archspec `launch.workgroup_rate`), so a
    grid of many small workgroups takes at least grid / rate however little each one does
    (PyTorch's BatchNorm transform: 262,144 one-wave workgroups; AITER's per-head RMSNorm: one
    64-lane workgroup per row). A throughput floor beside the compute and memory terms, only
    where the model knows the grid and the spec has a figure (missing, never zero, elsewhere);
    the naive roofline leaves it out. The rate is per core clock, so a kernel that keeps a matrix
    pipe busy launches at its loaded clock (``clock``: the share of the spec clock)."""
    rate = arch.workgroups_per_s()
    rate = None if rate is None else rate * clock
    L = work.launch
    if rate is None or L is None or not np.any(np.asarray(L.grid) > 0):
        return
    dispatched = np.asarray(L.kernels, dtype=float) > 0  # a conditional helper kernel may not run
    terms.time[WORKGROUP_LAUNCH] = np.where(dispatched, np.asarray(L.grid, dtype=float), 0.0) * np.ones(shape) / rate


def _serial_kernels(work: Work, arch: Arch, shape, terms: _Terms, own, include_launch, first_principles, notes):
    """Add the kernels dispatched one after another with this one (`Work.serial`): each is
    estimated on its own (kernel scope: the timing scope's overhead is paid once, by the call)
    and its time adds to the total as the term ``serial``; where they take longer than this
    kernel, the operation's bound class is theirs. Their naive roofline times add the same way."""
    bound, time_s, nbody = own
    total = np.zeros(shape)
    naive = np.zeros(shape)
    longest = np.zeros(shape)
    sub_bound = np.full(shape, UNKNOWN, dtype=object)
    for sub in work.serial:
        e = estimate(sub, arch, include_launch=include_launch, first_principles=first_principles)
        t = np.broadcast_to(e.time_s, shape)
        total = total + t
        naive = naive + np.broadcast_to(e.roofline_time_s, shape)
        sub_bound = np.where(t > longest, np.broadcast_to(e.bound, shape), sub_bound)
        longest = np.maximum(longest, t)
        for text in e.notes:
            add_note(*notes, text, e.note_where.get(text))
    terms.time[SERIAL] = total
    bound = np.where(total > time_s, sub_bound, bound)
    return bound, time_s + total, nbody + naive


def _fewer_rows(floors: list, arch: Arch, shape, terms: _Terms, own, include_launch, first_principles, scope, notes):
    """The time is at least that of the same operation on fewer rows (`Work.fewer_rows`): a
    kernel for all the rows also computes the first ones, and an estimate is a lower bound on
    the time of the fastest kernel, so a lower bound on the smaller problem bounds the larger
    one. Each of ``floors`` is (the smaller problems, the flat index of the case each floors); a
    case may have several (one per rung of each of its family's ladders) and the largest counts.
    Where the floor exceeds the case's own time it is the time (term ``latency:fewer_rows``) and
    the bound class that smaller problem's; elsewhere nothing changes. Without it, 33 rows could
    be predicted twice as fast as 32 (the tile ranking picks a 64-row tile with four times the
    bytes in flight), which no kernel does."""
    bound, time_s = own
    subs = [estimate(sub, arch, include_launch=include_launch, first_principles=first_principles, scope=scope) for sub, _ in floors]
    at = np.concatenate([a for _, a in floors])
    t_sub = np.concatenate([np.asarray(e.time_s, dtype=float).ravel() for e in subs])
    b_sub = np.concatenate([np.asarray(e.bound).ravel() for e in subs])
    size = int(np.prod(shape)) if shape else 1
    floor = np.zeros(size)
    np.maximum.at(floor, at, t_sub)
    own_t = np.broadcast_to(time_s, shape).ravel()
    won = floor > own_t
    if not np.any(won):
        return bound, time_s
    top = t_sub >= floor[at]  # the rung that set each case's floor (any of a tie)
    time_s = np.where(won, floor, own_t).reshape(shape)
    flat_bound = np.array(np.broadcast_to(bound, shape)).ravel()
    lead = top & won[at]
    flat_bound[at[lead]] = b_sub[lead]
    terms.time[FEWER_ROWS] = np.where(won, floor, 0.0).reshape(shape)
    text = "time floored at the estimate of the same operation on fewer rows, tokens or images (more work is never faster)"
    add_note(*notes, text, None if np.all(won) else won.reshape(shape))
    return flat_bound.reshape(shape), time_s


# the launch fields another way of running a case brings with it (what the prediction reports of
# its geometry)
_ALTERNATIVE_LAUNCH = ("grid", "workgroup_size", "tile_m", "tile_n", "tile_k", "split_k", "k_steps")


def _alternatives(work: Work, arch: Arch, shape, terms: _Terms, occ: dict, own, include_launch, first_principles, scope, notes):
    """Where the same operation run another way (`Work.alternatives`: padded to a tile's height,
    a GQA forward without sharing) times faster than the case's own kernel, it is the prediction:
    that kernel computes the case too, and the fastest kernel is never slower than it. The case
    then takes that kernel's time, bound class, terms, tile and grid, with the entry's note; its
    FLOPs, bytes and naive roofline stay its own."""
    bound, time_s = own
    size = int(np.prod(shape)) if shape else 1
    flat_t = np.array(np.broadcast_to(time_s, shape), dtype=float).ravel()
    # the times first: where no alternative is faster (most cases of a sweep), the case's own
    # terms, launch and occupancy stay as they are and are never copied
    wins = []  # (alternative, its estimate, the cases it takes, its mask over its own cases)
    for i, (sub, at, _) in enumerate(work.alternatives):
        e = estimate(sub, arch, include_launch=include_launch, first_principles=first_principles, scope=scope)
        t = np.broadcast_to(np.asarray(e.time_s, dtype=float), (len(at),))
        faster = t < flat_t[at]
        if np.any(faster):
            flat_t[at[faster]] = t[faster]
            wins.append((i, e, at[faster], faster))
    if not wins:
        return bound, time_s
    flat_b = np.array(np.broadcast_to(bound, shape)).ravel()
    L = work.launch
    launch = {f: np.array(np.broadcast_to(np.asarray(getattr(L, f), dtype=float), shape)).ravel() for f in _ALTERNATIVE_LAUNCH}
    occ_flat = {k: np.array(np.broadcast_to(v, shape), dtype=float).ravel() for k, v in occ.items()}
    time = {k: np.array(np.broadcast_to(v, shape), dtype=float).ravel() for k, v in terms.time.items()}
    owner = np.full(size, -1)  # the alternative that holds each case (-1: its own kernel)
    for i, e, take, faster in wins:  # in order: a later alternative overwrites an earlier one's cases
        n = len(faster)
        sub = work.alternatives[i][0]
        owner[take] = i
        flat_b[take] = np.broadcast_to(np.asarray(e.bound), (n,))[faster]
        for k in dict.fromkeys([*time, *e.terms]):
            time.setdefault(k, np.zeros(size))[take] = np.broadcast_to(np.asarray(e.terms.get(k, 0.0), dtype=float), (n,))[faster]
        for f, v in launch.items():
            v[take] = np.broadcast_to(np.asarray(getattr(sub.launch, f), dtype=float), (n,))[faster]
        for k, v in occ_flat.items():
            v[take] = np.broadcast_to(np.asarray(e.occupancy[k], dtype=float), (n,))[faster]
    for f, v in launch.items():
        setattr(L, f, v.reshape(shape))
    occ.update({k: v.reshape(shape) for k, v in occ_flat.items()})
    terms.time.update({k: v.reshape(shape) for k, v in time.items()})
    for i, (_, _, note) in enumerate(work.alternatives):
        won = owner == i
        if np.any(won):
            add_note(*notes, note, None if np.all(won) else won.reshape(shape))
    return flat_b.reshape(shape), flat_t.reshape(shape)


def _dispatch_spacing(work: Work, arch: Arch, shape, terms: _Terms, own, scope: str, kernels):
    """A loop of back-to-back calls from compiled host code (scope ``loop``): the host submits
    one dispatch per spacing (model_constants.yaml ``scope_overhead``: ROCm's stream-loop
    spacing, CUDA's cudaLaunchKernel cost), and the GPU runs the queued kernels one after
    another, so a call lasts the longer of its kernels' own time and the spacing of its
    dispatches. The spacing is a floor (term ``overhead:loop``, bound class ``launch`` where it
    wins), not an addition: events around such a loop do not see each call's submission.
    ``kernels``: this kernel's dispatches, as `estimate` counts them for its launch term."""
    bound, time_s = own
    dispatches = kernels
    for sub in work.serial:  # the kernels dispatched one after another with this one
        dispatches = dispatches + np.asarray(sub.launch.kernels if sub.launch else 1.0, dtype=float)
    floor = np.array(np.broadcast_to(scope_overhead_s(arch, scope) * dispatches, shape), dtype=float)
    terms.time[overhead_term(scope)] = floor
    wins = floor > time_s
    if not np.any(wins):
        return bound, time_s
    return np.where(wins, LAUNCH, bound), np.maximum(time_s, floor)


def _outer_level_wins_ties(terms: _Terms, names: list[str], idx: np.ndarray, body: np.ndarray, shape) -> np.ndarray:
    """Where a cache level's term equals that of a level behind it on the global-memory path, the
    outer level is the bound: a cache is timed at the outer level's rate when its own figure is
    below it (`rates.bandwidth`: MI355X's placeholder MALL), so a stream that moves the same bytes
    through both is limited by the memory, not by the cache. `largest_term` keeps the first."""
    path = [memory_term(lv) for lv in GLOBAL_PATH]
    mem = [n for n in path if n in names]
    if len(mem) < 2:
        return idx
    is_mem = np.zeros(len(names), dtype=bool)
    is_mem[[names.index(m) for m in mem]] = True
    out = idx.copy()
    for n in mem[1:]:  # outward: the outermost equal term is kept
        t = np.broadcast_to(terms.time[n], shape)
        tie = (t >= body) & (t > 0) & is_mem[out]
        out[tie] = names.index(n)
    return out


def _bound(
    terms: _Terms, shape, launch, fill, overhead: tuple[str, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(bound class, time) per point: the largest term, ``latency`` when Little's law capped
    it or the serial memory latencies (``fill``, added to the body) exceed it, ``launch`` when
    the fixed costs (launch overhead per kernel dispatched plus the timing scope's ``overhead``,
    all added) exceed both."""
    names = list(terms.time)
    idx, body = largest_term([np.broadcast_to(terms.time[n], shape) for n in names])
    idx = _outer_level_wins_ties(terms, names, idx, body, shape)
    # bound classes as integer codes into `labels` (fast on large batches), strings at the end
    labels = [bound_label(n) for n in names] + [LATENCY, LAUNCH]
    code = idx.copy()
    for i, n in enumerate(names):
        if n in terms.latency_limited:
            code[(idx == i) & terms.latency_limited[n]] = len(names)
    fill = np.broadcast_to(np.asarray(fill, dtype=float), shape)
    if np.any(fill > 0):
        terms.time[FILL] = np.array(fill)
        code[fill > body] = len(names)
    fixed = 0.0
    if launch is not None:
        terms.time[LAUNCH] = np.array(np.broadcast_to(launch, shape), dtype=float)
        fixed = fixed + terms.time[LAUNCH]
    if overhead is not None and overhead[1] > 0:
        terms.time[overhead[0]] = np.full(shape, overhead[1])
        fixed += overhead[1]
    if launch is None and (overhead is None or overhead[1] <= 0):
        return take_labels(labels, code), body + fill
    code[(fixed > body) & (fixed > fill)] = len(names) + 1
    return take_labels(labels, code), body + fill + fixed


def estimate(
    work: Work, arch: Arch, include_launch: bool = True, first_principles: bool = False, scope: str = "kernel"
) -> Estimate:
    """Time a batch of `Work` on `arch`: every term, bound class, naive roofline, headroom.

    ``first_principles=True`` times it from theoretical peaks and the generic efficiencies only
    (no per-GPU benchmark ceiling or clock): the estimate for held-out data. ``scope`` is what
    the time covers (see `perfmodel.vocab.SCOPES`): ``events`` and ``host`` add their overhead
    as the term ``overhead:<scope>``, ``loop`` floors the time at the dispatch spacing
    (`_dispatch_spacing`); the naive roofline never includes either.
    """
    shape = _shape(work)
    occ = occupancy(arch, work, shape)
    used = RatesUsed()
    terms = _Terms()
    # texts (each once: a model may add one note per sub-GEMM), and the cases of conditional ones
    notes = (list(dict.fromkeys(work.notes)), dict(work.note_where))
    matrix = sorted({p for p in (split_flop_key(k)[0] for k in work.flops) if p in MATRIX_PIPES})
    clock = loaded_core_clock(arch, matrix, first_principles)
    _compute_terms(work, arch, occ["quantization"], used, terms, notes, first_principles, clock)
    _integer_terms(work, arch, occ["quantization"], used, terms, notes, clock)
    _one_vector_alu(arch, terms)
    _dependent_chain(work, arch, occ, terms)
    _memory_terms(work, arch, occ, shape, used, terms, notes, first_principles, clock)
    _timed_terms(work, shape, terms)
    _workgroup_launch(work, arch, shape, terms, clock[0])
    _k_loop(work, arch, occ, terms)
    faster = _load_compute_pipeline(work, terms, shape)
    if not terms.time:
        terms.time[NO_WORK] = np.zeros(shape)
        terms.naive[NO_WORK] = np.zeros(shape)
    L = work.launch
    lat = latency_s(arch, arch.memory_level)
    fill = np.asarray(L.serial_latencies if L else 0.0, dtype=float) * lat
    if L is not None and np.any(np.asarray(L.tile_m) > 0):
        # one workgroup per CU: no other tile runs while a tile waits for its first operands or
        # drains its stores, so every round of tiles pays the prologue and epilogue again
        rounds = np.ceil(occ["grid"] / (arch.cus * occ["wgs_per_cu"]))
        alone = (np.asarray(L.tile_m) > 0) & (occ["wgs_per_cu"] < 2)
        fill = fill * select(alone, rounds, 1.0)
        if arch.vendor == "AMD":
            fill = fill + _exposed_epilogue(arch, occ, L, terms, alone, rounds, shape, first_principles, clock[0])
        # Hopper's kernels are persistent: their producer warps load the next tile's first K
        # steps during the current tile's epilogue, so only the first round fills the pipeline
        fill = fill + _pipeline_fill(L, faster, rounds, alone & (arch.vendor == "AMD"), shape)
        fill = fill + _split_reduction(arch, occ, L, alone, rounds, first_principles, clock[0])
    if L is not None and np.any(np.asarray(L.kernel_latencies) > 0):  # once per kernel, not per round
        fill = fill + np.asarray(L.kernel_latencies, dtype=float) * lat
    added = scope != "kernel" and scope not in FLOOR_SCOPES
    overhead = (overhead_term(scope), scope_overhead_s(arch, scope)) if added else None
    kernels = np.broadcast_to(np.asarray(L.kernels if L else 1.0, dtype=float), shape)
    launch = arch.launch_overhead_s * kernels if include_launch else None
    bound, time_s = _bound(terms, shape, launch, fill, overhead)
    nnames = list(terms.naive)
    nidx, nbody = largest_term([np.broadcast_to(terms.naive[n], shape) for n in nnames])
    nlabels = take_labels([bound_label(n) for n in nnames], nidx)
    if work.serial:
        bound, time_s, nbody = _serial_kernels(
            work, arch, shape, terms, (bound, time_s, nbody), include_launch, first_principles, notes
        )
    if work.alternatives:
        bound, time_s = _alternatives(work, arch, shape, terms, occ, (bound, time_s), include_launch, first_principles, scope, notes)
    if work.fewer_rows:
        bound, time_s = _fewer_rows(work.fewer_rows, arch, shape, terms, (bound, time_s), include_launch, first_principles, scope, notes)
    if scope in FLOOR_SCOPES and include_launch:
        bound, time_s = _dispatch_spacing(work, arch, shape, terms, (bound, time_s), scope, kernels)
    return Estimate(
        arch=arch,
        work=work.with_serial(),
        terms=terms.time,
        time_s=time_s,
        bound=bound,
        roofline_time_s=nbody,
        roofline_bound=nlabels,
        rates_used=used,
        occupancy=occ,
        notes=notes[0],
        note_where=notes[1],
    )


make_callable(__name__, estimate)  # `perfmodel.estimate(...)` even after this module was imported
