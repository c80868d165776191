"""Helpers shared by the streaming kernel families (stream, elementwise, reduction, transpose,
softmax, norms, stencil): launch geometry of one-pass kernels and the compulsory traffic of a
pass over memory. The traffic rule itself lives in `traffic.stream_traffic`; this module only
feeds it and writes its result into a `Work`.

See docs/models-streaming.md for the formulas and the assumptions behind each choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfmodel import dtypes
from perfmodel.models import traffic
from perfmodel.models.registry import Param
from perfmodel.models.tiles import SPLITS, lds_limit, pow2
from perfmodel.work import Launch, Work

# Widest global load a lane issues (global_load_dwordx4): 16 bytes.
LOAD_BYTES = 16


def ceil_div(a, b):
    """Elementwise ceil(a / b) for float arrays of whole numbers."""
    return np.ceil(np.asarray(a, dtype=float) / np.asarray(b, dtype=float))


def add_valu_ops(w: Work, arch, dtype: str, ops, int_muls=0.0, int_ops=0.0) -> None:
    """A streaming kernel's arithmetic on ``dtype``: ``ops`` FLOPs at its VALU type, or, for an
    integer type, ``ops`` 32-bit integer adds/logic/shifts (`Work.iops`, timed at the spec's
    integer rates; narrower integers are widened to 32-bit lanes, packed 16-bit instructions are
    not assumed; a 64-bit op is its 32-bit instructions, `dtypes.WIDE_OPS`). ``int_muls`` 32-bit
    multiplies and ``int_ops`` more 32-bit adds/logic/shifts count on any type: a float kernel's
    index or random-number arithmetic (Philox) is 32-bit integer work beside its FLOPs."""
    if dtypes.is_integer(dtype):
        wide = dtypes.WIDE_OPS.get(dtype)
        if wide:
            ops, int_muls = (ops * wide["add"] + int_muls * wide["mul_adds"], int_muls * wide["mul"])
        int_ops = ops + int_ops
    else:
        w.add_flops("valu", dtypes.valu_dtype(arch, dtype), ops)
    if np.any(np.asarray(int_ops) > 0):
        w.add_iops("valu", "int32", int_ops)
    if np.any(np.asarray(int_muls) > 0):
        w.add_iops("valu", "int32_mul", int_muls)


def acc_dtype(arch, dtype: str) -> str:
    """The type reductions accumulate in (sums, means, softmax): fp64 stays fp64 (where the arch
    has a VALU fp64 rate), everything else accumulates in fp32 as PyTorch/MIOpen/Triton do."""
    return "fp64" if dtype == "fp64" and arch.has("valu", "fp64") else "fp32"


def acc_size(arch, dtype: str) -> float:
    return dtypes.size(acc_dtype(arch, dtype))


def waves_per_cu(arch) -> int:
    """Wave slots per CU (max waves per SIMD x SIMDs per CU)."""
    return int(arch.occupancy["max_waves_per_simd"].value) * arch.simds_per_cu


def resident_workgroups(arch, workgroup_size) -> np.ndarray:
    """Workgroups the whole device holds at once when waves are the only limit."""
    waves = ceil_div(workgroup_size, arch.wave_size)
    return arch.cus * np.maximum(1.0, np.floor(waves_per_cu(arch) / waves))


def row_budget(arch) -> float:
    """Bytes of one row a row-wise kernel can keep on chip for a single pass: one workgroup's
    LDS, or a thread-block cluster's where the target pools it (`row_cluster_workgroups`:
    Hopper's distributed shared memory, which QuACK's long-row kernels use)."""
    from perfmodel.rates import constants

    c = constants().get("row_cluster_workgroups", {}).get(arch.gfx)
    return lds_limit(arch) * (float(c["value"]) if c else 1.0)


def in_flight(arch, load_bytes, loads) -> np.ndarray:
    """Bytes one wave keeps in flight: lanes x bytes per load x loads issued before the first use."""
    return arch.wave_size * np.asarray(load_bytes, dtype=float) * np.asarray(loads, dtype=float)


def beyond(arch, level: str) -> list[str]:
    """Levels on the global-memory path outside ``level`` (e.g. beyond l2: mall, hbm)."""
    ch = traffic.chain(arch)
    return ch[ch.index(level) + 1 :] if level in ch else []


def line_bytes(arch, level: str = "l2") -> float:
    """Cache-line size of a level from the spec; 128 B (the CDNA L2 line) where it is not given."""
    q = arch.level(level).get("line") if level in arch.levels else None
    return float(q.value) if q is not None else 128.0


def pow2ceil(x) -> np.ndarray:
    x = np.maximum(np.asarray(x, dtype=float), 1.0)
    return pow2(np.ceil(np.log2(x)))


def row_launch(arch, rows, cols, s: float, sfu_per_element: float = 0.0, block=0.0, rows_per_workgroup=0.0) -> dict:
    """Geometry of a row-wise kernel (softmax, layernorm, rmsnorm).

    A row of at most one wave's worth of 16-B loads (64 x 16 B = 1 KiB on CDNA) is handled by one
    wave, four rows per 256-work-item workgroup (PyTorch's warp softmax / persistent norms);
    a longer row gets one workgroup of the next power of two of work-items that covers it at
    16 B per lane, capped at the arch's largest workgroup. ``fits`` says whether the row fits the
    on-chip budget (`row_budget`: the workgroup's LDS, or a cluster's), i.e. a single pass.
    ``block`` and ``rows_per_workgroup`` (0: the model's choice) pin the geometry a kernel was
    launched with (a trace's recorded block, and rows / grid): its grid, unsplit and not persistent.
    """
    rows = np.asarray(rows, dtype=float)
    cols = np.asarray(cols, dtype=float)
    row_bytes = cols * s
    wave = float(arch.wave_size)
    max_wg = float(arch.occupancy["max_workgroup_size"].value)
    load = max(s, LOAD_BYTES)
    wave_row = row_bytes <= wave * load
    split = split_rows(arch, rows, row_bytes, load, cols * sfu_per_element)
    part = row_bytes / split  # bytes of one workgroup's share of a row
    wg_big = np.clip(pow2ceil(part / load), wave, max_wg)
    wg = np.where(wave_row, min(256.0, max_wg), wg_big)
    rows_per_wg = np.where(wave_row, wg / wave, 1.0)
    grid = ceil_div(rows, rows_per_wg) * split
    # many short rows: the fastest kernels run persistent programs that loop over them (AITER's
    # Triton RMSNorm on 364800 x 128), so the grid stays at what the device holds at once and the
    # workgroup dispatcher (`launch:workgroups`) does not pace them; a longer row keeps its own
    # workgroup (FlyDSL's and vLLM's norms, PyTorch's block softmax)
    grid = np.where(wave_row, np.minimum(grid, resident_workgroups(arch, wg)), grid)
    lanes_per_row = np.where(wave_row, wave, wg)
    # a pinned launch: its own workgroup size and grid, its lanes shared by the rows it holds at
    # once (AITER's per-head RMSNorm: one 64-lane workgroup per 128-column row; PyTorch's LayerNorm:
    # 256 lanes on one row, reduced across waves through LDS)
    pinned = np.asarray(rows_per_workgroup, dtype=float) > 0
    if np.any(pinned) or np.any(np.asarray(block, dtype=float) > 0):
        _check_row_geometry(arch, block, rows_per_workgroup, max_wg)
        wg = np.where(np.asarray(block, dtype=float) > 0, np.asarray(block, dtype=float), wg)
        rpw = np.maximum(np.asarray(rows_per_workgroup, dtype=float), 1.0)
        split = np.where(pinned, 1.0, split)
        part = row_bytes / split
        at_once = np.where(wave_row, np.maximum(np.floor(wg / wave), 1.0), 1.0)
        rows_per_wg = np.where(pinned, np.minimum(rpw, at_once), np.where(wave_row, at_once, 1.0))
        free = ceil_div(rows, rows_per_wg) * split  # a block alone: the model's grid for that block
        free = np.where(wave_row, np.minimum(free, resident_workgroups(arch, wg)), free)
        grid = np.where(pinned, ceil_div(rows, rpw), free)
        lanes_per_row = np.where(pinned, np.maximum(wg / rows_per_wg, 1.0), np.where(wave_row, wave, wg))
    loads = np.clip(ceil_div(part, lanes_per_row * load), 1, 4)
    return {
        "row_bytes": row_bytes,
        "wg": wg,
        "grid": grid,
        "rows_per_wg": rows_per_wg,
        "waves_per_row": np.maximum(ceil_div(lanes_per_row, wave), 1.0),
        "fits": (row_bytes <= row_budget(arch)) & (split == 1),
        "split": split,
        "flight": in_flight(arch, load, loads),
    }


def _check_row_geometry(arch, block, rows_per_workgroup, max_wg: float) -> None:
    """A pinned launch the GPU could run: at most its largest workgroup, and whole rows per
    workgroup (a row split over workgroups is the model's own `split_rows`, not a key)."""
    from perfmodel.errors import InputError

    b = np.asarray(block, dtype=float)
    if np.any(b > max_wg):
        raise InputError(f"expected at most {max_wg:.0f} work-items ({arch.key}'s largest workgroup), got {b[b > max_wg].flat[0]:.0f}", key="block")
    r = np.asarray(rows_per_workgroup, dtype=float)
    bad = (r > 0) & (r < 1)
    if np.any(bad):
        raise InputError(f"expected 0 (the model's choice) or at least 1 row per workgroup, got {r[bad].flat[0]:g}", key="rows_per_workgroup")


# A workgroup's share of a split row: at least 256 lanes x 4 loads of 16 B in flight (16 KiB).
SPLIT_CHUNK_BYTES = 256 * 4 * LOAD_BYTES


def split_rows(arch, rows, row_bytes, load: float, sfu_per_row=0.0):
    """Workgroups per row: where the rows cannot fill half the CUs, a row holds several 16 KiB
    chunks and one workgroup would take longer over its row than a second kernel's launch costs,
    the fastest row kernels split each row over workgroups (a partial max/sum per chunk, then a
    second kernel combines them and writes the row: AITER's split softmax) instead of one
    workgroup per row (PyTorch). One workgroup's row time: the row read and written at the
    bandwidth its loads in flight sustain (Little's law: max lanes x 4 x 16 B per memory latency)
    plus its transcendentals on one CU, and never less than its CU's L1 takes to pass the row in
    and out (which the estimate then charges: a row the split left whole would otherwise time
    slower than a twice as long row that it splits). A power of two, at most CUs / rows and at most the
    split-K cap of the tiled kernels (`tiles.SPLITS`, 64)."""
    from perfmodel.rates import latency_s, transcendental_rate

    rows = np.asarray(rows, dtype=float)
    row_bytes = np.asarray(row_bytes, dtype=float)
    by_cus = np.maximum(arch.cus / np.maximum(rows, 1.0), 1.0)
    by_len = np.maximum(row_bytes / max(SPLIT_CHUNK_BYTES, load), 1.0)
    s = pow2(np.floor(np.log2(np.minimum(np.minimum(by_cus, by_len), SPLITS[-1]))))
    flight = float(arch.occupancy["max_workgroup_size"].value) * 4 * LOAD_BYTES
    sfu_cu = transcendental_rate(arch) / arch.cus
    one_wg = 2.0 * row_bytes * latency_s(arch, arch.memory_level) / flight + np.asarray(sfu_per_row) / sfu_cu
    if "l1" in arch.levels:  # nor faster than its one CU's L1 passes the row in and out
        one_wg = np.maximum(one_wg, 2.0 * row_bytes / (arch.bandwidth("l1") / arch.cus))
    return np.where((rows * 2 <= arch.cus) & (one_wg > arch.launch_overhead_s), s, 1.0)


@dataclass(frozen=True)
class RowOps:
    """What a row-wise normalisation does per element and per row (see `row_kernel`)."""

    param_rows: int  # parameter vectors of `cols` elements (gamma, beta)
    valu_fit: float  # VALU FLOPs per element when a row fits on chip (one pass)
    valu_multi: float  # ... when it does not (two passes)
    sfu_fit: tuple[float, float]  # SFU ops (per element, per row), one pass
    sfu_multi: tuple[float, float]  # ... two passes
    reductions: int  # row reductions (each one cross-wave exchange through LDS, then a pass over the row)
    fmas: int = 0  # FMAs per element among the VALU FLOPs: one instruction for 2 FLOPs each
    inputs: int = 1  # rows x cols tensors the kernel itself reads (2 backward: the output gradient and x or y)


# the case keys of fused row-wise kernels: residual-add + norm (vLLM's fused_add_rms_norm reads x
# and the residual, adds them, writes the normalised output and the updated residual)
TENSOR_PARAMS = [
    Param("reads", float, 1, minimum=1, help="rows x cols tensors read (2: fused residual add, x and residual)"),
    Param("writes", float, 1, minimum=1, help="rows x cols tensors written (2: output and updated residual)"),
]
ROW_FAMILIES = ("softmax", "layernorm", "rmsnorm")


def pinned_row_geometry(rows: float, block: int, workgroups: int) -> dict:
    """The case keys that pin a row kernel to a recorded launch (``block`` work-items per
    workgroup, ``workgroups`` in its grid), or {} where the launch is not one the keys describe
    (more workgroups than rows: a row split over workgroups)."""
    if not (0 < workgroups <= rows) or block <= 0:
        return {}
    return {"block": int(block), "rows_per_workgroup": round(rows / workgroups, 6)}


# a row kernel's launch as recorded (`perfmodel validate` sets them from a trace's grid and block;
# a what-if on another GPU leaves them to the model): e.g. one workgroup per row
ROW_GEOMETRY_PARAMS = [
    Param("block", int, 0, minimum=0, help="work-items of one workgroup as launched; 0: the model's choice"),
    Param("rows_per_workgroup", float, 0, minimum=0,
          help="rows one workgroup handles as launched (rows / grid; 1: one workgroup per row); 0: the model's choice "
               "(many short rows: persistent workgroups that loop over them)"),
]
# the backward of a row kernel: reads the output gradient beside its input (`RowOps.inputs`)
PHASE_PARAM = Param("phase", str, "fwd", choices=("fwd", "bwd"), help="bwd: the input's gradient from the output's (two tensors read)")


def passes_after_reductions(arch, ops: RowOps) -> float:
    """Memory round trips a row kernel's critical path adds after its row statistics, in units of
    the device-memory latency (`Launch.serial_latencies`).

    Every output element depends on a statistic of the whole row (max, sum, mean, variance), and
    the pass that follows each statistic reads global memory again: the fastest published row
    kernels re-read the row after the block-wide reduction instead of keeping it in registers
    (vLLM's rms_norm and FlashInfer's RMSNorm: a second loop over the input and the weight;
    PyTorch's LayerNorm: statistics, then a loop that re-reads X with gamma and beta; PyTorch's
    block softmax: max, sum and write passes). A re-read of the row hits the L2 (its latency);
    the last pass of a norm also reads the parameter vectors for the first time (device-memory
    latency). An elementwise kernel's one load-to-store chain is in the launch floor; these
    passes come on top of it."""
    from perfmodel.rates import latency_s

    mem = latency_s(arch, arch.memory_level)
    l2 = latency_s(arch, "l2") if "l2" in arch.levels else mem
    params = 1.0 if ops.param_rows > 0 else 0.0
    return (ops.reductions - params) * l2 / mem + params


def row_kernel(arch, dtype: str, rows, cols, ops: RowOps, reads=1.0, writes=1.0, block=0.0, rows_per_workgroup=0.0) -> Work:
    """`Work` of a row-wise normalisation (softmax, layernorm, rmsnorm) over a rows x cols tensor.

    - reads ``reads`` tensors once and writes ``writes`` tensors once (same dtype; the extra
      inputs are added elementwise on load, one VALU op each); ``param_rows`` vectors of ``cols`` elements
      (gamma, beta) are read once from beyond L2 and once per row at L1 / per workgroup at L2;
    - a row that does not fit the workgroup's on-chip budget is re-read in a second pass; the
      re-read is served from the cache that holds the rows in flight on the whole device; a row
      split over workgroups (`split_rows`) is re-read by the combining kernel the same way;
    - FLOPs per element on the VALU in the accumulate type, on ``sfu:fp32`` per element and row.
    """
    rows = np.asarray(rows, dtype=float)
    cols = np.asarray(cols, dtype=float)
    s = dtypes.size(dtype)
    a = acc_size(arch, dtype)
    g = row_launch(arch, rows, cols, s, ops.sfu_fit[0], block, rows_per_workgroup)
    fits = g["fits"]
    elems = rows * cols
    x = elems * s
    params = ops.param_rows * cols * s
    w = Work()
    reads, writes = np.asarray(reads, dtype=float), np.asarray(writes, dtype=float)
    valu = np.where(fits, ops.valu_fit, ops.valu_multi) + (reads - 1.0)
    reads = reads + (ops.inputs - 1.0)  # a backward's own second tensor: read, not added
    w.add_flops("valu", acc_dtype(arch, dtype), valu * elems)
    w.add_valu_issue(acc_dtype(arch, dtype), (valu - ops.fmas) * elems)  # one instruction per op
    one, two = ops.sfu_fit, ops.sfu_multi
    sfu = np.where(fits, one[0] * elems + one[1] * rows, two[0] * elems + two[1] * rows)
    w.add_flops("sfu", "fp32", sfu)
    _row_bytes(w, arch, g, rows, (reads * x, writes * x), params, ops.reductions, a)
    w.launch = Launch(
        grid=g["grid"],
        workgroup_size=g["wg"],
        lds_bytes=ops.reductions * g["waves_per_row"] * a,
        bytes_in_flight_per_wave=g["flight"],
        kernels=np.where(g["split"] > 1, 2.0, 1.0),  # split rows: partials, then combine and write
        serial_latencies=passes_after_reductions(arch, ops),
    )
    w.note("rows split over workgroups (few long rows): partial statistics, then a combining kernel", g["split"] > 1)
    return w


def _row_bytes(w: Work, arch, g: dict, rows, xy: tuple, params, reductions: int, a: float) -> None:
    """Bytes of a row-wise kernel: inputs in, outputs out, parameter vectors, the second pass
    over rows that do not fit on chip, and the cross-wave partials through LDS."""
    x, y = xy
    ws = x + y + params
    br, _ = traffic.add_stream(w, arch, x + params, y, ws)
    # gamma/beta re-read per row (L1) and per workgroup (L2); beyond L2 they stay resident
    if np.any(params):
        if "l1" in br:
            w.add_bytes("l1", read=(rows - 1) * params)
        if "l2" in br:
            w.add_bytes("l2", read=(g["grid"] - 1) * params)
    # second pass over rows that do not fit on chip: served from the cache holding the rows in flight
    reread = np.where(g["fits"], 0.0, x)
    inflight = resident_workgroups(arch, g["wg"]) * g["rows_per_wg"] * g["row_bytes"]
    traffic.add_stream(w, arch, reread, 0.0, np.minimum(ws, inflight), within_kernel=True)
    # cross-wave partials through LDS (one write and one read per wave and reduction)
    lds = rows * reductions * np.where(g["waves_per_row"] > 1, g["waves_per_row"], 0.0) * a
    if "lds" in arch.levels:
        w.add_bytes("lds", read=lds, write=lds)
