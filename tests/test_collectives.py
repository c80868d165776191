"""Collective kernels: time from the archspec's interconnect, ring vs one-shot, latency floor."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import perfmodel
from perfmodel.errors import InputError
from perfmodel.models.collectives import STEP_LATENCY_US, fabric

ROOT = Path(__file__).resolve().parents[1]


def _one(kernel, arch="mi300x", **kw):
    return perfmodel.predict(kernel, arch, **kw).rows[0]


def _arch_with_links(tmp_path, factor: float, links: int | None = None) -> str:
    """mi300x.yaml with its xGMI per-link bandwidth, raw and usable, scaled (and optionally another
    link count)."""
    data = yaml.safe_load((ROOT / "archspecs" / "mi300x.yaml").read_text())
    ic = data["interconnect"][0]
    ic["bandwidth"]["value"] *= factor
    ic["usable"]["value"] *= factor
    if links is not None:
        ic["links"]["value"] = links
    p = tmp_path / f"mi300x-links-{factor}-{links}.yaml"
    p.write_text(yaml.safe_dump(data))
    return str(p)


def test_large_allreduce_is_link_bound_and_follows_the_textbook_ring():
    r = _one("allreduce", bytes=256 * 2**20, ranks=8)
    assert r["bound"] == "memory:link"
    f = fabric(perfmodel.load_arch("mi300x"), 8)
    # RCCL plans 48 GB/s per link and direction (topo.h GFX94X_XGMI_WIDTH) of the 64 GB/s raw
    assert f["used"] == 7 and f["per_direction"] == pytest.approx(48e9) and f["planned"]
    s, n = 256 * 2**20, 8
    bw_s = 2 * (n - 1) / n * s / (7 * 48e9)
    lat_s = 2 * (n - 1) * STEP_LATENCY_US["xgmi"][1] * 1e-6
    assert r["terms_us"]["memory:link"] == pytest.approx((bw_s + lat_s) * 1e6, rel=1e-9)


def test_allreduce_time_scales_with_the_archspec_link_bandwidth(tmp_path):
    base = _one("allreduce", bytes=256 * 2**20, ranks=8, algo="ring")
    double = _one("allreduce", arch=_arch_with_links(tmp_path, 2.0), bytes=256 * 2**20, ranks=8, algo="ring")
    lat = 2 * 7 * STEP_LATENCY_US["xgmi"][1]
    # the bandwidth part halves, the per-step latency stays
    assert double["terms_us"]["memory:link"] - lat == pytest.approx((base["terms_us"]["memory:link"] - lat) / 2, rel=1e-9)
    fewer = _one("allreduce", arch=_arch_with_links(tmp_path, 1.0, links=3), bytes=256 * 2**20, ranks=8, algo="ring")
    assert fewer["terms_us"]["memory:link"] - lat == pytest.approx((base["terms_us"]["memory:link"] - lat) * 7 / 3, rel=1e-9)


def test_a_link_without_a_usable_figure_carries_half_its_raw_rate(tmp_path):
    data = yaml.safe_load((ROOT / "archspecs" / "mi300x.yaml").read_text())
    del data["interconnect"][0]["usable"]
    p = tmp_path / "mi300x-raw.yaml"
    p.write_text(yaml.safe_dump(data))
    f = fabric(perfmodel.load_arch(str(p)), 8)
    assert f["per_direction"] == pytest.approx(64e9) and not f["planned"]  # 128 GB/s bidirectional
    raw, planned = (_one("allreduce", arch=a, bytes=2**30, ranks=8, algo="ring") for a in (str(p), "mi300x"))
    assert raw["time_us"] < planned["time_us"] and "as the library plans it" in planned["notes"]


def test_every_gpu_link_of_a_multi_gpu_spec_has_a_sourced_usable_rate():
    for path in sorted((ROOT / "archspecs").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        for link in data.get("interconnect") or []:
            if link["name"].lower().startswith("pcie"):
                continue
            assert "usable" in link, (path.name, link["name"])  # every GPU-to-GPU link says what the library plans
            u = link["usable"]
            assert u["source"] in data["sources"] and u["tag"] == "R", path.name
            assert u["value"] < link["bandwidth"]["value"] / 2.0, path.name  # below the raw rate per direction


def test_small_messages_take_one_shot_and_are_latency_or_launch_bound():
    small = _one("allreduce", bytes=4 * 1024, ranks=8)
    assert "one-shot" in small["notes"]
    assert small["bound"] in ("latency", "launch")
    ring = _one("allreduce", bytes=4 * 1024, ranks=8, algo="ring")
    assert ring["time_us"] > small["time_us"]


def test_nvlink_is_switched_and_uses_all_links():
    f = fabric(perfmodel.load_arch("h100"), 4)
    assert f["switched"] and f["used"] == 18 and f["per_direction"] == pytest.approx(20.6e9)  # NCCL's SM90_NVLINK_BW
    g = fabric(perfmodel.load_arch("mi300x"), 4)
    assert not g["switched"] and g["used"] == 3  # a direct mesh: one link per peer


def test_collective_kinds_and_one_rank():
    for k in ("allgather", "reducescatter", "alltoall"):
        r = _one(k, bytes=64 * 2**20, ranks=8)
        assert r["time_us"] > 0 and "memory:link" in r["terms_us"]
    one = _one("allreduce", bytes=2**20, ranks=1)
    assert one["terms_us"]["memory:link"] == 0


def test_arch_without_interconnect_is_an_input_error():
    with pytest.raises(InputError, match="interconnect"):
        _one("allreduce", arch="mi300a", bytes=2**20, ranks=8)


def test_broadcast_and_reduce_are_pipelined_rings():
    """NCCL and RCCL run broadcast and reduce as a ring only: every link of the ring carries the
    whole buffer (bus bandwidth = algorithm bandwidth), in the n steps their tuning model counts;
    a reduce adds the received partial sums, a broadcast computes nothing."""
    s, n = 256 * 2**20, 8
    for kind in ("broadcast", "reduce"):
        r = _one(kind, bytes=s, ranks=n)
        assert r["bound"] == "memory:link"
        expect = s / (7 * 48e9) + n * STEP_LATENCY_US["xgmi"][1] * 1e-6  # 48 GB/s planned per link
        assert r["terms_us"]["memory:link"] == pytest.approx(expect * 1e6, rel=1e-9)
        with pytest.raises(InputError, match="ring only"):
            _one(kind, bytes=s, ranks=n, algo="oneshot")
    assert _one("broadcast", bytes=s, ranks=n)["flops"] == 0
    assert _one("reduce", bytes=s, ranks=n)["flops"] > 0
    assert _one("broadcast", bytes=s, ranks=1)["terms_us"]["memory:link"] == 0


def test_nvls_allreduce_on_a_switch_that_reduces():
    """H100/H200 NVSwitch nodes reduce in the switch (NVLink SHARP): NCCL's NVLS all-reduce, one
    23 us latency and 5/6 of the GPU's planned NVLink bandwidth (NCCL's tuning model), which
    `auto` takes for large buffers; the switch does the adds and writes the result, so the GPU
    reads its buffer and writes the result once, with no FLOPs of its own."""
    from perfmodel.models.collectives import NVLS_ALGO_BW_RATIO, NVLS_LATENCY_US

    s = 2**30
    r = _one("allreduce", arch="h100", bytes=s, ranks=8)
    assert "NVLS" in r["notes"] and r["bound"] == "memory:link"
    expect = NVLS_LATENCY_US * 1e-6 + s / (NVLS_ALGO_BW_RATIO * 18 * 20.6e9)
    assert r["terms_us"]["memory:link"] == pytest.approx(expect * 1e6, rel=1e-9)
    assert r["flops"] == 0 and r["bytes"]["hbm"] == pytest.approx(2.0 * s)
    ring = _one("allreduce", arch="h100", bytes=s, ranks=8, algo="ring")
    assert ring["time_us"] > r["time_us"]
    assert "NVLS" not in _one("allreduce", arch="a100", bytes=s, ranks=8)["notes"]  # NVSwitch 2: no SHARP


@pytest.mark.parametrize(("kind", "arch", "match"), [("allreduce", "mi300x", "in_network_reduction"), ("allgather", "h100", "allreduce only")])
def test_nvls_where_it_does_not_exist_is_an_input_error(kind, arch, match):
    with pytest.raises(InputError, match=match):
        _one(kind, arch=arch, bytes=2**20, ranks=8, algo="nvls")
