"""Writes notebooks/02_validate.ipynb (unexecuted). The tests execute it and check its figures.

Cells that must show a figure carry ``metadata.expect_figure = true``.
"""

import nbformat as nbf
from notebook_cells import fig_cell, write

cells = [
    nbf.v4.new_markdown_cell(
        "# 02 - validate: rocprof measurements beside the model\n\n"
        "Two real workloads from `tests/data/rocprof` (AMD's rocprofiler-compute test data, MIT): mixbench on "
        "an MI210 (compute kernels of every precision) and vcopy (a copy: no FLOPs at all). Only the public "
        "API (`import perfmodel`) is used."
    ),
    nbf.v4.new_code_cell(
        "from pathlib import Path\n"
        "import perfmodel\n"
        "root = Path.cwd() if (Path.cwd() / 'tests').is_dir() else Path.cwd().parent\n"
        "DATA = root / 'tests/data/rocprof/rocprofiler-compute'\n"
        "MIX = DATA / 'legacy_2022/mixbench/mi200'\n"
        "VCOPY = DATA / 'tests_workloads_2024/vcopy/MI200'\n"
        "v = perfmodel.validate(str(MIX), kernel_filter='benchmark_func<(float|double|__half2|HIP_vector)', top=8)\n"
        "v"
    ),
    nbf.v4.new_markdown_cell(
        "One row in full: the measured and predicted time, the bound classes and the sentence that names "
        "the term explaining the difference."
    ),
    nbf.v4.new_code_cell(
        "r = v.rows[0]\n"
        "{k: r[k] for k in ('name', 'time_us', 'predicted_time_us', 'measured_bound', 'bound', 'flops', 'predicted_flops', 'explain')}"
    ),
    nbf.v4.new_markdown_cell(
        "## Measured against predicted on the roofline\n\n"
        "Hollow markers are measured, filled ones predicted, an arrow goes from the prediction to the "
        "measurement. rocprof counts a packed instruction (`v_pk_fma`, used by the `half2`/`float2` "
        "kernels) once although it does two FMAs per lane; the plot counts them as the model does, so "
        "a packed kernel's two markers sit together when the model is right. The printed ratios show it."
    ),
    nbf.v4.new_code_cell(
        "for r in v.rows:\n"
        "    if r.get('predicted_flops'):\n"
        "        print(f\"{r['name']:42s} counters/model FLOPs {r['flops'] / r['predicted_flops']:.2f}  \"\n"
        "              f\"(counted basis {r['flops'] / r['predicted_flops_counted']:.2f})  time error {r['time_error']:+.1%}\")"
    ),
    fig_cell("perfmodel.plot_roofline(v)"),
    nbf.v4.new_markdown_cell(
        "## A kernel without FLOPs: achieved bandwidth per level\n\n"
        "vcopy does no floating-point work, so it has no place on a roofline (x = FLOPs per byte). The "
        "bandwidth chart shows what it did: bytes per second through each memory level, against the "
        "level's theoretical and achievable bandwidth."
    ),
    nbf.v4.new_code_cell("vc = perfmodel.validate(str(VCOPY))\nvc"),
    fig_cell("perfmodel.plot_bandwidth(vc)"),
]
write(cells, "02_validate.ipynb")
