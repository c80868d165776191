"""Inspect compiled GPU kernels without a GPU: registers, LDS, occupancy, instruction mix.

`catalog` finds the included Triton kernels (kernels/triton), `compile` builds them for a gfx
target with Triton's AMD backend, `isa` reads the AMDGCN assembly, `elf` reads the metadata note
of a code object (.hsaco) built anywhere, `occupancy` turns registers/LDS/workgroup size into
waves per SIMD with the limiting resource. Nothing here imports triton at module level.
"""
