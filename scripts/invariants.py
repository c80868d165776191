"""Physical invariants of the attention model over a grid of shapes, per GPU: where they break.

    python scripts/invariants.py [--arch mi300x,h100,...]

A fastest implementation never gets slower when it has less to do, so for the same shape:

- causal: a causal mask skips work, so causal time <= non-causal time (the heaviest tile can keep
  them about equal; more than 1.1x is a defect of the model);
- seq_kv x 2: twice the keys is never faster (below 0.95x is a defect);
- GQA: sharing K/V among g query heads reads less and computes the same, so GQA time <= the time
  of the same heads without sharing (above 1.1x is a defect: the kernel could run it unshared);
- batch x 2: twice the sequences is never faster (below 0.95x is a defect);
- seq_q next: more query tokens (the grid's next count) is never faster (below 0.95x is a defect);
- seq_kv x 1.3: on 3,000 random shapes (seed 0; B2 H32/8 d128 causal, 1-16,384 queries over
  as many to 65,536 keys), 30 % more keys is never faster (below 0.95x is a defect), and a
  window of a third of the keys is never slower than the causal mask (above 1.1x is a defect);
- window: a sliding window (an eighth of the keys, at least 16) under the causal mask skips work,
  so it is never slower than the plain causal mask (above 1.1x is a defect), and twice the window
  is never faster (below 0.95x is a defect).

The same seq_kv and batch checks run on MLA's absorbed decode (`kv_shared`, one latent KV head
of 576 channels whose first 512 are V, fp8 on the targets that have it, bf16 elsewhere), and
the same rule on dense BF16 GEMMs: more rows (m to the next row count of the grid, which a
library could run by padding, and every m + 1 from 1 to 320 rows), twice the columns or twice the depth is never faster (below
0.95x is a defect), on convolutions: twice the images is never faster, and on MoE expert
layers: more tokens (the grid's next count) is never faster.

Prints, per GPU and invariant, the worst ratio, how many shapes break it and the worst shape.
Nothing is asserted: this is a map of where the tile ranking and the estimator disagree.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

ARCHS = "mi300x,mi300a,mi355x,mi250x,rx7900xtx,h100,a100"


SEQ_Q = [1, 2, 4, 16, 128, 1024, 4096]


def grid():
    """(batch, heads, kv_heads, seq_q, seq_kv, head_dim) arrays: decode to prefill, MHA to MQA."""
    rows = [
        (b, h, h // g, sq, skv, d)
        for b, h, g, sq, skv, d in itertools.product(
            [1, 8, 64], [8, 32, 128], [1, 4, 8], SEQ_Q, [128, 1024, 8192], [64, 128, 256]
        )
        if h % g == 0 and sq <= skv
    ]
    return [np.array(c, dtype=float) for c in zip(*rows, strict=True)]


def random_keys(n: int = 3000):
    """(batch, heads, kv_heads, seq_q, seq_kv, head_dim) arrays of random causal shapes (seed 0):
    key counts off the grid's powers of two, where split-KV and block choices change."""
    rng = np.random.default_rng(0)
    sq = np.floor(np.exp(rng.uniform(0, np.log(16384), n)))
    skv = np.maximum(sq, np.floor(np.exp(rng.uniform(0, np.log(65536), n))))
    one = np.ones(n)
    return 2 * one, 32 * one, 8 * one, sq, skv, 128 * one


def next_q(sq, skv):
    """The grid's next query count after each ``sq``, where it does not exceed the keys."""
    nxt = np.array([next((q for q in SEQ_Q if q > s), s) for s in sq], dtype=float)
    return np.where(nxt <= skv, nxt, sq)


def latent_grid():
    """(batch, heads, seq_q, seq_kv) arrays of MLA decodes: 16-128 query heads, 1-4 new tokens."""
    rows = list(itertools.product([1, 4, 16, 64], [16, 32, 64, 128], [1, 2, 4], [128, 1024, 8192, 32768]))
    return [np.array(c, dtype=float) for c in zip(*rows, strict=True)]


def swept(kernel: str, arch: str, dtype: str, **params) -> np.ndarray:
    """Predicted seconds of one family over arrays of shapes."""
    import perfmodel

    return np.asarray(perfmodel.sweep(kernel, arch, dtype, **params).time_s)


def times(arch: str, b, h, hk, sq, skv, d, causal=False, dtype="bf16", **extra):
    return swept("attention", arch, dtype, batch=b, heads=h, kv_heads=hk, seq_q=sq, seq_kv=skv, head_dim=d, causal=causal, **extra)


def fp8_or_bf16(arch: str) -> str:
    """fp8 where the spec has fp8 matrix rates, else bf16 (the dtype of the MLA and MoE lines)."""
    from perfmodel.arch import load_arch
    from perfmodel.vocab import MATRIX_PIPES

    spec = load_arch(arch)
    return "fp8" if any(spec.has(pipe, "fp8") for pipe in MATRIX_PIPES) else "bf16"


def latent_times(arch: str, b, h, sq, skv):
    """MLA decode times (`kv_shared`), in `fp8_or_bf16`."""
    one = np.ones_like(b)
    return times(arch, b, h, one, sq, skv, 576 * one, dtype=fp8_or_bf16(arch), head_dim_v=512 * one, kv_shared=True)


GEMM_M = [1, 2, 4, 8, 16, 24, 32, 33, 48, 64, 96, 128, 256, 512, 1024, 4096]


def gemm_grid():
    """(m, n, k) arrays of dense GEMMs: GEMV to square, with the next row count of each m."""
    rows = [
        (m, m_next, n, k)
        for (m, m_next), n, k in itertools.product(zip(GEMM_M, GEMM_M[1:], strict=False), [1024, 4096, 7168, 16384], [1024, 4096, 7168, 16384])
    ]
    return [np.array(c, dtype=float) for c in zip(*rows, strict=True)]


def gemm_row_steps():
    """(m, n, k) arrays of dense GEMMs at every row count from 1 to 320 (one past the tallest
    tile's, across the floors' and padding's rungs): m + 1 rows is checked against m."""
    rows = [(m, n, k) for m, n, k in itertools.product(range(1, 321), [1024, 5120, 8192], [256, 1024, 4096, 7168])]
    return [np.array(c, dtype=float) for c in zip(*rows, strict=True)]


MOE_TOKENS = [1, 4, 16, 64, 256, 512, 1024, 1025, 1500, 2048, 3000, 4096, 8192]


def moe_grid():
    """(tokens, next tokens, experts, topk, hidden, inter) arrays of expert layers (router left
    out): Mixtral-like 8 experts to DeepSeek-like 256, 1 to 8192 tokens, with the next count."""
    rows = [
        (t, t_next, e, k, hd, it)
        for (t, t_next), (e, k), (hd, it) in itertools.product(
            zip(MOE_TOKENS, MOE_TOKENS[1:], strict=False), [(8, 2), (64, 6), (128, 8), (256, 8)], [(4096, 1408), (7168, 2048)]
        )
    ]
    return [np.array(c, dtype=float) for c in zip(*rows, strict=True)]


def moe_times(arch: str, t, e, k, hd, it):
    """MoE expert-layer times (router left out), in `fp8_or_bf16`."""
    return swept("moe", arch, fp8_or_bf16(arch), tokens=t, experts=e, topk=k, hidden=hd, inter=it, router=False)


def conv_grid():
    """(n, c, hw, k, r) arrays of convolutions: ResNet-like 1x1 and 3x3 layers, 1-32 images."""
    rows = list(itertools.product([1, 2, 4, 8, 16, 32], [64, 256], [14, 56], [64, 256], [1, 3]))
    return [np.array(c, dtype=float) for c in zip(*rows, strict=True)]


def conv_times(arch: str, n, c, hw, k, r):
    return swept("conv2d", arch, "bf16", n=n, c=c, h=hw, w=hw, k=k, r=r, s=r, pad=(r - 1) / 2)


def gemm_times(arch: str, m, n, k):
    return swept("gemm", arch, "bf16", m=m, n=n, k=k)


def report(arch: str, checks: dict, shapes: tuple) -> None:
    for name, (r, limit, worst) in checks.items():
        i = int(np.argmax(r) if worst is max else np.argmin(r))
        broken = int(np.sum(r > limit) if worst is max else np.sum(r < limit))
        shape = " ".join(str(int(v[i])) for v in shapes)
        print(f"| {arch} | {name} | {r[i]:.2f} | {broken} | {shape} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default=ARCHS)
    args = ap.parse_args()
    b, h, hk, sq, skv, d = grid()
    print(f"{len(b)} shapes per GPU\n")
    print("| arch | invariant | worst ratio | shapes breaking it | worst shape (batch heads kv_heads seq_q seq_kv head_dim) |")
    print("|---|---|---|---|---|")
    for arch in args.arch.split(","):
        base = times(arch, b, h, hk, sq, skv, d)
        causal = times(arch, b, h, hk, sq, skv, d, causal=True)
        win = np.maximum(np.floor(skv / 8), 16.0)
        windowed = times(arch, b, h, hk, sq, skv, d, causal=True, window=win)
        checks = {
            "causal / non-causal <= 1.1": (causal / base, 1.1, max),
            "window / causal <= 1.1": (windowed / causal, 1.1, max),
            "window x 2 / window >= 0.95": (times(arch, b, h, hk, sq, skv, d, causal=True, window=2 * win) / windowed, 0.95, min),
            "seq_kv x 2 / seq_kv >= 0.95": (times(arch, b, h, hk, sq, 2 * skv, d) / base, 0.95, min),
            "GQA / unshared heads <= 1.1": (base / times(arch, b, h, h, sq, skv, d), 1.1, max),
            "batch x 2 / batch >= 0.95": (times(arch, 2 * b, h, hk, sq, skv, d) / base, 0.95, min),
            # the next query count of the grid, at most the keys (else the shape's own: ratio 1)
            "seq_q next / seq_q >= 0.95": (times(arch, b, h, hk, next_q(sq, skv), skv, d) / base, 0.95, min),
        }
        report(arch, checks, (b, h, hk, sq, skv, d))
        rb, rh, rhk, rsq, rskv, rd = random_keys()
        rbase = times(arch, rb, rh, rhk, rsq, rskv, rd, causal=True)
        more = times(arch, rb, rh, rhk, rsq, np.floor(1.3 * rskv), rd, causal=True) / rbase
        rwin = times(arch, rb, rh, rhk, rsq, rskv, rd, causal=True, window=np.floor(rskv / 3)) / rbase
        report(
            arch,
            {"seq_kv x 1.3 / seq_kv >= 0.95 (random)": (more, 0.95, min), "window / causal <= 1.1 (random)": (rwin, 1.1, max)},
            (rb, rh, rhk, rsq, rskv, rd),
        )
        lb, lh, lsq, lskv = latent_grid()
        lbase = latent_times(arch, lb, lh, lsq, lskv)
        latent = {
            "MLA seq_kv x 2 / seq_kv >= 0.95": (latent_times(arch, lb, lh, lsq, 2 * lskv) / lbase, 0.95, min),
            "MLA batch x 2 / batch >= 0.95": (latent_times(arch, 2 * lb, lh, lsq, lskv) / lbase, 0.95, min),
        }
        report(arch, latent, (lb, lh, lsq, lskv))
        gm, gm_next, gn, gk = gemm_grid()
        sm, sn, sk = gemm_row_steps()
        gbase = gemm_times(arch, gm, gn, gk)
        gemm = {
            "GEMM next m / m >= 0.95": (gemm_times(arch, gm_next, gn, gk) / gbase, 0.95, min),
            "GEMM n x 2 / n >= 0.95": (gemm_times(arch, gm, 2 * gn, gk) / gbase, 0.95, min),
            "GEMM k x 2 / k >= 0.95": (gemm_times(arch, gm, gn, 2 * gk) / gbase, 0.95, min),
        }
        report(arch, gemm, (gm, gn, gk))
        steps = {"GEMM m + 1 / m >= 0.95": (gemm_times(arch, sm + 1, sn, sk) / gemm_times(arch, sm, sn, sk), 0.95, min)}
        report(arch, steps, (sm, sn, sk))
        cn, cc, chw, ck, cr = conv_grid()
        conv = {"conv2d n x 2 / n >= 0.95": (conv_times(arch, 2 * cn, cc, chw, ck, cr) / conv_times(arch, cn, cc, chw, ck, cr), 0.95, min)}
        report(arch, conv, (cn, cc, chw, ck, cr))
        mt, mt_next, me, mk, mh, mi = moe_grid()
        moe = {"MoE next tokens / tokens >= 0.95": (moe_times(arch, mt_next, me, mk, mh, mi) / moe_times(arch, mt, me, mk, mh, mi), 0.95, min)}
        report(arch, moe, (mt, me, mk, mh, mi))
    print("\nMLA shapes: batch heads seq_q seq_kv (kv_heads 1, head_dim 576, head_dim_v 512).")
    print("GEMM shapes: m n k (BF16; the next m is the grid's next row count).")
    print("conv2d shapes: n c h(=w) k r(=s) (BF16, stride 1, same padding).")
    print("MoE shapes: tokens experts topk hidden inter (fp8 where the GPU has it, else BF16; router left out).")


if __name__ == "__main__":
    main()
