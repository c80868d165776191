"""Streaming kernel models: stream, elementwise, reduction, transpose, softmax, norms, stencil.

Expected values are derived by hand in the comments from the model rules (docs/models-streaming.md)
and the MI300X / MI250X specs: MI300X 304 CUs, 8 XCDs, L2 4 MiB per XCD (32 MiB device), MALL
256 MiB, 32 wave slots per CU, 64 KiB LDS per workgroup; MI250X (one GCD) 110 CUs, L2 8 MiB,
no MALL.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_runs import run_model as run

from perfmodel.arch import load_arch
from perfmodel.errors import InputError
from perfmodel.models.registry import convert_param, get_model

MiB = 2**20
GiB = 2**30
FAMILIES = ["stream", "elementwise", "reduction", "transpose", "softmax", "layernorm", "rmsnorm", "stencil"]


@pytest.fixture(scope="module")
def mi300x():
    return load_arch("mi300x")


@pytest.fixture(scope="module")
def mi250x():
    return load_arch("mi250x")




def val(d, key):
    return float(np.asarray(d.get(key, 0.0)).reshape(-1)[0])


# --- stream ------------------------------------------------------------------------------


def test_stream_triad_hbm(mi300x):
    # n = 2^28 fp64: b, c read (2 x 8n), a written (8n); working set 24n = 6 GiB >> 256 MiB MALL,
    # so every level sees 3 x 8 x n; FLOPs: one FMA per element = 2n on valu:fp64.
    n = 2**28
    w = run("stream", mi300x, "fp64", op="triad", n=n)
    assert val(w.flops, "valu:fp64") == 2 * n
    assert val(w.bytes_read, "hbm") == 2 * 8 * n
    assert val(w.bytes_write, "hbm") == 8 * n  # no read-for-ownership
    assert val(w.bytes, "hbm") == 3 * 8 * n
    assert val(w.bytes, "l2") == 3 * 8 * n
    assert val(w.bytes, "mall") == 3 * 8 * n


@pytest.mark.parametrize(
    "op,arrays,fpe",
    [("copy", 2, 0), ("mul", 2, 1), ("scale", 2, 1), ("add", 3, 1), ("triad", 3, 2)],
)
def test_stream_ops(mi300x, op, arrays, fpe):
    n = 2**28
    w = run("stream", mi300x, "fp64", op=op, n=n)
    assert val(w.bytes, "hbm") == arrays * 8 * n
    assert val(w.flops, "valu:fp64") == fpe * n
    # BabelStream HIP: 1024 work-items, one element each
    assert float(np.asarray(w.launch.grid).reshape(-1)[0]) == n / 1024
    assert w.launch.workgroup_size == 1024


def test_stream_dot(mi300x):
    # dot reads a and b (16n), writes one fp64 partial per workgroup: grid = 4 x 304 CUs = 1216
    n = 2**28
    w = run("stream", mi300x, "fp64", op="dot", n=n)
    assert val(w.bytes_read, "hbm") == 16 * n
    assert val(w.bytes_write, "hbm") == 1216 * 8
    assert val(w.flops, "valu:fp64") == 2 * n
    assert float(np.asarray(w.launch.grid).reshape(-1)[0]) == 1216


def test_stream_small_fits_l2(mi300x, warm):
    # n = 2^16 fp64 triad: working set 24 x 2^16 = 1.5 MiB <= 32 MiB of L2: warm steady state
    n = 2**16
    w = run("stream", mi300x, "fp64", op="triad", n=n)
    assert val(w.bytes, "hbm") == 0
    assert val(w.bytes, "mall") == 0
    assert val(w.bytes, "l2") == 24 * n
    assert val(w.bytes, "l1") == 24 * n


def test_stream_mid_fits_mall(mi300x, warm):
    # n = 2^22 fp64 copy: 64 MiB > 32 MiB L2, <= 256 MiB MALL: served from the MALL
    n = 2**22
    w = run("stream", mi300x, "fp64", op="copy", n=n)
    assert val(w.bytes, "hbm") == 0
    assert val(w.bytes, "mall") == 16 * n


def test_stream_default_dtype_fp64():
    assert get_model("stream").default_dtype == "fp64"


# --- elementwise -------------------------------------------------------------------------


def test_elementwise(mi300x):
    # n = 2^30 fp16, 2 reads + 1 write: 2 x 2n read, 2n written (6 GiB > MALL); 3 FLOPs/element
    n = 2**30
    w = run("elementwise", mi300x, "fp16", n=n, reads=2, writes=1, flops_per_element=3)
    assert val(w.bytes_read, "hbm") == 4 * n
    assert val(w.bytes_write, "hbm") == 2 * n
    assert val(w.flops, "valu:fp16") == 3 * n
    # 256 work-items x 8 fp16 (16 B) each
    assert float(np.asarray(w.launch.grid).reshape(-1)[0]) == n / (256 * 8)


def test_elementwise_fp8_maths_in_fp32(mi300x):
    w = run("elementwise", mi300x, "fp8", n=2**20)
    assert val(w.flops, "valu:fp32") == 2**20


def test_elementwise_zero_reads(mi300x):
    w = run("elementwise", mi300x, "fp32", n=2**30, reads=0, writes=1, flops_per_element=0)
    assert val(w.bytes_read, "hbm") == 0
    assert val(w.bytes_write, "hbm") == 4 * 2**30


# --- reduction ---------------------------------------------------------------------------


def test_reduction(mi300x):
    # n = 2^30 fp32: 256 work-items x 4 fp32 x unroll 4 = 4096 elements per workgroup step;
    # ceil(2^30/4096) = 262144 capped at resident workgroups 304 x (32 / 4 waves) = 2432.
    # reads: 4n + 2432 x 4 (partials in stage 2); writes: 2432 x 4 + 4; FLOPs n + 2432 (fp32)
    n = 2**30
    w = run("reduction", mi300x, "fp32", n=n)
    assert float(np.asarray(w.launch.grid).reshape(-1)[0]) == 2432
    assert val(w.bytes_read, "hbm") == 4 * n + 2432 * 4
    assert val(w.bytes_write, "hbm") == 2432 * 4 + 4
    assert val(w.flops, "valu:fp32") == n + 2432


def test_reduction_fp16_accumulates_fp32(mi300x):
    w = run("reduction", mi300x, "fp16", n=2**20)
    assert "valu:fp32" in w.flops and "valu:fp16" not in w.flops


# --- transpose ---------------------------------------------------------------------------


def test_transpose(mi300x):
    # 16384 x 16384 fp32 = 1 GiB: read once, written once at HBM; 64 x 4 B = 256 B tile rows
    # cover a 128-B line, so L1/L2 see the same; LDS: each element written and read once
    w = run("transpose", mi300x, "fp32", rows=16384, cols=16384)
    b = 16384 * 16384 * 4
    assert val(w.bytes_read, "hbm") == b and val(w.bytes_write, "hbm") == b
    assert val(w.bytes, "l2") == 2 * b
    assert val(w.bytes_read, "lds") == b and val(w.bytes_write, "lds") == b
    assert w.total_flops == 0
    assert float(np.asarray(w.launch.grid).reshape(-1)[0]) == 256 * 256


def test_transpose_fp8_line_amplification(mi300x):
    # fp8: 64-B tile rows, half a 128-B line: L1/L2 bytes doubled, HBM compulsory
    w = run("transpose", mi300x, "fp8", rows=32768, cols=32768)
    b = 32768 * 32768
    assert val(w.bytes, "hbm") == 2 * b
    assert val(w.bytes, "l2") == 4 * b


def test_transpose_small_fits(mi300x, warm):
    w = run("transpose", mi300x, "fp32", rows=1024, cols=1024)  # 8 MiB in + out
    assert val(w.bytes, "hbm") == 0 and val(w.bytes, "l2") == 8 * MiB


# --- softmax and norms -------------------------------------------------------------------


def test_softmax_single_pass(mi300x):
    # cols 8192 fp32 = 32 KiB per row <= 64 KiB: one pass. rows 65536: x = 2 GiB, read once,
    # written once; FLOPs 4 VALU/element (fp32), SFU one exp per element + one rcp per row
    rows, cols = 65536, 8192
    e = rows * cols
    w = run("softmax", mi300x, "fp32", rows=rows, cols=cols)
    assert val(w.bytes_read, "hbm") == 4 * e
    assert val(w.bytes_write, "hbm") == 4 * e
    assert val(w.flops, "valu:fp32") == 4 * e
    assert val(w.flops, "sfu:fp32") == e + rows
    assert float(np.asarray(w.launch.grid).reshape(-1)[0]) == rows  # one workgroup per row


def test_softmax_multi_pass_mi300x(mi300x):
    # cols 65536 fp32 = 256 KiB per row > 64 KiB: two passes. Rows in flight: 1024-wide
    # workgroups, 2 per CU x 304 = 608 rows x 256 KiB = 152 MiB <= 256 MiB MALL, so the
    # re-read comes from the MALL: HBM reads x once (1 GiB), the MALL sees x twice.
    rows, cols = 4096, 65536
    e = rows * cols
    w = run("softmax", mi300x, "fp32", rows=rows, cols=cols)
    assert val(w.bytes_read, "hbm") == 4 * e
    assert val(w.bytes_read, "mall") == 8 * e
    assert val(w.bytes_write, "hbm") == 4 * e
    assert val(w.flops, "valu:fp32") == 5 * e
    assert val(w.flops, "sfu:fp32") == 2 * e + rows


def test_softmax_multi_pass_rereads_hbm(mi250x):
    # MI250X: 110 CUs x 2 workgroups x 256 KiB = 55 MiB in flight > 8 MiB L2, no MALL:
    # the second pass re-reads x from HBM
    rows, cols = 4096, 65536
    e = rows * cols
    w = run("softmax", mi250x, "fp32", rows=rows, cols=cols)
    assert val(w.bytes_read, "hbm") == 8 * e
    assert val(w.bytes_write, "hbm") == 4 * e


def test_softmax_long_rows_fit_a_hopper_cluster():
    """A 131072-column fp32 row (512 KiB) exceeds one CTA's 228 KiB but fits a cluster of 16
    CTAs pooling distributed shared memory (QuACK's long-row softmax on sm_90): one read of x.
    The A100 (sm_80) has no clusters, so the same row takes a second pass that re-reads x."""
    rows, cols = 16384, 131072
    e = rows * cols
    h100 = run("softmax", load_arch("h100"), "fp32", rows=rows, cols=cols)
    a100 = run("softmax", load_arch("a100"), "fp32", rows=rows, cols=cols)
    assert val(h100.bytes_read, "hbm") == 4 * e
    assert val(h100.flops, "sfu:fp32") == e + rows  # one pass: one exp per element
    assert val(a100.bytes_read, "hbm") == 8 * e
    assert val(a100.flops, "sfu:fp32") == 2 * e + rows
    # beyond 16 CTAs' worth (16 x 228 KiB) the row takes two passes on the H100 too
    big = run("softmax", load_arch("h100"), "fp32", rows=4096, cols=1 << 20)
    assert val(big.flops, "sfu:fp32") == 2 * 4096 * (1 << 20) + 4096


def test_softmax_small_rows_one_wave_per_row(mi300x):
    # cols 128 fp16 = 256 B <= 64 lanes x 16 B: one wave per row, 4 rows per 256-wide workgroup
    w = run("softmax", mi300x, "fp16", rows=4096, cols=128)
    assert float(np.asarray(w.launch.grid).reshape(-1)[0]) == 1024
    assert float(np.asarray(w.launch.workgroup_size).reshape(-1)[0]) == 256


def test_layernorm_rmsnorm(mi300x):
    # 16384 x 8192 fp16: x = 256 MiB; in + out + params > 256 MiB MALL, so HBM sees:
    # layernorm: x + gamma + beta (2 x 8192 x 2 B) read, x written; 7 VALU/element, 1 rsqrt/row
    # rmsnorm:   x + gamma (8192 x 2 B) read, x written; 4 VALU/element, 1 rsqrt/row
    rows, cols = 16384, 8192
    e = rows * cols
    ln = run("layernorm", mi300x, "fp16", rows=rows, cols=cols)
    rn = run("rmsnorm", mi300x, "fp16", rows=rows, cols=cols)
    assert val(ln.bytes_read, "hbm") == 2 * e + 2 * cols * 2
    assert val(rn.bytes_read, "hbm") == 2 * e + cols * 2
    assert val(ln.bytes_write, "hbm") == 2 * e == val(rn.bytes_write, "hbm")
    assert val(ln.flops, "valu:fp32") == 7 * e
    assert val(rn.flops, "valu:fp32") == 4 * e
    assert val(ln.flops, "sfu:fp32") == rows == val(rn.flops, "sfu:fp32")
    # gamma/beta re-read per row at L1: x + rows x params
    assert val(ln.bytes_read, "l1") == 2 * e + rows * 2 * cols * 2
    for lv in ("l1", "l2", "hbm"):
        assert val(ln.bytes, lv) > val(rn.bytes, lv)


def test_norm_small_fits_l2(mi300x, warm):
    w = run("rmsnorm", mi300x, "bf16", rows=256, cols=4096)  # 2 MiB in + out
    assert val(w.bytes, "hbm") == 0 and val(w.bytes, "l2") > 0


# --- stencil -----------------------------------------------------------------------------


def test_stencil_planes_fit_l2(mi250x):
    # MI250X, 512 x 512 x 512 fp64, 7 points (r = 1): 3 planes x 512^2 x 8 B = 6 MiB <= 8 MiB L2:
    # HBM compulsory: G = 1 GiB read, 1 GiB written; FLOPs 13 per point
    cells = 512**3
    w = run("stencil", mi250x, "fp64", nx=512, ny=512, nz=512, points=7)
    assert val(w.bytes_read, "hbm") == 8 * cells
    assert val(w.bytes_write, "hbm") == 8 * cells
    assert val(w.flops, "valu:fp64") == 13 * cells
    # L1 sees all 7 loads; L2 sees (3 + 2/64 + 2/4) G reads
    assert val(w.bytes_read, "l1") == 7 * 8 * cells
    assert val(w.bytes_read, "l2") == pytest.approx((3 + 2 / 64 + 2 / 4) * 8 * cells)


def _halo(l2_bytes, planes, r, s=8.0):
    b = (l2_bytes / 2.0 / (planes * s)) ** 0.5
    return (1.0 + 2.0 * r / b) ** 2


def test_stencil_planes_spill_l2(mi250x):
    # 1024 x 1024 x 128 (same cell count): 3 planes = 24 MiB > 8 MiB L2: the kernel is blocked
    # in x-y so that one block's 3 planes fill half the L2 (B = 418): HBM reads the grid once
    # plus the blocks' halos, (1 + 2/418)^2 G, not 3 G; writes G
    cells = 1024 * 1024 * 128
    w = run("stencil", mi250x, "fp64", nx=1024, ny=1024, nz=128, points=7)
    assert val(w.bytes_read, "hbm") == pytest.approx(8 * cells * _halo(8 * 2**20, 3, 1))
    assert 8 * cells < val(w.bytes_read, "hbm") < 1.02 * 8 * cells
    assert val(w.bytes_write, "hbm") == 8 * cells


def test_stencil_no_jump_when_planes_spill(mi250x):
    # where the 3 planes stop fitting the 8 MiB L2 (3 x nx^2 x 8 > 8 MiB at nx > 591) a blocked
    # kernel pays only its halos: per-point HBM bytes stay 16, plus under 1 %
    nx = np.array([256.0, 512, 576, 640, 768, 1024])
    w = get_model("stencil").fn(
        {"nx": nx, "ny": nx, "nz": np.full(6, 1024.0), "points": np.full(6, 7.0)}, mi250x, "fp64"
    )
    per_point = w.bytes["hbm"] / (nx * nx * 1024)
    np.testing.assert_array_equal(per_point[:3], [16, 16, 16])
    assert np.all(per_point[3:] > 16) and np.all(per_point[3:] < 16.2)


def test_blockwise_reduction_is_the_first_stage_alone(mi300x):
    """partials=k: k workgroups each write one partial sum and no second stage reads them back
    (a block-wise sum), where the default reduces to one value in two stages."""
    n = 2**25
    full = run("reduction", mi300x, "fp32", n=n)
    blocks = run("reduction", mi300x, "fp32", n=n, partials=1024)
    assert val(blocks.bytes_read, "hbm") == 4 * n and val(blocks.bytes_write, "hbm") == 4 * 1024
    assert val(full.bytes_read, "hbm") > 4 * n and val(blocks.flops, "valu:fp32") == n
    assert np.all(np.asarray(blocks.launch.grid) == 1024)


def test_stencil_naive_kernel_reads_the_z_planes_again(mi250x, mi300x):
    """blocked=false, the naive kernel (AMD lab notes' kernel 1, one thread per point): where the
    3 planes miss L2 (MI250X 1024^2 x 128 fp64: 24 MiB > 8 MiB) both z neighbours cross L2 again,
    3 G read from HBM instead of the blocked kernel's G plus halos; where they fit (512^3) the two
    kernels move the same bytes; a memory-side cache that holds the planes (MI300X's 256 MiB MALL)
    serves the re-reads and HBM still sees the grid once."""
    cells = 1024 * 1024 * 128
    w = run("stencil", mi250x, "fp64", nx=1024, ny=1024, nz=128, points=7, blocked=False)
    assert val(w.bytes_read, "hbm") == 3 * 8 * cells and val(w.bytes_write, "hbm") == 8 * cells
    fits = [run("stencil", mi250x, "fp64", nx=512, ny=512, nz=512, points=7, blocked=b) for b in (True, False)]
    assert val(fits[0].bytes_read, "hbm") == val(fits[1].bytes_read, "hbm") == 8 * 512**3
    w = run("stencil", mi300x, "fp64", nx=1024, ny=1024, nz=128, points=7, blocked=False)
    assert val(w.bytes_read, "mall") == 3 * 8 * cells and val(w.bytes_read, "hbm") == 8 * cells


def test_stencil_mi300x_mall(mi300x):
    # MI300X 1024^2 x 128 fp64: planes 24 MiB > 4 MiB per-XCD L2: blocked in x-y, the MALL
    # serves the grid plus the blocks' halos, HBM the compulsory G (grid 1 GiB > MALL)
    cells = 1024 * 1024 * 128
    w = run("stencil", mi300x, "fp64", nx=1024, ny=1024, nz=128, points=7)
    assert val(w.bytes_read, "mall") == pytest.approx(8 * cells * _halo(4 * 2**20, 3, 1))
    assert val(w.bytes_read, "hbm") == 8 * cells
    # 25 points (r = 4): 9 planes per block, smaller blocks, larger halos
    w = run("stencil", mi300x, "fp64", nx=1024, ny=1024, nz=128, points=25)
    assert val(w.bytes_read, "mall") == pytest.approx(8 * cells * _halo(4 * 2**20, 9, 4))
    assert val(w.flops, "valu:fp64") == 49 * cells


def test_stencil_round_robin_xcds_refetch_neighbours():
    # MI300A (6 XCDs, private 4 MiB L2 each), 256^3 fp64, 7 points: the 3 planes (1.5 MiB) fit
    # one L2, but workgroup i runs on XCD i mod 6: its x neighbours (i +- 1) always sit on
    # another XCD, its y neighbours (i +- 4 tiles per row) and z neighbours (i +- 256 tiles per
    # plane) too (4 and 256 are not multiples of 6), so the MALL serves the whole L2 factor,
    # (3 + 2/64 + 2/4) G; HBM still reads the grid once
    cells = 256**3
    w = run("stencil", load_arch("mi300a"), "fp64", nx=256, ny=256, nz=256, points=7)
    assert val(w.bytes_read, "mall") == pytest.approx((3 + 2 / 64 + 2 / 4) * 8 * cells)
    assert val(w.bytes_read, "hbm") == 8 * cells
    # MI300X (8 XCDs): 256 tiles per plane is a multiple of 8, so the z neighbours share an XCD
    w = run("stencil", load_arch("mi300x"), "fp64", nx=256, ny=256, nz=256, points=7)
    assert val(w.bytes_read, "mall") == pytest.approx((1 + 2 / 64 + 2 / 4) * 8 * cells)


def test_stencil_small_fits(mi300x, warm):
    w = run("stencil", mi300x, "fp64", nx=64, ny=64, nz=64)  # 2 MiB in, 2 MiB out
    assert val(w.bytes, "hbm") == 0 and val(w.bytes, "l2") > 0


def test_stencil_box27(mi250x):
    w = run("stencil", mi250x, "fp32", nx=256, ny=256, nz=256, points=27)
    cells = 256**3
    assert val(w.flops, "valu:fp32") == 53 * cells
    assert val(w.bytes_read, "l1") == 27 * 4 * cells
    assert val(w.bytes_read, "l2") == pytest.approx(3 * (1 + 2 / 64) * (1 + 2 / 4) * 4 * cells)


# --- properties over all families --------------------------------------------------------


def _sizes(kernel, k):
    """Shapes growing with k."""
    return {
        "stream": {"n": 2.0**k},
        "elementwise": {"n": 2.0**k},
        "reduction": {"n": 2.0**k},
        "transpose": {"rows": 2.0 ** (k // 2), "cols": 2.0 ** (k - k // 2)},
        "softmax": {"rows": 2.0 ** (k // 2), "cols": 2.0 ** (k - k // 2)},
        "layernorm": {"rows": 2.0 ** (k // 2), "cols": 2.0 ** (k - k // 2)},
        "rmsnorm": {"rows": 2.0 ** (k // 2), "cols": 2.0 ** (k - k // 2)},
        "stencil": {"nx": 2.0 ** (k // 3 + k % 3), "ny": 2.0 ** (k // 3), "nz": 2.0 ** (k // 3)},
    }[kernel]


@pytest.mark.parametrize("kernel", FAMILIES)
@pytest.mark.parametrize("arch_key", ["mi300x", "mi250x"])
def test_monotonic(kernel, arch_key):
    arch = load_arch(arch_key)
    m = get_model(kernel)
    ks = range(8, 34)
    p = {}
    for name in m.numeric:
        vals = [(_sizes(kernel, k).get(name, m.params[name].default)) for k in ks]
        p[name] = np.asarray(vals, dtype=float)
    if "op" in m.params:
        p["op"] = "triad"
    w = m.fn(p, arch, "fp32")
    for lv in ("l1", "l2", arch.memory_level):
        b = np.asarray(w.bytes.get(lv, np.zeros(len(ks))))
        assert np.all(np.diff(b) >= 0), (lv, b)
    total = sum((np.asarray(v) for v in w.flops.values()), np.zeros(len(ks)))
    assert np.all(np.diff(total) >= 0)
    assert np.asarray(w.bytes["l1"])[-1] > 0


@pytest.mark.parametrize("kernel", FAMILIES)
def test_vectorised_100k(kernel, mi300x):
    rng = np.random.default_rng(1)
    N = 100_000
    m = get_model(kernel)
    draw = {
        "n": rng.integers(1, 2**31, N),
        "rows": rng.integers(1, 2**17, N),
        "cols": rng.integers(1, 2**18, N),
        "nx": rng.integers(1, 4096, N),
        "ny": rng.integers(1, 4096, N),
        "nz": rng.integers(1, 512, N),
        "points": rng.choice([7, 13, 19, 25, 27], N),
        "radius": rng.integers(0, 5, N),
        "reads": rng.uniform(0, 4, N),
        "writes": rng.uniform(0, 4, N),
        "flops_per_element": rng.uniform(0, 16, N),
        "sfu_per_element": rng.choice([0.0, 1.0, 2.0], N),
        "int_muls_per_element": rng.choice([0.0, 1.0], N),
        "int_ops_per_element": rng.choice([0.0, 11.0], N),
        "partials": rng.choice([1, 2, 1024, 65536], N),
        "block": rng.choice([0, 64, 256, 1024], N),
        "rows_per_workgroup": rng.choice([0.0, 1.0, 2.0, 7.5], N),
    }
    p = {name: draw[name].astype(float) for name in m.numeric}
    if "op" in m.params:
        p["op"] = "dot"
    w = m.fn(p, mi300x, m.default_dtype)
    for d in (w.flops, w.bytes_read, w.bytes_write):
        for key, v in d.items():
            v = np.asarray(v)
            assert v.shape == (N,), key
            assert np.all(np.isfinite(v)) and np.all(v >= 0), key
    grid = np.broadcast_to(np.asarray(w.launch.grid, dtype=float), (N,))
    assert np.all(grid >= 1)
    assert np.all(np.asarray(w.launch.bytes_in_flight_per_wave) > 0)


@pytest.mark.parametrize("arch_key", ["mi100", "mi210", "mi250x", "mi300x"])
@pytest.mark.parametrize("kernel", FAMILIES)
def test_every_arch_every_dtype(kernel, arch_key):
    arch = load_arch(arch_key)
    for dtype in ("fp64", "fp32", "bf16", "fp16", "fp8"):
        w = run(kernel, arch, dtype, **_sizes(kernel, 24), op="add")
        assert all(np.all(np.isfinite(np.asarray(v))) for v in w.bytes.values())
        for key in w.flops:
            pipe, dt = key.split(":")
            assert arch.has(pipe, dt), key


# --- parameter validation ----------------------------------------------------------------


def test_params_registered():
    assert list(get_model("stream").params) == ["op", "n"]
    assert get_model("stream").params["op"].choices == ("copy", "mul", "scale", "add", "triad", "dot")
    assert list(get_model("elementwise").params) == ["n", "reads", "writes", "flops_per_element", "sfu_per_element", "int_muls_per_element",
                                                   "int_ops_per_element", "random"]
    e = get_model("elementwise").params
    assert (e["reads"].default, e["writes"].default, e["flops_per_element"].default) == (1, 1, 1)
    assert list(get_model("reduction").params) == ["n", "partials"]
    assert list(get_model("transpose").params) == ["rows", "cols"]
    for k in ("softmax", "layernorm", "rmsnorm"):
        assert list(get_model(k).params) == ["rows", "cols", "reads", "writes", "phase", "block", "rows_per_workgroup"]
    assert list(get_model("stencil").params) == ["nx", "ny", "nz", "points", "radius", "axis", "blocked"]
    assert get_model("stencil").params["points"].default == 0  # from the radius (1) and the axes


def test_bad_params_rejected():
    with pytest.raises(InputError):
        convert_param(get_model("stream").params["op"], "trad", "case 1")
    with pytest.raises(InputError):
        convert_param(get_model("stream").params["n"], -5, "case 1")
    with pytest.raises(InputError):
        convert_param(get_model("reduction").params["n"], 0, "case 1")
    with pytest.raises(InputError):
        convert_param(get_model("elementwise").params["reads"], -1, "case 1")
    with pytest.raises(InputError):
        convert_param(get_model("stencil").params["points"], -5, "case 1")
    with pytest.raises(InputError):
        convert_param(get_model("softmax").params["cols"], 1.5, "case 1")
    assert convert_param(get_model("elementwise").params["reads"], 0, None) == 0
    assert convert_param(get_model("elementwise").params["flops_per_element"], "0.5", None) == 0.5
    assert convert_param(get_model("stream").params["op"], "triad", None) == "triad"


@pytest.fixture
def warm():
    """The warm steady state (`--warm`): kernel inputs that fit a cache are served from it."""
    from perfmodel.models.traffic import warm_caches

    with warm_caches(True):
        yield


def test_stream_small_is_cold_by_default(mi300x):
    # a single run: the 1.5 MiB of a 2^16 fp64 triad still comes from and goes to HBM
    n = 2**16
    w = run("stream", mi300x, "fp64", op="triad", n=n)
    assert val(w.bytes, "hbm") == 24 * n
    assert val(w.bytes, "mall") == 24 * n



def test_fused_residual_add_rmsnorm_moves_two_tensors_each_way():
    """reads=2 writes=2 (vLLM fused_add_rms_norm): twice the row bytes in and out, one more
    VALU add per element; gamma is read once either way."""
    import perfmodel

    (one,) = perfmodel.predict("rmsnorm", "mi300x", dtype="bf16", rows=4096, cols=8192)
    (two,) = perfmodel.predict("rmsnorm", "mi300x", dtype="bf16", rows=4096, cols=8192, reads=2, writes=2)
    x = 4096 * 8192 * 2
    gamma = 8192 * 2
    assert one.bytes_read["hbm"] == x + gamma and one.bytes_write["hbm"] == x
    assert two.bytes_read["hbm"] == 2 * x + gamma and two.bytes_write["hbm"] == 2 * x
    assert two.flops_by["valu:fp32"] - one.flops_by["valu:fp32"] == 4096 * 8192
    assert two.time_s > 1.8 * one.time_s


def test_stencil_2d_and_1d_derivatives(mi300x):
    import perfmodel

    """nz=1 is a 2-D stencil (5-point star by default, 9 = box) with no z-plane reuse; axis=z
    radius=4 is a 1-D derivative of 9 points that re-reads 2r + 1 planes when they miss L2."""
    (five,) = perfmodel.predict("stencil", "mi300x", dtype="fp32", nx=8192, ny=8192, nz=1)
    assert five.flops_by["valu:fp32"] == (2 * 5 - 1) * 8192 * 8192
    G = 8192 * 8192 * 4
    assert five.bytes["l2"] == pytest.approx(G * (1 + 2 / 64 + 2 / 4) + G)  # reads with x/y halo + writes
    (nine,) = perfmodel.predict("stencil", "mi300x", dtype="fp32", nx=8192, ny=8192, nz=1, points=9)
    assert nine.flops_by["valu:fp32"] == 17 * 8192 * 8192 and nine.bytes["l2"] > five.bytes["l2"]
    (dz,) = perfmodel.predict("stencil", "mi300x", dtype="fp64", nx=1024, ny=1024, nz=256, axis="z", radius=4)
    G = 1024 * 1024 * 256 * 8
    assert dz.flops_by["valu:fp64"] == 17 * 1024 * 1024 * 256
    assert dz.bytes_read["l2"] == pytest.approx(9 * G)  # 9 planes, no x/y halo
    (dx,) = perfmodel.predict("stencil", "mi300x", dtype="fp64", nx=1024, ny=1024, nz=256, axis="x", radius=4)
    assert dx.bytes_read["l2"] == pytest.approx(G * (1 + 8 / 64)) and dx.bytes_read["hbm"] == pytest.approx(G)


def test_stencil_on_a_1d_grid_launches_full_workgroups(mi300x):
    """A grid narrower than the 64 x 4 tile folds the workgroup's lanes into the dimensions it
    has: the naive kernel (one workgroup per tile and plane) over a 1-D grid of n points launches
    n / 256 workgroups of 256 lanes (not n / 64 with three idle rows), along x, y or z alike, and
    the stencil runs over the axes that have more than one point (3 points)."""
    n = 2**28
    for dims in ({"nx": n, "ny": 1, "nz": 1}, {"nx": 1, "ny": n, "nz": 1}, {"nx": 1, "ny": 1, "nz": n}):
        w = run("stencil", mi300x, "fp64", blocked=False, **dims)
        assert float(np.asarray(w.launch.grid).ravel()[0]) == n / 256, dims
        assert float(np.asarray(w.flops["valu:fp64"]).ravel()[0]) == (2 * 3 - 1) * n
    thin = run("stencil", mi300x, "fp64", nx=4096, ny=2, nz=1, blocked=False)
    assert float(np.asarray(thin.launch.grid).ravel()[0]) == 4096 / 128


def test_fastest_stencil_is_not_paced_by_the_dispatcher(mi300x):
    """The fastest form (blocked, the default) loops inside its workgroups (over z planes, over
    several points per lane), so its grid is what the device holds at once and a large stencil
    streams like a copy of its arrays on a GPU with a workgroup launch rate (gpu-stream's 1-D
    3-point stencil on an MI300X: 2 GiB fp64 arrays at 4146 GB/s counting one read and one
    write; a 512^3 fp16 star, 2^27 points, would otherwise launch 2^19 workgroups)."""
    import perfmodel
    from perfmodel.models import streaming_common as sc

    n = 2**28
    w = run("stencil", mi300x, "fp64", nx=n, ny=1, nz=1, radius=1, axis="x")
    assert float(np.asarray(w.launch.grid).ravel()[0]) == float(sc.resident_workgroups(mi300x, 256))
    (st,) = perfmodel.predict("stencil", "mi300x", dtype="fp64", nx=n, ny=1, nz=1, radius=1, axis="x")
    (cp,) = perfmodel.predict("stream", "mi300x", dtype="fp64", op="copy", n=n)
    assert st.bound == "memory:hbm" and st.time_s == pytest.approx(cp.time_s, rel=0.05)
    for dims in ({"nx": 1, "ny": n, "nz": 1}, {"nx": 1, "ny": 1, "nz": n}):
        (other,) = perfmodel.predict("stencil", "mi300x", dtype="fp64", **dims)
        assert other.time_s == pytest.approx(st.time_s, rel=1e-6)
    (fast,) = perfmodel.predict("stencil", "mi300x", dtype="fp16", nx=512, ny=512, nz=512)
    (naive,) = perfmodel.predict("stencil", "mi300x", dtype="fp16", nx=512, ny=512, nz=512, blocked=False)
    assert fast.bound.startswith("memory") and naive.bound == "launch" and naive.time_s > 1.5 * fast.time_s


def test_thin_transpose_is_not_paced_by_empty_tiles(mi300x):
    """A matrix thinner than the 64 x 64 tile: a thin tile (all of the short side, 4096 elements)
    is an alternative the estimate takes where faster, so a 2 x 2^27 transpose streams like a
    copy instead of launching 2^21 workgroups each 1/32 full; a small thin matrix, where fewer
    workgroups would leave CUs idle, is never predicted slower than with square tiles."""
    import perfmodel

    n = 2**28
    (cp,) = perfmodel.predict("stream", "mi300x", dtype="fp32", op="copy", n=n)
    for rows, cols in ((2, n // 2), (n // 2, 2), (1, n)):
        (t,) = perfmodel.predict("transpose", "mi300x", dtype="fp32", rows=rows, cols=cols)
        assert t.bound == "memory:hbm" and t.time_s == pytest.approx(cp.time_s, rel=0.05), (rows, cols)
    from perfmodel.estimate import estimate
    from perfmodel.models import transpose

    small = transpose._transpose(mi300x, "fp32", np.array([4.0]), np.array([4096.0]), transpose.TILE, transpose.TILE)
    (t,) = perfmodel.predict("transpose", "mi300x", dtype="fp32", rows=4, cols=4096)
    assert t.time_s <= float(np.ravel(estimate(small, mi300x).time_s)[0])


def test_few_long_rows_are_split_over_workgroups():
    """One 128k-element softmax row on MI355X: one workgroup would take longer (its loads in
    flight and its exponentials on one CU) than a second kernel's launch, so the row is split
    (partials, then a combining kernel: two dispatches, the row re-read); 8 rows of 16k fp32
    LayerNorm stay one workgroup per row, as do many rows."""
    from perfmodel.arch import load_arch

    mi355x = load_arch("mi355x")
    w = run("softmax", mi355x, "bf16", rows=1, cols=131072)
    assert float(np.asarray(w.launch.grid).ravel()[0]) > 1
    assert float(np.asarray(w.launch.kernels).ravel()[0]) == 2.0
    ln = run("layernorm", load_arch("mi300x"), "fp32", rows=8, cols=16384)
    assert float(np.asarray(ln.launch.grid).ravel()[0]) == 8
    many = run("softmax", mi355x, "bf16", rows=4096, cols=131072)
    assert float(np.asarray(many.launch.kernels).ravel()[0]) == 1.0


@pytest.mark.parametrize("arch", ["mi250x", "mi300x", "h100"])
def test_one_long_row_never_gets_faster_with_more_columns(arch):
    """One row split over workgroups or kept whole: the time grows with the columns, across the
    point where the split starts (a whole row is bound by its one CU's L1, which the split
    decision counts too)."""
    import perfmodel

    for kernel in ("rmsnorm", "softmax"):
        t = [perfmodel.predict(kernel, arch, dtype="bf16", rows=1, cols=c)[0].time_s for c in (8192, 16384, 32768, 65536, 131072, 262144)]
        assert all(b >= 0.99 * a for a, b in zip(t, t[1:], strict=False)), (kernel, t)


def test_row_kernels_pay_a_memory_round_trip_after_each_statistic(mi300x):
    """The pass after each row statistic reads global memory again (docs/models-streaming.md,
    "Critical path"): rmsnorm one device-memory latency (the weight's first read), layernorm an
    L2 latency more (the variance pass re-reads the row), softmax two L2 latencies (no weights)."""
    from perfmodel.estimate import estimate
    from perfmodel.rates import latency_s

    mem, l2 = latency_s(mi300x, "hbm"), latency_s(mi300x, "l2")
    expect = {"rmsnorm": mem, "layernorm": l2 + mem, "softmax": 2 * l2}
    for kernel, secs in expect.items():
        w = run(kernel, mi300x, "bf16", rows=4, cols=4096)
        assert float(np.asarray(w.launch.serial_latencies)) * mem == pytest.approx(secs)
        assert float(estimate(w, mi300x).terms["fill"][0]) == pytest.approx(secs)
    assert l2 < mem  # so layernorm's chain is shorter than two device-memory trips


# --- batchnorm ---------------------------------------------------------------------------


def test_batchnorm_passes(mi300x):
    """Training: a device-filling reduction over the pass's arrays, then an elementwise pass, as
    two kernels (`Work.serial`); the input is read once per pass. n = 2^30 bf16: the reduction's
    grid caps at the 2432 resident workgroups (test_reduction), each writing one fp32 partial."""
    n, g = 2**30, 2432
    fwd = run("batchnorm", mi300x, "bf16", n=n, channels=64)
    assert val(fwd.bytes_read, "hbm") == 2 * n + g * 4 and val(fwd.flops, "valu:fp32") == 3 * n + g
    (transform,) = fwd.serial
    assert val(transform.bytes_read, "hbm") == 2 * n and val(transform.bytes_write, "hbm") == 2 * n
    assert sum(val(transform.flops, k) for k in transform.flops) == 2 * n
    bwd = run("batchnorm", mi300x, "bf16", n=n, channels=64, phase="bwd")
    assert val(bwd.bytes_read, "hbm") == 4 * n + g * 4 and val(bwd.flops, "valu:fp32") == 4 * n + g
    (elemt,) = bwd.serial
    assert val(elemt.bytes_read, "hbm") == 4 * n and val(elemt.bytes_write, "hbm") == 2 * n
    assert sum(val(elemt.flops, k) for k in elemt.flops) == 6 * n
    infer = run("batchnorm", mi300x, "bf16", n=n, channels=64, training=False)
    assert not infer.serial and val(infer.bytes_read, "hbm") == 2 * n and val(infer.bytes_write, "hbm") == 2 * n


def test_batchnorm_predictions_order_by_passes():
    """Backward (two reads, then two reads and a write) > forward training (one read, then a
    read and a write) > inference (a read and a write), all bound by device memory when large."""
    import perfmodel

    times = {}
    for phase, training in (("bwd", True), ("fwd", True), ("fwd", False)):
        r = perfmodel.predict("batchnorm", "mi300x", dtype="bf16", n=2**28, channels=256, phase=phase, training=training).rows[0]
        assert r["bound"] == "memory:hbm"
        times[(phase, training)] = r["time_us"]
    assert times[("bwd", True)] > times[("fwd", True)] > times[("fwd", False)]
    assert times[("fwd", True)] == pytest.approx(1.5 * times[("fwd", False)], rel=0.15)  # 3 vs 2 streams


def test_batchnorm_nchw_runs_one_workgroup_per_channel(mi300x):
    """layout=nchw, PyTorch's NCHW kernels (Normalization.cuh): the statistics of a [512, 64, 112,
    112] bf16 input run 64 workgroups of 1024 lanes (tf = 1024 per row of 12544 elements, 4 loads
    per lane per iteration on ROCm: ceil(12544 / 4096) = 4 iterations per image, 2048 in all), one
    memory round trip each; the backward adds the elementwise loop's ceil(12544 / 1024) = 13 per
    image. The trace (TraceLens ResNet-18 DDP, MI300X) measured 1560 and 7217 us for these two
    kernels: about twice the round trips' time; the device-filling default took 0.1-0.3 of it."""
    from perfmodel.estimate import estimate
    from perfmodel.rates import latency_s
    from perfmodel.work import Work

    lat = latency_s(mi300x, "hbm")
    shape = dict(n=512 * 64 * 12544, channels=64, spatial=12544, layout="nchw")
    fwd = run("batchnorm", mi300x, "bf16", **shape)
    assert (fwd.launch.grid, fwd.launch.workgroup_size) == (64, 1024)
    stats = estimate(Work(flops=fwd.flops, bytes_read=fwd.bytes_read, bytes_write=fwd.bytes_write, launch=fwd.launch), mi300x)
    assert float(stats.terms["memory:hbm"][0]) == pytest.approx(512 * 4 * lat)
    bwd = estimate(run("batchnorm", mi300x, "bf16", phase="bwd", **shape), mi300x)
    assert float(bwd.terms["memory:hbm"][0]) == pytest.approx(512 * (4 + 13) * lat)
    assert val(bwd.work.bytes_read, "hbm") == 4 * 2 * shape["n"] and val(bwd.work.bytes_write, "hbm") == 2 * shape["n"]
    # ROCm builds before the 1024-lane blocks: 256 lanes (rows of 256), one load per iteration
    old = estimate(run("batchnorm", mi300x, "bf16", block=256, **shape), mi300x)
    assert float(old.terms["memory:hbm"][0]) == pytest.approx(512 * 49 * lat)  # ceil(12544 / 256) = 49
    (transform,) = fwd.serial  # a device-filling grid of scalar loads: one element read and written per lane,
    # on the lanes a row of 12544 keeps busy over its 13 passes of 1024
    assert transform.launch.bytes_in_flight_per_wave == pytest.approx(2 * 2 * 64 * 12544 / (13 * 1024))


def test_batchnorm_whole_channel_on_chip(mi300x):
    """Training, device-filling layout: where one channel fits one workgroup's 64 KiB of LDS
    (32768 bf16 elements), one kernel reading the channel once (a row of the norms' row kernel
    per channel, `batchnorm._add_whole_channel`) is the faster way; a longer channel keeps the
    two passes. 4 x 128 x 32 x 32 bf16 (4096 elements a channel, 1 MiB): the one kernel moves
    the tensor in and out once where the two passes read it twice and pay two dispatches."""
    import perfmodel
    from perfmodel.models.batchnorm import WHOLE_CHANNEL_NOTE

    small = run("batchnorm", mi300x, "bf16", n=4 * 128 * 1024, channels=128)
    ((sub, at, note),) = small.alternatives
    assert list(at) == [0] and note == WHOLE_CHANNEL_NOTE and not sub.serial
    assert (sub.launch.grid, val(sub.bytes_read, "hbm"), val(sub.bytes_write, "hbm")) == (128, 2 * 4 * 128 * 1024, 2 * 4 * 128 * 1024)
    (r,) = perfmodel.predict("batchnorm", "mi300x", dtype="bf16", n=4 * 128 * 1024, channels=128)
    assert WHOLE_CHANNEL_NOTE in r.notes and r.grid == 128  # the estimate took the faster way
    small.alternatives.clear()
    assert np.ravel(perfmodel.estimate(small, mi300x).time_s)[0] > r.time_us * 1e-6 * 1.2  # the two passes
    for phase in ("fwd", "bwd"):  # one dispatch instead of two: faster than without the path
        (one,) = perfmodel.predict("batchnorm", "h200", dtype="fp16", n=524288, channels=128, phase=phase)
        (both,) = perfmodel.predict("batchnorm", "h200", dtype="fp16", n=524288 * 64, channels=128, phase=phase)
        assert WHOLE_CHANNEL_NOTE in one.notes and WHOLE_CHANNEL_NOTE not in both.notes  # 262144 > 32768 elements
    # exactly at the LDS: 32768 bf16 elements a channel fit, one more does not
    at_lds = run("batchnorm", mi300x, "bf16", n=np.array([32768.0, 32769.0]) * 8, channels=8)
    assert [list(a) for _, a, _ in at_lds.alternatives] == [[0]]
    assert not run("batchnorm", mi300x, "bf16", n=2**20, channels=8, training=False).alternatives  # inference: one pass anyway


def test_batchnorm_block_is_one_pytorch_builds():
    """block names PyTorch's MAX_BLOCK_SIZE of a build: 1024 or 256 on ROCm, 512 on CUDA."""
    import perfmodel

    with pytest.raises(InputError, match="expected one of 256, 1024 for AMD") as e:
        perfmodel.predict("batchnorm", "mi300x", n=2**20, channels=64, layout="nchw", block=512)
    assert e.value.key == "block"
    (h100,) = perfmodel.predict("batchnorm", "h100", n=2**20, channels=64, layout="nchw")
    assert h100.grid == 64 and "one workgroup per channel" in h100.notes
    for n, c in ((7, 1000), (1000, 7)):  # fewer elements than channels; a part of one in some channel
        with pytest.raises(InputError, match=rf"expected a whole multiple of channels \({c}; n = N x C x ...\), got {n}") as e:
            perfmodel.predict("batchnorm", "mi300x", n=n, channels=c)
        assert e.value.key == "n"
    for layout in ("nchw", "nhwc"):  # an H x W that cannot fit n is refused whichever layout times it
        with pytest.raises(InputError, match="divide n / channels into whole images") as e:  # 2^14 per channel
            perfmodel.predict("batchnorm", "mi300x", n=2**20, channels=64, layout=layout, spatial=3000)
        assert e.value.key == "spatial"


@pytest.mark.parametrize("kernel,flops", [("softmax", 4), ("layernorm", 13), ("rmsnorm", 9)])
def test_row_kernel_backward_reads_the_gradient_too(mi300x, kernel, flops):
    """phase=bwd: the output gradient and the input (softmax: the output) read, the input's
    gradient written; no transcendental (the forward's statistics are saved); the VALU FLOPs of
    the formulas in `models.softmax` / `models.norms`."""
    rows, cols = 2**16, 2**12  # 512 MiB per bf16 tensor: beyond the MALL, one pass (a row fits)
    fwd = run(kernel, mi300x, "bf16", rows=rows, cols=cols)
    bwd = run(kernel, mi300x, "bf16", rows=rows, cols=cols, phase="bwd")
    x, gamma = rows * cols * 2, (0 if kernel == "softmax" else cols * 2)  # gamma read once beyond L2
    assert val(bwd.bytes_read, "hbm") == 2 * x + gamma
    params = {"softmax": 0, "layernorm": 2, "rmsnorm": 1}[kernel]  # fp32 partial gradients, a row per CU
    assert val(fwd.bytes_write, "hbm") == x and val(bwd.bytes_write, "hbm") == x + params * mi300x.cus * cols * 4
    assert val(bwd.flops, "valu:fp32") == flops * rows * cols
    assert "sfu:fp32" not in bwd.flops or val(bwd.flops, "sfu:fp32") == 0


@pytest.mark.parametrize("kernel,params", [("layernorm", 2), ("rmsnorm", 1)])
def test_norm_backward_sums_the_parameter_gradients_in_a_second_kernel(mi300x, kernel, params):
    """The row kernel leaves the parameters' gradients as fp32 partial rows, one per program and
    at most one program per CU (Liger's `rms_norm_backward`: `_dW` of (sm_count, n_cols) fp32,
    then `_dW.sum(dim=0)`), and a column-sum kernel reads them back and writes one value per
    column: one more dispatch after the row kernel, whose cost shows most on small problems."""
    import perfmodel

    for rows, cols in ((256, 4096), (2**16, 2**12)):
        w = run(kernel, mi300x, "bf16", rows=rows, cols=cols, phase="bwd")
        (col_sum,) = w.serial
        partials = params * min(rows, mi300x.cus) * cols
        assert val(col_sum.bytes_read, "hbm") == partials * 4
        assert val(col_sum.bytes_write, "hbm") == pytest.approx(params * cols * 4)
    (small,) = perfmodel.predict(kernel, "mi300x", dtype="bf16", rows=256, cols=4096, phase="bwd")
    (fwd,) = perfmodel.predict(kernel, "mi300x", dtype="bf16", rows=256, cols=4096)
    assert "serial" in small.terms_s and small.time_s > fwd.time_s + mi300x.launch_overhead_s
    assert not run("softmax", mi300x, "bf16", rows=256, cols=4096, phase="bwd").serial  # no parameters
