"""A case's prediction depends on its own shape only: the same row whether it is evaluated
alone or batched with other cases (the CLI batches cases by kernel and keys, and re-batches in
chunks when it shows a progress bar)."""

from __future__ import annotations

import json

import pytest

import perfmodel

MIXES = {
    "mi300x": [
        # decode (split-KV) beside a long prefill; GQA beside plain MHA
        {"kernel": "attention", "batch": 1, "heads": 32, "kv_heads": 8, "seq_q": 1, "seq_kv": 4096, "head_dim": 128},
        {"kernel": "attention", "batch": 4, "heads": 32, "kv_heads": 32, "seq_q": 8192, "head_dim": 128},
        {"kernel": "attention", "batch": 2, "heads": 32, "kv_heads": 8, "seq_q": 2048, "head_dim": 128, "phase": "bwd"},
        {"kernel": "attention", "batch": 2, "heads": 16, "kv_heads": 16, "seq_q": 2048, "head_dim": 128, "phase": "bwd"},
        # head dims whose tiles differ
        {"kernel": "attention", "batch": 4, "heads": 16, "seq_q": 4096, "head_dim": 64},
        {"kernel": "attention", "batch": 4, "heads": 16, "seq_q": 4096, "head_dim": 256},
        # split-K beside a GEMM that fills the GPU
        {"kernel": "gemm", "m": 16, "n": 1024, "k": 16384},
        {"kernel": "gemm", "m": 8192, "n": 8192, "k": 8192},
        # rows split over workgroups beside many short rows
        {"kernel": "rmsnorm", "rows": 1, "cols": 262144},
        {"kernel": "rmsnorm", "rows": 8192, "cols": 4096},
        # 2 and 8 ranks over xGMI, and one rank
        {"kernel": "allreduce", "bytes": 2**20, "ranks": 2},
        {"kernel": "allreduce", "bytes": 2**26, "ranks": 8},
        {"kernel": "allreduce", "bytes": 2**20, "ranks": 1},
    ],
    "mi250x": [  # 2 ranks can use the in-package GCD link, 8 cannot
        {"kernel": "allgather", "bytes": 2**24, "ranks": 2},
        {"kernel": "allgather", "bytes": 2**24, "ranks": 8},
    ],
}


def _rows(cases, arch):
    return [json.dumps(r, sort_keys=True) for r in perfmodel.predict(cases=cases, arch=arch).rows]


@pytest.mark.parametrize("arch", sorted(MIXES))
def test_a_case_predicts_the_same_alone_and_in_a_batch(arch):
    cases = [dict(c, id=f"c{i}") for i, c in enumerate(MIXES[arch])]
    together = _rows(cases, arch)
    alone = [_rows([c], arch)[0] for c in cases]
    for c, a, t in zip(cases, alone, together, strict=True):
        assert a == t, c["id"]


def test_each_note_once_per_case():
    """A MoE layer adds its GEMMs' notes once per sub-GEMM; a prediction names each once."""
    (p,) = perfmodel.predict("moe", "h100", dtype="fp32", tokens=64, experts=8, topk=2, hidden=4096, inter=14336)
    parts = p.notes.split("; ")
    assert len(parts) == len(set(parts)) and "h100 has no fp32 rate on the tensor pipe" in p.notes
