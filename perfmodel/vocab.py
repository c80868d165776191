"""The vocabulary, spelled once: pipes, memory levels, dtypes, term keys and bound classes.

Everything that names a pipe, a level, a dtype, a time term or a bound class imports it from
here: the archspec schema, the kernel models, the estimator, the counter formulas, the
comparison and the plots. A term key says what one time term of an estimate measures:

- ``compute:<pipe>:<dtype>`` - FLOPs on one pipe in one dtype (``compute:mfma:bf16``);
- ``memory:<level>`` - bytes through one memory level (``memory:hbm``);
- ``launch`` - the fixed cost of launching the kernel;
- ``overhead:<scope>`` - what a timing scope adds to the kernel's own duration (``overhead:events``:
  the submission gap of back-to-back launches timed by device events; ``overhead:host``: eager
  framework dispatch, launch and synchronize under a host wall clock). Bound class ``launch``.

A bound class is the term that limits the time, with the dtype dropped from compute terms
(``compute:mfma``), or ``latency`` (too few bytes in flight to reach a bandwidth), ``launch``,
or ``unknown`` (a measurement that cannot decide).
"""

from __future__ import annotations

# --- compute pipes ---------------------------------------------------------------------------
PIPES = ("valu", "mfma", "wmma", "tensor", "sfu")
MATRIX_PIPES = ("mfma", "wmma", "tensor")  # CDNA MFMA, RDNA WMMA, NVIDIA tensor cores

# --- data types: bytes per element -------------------------------------------------------------
DTYPE_BYTES: dict[str, float] = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,  # stored as fp32
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "int64": 8,  # integer storage: its arithmetic is integer VALU ops (`Work.iops`), not FLOPs
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "fp6": 0.75,
    "fp4": 0.5,
    "int4": 0.5,
}
DTYPES = tuple(DTYPE_BYTES)

INT = "int"  # the FLOP-key dtype of a pipe's integer term: ``compute:valu:int`` (ops, not FLOPs)

# --- integer VALU op classes (rates in archspec `pipes.valu.int`, op/clk/cu) ---------------------
# Integer work is timed as a compute term (``compute:valu:<class>``) but never counted as FLOPs:
# rocprof's counters report it as integer ops (iops), one op per lane of one instruction.
INT_OPS: dict[str, str] = {
    "int32": "32-bit integer add/sub/logic/shift/compare (v_add_u32, v_and_b32, v_lshlrev_b32)",
    "int32_mul": "32-bit integer multiply (v_mul_lo_u32, v_mul_hi_u32, v_mul_lo_i32)",
    "int24": "24-bit multiply and multiply-add (v_mul_u32_u24, v_mad_u32_u24, v_mad_i32_i24)",
    "int16": "16-bit add/mul/multiply-add, one value per lane (v_add_u16, v_mul_lo_u16, v_mad_u16)",
    "int16_packed": "packed 16-bit (v_pk_add_u16, v_pk_mul_lo_u16, v_pk_mad_u16): each half is one op",
}

# --- memory levels -----------------------------------------------------------------------------
LEVELS = ("lds", "l1", "l2", "mall", "hbm", "vram")
DEVICE_MEMORY = ("hbm", "vram")  # HBM on Instinct and the NVIDIA parts, GDDR "vram" on Radeon
# The global-memory path, innermost first. LDS is off it: kernels stage into it explicitly.
GLOBAL_PATH = ("l1", "l2", "mall", "hbm", "vram")
PER_CU_LEVELS = ("lds", "l1")  # one instance per CU: idle with the CU

# --- term keys and bound classes ---------------------------------------------------------------
COMPUTE = "compute"
MEMORY = "memory"
LAUNCH = "launch"
LATENCY = "latency"
FILL = "fill"  # serial memory latencies (pipeline fill and drain, the split-K reduction read); bound class latency
K_LOOP = "latency:k_loop"  # a tiled kernel's K loop paced by its dependent load latency; bound class latency
UNKNOWN = "unknown"
OVERHEAD = "overhead"
SERIAL = "serial"  # the time of the other kernels an operation dispatches one after another (Work.serial)
# the workgroup dispatchers' launch rate: grid / (archspec `launch.workgroup_rate`), a throughput
# floor beside the compute and memory terms; bound class launch
WORKGROUP_LAUNCH = "launch:workgroups"
FEWER_ROWS = "latency:fewer_rows"  # the estimate of the same product on fewer rows (Work.fewer_rows), a floor; bound class latency

# --- timing scopes -----------------------------------------------------------------------------
# What a measured time covers (the case key ``scope``): ``kernel`` the GPU kernel duration a
# profiler reports; ``events`` device events around one call (or a loop of calls from Python);
# ``host`` a wall clock around one eager framework op plus a synchronize; ``loop`` a timer around
# a loop of back-to-back calls submitted from compiled host code (rocblas-bench, hipblaslt-bench,
# CK's profiler, a .hip/.cu harness), divided by the count.
SCOPES = ("kernel", "events", "host", "loop")
# the scopes whose figure is a per-call floor (the spacing of back-to-back dispatches), not an
# addition to the kernel's time
FLOOR_SCOPES = ("loop",)


def overhead_term(scope: str) -> str:
    """The time term a timing scope adds: ``"host"`` -> ``"overhead:host"``."""
    return f"{OVERHEAD}:{scope}"


def flop_key(pipe: str, dtype: str) -> str:
    """The key of a FLOP count: ``"mfma:bf16"``."""
    return f"{pipe}:{dtype}"


def split_flop_key(key: str) -> tuple[str, str]:
    """``"mfma:bf16"`` -> ``("mfma", "bf16")``."""
    pipe, _, dtype = key.partition(":")
    return pipe, dtype


def compute_term(key: str) -> str:
    """The time term of a FLOP key: ``"mfma:bf16"`` -> ``"compute:mfma:bf16"``."""
    return f"{COMPUTE}:{key}"


def memory_term(level: str) -> str:
    """The time term of a memory level: ``"hbm"`` -> ``"memory:hbm"``."""
    return f"{MEMORY}:{level}"


def split_term(term: str) -> tuple[str, str]:
    """``"compute:mfma:bf16"`` -> ``("compute", "mfma:bf16")``; ``"launch"`` -> ``("launch", "")``."""
    kind, _, key = term.partition(":")
    return kind, key


def is_compute(term: str) -> bool:
    return term.startswith(COMPUTE + ":")


def bound_label(term: str) -> str:
    """The bound class of a term: ``compute:mfma:bf16`` -> ``compute:mfma``; ``fill`` and
    ``latency:*`` -> ``latency``; ``overhead:<scope>`` and ``launch:*`` -> ``launch``; others
    unchanged."""
    if term == FILL or term.startswith(LATENCY + ":"):
        return LATENCY
    if term.startswith(OVERHEAD + ":") or term.startswith(LAUNCH + ":"):
        return LAUNCH
    if is_compute(term):
        return f"{COMPUTE}:{split_flop_key(split_term(term)[1])[0]}"
    return term


def is_bound_label(label: str) -> bool:
    """Whether ``label`` is one of the documented bound classes."""
    if label in (LAUNCH, LATENCY, UNKNOWN):
        return True
    kind, key = split_term(label)
    return (kind == COMPUTE and key in PIPES) or (kind == MEMORY and key in LEVELS)
