"""The GPU a workload ran on: the archspec whose gfx target, product name and CU count match its
sysinfo, or the one the user names; optionally with an overridden clock or CU count."""

from __future__ import annotations

import copy

from perfmodel.arch import Arch, arch_keys, load_arch
from perfmodel.errors import InputError


def pick_arch(
    wl, arch: str | Arch | None = None, sclk_mhz: float | None = None, cus: int | None = None
) -> tuple[Arch, list[str]]:
    """The Arch for a workload: ``arch`` when given, else from sysinfo (gfx, model name, CUs).

    ``sclk_mhz`` / ``cus`` override the spec's peak clock and CU count (a copy; the shipped
    spec is untouched).
    """
    notes: list[str] = []
    if arch is not None:
        a = load_arch(arch)
        other = _recorded_elsewhere(wl, a)
        if other:
            notes.append(f"recorded on {other}, predicted on {a.key}: each error and explanation compares two GPUs")
    else:
        gfx = (wl.gfx or "").lower()
        if not gfx:
            raise InputError(
                "no sysinfo.csv or agent info to tell the GPU; pass --arch KEY", where=wl.path, key="arch"
            )
        cands = [load_arch(k) for k in arch_keys()]
        cands = [c for c in cands if c.gfx.lower() == gfx]
        if not cands:
            raise InputError(f"no archspec for {gfx}; pass --arch KEY", where=wl.path, key="arch")
        model = str(wl.sysinfo.get("gpu_model") or "").lower().replace("_", "").replace("-", "")
        cu = wl.sysinfo.get("cu")

        def score(c: Arch) -> tuple:
            return (
                c.key in model,
                bool(model) and c.key.startswith(model[: len(c.key) - 1]) and model[:2] == c.key[:2],
                cu is not None and int(cu) == c.cus,
                -len(c.key),
            )

        a = max(sorted(cands, key=lambda c: c.key), key=score)
        notes.append(
            f"arch {a.key} from sysinfo ({gfx}, {wl.sysinfo.get('gpu_model') or '?'}, {int(cu) if cu else '?'} CUs); --arch overrides"
        )
    if sclk_mhz or cus:
        a = copy.copy(a)
        if sclk_mhz:
            a.clock_hz = float(sclk_mhz) * 1e6
            notes.append(f"peak clock overridden: {sclk_mhz:g} MHz")
        if cus:
            a.cus = int(cus)
            notes.append(f"CU count overridden: {cus}")
    return a, notes


def _recorded_elsewhere(wl, a: Arch) -> str:
    """The GPU the workload's sysinfo names when it is not ``a`` (another gfx target or CU
    count), else ""."""
    gfx, cu = (wl.gfx or "").lower(), wl.sysinfo.get("cu")
    try:
        cu = int(cu) if cu not in (None, "") else None
    except (TypeError, ValueError):
        cu = None
    if (gfx and gfx != a.gfx.lower()) or (cu is not None and cu != a.cus):
        return f"{wl.sysinfo.get('gpu_model') or gfx or 'another GPU'} ({gfx or '?'}, {cu if cu is not None else '?'} CUs)"
    return ""
