"""Target descriptions as data: the CPUs and GPUs dlc generates code for, and their target
strings (TVM's `tvm.target.Target`, MLIR's DLTI target description).

- `CpuTarget` (`llvm -mcpu=znver3 -num-cores=2`): triple, CPU, features, threads, caches, and
  what follows from them (vector width and registers, FMA units, data layout); `KNOWN_CPUS` is
  the table of CPUs.
- `GpuTarget` (`cuda -arch=sm_90`, `opencl`): thread, block, grid and shared-memory limits.
- `parse_target(text)` reads a target string; `str(target)` writes the canonical one.
- `DEFAULT_CPU_TARGET` / `DEFAULT_GPU_TARGET`: what a pass compiles for when neither its
  `target` option nor the module's `dlc.target` attribute names a target. Never the host.
- `host()` describes the machine the process runs on; only the driver calls it.

Bottom layer: the standard library only (llvmlite is imported by `host()` when it runs).
"""

from __future__ import annotations

from dlc.target.cpu import ARCHES, KNOWN_CPUS, CpuInfo, CpuTarget, TargetError
from dlc.target.gpu import (
    CUDA_ARCHES,
    DEFAULT_CUDA_ARCH,
    NVPTX_TRIPLE,
    OPENCL,
    GpuTarget,
    cuda_target,
)
from dlc.target.host_cpu import host
from dlc.target.parse import HOST, Target, parse_cpu_target, parse_gpu_target, parse_target

DEFAULT_CPU_TARGET = CpuTarget(cpu="x86-64-v3")
"""`llvm -mcpu=x86-64-v3`: AVX2 and FMA, 256-bit vectors, 16 vector registers, the caches of a
typical x86-64 core (32 KiB L1d, 512 KiB L2), parallel loops on all the cores found at run time.
Code for it runs on every x86-64 host dlc is used on (Haswell, Zen and later)."""

DEFAULT_GPU_TARGET = CUDA_ARCHES[DEFAULT_CUDA_ARCH]
"""`cuda -arch=sm_80`: PTX for sm_80 runs on every later NVIDIA GPU."""

__all__ = [
    "ARCHES", "CUDA_ARCHES", "DEFAULT_CPU_TARGET", "DEFAULT_CUDA_ARCH", "DEFAULT_GPU_TARGET",
    "HOST", "KNOWN_CPUS", "NVPTX_TRIPLE", "OPENCL", "CpuInfo", "CpuTarget", "GpuTarget",
    "Target", "TargetError", "cuda_target", "host", "parse_cpu_target", "parse_gpu_target",
    "parse_target",
]
