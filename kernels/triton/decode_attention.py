"""Decode attention (one query token per sequence) over a paged KV cache, vLLM layout.

k_cache and v_cache are (num_pages, PAGE, kv_heads, head_dim); block_table (batch, max_pages)
maps a sequence's logical page to a physical one; seq_lens (batch) gives each length. One program
handles the GROUP = heads / kv_heads query heads that share a KV head of one sequence (GQA), so
each K/V page is read once per KV head; it walks the pages (the main loop: seq_len / PAGE trips)
with the online softmax in fp32. perfmodel case: ``attention seq_q=1 seq_kv=<context>``.
"""

from __future__ import annotations

import triton
import triton.language as tl
from _spec import Spec, before_launch, cdiv, next_pow2, torch_dtype, ttype


@triton.jit
def decode_attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, table_ptr, lens_ptr, sm_scale, heads, kv_heads, max_pages,
    GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0)
    hk = tl.program_id(1)
    rg = tl.arange(0, GROUP_PAD)
    rd = tl.arange(0, HEAD_DIM)
    rp = tl.arange(0, PAGE)
    h = hk * GROUP + rg
    q = tl.load(
        q_ptr + (b * heads + h)[:, None] * HEAD_DIM + rd[None, :], mask=rg[:, None] < GROUP, other=0.0
    )
    q = q.to(tl.float32) * (sm_scale * 1.4426950408889634)
    seq_len = tl.load(lens_ptr + b)
    m_i = tl.full((GROUP_PAD,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((GROUP_PAD,), dtype=tl.float32)
    acc = tl.zeros((GROUP_PAD, HEAD_DIM), dtype=tl.float32)
    row = PAGE * kv_heads * HEAD_DIM  # one page
    for page in range(0, tl.cdiv(seq_len, PAGE)):
        phys = tl.load(table_ptr + b * max_pages + page).to(tl.int64)
        pos = page * PAGE + rp
        off = phys * row + rp[:, None] * (kv_heads * HEAD_DIM) + hk * HEAD_DIM + rd[None, :]
        k = tl.load(k_ptr + off, mask=pos[:, None] < seq_len, other=0.0).to(tl.float32)
        v = tl.load(v_ptr + off, mask=pos[:, None] < seq_len, other=0.0).to(tl.float32)
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2)  # (GROUP_PAD, PAGE)
        s = tl.where(pos[None, :] < seq_len, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + (b * heads + h)[:, None] * HEAD_DIM + rd[None, :], out.to(o_ptr.dtype.element_ty),
             mask=rg[:, None] < GROUP)  # fmt: skip


def signature(keys, gfx):
    t = "*" + ttype(keys["dtype"], gfx)
    return {"q_ptr": t, "k_ptr": t, "v_ptr": t, "o_ptr": t, "table_ptr": "*i32", "lens_ptr": "*i32",
            "sm_scale": "fp32", "heads": "i32", "kv_heads": "i32", "max_pages": "i32"}  # fmt: skip


def grid(keys, cx):
    return (int(keys["batch"]), int(keys["kv_heads"]))


def run(keys, device):
    import torch

    b, h, hk, d = int(keys["batch"]), int(keys["heads"]), int(keys["kv_heads"]), int(keys["head_dim"])
    ctx, dt = int(keys["seq_kv"]), torch_dtype(keys["dtype"])
    cx = SPEC.all_constexprs(keys)
    page = cx["PAGE"]
    gen = torch.Generator().manual_seed(0)
    # ragged lengths up to ctx; pages scattered in a shared pool
    lens = torch.tensor([max(1, ctx - 13 * i) for i in range(b)], dtype=torch.int32)
    max_pages = cdiv(ctx, page)
    pool = b * max_pages + 3
    perm = torch.randperm(pool, generator=gen)[: b * max_pages].reshape(b, max_pages).to(torch.int32)
    kc = torch.randn(pool, page, hk, d, generator=gen).to(dt)
    vc = torch.randn(pool, page, hk, d, generator=gen).to(dt)
    q = torch.randn(b, h, d, generator=gen).to(dt)
    refs = []
    for i in range(b):
        n = int(lens[i])
        pages = perm[i, : cdiv(n, page)].long()
        k = kc[pages].reshape(-1, hk, d)[:n].float().repeat_interleave(h // hk, 1)  # (n, h, d)
        v = vc[pages].reshape(-1, hk, d)[:n].float().repeat_interleave(h // hk, 1)
        s = torch.einsum("hd,nhd->hn", q[i].float(), k) / d**0.5
        refs.append(torch.einsum("hn,nhd->hd", torch.softmax(s, -1), v))
    ref = torch.stack(refs).to(dt)
    o = torch.empty_like(q).to(device)
    before_launch()
    decode_attention_kernel[grid(keys, cx)](
        q.to(device), kc.to(device), vc.to(device), o, perm.to(device), lens.to(device), d**-0.5, h, hk, max_pages,
        **cx, num_warps=SPEC.num_warps,
    )  # fmt: skip
    return o, ref


SPEC = Spec(
    name="decode_attention",
    fn=decode_attention_kernel,
    doc="decode attention (seq_q = 1) over a paged KV cache, GQA groups per program",
    keys={"batch": 64, "heads": 32, "kv_heads": 8, "seq_kv": 4096, "head_dim": 128, "dtype": "bf16"},
    constexprs={"PAGE": 16},
    derived=lambda k: {
        "GROUP": int(k["heads"]) // int(k["kv_heads"]),
        "GROUP_PAD": max(1, next_pow2(int(k["heads"]) // int(k["kv_heads"]))),
        "HEAD_DIM": int(k["head_dim"]),
    },
    signature=signature,
    case=lambda k: {
        "kernel": "attention",
        "batch": int(k["batch"]),
        "heads": int(k["heads"]),
        "kv_heads": int(k["kv_heads"]),
        "seq_q": 1,
        "seq_kv": int(k["seq_kv"]),
        "head_dim": int(k["head_dim"]),
        "dtype": k["dtype"],
    },  # fmt: skip
    grid=grid,
    trips=lambda k, cx: cdiv(k["seq_kv"], cx["PAGE"]),
    run=run,
    ints=lambda k, cx: {
        "heads": k["heads"],
        "kv_heads": k["kv_heads"],
        "max_pages": cdiv(k["seq_kv"], cx["PAGE"]),
    },
    num_warps=4,
    small={"batch": 3, "heads": 6, "kv_heads": 2, "seq_kv": 70, "head_dim": 32},
    tol=2e-2,
    dtypes=("fp16", "bf16"),
    interp_dtype="fp16",
)
KERNELS = [SPEC]
