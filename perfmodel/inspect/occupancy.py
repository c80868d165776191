"""Waves per SIMD of a compiled kernel from its registers, LDS and workgroup size.

Per-GPU limits come from the archspec's ``occupancy:`` section (register file per lane, VGPR
granule, maximum waves per SIMD, LDS granule) and its compute/LDS entries (SIMDs per CU, LDS per
CU); the rules that are not per-GPU numbers (SGPR steps, barrier slots) from ``occupancy.yaml``
next to this file, each with its source. LLVM's AMDGPUBaseInfo is the reference.

Every limit is expressed as resident workgroups per CU (a workgroup's waves are resident
together); the smallest names the limiter; waves per SIMD = workgroups x waves per workgroup /
SIMDs per CU. Pure Python: no numpy, no triton.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from perfmodel.errors import InputError

# ties go to the first: a resource is named only when it holds occupancy below the wave slots
LIMITERS = ("wave_slots", "vgpr", "sgpr", "lds", "barriers")


@cache
def rules() -> dict:
    import yaml

    return yaml.safe_load((Path(__file__).with_name("occupancy.yaml")).read_text())


def gfx_generation(gfx: str) -> int:
    """9 for gfx9xx (gfx908, gfx90a, gfx942, gfx950), 10/11/12 for RDNA."""
    digits = gfx[3:]
    if not gfx.startswith("gfx") or len(digits) < 3:
        raise InputError(f"'{gfx}' is not an AMD gfx target", key="gfx")
    return int(digits[:-2])


def _align(x: float, g: float) -> float:
    return math.ceil(x / g) * g if g > 0 else x


def sgpr_waves(gfx: str, sgprs: int) -> float:
    r = rules()["sgpr_waves"]["gfx9" if gfx_generation(gfx) == 9 else "gfx10plus"]
    for limit, waves in r["steps"]:
        if sgprs <= float(limit):
            return float(waves)
    return math.inf


@dataclass
class Occupancy:
    waves_per_simd: float
    max_waves_per_simd: int
    wgs_per_cu: int
    waves_per_wg: int
    limiter: str
    limits_wgs_per_cu: dict  # each resource's cap on workgroups per CU
    vgpr_alloc: int  # VGPRs allocated per lane (after the granule)
    lds_alloc: int  # LDS bytes allocated per workgroup (after the granule)
    lds_per_cu: int
    simds_per_cu: int

    @property
    def occupancy_pct(self) -> float:
        return 100.0 * self.waves_per_simd / self.max_waves_per_simd

    def to_dict(self) -> dict:
        d = asdict(self)
        d["occupancy_pct"] = round(self.occupancy_pct, 1)
        return d


def occupancy(
    arch,
    *,
    vgprs: int,
    sgprs: int,
    lds_bytes: int,
    workgroup_size: int,
    wave_size: int | None = None,
    agprs: int = 0,
    vgprs_include_agprs: bool = True,
) -> Occupancy:
    """Occupancy of one kernel on `arch` (an `Arch`).

    ``vgprs``: the code object's ``.vgpr_count``; on gfx90a/gfx94x/gfx950 that is the unified total
    (arch VGPRs aligned to 4 plus AGPRs). Pass ``vgprs_include_agprs=False`` with separate counts
    (rocprof's VGPR_Count and Accum_VGPR_Count) to have the total formed here. On gfx908 AGPRs
    are a separate file of the same size, so the larger of the two counts limits.
    """
    gen = gfx_generation(arch.gfx)
    wave = int(wave_size or arch.wave_size)
    simds = int(arch.simds_per_cu)
    max_w = int(arch.occupancy["max_waves_per_simd"].value)
    per_lane, vgpr_alloc = _vgpr_file(arch, wave, vgprs, agprs, vgprs_include_agprs)
    # uncapped: the wave-slot limit below caps them, so a resource is named only when it binds
    w_vgpr = math.floor(per_lane / vgpr_alloc)
    w_sgpr = sgpr_waves(arch.gfx, sgprs) if sgprs else math.inf
    waves_per_wg = max(1, math.ceil(workgroup_size / wave))
    lds_cu = int(arch.capacity("lds") / arch.cus)
    lds_alloc = _lds_alloc(arch, lds_bytes)
    barriers = rules()["max_barrier_workgroups"]["gfx9" if gen == 9 else "gfx10plus"]["value"]
    caps = {
        "vgpr": math.floor(w_vgpr * simds / waves_per_wg),
        "sgpr": math.floor(w_sgpr * simds / waves_per_wg) if w_sgpr != math.inf else math.inf,
        "lds": math.floor(lds_cu / lds_alloc) if lds_alloc else math.inf,
        "wave_slots": math.floor(max_w * simds / waves_per_wg),
        "barriers": barriers if waves_per_wg > 1 else math.inf,
    }
    wgs = min(caps.values())
    limiter = next(k for k in LIMITERS if caps[k] == wgs)
    return Occupancy(
        waves_per_simd=round(wgs * waves_per_wg / simds, 2),
        max_waves_per_simd=max_w,
        wgs_per_cu=int(wgs),
        waves_per_wg=waves_per_wg,
        limiter=limiter,
        limits_wgs_per_cu={k: (None if v == math.inf else int(v)) for k, v in caps.items()},
        vgpr_alloc=vgpr_alloc,
        lds_alloc=lds_alloc,
        lds_per_cu=lds_cu,
        simds_per_cu=simds,
    )


def _vgpr_file(arch, wave: int, vgprs: int, agprs: int, vgprs_include_agprs: bool) -> tuple[float, int]:
    """(VGPRs per lane of a SIMD's file, VGPRs one wave allocates): the register total this arch
    counts (gfx908: a separate AGPR file, so the larger count) rounded up to the granule."""
    occ = arch.occupancy
    per_lane = float(occ["vgprs_per_lane"].value)
    gran = float(occ["vgpr_granule"].value)
    if gfx_generation(arch.gfx) >= 10 and wave == 64:  # the archspec gives the wave32 file; wave64 has half the lanes' worth
        per_lane, gran = per_lane / 2, gran / 2
    if arch.gfx == "gfx908":
        regs = max(vgprs, agprs)
    elif not vgprs_include_agprs and agprs:
        regs = _align(vgprs, rules()["agpr_alignment"]["value"]) + agprs
    else:
        regs = vgprs
    return per_lane, int(_align(max(regs, 1), gran))


def _lds_alloc(arch, lds_bytes: int) -> int:
    """LDS one workgroup allocates (rounded up to the granule); an error past the per-workgroup cap."""
    occ = arch.occupancy
    lds_gran = float(occ["lds_granule"].value) if "lds_granule" in occ else 0.0
    lds_alloc = int(_align(lds_bytes, lds_gran)) if lds_bytes else 0
    if lds_alloc > float(occ["lds_per_workgroup"].value):
        raise InputError(
            f"the kernel needs {lds_alloc} B of LDS per workgroup; {arch.key} allows "
            f"{int(occ['lds_per_workgroup'].value)} B",
            key="lds",
        )
    return lds_alloc
