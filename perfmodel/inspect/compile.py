"""Compile an included (or a user's) Triton kernel for an AMD gfx target, no GPU needed.

Triton's AMD backend (``GPUTarget("hip", gfx, wave)``) lowers to AMDGCN and links a code object
with the LLVM it bundles, so this runs on a CPU-only machine without ROCm. Results are cached in
memory per process (and Triton keeps its own on-disk cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from perfmodel.errors import InputError


@dataclass(frozen=True)
class Compiled:
    gfx: str
    asm: str  # AMDGCN assembly with the metadata block
    hsaco: bytes  # the code object
    shared: int  # Triton's LDS per workgroup (dynamic LDS, from its metadata)
    num_warps: int
    warp_size: int
    name: str  # kernel symbol


def wave_size_for(gfx: str) -> int:
    """Triton's wave size: 64 on gfx9 (CDNA), 32 on gfx10+ (RDNA)."""
    from perfmodel.inspect.occupancy import gfx_generation

    return 64 if gfx_generation(gfx) == 9 else 32


def supported(gfx: str) -> bool:
    from triton.backends.amd.compiler import HIPBackend
    from triton.backends.compiler import GPUTarget

    return bool(HIPBackend.supports_target(GPUTarget("hip", gfx, wave_size_for(gfx))))


def check_target(gfx: str, arch_key: str = "") -> None:
    if not gfx.startswith("gfx"):
        raise InputError(
            f"{arch_key or gfx} is not an AMD GPU (gfx target {gfx}); kernel inspect compiles with Triton's "
            "AMD backend only",
            key="arch",
        )


def _freeze(d: dict) -> tuple:
    return tuple(sorted(d.items()))


def compile_spec(spec, keys: dict, cx: dict, opts: dict, gfx: str) -> Compiled:
    return _compile(spec, _freeze({k: v for k, v in keys.items()}), _freeze(cx), _freeze(opts), gfx)


@cache
def _compile(spec, keys_t: tuple, cx_t: tuple, opts_t: tuple, gfx: str) -> Compiled:
    import os
    import warnings

    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 warns when unset; 1 = its default
    import triton
    from triton.backends.compiler import GPUTarget

    keys, cx, opts = dict(keys_t), dict(cx_t), dict(opts_t)
    check_target(gfx)
    wave = wave_size_for(gfx)
    sig = dict(spec.signature(keys, gfx))
    for k in cx:
        sig[k] = "constexpr"
    fn = spec.fn
    params = [p.name for p in fn.params] if hasattr(fn, "params") else list(sig)
    missing = [p for p in params if p not in sig]
    if missing:
        raise InputError(f"signature has no type for {', '.join(missing)}", where=spec.name, key="signature")
    sig = {p: sig[p] for p in params}
    ints = spec.ints(keys, cx) if getattr(spec, "ints", None) else {}
    cx = dict(cx)
    for p, v in ints.items():  # Triton's launcher turns integer arguments equal to 1 into constants
        if p in sig and int(v) == 1 and sig[p] in ("i32", "i64"):
            sig[p] = "constexpr"
            cx[p] = 1
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, p in enumerate(params)
        if sig[p].startswith("*") or (p in ints and sig[p] != "constexpr" and int(ints[p]) % 16 == 0)
    }
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=cx, attrs=attrs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = triton.compile(src, target=GPUTarget("hip", gfx, wave), options=opts)
    except Exception as e:  # Triton raises CompilationError, RuntimeError, ValueError...
        msg = str(e).strip().splitlines()
        raise InputError(
            f"Triton could not compile it for {gfx}: {type(e).__name__}: {msg[-1] if msg else ''}"[:400],
            where=spec.name,
        ) from None
    md = k.metadata
    return Compiled(
        gfx=gfx,
        asm=k.asm["amdgcn"],
        hsaco=bytes(k.asm["hsaco"]),
        shared=int(md.shared),
        num_warps=int(md.num_warps),
        warp_size=int(getattr(md, "warp_size", wave)),
        name=str(md.name),
    )
