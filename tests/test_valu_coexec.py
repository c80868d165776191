"""The matrix pipe's VALU co-execution share (`valu_coexec`): on RDNA3 WMMA and VALU time add."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from perfmodel.arch import archspec_dir, load_arch
from perfmodel.errors import InputError
from perfmodel.estimate import estimate
from perfmodel.models.registry import get_model

CASE = {"batch": 4, "heads": 32, "seq_q": 4096, "head_dim": 128}


def _attention(arch, **kw):
    p = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in {**CASE, **kw}.items()}
    p.update(kv_heads=None, seq_kv=None, causal=False, phase="fwd")
    return estimate(get_model("attention").fn(p, arch, "fp16"), arch)


def _without_the_rule(edited_arch):
    """The rx7900xtx spec with its `valu_coexec` figure removed."""
    return edited_arch("rx7900xtx", lambda spec: spec["pipes"]["wmma"].pop("valu_coexec"))


def test_rdna3_spec_says_wmma_cannot_coexecute():
    for key in ("rx7900xtx", "w7900", "rx9070xt", "r9700"):  # RDNA3 and RDNA4 (the calculator's 'rdna4' entries)
        q = load_arch(key).valu_coexec("wmma")
        assert q is not None and q.value == 0.0 and q.tag == "R"
    assert load_arch("mi300x").valu_coexec("mfma") is None  # CDNA keeps the waves rule


def _chain(arch, waves: float) -> dict:
    from perfmodel.estimate import _dependent_chain, _Terms
    from perfmodel.work import Work

    w = Work()
    w.dependent.update({"wmma:fp16", "valu:fp32", "sfu:fp32"})
    t = _Terms(time={"compute:wmma:fp16": np.array([3.0]), "compute:valu:fp32": np.array([1.0]),
                     "compute:sfu:fp32": np.array([0.5]), "memory:vram": np.array([1.0])})
    _dependent_chain(w, arch, {"waves_per_simd": np.array([waves])}, t)
    return {k: float(v[0]) for k, v in t.time.items()}


@pytest.mark.parametrize("key", ["rx7900xtx", "rx9070xt"])
@pytest.mark.parametrize("waves", [1.0, 2.0, 4.0])
def test_rdna3_chain_is_the_sum_at_any_occupancy(edited_arch, waves, key):
    a = load_arch(key)
    got = _chain(a, waves)
    assert got["compute:wmma:fp16"] == pytest.approx(4.5)  # 3 + 1 + 0.5: nothing runs beside a WMMA
    assert got["compute:valu:fp32"] == 1.0 and got["memory:vram"] == 1.0
    # the same spec without the figure hides more of the chain's shorter parts the more waves cycle
    r = 1.5 / 3.0  # the VALU-side stage against the WMMA stage
    expect = 3.0 * (1 - r ** (waves + 1)) / (1 - r**waves)  # closed cycle of `waves` waves: 4.5, 3.5, 3.1
    assert _chain(_without_the_rule(edited_arch), waves)["compute:wmma:fp16"] == pytest.approx(expect)
    assert expect <= 4.5


def test_rdna3_attention_is_slower_than_without_the_rule(edited_arch):
    e, f = _attention(load_arch("rx7900xtx")), _attention(_without_the_rule(edited_arch))
    assert any(k.startswith("compute:wmma") for k in e.terms) and "compute:valu:fp32" in e.terms
    assert float(e.time_s[0]) > float(f.time_s[0])


def test_bad_coexec_value_is_refused(tmp_path):
    spec = yaml.safe_load((archspec_dir() / "rx7900xtx.yaml").read_text())
    spec["pipes"]["wmma"]["valu_coexec"]["value"] = 1.5
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(InputError, match="valu_coexec.value: expected a number between 0 and 1"):
        load_arch(str(p))
    spec["pipes"]["wmma"]["valu_coexec"].update(value=0, unit="MHz")
    p.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(InputError, match="expected no unit"):
        load_arch(str(p))
