"""The included Triton kernels: find them, load their `Spec`, turn key=value words into keys.

Kernel files live in ``kernels/triton/`` (in the repo, or in the wheel's _data); each defines
``KERNELS``, a list of ``_spec.Spec``. Loading a file imports triton (the kernels are
``@triton.jit`` functions), so this module is only used by `kernel inspect` / `profile`.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from perfmodel.errors import InputError, did_you_mean

KERNEL_FILES = (
    "stream.py",
    "gemm.py",
    "gemm_fp8_blockscale.py",
    "softmax.py",
    "norms.py",
    "flash_attention.py",
    "decode_attention.py",
)


def kernels_dir() -> Path:
    from perfmodel.arch import data_path

    return data_path("kernels", "triton")


def require_triton() -> None:
    """InputError (not a traceback) when the optional extra is not installed."""
    try:
        import triton  # noqa: F401
    except ImportError:
        raise InputError(
            "this command needs Triton: pip install -e '.[triton]' (a pinned CPU-only wheel; no GPU needed)",
            key="triton",
        ) from None


def load_file(path: str | Path) -> Any:
    """Import a kernel file by path (its folder goes on sys.path for `_spec`)."""
    require_triton()
    p = Path(path).resolve()
    if not p.is_file():
        raise InputError("no such kernel file", where=str(path))
    folder = str(p.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    # the shipped _spec first, so user files next to their own code still see the same Spec
    shipped = str(kernels_dir())
    if shipped not in sys.path:
        sys.path.insert(0, shipped)
    name = f"perfmodel_kernels_{p.stem}_{abs(hash(str(p))) % 10**8}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except InputError:
        raise
    except Exception as e:  # a user's file that does not import
        sys.modules.pop(name, None)
        raise InputError(
            f"cannot import the kernel file ({type(e).__name__}: {e})", where=str(path)
        ) from None
    return mod


def all_specs() -> dict[str, Any]:
    """name -> Spec for every included kernel, in file order."""
    out: dict[str, Any] = {}
    for f in KERNEL_FILES:
        for s in load_file(kernels_dir() / f).KERNELS:
            out[s.name] = s
    return out


def names() -> list[str]:
    """Names of the included kernels without importing triton (read from the files' text)."""
    import re

    out = []
    for f in KERNEL_FILES:
        text = (kernels_dir() / f).read_text()
        out += re.findall(r'^\s*name="([a-z0-9_]+)"', text, flags=re.M)
        out += [f"stream_{op}" for op in re.findall(r'^    "([a-z]+)": \(\w+_kernel', text, flags=re.M)]
    return out


def get_spec(ref: str) -> Any:
    """A kernel by name (``gemm``) or ``FILE.py::name`` (a spec name or a jitted function)."""
    if "::" in ref:
        path, fn = ref.split("::", 1)
        mod = load_file(path)
        for s in getattr(mod, "KERNELS", []):
            if s.name == fn or getattr(s.fn, "__name__", None) == fn:
                return s
        choices = [s.name for s in getattr(mod, "KERNELS", [])]
        raise InputError(
            f"no kernel '{fn}' declared in KERNELS; declared: {', '.join(choices) or 'none'}"
            + did_you_mean(fn, choices),
            where=path,
            key="kernel",
        )
    specs = all_specs()
    if ref not in specs:
        raise InputError(
            f"unknown kernel '{ref}'; included: {', '.join(specs)}" + did_you_mean(ref, specs), key="kernel"
        )
    return specs[ref]


def _convert(old: Any, raw: str, key: str, where: str) -> Any:
    if isinstance(old, bool):
        if raw.lower() in ("1", "true", "yes"):
            return True
        if raw.lower() in ("0", "false", "no"):
            return False
        raise InputError(f"expected true or false, got {raw!r}", where=where, key=key)
    if isinstance(old, int):
        try:
            v = int(raw)
        except ValueError:
            raise InputError(f"expected an integer, got {raw!r}", where=where, key=key) from None
        if v <= 0:
            raise InputError(f"expected a positive integer, got {v}", where=where, key=key)
        return v
    if isinstance(old, float):
        try:
            return float(raw)
        except ValueError:
            raise InputError(f"expected a number, got {raw!r}", where=where, key=key) from None
    return raw


def resolve(
    spec: Any, words: dict[str, str], dtype: str | None = None, gfx: str | None = None
) -> tuple[dict, dict, dict]:
    """(keys, constexprs, launch options) from key=value words; unknown keys are InputErrors.

    ``num_warps`` and ``num_stages`` are launch options; tile names (BLOCK_M, ...) constexprs.
    With an RDNA ``gfx`` (gfx10 and later) the spec's ``rdna`` defaults apply first.
    """
    where = spec.name
    keys = dict(spec.keys)
    cx_over: dict[str, Any] = {}
    opts = {"num_warps": spec.num_warps, "num_stages": spec.num_stages}
    if gfx and getattr(spec, "rdna", None):
        from perfmodel.inspect.occupancy import gfx_generation

        if gfx.startswith("gfx") and gfx_generation(gfx) >= 10:
            for k, v in spec.rdna.items():
                (opts if k in opts else cx_over)[k] = v
    for k, raw in words.items():
        if k in keys:
            keys[k] = _convert(spec.keys[k], raw, k, where)
        elif k in spec.constexprs:
            cx_over[k] = _convert(spec.constexprs[k], raw, k, where)
        elif k in opts:
            opts[k] = _convert(opts[k], raw, k, where)
        else:
            choices = [*keys, *spec.constexprs, *opts]
            raise InputError(
                f"unknown key; expected one of {', '.join(choices)}" + did_you_mean(k, choices),
                where=where,
                key=k,
            )
    if dtype:
        keys["dtype"] = dtype
    if "dtype" in keys and keys["dtype"] not in spec.dtypes:
        raise InputError(
            f"dtype {keys['dtype']!r} not supported; expected one of {', '.join(spec.dtypes)}",
            where=where,
            key="dtype",
        )
    return keys, spec.all_constexprs(keys, cx_over), opts
