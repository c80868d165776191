"""Writes notebooks/03_model.ipynb (unexecuted). The tests execute it (torch extra needed)."""

from pathlib import Path

import nbformat as nbf

ARCHS = "['mi300x', 'mi355x', 'h100']"
cells = [
    nbf.v4.new_markdown_cell(
        "# A whole model: Llama-3-8B decode and prefill on MI300X, MI355X and H100\n\n"
        "The model is built from its published config on PyTorch's meta device (no weights), one step is "
        "traced op by op, every op becomes a kernel case and is predicted on each GPU. Nothing here is "
        "measured; see `docs/models-whole.md` for the rules and `perfmodel validate` for real traces."
    ),
    nbf.v4.new_code_cell(
        "%matplotlib inline\n"
        "import matplotlib.pyplot as plt\n"
        "import perfmodel\n"
        "from IPython.display import display\n"
        "from perfmodel.plots.model_plot import plot_layers, plot_model_roofline\n"
        f"ARCHS = {ARCHS}\n"
        "decode = perfmodel.analyze_model('llama3-8b', ARCHS, phase='decode', batch=1, kv_len=4096)\n"
        "prefill = perfmodel.analyze_model('llama3-8b', ARCHS, phase='prefill', batch=1, tokens=2048)\n"
        "decode"
    ),
    nbf.v4.new_markdown_cell("## Decode (batch 1, 4096 cached tokens): time per token against streaming the weights and KV cache"),
    nbf.v4.new_code_cell(
        "for t in decode.totals():\n"
        "    assert abs(t['total_us'] - sum(r['time_us'] for r in decode.rows if r['arch'] == t['arch'])) < 1e-6 * t['total_us']\n"
        "    print(f\"{t['arch']:7s} {t['decode_us_per_token']:9.1f} us/token  {t['tokens_per_s']:6.1f} tok/s  \"\n"
        "          f\"floor {t['stream_bound_us']:8.1f} us  ratio {t['stream_ratio']:.2f}  \"\n"
        "          f\"holds {t['memory_gb']:.1f} GB ({'fits' if t['fits'] else 'does not fit'})\")\n"
        "display(plot_layers(decode))"
    ),
    nbf.v4.new_markdown_cell(
        "Every layer is the same four GEMVs (qkv, o, gate+up, down), attention over the cache and five small "
        "kernels; the GEMVs stream the weights and dominate. The LM head (128256 x 4096) is the tallest bar."
    ),
    nbf.v4.new_markdown_cell("## Prefill (2048 tokens): per layer, and the ops on the MI300X roofline"),
    nbf.v4.new_code_cell(
        "for t in prefill.totals():\n"
        "    print(f\"{t['arch']:7s} {t['prefill_us'] / 1e3:7.2f} ms  {t['tokens_per_s']:9.0f} tok/s\")\n"
        "display(plot_layers(prefill))\n"
        "display(plot_model_roofline(prefill, 'mi300x'))"
    ),
    nbf.v4.new_code_cell(
        "display(plot_model_roofline(decode, 'mi300x'))\n"
        "sorted({(r['module'].split('.')[-1], r['bound']) for r in decode.rows if r['arch'] == 'mi300x'})"
    ),
    nbf.v4.new_markdown_cell(
        "In prefill the GEMMs sit under the matrix roof (compute-bound) and attention is the only op whose "
        "share grows with the sequence; in decode everything sits on the HBM side of the ridge."
    ),
    nbf.v4.new_markdown_cell("## What TP=8 costs: the all-reduces (Llama-3-8B and -70B, prefill 2048 tokens and decode)"),
    nbf.v4.new_code_cell(
        "rows = []\n"
        "for model in ('llama3-8b', 'llama3-70b'):\n"
        "    for phase, kw in (('prefill', dict(tokens=2048)), ('decode', dict(kv_len=4096))):\n"
        "        one = perfmodel.analyze_model(model, ARCHS, phase=phase, batch=1, **kw) if model == 'llama3-8b' else None\n"
        "        tp8 = perfmodel.analyze_model(model, ARCHS, phase=phase, batch=1, tp=8, **kw)\n"
        "        for t in tp8.totals():\n"
        "            single = next(x['total_us'] for x in one.totals() if x['arch'] == t['arch']) if one else None\n"
        "            rows.append({'model': model, 'phase': phase, 'arch': t['arch'], 'tp1_us': single, 'tp8_us': t['total_us'],\n"
        "                         'allreduce_us': t['collective_us'], 'allreduce_share': t['collective_us'] / t['total_us']})\n"
        "from perfmodel.output import render\n"
        "print(render(rows, 'table'))\n"
        "assert all(r['allreduce_us'] > 0 for r in rows)"
    ),
    nbf.v4.new_code_cell(
        "fig, ax = plt.subplots(figsize=(8, 3.5))\n"
        "labels = [f\"{r['model']}\\n{r['phase']}\\n{r['arch']}\" for r in rows]\n"
        "comp = [r['tp8_us'] - r['allreduce_us'] for r in rows]\n"
        "ax.bar(range(len(rows)), comp, label='kernels')\n"
        "ax.bar(range(len(rows)), [r['allreduce_us'] for r in rows], bottom=comp, label='all-reduce')\n"
        "ax.set_yscale('log'); ax.set_ylabel('time per step, TP=8 (us)')\n"
        "ax.set_xticks(range(len(rows)), labels, fontsize=6); ax.legend(); fig.tight_layout()\n"
        "display(fig)"
    ),
    nbf.v4.new_markdown_cell(
        "Prefill all-reduces carry 2048 x hidden activations: ring all-reduces bound by the links "
        "(xGMI 7 x 64 GB/s per direction on MI300X, NVLink 18 x 25 GB/s on H100). Decode all-reduces are a "
        "few KiB: one-shot, bound by step latency and launch. TP=8 shrinks each rank's GEMMs 8-fold but adds "
        "two collectives per layer."
    ),
]
nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
out = Path(__file__).resolve().parents[1] / "notebooks" / "03_model.ipynb"
nbf.write(nb, out)
print(f"wrote {out}")
