"""Writes notebooks/01_predict.ipynb (unexecuted). The tests execute it."""

from pathlib import Path

import nbformat as nbf

cells = [
    nbf.v4.new_markdown_cell(
        "# Predicting kernels before running them\n\n"
        "GEMM from decode (M = batch) to prefill (M = tokens) on MI300X, MI355X and RX 7900 XTX, "
        "a map of what bounds a GEMM over M x N, and flash attention against sequence length. "
        "Every number comes from `perfmodel`'s archspecs and models; nothing here is measured."
    ),
    nbf.v4.new_code_cell(
        "import numpy as np\n"
        "import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "import perfmodel\n"
        "perfmodel.predict('gemm', ['mi300x', 'mi355x', 'rx7900xtx'], dtype='bf16', m=4096, n=4096, k=4096)"
    ),
    nbf.v4.new_markdown_cell("## GEMM: decode to prefill (N = 28672, K = 4096, the Llama-3-8B gate/up projection)"),
    nbf.v4.new_code_cell(
        "M = 2 ** np.arange(0, 15)\n"
        "fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))\n"
        "for arch in ['mi300x', 'mi355x', 'rx7900xtx']:\n"
        "    s = perfmodel.sweep('gemm', arch, 'bf16', m=M, n=28672, k=4096)\n"
        "    ax1.loglog(M, s.time_s * 1e6, marker='o', label=arch)\n"
        "    ax2.semilogx(M, s.tflops, marker='o', label=arch)\n"
        "    print(arch, dict(zip(M.tolist(), s.bound.tolist())))\n"
        "ax1.set_xlabel('M (tokens)'); ax1.set_ylabel('predicted time (us)'); ax1.legend()\n"
        "ax2.set_xlabel('M (tokens)'); ax2.set_ylabel('TFLOP/s'); ax2.legend()\n"
        "fig.tight_layout()"
    ),
    nbf.v4.new_markdown_cell(
        "Small M is bound by streaming the weight matrix from HBM; the crossover to the matrix pipe "
        "moves right on parts whose compute grows faster than their bandwidth."
    ),
    nbf.v4.new_markdown_cell("## What bounds a GEMM: a map over M x N (K = 8192, bf16, MI300X)"),
    nbf.v4.new_code_cell(
        "Ms = 2 ** np.arange(0, 15)\n"
        "Ns = 2 ** np.arange(6, 16)\n"
        "s = perfmodel.sweep('gemm', 'mi300x', 'bf16', m=Ms[:, None], n=Ns[None, :], k=8192)\n"
        "classes = sorted(set(s.bound.ravel().tolist()))\n"
        "codes = np.vectorize(classes.index)(s.bound)\n"
        "fig, ax = plt.subplots(figsize=(7, 5))\n"
        "im = ax.imshow(codes, origin='lower', aspect='auto', cmap='tab10', vmin=0, vmax=9)\n"
        "ax.set_xticks(range(len(Ns)), Ns, rotation=90); ax.set_yticks(range(len(Ms)), Ms)\n"
        "ax.set_xlabel('N'); ax.set_ylabel('M')\n"
        "handles = [plt.Rectangle((0, 0), 1, 1, color=plt.cm.tab10(i)) for i in range(len(classes))]\n"
        "ax.legend(handles, classes, loc='upper left', fontsize=8)\n"
        "assert s.bound.shape == (len(Ms), len(Ns))\n"
        "classes"
    ),
    nbf.v4.new_markdown_cell("## Flash attention forward against sequence length (batch 1, 32 heads, 8 KV heads, d = 128, causal)"),
    nbf.v4.new_code_cell(
        "S = 2 ** np.arange(9, 17)\n"
        "fig, ax = plt.subplots(figsize=(7, 4))\n"
        "for arch in ['mi300x', 'mi355x', 'rx7900xtx']:\n"
        "    s = perfmodel.sweep('attention', arch, 'bf16', batch=1, heads=32, kv_heads=8, seq_q=S, head_dim=128, causal=True)\n"
        "    ax.loglog(S, s.tflops, marker='o', label=arch)\n"
        "ax.set_xlabel('sequence length'); ax.set_ylabel('predicted TFLOP/s'); ax.legend()\n"
        "rows = perfmodel.predict('attention', 'mi300x', dtype='bf16', batch=1, heads=32, kv_heads=8, seq_q=8192, head_dim=128, causal=True)\n"
        "rows[0].terms_us"
    ),
    nbf.v4.new_markdown_cell("## Decode attention over a long KV cache: pure streaming"),
    nbf.v4.new_code_cell(
        "rows = perfmodel.predict('attention', ['mi300x', 'mi355x'], dtype='bf16', batch=64, heads=32, kv_heads=8, seq_q=1, seq_kv=32768, head_dim=128)\n"
        "rows"
    ),
]
nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
Path(__file__).resolve().parents[1].joinpath("notebooks", "01_predict.ipynb").write_text(nbf.writes(nb))
