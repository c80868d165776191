"""The vocabulary: term keys and bound classes round-trip, and every prediction uses them."""

from __future__ import annotations

import pytest

from perfmodel.vocab import (
    FEWER_ROWS,
    K_LOOP,
    PIPES,
    SERIAL,
    WORKGROUP_LAUNCH,
    bound_label,
    compute_term,
    flop_key,
    is_bound_label,
    memory_term,
    split_flop_key,
    split_term,
)


def test_term_keys_round_trip():
    k = flop_key("mfma", "bf16")
    assert k == "mfma:bf16" and split_flop_key(k) == ("mfma", "bf16")
    assert compute_term(k) == "compute:mfma:bf16" and split_term(compute_term(k)) == ("compute", k)
    assert memory_term("hbm") == "memory:hbm"
    assert bound_label("compute:mfma:bf16") == "compute:mfma"
    assert bound_label("memory:mall") == "memory:mall"
    assert bound_label("fill") == "latency"
    assert bound_label(K_LOOP) == "latency" and is_bound_label(bound_label(K_LOOP))


@pytest.mark.parametrize("label", ["compute:mfma", "memory:hbm", "latency", "launch", "unknown"])
def test_documented_bound_labels(label):
    assert is_bound_label(label)


@pytest.mark.parametrize("label", ["compute:mfma:bf16", "memory:dram", "compute", "bound", ""])
def test_undocumented_bound_labels(label):
    assert not is_bound_label(label)


def test_every_suite_prediction_uses_the_vocabulary():
    """On every shipped GPU, every case of the suite it can run gets a documented bound class
    and term keys built from known pipes and the GPU's own levels."""
    from perfmodel.arch import arch_keys, data_path, load_arch
    from perfmodel.cases import load_case_file
    from perfmodel.errors import InputError
    from perfmodel.prediction import evaluate, normalize_all

    raws = load_case_file(str(data_path("kernels", "suite.yaml")))
    seen = 0
    for key in arch_keys():
        arch = load_arch(key)
        for raw in raws:
            try:
                (p,) = evaluate(normalize_all([raw], [key]))
            except InputError:
                continue  # a dtype this GPU lacks
            seen += 1
            assert is_bound_label(p.bound) and is_bound_label(p.roofline_bound), (key, raw, p.bound)
            for t in p.terms_s:
                kind, k = split_term(t)
                assert (
                    t in ("launch", "fill", K_LOOP, SERIAL, FEWER_ROWS, WORKGROUP_LAUNCH)
                    or (kind == "memory" and k in arch.levels)
                    or (kind == "compute" and split_flop_key(k)[0] in PIPES)
                ), t
    assert seen > 500
