"""sysinfo.csv (machine description) and roofline.csv (empirical ceilings) of a workload dir.

Both schemas of sysinfo.csv are read (2022: ``gpu_soc,numCU,sclk,...``; 2024+: ``gpu_arch,
cu_per_gpu,max_sclk,...``) into one normalised dict. A zero or blank value (containers report
``max_sclk=0``) becomes None with a note rather than a number nobody measured.
"""

from __future__ import annotations

import re
from pathlib import Path

from perfmodel.errors import InputError
from perfmodel.readers import csvio
from perfmodel.readers.records import Workload

# normalised key -> spellings in the two schemas
_SYSINFO = {
    "gfx": ("gpu_arch", "gpu_soc"),
    "gpu_model": ("gpu_model", "name"),
    "cu": ("cu_per_gpu", "numCU"),
    "se": ("se_per_gpu", "numSE"),
    "wave_size": ("wave_size", "waveSize"),
    "max_sclk_mhz": ("max_sclk", "sclk"),
    "max_mclk_mhz": ("max_mclk", "mclk"),
    "num_xcd": ("num_xcd",),
    "lds_banks_per_cu": ("lds_banks_per_cu",),
    "total_l2_chan": ("total_l2_chan", "L2Banks"),
    "hbm_bw_gbs": ("hbm_bw", "hbmBW"),
    "num_hbm_channels": ("num_hbm_channels",),
    "l2_kb": ("gpu_l2", "L2"),
}
_TEXT = {"gfx", "gpu_model"}
# roofline.csv header typos of the old benchmark binary
_ROOF_FIX = {"hbmBwHigh": "HBMBwHigh", "MFMAFI8OpsLow": "MFMAI8OpsLow"}


def read_sysinfo(path: Path) -> tuple[dict, list[str]]:
    where = str(path)
    header, rows = csvio.rows(path)
    first = next(rows, None)
    if first is None:
        raise InputError("no data rows (header only)", where=where)
    line, row = first
    raw = {h: (row[i].strip() if i < len(row) else "") for i, h in enumerate(header) if h}
    out: dict = {"raw": raw}
    notes: list[str] = []
    for key, names in _SYSINFO.items():
        name = next((n for n in names if n in raw), None)
        if name is None:
            continue
        text = raw[name]
        if key in _TEXT:
            out[key] = text.lower() if key == "gfx" else text
            continue
        v = csvio.number(text, where=where, column=name, line=line) if text else 0.0
        if v <= 0:
            notes.append(f"{path.name}: {name} is {'blank' if not text else text}; treated as unknown")
            out[key] = None
        else:
            out[key] = v
    if "gfx" in out and not re.fullmatch(r"gfx[0-9a-f]+", out["gfx"] or ""):
        raise InputError(f"column gpu_arch: {out['gfx']!r} is not a gfx target", where=where)
    return out, notes


def attach(wl: Workload, path: Path) -> None:
    """Fill ``wl``'s sysinfo, gfx target and notes from the sysinfo.csv at ``path`` when there is one.

    A workload directory has one; so may the folder of a lone CSV, whose gfx target it then gives.
    """
    if path.is_file():
        wl.sysinfo, notes = read_sysinfo(path)
        wl.notes += notes
        wl.gfx = wl.sysinfo.get("gfx") or ""


def read_roofline(path: Path) -> dict[str, dict[str, float]]:
    """Ceilings per device, units as in the file (GB/s, GFLOP/s, GOP/s)."""
    where = str(path)
    header, rows = csvio.rows(path)
    header = [_ROOF_FIX.get(h, h) for h in header]
    out: dict[str, dict[str, float]] = {}
    for line, row in rows:
        vals = {
            h: csvio.number(row[i], where=where, column=h, line=line)
            for i, h in enumerate(header)
            if h and h != "device" and i < len(row)
        }
        dev = row[header.index("device")].strip() if "device" in header else str(len(out))
        out[dev] = vals
    if not out:
        raise InputError("no data rows (header only)", where=where)
    return out
