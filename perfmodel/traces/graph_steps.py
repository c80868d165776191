"""Graph-replayed decode steps of a trace matched to a model's step (`perfmodel validate TRACE
--model ...`).

Serving engines (vLLM, SGLang) replay their decode step from a captured HIP/CUDA graph: its
kernels carry the replay call's correlation id and no External id, so no op and no shapes. The
user names the model and the step (batch, cached tokens, tensor parallelism); the model's step
(`frontend.analysis.step_cases`) lists its kernels in order, and within each replay the trace's
kernels of one family (from their names, `traces.names`; within a family, the kinds both names
spell, `KINDS_BY_NAME`: rotary embedding, gated activation, KV-cache store) are paired with the
model's kernels of that family and kind in order: the i-th GEMM of the replay with the model's i-th GEMM (qkv, o, gate_up,
down, ..., the LM head). Where a family has k times as many kernels as the model has ops (k <= 4:
a paged decode attention and its reduction), each run of k consecutive kernels is one op call.
Where the counts do not divide, the family is left unmatched with both counts: a pairing by
order would then compare kernels with the wrong ops. Nothing is matched by duration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from perfmodel.models.collectives import KINDS
from perfmodel.traces.names import family

MAX_KERNELS_PER_OP = 4
_LAYER_INDEX = re.compile(r"(layers)\.\d+")
# kinds within a family that kernel names and model op names both spell (vLLM's and SGLang's
# fused elementwise kernels): each kind is paired on its own, the rest of the family together
KINDS_BY_NAME = (
    ("rotary", re.compile(r"rotary", re.I)),
    ("activation", re.compile(r"act_and_mul|silu_and_mul|gelu_and_mul", re.I)),
    ("kv_store", re.compile(r"reshape_and_cache|store_kvcache|store_cache", re.I)),
)


def kind(fam: str | None, name: str) -> tuple[str | None, str]:
    """(family, kind): the kind a kernel or model op name spells (`KINDS_BY_NAME`), else ``""``."""
    return fam, next((k for k, pat in KINDS_BY_NAME if pat.search(name)), "")


STEP_KEYS = ("model", "batch", "kv_len", "tp", "engine", "phase", "tokens")


def step_spec(given: dict, spell=lambda key: key) -> dict:
    """The step a trace's replays ran, checked and completed: ``model``, ``batch`` and ``kv_len``
    required; ``tp`` (1), ``engine`` (vllm), ``phase`` (decode); ``tokens`` with a prefill and
    only there. ``spell`` names a key in the error line (the CLI's ``--kv-len``)."""
    from perfmodel.errors import InputError

    unknown = [k for k in given if k not in STEP_KEYS]
    if unknown:
        raise InputError(f"expected {', '.join(STEP_KEYS)}; got {unknown[0]}", key=spell(unknown[0]))
    missing = [k for k in ("batch", "kv_len") if given.get(k) is None]
    if missing or given.get("model") is None:
        raise InputError(f"expected {spell('batch')} and {spell('kv_len')} with {spell('model')} (the step the replays ran)",
                         key=spell(missing[0] if missing else "model"))
    phase = given.get("phase") or "decode"
    if given.get("tokens") is not None and phase != "prefill":
        raise InputError(f"only with {spell('phase')} prefill (a decode step runs one token per sequence)", key=spell("tokens"))
    if phase == "prefill" and given.get("tokens") is None:
        raise InputError(f"expected {spell('tokens')} with {spell('phase')} prefill (prompt tokens per sequence)", key=spell("tokens"))
    step = {"model": given["model"], "batch": given["batch"], "kv_len": given["kv_len"], "tp": given.get("tp") or 1,
            "engine": given.get("engine") or "vllm"}
    if phase == "prefill":
        step.update(phase="prefill", tokens=given["tokens"])
    return step


@dataclass
class StepMatch:
    """Per kernel index of the trace: its case and label (the model op it was paired with), the
    op call it belongs to, or why it was not matched; and how many replays were seen."""

    cases: dict[int, tuple[dict, str]] = field(default_factory=dict)
    calls: dict[int, tuple] = field(default_factory=dict)
    unmatched: dict[int, str] = field(default_factory=dict)
    steps: int = 0
    kernels: int = 0


def model_family(case: dict) -> str:
    """A model kernel's family as the name rules spell it (collective kinds are `collective`)."""
    k = case["kernel"]
    return "collective" if k in KINDS else k


def op_label(op: dict) -> str:
    """``model: layers.*.mlp.gate_up_proj``: the model op, its layer index dropped so that the
    layers' calls of one shape group together; a fused op of the model (``perfmodel::``) adds its
    name (``layers.*.self_attn.rotary_embedding``), as its module holds several."""
    module = _LAYER_INDEX.sub(r"\1.*", op["module"])
    ns, _, name = op["op"].rpartition("::")
    if ns == "perfmodel":
        module = f"{module}.{name}" if module else name
    return f"model: {module or op['op']}"


def match_steps(tr, ops: list[dict]) -> StepMatch:
    """Pair the kernels of each graph replay of ``tr`` with ``ops`` (`step_cases`) by family and order."""
    out = StepMatch()
    replays: dict[object, list[int]] = {}
    for i, k in enumerate(tr.kernels):
        if k.ext_id is None and k.correlation is not None and k.correlation in tr.graph_launches:
            replays.setdefault(k.correlation, []).append(i)
    by_family: dict[tuple, list[dict]] = {}
    for op in ops:
        by_family.setdefault(kind(model_family(op["case"]), op["op"]), []).append(op)
    out.steps = len(replays)
    for corr, idx in replays.items():
        idx.sort(key=lambda i: tr.kernels[i].ts)
        out.kernels += len(idx)
        fams: dict[tuple, list[int]] = {}
        for i in idx:
            name = tr.kernels[i].name
            fams.setdefault(kind(family(name)[0], name), []).append(i)
        for (fam, sub), ks in fams.items():
            model_ops = by_family.get((fam, sub), []) if fam is not None else []
            n, m = len(ks), len(model_ops)
            what = f"{fam} ({sub})" if sub else fam
            if fam is None:
                why = "graph replay: kernel family unknown from its name"
            elif m == 0 or n % m or n // m > MAX_KERNELS_PER_OP:
                why = f"graph replay: {n} {what} kernels in the step, the model's step has {m} {what} ops"
            else:
                per = n // m
                for j, op in enumerate(model_ops):
                    for i in ks[j * per:(j + 1) * per]:
                        out.cases[i] = (dict(op["case"]), op_label(op))
                        out.calls[i] = ("replay", corr, fam, sub, j)
                continue
            for i in ks:
                out.unmatched[i] = why
    return out
