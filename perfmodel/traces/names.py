"""Kernel families from kernel names, for kernels without a launching op with shapes.

- hipBLASLt / Tensile ``Cijk_<layout>_<types>_..._MT{M}x{N}x{K}_MI...``: a GEMM; the macro tile is
  in the name, the problem is not (the grid gives the tile count only up to split-K/stream-K).
- CK / aiter / AOTriton attention (``attn_fwd``, ``FmhaFwdKernel``, ``FmhaBatchPrefill...``,
  ``mha_*``, ``paged_attention_*``, ``flash_fwd``), cuBLAS/CUTLASS GEMMs (``sm90_xmma_gemm``,
  ``cutlass``, ``nvjet``), Triton (``triton_{poi,red,per,tem}_fused_...``: pointwise, reduction,
  persistent reduction, template), PyTorch's native kernels, RCCL/NCCL, MIOpen convolutions.

`family(name)` -> (family, detail) or (None, ""). A family says which kernel model would apply;
a case (shapes) is still needed to predict.
"""

from __future__ import annotations

import functools
import re

MACRO_TILE = re.compile(r"_MT(\d+)x(\d+)x(\d+)")

PATTERNS: list[tuple[str, re.Pattern]] = [
    # MIOpen's implicit-GEMM convolutions (igemm_fwd/bwd/wrw_gtc...) before the GEMM names they contain
    ("conv2d", re.compile(r"^igemm_(fwd|bwd|wrw)_")),
    ("gemm", re.compile(r"^Cijk_|_gemm|gemm_|xmma_gemm|cutlass.*gemm|^nvjet|Gemm|wvSplitK|LLGemm|hipblaslt|rocblas_gemm", re.I)),
    ("attention", re.compile(r"attn_fwd|attn_bwd|fmha|flash_fwd|flash_bwd|mha_|paged_attention|FmhaBatchPrefill|flash_attn|_attention_", re.I)),
    ("collective", re.compile(r"nccl|rccl|allreduce|all_reduce|cross_device_reduce", re.I)),
    # the norms before the convolutions: MIOpen names its batch-norm kernels MIOpenBatchNorm...
    ("rmsnorm", re.compile(r"rms_?norm|rmsnorm", re.I)),
    ("batchnorm", re.compile(r"batch_?norm|BatchNorm", re.I)),
    ("layernorm", re.compile(r"layer_?norm|LayerNorm|RowwiseMoments|GroupNorm|group_norm|norm_kernel", re.I)),
    ("softmax", re.compile(r"softmax", re.I)),
    # "conv" but not "Convert" (vLLM's `_typeConvert` in a norm kernel's return type)
    ("conv2d", re.compile(r"igemm_|conv(?!ert)|MIOpen|naive_conv|winograd|implicit_gemm", re.I)),
    ("moe", re.compile(r"moe|topk_gating|fused_experts", re.I)),
    ("reduction", re.compile(r"reduce_kernel|triton_red_|triton_per_|reduction|_reduce|cub::|DeviceReduce", re.I)),
    ("transpose", re.compile(r"transpose", re.I)),
    ("elementwise", re.compile(r"rotary|act_and_mul|reshape_and_cache|store_cache|store_kvcache", re.I)),
    ("gather", re.compile(r"indexSelect|index_select|gather|embedding|index_elementwise|scatter", re.I)),
    ("elementwise", re.compile(r"elementwise|triton_poi_|vectorized|unrolled|CatArray|cat_|fill|copy|rotary|act_and_mul|silu|gelu|reshape_and_cache|pointwise|Memset", re.I)),
    ("gemm", re.compile(r"triton_tem_|mm_", re.I)),
]


@functools.lru_cache(maxsize=4096)
def family(name: str) -> tuple[str | None, str]:
    for fam, pat in PATTERNS:
        if pat.search(name):
            detail = ""
            if fam == "gemm":
                m = MACRO_TILE.search(name)
                if m:
                    detail = "macro tile {}x{}x{}".format(*m.groups())
            return fam, detail
    return None, ""
