"""Traced ops -> cases -> predictions: per op, per layer and per model, for one or more archs.

Torch-free once the ops are recorded (`analyze_records`); `analyze(module, *inputs)` traces first.
Identical cases are predicted once (a 32-layer model repeats each shape 32 times) through the
ordinary prediction path (`prediction.evaluate(normalize_all(...))`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from perfmodel.arch import load_arch
from perfmodel.frontend.op_record import NO_KERNEL, OpRecord
from perfmodel.frontend.opmap import to_case
from perfmodel.models.collectives import KINDS

LAYER = re.compile(r"^(.*?layers\.\d+)(\.|$)")

ROW_FIELDS = ("op", "module", "layer")


def layer_of(module: str) -> str:
    """``layers.3.self_attn.q_proj`` -> ``layers.3``; other modules are their own top-level name."""
    m = LAYER.match(module)
    if m:
        return m.group(1)
    return module.split(".")[0] if module else "(top)"


@dataclass(repr=False)
class ModelAnalysis:
    """Per-op rows (the predict contract plus op, module, layer, share), per layer and totals."""

    rows: list[dict]  # one per predicted op per arch
    unsupported: list[dict]  # ops with no model: op, module, shapes, reason (never dropped)
    no_kernel: dict[str, int]  # views / metadata ops: name -> count (they launch no kernel)
    archs: list[str]
    meta: dict = field(default_factory=dict)  # model, phase, batch, tokens, kv_len, tp, ep, ...

    def total_us(self, arch: str) -> float:
        return sum(r["time_us"] for r in self.rows if r["arch"] == arch)

    def layers(self, arch: str | None = None) -> list[dict]:
        """Time per layer (and per top-level module), in model order, with its bound mix."""
        out: dict[tuple, dict] = {}
        for r in self.rows:
            if arch and r["arch"] != arch:
                continue
            key = (r["arch"], r["layer"])
            d = out.setdefault(key, {"arch": r["arch"], "layer": r["layer"], "ops": 0, "time_us": 0.0, "by_kernel": {}})
            d["ops"] += 1
            d["time_us"] += r["time_us"]
            d["by_kernel"][r["kernel"]] = d["by_kernel"].get(r["kernel"], 0.0) + r["time_us"]
        return list(out.values())

    def totals(self) -> list[dict]:
        """One row per arch: total time, the phase's figure (prefill time or time per output
        token), tokens/s, ops predicted and ops left out."""
        out = []
        phase = self.meta.get("phase")
        tokens = self.meta.get("batch", 1) * (self.meta.get("tokens", 1) if phase == "prefill" else 1)
        for a in self.archs:
            t = self.total_us(a)
            row = {"arch": a, "model": self.meta.get("model", "module"), "phase": phase, "ops": sum(1 for r in self.rows if r["arch"] == a),
                   "total_us": t, "tokens_per_s": tokens / (t * 1e-6) if t > 0 else None}
            if phase == "decode":
                row["decode_us_per_token"] = t
            elif phase == "prefill":
                row["prefill_us"] = t
            comm = sum(r["time_us"] for r in self.rows if r["arch"] == a and r["kernel"] in KINDS)
            row["collective_us"] = comm
            sb, rb = self.meta.get("stream_bytes"), self.meta.get("resident_bytes")
            arch = load_arch(a) if sb or rb else None
            if sb:
                from perfmodel.rates import bandwidth

                bw, _, prov = bandwidth(arch, arch.memory_level)  # the ceiling the estimator uses
                row["stream_bound_us"] = sb["total"] / bw * 1e6
                row["stream_ratio"] = t / row["stream_bound_us"]
                row["stream_bw"] = prov
            if rb:
                row["memory_gb"] = rb["total"] / 1e9
                row["fits"] = bool(rb["total"] <= arch.capacity(arch.memory_level))
            row["unsupported_ops"] = len(self.unsupported)  # the same ops for every arch
            out.append(row)
        return out

    def to_dicts(self) -> list[dict]:
        return [dict(r) for r in self.rows]

    def summary(self) -> dict:
        return {"meta": {k: v for k, v in self.meta.items() if k != "stream_bytes"} | {"stream_bytes": self.meta.get("stream_bytes")},
                "totals": self.totals(), "layers": self.layers(), "unsupported": self.unsupported, "no_kernel": self.no_kernel}

    def __repr__(self) -> str:
        from perfmodel.output import render

        cols = ["arch", "phase", "ops", "total_us", "decode_us_per_token", "prefill_us", "tokens_per_s", "collective_us",
                "stream_bound_us", "stream_ratio", "memory_gb", "fits", "unsupported_ops"]
        totals = self.totals()
        cols = [c for c in cols if any(t.get(c) is not None for t in totals)]
        return render(totals, "table", columns=cols).rstrip("\n")

    def _repr_html_(self) -> str:
        return _html_table(self.totals())




def _html_table(rows: list[dict]) -> str:
    import html

    from perfmodel.output import fmt_cell

    cols = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(fmt_cell(r.get(c)))}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def fuse_elementwise(records: list[OpRecord], cases: list[dict | None]) -> tuple[list[OpRecord], list[dict | None]]:
    """``--fused``: merge runs of consecutive elementwise ops of one module whose element counts
    match (an obvious chain: SiLU then * up, a residual add after a cast) into one kernel that
    reads the chain's inputs once, writes its last output once, and does the FLOPs of all."""
    out_r: list[OpRecord] = []
    out_c: list[dict | None] = []
    for r, c in zip(records, cases, strict=True):
        prev = out_c[-1] if out_c else None
        if (
            c is not None and prev is not None and c["kernel"] == "elementwise" and prev["kernel"] == "elementwise"
            and out_r[-1].module == r.module and prev["n"] == c["n"] and prev.get("dtype") == c.get("dtype")
        ):
            # the previous output is consumed here: its write and this op's read of it disappear
            merged = dict(prev)
            merged["reads"] = round(prev["reads"] + max(c["reads"] - 1.0, 0.0), 4)
            merged["flops_per_element"] = prev["flops_per_element"] + c["flops_per_element"]
            sfu = prev.get("sfu_per_element", 0) + c.get("sfu_per_element", 0)
            if sfu:
                merged["sfu_per_element"] = sfu
            out_c[-1] = merged
            fused_name = out_r[-1].op if out_r[-1].op.startswith("fused(") else f"fused({out_r[-1].name}"
            out_r[-1] = OpRecord(op=fused_name.rstrip(")") + f"+{r.name})", module=r.module, inputs=out_r[-1].inputs,
                                 index=out_r[-1].index)
            continue
        out_r.append(r)
        out_c.append(c)
    return out_r, out_c


def quantize_linear(case: dict, module: str, linears: tuple[str, str]) -> None:
    """A decoder linear layer (a module named ``*_proj``) or an MoE layer of a quantized
    checkpoint as the GEMM it runs: ``linears`` = (dtype, scaling), the output in the traced
    dtype. The LM head and the attention's own batched products (MLA's absorbed ones) keep it."""
    kind = case.get("kernel")
    if kind == "moe" or (kind == "gemm" and module.rsplit(".", 1)[-1].endswith("_proj")):
        case["out_dtype"] = case.get("dtype", "bf16")
        case["dtype"], case["scaling"] = linears


def cases_of(records: list[OpRecord], dtype: str | None = None, linears: tuple[str, str] | None = None):
    """(records with a case, their cases, the ops without a model, the no-kernel ops counted by
    name): the op -> case step of `analyze_records`, with its ``dtype`` and ``linears`` rules."""
    default = dtype or "bf16"  # for records without a dtype (chrome-trace scalars, custom ops)
    kept: list[OpRecord] = []
    cases: list[dict] = []
    unsupported: list[dict] = []
    no_kernel: dict[str, int] = {}
    for r in records:
        case, why = to_case(r, default)
        if case is None and why is None:
            continue
        if why == NO_KERNEL:
            no_kernel[r.name] = no_kernel.get(r.name, 0) + 1
            continue
        if case is None:
            unsupported.append({"op": r.op, "module": r.module, "shapes": r.shapes_text(), "reason": why})
            continue
        if dtype and case.get("kernel") not in KINDS and case.get("dtype") in ("bf16", "fp16", "fp32", "fp8"):
            case["dtype"] = dtype  # the model as if run in `dtype` (floating-point ops only)
        if linears:
            quantize_linear(case, r.module, linears)
        kept.append(r)
        cases.append(case)
    return kept, cases, unsupported, no_kernel


def analyze_records(
    records: list[OpRecord], arch="mi300x", dtype: str | None = None, fused: bool = False, meta: dict | None = None,
    warm: bool = False, linears: tuple[str, str] | None = None,
) -> ModelAnalysis:
    """Map ops to cases, predict each distinct case once per arch, and assemble the rows.

    ``dtype``: every floating-point op is modelled in it (as if the module ran in that dtype);
    None keeps the dtypes the trace recorded (bf16 where a record has none). ``linears``: the
    (dtype, scaling) of a quantized checkpoint's linear layers and experts (`quantize_linear`)."""
    from perfmodel.models.traffic import writes_charged
    from perfmodel.prediction import evaluate, normalize_all
    from perfmodel.record import rows as prediction_rows

    archs = [arch] if isinstance(arch, str) else list(arch)
    kept, cases, unsupported, no_kernel = cases_of(records, dtype, linears)
    if fused:
        kept, cases = fuse_elementwise(kept, cases)
    # distinct cases, predicted once per arch
    keys: dict[tuple, int] = {}
    distinct: list[dict] = []
    idx: list[int] = []
    for c in cases:
        k = tuple(sorted((kk, str(v)) for kk, v in c.items()))
        if k not in keys:
            keys[k] = len(distinct)
            distinct.append(c)
        idx.append(keys[k])
    rows: list[dict] = []
    for a in archs:
        with writes_charged():  # one step: every kernel pays its own writes, none another's
            preds = evaluate(normalize_all(distinct, [a]), warm=warm) if distinct else []
        pred_rows = prediction_rows(preds)
        total = 0.0
        arch_rows = []
        for r, i in zip(kept, idx, strict=True):
            p = dict(pred_rows[i])  # ops of one shape share a prediction, each has its own row
            p["op"] = r.op
            p["module"] = r.module
            p["layer"] = layer_of(r.module)
            arch_rows.append(p)
            total += p["time_us"]
        for p in arch_rows:
            p["share"] = p["time_us"] / total if total > 0 else 0.0
        rows += arch_rows
    return ModelAnalysis(rows=rows, unsupported=unsupported, no_kernel=no_kernel, archs=_arch_keys(rows, archs), meta=dict(meta or {}))


def _arch_keys(rows: list[dict], archs: list[str]) -> list[str]:
    return list(dict.fromkeys(r["arch"] for r in rows)) or list(archs)


def analyze(module, *example_inputs, arch="mi300x", dtype: str | None = None, fused: bool = False, **meta) -> ModelAnalysis:
    """Trace ``module`` on the meta device with ``example_inputs`` and predict every op on
    ``arch`` (a key, a path, or a list of them for a side-by-side comparison).

    ``perfmodel.analyze(model, torch.empty(1, 128, dtype=torch.long, device="meta"), arch=["mi300x", "h100"])``
    """
    from perfmodel.frontend.trace import trace

    records = trace(module, *example_inputs)
    return analyze_records(records, arch, dtype, fused, meta=meta)


def analyze_model(
    model: str, arch="mi300x", phase: str = "decode", batch: int = 1, tokens: int = 1, kv_len: int = 0, tp: int = 1,
    ep: int = 1, dtype: str | None = None, fused: bool = False, paged: bool = False, block_size: int = 16,
    engine: str = "vllm",
) -> ModelAnalysis:
    """A built-in model name or config.json, one step of one rank (see `frontend.llm`)."""
    from perfmodel.frontend.llm import stream_bytes

    cfg, step, records = _model_step(model, phase, batch, tokens, kv_len, tp, ep, dtype, paged, block_size, engine)
    dt = dtype or cfg.dtype
    meta = {"model": cfg.name, "source": cfg.source, "phase": phase, "batch": batch, "tokens": step.new_tokens, "kv_len": kv_len,
            "tp": tp, "ep": ep, "dtype": dt, "fused": fused, "paged": paged, "engine": engine}
    # a quantized checkpoint's linear layers run as stored unless --dtype times everything in one type
    linears = (cfg.linear_dtype, cfg.linear_scaling) if cfg.linear_dtype and dtype is None else None
    if cfg.quantization:
        meta["quantization"] = cfg.quantization + ("" if linears or not cfg.linear_dtype else f"; --dtype {dtype} given: every op timed in it")
    if phase == "decode":
        meta["stream_bytes"] = stream_bytes(cfg, step, dt, linears)
    meta["resident_bytes"] = stream_bytes(cfg, step, dt, linears, resident=True)
    return analyze_records(records, arch, dt, fused, meta=meta, linears=linears)


def _model_step(model: str, phase: str, batch: int, tokens: int, kv_len: int, tp: int, ep: int, dtype: str | None,
                paged: bool, block_size: int, engine: str):
    """(config, step, the traced op records) of one step of one rank of ``model``."""
    from perfmodel.frontend.config import load_config
    from perfmodel.frontend.llm import Step, build
    from perfmodel.frontend.trace import trace

    cfg = load_config(model)
    if phase == "prefill" and tokens < 1:
        tokens = 1
    step = Step(phase=phase, batch=batch, tokens=tokens if phase == "prefill" else 1, kv_len=kv_len, tp=tp, ep=ep, paged=paged,
                block_size=block_size, engine=engine)
    module, inputs = build(cfg, step, dtype)
    return cfg, step, trace(module, *inputs)


def step_cases(model: str, batch: int = 1, kv_len: int = 0, tp: int = 1, engine: str = "vllm", dtype: str | None = None,
               paged: bool = False, block_size: int = 16, phase: str = "decode", tokens: int = 1) -> list[dict]:
    """The kernels one step of ``model`` runs, in order: ``{"module", "op", "case"}`` each (the
    op -> case rules of `analyze_model`, nothing predicted): what a graph-replayed step of a
    trace is matched against (`traces.graph_steps`)."""
    from perfmodel.frontend import require_torch

    require_torch("--model (the step of a trace's graph replays)")
    cfg, _, records = _model_step(model, phase, batch, tokens, kv_len, tp, 1, dtype, paged, block_size, engine)
    linears = (cfg.linear_dtype, cfg.linear_scaling) if cfg.linear_dtype and dtype is None else None
    kept, cases, _, _ = cases_of(records, dtype or cfg.dtype, linears)
    return [{"module": r.module, "op": r.op, "case": c} for r, c in zip(kept, cases, strict=True)]
