"""Flash attention forward (FlashAttention-2 loop order): causal or not, GQA/MQA.

Q is (batch, heads, seq_q, head_dim), K and V (batch, kv_heads, seq_kv, head_dim), contiguous;
query head h reads K/V head h // (heads / kv_heads). One program computes BLOCK_M query rows of
one (batch, head), walking K/V in BLOCK_N steps (the main loop: seq_kv / BLOCK_N trips, about
half of that per program when causal) with the online softmax in fp32 (exp2 with log2(e)
folded into the scale). perfmodel case: ``attention batch heads kv_heads seq_q seq_kv head_dim causal``.
"""

from __future__ import annotations

import triton
import triton.language as tl
from _spec import Spec, before_launch, cdiv, torch_dtype, ttype


@triton.jit
def flash_attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, seq_q, seq_kv, heads, kv_heads,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // heads
    h = bh % heads
    hk = h // (heads // kv_heads)
    q_base = q_ptr + (b * heads + h).to(tl.int64) * seq_q * HEAD_DIM
    k_base = k_ptr + (b * kv_heads + hk).to(tl.int64) * seq_kv * HEAD_DIM
    v_base = v_ptr + (b * kv_heads + hk).to(tl.int64) * seq_kv * HEAD_DIM
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(q_base + rm[:, None] * HEAD_DIM + rd[None, :], mask=rm[:, None] < seq_q, other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    # causal: queries are aligned to the end of the keys (offset seq_kv - seq_q)
    end = seq_kv
    if CAUSAL:
        end = tl.minimum(seq_kv, (pid_m + 1) * BLOCK_M + seq_kv - seq_q)
    for start in range(0, end, BLOCK_N):
        rn = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_base + rn[None, :] * HEAD_DIM + rd[:, None], mask=rn[None, :] < seq_kv, other=0.0)
        s = tl.dot(q, k) * qk_scale
        keep = rn[None, :] < seq_kv
        if CAUSAL:
            keep = keep & (rn[None, :] <= rm[:, None] + seq_kv - seq_q)
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp2(s - m_safe[:, None])
        alpha = tl.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + rn[:, None] * HEAD_DIM + rd[None, :], mask=rn[:, None] < seq_kv, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
    o_base = o_ptr + (b * heads + h).to(tl.int64) * seq_q * HEAD_DIM
    tl.store(
        o_base + rm[:, None] * HEAD_DIM + rd[None, :],
        acc.to(o_ptr.dtype.element_ty),
        mask=rm[:, None] < seq_q,
    )


def signature(keys, gfx):
    t = "*" + ttype(keys["dtype"], gfx)
    return {"q_ptr": t, "k_ptr": t, "v_ptr": t, "o_ptr": t, "sm_scale": "fp32",
            "seq_q": "i32", "seq_kv": "i32", "heads": "i32", "kv_heads": "i32"}  # fmt: skip


def grid(keys, cx):
    return (cdiv(keys["seq_q"], cx["BLOCK_M"]), int(keys["batch"]) * int(keys["heads"]))


def trips(keys, cx):
    full = cdiv(keys["seq_kv"], cx["BLOCK_N"])
    return max(1, full // 2) if keys["causal"] and keys["seq_q"] > 1 else full


def reference(q, k, v, causal: bool):
    import torch

    g = q.shape[1] // k.shape[1]
    k = k.float().repeat_interleave(g, 1)
    v = v.float().repeat_interleave(g, 1)
    s = q.float() @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        sq, sk = q.shape[2], k.shape[2]
        keep = torch.ones(sq, sk, dtype=torch.bool).tril(sk - sq)
        s = s.masked_fill(~keep.to(s.device), float("-inf"))
    return torch.softmax(s, -1) @ v


def _run(spec):
    def run(keys, device):
        import torch

        b, h, hk = int(keys["batch"]), int(keys["heads"]), int(keys["kv_heads"])
        sq, sk, d, dt = (
            int(keys["seq_q"]),
            int(keys["seq_kv"]),
            int(keys["head_dim"]),
            torch_dtype(keys["dtype"]),
        )
        gen = torch.Generator().manual_seed(0)
        q = torch.randn(b, h, sq, d, generator=gen).to(dt).to(device)
        k = torch.randn(b, hk, sk, d, generator=gen).to(dt).to(device)
        v = torch.randn(b, hk, sk, d, generator=gen).to(dt).to(device)
        o = torch.empty_like(q)
        cx = spec.all_constexprs(keys)
        before_launch()
        flash_attention_kernel[grid(keys, cx)](
            q, k, v, o, d**-0.5, sq, sk, h, hk, **cx, num_warps=spec.num_warps, num_stages=spec.num_stages
        )
        return o, reference(q, k, v, bool(keys["causal"])).to(dt)

    return run


def _make(name: str, keys: dict, small: dict, doc: str) -> Spec:
    spec = Spec(
        name=name,
        fn=flash_attention_kernel,
        doc=doc,
        keys=keys,
        constexprs={"BLOCK_M": 128, "BLOCK_N": 64},
        derived=lambda k: {"HEAD_DIM": int(k["head_dim"]), "CAUSAL": bool(k["causal"])},
        signature=signature,
        case=lambda k: {
            "kernel": "attention",
            "batch": int(k["batch"]),
            "heads": int(k["heads"]),
            "kv_heads": int(k["kv_heads"]),
            "seq_q": int(k["seq_q"]),
            "seq_kv": int(k["seq_kv"]),
            "head_dim": int(k["head_dim"]),
            "causal": bool(k["causal"]),
            "dtype": k["dtype"],
        },  # fmt: skip
        grid=grid,
        trips=trips,
        run=None,
        ints=lambda k, cx: {
            "seq_q": k["seq_q"],
            "seq_kv": k["seq_kv"],
            "heads": k["heads"],
            "kv_heads": k["kv_heads"],
        },
        num_warps=4,
        rdna={"BLOCK_M": 64, "BLOCK_N": 32},
        num_stages=1,
        small=small,
        tol=2e-2,
        dtypes=("fp16", "bf16"),
        interp_dtype="fp16",
    )
    spec.run = _run(spec)
    return spec


KERNELS = [
    _make(
        "flash_attention",
        {
            "batch": 1,
            "heads": 32,
            "kv_heads": 32,
            "seq_q": 4096,
            "seq_kv": 4096,
            "head_dim": 128,
            "causal": True,
            "dtype": "bf16",
        },  # fmt: skip
        {
            "batch": 2,
            "heads": 2,
            "kv_heads": 2,
            "seq_q": 100,
            "seq_kv": 100,
            "head_dim": 32,
            "BLOCK_M": 32,
            "BLOCK_N": 16,
        },
        "flash attention forward, causal, MHA",
    ),
    _make(
        "flash_attention_gqa",
        {
            "batch": 1,
            "heads": 32,
            "kv_heads": 8,
            "seq_q": 4096,
            "seq_kv": 4096,
            "head_dim": 128,
            "causal": True,
            "dtype": "bf16",
        },  # fmt: skip
        {
            "batch": 1,
            "heads": 4,
            "kv_heads": 2,
            "seq_q": 48,
            "seq_kv": 80,
            "head_dim": 32,
            "BLOCK_M": 16,
            "BLOCK_N": 16,
        },
        "flash attention forward, causal, grouped-query (Llama-3 8B: 32 query / 8 KV heads)",
    ),
]
