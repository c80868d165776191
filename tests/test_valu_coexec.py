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


def _sum_and_max(e):
    keys = [k for k in e.terms if k.startswith("compute:")]
    assert any(k.startswith("compute:wmma") for k in keys) and len(keys) >= 2, keys
    return keys


def test_rdna3_spec_says_wmma_cannot_coexecute():
    for key in ("rx7900xtx", "w7900"):
        q = load_arch(key).valu_coexec("wmma")
        assert q is not None and q.value == 0.0 and q.tag == "R"
    assert load_arch("mi300x").valu_coexec("mfma") is None  # CDNA keeps the waves rule


def test_rdna3_attention_chain_is_the_sum_at_any_occupancy(tmp_path):
    a = load_arch("rx7900xtx")
    e = _attention(a)
    keys = _sum_and_max(e)
    # the longest term now stands for the whole chain: the others' raw times are added to it
    spec = yaml.safe_load((archspec_dir() / "rx7900xtx.yaml").read_text())
    del spec["pipes"]["wmma"]["valu_coexec"]
    p = tmp_path / "rx7900xtx-coexec.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False))
    b = load_arch(str(p))
    f = _attention(b)
    raw = sum(float(f.terms[k][0]) for k in keys)
    hidden = max(float(f.terms[k][0]) for k in keys)
    got = max(float(e.terms[k][0]) for k in keys)
    assert got == pytest.approx(raw, rel=1e-9)
    # without the figure the same kernel hides part of its softmax (two resident waves here)
    assert hidden < got
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
