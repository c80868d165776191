"""What a person sees: kernels and their keys, plots (roofline, several GPUs, bandwidth chart,
interactive HTML, comparison charts), measured points on the model's FLOP basis, label
placement, progress bars and the Python API objects."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from data_paths import MIXBENCH_MI200, VCOPY_MI200

PNG = b"\x89PNG\r\n\x1a\n"
ROOT = Path(__file__).resolve().parents[1]


# --- discoverability ---------------------------------------------------------------------------
def test_kernels_json_lists_every_family_with_its_parameters(cli):
    from perfmodel.models.registry import all_models

    r = cli("kernels", "--format", "json")
    assert r.exit_code == 0, r.output
    fams = {f["kernel"]: f for f in json.loads(r.stdout)}
    assert set(fams) == set(all_models())
    for name, m in all_models().items():
        assert [p["name"] for p in fams[name]["params"]] == list(m.params)
    gemm = {p["name"]: p for p in fams["gemm"]["params"]}
    assert gemm["m"]["required"] and gemm["layout"]["choices"] == ["nn", "nt", "tn", "tt"]
    assert gemm["layout"]["default"] == "tn" and fams["gemm"]["default_dtype"] == "bf16"


def test_kernels_table_and_one_family(cli):
    out = cli("kernels").stdout
    assert "stencil" in out and "head_dim" in out and "(required)" in out
    one = cli("kernels", "stencil").stdout
    assert "nx" in one and "gemm" not in one
    bad = cli("kernels", "stencill")
    assert bad.exit_code == 2 and "did you mean 'stencil'" in bad.output and "Traceback" not in bad.output


def test_predict_kernel_help_lists_the_family_keys(cli):
    r = cli("predict", "stencil", "--help")
    assert r.exit_code == 0
    section = r.output.split("Keys of stencil", 1)[1]
    for key in ("nx", "ny", "nz", "points"):
        assert re.search(rf"^\s+{key}\s", section, re.M), key
    plain = cli("predict", "--help").output
    assert "perfmodel kernels" in plain and "Keys of" not in plain
    assert "Keys of stencil" in cli("predict", "--arch", "mi300x", "stencil", "nx=4", "--help").output
    assert "Keys of" not in cli("predict", "--cases", "x.yaml", "--help").output  # an option's value is no kernel


def test_family_help_keeps_a_space_after_a_long_key():
    """`flops_per_element` is 17 characters: it once ran into its type (`flops_per_elementfloat`)."""
    from perfmodel.models.registry import get_model
    from perfmodel.tables import family_help

    text = family_help(get_model("elementwise"))
    assert re.search(r"^\s+flops_per_element\s+float,", text, re.M), text


def test_docs_manifest_example_loads(tmp_path):
    """The manifest example in docs/usage.md is a valid manifest."""
    from perfmodel.validate.identify import load_manifest

    text = (ROOT / "docs" / "usage.md").read_text()
    block = re.search(r"```yaml\n# manifest.yaml[^\n]*\n(.*?)```", text, re.S).group(1)
    p = tmp_path / "m.yaml"
    p.write_text(block)
    m = load_manifest(p)
    assert len(m.rules) == 3 and m.rules[2].dispatch == 12


# --- plots through the CLI -----------------------------------------------------------------------
def test_roofline_measured_vcopy_is_a_bandwidth_chart(cli, tmp_path):
    out = tmp_path / "m.png"
    r = cli("roofline", "--measured", VCOPY_MI200, "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_bytes().startswith(PNG)
    assert f"bandwidth chart (2 without FLOPs or time) written to {out}" in r.output


def test_bandwidth_chart_bars_are_bytes_over_time():
    import matplotlib.pyplot as plt

    import perfmodel

    v = perfmodel.validate(str(VCOPY_MI200))
    fig = perfmodel.plot_bandwidth(v)
    row = v.rows[0]
    axes = [a for a in fig.axes if a.patches]
    assert [a.get_xlabel() for a in axes] == ["l1", "l2", "hbm"]
    hbm = axes[-1]
    heights = sorted(p.get_height() for p in hbm.patches)
    measured = row["bytes"]["hbm"] / (row["time_us"] * 1e-6) / 1e9
    predicted = row["predicted_bytes"]["hbm"] / (row["predicted_time_us"] * 1e-6) / 1e9
    assert heights == pytest.approx(sorted([measured, predicted]))
    plt.close(fig)


def test_bandwidth_chart_of_several_gpus_gives_each_bar_its_own_gpus_share():
    """An int64 map (no FLOPs) on MI300X and MI100: both bars on the HBM panel, each named by its
    GPU, each at about 100 % of its own GPU's achievable bandwidth (before: the MI100 bar read 25 %,
    a share of MI300X's ceiling)."""
    import matplotlib.pyplot as plt

    import perfmodel
    from perfmodel.plots.roofline_plot import new_figure  # noqa: F401  (matplotlib backend set up)

    p = perfmodel.predict("elementwise", ["mi300x", "mi100"], dtype="int64", n=100_000_000)
    fig = perfmodel.plot_bandwidth(p)
    hbm = next(a for a in fig.axes if a.get_xlabel() == "hbm")
    texts = [t.get_text() for t in hbm.texts]
    assert "mi300x" in texts and "mi100" in texts
    shares = sorted(int(t.split("\n")[1].rstrip("%")) for t in texts if "%" in t and "\n" in t)
    assert len(shares) == 2 and all(95 <= s <= 101 for s in shares)
    assert "lines: AMD Instinct MI300X's ceilings" in fig.texts[0].get_text()
    plt.close(fig)


def test_roofline_html_is_one_self_contained_interactive_file(cli, tmp_path):
    out = tmp_path / "r.html"
    r = cli("roofline", "--arch", "mi300x", "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "<script>" in text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "the file must work offline"
    assert "hbm" in text and "ridge" in text
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


def test_predict_html_hover_carries_case_times_bound_terms(cli, tmp_path):
    out = tmp_path / "p.html"
    r = cli("predict", "gemm", "m=1", "n=28672", "k=4096", "--arch", "mi300x,mi355x", "-o", out)
    assert r.exit_code == 0, r.output
    data = json.loads(re.search(r"const DATA = (.*);\n", out.read_text()).group(1))
    assert len(data) == 2 and {d["arch"] for d in data} == {"mi300x", "mi355x"}
    for d in data:
        assert "gemm bf16 m=1 n=28672 k=4096" in d["case"]
        assert d["predicted time"].endswith(" us") and d["bound"] and "memory:hbm" in d["terms"]


def test_predict_o_says_where_and_titles_what_was_run(cli, tmp_path, suite_size):
    out = tmp_path / "s.png"
    r = cli("predict", "--suite", "--arch", "mi300x,mi355x", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_bytes().startswith(PNG)
    assert f"roofline written to {out}" in r.output
    assert (tmp_path / "s-bandwidth.png").is_file()  # stream-copy has no FLOPs
    assert f"perfmodel predict: the built-in suite ({suite_size} cases) on mi300x, mi355x; cold single run" in r.stdout


@pytest.mark.parametrize("chart", ["times", "terms"])
def test_comparison_charts(cli, tmp_path, chart):
    out = tmp_path / f"{chart}.svg"
    r = cli("predict", "--suite", "--arch", "mi300x,mi355x", "--chart", chart, "-o", out)
    assert r.exit_code == 0, r.output
    assert b"<svg" in out.read_bytes()[:2000]


@pytest.mark.parametrize(
    "args",
    [
        ["predict", "gemm", "m=1", "n=2", "k=3", "-o", "x.jpg"],
        ["predict", "gemm", "m=1", "n=2", "k=3", "--chart", "times", "-o", "x.html"],
        ["roofline", "--arch", "mi300x", "-o", "x.gif"],
    ],
)
def test_bad_plot_target_is_one_error_line_and_no_file(cli, tmp_path, args):
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = cli(*args)
    finally:
        os.chdir(cwd)
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []


# --- points: binding level, FLOP basis --------------------------------------------------------
def test_one_point_per_case_at_its_binding_level():
    import perfmodel
    from perfmodel.plots.points import prediction_points

    preds = perfmodel.predict(
        cases=[dict(kernel="gemm", m=1, n=28672, k=4096), dict(kernel="gemm", m=8192, n=8192, k=8192)],
        arch="mi300x",
        dtype="bf16",
    )
    pts = prediction_points(preds)
    assert len(pts) == 2
    assert preds[0].bound == "memory:hbm" and pts[0].level == "hbm"
    big = preds[1]
    assert big.bound == "compute:mfma"
    mem_terms = {t.split(":")[1]: s for t, s in big.terms_s.items() if t.startswith("memory:")}
    assert pts[1].level == max(mem_terms, key=mem_terms.get)
    assert pts[1].xy() == pytest.approx((big.flops / big.bytes[pts[1].level], big.tflops))


def test_measured_packed_kernels_sit_on_the_model_flop_basis():
    """rocprof counts v_pk_fma once: the plotted measured FLOPs of a half2 kernel equal the
    model's count, not half of it (the table's -12 % and the plot agree)."""
    from perfmodel.plots.points import MEASURED, PREDICTED, measured_points

    pts, arrows = measured_points(str(MIXBENCH_MI200), name=r"benchmark_func<(__half2|HIP_vector)", top=4)
    assert arrows
    for a in arrows:
        assert a.meas.kind == MEASURED and a.pred.kind == PREDICTED
        assert a.meas.packed_scaled
        assert a.meas.flops == pytest.approx(a.pred.flops, rel=0.05)
    plain, _ = measured_points(str(MIXBENCH_MI200), name=r"benchmark_func<float, ", top=2)
    assert not any(p.packed_scaled for p in plain)


# --- layout ----------------------------------------------------------------------------------
def test_spread_keeps_order_and_gap():
    from perfmodel.plots.layout import spread

    ys = spread([10.0, 11.0, 11.5, 40.0], 5.0)
    assert ys == sorted(ys)
    assert all(b - a >= 5.0 - 1e-6 for a, b in zip(ys, ys[1:], strict=False))
    assert ys[3] == 40.0


def test_suite_plot_labels_do_not_overlap():
    import matplotlib.pyplot as plt

    import perfmodel
    from perfmodel.arch import data_path
    from perfmodel.cases import load_case_file

    preds = perfmodel.predict(cases=load_case_file(str(data_path("kernels", "suite.yaml"))), arch="mi300x")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = perfmodel.plot_roofline(preds)
    ax = fig.axes[0]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    from matplotlib.text import Text

    # the text itself (an annotation's own extent includes its leader line)
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts if t.get_text() and t.get_rotation() == 0]
    assert len(boxes) > 40  # the case numbers and the roof labels
    hits = [
        (a, b)
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a.overlaps(b) and a.intersection(a, b).width > 1 and a.intersection(a, b).height > 1
    ]
    assert not hits
    plt.close(fig)


# --- progress bars -----------------------------------------------------------------------------
def test_progress_bar_only_on_a_terminal():
    import io

    from perfmodel.progress import Bar, progress

    quiet = io.StringIO()
    with Bar("x", total=10, stream=quiet) as bar:  # StringIO is not a TTY
        bar.update(10)
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    with Bar("predicting", total=10, stream=loud, force=True) as bar:
        bar.update(5)
    assert "\rpredicting [" in loud.getvalue() and loud.getvalue().endswith("\r")
    assert list(progress(range(5), "x")) == list(range(5))


def test_piped_cli_has_no_progress_bar(cli, tmp_path):
    cases = tmp_path / "c.jsonl"
    cases.write_text("".join(json.dumps({"kernel": "gemm", "m": i, "n": 64, "k": 64}) + "\n" for i in range(1, 25001)))
    r = cli("predict", "--cases", cases, "--format", "jsonl")
    assert r.exit_code == 0 and "\r" not in r.output
    assert len(r.stdout.splitlines()) == 25000


# --- the Python API ----------------------------------------------------------------------------
def test_validate_is_callable_at_top_level_after_importing_the_package():
    import perfmodel
    import perfmodel.validate  # binds perfmodel.validate to the package: it must stay callable

    v = perfmodel.validate(str(VCOPY_MI200))
    assert v.rows and "<table>" in v._repr_html_() and "vecCopy" in repr(v)


def test_functions_named_like_their_modules_stay_callable_after_the_modules_are_imported():
    # perfmodel.predict imports perfmodel.estimate and perfmodel.roofline, which binds the package's
    # attributes to those modules; a user's `import perfmodel.sweep` does the same for sweep
    import perfmodel

    perfmodel.predict("gemm", "mi300x", m=64, n=64, k=64)
    import perfmodel.estimate
    import perfmodel.roofline
    import perfmodel.sweep

    s = perfmodel.sweep("gemm", "mi300x", "bf16", m=[64, 128], n=64, k=64)
    assert s.time_s.shape == (2,)
    e = perfmodel.estimate(s.estimate.work, s.estimate.arch)
    assert e.time_s.shape == (2,)
    assert perfmodel.roofline("mi300x").compute


def test_to_pandas_without_pandas_says_how(monkeypatch):
    import sys

    import perfmodel

    monkeypatch.setitem(sys.modules, "pandas", None)
    p = perfmodel.predict("gemm", "mi300x", m=64, n=64, k=64)
    with pytest.raises(ImportError, match="pip install pandas"):
        p.to_pandas()
    t = perfmodel.kernels("gemm")
    assert [r["key"] for r in t.rows] == ["m", "n", "k", "batch", "layout", "out_dtype", "scaling", "weight_dtype", "group_size", "tile", "split_k"] and "<table>" in t._repr_html_()


def test_written_files_get_the_usual_mode(tmp_path):
    import os

    from perfmodel.output import write_atomic

    p = tmp_path / "x.txt"
    write_atomic(str(p), "x")
    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask


def test_every_image_the_docs_show_is_made_by_the_script():
    """README and docs images come from scripts/make_readme_images.py (one command each)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mri", ROOT / "scripts" / "make_readme_images.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    made = {Path(a[a.index("-o") + 1]).name for a in mod.COMMANDS}
    made |= {Path(n).stem + "-bandwidth.png" for n in made if n.startswith("suite-")}
    shown = set()
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        shown |= {Path(m).name for m in re.findall(r"\]\(((?:docs/)?img/[^)]+)\)", doc.read_text())}
    assert shown and shown <= made, shown - made
    for name in shown:
        assert (ROOT / "docs" / "img" / name).is_file(), name


def test_the_times_chart_draws_each_prediction_error_band():
    """One whisker per bar, from time / p90 to time / p10 of the case's band."""
    from matplotlib.collections import LineCollection

    import perfmodel
    from perfmodel.plots.charts import plot_times

    preds = [*perfmodel.predict("gemm", m=4096, n=4096, k=4096, arch=["mi300x", "h100"])]
    preds += [*perfmodel.predict("rmsnorm", rows=1, cols=512, arch="mi300x")]  # a short kernel: its own band
    assert len(preds) == 3
    fig = plot_times(preds)
    segs = [s for c in fig.axes[0].collections if isinstance(c, LineCollection) for s in c.get_segments()]
    spans = sorted((round(s[0][0], 6), round(s[1][0], 6)) for s in segs)
    assert spans == sorted((round(p.time_band_us[0], 6), round(p.time_band_us[1], 6)) for p in preds)
    assert "likely range" in " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
