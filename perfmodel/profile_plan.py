"""Plan a rocprofv3 measurement from a prediction: which counters, in how many passes, how run.

For each kernel (an included Triton kernel, or a perfmodel case for a user's command) the
prediction's terms name the quantities to measure (``compute:mfma:bf16`` -> ``flops:mfma:bf16``,
``memory:hbm`` -> ``read:hbm`` and ``write:hbm``; cycles and waves always); the gfx target's
counter formulas (perfmodel/counters/formulas) name the counters each needs; the counters are
packed into passes within the per-block limits of ``counters/block_limits.yaml`` (the counters
of one quantity stay in one pass when they fit). The plan is a rocprofv3 input file (``-i``, YAML
and JSON) with one job per counter pass plus a counter-free kernel-trace job for clean timings,
and the command line; its output directory is what ``perfmodel validate`` reads.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from perfmodel.errors import InputError

LIMITS_FILE = Path(__file__).parent / "counters" / "block_limits.yaml"
ALWAYS = ("cycles", "waves")


@cache
def _limits_data() -> dict:
    import yaml

    return yaml.safe_load(LIMITS_FILE.read_text())


def block_limits(gfx: str) -> dict[str, int]:
    t = _limits_data()["targets"]
    if gfx not in t:
        raise InputError(
            f"no per-block counter limits for {gfx}; known: {', '.join(t)} (add them to {LIMITS_FILE.name})",
            key="arch",
        )
    return dict(t[gfx]["limits"])


def block_of(counter: str) -> str:
    """Counter block from the name: SQ_WAVES -> SQ, TCC_EA0_RDREQ_sum -> TCC, GRBM_GUI_ACTIVE -> GRBM."""
    return counter.split("_", 1)[0].upper()


def quantities_for_terms(terms: list[str]) -> list[str]:
    """Measured quantity keys that a prediction's term names need."""
    out: list[str] = []
    for t in terms:
        kind, _, rest = t.partition(":")
        if kind == "compute":
            out.append(f"flops:{rest}")
        elif kind == "memory":
            if rest in ("lds", "l1"):
                out.append(f"bytes:{rest}")
            else:
                out += [f"read:{rest}", f"write:{rest}"]
    return out + list(ALWAYS)


@dataclass
class Plan:
    arch: str
    gfx: str
    kernels: list[dict]
    quantities: dict[str, list[str]]  # quantity -> counters (all alternatives)
    unmeasurable: dict[str, list[str]]  # quantity -> kernels needing it, without a formula for the gfx
    passes: list[list[str]]
    limits: dict[str, int]
    command: list[str]
    cold: bool
    include_regex: str
    notes: list[str] = field(default_factory=list)

    def pass_usage(self) -> list[dict[str, int]]:
        out = []
        for p in self.passes:
            u: dict[str, int] = {}
            for c in p:
                u[block_of(c)] = u.get(block_of(c), 0) + 1
            out.append(u)
        return out

    def rocprof_input(self, out_dir: str) -> dict:
        jobs = [
            {
                "pmc": list(p),
                "kernel_include_regex": self.include_regex,
                "output_directory": f"{out_dir}/pass_{i + 1}",
                "output_format": ["csv"],
                "truncate_kernels": True,
            }
            for i, p in enumerate(self.passes)
        ]
        # counter-free pass: the clean duration (counter passes perturb the kernel)
        jobs.append(
            {
                "kernel_include_regex": self.include_regex,
                "kernel_trace": True,
                "output_directory": f"{out_dir}/timing",
                "output_format": ["csv"],
                "truncate_kernels": True,
            }
        )
        return {"jobs": jobs}

    def to_dict(self, out_dir: str = "out") -> dict:
        return {
            "arch": self.arch,
            "gfx": self.gfx,
            "cold": self.cold,
            "kernels": self.kernels,
            "quantities": self.quantities,
            "unmeasurable": self.unmeasurable,
            "block_limits": self.limits,
            "passes": [
                {"counters": p, "per_block": u} for p, u in zip(self.passes, self.pass_usage(), strict=True)
            ],
            "command": self.command,
            "rocprofv3": rocprof_argv("input.yaml", self.command),
            "validate": ["perfmodel", "validate", out_dir, "--arch", self.arch],
            "notes": self.notes,
        }


def rocprof_argv(input_file: str, command: list[str]) -> list[str]:
    return ["rocprofv3", "-i", input_file, "--", *command]


def pack(groups: list[tuple[str, list[str]]], limits: dict[str, int]) -> list[list[str]]:
    """First-fit passes; a quantity's counters stay together when they fit in one pass."""
    passes: list[list[str]] = []
    usage: list[dict[str, int]] = []

    def fits(u: dict[str, int], cs: list[str]) -> bool:
        need: dict[str, int] = {}
        for c in cs:
            need[block_of(c)] = need.get(block_of(c), 0) + 1
        return all(u.get(b, 0) + n <= limits[b] for b, n in need.items())

    def add(i: int, cs: list[str]) -> None:
        for c in cs:
            passes[i].append(c)
            usage[i][block_of(c)] = usage[i].get(block_of(c), 0) + 1

    placed: set[str] = set()
    for _q, counters in groups:
        cs = [c for c in dict.fromkeys(counters) if c not in placed]
        if not cs:
            continue
        for c in cs:
            if block_of(c) not in limits:
                raise InputError(
                    f"counter {c} is in block {block_of(c)}, which has no limit listed", key="counter"
                )
        chunks = [cs] if fits({}, cs) else [[c] for c in cs]
        for chunk in chunks:
            i = next((j for j, u in enumerate(usage) if fits(u, chunk)), None)
            if i is None:
                passes.append([])
                usage.append({})
                i = len(passes) - 1
            add(i, chunk)
            placed.update(chunk)
    return passes


def plan(kernels: list[dict], arch_key: str, command: list[str], cold: bool, include_regex: str) -> Plan:
    """`kernels`: dicts with `name` and `case` (a perfmodel case: kernel, dtype, shape keys)."""
    from perfmodel.arch import load_arch
    from perfmodel.counters.formulas import load
    from perfmodel.prediction import predict

    arch = load_arch(arch_key)
    if not arch.gfx.startswith("gfx"):
        raise InputError(
            f"{arch.key} is not an AMD GPU ({arch.gfx}); rocprofv3 profiles AMD GPUs", key="arch"
        )
    limits = block_limits(arch.gfx)
    fs = load(arch.gfx)
    needed: dict[str, list[str]] = {}
    for k in kernels:
        case = dict(k["case"])
        rows = predict(case.pop("kernel"), arch.path, **case).to_dicts()
        k["predicted"] = {
            "time_us": rows[0]["time_us"],
            "bound": rows[0]["bound"],
            "terms": list(rows[0]["terms_us"]),
        }
        for q in quantities_for_terms([t for t in rows[0]["terms_us"] if t != "launch"]):
            needed.setdefault(q, []).append(k["name"])
    quantities = {
        q: sorted(fs.quantities[q].counters - set(fs.constants)) for q in needed if q in fs.quantities
    }
    unmeasurable = {q: ks for q, ks in needed.items() if q not in fs.quantities}
    passes = pack(list(quantities.items()), limits)
    notes = []
    if unmeasurable:
        notes.append(
            f"no {arch.gfx} counter formula for {', '.join(unmeasurable)}: those terms stay unvalidated"
        )
    if cold:
        notes.append(
            "cold runs: the runner writes a buffer larger than L2 + MALL before each launch (--flush)"
        )
    return Plan(
        arch.key,
        arch.gfx,
        kernels,
        quantities,
        unmeasurable,
        passes,
        limits,
        command,
        cold,
        include_regex,
        notes,
    )


def write_plan(p: Plan, out: str | Path) -> list[Path]:
    """Write input.yaml, input.json, plan.json and run.sh into `out` (each file atomically)."""
    import yaml

    from perfmodel.output import write_atomic

    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create the plan folder ({e.strerror})", where=str(out)) from None
    data_dir = str(out / "out")
    rin = p.rocprof_input(data_dir)
    files = {
        "input.yaml": yaml.safe_dump(rin, sort_keys=False),
        "input.json": json.dumps(rin, indent=2) + "\n",
        "plan.json": json.dumps(p.to_dict(data_dir), indent=2, default=str) + "\n",
        "run.sh": "#!/bin/sh\n# rocprofv3 runs the command once per job (counter passes, then a timing pass)\nset -e\n"
        + shlex.join(rocprof_argv(str(out / "input.yaml"), p.command))
        + "\n"
        + shlex.join(["perfmodel", "validate", data_dir, "--arch", p.arch])
        + "\n",
    }
    written = []
    for name, text in files.items():
        write_atomic(str(out / name), text)
        written.append(out / name)
    (out / "run.sh").chmod(0o755)
    return written
