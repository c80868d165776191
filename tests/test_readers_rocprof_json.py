"""rocprofv3 JSON output (`--output-format json`): the real MI350X kernel trace cut down
(tests/data/rocprof/rocprofv3_json, built by scripts/make_rocprofv3_json_fixture.py), and a
counter collection in the same schema holding the real MI300X vcopy values of the rocpd-mode
long CSV (the schema of rocprofiler-sdk's `callback_records.counter_collection`)."""

from __future__ import annotations

import csv
import gzip
import json
import shutil

import pytest
from click.testing import CliRunner
from test_readers_rocpd_sqlite import COUNTERS  # the counters the gfx942 byte formulas read

from data_paths import ROCPROF, VCOPY_MI300X_LONG
from perfmodel.cli.main import cli
from perfmodel.counters import derive_workload
from perfmodel.errors import InputError
from perfmodel.readers import detect_format, read_workload

CUT = ROCPROF / "rocprofv3_json" / "908_results_cut.json.gz"


def build_json(path, gfx_names=("gfx942",), instances=2) -> dict:
    """A rocprofv3 counter-collection result of the 3 vcopy dispatches; every counter value split
    over ``instances`` records (rocprofv3 writes one per dimension instance)."""
    with open(VCOPY_MI300X_LONG, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Counter_Name"] in COUNTERS]
    agents = [{"id": {"handle": 1}, "type": 1, "name": "AMD EPYC", "node_id": 0}]
    for i, g in enumerate(gfx_names):
        agents.append({"id": {"handle": 10 + i}, "type": 2, "name": g, "product_name": "AMD Instinct MI300X",
                       "cu_count": 304, "num_xcc": 8, "wave_front_size": 64, "node_id": 2 + i})  # fmt: skip
    counters = [{"id": {"handle": 100 + i}, "name": n} for i, n in enumerate(COUNTERS)]
    records = []
    for k, did in enumerate(sorted({r["Dispatch_ID"] for r in rows}, key=int)):
        mine = [r for r in rows if r["Dispatch_ID"] == did]
        t = mine[0]
        recs = []
        for r in mine:
            v = int(float(r["Counter_Value"]))
            for j in range(instances):
                part = v // instances + (v % instances if j == 0 else 0)
                recs.append({"counter_id": {"handle": 100 + COUNTERS.index(r["Counter_Name"])}, "value": float(part)})
        records.append({"dispatch_data": {
            "start_timestamp": int(t["Start_Timestamp"]), "end_timestamp": int(t["End_Timestamp"]),
            "dispatch_info": {"agent_id": {"handle": 10 + k % len(gfx_names)}, "queue_id": {"handle": 1},
                              "kernel_id": 1, "dispatch_id": int(did), "group_segment_size": 0,
                              "workgroup_size": {"x": 256, "y": 1, "z": 1},
                              "grid_size": {"x": int(t["Grid_Size"]), "y": 1, "z": 1}}},
            "records": recs})  # fmt: skip
    doc = {"rocprofiler-sdk-tool": [{
        "metadata": {"pid": 1, "config": {"json_output": True}},
        "agents": agents, "counters": counters,
        "kernel_symbols": [{"kernel_id": 0, "kernel_name": ""},
                           {"kernel_id": 1, "formatted_kernel_name": rows[0]["Kernel_Name"],
                            "kernel_name": rows[0]["Kernel_Name"] + ".kd", "arch_vgpr_count": 8,
                            "accum_vgpr_count": 0, "sgpr_count": 16}],
        "callback_records": {"counter_collection": records},
        "buffer_records": {"kernel_dispatch": []},
    }]}  # fmt: skip
    text = json.dumps(doc, indent=4)
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return doc


def test_real_kernel_trace_cut():
    """The real MI350X trace: dispatches by name, geometry and time, the agent as sysinfo."""
    assert detect_format(CUT) == detect_format(CUT.parent) == "rocprofv3 json"
    wl = read_workload(CUT)
    assert wl.gfx == "gfx950" and wl.sysinfo["gpu_model"] == "AMD Instinct MI350X" and wl.sysinfo["cu"] == 256
    assert len(wl.dispatches) == 200 and all(d.counters == {} for d in wl.dispatches)
    assert all(d.duration_ns > 0 for d in wl.dispatches)
    assert {d.gpu for d in wl.dispatches} == {"2"}  # agent handle 37946 is node 2
    gemm = next(d for d in wl.dispatches if d.kernel.startswith("Cijk_"))
    assert gemm.grid > 0 and gemm.workgroup == 256 and gemm.vgprs > 0
    assert {d.time_source for d in wl.dispatches} == {"908_results_cut.json.gz (kernel trace)"}


def test_detected_by_content_not_name(tmp_path):
    p = tmp_path / "renamed.dat"
    shutil.copy(CUT, p)
    assert detect_format(p) == "rocprofv3 json"
    plain = tmp_path / "x_results.json"
    plain.write_bytes(gzip.decompress(CUT.read_bytes()))
    assert len(read_workload(plain).dispatches) == 200


@pytest.mark.parametrize("name", ["1_results.json", "1_results.json.gz"])
def test_counter_collection_matches_the_long_csv(tmp_path, name):
    """The same vcopy values as rocprofv3 JSON and as the rocpd long CSV: the same counters
    (instance records summed), the same derived bytes."""
    p = tmp_path / name
    doc = build_json(p)
    wl = read_workload(p)
    assert wl.gfx == "gfx942" and len(wl.dispatches) == 3
    csv_wl = read_workload(VCOPY_MI300X_LONG)
    recs = doc["rocprofiler-sdk-tool"][0]["callback_records"]["counter_collection"]
    for d, c, r in zip(wl.dispatches, csv_wl.dispatches, recs, strict=True):
        assert d.index == c.index and d.kernel == c.kernel and d.grid == c.grid
        assert (d.begin_ns, d.end_ns) == (r["dispatch_data"]["start_timestamp"], r["dispatch_data"]["end_timestamp"])
        assert d.counters == {k: c.counters[k] for k in COUNTERS}
        assert "counter pass" in d.time_source
    for m in derive_workload(wl):
        assert m.bytes_read["hbm"] == pytest.approx(8 * 2**20, rel=0.01)
        assert m.bytes_write["hbm"] == pytest.approx(8 * 2**20, rel=0.01)


def test_validate_cli_reads_counters_from_json(tmp_path):
    """`perfmodel validate` sends a JSON result with counter records to the readers (a kernel
    trace alone still goes to the trace report)."""
    p = tmp_path / "1_results.json"
    build_json(p)
    r = CliRunner().invoke(cli, ["validate", str(p), "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert {x["arch"] for x in rows} == {"mi300x"} and rows[0]["achieved"]


def _edit(tmp_path, change, **kw):
    p = tmp_path / "1_results.json"
    doc = build_json(p, **kw)
    change(doc["rocprofiler-sdk-tool"][0])
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda t: t["callback_records"]["counter_collection"][1]["records"][0].update(value="12"),
         "counter 'TCC_BUBBLE_sum' of dispatch 2: value '12' (expected a finite number)"),
        (lambda t: t["callback_records"]["counter_collection"][0]["records"][0].update(value=None),
         "value None (expected a finite number)"),
        (lambda t: t["callback_records"]["counter_collection"][0]["records"][0].update(counter_id={"handle": 7}),
         "records[0].counter_id = 7: not in the file's counters"),
        (lambda t: t["callback_records"]["counter_collection"][0]["dispatch_data"].update(start_timestamp="x"),
         "counter_collection[0].dispatch_data.start_timestamp = 'x' (expected an integer)"),
        (lambda t: t["callback_records"]["counter_collection"][2]["dispatch_data"]["dispatch_info"].update(kernel_id=5),
         "dispatch_info.kernel_id = 5: no such entry in kernel_symbols"),
        (lambda t: t["callback_records"]["counter_collection"][0]["dispatch_data"]["dispatch_info"]["grid_size"].update(x=1.5),
         "grid_size.x = 1.5 (expected an integer)"),
        (lambda t: t["callback_records"].update(counter_collection=[]), "no kernel dispatches"),
        (lambda t: t.update(agents={}), "agents: expected a list"),
    ],
)  # fmt: skip
def test_bad_values_are_one_error_line(tmp_path, change, needle):
    p = _edit(tmp_path, change)
    with pytest.raises(InputError) as e:
        read_workload(p)
    assert needle in str(e.value) and str(p) in str(e.value) and "\n" not in str(e.value)


def test_mixed_gpus_and_broken_files(tmp_path):
    p = tmp_path / "mixed_results.json"
    build_json(p, gfx_names=("gfx942", "gfx90a"))
    with pytest.raises(InputError, match=r"mixed GPUs in one profile \(gfx90a, gfx942\)"):
        read_workload(p)
    cut = tmp_path / "cut_results.json.gz"
    cut.write_bytes(CUT.read_bytes()[:20000])  # a truncated gzip stream
    with pytest.raises(InputError, match="cannot read file|not JSON"):
        read_workload(cut)
    two = tmp_path / "two"
    two.mkdir()
    build_json(two / "1_results.json")
    build_json(two / "2_results.json")
    with pytest.raises(InputError, match="nothing recognisable"):
        read_workload(two)


@pytest.mark.parametrize("name", ["1_results.json.gz", "pmc_perf.csv.gz"])
def test_corrupt_gzip_is_one_error_line(tmp_path, name):
    """A bit flipped in the deflate stream (zlib.error, no OSError): an error line naming the file,
    from `validate` and from `doctor` (found by scripts/fuzz.py, family v3json)."""
    plain = gzip.decompress(CUT.read_bytes()) if name.endswith("json.gz") else VCOPY_MI300X_LONG.read_bytes()
    data = bytearray(gzip.compress(plain, mtime=0))
    data[12] ^= 0xFF
    p = tmp_path / name
    p.write_bytes(bytes(data))
    for cmd in ("validate", "doctor"):
        r = CliRunner().invoke(cli, [cmd, str(p)])
        assert r.exit_code == 2, r.output
        assert r.output.startswith(f"error: {p}") and len(r.output.strip().splitlines()) == 1
