"""Where the test data lives: the one definition of every data folder the tests read.

A module of constants rather than fixtures because ``pytest.mark.parametrize`` needs the paths
when a test module is collected. Origins of the rocprof files: tests/data/rocprof/README.md.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
ROCPROF = DATA / "rocprof"
VENDOR_PEAKS = DATA / "vendor_peaks"  # published vendor figures, one YAML per GPU

# rocprof-compute 2022: mixbench on MI210 (gfx90a): v1 headers, timestamps.csv, roofline.csv,
# and prev_analysis/ holding rocprof-compute's own analysis of the same run
MIXBENCH_MI200 = ROCPROF / "rocprofiler-compute/legacy_2022/mixbench/mi200"

# rocprof-compute 2024 test workloads: vcopy on MI100, MI200, MI300A_A1, MI300X_A1 (wide CSV)
VCOPY_2024 = ROCPROF / "rocprofiler-compute/tests_workloads_2024/vcopy"
VCOPY_MI200 = VCOPY_2024 / "MI200"

# rocm-systems 2025: vcopy on MI350 (per-pass pmc_perf_N.csv) and MI300X in rocpd (long) mode
VCOPY_2025 = ROCPROF / "rocm-systems/tests_workloads_2025/vcopy"
VCOPY_MI350 = VCOPY_2025 / "MI350"
VCOPY_MI300X_LONG = VCOPY_2025 / "MI300X_A1_rocpd" / "pmc_perf.csv"

# rocm-systems 2026 index: a long counter CSV from gfx1153 (RDNA 3.5, Krackan)
GFX1153_LONG = (
    ROCPROF / "rocm-systems/index_2026/tests/workloads/ipblocks_CU/RDNA35_KRACKAN2/results_pmc_perf_1.csv"
)

# rocm-systems 2026 index: the sysinfo.csv of two RDNA 3.5 APU workloads (gfx1151 Strix Halo,
# gfx1153 Krackan 2); the Krackan 2 one is from the same machine and commit as GFX1153_LONG
RDNA35_HALO_SYSINFO = ROCPROF / "rocm-systems/index_2026/tests/workloads/dispatch_0/RDNA35_HALO/sysinfo.csv"
RDNA35_KRACKAN2_SYSINFO = ROCPROF / "rocm-systems/index_2026/tests/workloads/kernel/RDNA35_KRACKAN2/sysinfo.csv"

# derived from VCOPY_MI300X_LONG by scripts/make_pass_fixture.py: a rocprofv3 output folder of
# two counter passes (pass_1/<host>/, pass_2/<host>/), see derived/README.md
VCOPY_MI300X_2PASS = ROCPROF / "derived" / "vcopy_MI300X_2pass"
