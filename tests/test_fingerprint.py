"""Fingerprints: which tool, version, backend and timing source produced a file, from its
contents, on the real files in tests/data (and the derived rocpd / rocprofv3 JSON fixtures)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from data_paths import (
    DATA,
    GFX1153_LONG,
    MIXBENCH_MI200,
    ROCPROF,
    VCOPY_2024,
    VCOPY_MI300X_2PASS,
    VCOPY_MI300X_LONG,
    VCOPY_MI350,
)
from perfmodel.cli.main import cli
from perfmodel.errors import InputError
from perfmodel.readers.fingerprint import CHROME, RPD, csv_backend, fingerprint

CUT = ROCPROF / "rocprofv3_json" / "908_results_cut.json.gz"
RPD_CUT = DATA / "traces" / "mytrace_cut.rpd"
KINETO = DATA / "traces" / "sglang_Qwen3-8B_decode.json.gz"
KINETO_62 = DATA / "traces" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"


@pytest.mark.parametrize(
    ("path", "fmt", "tool", "version", "backend", "timing"),
    [
        (MIXBENCH_MI200, "rocprof-compute workload", "rocprof-compute (Omniperf 1.x)", None, "rocprof v1", "counter-free"),
        (MIXBENCH_MI200 / "timestamps.csv", "rocprof csv (wide)", "rocprof-compute (Omniperf 1.x)", None, "rocprof v1", "counter-free"),
        (MIXBENCH_MI200 / "pmc_perf.csv", "rocprof csv (wide)", "rocprof-compute (Omniperf 1.x)", None, "rocprof v1", "counter pass"),
        (VCOPY_2024 / "MI100", "rocprof-compute workload", "rocprof-compute (Omniperf)", "2", "rocprof v1", "counter-free"),
        (VCOPY_2024 / "MI300X_A1", "rocprof-compute workload", "rocprof-compute (Omniperf)", "2", "rocprofv2", "counter-free"),
        (VCOPY_MI350, "rocprof-compute workload", "rocprof-compute", "3", "rocprofv3", "counter pass"),
        (VCOPY_MI300X_LONG, "counter csv (long)", "rocprof-compute", "3", "rocprofv3", "counter pass"),
        (GFX1153_LONG, "counter csv (long)", "rocprofv3", None, "rocprofv3", "counter pass"),
        (CUT, "rocprofv3 json", "rocprofv3", None, "rocprofv3", "counter-free"),
        (VCOPY_MI300X_2PASS, "rocprofv3 pass folders", "rocprofv3", None, "rocprofv3", "counter pass"),
    ],
)  # fmt: skip
def test_real_files(path, fmt, tool, version, backend, timing):
    fp = fingerprint(path)
    assert (fp.format, fp.tool, fp.version, fp.backend) == (fmt, tool, version, backend)
    assert fp.timing.startswith(timing) and fp.readable and fp.evidence


def test_every_format_has_rules():
    from perfmodel.readers.fingerprint import _BY_FORMAT
    from perfmodel.readers.formats import FORMATS

    assert {f.name for f in FORMATS} == set(_BY_FORMAT)


def test_versions_and_evidence():
    fp = fingerprint(VCOPY_MI350)
    assert fp.rocm_version.startswith("6.5") and "sysinfo.csv version=3" in fp.evidence[0]
    assert "Kernel_ID" in fp.evidence[1]  # the v2-layout header rocprof-compute writes from rocprofv3
    assert "GUID" in fingerprint(GFX1153_LONG).evidence[0]
    assert fingerprint(CUT).evidence[-1] == "metadata names no tool version"


def test_csv_backend_headers():
    assert csv_backend(["Index", "KernelName", "grd", "BeginNs", "EndNs"])[0] == "rocprof v1"
    assert csv_backend(["Dispatch_ID", "Kernel_Name", "GPU_ID", "wave_size", "obj"])[0] == "rocprof v1"
    assert csv_backend(["Dispatch_ID", "GPU_ID", "Kernel_Name", "Correlation_ID"])[0] == "rocprofv2"
    assert csv_backend(["Dispatch_ID", "Kernel_Name", "Correlation_ID", "Kernel_ID"])[0] == "rocprofv3"
    assert csv_backend(["Correlation_Id", "Dispatch_Id", "Agent_Id", "Kernel_Name"])[0] == "rocprofv3"
    assert csv_backend(["Name", "Value"])[0] is None


def test_rocprofv3_csv_folder(tmp_path):
    from test_readers import test_rocprofv3_csv_directory

    test_rocprofv3_csv_directory(tmp_path)  # counter collection + kernel trace + agent info
    fp = fingerprint(tmp_path)
    assert (fp.format, fp.tool) == ("rocprofv3 csv directory", "rocprofv3")
    assert "1 *_counter_collection, 1 *_kernel_trace, 1 *_agent_info" in fp.evidence[0]
    assert fp.timing.startswith("kernel trace beside the counter collection")
    timing = tmp_path / "timing"
    timing.mkdir()
    shutil.move(next(tmp_path.glob("*_kernel_trace.csv")), timing)
    assert fingerprint(tmp_path).timing.startswith("counter-free (kernel trace from its own folder")


def test_rocpd_schema_version(tmp_path):
    from test_readers_rocpd_sqlite import SCHEMA_VERSION, build_db

    build_db(tmp_path / "run.db")
    fp = fingerprint(tmp_path / "run.db")
    assert (fp.format, fp.tool, fp.schema) == ("rocpd sqlite", "rocprofv3", SCHEMA_VERSION)
    assert fp.timing.startswith("counter pass") and f"schema_version={SCHEMA_VERSION}" in " ".join(fp.evidence)


def test_rocprofv3_json_with_counters(tmp_path):
    from test_readers_rocprof_json import build_json

    build_json(tmp_path / "1_results.json.gz")
    assert fingerprint(tmp_path / "1_results.json.gz").timing.startswith("counter pass")


def test_torch_trace_and_rpd_are_named_and_sent_to_validate():
    fp = fingerprint(KINETO)
    assert (fp.format, fp.readable, fp.schema) == (CHROME, False, "1")
    assert fp.rocm_version == "HIP 7.2.53211" and fp.backend == "roctracer 4.1"
    assert fp.devices == ["AMD Instinct MI300X"] and "perfmodel validate" in fp.advice
    old = fingerprint(KINETO_62)  # ROCm 6.2: no runtime version keys in the file
    assert old.rocm_version is None and old.devices == ["AMD Radeon Graphics"]
    rpd = fingerprint(RPD_CUT)
    assert (rpd.format, rpd.readable, rpd.schema) == (RPD, False, "2")
    assert "rocpd_op: 40 GPU operations" in rpd.evidence and "perfmodel validate FILE --arch" in rpd.advice


def test_unknown_file_is_one_error_line(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello\n")
    with pytest.raises(InputError, match="not a rocprof file"):
        fingerprint(p)


def _doctor(path, *extra):
    r = CliRunner().invoke(cli, ["doctor", str(path), *extra])
    assert r.exit_code == 0, r.output
    return r.output


def test_doctor_prints_the_fingerprint(tmp_path):
    from test_readers_rocpd_sqlite import build_db

    build_db(tmp_path / "run.db")
    r = json.loads(_doctor(tmp_path / "run.db", "--format", "json"))
    assert r["schema"] == "3.0.0" and r["backend"] == "rocprofv3" and r["timing"].startswith("counter pass")
    assert any(lack.startswith("no counter-free timing") for lack in r["lacks"])
    t = _doctor(VCOPY_2024 / "MI300X_A1")
    assert "  backend     rocprofv2" in t and "  timing      counter-free (timestamps.csv timing pass)" in t
    assert "  evidence    sysinfo.csv version=2" in t


@pytest.mark.parametrize("path", [KINETO, RPD_CUT])
def test_doctor_answers_for_formats_it_does_not_read(path):
    r = json.loads(_doctor(path, "--format", "json"))
    assert r["readable"] is False and r["lacks"] and "dispatches" not in r
    t = _doctor(path)
    assert "(not a rocprof workload: `perfmodel validate` reports it as a trace)" in t and "  lacks       " in t
