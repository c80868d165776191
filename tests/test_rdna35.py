"""RDNA 3.5 APUs: the gfx1151/gfx1152/gfx1153 archspecs agree with the workloads' own sysinfo,
are picked from it, and the gfx1153 counter workload validates against its spec."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from data_paths import GFX1153_LONG, RDNA35_HALO_SYSINFO, RDNA35_KRACKAN2_SYSINFO
from perfmodel.arch import load_arch
from perfmodel.cli.main import cli
from perfmodel.readers.records import Workload
from perfmodel.readers.sysinfo import attach
from perfmodel.validate.workload_arch import pick_arch


def _wl(sysinfo_path) -> Workload:
    wl = Workload(path=str(sysinfo_path.parent), format="test")
    attach(wl, sysinfo_path)
    return wl


@pytest.mark.parametrize(
    ("path", "key", "gfx"),
    [(RDNA35_HALO_SYSINFO, "radeon8050s", "gfx1151"), (RDNA35_KRACKAN2_SYSINFO, "krackan2", "gfx1153")],
)
def test_arch_picked_from_sysinfo(path, key, gfx):
    wl = _wl(path)
    assert wl.gfx == gfx
    a, notes = pick_arch(wl)
    assert a.key == key
    assert any(gfx in n for n in notes)


@pytest.mark.parametrize(
    ("path", "key"), [(RDNA35_HALO_SYSINFO, "radeon8050s"), (RDNA35_KRACKAN2_SYSINFO, "krackan2")]
)
def test_spec_agrees_with_the_sysinfo_it_cites(path, key):
    s = _wl(path).sysinfo
    a = load_arch(key)
    assert a.cus == int(s["cu"])
    assert a.clock_hz == pytest.approx(float(s["raw"]["max_sclk"]) * 1e6)
    assert a.capacity("l2") == int(s["raw"]["gpu_l2"]) * 1024
    assert a.capacity("l1") == int(s["raw"]["gpu_l1"]) * 1024 * a.cus  # per CU in the spec, summed here


def test_gfx1152_spec_is_krackan_point():
    a = load_arch("radeon860m")
    assert a.gfx == "gfx1152"
    assert a.cus == 8
    assert a.bandwidth("vram") == pytest.approx(128e9)


def test_only_gfx1151_has_the_larger_vgpr_file():
    keys = ("radeon8050s", "radeon860m", "krackan2")
    vgprs = {k: load_arch(k).tree["occupancy"]["vgprs_per_lane"].value for k in keys}
    assert vgprs == {"radeon8050s": 1536, "radeon860m": 1024, "krackan2": 1024}


def test_gfx1153_counter_workload_validates_on_its_spec():
    # the lone counter CSV carries no gfx target: the arch comes from its machine's sysinfo
    a, _ = pick_arch(_wl(RDNA35_KRACKAN2_SYSINFO))
    res = CliRunner().invoke(cli, ["validate", str(GFX1153_LONG), "--arch", a.key, "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    text = json.dumps(doc)
    assert "krackan2" in text
    assert "vecCopy" in text


def test_gfx1153_counter_csv_alone_asks_for_the_arch():
    res = CliRunner().invoke(cli, ["validate", str(GFX1153_LONG)])
    assert res.exit_code == 2
    assert res.output.startswith("error:") and "--arch" in res.output and "Traceback" not in res.output
