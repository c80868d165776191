"""2-D convolution as an implicit GEMM (NHWC activations, KRSC filters, no im2col buffer).

Output size P = floor((h + 2 pad - r) / stride) + 1, Q = floor((w + 2 pad - s) / stride) + 1.
GEMM view: M = n*P*Q output pixels, N = k filters, K = c*r*s. FLOPs 2*M*N*K on the matrix pipe.
Bytes: the shared GEMM tile model (`gemm_tiling.gemm_work`) with A = the virtual im2col matrix: the
tiles request M*K elements of it per column of tiles (each input element r*s/stride^2 times,
through L1 and L2), but only the n*c*h*w distinct input elements count as compulsory and as
the per-XCD/MALL footprint, so device memory sees the input once when it fits.

``layout``: the activations' memory format. PyTorch's default is NCHW (contiguous); the
implicit-GEMM kernels of MIOpen and cuDNN want NHWC activations and KRSC filters, so for NCHW
tensors the library dispatches a transpose of the input and of the filters before the GEMM
kernel and one of the output after it (MIOpen: ``batched_transpose_*`` around
``igemm_fwd_gtcx3_nhwc_*``; cuDNN: ``nchwToNhwcKernel`` / ``nhwcToNchwKernel`` around a CUTLASS
``*_nhwc_*`` fprop kernel; both seen per call in the TraceLens MI300X ResNet and H100 ViT
traces). Each transpose is the `transpose` model's kernel (its tensor read and written once, its
own dispatch) on the same stream, so its time adds to the GEMM's (`Work.serial`).
``layout=nhwc`` (channels_last) is the GEMM kernel alone.

Split-K on AMD: MIOpen's NHWC implicit-GEMM kernels (``igemm_fwd_gtcx3_nhwc_*``) split the GEMM's
K by adding their partial sums into the output with atomics (``gemm_k_global_split``), so the
invoker first zeroes the output (``SetTensor``: the ``SubTensorOpWithScalar1d`` kernel) and, for
bf16, accumulates into an fp32 workspace that a ``CastTensor`` kernel then converts
(``SubTensorOpWithCastTensor1d``): MIOpen src/conv/invokers/impl_gemm_dynamic.cpp
(``need_set_zero``, ``need_cast``) and the workspace of
src/solver/conv/conv_asm_implicit_gemm_gtc_fwd_nhwc.cpp ("The intermediate output of the 1st
kernel is FP32, when using FP32 atomic"). Where the tile model splits K, those kernels are added
one after another like the transposes. (The TraceLens MI300X ResNet traces show the zero fill
before every split igemm kernel; one of the two recordings, from another MIOpen version, has no
cast kernel.) Where K is not split, the same traces run MIOpen's composable-kernel conv
(``ck::tensor_operation`` kernels) with four transposes per call: the input, the filters, the
output tensor into NHWC before the conv kernel, and the output back after it
(`_transpose_where`). Those traces are also validation points, so the conv2d points of
TraceLens's MI300X ResNet recordings are not independent of this structure.
"""

from __future__ import annotations

import numpy as np

from perfmodel import dtypes
from perfmodel.errors import InputError
from perfmodel.models import elementwise, fewer_rows, gemm_tiling, transpose
from perfmodel.models.registry import Param, floats, register
from perfmodel.work import Work


def output_size(h, w, r, s, stride, pad):
    """(P, Q): output height and width."""
    p_ = np.floor((h + 2.0 * pad - r) / stride) + 1.0
    q_ = np.floor((w + 2.0 * pad - s) / stride) + 1.0
    return p_, q_


@register(
    "conv2d",
    params=[
        Param("n", help="batch"),
        Param("c", help="input channels"),
        Param("h", help="input height"),
        Param("w", help="input width"),
        Param("k", help="output channels (filters)"),
        Param("r", help="filter height"),
        Param("s", help="filter width"),
        Param("stride", default=1),
        Param("pad", default=0, minimum=0),
        Param("layout", str, "nchw", choices=("nchw", "nhwc"), help="activation layout: nchw (PyTorch's default) adds the library's NCHW<->NHWC transposes, 3 kernels (4 on AMD where K is not split)"),
        Param("phase", str, "fwd", choices=("fwd", "bwd"), help="bwd: the input's gradient (dgrad) and the filters' (wgrad), two implicit GEMMs one after another"),
        Param("input_grad", bool, True, help="bwd: the input's gradient too (false for a network's first layer: wgrad alone)"),
    ],
    doc="2-D convolution as implicit GEMM (M = n*P*Q, N = k, K = c*r*s) on the GEMM tile model",
    default_dtype="bf16",
)
def conv2d(p: dict, arch, dtype: str) -> Work:
    work = _conv2d(p, arch, dtype)
    images = fewer_rows.setter("n")
    fewer_rows.add_floor(work, p, p["n"], lambda sub: _conv2d(sub, arch, dtype), images, fewer_rows.BY_FOUR, np.inf)
    return work


def _conv2d(p: dict, arch, dtype: str) -> Work:
    n, c, h, w, k, r, s = floats(p, "n", "c", "h", "w", "k", "r", "s")
    stride = np.asarray(p.get("stride", 1), dtype=float)
    pad = np.asarray(p.get("pad", 0), dtype=float)
    pp, qq = output_size(h, w, r, s, stride, pad)
    if np.any(pp < 1) or np.any(qq < 1):
        raise InputError(
            "expected a filter no larger than the padded input (r <= h + 2 pad, s <= w + 2 pad)", key="r"
        )
    if p.get("phase", "fwd") == "bwd":
        return _conv2d_backward(p, arch, dtype, (n, c, h, w, k, r, s), stride, pp, qq)
    m = n * pp * qq
    kk = c * r * s
    elem = dtypes.size(dtype)
    work, launch = gemm_tiling.gemm_work(arch, dtype, m, k, kk, 1.0, a_unique=n * c * h * w * elem)
    if p.get("layout", "nchw") == "nchw":
        # a 1x1 filter's KCRS layout is already KRSC: no filter transpose, and MIOpen runs such a
        # convolution as a GEMM between the input and output transposes alone (TraceLens MI300X
        # ResNet: transpose_NCHW2CNHW, a Tensile GEMM or a split igemm, transpose_CNHW2NCHW)
        pointwise = (np.asarray(r) == 1) & (np.asarray(s) == 1)
        # input (n*c rows of h*w), filters (k rows of c*r*s), output (n*k rows of P*Q)
        for rows, cols, where in ((n * c, h * w, True), (k, c * r * s, ~pointwise), (n * k, pp * qq, True)):
            work.serial.append(_transpose_where(arch, dtype, rows, cols, where))
        work.notes.append("conv2d: NCHW layout: input and filter transposes before the GEMM kernel, output transpose after (3 more kernels, timed one after another; no filter transpose for a 1x1 filter)")
        if arch.vendor == "AMD":
            ck = (np.asarray(launch.split_k, dtype=float) <= 1.0) & ~pointwise
            work.serial.append(_transpose_where(arch, dtype, n * k, pp * qq, ck))
            work.note("conv2d: MIOpen's composable-kernel path (K not split) also transposes the output to NHWC before the conv kernel: 4 transposes", ck)
    if arch.vendor == "AMD":
        work.serial.extend(_atomic_split_k_kernels(arch, dtype, n * k * pp * qq, launch))
    work.launch = launch
    return work


def _conv2d_backward(p: dict, arch, dtype: str, dims, stride, pp, qq) -> Work:
    """The two implicit GEMMs of a convolution's backward pass, one after another (MIOpen's
    ``igemm_bwd_*`` then ``igemm_wrw_*`` in the TraceLens MI300X ResNet-18 training trace):

    - dgrad: dx [n h w, c] = im2col(dy) [n h w, k r s / stride^2] x filters [k r s / stride^2, c]
      (each input pixel gathers the output pixels whose windows cover it: r s / stride^2 of them
      on average), A's distinct bytes the output gradient's;
    - wgrad: dW^T [c r s, k] = im2col(x)^T [c r s, n P Q] x dy [n P Q, k], A's distinct bytes
      the input's.
    Each has the forward's 2 n P Q k c r s FLOPs. ``input_grad=false`` (a first layer) runs
    wgrad alone. NCHW adds the transposes of dy and x into NHWC, of dx back, and of the filters
    and their gradient where larger than 1x1; on AMD, split-K GEMMs their zero-fill and cast
    kernels, as forward."""
    n, c, h, w, k, r, s = dims
    elem = dtypes.size(dtype)
    dgrad_on = bool(p.get("input_grad", True))
    wgrad, wl = gemm_tiling.gemm_work(arch, dtype, c * r * s, k, n * pp * qq, 1.0, a_unique=n * c * h * w * elem)
    wgrad.launch = wl
    kernels = [wgrad]
    if dgrad_on:
        dgrad, dl = gemm_tiling.gemm_work(arch, dtype, n * h * w, c, k * r * s / stride**2, 1.0, a_unique=n * k * pp * qq * elem)
        dgrad.launch = dl
        kernels.insert(0, dgrad)
    work, rest = kernels[0], kernels[1:]
    if p.get("layout", "nchw") == "nchw":
        pointwise = (np.asarray(r) == 1) & (np.asarray(s) == 1)
        for rows, cols, where in ((n * k, pp * qq, True), (n * c, h * w, True), (n * c, h * w, dgrad_on),
                                  (k, c * r * s, ~pointwise & dgrad_on), (k, c * r * s, ~pointwise)):
            rest.append(_transpose_where(arch, dtype, rows, cols, where))
        work.notes.append("conv2d bwd: NCHW layout: dy and x transposed to NHWC, dx back, the filters and their gradient where larger than 1x1")
    if arch.vendor == "AMD":
        for kern, outputs in zip(kernels, ([n * c * h * w] if dgrad_on else []) + [k * c * r * s], strict=True):
            rest.extend(_atomic_split_k_kernels(arch, dtype, outputs, kern.launch))
    work.serial.extend(rest)
    work.notes.append(f"conv2d bwd: {'dgrad then wgrad' if dgrad_on else 'wgrad alone (no input gradient)'}, implicit GEMMs on their own grids, one after another")
    return work


def _transpose_where(arch, dtype: str, rows, cols, where) -> Work:
    """A layout transpose the library dispatches only ``where`` it holds (the filters of a
    filter larger than 1x1; the output-in transpose of MIOpen's composable-kernel path, K not
    split): elsewhere it moves no bytes and costs no launch."""
    t = transpose.transpose({"rows": np.where(where, rows, 0.0), "cols": cols}, arch, dtype)
    t.launch.kernels = np.where(where, 1.0, 0.0)
    return t


def _atomic_split_k_kernels(arch, dtype: str, outputs, launch) -> list[Work]:
    """MIOpen's kernels around a split-K igemm: zero the accumulator (the output, or for bf16 an
    fp32 workspace), then for bf16 cast the workspace into the output. Where K is not split they
    are not dispatched (no bytes, no launch)."""
    split = np.asarray(launch.split_k, dtype=float) > 1.0
    if not np.any(split):
        return []
    acc = "fp32" if dtype == "bf16" else dtype
    kernels = [elementwise.helper_kernel(arch, acc, split, outputs, reads=0.0, writes=1.0)]
    if dtype == "bf16":  # read fp32, write bf16: half an fp32 array
        kernels.append(elementwise.helper_kernel(arch, acc, split, outputs, reads=1.0, writes=0.5))
    return kernels
