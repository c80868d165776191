"""The workgroup dispatchers' launch rate (`launch:workgroups`, archspec `launch.workgroup_rate`):
a grid of many tiny workgroups is paced by it where a spec has a figure, and nowhere else."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from model_runs import run_model as run

import perfmodel
from perfmodel.arch import load_arch
from perfmodel.archspec import parse_spec
from perfmodel.errors import InputError
from perfmodel.estimate import estimate
from perfmodel.models.streaming_common import waves_per_cu
from perfmodel.vocab import LAUNCH, WORKGROUP_LAUNCH, bound_label

TERM_US = f"{WORKGROUP_LAUNCH}_us"
ROOT = Path(__file__).resolve().parents[1]


def _row(kernel: str, arch: str, **shape) -> dict:
    return perfmodel.predict(cases=[{"kernel": kernel, **shape}], arch=arch).rows[0]


def test_rate_scales_with_xcds_and_clock():
    # 0.12 workgroups per clock per XCD: 8 XCDs at 2100 MHz on MI300X, 4 at 1420 MHz on MI308X
    assert load_arch("mi300x").workgroups_per_s() == pytest.approx(0.12 * 8 * 2100e6)
    assert load_arch("mi308x").workgroups_per_s() == pytest.approx(0.12 * 4 * 1420e6)
    assert load_arch("mi300x@1005mhz").workgroups_per_s() == pytest.approx(0.12 * 8 * 1005e6)
    # our H200 run: 270,336 one-store blocks in 163.5 us at 1980 MHz, per device; the H100 carries it
    assert load_arch("h200").workgroups_per_s() == pytest.approx(0.835 * 1830e6)
    assert load_arch("h100").workgroups_per_s() == load_arch("h200").workgroups_per_s()


def test_no_figure_no_term():
    """GPUs without a measured rate get no term at all: missing, never a zero that looks known."""
    assert load_arch("mi100").workgroups_per_s() is None
    for arch in ("mi100", "a100", "rx7900xtx"):
        assert WORKGROUP_LAUNCH not in _row("elementwise", arch, n=2**24)["terms_us"]


def test_batchnorm_transform_is_launch_bound_on_mi300x():
    """PyTorch's BatchNorm transform over 512 x 512 x 7 x 7 bf16 (ResNet-18's last stage) runs a
    (512, 512) grid of one-wave workgroups: 262,144 launches at 2.02 G/s take 130 us, while its
    51 MB stream in about 10 us. The DDP ResNet-18 trace of TraceLens records 129.9 us for that
    kernel (held out: the rate was measured on an MI350X trace)."""
    w = run("batchnorm", load_arch("mi300x"), "bf16", n=512 * 512 * 49, channels=512, layout="nchw", spatial=49, block=1024)
    transform = w.serial[-1]
    assert float(np.ravel(transform.launch.grid)[0]) == 512 * 512
    e = estimate(transform, load_arch("mi300x"))
    t = float(np.ravel(e.terms[WORKGROUP_LAUNCH])[0])
    assert t == pytest.approx(262144 / (0.12 * 8 * 2100e6))
    assert t > 5 * max(float(np.ravel(v)[0]) for k, v in e.terms.items() if k.startswith("memory:"))
    assert e.bound[0] == LAUNCH


def test_bound_class_of_the_term():
    assert bound_label(WORKGROUP_LAUNCH) == LAUNCH


def test_many_short_rows_run_persistent():
    """Rows of one wave each: the grid stays at what the device holds at once (persistent programs
    loop over the rest), so the dispatcher does not pace 491,520 rows of 128 bf16 columns; a row
    longer than a wave keeps one workgroup per row."""
    arch = load_arch("mi300x")
    short = run("rmsnorm", arch, "bf16", rows=491520, cols=128)
    assert float(np.ravel(short.launch.grid)[0]) < 491520 / 4
    long_rows = run("rmsnorm", arch, "bf16", rows=32768, cols=1024)
    assert float(np.ravel(long_rows.launch.grid)[0]) == 32768
    r = _row("rmsnorm", "mi300x", rows=491520, cols=128, dtype="bf16")
    assert r["terms_us"][WORKGROUP_LAUNCH] < 0.1 * r["time_us"]


def test_rate_unit_checked():
    tree = yaml.safe_load((ROOT / "archspecs" / "mi300x.yaml").read_text())
    tree["launch"]["workgroup_rate"]["unit"] = "us"
    with pytest.raises(InputError, match="workgroup_rate"):
        parse_spec(tree, "mi300x.yaml")


def test_terms_table_shows_the_term():
    from click.testing import CliRunner

    from perfmodel.cli.main import cli

    args = ["predict", "batchnorm", "n=12845056", "channels=512", "layout=nchw", "spatial=49", "--arch", "mi300x", "--terms", "--format", "csv"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    header, row = out.output.strip().splitlines()[-2:]
    col = header.split(",").index(TERM_US)
    # the row's own kernel is the statistics pass, one workgroup per channel; the transform's
    # 262,144 launches are inside its `serial` term
    assert float(row.split(",")[col]) == pytest.approx(512 / (0.12 * 8 * 2100e6) * 1e6, rel=1e-3)
    assert float(row.split(",")[header.split(",").index("serial_us")]) > 130


def test_pinned_row_launch_one_workgroup_per_row():
    """`block` and `rows_per_workgroup` pin a row kernel to the launch it ran: AITER's per-head
    RMSNorm, one 64-lane workgroup per 128-column row, is then paced by the launch rate (243 us
    for 491,520 rows; the SGLang trace records 245.3 us at its fastest), not by its 126 MB."""
    arch = load_arch("mi300x")
    w = run("rmsnorm", arch, "bf16", rows=491520, cols=128, block=64, rows_per_workgroup=1)
    assert float(np.ravel(w.launch.grid)[0]) == 491520 and float(np.ravel(w.launch.workgroup_size)[0]) == 64
    r = _row("rmsnorm", "mi300x", rows=491520, cols=128, dtype="bf16", block=64, rows_per_workgroup=1)
    assert r["bound"] == LAUNCH and r["terms_us"][WORKGROUP_LAUNCH] == pytest.approx(491520 / (0.12 * 8 * 2100e6) * 1e6)
    # PyTorch's LayerNorm: 256 lanes on one row, so four waves share each row's reduction
    w = run("layernorm", arch, "bf16", rows=141, cols=512, block=256, rows_per_workgroup=1)
    assert float(np.ravel(w.launch.grid)[0]) == 141
    # a block alone keeps the model's grid rule for that block: one-wave workgroups, persistent
    w = run("rmsnorm", arch, "bf16", rows=491520, cols=128, block=64)
    assert float(np.ravel(w.launch.workgroup_size)[0]) == 64
    assert float(np.ravel(w.launch.grid)[0]) == arch.cus * waves_per_cu(arch)  # one wave each, every slot


def test_trace_pins_row_launches_but_not_in_a_what_if():
    """`perfmodel validate` gives a row kernel the launch its trace recorded (grid and block),
    not when it predicts the trace on another GPU, where the launch is the recorded build's."""
    from perfmodel.traces.report import validate_trace

    trace = ROOT / "tests" / "data" / "traces" / "sglang_Qwen3-8B_prefilldecode.json.gz"
    rep = validate_trace(trace)
    heads = [r for r in rep.rows if r["kernel"] == "rmsnorm" and r["shape"]["cols"] == 128]
    assert heads and all(r["shape"]["block"] == 64 and r["shape"]["rows_per_workgroup"] == 1 for r in heads)
    big = next(r for r in heads if r["shape"]["rows"] == 491520)
    assert big["predicted_us"] > 240 and big["bound"] == LAUNCH
    other = validate_trace(trace, arch="mi355x")
    assert all(r["shape"]["rows_per_workgroup"] == 0 for r in other.rows if r["kernel"] == "rmsnorm")


def test_validate_names_the_launch_rate():
    """A measured kernel the model paces by its workgroup launches is explained in those words."""
    from perfmodel.counters.measurement import Measurement
    from perfmodel.prediction import evaluate, normalize_all
    from perfmodel.validate.compare import compare

    case = {"kernel": "rmsnorm", "rows": 491520, "cols": 128, "dtype": "bf16", "block": 64, "rows_per_workgroup": 1}
    (pred,) = evaluate(normalize_all([case], ["mi300x"]))
    m = Measurement(kernel="add_rmsnorm_quant_kernel", dispatch=0, gfx="gfx942", time_s=390.8e-6)
    out = compare(m, pred, load_arch("mi300x"))
    assert out["explaining_term"] == WORKGROUP_LAUNCH and "workgroup launches" in out["explain"]


@pytest.mark.parametrize(
    ("extra", "key"),
    [({"block": 5000, "rows_per_workgroup": 1}, "block"), ({"rows_per_workgroup": 0.5}, "rows_per_workgroup")],
)
def test_impossible_row_launch_is_refused(extra, key):
    """A workgroup larger than the GPU's largest, or part of a row per workgroup, is refused with
    the key named, not clipped into a launch that never ran."""
    with pytest.raises(InputError) as e:
        _row("rmsnorm", "mi300x", rows=10, cols=128, **extra)
    assert e.value.key == key


def _layer_norm_trace(path: Path, kernels: int) -> Path:
    """A minimal MI300X chrome trace: one aten::layer_norm call over 4096 x 128 bf16 that launched
    ``kernels`` kernels of 4096 workgroups of 256 lanes each."""
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::layer_norm", "ts": 0, "dur": 50,
           "args": {"External id": 7, "Input Dims": [[4096, 128], [128], [128], [128], []],
                    "Input type": ["c10::BFloat16"] * 4 + ["Scalar"]}}]  # fmt: skip
    for i in range(kernels):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "ts": 1 + i, "dur": 1,
                   "args": {"correlation": 10 + i, "External id": 7}})  # fmt: skip
        ev.append({"ph": "X", "cat": "kernel", "name": f"void at::native::vectorized_layer_norm_kernel_{i}",
                   "ts": 10 + 20 * i, "dur": 8.0,
                   "args": {"External id": 7, "correlation": 10 + i, "grid": [4096, 1, 1], "block": [256, 1, 1]}})  # fmt: skip
    props = [{"name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4, "numSms": 304}]
    path.write_text(json.dumps({"traceEvents": ev, "deviceProperties": props}))
    return path


def test_only_a_one_kernel_op_is_pinned(tmp_path):
    """An op that launched one kernel is predicted at that kernel's launch; an op of several
    kernels is not (its longest kernel's grid need not be the row kernel's), as in the trace
    extraction of validation/."""
    from perfmodel.traces.report import validate_trace

    (one,) = validate_trace(_layer_norm_trace(tmp_path / "one.json", 1)).rows
    assert one["shape"]["block"] == 256 and one["shape"]["rows_per_workgroup"] == 1
    (two,) = validate_trace(_layer_norm_trace(tmp_path / "two.json", 2)).rows
    assert two["shape"]["rows_per_workgroup"] == 0
