"""`perfmodel kernel inspect`: what the compiler built, next to what the analytical model assumed.

Every number in the "kernel" parts comes from the compiler (Triton's metadata, the code
object's metadata, the assembly); occupancy applies the archspec limits to those numbers; the
"model" part is the prediction for the case the kernel declares. Mismatches between the two
(tile, grid, occupancy, matrix FLOPs) are listed with the reason.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from perfmodel.errors import InputError


def model_view(case: dict, arch, launch_override: dict | None = None) -> dict:
    """The model's prediction and launch assumptions for one case (optionally with the compiled
    kernel's grid, workgroup size, registers and LDS in place of the model's).

    Uses the case validation, the kernel model and the estimator directly (not the row type of
    `predict`), so that ``--from-kernel`` can swap the `Launch` between model and estimator.
    """
    import numpy as np

    from perfmodel.cases import normalize
    from perfmodel.estimate import estimate
    from perfmodel.prediction import run_model
    from perfmodel.work import Launch

    def first(x) -> float:
        return float(np.ravel(np.asarray(x, dtype=float))[0])

    c = normalize(dict(case), 0, arch.path, case.get("dtype"))
    params = {
        k: (np.array([float(v)]) if k in c.model.numeric and v is not None else v)
        for k, v in c.params.items()
    }
    work = run_model(c.model, params, arch, c.dtype, where=c.where)
    L = work.launch or Launch()
    if launch_override:
        L = dataclasses.replace(L, **launch_override)
        work = dataclasses.replace(work, launch=L)
    est = estimate(work, arch)
    occ = est.occupancy
    time_s = first(est.time_s)
    flops = sum(first(v) for v in work.flops.values())
    tile = None
    if first(L.tile_m) > 0:
        tile = "x".join(str(int(first(getattr(L, a)))) for a in ("tile_m", "tile_n", "tile_k"))
    wgs = first(occ["wgs_per_cu"])
    return {
        "time_us": time_s * 1e6,
        "bound": str(np.ravel(est.bound)[0]),
        "tile": tile,
        "grid": int(first(occ["grid"])),
        "wgs_per_cu": int(wgs),
        "flops": flops,
        "tflops": flops / time_s / 1e12 if time_s > 0 else 0.0,
        "headroom": first(est.roofline_time_s) / time_s if time_s > 0 else 1.0,
        "assumed": {
            "workgroup_size": int(first(L.workgroup_size)),
            "vgprs": int(first(L.vgprs)),
            "lds_bytes": int(first(L.lds_bytes)),
            "waves_per_simd": round(wgs * first(occ["waves_per_wg"]) / arch.simds_per_cu, 2),
        },
    }


def _tile_of(cx: dict) -> str | None:
    names = [("BLOCK_M", "BLOCK_N", "BLOCK_K")]
    for m, n, k in names:
        if m in cx and n in cx:
            return f"{cx[m]}x{cx[n]}x{cx.get(k, cx.get('HEAD_DIM', 0))}"
    return None


def inspect_included(ref: str, arch_key: str, words: dict[str, str], dtype: str | None = None,
                     from_kernel: bool = False) -> dict:  # fmt: skip
    """Compile an included kernel (or FILE.py::name) for the arch and report it."""
    from perfmodel.arch import load_arch
    from perfmodel.inspect.catalog import get_spec, resolve
    from perfmodel.inspect.compile import check_target, compile_spec
    from perfmodel.inspect.isa import instruction_mix
    from perfmodel.inspect.occupancy import occupancy

    arch = load_arch(arch_key)
    check_target(arch.gfx, arch.key)
    spec = get_spec(ref)
    keys, cx, opts = resolve(spec, words, dtype, gfx=arch.gfx)
    comp = compile_spec(spec, keys, cx, opts, arch.gfx)
    res = _compiled_resources(comp, spec.name)
    wg_size = comp.num_warps * comp.warp_size
    occ = occupancy(
        arch, vgprs=res["vgpr"], agprs=res.get("agpr", 0), sgprs=res["sgpr"],
        lds_bytes=max(comp.shared, res.get("lds_static", 0)), workgroup_size=wg_size, wave_size=comp.warp_size,
    )  # fmt: skip
    mix = instruction_mix(comp.asm, comp.name)
    grid = spec.grid(keys, cx)
    n_wg = 1
    for g in grid:
        n_wg *= int(g)
    static = _static_per_workgroup(mix, comp, int(spec.trips(keys, cx)), n_wg)
    kernel = _kernel_part(spec, comp, arch.gfx, keys, cx, grid, n_wg)
    case = spec.case(keys)
    model, model_error = _model_or_error(case, arch)
    mism = (
        mismatches(kernel, occ, static, model, arch) if model else [f"model: no prediction ({model_error})"]
    )
    out: dict[str, Any] = {
        "kernel": kernel,
        "resources": res,
        "occupancy": occ.to_dict(),
        "instructions": _instructions_part(mix),
        "static_per_workgroup": static,
        "model": _model_part(model, case) if model else {"error": model_error, "case": case},
        "mismatches": mism,
    }
    if from_kernel and model:
        fk = model_view(case, arch, {"grid": n_wg, "workgroup_size": wg_size, "vgprs": occ.vgpr_alloc,
                                     "lds_bytes": occ.lds_alloc})  # fmt: skip
        out["from_kernel"] = _model_part(fk, case)
    return out


def _compiled_resources(comp, spec_name: str) -> dict:
    """Registers and LDS of the compiled kernel, from the compiler's metadata for its symbol."""
    from perfmodel.inspect.isa import kernel_metadata, resources

    meta = next((m for m in kernel_metadata(comp.asm, spec_name) if m.get(".name") == comp.name), None)
    if meta is None:
        raise InputError(f"the compiler's metadata has no entry for {comp.name}", where=spec_name)
    res = resources(meta)
    res["lds"] = comp.shared  # Triton allocates LDS dynamically: group_segment_fixed_size stays 0
    return res


def _static_per_workgroup(mix, comp, trips: int, n_wg: int) -> dict:
    """Matrix FLOPs and global bytes counted in the ISA, scaled from one wave to a workgroup."""
    waves = comp.num_warps
    mflops_wave = mix.matrix_flops_per_wave(comp.warp_size, trips)
    gbytes = mix.global_bytes_per_wave(comp.warp_size, trips)
    return {
        "main_loop_trips": trips,
        "matrix_flops_per_wg": mflops_wave * waves,
        "global_read_bytes_per_wg": gbytes["read"] * waves,
        "global_write_bytes_per_wg": gbytes["write"] * waves,
        "matrix_flops_total": mflops_wave * waves * n_wg,
    }


def _kernel_part(spec, comp, gfx: str, keys: dict, cx: dict, grid, n_wg: int) -> dict:
    """What was compiled and how it launches."""
    return {
        "name": spec.name,
        "symbol": comp.name,
        "gfx": gfx,
        "source": str(Path(spec.fn.fn.__code__.co_filename).name) if hasattr(spec.fn, "fn") else None,
        "keys": keys,
        "constexprs": cx,
        "num_warps": comp.num_warps,
        "wave_size": comp.warp_size,
        "workgroup_size": comp.num_warps * comp.warp_size,
        "grid": list(grid),
        "workgroups": n_wg,
        "tile": _tile_of(cx),
    }


def _instructions_part(mix) -> dict:
    """The instruction mix: static counts, per loop iteration, matrix shapes, memory widths."""
    counts = mix.counts()
    return {
        "static": counts,
        "per_loop_iteration": mix.loop_counts(),
        "loops": mix.loops,
        "mfma": mix.shapes("mfma"),
        "wmma": mix.shapes("wmma"),
        "global_load_widths": mix.widths("global_load"),
        "global_store_widths": mix.widths("global_store"),
        "lds_reads": counts.get("lds_read", 0),
        "lds_writes": counts.get("lds_write", 0),
        "s_waitcnt": counts.get("s_waitcnt", 0),
    }


def _model_or_error(case: dict, arch) -> tuple[dict | None, str | None]:
    """The model's view of the case, or why there is none: e.g. no fp8 rate on RDNA3, where the
    kernel compiles (emulated) but the model has no rate."""
    try:
        return model_view(case, arch), None
    except InputError as e:
        return None, str(e)


def _model_part(row: dict, case: dict) -> dict:
    keep = ("time_us", "bound", "tile", "grid", "wgs_per_cu", "flops", "tflops", "headroom")
    out = {k: row.get(k) for k in keep}
    out["assumed"] = row["assumed"]
    out["case"] = case
    return out


def mismatches(kernel: dict, occ, static: dict, model: dict, arch) -> list[str]:
    out = []
    if kernel["tile"] and model.get("tile") and model["tile"] != kernel["tile"]:
        out.append(f"tile: the kernel computes {kernel['tile']}, the model assumed {model['tile']}")
    if model.get("grid") and model["grid"] != kernel["workgroups"]:
        out.append(
            f"grid: the kernel launches {kernel['workgroups']} workgroups, the model assumed {model['grid']}"
        )
    mw = model["assumed"]["waves_per_simd"]
    if abs(mw - occ.waves_per_simd) > 0.5:
        out.append(
            f"occupancy: the compiled kernel runs {occ.waves_per_simd} waves/SIMD (limited by {occ.limiter}), "
            f"the model assumed {mw}"
        )
    mf = static["matrix_flops_total"]
    if mf and model.get("flops"):
        r = mf / model["flops"]
        if abs(r - 1) > 0.1:
            out.append(
                f"flops: the ISA's matrix instructions do {mf:.4g} FLOPs, the model counts {model['flops']:.4g} ({r:.2f}x)"
            )
    return out


def inspect_code_object(path: str, arch_key: str | None, words: dict[str, str]) -> dict:
    """Registers, LDS, scratch and occupancy of every kernel in a code object built elsewhere."""
    from perfmodel.arch import load_arch
    from perfmodel.inspect.elf import read_code_object
    from perfmodel.inspect.isa import resources
    from perfmodel.inspect.occupancy import occupancy

    co = read_code_object(path)
    arch = load_arch(arch_key) if arch_key else None
    if arch is None:
        from perfmodel.arch import load_all

        arch = next((a for a in load_all() if a.gfx == co["gfx"]), None)
        if arch is None:
            raise InputError(f"no archspec has gfx target {co['gfx']}; pass --arch", where=path, key="arch")
    if co["gfx"] and co["gfx"] != arch.gfx:
        raise InputError(
            f"the code object targets {co['gfx']}, {arch.key} is {arch.gfx}", where=path, key="arch"
        )
    extra_lds = int(words.pop("lds", 0) or 0)
    wg = words.pop("workgroup_size", None)
    if words:
        raise InputError(
            "unknown key; a code object takes lds= and workgroup_size= only",
            where=path,
            key=next(iter(words)),
        )
    out = []
    for k in co["kernels"]:
        res = resources(k)
        size = int(wg) if wg else int(res.get("max_workgroup_size", 256))
        occ = occupancy(
            arch, vgprs=res.get("vgpr", 0), agprs=res.get("agpr", 0), sgprs=res.get("sgpr", 0),
            lds_bytes=res.get("lds_static", 0) + extra_lds, workgroup_size=size, wave_size=res.get("wave_size"),
        )  # fmt: skip
        out.append({"kernel": {"name": res["name"], "gfx": co["gfx"], "file": path, "workgroup_size": size,
                               "workgroup_size_from": "workgroup_size=" if wg else ".max_flat_workgroup_size"},
                    "resources": res, "occupancy": occ.to_dict()})  # fmt: skip
    return {"code_object": path, "gfx": co["gfx"], "kernels": out}
