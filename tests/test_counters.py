"""Counter formulas, Measurement, aggregation and flags, checked on the real rocprof files."""

from __future__ import annotations

import csv

import pytest

from data_paths import (
    GFX1153_LONG,
    MIXBENCH_MI200,
    VCOPY_2024,
    VCOPY_2025,
    VCOPY_MI200,
    VCOPY_MI300X_LONG,
    VCOPY_MI350,
)
from perfmodel.counters import aggregate, available_targets, compat_mean_rates, derive, derive_workload, load
from perfmodel.counters.aggregate import compat_per_wave
from perfmodel.counters.expr import ExprError, parse
from perfmodel.counters.flags import above_peak, ratios
from perfmodel.errors import InputError
from perfmodel.readers import Dispatch, read_workload

MIB8 = 8 * 2**20


def _golden(table: str) -> dict[str, list[str]]:
    with open(MIXBENCH_MI200 / "prev_analysis" / table, newline="") as fh:
        return {r[0]: r[1:] for r in csv.reader(fh)}


@pytest.fixture(scope="module")
def mix200():
    return derive_workload(read_workload(MIXBENCH_MI200))


def test_golden_speed_of_light_201(mix200):
    """rocprof-compute's own table 201 (mean of per-dispatch rates), reproduced exactly."""
    gold = _golden("201.csv")
    ours = compat_mean_rates(mix200)
    assert ours["VALU FLOPs"] == pytest.approx(7446.024, abs=5e-4)
    assert ours["L2-Fabric Read BW"] == pytest.approx(1159.403, abs=5e-4)
    for row in (
        "VALU FLOPs",
        "VALU IOPs",
        "MFMA FLOPs (BF16)",
        "MFMA FLOPs (F16)",
        "MFMA FLOPs (F32)",
        "MFMA FLOPs (F64)",
        "MFMA IOPs (Int8)",
        "LDS BW",
        "Vector L1D Cache BW",
        "L2-Fabric Read BW",
        "L2-Fabric Write BW",
    ):
        assert ours[row] == pytest.approx(float(gold[row][0]), rel=1e-12, abs=1e-9), row


def test_golden_l2_panel_1701(mix200):
    gold = _golden("1701.csv")
    ours = compat_mean_rates(mix200)
    assert ours["L2-Fabric Read BW"] == pytest.approx(float(gold["L2-EA Rd BW"][0]), rel=1e-12)
    assert ours["L2-Fabric Write BW"] == pytest.approx(float(gold["L2-EA Wr BW"][0]), rel=1e-12)


def test_golden_ops_per_wave_1103(mix200):
    gold = _golden("1103.csv")
    ours = compat_per_wave(mix200)
    for row in ("FLOPs (Total)", "INT8 OPs", "F16 OPs", "BF16 OPs", "F32 OPs", "F64 OPs"):
        avg, lo, hi = (float(x) for x in gold[row][:3])
        assert ours[row] == pytest.approx((avg, lo, hi), rel=1e-12, abs=1e-9), row


def test_default_aggregation_is_ratio_of_sums(mix200):
    per_kernel = aggregate(mix200)
    assert sum(a.count for a in per_kernel) == 167
    a = next(a for a in per_kernel if a.count > 1) if any(a.count > 1 for a in per_kernel) else per_kernel[0]
    ms = [m for m in mix200 if m.kernel == a.kernel]
    assert a.time_s == pytest.approx(sum(m.time_s for m in ms))
    assert a.bytes["hbm"] == pytest.approx(sum(m.bytes["hbm"] for m in ms))
    # over the whole run, ratio of sums and mean of ratios give different answers
    total = aggregate(mix200, key=lambda m: "all")[0]
    ratio_of_sums = total.rate(total.bytes_read["hbm"]) / 1e9
    assert ratio_of_sums != pytest.approx(compat_mean_rates(mix200)["L2-Fabric Read BW"], rel=1e-3)


@pytest.mark.parametrize(
    "path",
    [
        VCOPY_2024 / "MI100",
        VCOPY_MI200,
        VCOPY_2024 / "MI300A_A1",
        VCOPY_2024 / "MI300X_A1",
        VCOPY_MI350,
        VCOPY_2025 / "MI300X_A1_rocpd",
        VCOPY_MI300X_LONG,
    ],
)
def test_vcopy_moves_8mib_each_way(path):
    ms = derive_workload(read_workload(path))
    assert len(ms) == 3
    for m in ms:
        assert m.bytes_read["hbm"] == pytest.approx(MIB8, rel=0.01)
        assert m.bytes_read["l2"] == pytest.approx(MIB8, rel=0.01)
        assert m.bytes_write["l2"] == pytest.approx(MIB8, rel=0.01)
    # HBM writes: exact on the first dispatch; on the 8 MiB-L2 chips (MI100/MI210) later
    # dispatches leave part of the output dirty in L2, so fewer bytes reach HBM in-kernel.
    assert ms[0].bytes_write["hbm"] == pytest.approx(MIB8, rel=0.01)
    assert all(m.bytes_write["hbm"] <= MIB8 * 1.01 for m in ms)


def test_gfx950_uses_128b_read_fallback_and_says_so():
    ms = derive_workload(read_workload(VCOPY_MI350))
    assert any("non-32-byte HBM reads counted as 128 B" in n for n in ms[0].notes)
    # with the gfx942 formula the reads come out half (TCC_BUBBLE is 0 on gfx950)
    m942 = derive(read_workload(VCOPY_MI350).dispatches[0], "gfx942")
    assert m942.bytes_read["hbm"] == pytest.approx(MIB8 / 2, rel=0.01)


def test_gfx950_prefers_request_size_bins():
    d = Dispatch(
        "k",
        0,
        counters={
            "TCC_EA0_RDREQ_128B_sum": 10,
            "TCC_EA0_RDREQ_64B_sum": 2,
            "TCC_EA0_RDREQ_32B_sum": 1,
            "TCC_EA0_RDREQ_sum": 13,
        },
    )
    m = derive(d, "gfx950")
    assert m.bytes_read["hbm"] == 128 * 10 + 64 * 2 + 32 * 1
    assert not any("128 B" in n for n in m.notes)


def test_gfx1153_rdna_read_bytes():
    wl = read_workload(GFX1153_LONG)
    ms = derive_workload(wl, gfx="gfx1153")
    for m in ms:
        assert m.bytes_read["vram"] == pytest.approx(MIB8, rel=0.01)
        assert m.bytes_read["l2"] == pytest.approx(MIB8, rel=0.01)
        assert any("not collected" in n and "write:l2" in n for n in m.notes)


def test_mi300_corrupt_timestamps_flagged_not_printed():
    for gpu in ("MI300A_A1", "MI300X_A1"):
        for m in derive_workload(read_workload(VCOPY_2024 / gpu)):
            assert m.time_s is None and m.time_us is None and m.bandwidth() == {}
            assert any(f.startswith("corrupt-timestamp") for f in m.flags)
            assert m.as_row()["time_us"] is None


def test_time_source_recorded():
    m = derive_workload(read_workload(VCOPY_MI200))[0]
    assert m.time_source == "timestamps.csv (counter-free timing pass)"
    assert m.time_us == pytest.approx(20.48)
    assert m.clock_hz == pytest.approx(29465 / 20.48e-6)


def test_clock_above_max_flagged(mix200):
    flagged = [m for m in mix200 if any(f.startswith("clock-above-max") for f in m.flags)]
    assert flagged and all(m.clock_hz > 1.7e9 for m in flagged)


def test_above_peak_and_bound():
    m = derive_workload(read_workload(VCOPY_MI200))[0]
    bw = m.bandwidth()["hbm"]
    assert m.measured_bound({"hbm": 1.6384e12, "l2": 1e14, "l1": 1e14, "lds": 1e14}) == "memory:hbm"
    assert above_peak(m, {"hbm": bw / 2}) and not above_peak(m, {"hbm": 1.6384e12})
    assert ratios({"hit": 101.0}) == ["ratio-above-100: hit = 101.0 %"]
    row = m.as_row()
    for key in (
        "kernel",
        "dispatch",
        "time_us",
        "flops",
        "flops_by",
        "bytes",
        "bytes_read",
        "bytes_write",
        "measured_bound",
    ):
        assert key in row
    assert row["bytes"]["hbm"] == row["bytes_read"]["hbm"] + row["bytes_write"]["hbm"]


def test_replay_disagreement_flagged():
    d = Dispatch(
        "k",
        0,
        begin_ns=0,
        end_ns=1000,
        time_source="t",
        counters={"SQ_WAVES": 100.0},
        replay={"SQ_WAVES": [100.0, 130.0]},
    )
    m = derive(d, "gfx90a")
    assert any(f.startswith("replay-disagree: SQ_WAVES") for f in m.flags)


def test_every_target_loads_and_formulas_are_safe():
    targets = available_targets()
    for g in ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1151", "gfx1153"):
        assert g in targets
    for g in targets:
        assert load(g).quantities
    assert "flops:valu:fp32" not in load("gfx908").quantities  # no such counters on MI100
    assert load("gfx942").quantities["read:l2"].alternatives[0].expr.text.startswith("128")
    for bad in ("__import__('os')", "a.b", "x[0]", "lambda: 1", "open('f')", "2 ** 3", "'s'"):
        with pytest.raises(ExprError):
            parse(bad)
    assert parse("max(a, 2) * (b - 1) / 4")({"a": 3, "b": 5}) == 3.0
    with pytest.raises(InputError, match="no counter formulas for 'gfx999'"):
        load("gfx999")


@pytest.mark.parametrize(
    "gfx, read_bytes",
    [("gfx908", 64), ("gfx90a", 64), ("gfx940", 128), ("gfx941", 128), ("gfx942", 128), ("gfx950", 128)],
)
def test_l2_request_bytes_per_target(gfx, read_bytes):
    """vL1D -> L2 requests: 128-byte reads on gfx94x/gfx950 (the 128-byte L2 line), 64 B on older
    targets; writes and atomics 64 B everywhere (the vcopy request counts in docs/counters.md). One
    request of each kind, evaluated through each target's first formula."""
    fs = load(gfx)
    one = {c: 0.0 for q in ("read:l2", "write:l2", "bytes:l1") for c in fs.quantities[q].counters}

    def per_request(q: str, counter: str) -> float:
        return fs.quantities[q].alternatives[0].expr({**fs.constants, **one, counter: 1.0})

    assert per_request("read:l2", "TCP_TCC_READ_REQ_sum") == read_bytes
    for c in ("TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum"):
        assert per_request("write:l2", c) == 64
    assert per_request("bytes:l1", "TCP_TOTAL_CACHE_ACCESSES_sum") == 64  # tag accesses x 64 (2x for streams)


def test_kernel_rate_is_the_ratio_of_sums_over_dispatches():
    """Per-kernel bandwidth = summed bytes / summed time, not the mean of dispatch rates: two
    dispatches of 1 MB in 1 us and 3 MB in 1 ms give 4 MB / 1.001 ms."""
    from perfmodel.counters.measurement import Measurement

    ms = [
        Measurement(kernel="k", dispatch=0, gfx="gfx942", time_s=1e-6, bytes_read={"hbm": 1e6}),
        Measurement(kernel="k", dispatch=1, gfx="gfx942", time_s=1e-3, bytes_read={"hbm": 3e6}),
    ]
    (k,) = aggregate(ms)
    assert k.time_s == pytest.approx(1.001e-3)
    assert k.bandwidth()["hbm"] == pytest.approx(4e6 / 1.001e-3)


def test_quantity_missing_in_some_dispatches_is_left_out_not_summed_partially():
    """A counter pass that missed a dispatch leaves that dispatch without the pass's quantities:
    the kernel's sum would cover 1 dispatch and its time 2, so the quantity is left out, said in
    a note; quantities every dispatch has are summed as usual."""
    from perfmodel.counters.measurement import Measurement

    ms = [
        Measurement(kernel="k", dispatch=0, time_s=1e-3, bytes_read={"hbm": 1e6, "l2": 2e6}),
        Measurement(kernel="k", dispatch=1, time_s=1e-3, bytes_read={"l2": 2e6}),
    ]
    (k,) = aggregate(ms)
    assert k.bytes_read == {"l2": 4e6}
    assert "read:hbm measured in 1 of 2 dispatches: left out (a partial sum)" in k.notes
    # sums of sums (several workloads merged) count dispatches, not records
    (k2,) = aggregate([k, Measurement(kernel="k", dispatch=2, time_s=1e-3, bytes_read={"l2": 1e6})])
    assert k2.count == 3 and k2.bytes_read == {"l2": 5e6}
