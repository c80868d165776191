"""Writes notebooks/04_traces.ipynb (unexecuted). The tests execute it and check its figures.

Cells that must show a figure carry ``metadata.expect_figure = true``.
"""

import nbformat as nbf
from notebook_cells import fig_cell, write

cells = [
    nbf.v4.new_markdown_cell(
        "# 04 - traces: a torch.profiler trace beside the model\n\n"
        "Real chrome traces from `tests/data/traces` (AMD's TraceLens test data, MIT; origin in that folder's "
        "README): an SGLang Qwen3-8B prefill + decode step recorded on an MI300X, and the collectives of a "
        "data-parallel ResNet training run on 8 MI300X. Every GPU kernel is joined to the aten op that launched "
        "it, the op's recorded shapes become a case, and the case is predicted. Only the public API "
        "(`import perfmodel`) is used."
    ),
    nbf.v4.new_code_cell(
        "from pathlib import Path\n"
        "import perfmodel\n"
        "root = Path.cwd() if (Path.cwd() / 'tests').is_dir() else Path.cwd().parent\n"
        "TRACES = root / 'tests/data/traces'\n"
        "PREFILL = str(TRACES / 'sglang_Qwen3-8B_prefilldecode.json.gz')\n"
        "rep = perfmodel.validate(PREFILL, top=8)\n"
        "rep"
    ),
    nbf.v4.new_markdown_cell(
        "`efficiency` is the model's time over the measured one (1 = at the model's achievable roof), `bound` "
        "the term that limits the kernel in the model, i.e. where the gap is to be looked for. The summary "
        "gives the share of GPU time the model could identify and its total for those kernels."
    ),
    nbf.v4.new_code_cell(
        "s = rep.summary()\n"
        "print(f\"identified {s['identified_share']:.1%} of {s['gpu_time_us']:,.0f} us; \"\n"
        "      f\"measured {s['identified_us']:,.0f} us, model {s['identified_predicted_us']:,.0f} us \"\n"
        "      f\"(x {s['identified_predicted_us'] / s['identified_us']:.2f})\")"
    ),
    nbf.v4.new_markdown_cell(
        "## The same trace on another GPU\n\n"
        "Predicting the recorded kernels on an MI355X is a what-if: the per-kernel efficiency would compare two "
        "GPUs, so the report leaves it out, and the chart puts the two predictions beside the measurement."
    ),
    nbf.v4.new_code_cell(
        "there = perfmodel.validate(PREFILL, arch='mi355x')\n"
        "print(f\"recorded on {there.recorded_on}, predicted on {there.arch}: \"\n"
        "      f\"{there.predicted_total_us / rep.predicted_total_us:.2f} of the MI300X model's time\")"
    ),
    fig_cell("perfmodel.plot_trace([rep, there])"),
    nbf.v4.new_markdown_cell(
        "## Collectives\n\n"
        "c10d records every collective on a `record_param_comms` op (its name, element counts, dtype and group "
        "size), so the RCCL kernels get the interconnect model. One rank's kernel also waits for the last rank "
        "to join: in this data-parallel backward pass the all-reduces spend most of their time waiting, which "
        "the tiny efficiency shows and each row's note says."
    ),
    nbf.v4.new_code_cell(
        "comms = perfmodel.validate(str(TRACES / 'resnet_ddp_comms_cut.json.gz'))\n"
        "for r in comms.rows:\n"
        "    if r.get('kernel'):\n"
        "        print(f\"{r['kernel']:10s} {r['shape']['bytes']:>12,.0f} B x{r['calls']}  measured {r['measured_us']:9.1f} us  \"\n"
        "              f\"model {r['predicted_us']:7.1f} us  efficiency {r['efficiency']:.3f}\")\n"
        "print(comms.rows[0]['notes'])"
    ),
    fig_cell("perfmodel.plot_trace(comms)"),
    nbf.v4.new_markdown_cell(
        "## A graph-replayed decode step\n\n"
        "Serving engines replay their decode step from a HIP graph: the kernels carry no launching op and no "
        "shapes. Naming the model and the step (batch 32: the trace's argmax reads 32 x 151,936 logits; the "
        "cached length is not recorded, 1024 is a choice that moves only the attention) pairs each replay's "
        "kernels with the model's decode step by family and order: the i-th GEMM with the model's i-th GEMM."
    ),
    nbf.v4.new_code_cell(
        "DECODE = str(TRACES / 'sglang_Qwen3-8B_decode.json.gz')\n"
        "bare = perfmodel.validate(DECODE)\n"
        "step = perfmodel.validate(DECODE, model={'model': 'qwen3-8b', 'batch': 32, 'kv_len': 1024}, top=6)\n"
        "print(f\"predicted share: {bare.identified_share:.1%} without the model, {step.identified_share:.1%} with it\")\n"
        "step"
    ),
    fig_cell("perfmodel.plot_trace(step)"),
]
write(cells, "04_traces.ipynb")
