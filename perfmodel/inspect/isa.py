"""Read AMDGCN assembly: the kernel's metadata (registers, LDS, scratch) and its instruction mix.

The metadata is the ``.amdgpu_metadata`` YAML block LLVM writes into the assembly (the same map
the code object carries in its NT_AMDGPU_METADATA note). The instruction mix classifies every
instruction of the kernel body by mnemonic; instructions between a label and a later branch back
to it are in a loop, so a static total is ``outside + inside x trips``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from perfmodel.errors import InputError

# metadata key in the code object -> name in perfmodel's report
META_KEYS = {
    ".vgpr_count": "vgpr",
    ".agpr_count": "agpr",
    ".sgpr_count": "sgpr",
    ".vgpr_spill_count": "vgpr_spill",
    ".sgpr_spill_count": "sgpr_spill",
    ".group_segment_fixed_size": "lds_static",
    ".private_segment_fixed_size": "scratch",
    ".max_flat_workgroup_size": "max_workgroup_size",
    ".wavefront_size": "wave_size",
}

TRANSCENDENTAL = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)(_legacy)?_(f16|f32|f64)")
MATRIX_SHAPE = re.compile(r"(\d+)x(\d+)x(\d+)")
MEM_WIDTH = {
    "ubyte": 8, "sbyte": 8, "byte": 8, "ushort": 16, "sshort": 16, "short": 16, "u8": 8, "i8": 8,
    "u16": 16, "i16": 16, "b8": 8, "b16": 16, "b32": 32, "b64": 64, "b96": 96, "b128": 128,
    "dword": 32, "dwordx2": 64, "dwordx3": 96, "dwordx4": 128,
}  # fmt: skip


def kernel_metadata(asm: str, where: str = "assembly") -> list[dict]:
    """The ``amdhsa.kernels`` entries of the assembly's metadata block, as plain dicts."""
    import yaml

    m = re.search(r"\.amdgpu_metadata\s*\n(.*?)\n\s*\.end_amdgpu_metadata", asm, flags=re.S)
    if not m:
        raise InputError("no .amdgpu_metadata block (not AMDGCN assembly from LLVM?)", where=where)
    meta = yaml.safe_load(m.group(1)) or {}
    kernels = meta.get("amdhsa.kernels") or []
    if not kernels:
        raise InputError("the metadata lists no kernels", where=where)
    return kernels


def resources(entry: dict) -> dict:
    """perfmodel names for one kernel's metadata entry (missing keys left out)."""
    out = {"name": entry.get(".name")}
    for k, v in META_KEYS.items():
        if k in entry:
            out[v] = int(entry[k])
    return out


def matrix_flops(mnemonic: str, wave_size: int) -> int:
    """FLOPs of one MFMA/WMMA instruction for a whole wave: 2 x M x N x K x blocks.

    MFMA names carry M x N x K (``v_mfma_f32_32x32x8_bf16``) and a block count for multi-block
    shapes (``_4b``, ``_16b``; older spellings without it are one block); WMMA is 16x16xK for
    the wave (gfx11 wave32 and wave64 alike).
    """
    m = MATRIX_SHAPE.search(mnemonic)
    if not m:
        return 0
    a, b, c = (int(x) for x in m.groups())
    blocks = re.search(r"_(\d+)b(?:_|$)", mnemonic)
    return 2 * a * b * c * (int(blocks.group(1)) if blocks else 1)


def mem_width(mnemonic: str) -> int:
    """Bits per lane of a load/store mnemonic (``global_load_dwordx4`` -> 128)."""
    tail = mnemonic.split("_")
    for t in reversed(tail):
        if t in MEM_WIDTH:
            return MEM_WIDTH[t]
    if mnemonic.endswith("_d16") or "_d16_" in mnemonic:
        return 16
    return 32


def classify(mn: str) -> str:
    """Instruction class of a mnemonic. Spills through buffer instructions with the scratch
    resource (gfx90a) look like global stores here; the metadata's spill counts are exact."""
    if mn.startswith("v_mfma") or mn.startswith("v_smfmac"):
        return "mfma"
    if mn.startswith("v_wmma") or mn.startswith("v_swmmac"):
        return "wmma"
    if mn.startswith(("global_load", "buffer_load", "flat_load")):
        return "global_load"
    if mn.startswith(("global_store", "buffer_store", "flat_store")):
        return "global_store"
    if mn.startswith(("global_atomic", "buffer_atomic", "flat_atomic")):
        return "global_atomic"
    if mn.startswith("scratch_"):  # flat scratch (spills on gfx94x/gfx950/RDNA)
        return "scratch"
    if mn.startswith(
        ("buffer_", "global_", "flat_")
    ):  # cache control: buffer_wbl2, buffer_inv, global_wb ...
        return "cache_control"
    if mn.startswith(("ds_read", "ds_load")):
        return "lds_read"
    if mn.startswith(("ds_write", "ds_store")):
        return "lds_write"
    if mn.startswith("ds_"):
        return "lds_other"
    if mn.startswith(("s_waitcnt", "s_wait_")):
        return "s_waitcnt"
    if mn.startswith(("s_load", "s_buffer_load")):
        return "scalar_load"
    if mn.startswith(("s_cbranch", "s_branch")):
        return "branch"
    if mn == "s_barrier" or mn.startswith("s_barrier"):
        return "barrier"
    if TRANSCENDENTAL.match(mn):
        return "transcendental"
    if mn.startswith("v_"):
        return "valu"
    if mn.startswith("s_"):
        return "salu"
    return "other"


@dataclass
class Instr:
    mnemonic: str
    cls: str
    in_loop: bool = False


@dataclass
class Mix:
    """Instruction counts of one kernel body: static (each instruction once) and per loop."""

    instrs: list[Instr] = field(default_factory=list)
    loops: int = 0

    def counts(self, trips: int = 1) -> dict[str, int]:
        c: Counter = Counter()
        for i in self.instrs:
            c[i.cls] += trips if i.in_loop else 1
        return dict(sorted(c.items()))

    def loop_counts(self) -> dict[str, int]:
        """Instructions inside loops, each once (one iteration of the main loop)."""
        return dict(sorted(Counter(i.cls for i in self.instrs if i.in_loop).items()))

    def shapes(self, cls: str) -> dict[str, int]:
        return dict(Counter(i.mnemonic for i in self.instrs if i.cls == cls))

    def widths(self, cls: str) -> dict[str, int]:
        """Count per width in bits (``{128: 4, 32: 2}``) of a load/store class."""
        c = Counter(mem_width(i.mnemonic) for i in self.instrs if i.cls == cls)
        return {f"b{k}": v for k, v in sorted(c.items())}

    def matrix_flops_per_wave(self, wave_size: int, trips: int = 1) -> int:
        return sum(
            matrix_flops(i.mnemonic, wave_size) * (trips if i.in_loop else 1)
            for i in self.instrs
            if i.cls in ("mfma", "wmma")
        )

    def global_bytes_per_wave(self, wave_size: int, trips: int = 1) -> dict[str, int]:
        """Bytes the wave's global loads and stores request, all lanes active."""
        out = {"read": 0, "write": 0}
        for i in self.instrs:
            if i.cls in ("global_load", "global_store"):
                b = mem_width(i.mnemonic) // 8 * wave_size * (trips if i.in_loop else 1)
                out["read" if i.cls == "global_load" else "write"] += b
        return out


_LABEL = re.compile(r"^([.\w$]+):")


def kernel_body(asm: str, name: str | None = None) -> list[str]:
    """Lines of the kernel's code: from its symbol label to its ``.Lfunc_end`` label."""
    lines = asm.splitlines()
    start = None
    for i, line in enumerate(lines):
        m = _LABEL.match(line.strip())
        if m and not m.group(1).startswith(".") and (name is None or m.group(1) == name):
            start = i + 1
            break
    if start is None:
        raise InputError(f"kernel symbol {name or ''!s} not found in the assembly", key="kernel")
    end = next((j for j in range(start, len(lines)) if lines[j].startswith(".Lfunc_end")), len(lines))
    return lines[start:end]


_BLOCK = re.compile(r"^(?:(\.LBB[\w$]+):|;\s*%bb\.\d+:)")  # basic blocks; other labels (.Ltmp) are not
_DEPTH = re.compile(r"Loop(?: Header)?:.*Depth=(\d+)")


def instruction_mix(asm: str, name: str | None = None) -> Mix:
    """Classify every instruction of the kernel and mark those inside loops.

    Loops are LLVM's own: the assembly printer annotates each basic block of a loop
    (``; in Loop: Header=BB0_3 Depth=1``, ``; =>This Inner Loop Header: Depth=1``), which is
    exact where a backward branch is not (out-of-line blocks branch back without looping).
    """
    body = kernel_body(asm, name)
    instrs: list[Instr] = []
    headers = 0
    depth = 0
    for raw in body:
        stripped = raw.strip()
        b = _BLOCK.match(stripped)
        if b:
            comment = stripped.split(";", 1)[1] if ";" in stripped[1:] else ""
            if b.group(1) is None:
                comment = stripped
            d = _DEPTH.search(comment)
            depth = int(d.group(1)) if d else 0
            headers += "Loop Header" in comment
            continue
        line = stripped.split(";")[0].strip()
        if not line or line.startswith("."):
            continue
        mn = line.split(None, 1)[0]
        instrs.append(Instr(mn, classify(mn), in_loop=depth > 0))
    return Mix(instrs, headers)
