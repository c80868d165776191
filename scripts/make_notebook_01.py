"""Writes notebooks/01_predict.ipynb (unexecuted). The tests execute it and check its figures.

Cells that must show a figure carry ``metadata.expect_figure = true``; claims about the model's
output are printed by the cells themselves, so the text cannot drift from the numbers.
"""

import nbformat as nbf
from notebook_cells import fig_cell, write

cells = [
    nbf.v4.new_markdown_cell(
        "# Predicting kernels before running them\n\n"
        "GEMM from decode (M = batch) to prefill (M = tokens) on MI300X, MI355X and RX 7900 XTX, "
        "a map of what bounds a GEMM over M x N, flash attention against sequence length, and a few "
        "Llama-3 cases on one roofline across GPUs. Every number comes from `perfmodel`'s archspecs "
        "and models; nothing here is measured (see `02_validate.ipynb` for that). Only the public API "
        "(`import perfmodel`) is used."
    ),
    nbf.v4.new_code_cell(
        "import numpy as np\n"
        "import matplotlib.pyplot as plt\n"
        "import perfmodel\n"
        "ARCHS = ['mi300x', 'mi355x', 'rx7900xtx']\n"
        "perfmodel.predict('gemm', ARCHS, dtype='bf16', m=4096, n=4096, k=4096)"
    ),
    nbf.v4.new_markdown_cell(
        "Which keys does a kernel take? `perfmodel.kernels()` lists every family (the CLI: `perfmodel kernels`, "
        "`perfmodel predict gemm --help`)."
    ),
    nbf.v4.new_code_cell("perfmodel.kernels('gemm', 'attention')"),
    nbf.v4.new_markdown_cell(
        "## GEMM: decode to prefill (N = 28672, K = 4096, the Llama-3-8B gate/up projection)\n\n"
        "Each marker is coloured by the bound class the model gives that M; the line under the plot "
        "names the regimes on each GPU."
    ),
    fig_cell(
        "from matplotlib.lines import Line2D\n"
        "M = 2 ** np.arange(0, 15)\n"
        "COLORS = {'compute': 'tab:red', 'memory': 'tab:blue', 'latency': 'tab:gray', 'launch': 'tab:cyan'}\n"
        "fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))\n"
        "for arch, ls in zip(ARCHS, ['-', '--', ':']):\n"
        "    s = perfmodel.sweep('gemm', arch, 'bf16', m=M, n=28672, k=4096)\n"
        "    ax1.loglog(M, s.time_s * 1e6, ls=ls, color='0.4', label=arch)\n"
        "    ax2.semilogx(M, s.tflops, ls=ls, color='0.4', label=arch)\n"
        "    c = [COLORS[b.split(':')[0]] for b in s.bound]\n"
        "    ax1.scatter(M, s.time_s * 1e6, c=c, zorder=3, s=22)\n"
        "    ax2.scatter(M, s.tflops, c=c, zorder=3, s=22)\n"
        "    regimes = {}\n"
        "    for m, b in zip(M.tolist(), s.bound.tolist()):\n"
        "        regimes.setdefault(b, []).append(m)\n"
        "    print(f'{arch:10s}', '; '.join(f'{b}: M={v[0]}..{v[-1]}' for b, v in regimes.items()))\n"
        "ax1.set_xlabel('M (tokens)'); ax1.set_ylabel('predicted time (us)')\n"
        "ax2.set_xlabel('M (tokens)'); ax2.set_ylabel('predicted TFLOP/s')\n"
        "marks = [Line2D([], [], ls='', marker='o', color=v, label=k) for k, v in COLORS.items()]\n"
        "ax1.legend(title='GPU', fontsize=8); ax2.legend(handles=marks, title='bound class', fontsize=8)\n"
        "fig.suptitle('GEMM bf16, N=28672, K=4096: decode (small M) to prefill (large M)')\n"
        "fig.tight_layout()"
    ),
    nbf.v4.new_markdown_cell(
        "Read the printed regimes: at small M the weight matrix streams from memory, so the bound is a "
        "memory level (or `latency` where too few workgroups are in flight to reach the bandwidth); the "
        "crossover to the matrix pipe comes at larger M on GPUs whose compute grows faster than their "
        "bandwidth."
    ),
    nbf.v4.new_markdown_cell("## What bounds a GEMM: a map over M x N (K = 8192, bf16, MI300X)"),
    fig_cell(
        "Ms = 2 ** np.arange(0, 15)\n"
        "Ns = 2 ** np.arange(6, 16)\n"
        "s = perfmodel.sweep('gemm', 'mi300x', 'bf16', m=Ms[:, None], n=Ns[None, :], k=8192)\n"
        "assert s.bound.shape == (len(Ms), len(Ns))\n"
        "print('bound classes on the map:', ', '.join(sorted(set(s.bound.ravel().tolist()))))\n"
        "perfmodel.plot_bound_map(s, x=Ns, y=Ms, xlabel='N', ylabel='M', title='bf16 GEMM on MI300X, K = 8192')"
    ),
    nbf.v4.new_markdown_cell(
        "## Flash attention forward against sequence length (batch 1, 32 heads, 8 KV heads, d = 128, causal)"
    ),
    fig_cell(
        "S = 2 ** np.arange(9, 17)\n"
        "fig, ax = plt.subplots(figsize=(7, 4))\n"
        "for arch in ARCHS:\n"
        "    s = perfmodel.sweep('attention', arch, 'bf16', batch=1, heads=32, kv_heads=8, seq_q=S, head_dim=128, causal=True)\n"
        "    ax.loglog(S, s.tflops, marker='o', label=arch)\n"
        "ax.set_xlabel('sequence length'); ax.set_ylabel('predicted TFLOP/s'); ax.legend()\n"
        "ax.set_title('flash attention forward, bf16, causal')\n"
        "rows = perfmodel.predict('attention', 'mi300x', dtype='bf16', batch=1, heads=32, kv_heads=8, seq_q=8192, head_dim=128, causal=True)\n"
        "print({k: round(v, 1) for k, v in rows[0].terms_us.items()})"
    ),
    nbf.v4.new_markdown_cell(
        "## A few Llama-3-8B cases on one roofline, across GPUs\n\n"
        "One marker per case at its binding level, coloured by bound class, shaped by kernel family, "
        "its edge saying which GPU; the dotted arrows follow a case from one GPU to the next. "
        "`path='roofline.html'` writes the same plot as an interactive page (hover a marker)."
    ),
    nbf.v4.new_code_cell(
        "cases = [\n"
        "    dict(id='gemv-decode', kernel='gemm', m=1, n=28672, k=4096),\n"
        "    dict(id='gemm-prefill', kernel='gemm', m=8192, n=28672, k=4096),\n"
        "    dict(id='fa-fwd-8k', kernel='attention', batch=2, heads=32, kv_heads=8, seq_q=8192, head_dim=128, causal=True),\n"
        "    dict(id='decode-attn', kernel='attention', batch=64, heads=32, kv_heads=8, seq_q=1, seq_kv=32768, head_dim=128),\n"
        "    dict(id='rmsnorm', kernel='rmsnorm', rows=8192, cols=4096),\n"
        "]\n"
        "preds = perfmodel.predict(cases=cases, arch=ARCHS, dtype='bf16')\n"
        "preds"
    ),
    fig_cell("perfmodel.plot_roofline(preds)"),
    nbf.v4.new_markdown_cell("The same cases as time per GPU, and each case's time terms (the model takes launch + the largest term)."),
    fig_cell("perfmodel.plot_times(preds)"),
    fig_cell("perfmodel.plot_terms([p for p in preds if p.arch == 'mi300x'])"),
]
write(cells, "01_predict.ipynb")
