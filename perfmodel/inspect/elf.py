"""Read the metadata of an AMDGPU code object (.hsaco / .co, from Triton, hipcc or clang).

A code object is an ELF64 file whose NT_AMDGPU_METADATA note (note name "AMDGPU", type 32)
holds a MessagePack map: ``amdhsa.target`` and ``amdhsa.kernels`` with ``.vgpr_count``,
``.agpr_count``, ``.sgpr_count``, ``.group_segment_fixed_size``, ... per kernel (LLVM
AMDGPUUsage, "Code Object V3+ Metadata"). The ELF walk and the MessagePack decoder below are the
small subset that needs (pure Python, no dependency): section headers, SHT_NOTE sections, and
the msgpack types the metadata uses (maps, arrays, strings, binaries, ints, floats, bools, nil).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from perfmodel.errors import InputError

NT_AMDGPU_METADATA = 32  # LLVM llvm/BinaryFormat/ELF.h
SHT_NOTE = 7
EM_AMDGPU = 224


class MsgpackError(ValueError):
    pass


def unpackb(data: bytes):
    """Decode one MessagePack value (the subset LLVM's AMDGPU metadata writer emits)."""
    value, pos = _unpack(memoryview(data), 0)
    return value


def _unpack(b: memoryview, i: int):
    if i >= len(b):
        raise MsgpackError("truncated")
    t = b[i]
    i += 1
    if t <= 0x7F:
        return t, i
    if 0x80 <= t <= 0x8F:
        return _map(b, i, t & 0x0F)
    if 0x90 <= t <= 0x9F:
        return _array(b, i, t & 0x0F)
    if 0xA0 <= t <= 0xBF:
        n = t & 0x1F
        return bytes(b[i : i + n]).decode("utf-8", "replace"), i + n
    if t >= 0xE0:
        return t - 0x100, i
    fixed = {
        0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
        0xCA: ">f", 0xCB: ">d",
    }  # fmt: skip
    if t in fixed:
        fmt = fixed[t]
        n = struct.calcsize(fmt)
        return struct.unpack_from(fmt, b, i)[0], i + n
    if t == 0xC0:
        return None, i
    if t == 0xC2:
        return False, i
    if t == 0xC3:
        return True, i
    lens = {0xD9: ">B", 0xDA: ">H", 0xDB: ">I", 0xC4: ">B", 0xC5: ">H", 0xC6: ">I"}
    if t in lens:
        fmt = lens[t]
        n = struct.unpack_from(fmt, b, i)[0]
        i += struct.calcsize(fmt)
        raw = bytes(b[i : i + n])
        return (raw.decode("utf-8", "replace") if t in (0xD9, 0xDA, 0xDB) else raw), i + n
    if t in (0xDC, 0xDD):
        fmt = ">H" if t == 0xDC else ">I"
        n = struct.unpack_from(fmt, b, i)[0]
        return _array(b, i + struct.calcsize(fmt), n)
    if t in (0xDE, 0xDF):
        fmt = ">H" if t == 0xDE else ">I"
        n = struct.unpack_from(fmt, b, i)[0]
        return _map(b, i + struct.calcsize(fmt), n)
    raise MsgpackError(f"unsupported msgpack type 0x{t:02x} at byte {i - 1}")


def _array(b, i, n):
    out = []
    for _ in range(n):
        v, i = _unpack(b, i)
        out.append(v)
    return out, i


def _map(b, i, n):
    out = {}
    for _ in range(n):
        k, i = _unpack(b, i)
        v, i = _unpack(b, i)
        out[k] = v
    return out, i


def notes(data: bytes, where: str = "code object") -> list[tuple[str, int, bytes]]:
    """(name, type, desc) of every note in the ELF64 little-endian file's SHT_NOTE sections."""
    if data[:4] != b"\x7fELF":
        raise InputError("not an ELF file (expected an AMDGPU code object, e.g. .hsaco)", where=where)
    if data[4] != 2 or data[5] != 1:
        raise InputError("not a 64-bit little-endian ELF (AMDGPU code objects are)", where=where)
    (e_machine,) = struct.unpack_from("<H", data, 18)
    if e_machine != EM_AMDGPU:
        raise InputError(f"ELF machine {e_machine} is not AMDGPU ({EM_AMDGPU})", where=where)
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for s in range(e_shnum):
        off = e_shoff + s * e_shentsize
        if off + 64 > len(data):
            raise InputError("truncated section header table", where=where)
        (sh_type,) = struct.unpack_from("<I", data, off + 4)
        if sh_type != SHT_NOTE:
            continue
        sh_offset, sh_size = struct.unpack_from("<QQ", data, off + 0x18)
        p, end = sh_offset, sh_offset + sh_size
        while p + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, p)
            p += 12
            name = data[p : p + namesz].rstrip(b"\0").decode("ascii", "replace")
            p += (namesz + 3) & ~3
            desc = data[p : p + descsz]
            p += (descsz + 3) & ~3
            out.append((name, ntype, desc))
    return out


def read_code_object(path: str) -> dict:
    """{gfx, target, kernels: [metadata maps]} from a code object's NT_AMDGPU_METADATA note."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read the code object ({e.strerror})", where=path) from None
    meta = None
    for name, ntype, desc in notes(data, path):
        if name == "AMDGPU" and ntype == NT_AMDGPU_METADATA:
            try:
                meta = unpackb(desc)
            except (MsgpackError, struct.error, IndexError) as e:
                raise InputError(f"unreadable metadata note ({e})", where=path) from None
    if not isinstance(meta, dict):
        raise InputError("no NT_AMDGPU_METADATA note (code object v2 or not from LLVM?)", where=path)
    target = str(meta.get("amdhsa.target", ""))
    m = re.search(r"(gfx[0-9a-f]+)", target)
    return {"gfx": m.group(1) if m else "", "target": target, "kernels": meta.get("amdhsa.kernels") or []}
