"""Shared traffic rules: which memory levels a stream of bytes passes through.

Bytes flow inward from device memory: HBM/VRAM -> MALL (Infinity Cache) -> L2 -> L1 -> waves.
A level counts every byte that crosses it. This is the one place the cache-residency rule lives:

- Re-reads *within* a kernel (a second pass over rows, split-K partial sums) stop at the first
  cache that holds their working set.
- A kernel's inputs and outputs are *cold* by default: they come from and go to device memory,
  as in a single profiled run (rocprof's vcopy on MI300X moves all 16 MiB through HBM although
  the MALL could hold it). With ``warm_caches()`` (CLI ``--warm``) they follow the same rule as
  re-reads: the steady state of a benchmark loop that reruns a kernel on data that fits a cache.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from perfmodel.vocab import DEVICE_MEMORY, GLOBAL_PATH

_WARM: contextvars.ContextVar[bool] = contextvars.ContextVar("perfmodel_warm_caches", default=False)
_CHARGED: contextvars.ContextVar[bool] = contextvars.ContextVar("perfmodel_writes_charged", default=False)


@contextlib.contextmanager
def _flag(var: contextvars.ContextVar[bool], on: bool):
    token = var.set(on)
    try:
        yield
    finally:
        var.reset(token)


def warm_caches(on: bool = True):
    """Within this block, kernel inputs that fit a cache are served from it (steady state)."""
    return _flag(_WARM, on)


def is_warm() -> bool:
    return _WARM.get()


def writes_charged(on: bool = True):
    """Within this block, kernels are steps of one modelled sequence (`perfmodel model`): each
    is charged its own device-memory writes, so none pays for dirty lines another left in the
    L2 (`dirty_writeback`), which would count those writes twice."""
    return _flag(_CHARGED, on)


def other_writers_dirty() -> bool:
    """Whether a kernel modelled now finds L2 lines dirty that no prediction charges: a single
    cold run (after a write that flushes the cache, or behind another kernel), not a warm one
    and not a step of a modelled sequence."""
    return not _WARM.get() and not _CHARGED.get()


def dirty_writeback(arch, read, write):
    """Device-memory bytes a cold kernel writes back for L2 lines another writer left dirty, or
    None where the spec has no measured figure (`memory.l2.dirty_writeback`).

    The L2 is write-back: the write that flushes the cache before a timed run (as
    triton.testing.do_bench does) or the kernel before leaves it holding dirty lines, and each
    line this kernel brings in evicts one. Measured with a read-only kernel after a write flush
    (benchmarks/device/cuda_microbench.py, section `dirty`): `share` of the bytes it allocates
    comes back as write-back, up to `of_capacity` of the L2 (the dirty lines there are). The
    kernel's own writes, which the model books at device memory, stand for the write-back they
    cause later (an elementwise kernel after the same flush takes what the model gives it for
    its reads and writes); so a kernel pays the larger of the two, never both."""
    if "l2" not in arch.levels:
        return None
    c = arch.level("l2").get("dirty_writeback")
    if c is None:
        return None
    read, write = np.asarray(read, dtype=float), np.asarray(write, dtype=float)
    cap = c["of_capacity"].value * arch.capacity("l2")
    return np.maximum(0.0, np.minimum(c["share"].value * (read + write), cap) - write)


def chain(arch) -> list[str]:
    """The arch's levels on the global-memory path, innermost first."""
    have = set(arch.levels)
    return [lv for lv in GLOBAL_PATH if lv in have]


def serving_capacities(arch) -> dict[str, float]:
    """Device-wide capacity of each cache level on the path (L1 excluded: it is per CU and
    a streaming kernel does not reuse it across CUs)."""
    return {lv: arch.capacity(lv) for lv in chain(arch) if lv not in ("l1", *DEVICE_MEMORY)}


def stream_traffic(arch, read, write, working_set, within_kernel: bool = False) -> tuple[dict, dict]:
    """(bytes_read, bytes_write) per level for streaming traffic.

    ``read``/``write`` are bytes read/written once each; ``working_set`` the bytes that must stay
    resident to hit in a cache. All may be arrays. Every level from L1 out to the first cache
    that holds the working set sees the bytes. For a kernel's own inputs and outputs
    (``within_kernel=False``) that cache rule applies only under `warm_caches`; otherwise every
    level out to device memory sees them.
    """
    if not within_kernel and not is_warm():
        working_set = np.inf
    read = np.asarray(read, dtype=float)
    write = np.asarray(write, dtype=float)
    ws = np.asarray(working_set, dtype=float)
    caps = serving_capacities(arch)
    levels = chain(arch)
    br: dict[str, np.ndarray] = {}
    bw: dict[str, np.ndarray] = {}
    shape = np.broadcast(read, write, ws).shape
    if ws.ndim == 0 and ws > max((caps[lv] for lv in levels if lv in caps), default=-np.inf):
        # past every cache everywhere: `reach` would stay 1, and x * 1.0 is x's own product
        for lv in levels:
            br[lv] = np.multiply(np.broadcast_to(read, shape), 1.0)
            bw[lv] = np.multiply(np.broadcast_to(write, shape), 1.0)
        return br, bw
    # `reach` is 1 where the bytes still travel past the levels seen so far
    reach = np.ones(shape)
    for lv in levels:
        br[lv] = read * reach
        bw[lv] = write * reach
        if lv in caps:
            reach = reach * (ws > caps[lv])
    return br, bw


def add_stream(work, arch, read=0.0, write=0.0, working_set=np.inf, *, within_kernel: bool = False):
    """Book streaming traffic on ``work`` at every level `stream_traffic` says it crosses;
    returns (bytes_read, bytes_write) per level.

    The default working set (infinite) is a tensor that lives in device memory: every level sees
    it. ``within_kernel=True`` is a temporary written and read back inside the kernel (split-K
    partial sums): it stops at the first cache that holds it.
    """
    br, bw = stream_traffic(arch, read, write, working_set, within_kernel=within_kernel)
    for lv in br:
        work.add_bytes(lv, read=br[lv], write=bw[lv])
    return br, bw
