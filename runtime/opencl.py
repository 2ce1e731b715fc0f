"""Run GPU programs through OpenCL with pyopencl (TVM's `opencl` runtime module).

`load_program(program)` takes a `GpuProgram` for `opencl` (OpenCL C and its host plan, made by
`dlc.driver.gpu`), builds the kernels once for an OpenCL device, and returns a `GpuExecutable`
whose host plan allocates `cl.Buffer`s and enqueues each launch as an ND-range of `grid * block`
work items in work-groups of `block`. Any OpenCL 1.2 platform works; on machines without a GPU,
PoCL (`pip install pocl-binary-distribution`) runs the kernels on the CPU.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from dlc.runtime.executable import ExecutableError
from dlc.runtime.gpu_host import (
    BufferPool,
    GpuExecutable,
    GpuProgram,
    HostProgram,
    KernelArgument,
)


class OpenCLError(ExecutableError):
    """pyopencl is missing, no OpenCL device exists, or a kernel failed to build."""


def _import_pyopencl() -> Any:
    try:
        import pyopencl
    except ImportError:
        raise OpenCLError(
            "the OpenCL runtime needs pyopencl (pip install 'dlc[opencl]': pyopencl and "
            "pocl-binary-distribution)"
        ) from None
    return pyopencl


def default_device() -> Any:
    """The first GPU of any OpenCL platform, else the first device (PoCL's CPU device)."""
    cl = _import_pyopencl()
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        raise OpenCLError(f"no OpenCL platform: {e}") from None
    devices = [device for platform in platforms for device in platform.get_devices()]
    if not devices:
        raise OpenCLError("no OpenCL device found")
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    return (gpus or devices)[0]


_PROBE_KERNEL = "__kernel void dlc_probe(__global float *a) { a[get_global_id(0)] += 1.0f; }"


@functools.cache
def unavailable_reason() -> str | None:
    """Why OpenCL programs cannot run in this process, or None when they can: pyopencl
    missing, no device, or a device whose compiler cannot build a one-line kernel (PoCL 3.0,
    built on LLVM 14, fails on CPUs newer than LLVM 14 knows: "unknown target CPU
    'generic'"). Probed once per process; tests and tools skip with this reason."""
    device: Any = None
    try:
        cl = _import_pyopencl()
        device = default_device()
        cl.Program(cl.Context([device]), _PROBE_KERNEL).build()
    except OpenCLError as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - pyopencl's build and context errors
        lines = [line for line in str(e).splitlines() if "error" in line.lower()]
        detail = lines[-1].strip() if lines else str(e).splitlines()[0]
        name = "" if device is None else f" {device.name.strip()!r}"
        return f"the OpenCL device{name} cannot build a kernel: {detail}"
    return None


class OpenCLBackend:
    """A `DeviceBackend` over one OpenCL context, queue and built program."""

    def __init__(self, source: str, device: Any | None = None) -> None:
        cl = self.cl = _import_pyopencl()
        self.device = device if device is not None else default_device()
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.context)
        try:
            self.program = cl.Program(self.context, source).build()
        except cl.Error as e:
            raise OpenCLError(f"the OpenCL C program failed to build: {e}") from None
        self._kernels: dict[str, Any] = {}
        self._pool = BufferPool(
            lambda size: cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size)
        )

    def kernel(self, name: str) -> Any:
        if name not in self._kernels:
            self._kernels[name] = self.cl.Kernel(self.program, name)
        return self._kernels[name]

    def allocate(self, nbytes: int) -> Any:
        """A buffer, reused from freed ones of the same size."""
        return self._pool.allocate(nbytes)

    def upload(self, array: np.ndarray) -> Any:
        buffer = self.allocate(array.nbytes)
        self.write(buffer, array)
        return buffer

    def write(self, buffer: Any, array: np.ndarray) -> None:
        if array.nbytes:
            self.cl.enqueue_copy(self.queue, buffer, np.ascontiguousarray(array))

    def read(self, buffer: Any, array: np.ndarray) -> None:
        if array.nbytes:
            self.cl.enqueue_copy(self.queue, array, buffer)
        self.queue.finish()

    def free(self, buffer: Any) -> None:
        self._pool.free(buffer)

    def launch(
        self,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[KernelArgument],
    ) -> None:
        function = self.kernel(kernel)
        function.set_args(*(arg.value for arg in args))
        global_size = tuple(g * b for g, b in zip(grid, block, strict=True))
        self.cl.enqueue_nd_range_kernel(self.queue, function, global_size, block)

    def synchronize(self) -> None:
        self.queue.finish()


def load_program(
    program: GpuProgram, entry: str | None = None, device: Any | None = None
) -> GpuExecutable:
    """An executable of `program` (OpenCL C kernels and their host plan) on an OpenCL device."""
    if program.target != "opencl":
        raise OpenCLError(f"expected a program for opencl, found one for {program.target}")
    backend = OpenCLBackend(program.source, device)
    return GpuExecutable(HostProgram(program.plan), backend, entry, program.source)
