"""GPU target descriptions: the numbers that describe a GPU, as data (tinygrad's `Renderer` fields,
TVM's `Target` attributes such as `max_num_threads`, `max_shared_memory_per_block`).

Passes (`convert-loop-to-target-gpu`, `loop-gpu-default-schedule`) and emitters (`-t ptx`) read
these descriptions instead of holding hardware literals; the tuner reads them to bound its search
space. A description is looked up by name with `gpu_target("sm_80")`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.utils.exceptions import DiagnosticException


@dataclass(frozen=True)
class GpuTarget:
    """What code generation needs to know about one GPU (or one OpenCL device class).

    Attributes:
        name: the name passes and `-t ptx{arch=...}` use ("sm_80", "sm_90", "opencl").
        api: how kernels reach the device: "cuda" (PTX through the CUDA driver) or "opencl".
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

    name: str
    api: str
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
    def is_cuda(self) -> bool:
        """Whether kernels for this target are PTX run through the CUDA driver."""
        return self.api == "cuda"


_SM_80 = GpuTarget(
    name="sm_80",  # A100
    api="cuda",
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
    _SM_80, name="sm_90", multiprocessors=132, ptx_version="7.8", peak_fp32_tflops=67.0
)

_OPENCL = GpuTarget(
    # The portable OpenCL profile: limits every OpenCL 1.2 GPU meets (and PoCL on a CPU).
    name="opencl",
    api="opencl",
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

GPU_TARGETS: dict[str, GpuTarget] = {target.name: target for target in (_SM_80, _SM_90, _OPENCL)}
"""The GPU targets dlc knows, by name."""

DEFAULT_CUDA_ARCH = "sm_80"
"""The architecture `-t ptx` and the CUDA runtime use when none is given."""


def gpu_target(name: str) -> GpuTarget:
    """The description of the GPU target `name`, or a diagnostic listing the known ones."""
    target = GPU_TARGETS.get(name)
    if target is None:
        known = ", ".join(sorted(GPU_TARGETS))
        raise DiagnosticException(f"expected a GPU target among {known}, found '{name}'")
    return target
