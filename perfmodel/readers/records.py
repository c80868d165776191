"""The common records every reader produces: one `Dispatch` per kernel launch, one `Workload`.

Readers know file formats and nothing of formulas; `perfmodel.counters.derive` turns a
`Dispatch` into a `Measurement`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Dispatch:
    """One kernel dispatch: identity, geometry, timestamps and raw counter values.

    ``time_source`` says which pass the duration came from (a counter-free timing pass is
    preferred: counter passes perturb the kernel). ``replay`` keeps, for counters collected in
    more than one replay pass, every value seen, so disagreeing passes can be flagged.
    ``pass_durations_ns`` are the per-pass durations when several passes were timed.
    """

    kernel: str
    index: int
    grid: int = 0
    workgroup: int = 0
    begin_ns: float | None = None
    end_ns: float | None = None
    counters: dict[str, float] = field(default_factory=dict)
    gpu: str = ""
    source: str = ""
    time_source: str = ""
    lds_bytes: int = 0
    vgprs: int = 0
    sgprs: int = 0
    replay: dict[str, list[float]] = field(default_factory=dict)
    pass_durations_ns: list[float] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    def launch(self, source: str) -> Dispatch:
        """The same launch (kernel, index, geometry, GPU, resources) without timing, counters or
        flags: the start of a dispatch merged from several passes."""
        return Dispatch(
            self.kernel, self.index, self.grid, self.workgroup, gpu=self.gpu, source=source,
            lds_bytes=self.lds_bytes, vgprs=self.vgprs, sgprs=self.sgprs,
        )  # fmt: skip

    @property
    def duration_ns(self) -> float | None:
        if self.begin_ns is None or self.end_ns is None:
            return None
        return self.end_ns - self.begin_ns


@dataclass
class Workload:
    """Everything read from one path: dispatches plus machine description and ceilings.

    ``sysinfo`` is normalised (``gfx``, ``cu``, ``num_xcd``, ``wave_size``, ``max_sclk_mhz``,
    ``hbm_bw_gbs``... where present); ``roofline`` holds the empirical ceilings of
    roofline.csv per device, in the file's units (GB/s, GFLOP/s), typo'd headers fixed.
    """

    path: str
    format: str
    dispatches: list[Dispatch] = field(default_factory=list)
    gfx: str = ""
    sysinfo: dict = field(default_factory=dict)
    roofline: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
