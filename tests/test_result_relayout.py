"""RDNA3 WMMA results are relaid out on the VALU before they feed the next WMMA (`result_relayout`)."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.arch import load_arch
from perfmodel.models.registry import get_model

GFX11 = ("rx7900xtx", "w7900", "radeon8050s", "radeon860m", "krackan2")
CASE = {"batch": 2, "heads": 16, "seq_q": 2048, "head_dim": 128}


def _work(arch, phase: str):
    p = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in CASE.items()}
    p.update(kv_heads=None, seq_kv=None, causal=False, phase=phase)
    return get_model("attention").fn(p, arch, "fp16")


def _without(edited_arch):
    return edited_arch("rx7900xtx", lambda spec: spec["pipes"]["wmma"].pop("result_relayout"))


def test_gfx11_specs_carry_the_relayout_and_others_do_not():
    for key in GFX11:
        q = load_arch(key).result_relayout("wmma")
        assert q is not None and q.value == 3 and q.source == "CKG11"
    # gfx12 WMMA writes C in the B layout, CDNA's FA kernels cast only: no figure
    for key, pipe in (("rx9070xt", "wmma"), ("mi300x", "mfma"), ("h100", "tensor")):
        assert load_arch(key).result_relayout(pipe) is None


@pytest.mark.parametrize("phase, fed_back", [("fwd", 1.0), ("bwd", 2.0)])
def test_relayout_adds_its_instructions_per_score(edited_arch, phase, fed_back):
    a = load_arch("rx7900xtx")
    with_it, without = _work(a, phase), _work(_without(edited_arch), phase)
    n = CASE["batch"] * CASE["heads"] * CASE["seq_q"] ** 2  # scores, non-causal
    extra = with_it.valu_issue["valu:fp32"] - without.valu_issue["valu:fp32"]
    assert float(extra[0]) == pytest.approx(fed_back * 1.5 * n)  # 3 instructions per 2 scores each time
    assert with_it.flops == without.flops  # permutes are not FLOPs
    assert any("relaid" in t for t in with_it.notes) and not any("relaid" in t for t in without.notes)
