"""`Work`: what a kernel must do, independent of the GPU that runs it.

Kernel models produce it from shapes; counter formulas produce the same quantities from rocprof
measurements, so a prediction and a measurement compare field by field.

Conventions (SI units):
- FLOPs are keyed ``"<pipe>:<dtype>"`` (``"mfma:bf16"``, ``"valu:fp32"``, ``"sfu:fp32"``).
- Bytes are keyed by memory level (``"lds"``, ``"l1"``, ``"l2"``, ``"mall"``, ``"hbm"``/``"vram"``)
  and split into reads and writes; ``bytes`` is their sum.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def flop_key(pipe: str, dtype: str) -> str:
    """The one spelling of a FLOP key."""
    return f"{pipe}:{dtype}"


def split_flop_key(key: str) -> tuple[str, str]:
    pipe, _, dtype = key.partition(":")
    return pipe, dtype


@dataclass
class Launch:
    """Launch geometry: what occupancy and wave quantization depend on."""

    grid: int = 0  # number of workgroups
    workgroup_size: int = 256  # work-items per workgroup
    vgprs: int = 0  # VGPRs (+AGPRs) per work-item; 0 = unknown
    sgprs: int = 0
    lds_bytes: int = 0  # LDS per workgroup
    tile: str = ""  # human description of the chosen tile, e.g. "256x256x64"


@dataclass
class Work:
    """FLOPs per (pipe, dtype) and bytes per memory level, plus launch geometry."""

    flops: dict[str, float] = field(default_factory=dict)
    bytes_read: dict[str, float] = field(default_factory=dict)
    bytes_write: dict[str, float] = field(default_factory=dict)
    launch: Launch | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> dict[str, float]:
        """Bytes moved at each level, reads plus writes."""
        levels = list(dict.fromkeys([*self.bytes_read, *self.bytes_write]))
        return {lv: self.bytes_read.get(lv, 0.0) + self.bytes_write.get(lv, 0.0) for lv in levels}

    @property
    def total_flops(self) -> float:
        return float(sum(self.flops.values()))

    def add_flops(self, pipe: str, dtype: str, n: float) -> None:
        k = flop_key(pipe, dtype)
        self.flops[k] = self.flops.get(k, 0.0) + float(n)

    def add_bytes(self, level: str, read: float = 0.0, write: float = 0.0) -> None:
        if read:
            self.bytes_read[level] = self.bytes_read.get(level, 0.0) + float(read)
        if write:
            self.bytes_write[level] = self.bytes_write.get(level, 0.0) + float(write)

    def intensity(self, level: str) -> float:
        """FLOPs per byte at one level (inf when no bytes move there)."""
        b = self.bytes.get(level, 0.0)
        return self.total_flops / b if b > 0 else float("inf")
