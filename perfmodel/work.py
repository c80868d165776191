"""`Work`: what a kernel must do, independent of the GPU that runs it.

Kernel models produce it from shapes; counter formulas produce the same quantities from rocprof
measurements, so a prediction and a measurement compare field by field.

Conventions (SI units):
- FLOPs are keyed ``"<pipe>:<dtype>"`` (``"mfma:bf16"``, ``"valu:fp32"``, ``"sfu:fp32"``).
- Bytes are keyed by memory level (``"lds"``, ``"l1"``, ``"l2"``, ``"mall"``, ``"hbm"``/``"vram"``)
  and split into reads and writes; ``bytes`` is their sum.

Values may be Python floats or numpy arrays of one shape: kernel models are vectorised, so one
call evaluates a whole batch of shapes (a sweep, or all cases of one kernel in a file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfmodel.vocab import flop_key


@dataclass
class Launch:
    """Launch geometry: what occupancy, latency hiding and wave quantization depend on.

    Every field may be a scalar or an array matching the batch.
    """

    grid: Any = 0  # number of workgroups
    workgroup_size: Any = 256  # work-items per workgroup
    vgprs: Any = 0  # VGPRs (+AGPRs) per work-item; 0 = unknown (no register limit applied)
    lds_bytes: Any = 0  # LDS per workgroup
    tile_m: Any = 0  # macro-tile of a tiled kernel (GEMM, attention); 0 = not tiled
    tile_n: Any = 0
    tile_k: Any = 0
    bytes_in_flight_per_wave: Any = 0  # outstanding memory bytes one wave keeps in flight; 0 = default
    # device-memory round trips on the critical path that no other work hides: a tiled kernel's
    # prologue (the first K step's operands must arrive before the first matrix instruction)
    # and epilogue (the last tiles' C stores must complete before the kernel does)
    serial_latencies: Any = 0
    # device-memory round trips on the critical path paid once per kernel, not per round of
    # tiles: a persistent kernel's read of its work range before its first work item, a combine
    # kernel's reads of the index maps that locate its partials
    kernel_latencies: Any = 0
    # K splits of a tiled GEMM (each split writes fp32 partial sums that are reduced afterwards)
    split_k: Any = 1
    # kernels this Work's bytes and FLOPs stand for, dispatched one after another (a split-KV
    # or split-row combine booked with its main kernel; 0 where a conditional helper kernel is
    # not dispatched): each pays the per-dispatch fixed cost (archspec `launch.overhead`).
    # Kernels timed on their own grids are `Work.serial` instead
    kernels: Any = 1
    # share of the matrix instructions' work that produces output: a tiled kernel issues its whole
    # macro-tile, so rows and columns past the matrix edge are padding the matrix pipe still runs
    useful_fraction: Any = 1.0
    # K steps one tile walks in its main loop (attention: KV blocks forward, query blocks backward),
    # each waiting on global loads issued a fixed number of steps ahead (0 = no K loop): the
    # estimator's `latency:k_loop` floor, and one step of the pipeline fill in `fill`
    k_steps: Any = 0
    # K steps the main loop's loads run ahead of the matrix instructions (0 = the
    # `k_loop_prefetch_depth` constant): sets the `latency:k_loop` floor and the pipeline's buffer
    prefetch_depth: Any = 0
    # whether the kernel can balance a tiled grid's last wave by splitting tiles' K loops over idle
    # CUs (stream-K), where the target's library does (`estimate.library_stream_k`); attention
    # kernels run one tile per workgroup
    stream_k: bool = True
    # the heaviest tile's work / the mean tile's work (causal attention: the last query block sees
    # every key); an under-filled grid lasts as long as its heaviest tile
    tile_imbalance: Any = 1.0
    # bytes one workgroup of a tiled kernel writes after its main loop (a GEMM's C tile, an
    # attention tile's O): with one workgroup per CU nothing overlaps that write
    epilogue_bytes: Any = 0.0
    # bytes the last workgroup of each split-K tile reads back, alone, to sum the other splits'
    # partial tiles before it writes C (hipBLASLt's in-kernel MultipleBufferSingleKernel reduction)
    reduce_bytes: Any = 0.0
    # the waves of a workgroup meet at a barrier every step of the main loop (attention backward:
    # dS is shared through LDS), so they run each step's phases together and only other resident
    # workgroups can fill the matrix pipe while one of them runs its softmax
    lockstep: bool = False


class LevelBytes:
    """Bytes per memory level as reads, writes and (for counters that do not split them)
    unsplit traffic; ``bytes`` is their sum. Shared by `Work` and `Measurement`, so a model and
    a measurement add up their bytes the same way (a `Prediction` carries its Work's sums)."""

    __slots__ = ()
    bytes_read: dict
    bytes_write: dict
    bytes_unsplit = None  # levels whose counters do not split reads from writes (a Measurement's)

    @property
    def bytes(self) -> dict:
        """Bytes moved at each level: reads plus writes (plus unsplit traffic)."""
        r, w = self.bytes_read, self.bytes_write
        u = self.bytes_unsplit
        if not u and w.keys() <= r.keys():  # the common case, and the hot path of large batches
            return {lv: v + w.get(lv, 0.0) for lv, v in r.items()}
        u = u or {}
        return {lv: r.get(lv, 0.0) + w.get(lv, 0.0) + u.get(lv, 0.0) for lv in dict.fromkeys([*r, *w, *u])}


@dataclass
class Work(LevelBytes):
    """FLOPs per (pipe, dtype) and bytes per memory level, plus launch geometry."""

    flops: dict[str, float] = field(default_factory=dict)
    bytes_read: dict[str, float] = field(default_factory=dict)
    bytes_write: dict[str, float] = field(default_factory=dict)
    launch: Launch | None = None
    notes: list[str] = field(default_factory=list)
    # the cases (a boolean per case) a note of `notes` applies to, where not every case: a case's
    # notes then depend on its own shape only, never on the other cases batched with it
    note_where: dict[str, Any] = field(default_factory=dict)
    # FLOP keys issued as packed or dual-issue VALU instructions (v_pk_fma_f32, half2 maths):
    # timed at the spec's full VALU rate instead of the plain single-issue rate
    packed: set[str] = field(default_factory=set)
    # FLOP keys whose instructions run at another dtype's matrix rate (key -> (dtype, why, the
    # cases it applies to: a bool or a bool per case)): a kernel issuing gfx950's 16x16x32 fp8
    # MFMA, which runs at the bf16 rate, not the fp8 peak of the f8f6f4 instructions. The FLOPs
    # stay under their own key; only their timing changes
    rate_as: dict[str, tuple[str, str, Any]] = field(default_factory=dict)
    # terms a model times itself (collectives: "memory:link" seconds over the interconnect), with
    # the part of each that is per-step latency; the estimator adds them beside its own terms
    timed: dict[str, Any] = field(default_factory=dict)
    timed_latency: dict[str, Any] = field(default_factory=dict)
    # FLOP keys whose work forms one dependent chain inside each wave (flash attention: S = QK^T
    # on the matrix pipe, then max/exp/sum on the VALU and SFU, then PV): a wave cannot overlap
    # them with each other; only other waves on the same SIMD can fill the gaps (the estimator)
    dependent: set[str] = field(default_factory=set)
    # VALU instructions (lane issue slots) per FLOP key ("valu:fp32"), where a model enumerates
    # them: an FMA does 2 FLOPs in one slot, a max, add, multiply or convert 1 or 0 FLOPs in one
    # slot, and the spec's VALU FLOP rate counts every slot as an FMA. The estimator times such a
    # key by its slots (2 FLOP-equivalents each), not by its FLOPs
    valu_issue: dict[str, Any] = field(default_factory=dict)
    # integer VALU ops per "pipe:<op class>" (perfmodel.vocab.INT_OPS): timed as compute terms
    # at the spec's integer rates, never counted as FLOPs
    iops: dict[str, Any] = field(default_factory=dict)
    # other kernels the same operation dispatches on its stream before or after this one (a
    # library's layout transposes around a convolution): each is timed on its own and their
    # times add to this kernel's, since kernels of one stream run one after another
    serial: list[Work] = field(default_factory=list)
    # smaller sub-problems of the same operation (a GEMM's first rows, an attention's last queries
    # or first sequences, a convolution's first images; `models/fewer_rows.py`): a kernel for the
    # whole computes them too, so their estimates bound this one's time (`estimate._fewer_rows`)
    # each entry: (the smaller problems, the flat index of the case each of them floors)
    fewer_rows: list[tuple[Work, Any]] = field(default_factory=list)
    # the same operation run another way that a library could choose and that computes it too (a
    # GEMM padded up to a tile's height, `models/fewer_rows.add_ceiling`; a GQA forward run without
    # sharing K/V), so where that estimate is faster it is the prediction (`estimate._alternatives`);
    # each entry: (the other way, the flat index of the case it stands for, the note when it wins)
    alternatives: list[tuple[Work, Any, str]] = field(default_factory=list)
    # whether the L2 holds lines that a writer this prediction does not charge left dirty, which
    # this kernel's allocations evict (`traffic.dirty_writeback`): a single cold run, after a
    # write that flushes the cache or behind another kernel (the default); False in the steady
    # state of a repeated kernel (`traffic.warm_caches`) and in a modelled step, whose kernels
    # are each charged their own writes (`traffic.writes_charged`)
    dirty_l2: bool = True

    @property
    def total_flops(self):
        """Sum over pipes and dtypes (an array for a batch)."""
        return sum(self.flops.values()) if self.flops else 0.0

    def add_flops(self, pipe: str, dtype: str, n) -> None:
        k = flop_key(pipe, dtype)
        self.flops[k] = self.flops.get(k, 0.0) + n

    def add_valu_issue(self, dtype: str, n) -> None:
        """Add ``n`` VALU instructions (per lane) on ``valu:<dtype>``; their FLOPs go to `add_flops`."""
        k = flop_key("valu", dtype)
        self.valu_issue[k] = self.valu_issue.get(k, 0.0) + n

    def note(self, text: str, where=None) -> None:
        """Add a note for every case, or only for the cases where ``where`` is true."""
        add_note(self.notes, self.note_where, text, where)

    def add_iops(self, pipe: str, op: str, n) -> None:
        k = flop_key(pipe, op)
        self.iops[k] = self.iops.get(k, 0.0) + n

    def with_serial(self) -> Work:
        """This kernel's FLOPs and bytes plus those of its `serial` kernels: what the whole
        operation moves (the totals a prediction reports and counters of all its kernels see)."""
        if not self.serial:
            return self
        total = Work(dict(self.flops), dict(self.bytes_read), dict(self.bytes_write), self.launch, list(self.notes))
        total.note_where = dict(self.note_where)
        total.packed, total.timed, total.timed_latency = self.packed, self.timed, self.timed_latency
        total.rate_as = self.rate_as
        total.dependent, total.iops, total.valu_issue = self.dependent, dict(self.iops), dict(self.valu_issue)
        total.dirty_l2 = self.dirty_l2
        for sub in self.serial:
            for k, v in sub.flops.items():
                total.flops[k] = total.flops.get(k, 0.0) + v
            for k, v in sub.valu_issue.items():
                total.valu_issue[k] = total.valu_issue.get(k, 0.0) + v
            for k, v in sub.iops.items():
                total.iops[k] = total.iops.get(k, 0.0) + v
            for lv in dict.fromkeys([*sub.bytes_read, *sub.bytes_write]):
                total.add_bytes(lv, read=sub.bytes_read.get(lv, 0.0), write=sub.bytes_write.get(lv, 0.0))
        return total

    def add_bytes(self, level: str, read=0.0, write=0.0) -> None:
        self.bytes_read[level] = self.bytes_read.get(level, 0.0) + read
        self.bytes_write[level] = self.bytes_write.get(level, 0.0) + write


def add_note(notes: list[str], note_where: dict, text: str, where=None) -> None:
    """Add ``text`` to ``notes`` for every case (``where`` None) or for the cases where ``where``
    is true (kept in ``note_where``); nothing when it is true for none. A note given for every
    case stays so; conditions on the same note are or-ed."""
    if where is None:
        note_where.pop(text, None)
        if text not in notes:
            notes.append(text)
        return
    w = np.asarray(where, dtype=bool)
    if not w.any() or (text in notes and text not in note_where):
        return
    note_where[text] = w | note_where[text] if text in note_where else w
    if text not in notes:
        notes.append(text)

