"""Occupancy rules, the code-object reader and the kernel-trace helper: no Triton needed."""

from __future__ import annotations

import struct

import pytest

from perfmodel.arch import load_arch
from perfmodel.errors import InputError
from perfmodel.inspect.occupancy import occupancy, sgpr_waves


def test_vgpr_limited_cdna3():
    # 128 VGPRs -> 512/128 = 4 waves/SIMD; 8-wave workgroups on 4 SIMDs -> 2 workgroups per CU
    o = occupancy(load_arch("mi300x"), vgprs=128, sgprs=38, lds_bytes=16384, workgroup_size=512)
    assert (o.waves_per_simd, o.wgs_per_cu, o.limiter) == (4.0, 2, "vgpr")
    assert o.limits_wgs_per_cu["lds"] == 4 and o.vgpr_alloc == 128


def test_vgpr_granule_rounds_up():
    o = occupancy(load_arch("mi300x"), vgprs=129, sgprs=38, lds_bytes=0, workgroup_size=64)
    assert o.vgpr_alloc == 136 and o.waves_per_simd == 3.0  # floor(512 / 136)


def test_lds_limited():
    # 40 KiB per workgroup: one fits in MI300X's 64 KiB per CU; 4 one-wave... 4-wave workgroups
    o = occupancy(load_arch("mi300x"), vgprs=32, sgprs=20, lds_bytes=40 * 1024, workgroup_size=256)
    assert o.limiter == "lds" and o.wgs_per_cu == 1 and o.waves_per_simd == 1.0
    # MI355X has 160 KiB per CU: four fit
    o = occupancy(load_arch("mi355x"), vgprs=32, sgprs=20, lds_bytes=40 * 1024, workgroup_size=256)
    assert o.wgs_per_cu == 4 and o.limiter == "lds"


def test_sgpr_steps_gfx9_only():
    assert [sgpr_waves("gfx942", s) for s in (80, 88, 100, 104)] == [10, 9, 8, 7]
    o = occupancy(load_arch("mi300x"), vgprs=32, sgprs=104, lds_bytes=0, workgroup_size=64)
    assert o.limiter == "sgpr" and o.waves_per_simd == 7.0
    assert sgpr_waves("gfx1100", 106) == float("inf")


def test_wave_slots_and_rdna_file():
    o = occupancy(load_arch("mi300x"), vgprs=16, sgprs=16, lds_bytes=0, workgroup_size=256)
    assert o.limiter == "wave_slots" and o.waves_per_simd == 8.0
    # RDNA3 wave32: 1536 VGPRs per lane-slot, granule 24: 96 VGPRs -> 16 waves (the maximum)
    o = occupancy(load_arch("rx7900xtx"), vgprs=96, sgprs=40, lds_bytes=0, workgroup_size=128, wave_size=32)
    assert o.waves_per_simd == 16.0
    o = occupancy(load_arch("rx7900xtx"), vgprs=256, sgprs=40, lds_bytes=0, workgroup_size=32, wave_size=32)
    assert o.vgpr_alloc == 264 and o.limiter == "vgpr" and o.waves_per_simd == 5.0  # floor(1536 / 264)
    # whole workgroups only: 5 waves/SIMD x 2 SIMDs = 10 slots hold two 4-wave workgroups
    o = occupancy(load_arch("rx7900xtx"), vgprs=256, sgprs=40, lds_bytes=0, workgroup_size=128, wave_size=32)
    assert o.wgs_per_cu == 2 and o.waves_per_simd == 4.0


def test_separate_agprs_form_the_unified_total():
    a = load_arch("mi300x")
    o = occupancy(a, vgprs=130, agprs=64, sgprs=30, lds_bytes=0, workgroup_size=64, vgprs_include_agprs=False)
    assert o.vgpr_alloc == 200  # align(130, 4) = 132, + 64 = 196 -> granule 8 -> 200


def test_lds_over_the_limit_is_an_input_error():
    with pytest.raises(InputError, match="LDS"):
        occupancy(load_arch("mi300x"), vgprs=32, sgprs=20, lds_bytes=70000, workgroup_size=256)


# --- code object reader -----------------------------------------------------------------------
def _pack(v) -> bytes:
    """A minimal msgpack encoder for the test (the subset the reader decodes)."""
    if isinstance(v, bool):
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        return bytes([v]) if 0 <= v < 128 else b"\xcd" + struct.pack(">H", v)
    if isinstance(v, str):
        b = v.encode()
        return bytes([0xA0 | len(b)]) + b if len(b) < 32 else b"\xd9" + bytes([len(b)]) + b
    if isinstance(v, list):
        return bytes([0x90 | len(v)]) + b"".join(_pack(x) for x in v)
    if isinstance(v, dict):
        return b"\xde" + struct.pack(">H", len(v)) + b"".join(_pack(k) + _pack(x) for k, x in v.items())
    raise TypeError(v)


def _elf_with_note(desc: bytes, machine: int = 224) -> bytes:
    name = b"AMDGPU\0\0"
    note = struct.pack("<III", 7, len(desc), 32) + name + desc + b"\0" * (-len(desc) % 4)
    shoff = 64 + len(note)
    hdr = bytearray(64)
    hdr[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<H", hdr, 18, machine)
    struct.pack_into("<Q", hdr, 0x28, shoff)
    struct.pack_into("<HH", hdr, 0x3A, 64, 2)
    null = bytes(64)
    sh = bytearray(64)
    struct.pack_into("<I", sh, 4, 7)  # SHT_NOTE
    struct.pack_into("<QQ", sh, 0x18, 64, len(note))
    return bytes(hdr) + note + null + bytes(sh)


META = {
    "amdhsa.target": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    "amdhsa.kernels": [
        {".name": "k", ".vgpr_count": 300, ".agpr_count": 44, ".sgpr_count": 90, ".group_segment_fixed_size": 20000,
         ".private_segment_fixed_size": 0, ".max_flat_workgroup_size": 256, ".wavefront_size": 64,
         ".vgpr_spill_count": 0, ".sgpr_spill_count": 0, ".uniform_work_group_size": True},
    ],
}  # fmt: skip


def test_code_object_note_round_trip(tmp_path):
    from perfmodel.inspect.elf import read_code_object, unpackb

    assert unpackb(_pack(META)) == META
    p = tmp_path / "k.hsaco"
    p.write_bytes(_elf_with_note(_pack(META)))
    co = read_code_object(str(p))
    assert co["gfx"] == "gfx942" and co["kernels"][0][".vgpr_count"] == 300


def test_inspect_code_object_cli(tmp_path):
    import json

    from click.testing import CliRunner

    from perfmodel.cli.main import cli

    p = tmp_path / "k.hsaco"
    p.write_bytes(_elf_with_note(_pack(META)))
    r = CliRunner().invoke(cli, ["kernel", "inspect", str(p), "--arch", "mi300x", "--format", "json"])
    assert r.exit_code == 0, r.output
    k = json.loads(r.output)[0]
    assert k["resources"]["vgpr"] == 300 and k["resources"]["lds_static"] == 20000
    # 300 VGPRs -> 304 allocated -> 1 wave/SIMD; 4-wave workgroups: one per CU
    assert k["occupancy"]["waves_per_simd"] == 1.0 and k["occupancy"]["limiter"] == "vgpr"
    bad = CliRunner().invoke(cli, ["kernel", "inspect", str(p), "--arch", "rx7900xtx"])
    assert bad.exit_code == 2 and "gfx942" in bad.output


@pytest.mark.parametrize(
    ("data", "match"),
    [(b"not an elf", "not an ELF"), (_elf_with_note(_pack(META), machine=62), "not AMDGPU"),
     (_elf_with_note(b"\xc1"), "unreadable metadata")],
)  # fmt: skip
def test_bad_code_objects(tmp_path, data, match):
    from perfmodel.inspect.elf import read_code_object

    p = tmp_path / "bad.hsaco"
    p.write_bytes(data)
    with pytest.raises(InputError, match=match):
        read_code_object(str(p))


# --- rocprofv3 kernel trace -> occupancy --------------------------------------------------------
TRACE_HEADER = (
    '"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id",'
    '"Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count",'
    '"Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"'
)  # the header the project's rocprof reference notes record for rocprofv3 kernel traces


def test_trace_occupancy(tmp_path):
    from perfmodel.inspect.trace_occupancy import kernel_occupancy

    f = tmp_path / "123_kernel_trace.csv"
    rows = [
        'KERNEL_DISPATCH,1,1,0,9,1,4,"gemm_kernel",1,100,200,32768,0,128,0,38,512,1,1,524288,1,1',
        'KERNEL_DISPATCH,1,1,0,9,2,4,"gemm_kernel",2,300,400,32768,0,128,0,38,512,1,1,524288,1,1',
        'KERNEL_DISPATCH,1,1,0,9,3,5,"fa_kernel",3,500,900,32768,0,256,8,100,256,1,1,8192,1,1',
    ]
    f.write_text(TRACE_HEADER + "\n" + "\n".join(rows) + "\n")
    out = kernel_occupancy(tmp_path, load_arch("mi300x"))
    assert [r["kernel"] for r in out] == ["gemm_kernel", "fa_kernel"]
    assert out[0]["dispatches"] == 2 and out[0]["waves_per_simd"] == 4.0 and out[0]["limiter"] == "vgpr"
    # 256 arch + 8 AGPRs = 264 -> 1 wave/SIMD
    assert out[1]["waves_per_simd"] == 1.0


def test_trace_without_register_columns(tmp_path):
    from perfmodel.inspect.trace_occupancy import kernel_occupancy

    f = tmp_path / "1_kernel_trace.csv"
    f.write_text('"Kernel_Name","Start_Timestamp","End_Timestamp"\n"k",1,2\n')
    with pytest.raises(InputError, match="VGPR_Count"):
        kernel_occupancy(f, load_arch("mi300x"))


# --- assembly reader ------------------------------------------------------------------------------
ASM = """
\t.text
\t.globl\tk
k:                                      ; @k
; %bb.0:
\ts_load_dwordx4 s[0:3], s[0:1], 0x0
\tglobal_load_dwordx4 v[0:3], v0, s[0:1]
\ts_waitcnt vmcnt(0)
.Ltmp0:
\tv_exp_f32_e32 v1, v1
.LBB0_1:                                ; =>This Inner Loop Header: Depth=1
\tds_read_b128 v[4:7], v8
\tv_mfma_f32_32x32x8_bf16 a[0:15], v[4:5], v[6:7], a[0:15]
.Ltmp1:
\tv_mfma_f32_32x32x8bf16_1k a[0:15], v[4:5], v[6:7], a[0:15]
\tds_write_b64 v8, v[4:5]
\ts_cbranch_scc1 .LBB0_1
; %bb.2:                                ; %exit
\tv_mfma_f32_4x4x4_16b_f16 a[0:3], v[0:1], v[2:3], a[0:3]
\tglobal_store_short v0, v1, s[0:1]
\tbuffer_wbl2 sc1
\ts_endpgm
.Lfunc_end0:
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .vgpr_count: 24
    .agpr_count: 16
    .sgpr_count: 20
    .group_segment_fixed_size: 0
\t.end_amdgpu_metadata
"""


def test_instruction_mix_and_loops():
    from perfmodel.inspect.isa import instruction_mix, kernel_metadata, matrix_flops, resources

    mix = instruction_mix(ASM, "k")
    c = mix.counts()
    assert c["mfma"] == 3 and c["transcendental"] == 1 and c["global_load"] == 1 and c["global_store"] == 1
    assert c["lds_read"] == 1 and c["lds_write"] == 1 and c["s_waitcnt"] == 1 and c["cache_control"] == 1
    assert mix.loops == 1
    # the loop holds both 32x32x8 MFMAs (across the .Ltmp1 label), not the 4x4x4 one after it
    assert mix.loop_counts()["mfma"] == 2
    assert mix.widths("global_load") == {"b128": 1} and mix.widths("global_store") == {"b16": 1}
    assert matrix_flops("v_mfma_f32_32x32x8_bf16", 64) == 2 * 32 * 32 * 8
    assert matrix_flops("v_mfma_f32_4x4x4_16b_f16", 64) == 2 * 4 * 4 * 4 * 16
    assert matrix_flops("v_wmma_f32_16x16x16_f16", 32) == 2 * 16 * 16 * 16
    # per wave: the two loop MFMAs x 10 trips + the 4x4x4 one once
    assert mix.matrix_flops_per_wave(64, trips=10) == 10 * 2 * 16384 + 2048
    assert mix.global_bytes_per_wave(64, trips=10) == {"read": 16 * 64, "write": 2 * 64}
    assert resources(kernel_metadata(ASM)[0]) == {
        "name": "k",
        "vgpr": 24,
        "agpr": 16,
        "sgpr": 20,
        "lds_static": 0,
    }


def test_assembly_without_metadata():
    from perfmodel.inspect.isa import kernel_metadata

    with pytest.raises(InputError, match="amdgpu_metadata"):
        kernel_metadata("v_add_f32 v0, v1, v2\n")


def test_validate_reports_occupancy_per_kernel_from_the_trace(tmp_path, cli):
    """`perfmodel validate` on a rocprofv3 folder reads the register/LDS columns of its kernel
    trace and reports each kernel's waves per SIMD with the limiting resource."""
    import json

    f = tmp_path / "123_kernel_trace.csv"
    rows = [
        'KERNEL_DISPATCH,1,1,0,9,1,4,"gemm_kernel",1,100,2100,32768,0,128,0,38,512,1,1,524288,1,1',
        'KERNEL_DISPATCH,1,1,0,9,2,5,"fa_kernel",2,3000,9000,32768,0,256,8,100,256,1,1,8192,1,1',
    ]
    f.write_text(TRACE_HEADER + "\n" + "\n".join(rows) + "\n")
    r = cli("validate", tmp_path, "--arch", "mi300x", "--format", "json")
    assert r.exit_code == 0, r.output
    occ = {row["kernel"]: row["occupancy"] for row in json.loads(r.output)}
    assert occ["gemm_kernel"]["waves_per_simd"] == 4.0 and occ["gemm_kernel"]["limiter"] == "vgpr"
    assert occ["fa_kernel"]["waves_per_simd"] == 1.0
    table = cli("validate", tmp_path, "--arch", "mi300x").output
    assert "4/SIMD (vgpr)" in table
