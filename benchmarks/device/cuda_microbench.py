"""Microbenchmarks on an NVIDIA GPU: timing-scope overheads and the bandwidth of each level.

Why: perfmodel's CUDA scope overheads (model_constants.yaml `scope_overhead.cuda`) came from
laptop and V100 figures, and the H100/H200 archspecs carry placeholder L1/L2 ceilings. This
script measures both on the GPU it runs on, so those constants can cite a run anyone with such a
GPU can repeat: `python benchmarks/device/cuda_microbench.py OUT.json`.

What it measures (all medians; kernel durations from torch.profiler's CUPTI records):
  scope     a 1-element kernel (torch eager and a Triton kernel): its kernel duration; the
            spacing of 2,000 back-to-back launches between two events; one event-timed call
            after an L2 flush (triton.testing.do_bench's pattern) and do_bench itself; a host
            wall clock around one eager op plus synchronize.
  levels    a Triton kernel that reads a buffer of S bytes P times (loads with and without the
            L1, `.cg`), S from 256 KiB to 4 GiB: the plateaus are L1, L2 and HBM.
  copy      torch copy_ of S bytes, cold (L2 flushed before each call) and warm: kernel
            duration and achieved bytes read + written per second, S from 64 KiB to 4 GiB.
  elementwise  torch.mul(x, 2, out=y), fp32 and bf16, 4 Ki to 512 Mi elements, cold.
  grid      a Triton kernel that stores one value per block: the duration floor against grid size.
  norms, attention, gemm   torch eager softmax/layer_norm/rms_norm, SDPA flash forward and cuBLAS
            bf16 GEMMs at the shapes of published points: kernel durations, cold.
  attention_seq   SDPA cuDNN forward and backward from 128 to 4096 tokens at 2 x 32 heads.
  gemm_k    cuBLAS BF16 GEMMs, 4096^2 and 8192^2 outputs, K from 64 to 4096.
  fp8_block torch._scaled_mm FP8 GEMMs with per-tensor and with 1x128 / 128x128 block scales.
  panel     HBM reads in a GEMM's pattern against linear streaming: programs that walk BN rows
            x K of a K-contiguous bf16 matrix in BN x BK tiles (a skinny GEMM's B panels, no
            matrix product), programs that read the same bytes as contiguous chunks, and cuBLAS
            GEMMs of 1 and 16 rows on the same matrix; cold kernel durations.
  dirty     a read-only kernel and an elementwise out = 2x of 4 MiB to 1 GiB after an L2 flush
            that writes (zero_, as triton.testing.do_bench and `cold` here flush), after one
            that only reads, and with none: the dirty lines a write flush leaves in the L2 are
            written back while the kernel runs.
Sections can be named after OUT.json (default: all). It needs torch and triton with a CUDA GPU;
nothing here runs in the test suite.
"""

from __future__ import annotations

import json
import statistics
import sys
import time


def main(out_path: str, wanted: list[str]) -> None:
    import torch
    import triton
    import triton.language as tl

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    result: dict = {
        "device": props.name,
        "sms": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
    }

    def save() -> None:
        with open(out_path, "w") as f:
            json.dump(result, f, indent=1)

    flush = torch.empty(256 * 2**20 // 4, dtype=torch.float32, device=dev)

    @triton.jit
    def tiny_kernel(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr) + 1.0)

    @triton.jit
    def read_kernel(x_ptr, out_ptr, nchunks, iters, BLOCK: tl.constexpr, CG: tl.constexpr):
        # program p reads chunks p, p + P, p + 2P, ... modulo nchunks: with nchunks <= P it
        # re-reads one chunk (an L1 hit unless CG), else it sweeps the whole buffer
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for j in range(iters):
            c = (pid + j * nprog) % nchunks
            offs = c * BLOCK + tl.arange(0, BLOCK)
            if CG:
                acc += tl.load(x_ptr + offs, cache_modifier=".cg")
            else:
                acc += tl.load(x_ptr + offs)
        tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)

    last_names: list[str] = []  # kernel names of the last kernel_durations_us call, in order

    def kernel_durations_us(fn, reps: int, between=None) -> list[float]:
        """CUPTI durations (us) of the kernels fn launches; the flush's fill kernels are dropped."""
        from torch.profiler import ProfilerActivity, profile

        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                if between is not None:
                    between()
                fn()
            torch.cuda.synchronize()
        rows = []
        for e in prof.profiler.kineto_results.events():
            if "cuda" in str(e.device_type()).lower() and "fill" not in e.name().lower():
                rows.append((e.start_ns(), e.duration_ns() / 1e3, e.name()))
        rows.sort()
        last_names[:] = [n for _, _, n in rows]
        return [d for _, d, _ in rows]

    def event_single(fn, reps: int) -> list[float]:
        out = []
        for _ in range(reps):
            flush.zero_()
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            out.append(e0.elapsed_time(e1) * 1e3)
        return out

    def event_loop(fn, n: int) -> float:
        fn()
        torch.cuda.synchronize()
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(n):
            fn()
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) * 1e3 / n

    def host_sync(fn, reps: int) -> list[float]:
        out = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t0) * 1e6)
        return out

    # Each section saves what it measured; one that fails is reported and the next still runs.
    # --- scope overheads -------------------------------------------------------------------
    def scope_section() -> None:
        tiny = torch.zeros(1, device=dev)
        ops = {
            "torch_add_": lambda: tiny.add_(1.0),
            "triton_tiny": lambda: tiny_kernel[(1,)](tiny),
        }
        scope: dict = {}
        for name, fn in ops.items():
            for _ in range(50):
                fn()
            torch.cuda.synchronize()
            kd = kernel_durations_us(fn, 200)
            single = event_single(fn, 300)
            loops = [event_loop(fn, 2000) for _ in range(5)]
            hs = host_sync(fn, 1000)
            db_mean = triton.testing.do_bench(fn, warmup=25, rep=200) * 1e3
            db_median = triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3
            scope[name] = {
                "kernel_us_median": statistics.median(kd) if kd else None,
                "kernel_n": len(kd),
                "event_single_after_flush_us_median": statistics.median(single),
                "event_loop_us_per_call": loops,
                "host_sync_us_median": statistics.median(hs),
                "host_sync_us_p10": sorted(hs)[len(hs) // 10],
                "do_bench_mean_us": db_mean,
                "do_bench_median_us": db_median,
            }
            print(name, json.dumps(scope[name]), flush=True)
        result["scope"] = scope
        save()

    # --- load-to-use latency by pointer chase (one thread, random cyclic permutation) --------
    @triton.jit
    def chase_kernel(p_ptr, out_ptr, start, n_hops, CG: tl.constexpr):
        idx = start.to(tl.int64)
        for _ in range(n_hops):
            if CG:
                idx = tl.load(p_ptr + idx, cache_modifier=".cg")
            else:
                idx = tl.load(p_ptr + idx)
        tl.store(out_ptr, idx)

    def latency_section() -> None:
        rows = []
        line = 128  # bytes between chased words: one word per 128-byte line
        out = torch.zeros(1, dtype=torch.int64, device=dev)
        for s_bytes in (
            16 * 2**10,
            128 * 2**10,
            2 * 2**20,
            8 * 2**20,
            24 * 2**20,
            48 * 2**20,
            256 * 2**20,
            2**30,
            4 * 2**30,
        ):
            n = s_bytes // line
            order = torch.randperm(n, device=dev, dtype=torch.int64) * (line // 8)
            chain = torch.zeros(s_bytes // 8, dtype=torch.int64, device=dev)
            chain[order] = torch.roll(order, -1)
            for cg in (False, True):
                hops = 20000 if s_bytes >= 2**30 else 50000
                warm = n if s_bytes <= 64 * 2**20 else 2000  # one full lap puts a cache-sized chain in cache
                chase_kernel[(1,)](chain, out, int(order[0]), warm, CG=cg, num_warps=1)
                torch.cuda.synchronize()
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                chase_kernel[(1,)](chain, out, int(order[0]), hops, CG=cg, num_warps=1)
                e1.record()
                e1.synchronize()
                ns = e0.elapsed_time(e1) * 1e6 / hops
                row = {"footprint_bytes": s_bytes, "cg": cg, "hops": hops, "ns_per_hop": ns}
                rows.append(row)
                print("chase", json.dumps(row), flush=True)
            del chain, order
            torch.cuda.empty_cache()
        result["latency"] = rows
        save()

    # --- level bandwidths (read-only Triton kernel) ------------------------------------------
    def levels_section() -> None:
        levels = []
        block = 2048
        grid = props.multi_processor_count * 8
        big = torch.randn(2**32 // 4, device=dev)  # 4 GiB of fp32
        out = torch.empty(grid * block, device=dev)
        for cg in (False, True):
            for s_bytes in [2**k for k in range(18, 33)]:
                nchunks = s_bytes // (4 * block)
                iters = max(1, (2**33) // (grid * block * 4))
                read_kernel[(grid,)](big, out, nchunks, iters, BLOCK=block, CG=cg, num_warps=8)
                torch.cuda.synchronize()
                times = []
                for _ in range(5):
                    e0 = torch.cuda.Event(enable_timing=True)
                    e1 = torch.cuda.Event(enable_timing=True)
                    e0.record()
                    read_kernel[(grid,)](big, out, nchunks, iters, BLOCK=block, CG=cg, num_warps=8)
                    e1.record()
                    e1.synchronize()
                    times.append(e0.elapsed_time(e1) * 1e-3)
                t = statistics.median(times)
                moved = grid * block * 4 * iters
                row = {
                    "cg": cg,
                    "footprint_bytes": s_bytes,
                    "bytes_read": moved,
                    "s": t,
                    "GBps": moved / t / 1e9,
                }
                levels.append(row)
                print("read", json.dumps(row), flush=True)
        result["levels_read"] = levels
        save()
        del big
        torch.cuda.empty_cache()

    # --- copy sweep --------------------------------------------------------------------------
    def copy_section() -> None:
        copies = []
        src_all = torch.randn(2**31 // 4, device=dev)  # 2 GiB
        dst_all = torch.empty_like(src_all)
        for s_bytes in [2**k for k in range(16, 32)]:
            n = s_bytes // 4
            src, dst = src_all[:n], dst_all[:n]

            def fn(src=src, dst=dst):
                dst.copy_(src)

            for _ in range(3):
                fn()
            reps = 30 if s_bytes < 2**28 else 10
            cold = kernel_durations_us(fn, reps, between=flush.zero_)
            warm = kernel_durations_us(fn, reps)
            ev = event_single(fn, reps)
            row = {
                "bytes_each_way": s_bytes,
                "cold_kernel_us": statistics.median(cold) if cold else None,
                "warm_kernel_us": statistics.median(warm) if warm else None,
                "event_single_after_flush_us": statistics.median(ev),
            }
            if row["cold_kernel_us"]:
                row["cold_GBps_rw"] = 2 * s_bytes / row["cold_kernel_us"] / 1e3
            copies.append(row)
            print("copy", json.dumps(row), flush=True)
        result["copy"] = copies
        save()

    def cold_row(fn, reps: int) -> dict:
        for _ in range(3):
            fn()
        cold = kernel_durations_us(fn, reps, between=flush.zero_)
        per_call = len(cold) // reps if reps else 0
        # a call may launch several kernels: sum each call's kernels
        sums = [sum(cold[i * per_call : (i + 1) * per_call]) for i in range(reps)] if per_call else []
        names = last_names[:per_call]
        ev = event_single(fn, reps)
        return {
            "kernels_per_call": per_call,
            "kernel_names": names,
            "cold_kernel_us": statistics.median(sums) if sums else None,
            "event_single_after_flush_us": statistics.median(ev),
            # triton.testing.do_bench as published Triton/Liger/tutorial figures call it (its
            # default return_mode is the mean), and its median
            "do_bench_mean_us": triton.testing.do_bench(fn, warmup=5, rep=20) * 1e3,
            "do_bench_median_us": triton.testing.do_bench(fn, warmup=5, rep=20, return_mode="median") * 1e3,
        }

    def timed_row(tag: str, rows: list, row: dict, fn, reps: int, names: bool = True) -> None:
        """Time ``fn`` cold (`cold_row`) into ``row``, keep the row and print it; ``names`` False
        leaves the kernel names out of the printed line (the long sweeps)."""
        row.update(cold_row(fn, reps))
        rows.append(row)
        shown = row if names else {k: v for k, v in row.items() if k != "kernel_names"}
        print(tag, json.dumps(shown), flush=True)

    # --- elementwise sweep: out = 2 * x (one read, one write per element) ------------------
    def elementwise_section() -> None:
        rows = []
        for dtype in (torch.float32, torch.bfloat16):
            src_all = torch.randn(2**29, device=dev).to(dtype)
            dst_all = torch.empty_like(src_all)
            for k in range(12, 30):
                n = 2**k
                src, dst = src_all[:n], dst_all[:n]
                row = {"dtype": str(dtype), "n": n}
                timed_row("mul", rows, row, lambda src=src, dst=dst: torch.mul(src, 2.0, out=dst), 20)
            del src_all, dst_all
        result["elementwise_mul"] = rows
        save()

    # --- the kernel-duration floor against grid size -----------------------------------------
    @triton.jit
    def store_kernel(x_ptr):
        tl.store(x_ptr + tl.program_id(0), 1.0)

    def grid_floor_section() -> None:
        rows = []
        buf = torch.zeros(2**22, device=dev)
        for blocks in (1, 132, 264, 1056, 4224, 16896, 67584, 270336):
            for warps in (1, 4):

                def fn(blocks=blocks, warps=warps):
                    store_kernel[(blocks,)](buf, num_warps=warps)

                row = {"blocks": blocks, "num_warps": warps}
                timed_row("grid", rows, row, fn, 30)
        result["grid_floor"] = rows
        save()

    # --- torch eager norms at the shapes of published points --------------------------------
    def row_op(op: str, x, w) -> None:
        """One eager row kernel: softmax, layer_norm (weight as bias too) or rms_norm over x's rows."""
        import torch.nn.functional as F

        if op == "softmax":
            torch.softmax(x, -1)
        elif op == "layernorm":
            F.layer_norm(x, (x.shape[-1],), w, w)
        else:
            F.rms_norm(x, (x.shape[-1],), w)

    def norms_section() -> None:

        shapes = [
            ("softmax", torch.float16, 32, 128),
            ("softmax", torch.float16, 256, 1024),
            ("softmax", torch.float16, 2048, 2048),
            ("softmax", torch.float16, 4096, 4096),
            ("softmax", torch.float16, 1024, 50257),
            ("softmax", torch.float32, 4096, 12288),
            ("softmax", torch.float32, 4096, 768),
            ("softmax", torch.float32, 4096, 4096),
            ("layernorm", torch.bfloat16, 192, 3072),
            ("layernorm", torch.bfloat16, 4096, 3072),
            ("layernorm", torch.bfloat16, 8308, 3072),
            ("layernorm", torch.bfloat16, 4096, 6144),
            ("layernorm", torch.float32, 4096, 4096),
            ("rmsnorm", torch.bfloat16, 128, 4096),
            ("rmsnorm", torch.bfloat16, 2048, 4096),
            ("rmsnorm", torch.bfloat16, 4096, 8192),
            ("rmsnorm", torch.bfloat16, 8192, 4096),
        ]
        rows = []
        for op, dtype, r, c in shapes:
            x = torch.randn(r, c, device=dev).to(dtype)
            w = torch.randn(c, device=dev).to(dtype)
            fn = lambda op=op, x=x, w=w: row_op(op, x, w)  # noqa: E731
            row = {"op": op, "dtype": str(dtype), "rows": r, "cols": c}
            timed_row("norm", rows, row, fn, 20)
        result["norms"] = rows
        save()

    # --- what a cold call pays: kernel code, data, or both ------------------------------------
    def cold_section() -> None:
        """A 1-row LayerNorm / softmax timed four ways: after an L2 flush (cold); after the flush
        and one run on other buffers (code warm, data cold); after the flush and reads of its
        own buffers by other kernels (data warm, code cold); back to back (warm)."""
        out = []
        for op, cols, dtype, key in (
            ("layernorm", 3072, torch.bfloat16, "layer_norm"),
            ("softmax", 1024, torch.float16, "softmax"),
            ("softmax", 4096, torch.float16, "softmax"),
        ):
            for row in cold_variants(op, cols, dtype, key):
                out.append(row)
                print("cold", json.dumps(row), flush=True)
        result["cold"] = out
        save()

    def cold_variants(op: str, cols: int, dtype, key: str) -> list[dict]:
        from torch.profiler import ProfilerActivity, profile

        xa, wa = torch.randn(1, cols, device=dev).to(dtype), torch.randn(cols, device=dev).to(dtype)
        xb, wb = torch.randn(1, cols, device=dev).to(dtype), torch.randn(cols, device=dev).to(dtype)

        variants = {
            "cold": (lambda: flush.zero_(), 1),
            "code_warm_data_cold": (lambda: (flush.zero_(), row_op(op, xb, wb)), 2),
            "data_warm_code_cold": (lambda: (flush.zero_(), xa.float().sum(), wa.float().sum()), 1),
            "warm": (lambda: row_op(op, xa, wa), 2),
        }
        rows = []
        for name, (prep, per_iter) in variants.items():
            for _ in range(5):
                prep()
                row_op(op, xa, wa)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(30):
                    prep()
                    row_op(op, xa, wa)
                torch.cuda.synchronize()
            found = sorted(
                (e.start_ns(), e.duration_ns() / 1e3)
                for e in prof.profiler.kineto_results.events()
                if "cuda" in str(e.device_type()).lower() and key in e.name().lower()
            )
            mine = [d for i, (_, d) in enumerate(found) if i % per_iter == per_iter - 1]
            rows.append(
                {
                    "op": op,
                    "cols": cols,
                    "variant": name,
                    "kernel_us": statistics.median(mine),
                    "n": len(mine),
                }
            )
        return rows

    # --- row kernels against the number of rows (one row per block: the per-row chain) ---------
    def rows_section() -> None:
        out = []
        for op, dtype, cols in (
            ("layernorm", torch.bfloat16, 3072),
            ("rmsnorm", torch.bfloat16, 4096),
            ("softmax", torch.float16, 1024),
            ("softmax", torch.float16, 4096),
        ):
            for r in (1, 8, 33, 132, 264, 528, 1056, 2112, 4224, 8448, 16896):
                x = torch.randn(r, cols, device=dev).to(dtype)
                w = torch.randn(cols, device=dev).to(dtype)
                fn = lambda op=op, x=x, w=w: row_op(op, x, w)  # noqa: E731
                row = {"op": op, "dtype": str(dtype), "rows": r, "cols": cols}
                timed_row("rows", out, row, fn, 20, names=False)
        result["rows"] = out
        save()

    # --- flash attention forward through SDPA (FA2 kernels in PyTorch) ----------------------
    def attention_section() -> None:
        shapes = [
            (1, 16, 4096, 128, True),
            (1, 16, 4096, 128, False),
            (4, 16, 2048, 64, False),
            (1, 8, 16384, 64, False),
            (16, 16, 1024, 128, False),
            (8, 32, 2048, 128, True),
            (1, 32, 1024, 64, False),
            (2, 32, 8192, 128, True),
        ]
        result["attention_fwd"] = attention_rows(shapes, ("flash", "cudnn"))
        save()

    def attention_seq_section() -> None:
        """cuDNN's Hopper attention against the sequence length at 64 (batch x heads) problems:
        where the time stops following the FLOPs (short sequences: few KV blocks per tile)."""
        shapes = [(2, 32, n, d, c) for d in (128, 64) for c in (False, True) for n in (128, 256, 512, 1024, 2048, 4096)]
        result["attention_seq"] = attention_rows(shapes, ("cudnn",))
        save()

    def attention_rows(shapes: list, backends: tuple) -> list[dict]:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        known = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
        rows: list[dict] = []
        for (b, h, n, d, causal), bname, phase in [
            (s, be, ph) for s in shapes for be in backends for ph in ("fwd", "bwd")
        ]:
            if bname == "flash" and phase == "bwd":
                continue  # the flash forward rows are the earlier runs' baseline
            backend = known[bname]
            q, k, v = (
                torch.randn(b, h, n, d, device=dev, dtype=torch.bfloat16, requires_grad=phase == "bwd")
                for _ in range(3)
            )
            try:
                with sdpa_kernel(backend):
                    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            except RuntimeError as exc:  # a backend that does not take the shape
                print("attn skipped", bname, phase, (b, h, n, d, causal), repr(exc)[:120], flush=True)
                continue
            if phase == "fwd":

                def fn(q=q, k=k, v=v, causal=causal, backend=backend):
                    with sdpa_kernel(backend):
                        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

            else:
                grad = torch.randn_like(out)

                def fn(out=out, q=q, k=k, v=v, grad=grad):
                    torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)

            row = {"batch": b, "heads": h, "seq": n, "head_dim": d, "causal": causal}
            row.update({"backend": bname, "phase": phase})
            timed_row("attn", rows, row, fn, 10, names=False)
        return rows

    # --- cuBLAS bf16 GEMMs from small to large -----------------------------------------------
    def gemm_section() -> None:
        shapes = [(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192)]
        shapes += [(16, 8192, 8192), (128, 8192, 8192), (8192, 8192, 256), (4096, 4096, 16384)]
        shapes += [(1, 4096, 4096), (32, 4096, 14336), (512, 4096, 4096), (3072, 3072, 3072)]
        shapes += [(4096, 14336, 4096), (8192, 1024, 4096), (2048, 2048, 8192), (6144, 6144, 6144)]
        result["gemm"] = gemm_rows([(s, torch.bfloat16) for s in shapes] + [((8192,) * 3, torch.float16)])
        save()

    def gemm_k_section() -> None:
        """cuBLAS BF16 GEMMs of a fixed M x N over K from 64 to 4096: where a tile's main loop has
        few K steps, its pipeline fill and drain weigh (docs/models-tiled.md)."""
        shapes = [(mn, mn, k) for mn in (4096, 8192) for k in (64, 128, 256, 512, 1024, 2048, 4096)]
        result["gemm_k"] = gemm_rows([(s, torch.bfloat16) for s in shapes])
        save()

    def gemm_rows(shapes: list) -> list[dict]:
        rows: list[dict] = []
        for (m, n, k), dtype in shapes:
            a = torch.randn(m, k, device=dev, dtype=dtype)
            bt = torch.randn(n, k, device=dev, dtype=dtype)
            row = {"m": m, "n": n, "k": k, "dtype": str(dtype)}
            timed_row("gemm", rows, row, lambda a=a, bt=bt: a @ bt.t(), 10)
        return rows

    # --- FP8 GEMMs through torch._scaled_mm (cuBLASLt), per-tensor and per-row scales -----------
    def fp8_section() -> None:
        shapes = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (16, 8192, 8192)]
        shapes += [(128, 8192, 8192), (4096, 14336, 4096)]
        rows = []
        for (m, n, k), scaling in [(sh, sc) for sh in shapes for sc in ("tensor", "row")]:
            a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
            if scaling == "tensor":
                sa, sb = torch.ones((), device=dev), torch.ones((), device=dev)
            else:
                sa, sb = torch.ones(m, 1, device=dev), torch.ones(1, n, device=dev)

            def fn(a=a, b=b, sa=sa, sb=sb):
                torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

            try:
                fn()
            except RuntimeError as exc:
                print("fp8 skipped", (m, n, k), scaling, repr(exc)[:160], flush=True)
                continue
            row = {"m": m, "n": n, "k": k, "scaling": scaling}
            timed_row("fp8", rows, row, fn, 10)
        result["gemm_fp8"] = rows
        save()

    # --- FP8 GEMMs with DeepSeek-style block scales (1x128 activations, 128x128 weights) -------
    def fp8_block_section() -> None:
        """The same _scaled_mm with per-tensor scales and with block scales, shape by shape: what
        the library pays for promoting its fp32 partial sums once per 128-deep K block."""
        shapes = [(128, 7168, 4096), (1024, 7168, 4096), (4096, 7168, 4096), (8192, 8192, 8192)]
        shapes += [(16384, 4608, 7168), (64, 7168, 2048)]
        rows = []
        for m, n, k in shapes:
            a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
            sa_row, sb_blk = torch.rand(m, k // 128, device=dev) + 0.5, torch.rand(k // 128, n // 128, device=dev) + 0.5
            # cuBLASLt wants some scale tensors outer-dimension-major: try the layouts in turn
            layouts = {
                "tensor": (torch.ones((), device=dev), torch.ones((), device=dev)),
                "block": (sa_row, sb_blk),
                "block_a_mmajor": (sa_row.t().contiguous().t(), sb_blk),
                "block_both_t": (sa_row.t().contiguous().t(), sb_blk.t().contiguous().t()),
            }
            done_block = False
            for label, (sa, sb) in layouts.items():
                if done_block and label.startswith("block"):
                    continue

                def fn(a=a, b=b, sa=sa, sb=sb):
                    torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

                try:
                    fn()
                except (RuntimeError, ValueError) as exc:
                    print("fp8_block skipped", (m, n, k), label, repr(exc)[:200], flush=True)
                    continue
                done_block = done_block or label.startswith("block")
                row = {"m": m, "n": n, "k": k, "scaling": "tensor" if label == "tensor" else "block", "layout": label}
                timed_row("fp8_block", rows, row, fn, 10)
        result["gemm_fp8_block"] = rows
        save()

    # --- HBM reads in a GEMM's tile pattern against linear streaming -------------------------
    @triton.jit
    def panel_read_kernel(b_ptr, out_ptr, n_rows, k_len, k_split, BN: tl.constexpr, BK: tl.constexpr):
        # program (i, j) walks rows [i BN, (i+1) BN) over K columns [j k_split, (j+1) k_split) in
        # BN x BK tiles, as a GEMM tile streams its B panel (split-K: j > 0)
        rows = tl.program_id(0) * BN + tl.arange(0, BN)
        k0 = tl.program_id(1) * k_split
        acc = tl.zeros([BN, BK], dtype=tl.float32)
        for kk in range(0, k_split, BK):
            cols = k0 + kk + tl.arange(0, BK)
            acc += tl.load(b_ptr + rows[:, None] * k_len + cols[None, :]).to(tl.float32)
        tl.store(out_ptr + tl.program_id(1) * n_rows + rows, tl.sum(acc, axis=1))

    @triton.jit
    def linear_read_kernel(x_ptr, out_ptr, chunk, BLOCK: tl.constexpr):
        # program p reads elements [p chunk, (p+1) chunk) in steps of BLOCK
        base = tl.program_id(0).to(tl.int64) * chunk
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, chunk, BLOCK):
            acc += tl.load(x_ptr + base + i + tl.arange(0, BLOCK)).to(tl.float32)
        tl.store(out_ptr + tl.program_id(0), tl.sum(acc, axis=0))

    def panel_rows(n: int, k: int, rows: list, tiles: bool = True) -> None:
        """The linear, front, tiled (where ``tiles``) and cuBLAS reads of one n x k bf16 matrix
        (K contiguous)."""
        bt = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        out = torch.empty(max(16 * n, 1024 * 2048), device=dev)
        base = {"n": n, "k": k, "bytes": n * k * 2}
        block = 4096
        for programs in (128, 512, 2048):  # powers of two: whole chunks of these sizes
            chunk = n * k // programs
            row = {"pattern": "linear", **base, "programs": programs, "block": block}

            def lin(chunk=chunk, programs=programs):
                linear_read_kernel[(programs,)](bt, out, chunk, BLOCK=block, num_warps=4, num_stages=4)

            timed_row("panel", rows, row, lin, 10, names=False)
        flat = bt.view(torch.float32).view(-1)  # the same bytes as fp32, for read_kernel
        fblock = 2048
        nchunks = flat.numel() // fblock
        for programs in (512, 1024):
            # a sweeping front: program p reads chunks p, p + P, p + 2P, ... (once each)
            iters = nchunks // programs
            row = {"pattern": "front", **base, "programs": programs, "block": fblock * 4 // 2}

            def front(programs=programs, iters=iters):
                read_kernel[(programs,)](flat, out, nchunks, iters, BLOCK=fblock, CG=False, num_warps=8)

            timed_row("panel", rows, row, front, 10, names=False)
        for m in (1, 16):
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            timed_row("panel", rows, {"pattern": "cublas", **base, "m": m}, lambda a=a: a @ bt.t(), 10)
        if not tiles:
            return
        for bn in (16, 64, 128):
            for bk in (64, 128, 256):
                for split in (1, 4):
                    row = {"pattern": "panel", **base, "bn": bn, "bk": bk, "split": split, "programs": n // bn * split}

                    def pan(bn=bn, bk=bk, split=split):
                        grid = (n // bn, split)
                        panel_read_kernel[grid](bt, out, n, k, k // split, BN=bn, BK=bk, num_warps=4, num_stages=4)

                    timed_row("panel", rows, row, pan, 10, names=False)

    def panel_section() -> None:
        rows: list[dict] = []
        for n, k in ((8192, 8192), (4096, 4096)):
            panel_rows(n, k, rows)
            torch.cuda.empty_cache()
        panel_rows(32768, 16384, rows, tiles=False)  # 1 GiB: the size effect apart from the pattern
        result["panel"] = rows
        save()

    # --- what a write flush leaves behind: dirty L2 lines the next kernel writes back ---------
    def dirty_section() -> None:
        rows: list[dict] = []
        flush_out = torch.empty(1024 * 2048, device=dev)
        nchunks = flush.numel() // 2048

        def read_flush() -> None:  # every line of the 256 MiB buffer read once: a clean L2
            read_kernel[(1024,)](flush, flush_out, nchunks, nchunks // 1024, BLOCK=2048, CG=False, num_warps=8)

        for mib in (4, 16, 32, 64, 128, 256, 1024):
            x = torch.randn(mib * 2**20 // 2, device=dev, dtype=torch.bfloat16)
            out = torch.empty(512, device=dev)
            y = torch.empty_like(x)
            chunk = x.numel() // 512

            def read(x=x, out=out, chunk=chunk):
                linear_read_kernel[(512,)](x, out, chunk, BLOCK=4096, num_warps=4, num_stages=4)

            def mul(x=x, y=y):  # reads and writes the same bytes: out = 2 x
                torch.mul(x, 2.0, out=y)

            for kernel, fn, name_part in (("read", read, "linear_read"), ("mul", mul, "elementwise")):
                for _ in range(3):
                    fn()
                row = {"kernel": kernel, "bytes": mib * 2**20}
                for name, between in (("write_flush", flush.zero_), ("read_flush", read_flush), ("none", None)):
                    durs = kernel_durations_us(fn, 10, between=between)
                    mine = [d for d, nm in zip(durs, last_names, strict=True) if name_part in nm]
                    row[name + "_us"] = statistics.median(mine)
                rows.append(row)
                print("dirty", json.dumps(row), flush=True)
        result["dirty"] = rows
        save()

    all_sections = {
        "scope": scope_section,
        "latency": latency_section,
        "levels": levels_section,
        "copy": copy_section,
        "elementwise": elementwise_section,
        "grid": grid_floor_section,
        "norms": norms_section,
        "rows": rows_section,
        "cold": cold_section,
        "attention": attention_section,
        "attention_seq": attention_seq_section,
        "gemm": gemm_section,
        "gemm_k": gemm_k_section,
        "fp8": fp8_section,
        "fp8_block": fp8_block_section,
        "panel": panel_section,
        "dirty": dirty_section,
    }
    chosen = [all_sections[n] for n in (wanted or list(all_sections))]
    for section in chosen:
        try:
            section()
        except Exception as exc:  # keep the other sections' numbers
            result.setdefault("errors", []).append(f"{section.__name__}: {exc!r}")
            print("FAILED", section.__name__, repr(exc), flush=True)
            save()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cuda_microbench.json", sys.argv[2:])
