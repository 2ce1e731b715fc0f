"""GPU target descriptions: the numbers that describe a GPU, as data (tinygrad's `Renderer`
fields, TVM's `cuda`/`opencl` targets with `max_num_threads`, `max_shared_memory_per_block`).

Passes (`loop-gpu-default-schedule`, `convert-loop-to-target-gpu`) and emitters (`-t ptx`) read
these descriptions instead of holding hardware literals; the tuner reads them to bound its search
space. `cuda -arch=sm_90` and `opencl` are their target strings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dlc.target.cpu import TargetError


@dataclass(frozen=True)
class GpuTarget:
    """What code generation needs to know about one GPU (or one OpenCL device class).

    Attributes:
        kind: how kernels reach the device: `cuda` (PTX through the CUDA driver) or `opencl`.
        arch: the CUDA architecture (`sm_80`, `sm_90`); `opencl` for the OpenCL profile.
        max_threads_per_block: the most threads one block (work-group) may have.
        max_block_dims: the most threads per block along x, y, z.
        max_grid_dims: the most blocks per grid along x, y, z.
        shared_memory_bytes: static shared (OpenCL `__local`) memory one block may allocate.
        warp_size: threads that execute in lock step (a warp; 1 where there is no such notion).
        vector_bytes: the widest load or store one thread issues (16: `ld.global.v4.f32`, float4).
        registers_per_thread: the most 32-bit registers one thread may use.
        multiprocessors: streaming multiprocessors (compute units), to size grids.
        ptx_version: the PTX ISA version LLVM emits for this architecture ("" for OpenCL).
        fp16: whether the device computes in f16 natively.
        peak_fp32_tflops: dense fp32 peak (no tensor cores), for benchmark ratios.
    """

    kind: str
    arch: str
    max_threads_per_block: int
    max_block_dims: tuple[int, int, int]
    max_grid_dims: tuple[int, int, int]
    shared_memory_bytes: int
    warp_size: int
    vector_bytes: int
    registers_per_thread: int
    multiprocessors: int
    ptx_version: str
    fp16: bool
    peak_fp32_tflops: float

    @property
    def name(self) -> str:
        """The short name diagnostics use (`sm_80`, `opencl`)."""
        return self.arch

    @property
    def is_cuda(self) -> bool:
        """Whether kernels for this target are PTX run through the CUDA driver."""
        return self.kind == "cuda"

    @property
    def triple(self) -> str:
        """LLVM's triple for the kernels (`nvptx64-nvidia-cuda`; "" for OpenCL C)."""
        return NVPTX_TRIPLE if self.is_cuda else ""

    @property
    def features(self) -> frozenset[str]:
        """The architectures whose instructions kernels may use, `sm_N` for every N up to this
        one's (an intrinsic needing `sm_80`, PTX `mma.sync` m16n8k16, runs on sm_90); none for
        OpenCL."""
        if not self.is_cuda:
            return frozenset()
        number = int("".join(c for c in self.arch.removeprefix("sm_") if c.isdigit()))
        return frozenset(f"sm_{n}" for n in range(50, number + 1))

    def __str__(self) -> str:
        return f"cuda -arch={self.arch}" if self.is_cuda else "opencl"


NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
"""LLVM's triple for CUDA kernels."""

_SM_80 = GpuTarget(
    kind="cuda",
    arch="sm_80",  # A100
    max_threads_per_block=1024,
    max_block_dims=(1024, 1024, 64),
    max_grid_dims=(2**31 - 1, 65535, 65535),
    shared_memory_bytes=48 * 1024,
    warp_size=32,
    vector_bytes=16,
    registers_per_thread=255,
    multiprocessors=108,
    ptx_version="7.0",
    fp16=True,
    peak_fp32_tflops=19.5,
)

_SM_90 = replace(  # H100 / H200: the CUDA limits of sm_80, more and faster multiprocessors
    _SM_80, arch="sm_90", multiprocessors=132, ptx_version="7.8", peak_fp32_tflops=67.0
)

CUDA_ARCHES: dict[str, GpuTarget] = {target.arch: target for target in (_SM_80, _SM_90)}
"""The CUDA architectures `cuda -arch=` accepts."""

DEFAULT_CUDA_ARCH = "sm_80"
"""The architecture of `cuda` without `-arch` (PTX for sm_80 runs on every later GPU)."""

OPENCL = GpuTarget(
    # The portable OpenCL profile: limits every OpenCL 1.2 GPU meets (and PoCL on a CPU).
    kind="opencl",
    arch="opencl",
    max_threads_per_block=256,
    max_block_dims=(256, 256, 64),
    max_grid_dims=(2**31 - 1, 2**31 - 1, 2**31 - 1),
    shared_memory_bytes=32 * 1024,
    warp_size=1,
    vector_bytes=16,
    registers_per_thread=64,
    multiprocessors=8,
    ptx_version="",
    fp16=False,
    peak_fp32_tflops=0.0,
)
"""`opencl`: the portable OpenCL profile."""


def cuda_target(arch: str = DEFAULT_CUDA_ARCH) -> GpuTarget:
    """The description of the CUDA architecture `arch`, or an error naming the known ones."""
    target = CUDA_ARCHES.get(arch)
    if target is None:
        raise TargetError(
            f"expected a CUDA architecture for -arch ({', '.join(CUDA_ARCHES)}), found '{arch}'"
        )
    return target
