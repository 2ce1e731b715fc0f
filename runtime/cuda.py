"""Run GPU modules on NVIDIA GPUs through the CUDA driver API with cuda-python (TVM's `cuda`
runtime module: `cuModuleLoadData` + `cuLaunchKernel`).

`load_program(program)` takes a `GpuProgram` for `cuda` (PTX for the device's architecture and
its host plan, made by `dlc.driver.gpu`), loads the PTX with `cuModuleLoadData` (the driver
JIT-compiles it), and returns a `GpuExecutable` whose host plan allocates device memory with
`cuMemAlloc` and runs each launch with `cuLaunchKernel` on one stream. Needs
`pip install cuda-python` and an NVIDIA driver; `cuda_unavailable_reason()` says why it cannot
run where it cannot (tests skip with it), `require_cuda()` raises it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
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


class CudaError(ExecutableError):
    """cuda-python is missing, there is no usable GPU, or a driver call failed."""


def _driver() -> Any:
    try:
        from cuda.bindings import driver  # cuda-python >= 12.6
    except ImportError:
        try:
            from cuda import cuda as driver  # older cuda-python
        except ImportError:
            raise CudaError(
                "the CUDA runtime needs cuda-python (pip install cuda-python) and an NVIDIA "
                "driver"
            ) from None
    return driver


def _check(result: Any, call: str) -> Any:
    """The values of a cuda-python call's `(error, *values)` result, or a CudaError."""
    driver = _driver()
    error, *values = result if isinstance(result, tuple) else (result,)
    if error != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(error)
        text = name.decode() if isinstance(name, bytes) else str(name)
        raise CudaError(f"{call} failed: {text}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def cuda_unavailable_reason() -> str | None:
    """Why CUDA kernels cannot run here (no cuda-python, no driver, no device), or None."""
    try:
        driver = _driver()
        _check(driver.cuInit(0), "cuInit")
        count = _check(driver.cuDeviceGetCount(), "cuDeviceGetCount")
    except CudaError as e:
        return str(e)
    except Exception as e:  # a driver library that fails to load
        return f"the CUDA driver cannot be used: {e}"
    if not count:
        return "no CUDA device"
    return None


def require_cuda() -> None:
    """Raise a `CudaError` saying why CUDA kernels cannot run here, if they cannot."""
    reason = cuda_unavailable_reason()
    if reason is not None:
        raise CudaError(f"cannot run on CUDA: {reason}")


def device_arch(device: int = 0) -> str:
    """The dlc GPU target of a device: sm_90 for compute capability 9.x and above, else sm_80
    (PTX for sm_80 is JIT-compiled by the driver for any newer GPU)."""
    driver = _driver()
    _check(driver.cuInit(0), "cuInit")
    handle = _check(driver.cuDeviceGet(device), "cuDeviceGet")
    attribute = driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    major = _check(driver.cuDeviceGetAttribute(attribute, handle), "cuDeviceGetAttribute")
    return "sm_90" if major >= 9 else "sm_80"


class CudaBackend:
    """A `DeviceBackend` over one CUDA context (the device's primary context), module, stream."""

    def __init__(self, ptx: str, device: int = 0) -> None:
        driver = self.driver = _driver()
        _check(driver.cuInit(0), "cuInit")
        self.device = _check(driver.cuDeviceGet(device), "cuDeviceGet")
        self.context = _check(driver.cuDevicePrimaryCtxRetain(self.device),
                              "cuDevicePrimaryCtxRetain")
        _check(driver.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        self.module = _check(driver.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
        self.stream = _check(driver.cuStreamCreate(0), "cuStreamCreate")
        self._functions: dict[str, Any] = {}
        self._pool = BufferPool(
            lambda size: _check(driver.cuMemAlloc(size), "cuMemAlloc"), key=int
        )

    def function(self, name: str) -> Any:
        if name not in self._functions:
            self._functions[name] = _check(
                self.driver.cuModuleGetFunction(self.module, name.encode()), "cuModuleGetFunction"
            )
        return self._functions[name]

    def allocate(self, nbytes: int) -> Any:
        """A device buffer, reused from freed ones of the same size (cuMemFree synchronizes)."""
        return self._pool.allocate(nbytes)

    def upload(self, array: np.ndarray) -> Any:
        buffer = self.allocate(array.nbytes)
        self.write(buffer, array)
        return buffer

    def write(self, buffer: Any, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array)
        if data.nbytes:
            _check(self.driver.cuMemcpyHtoD(buffer, data.ctypes.data, data.nbytes), "cuMemcpyHtoD")

    def read(self, buffer: Any, array: np.ndarray) -> None:
        self.synchronize()
        if array.nbytes:
            _check(self.driver.cuMemcpyDtoH(array.ctypes.data, buffer, array.nbytes),
                   "cuMemcpyDtoH")

    def free(self, buffer: Any) -> None:
        self._pool.free(buffer)

    def release(self) -> None:
        """Return every pooled buffer to the driver."""
        for buffer in self._pool.drain():
            _check(self.driver.cuMemFree(buffer), "cuMemFree")

    def launch(
        self,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[KernelArgument],
    ) -> None:
        values: list[Any] = []
        for arg in args:
            if arg.is_buffer:
                values.append(ctypes.c_uint64(int(arg.value)))
            else:
                assert arg.dtype is not None
                values.append(np.ctypeslib.as_ctypes_type(arg.dtype)(arg.value.item()))
        pointers = (ctypes.c_void_p * max(1, len(values)))(
            *[ctypes.addressof(value) for value in values]
        )
        _check(
            self.driver.cuLaunchKernel(
                self.function(kernel), *grid, *block, 0, self.stream, ctypes.addressof(pointers), 0
            ),
            f"cuLaunchKernel({kernel})",
        )

    def synchronize(self) -> None:
        _check(self.driver.cuStreamSynchronize(self.stream), "cuStreamSynchronize")

    def hold(self, buffer: Any) -> bool:
        """Keep a freed pooled buffer out of reuse (a CUDA graph uses it) until freed again."""
        return self._pool.hold(buffer)

    def capture(self, run: Callable[[], None]) -> CudaGraph:
        """The launches `run()` enqueues on the stream, recorded as a CUDA graph
        (`cuStreamBeginCapture` ... `cuStreamEndCapture`, `cuGraphInstantiate`)."""
        driver = self.driver
        mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        handed_out: list[Any] = []
        _check(driver.cuStreamBeginCapture(self.stream, mode), "cuStreamBeginCapture")
        self._pool.handed_out = handed_out
        try:
            run()
        except BaseException:
            error, graph = driver.cuStreamEndCapture(self.stream)
            if error == driver.CUresult.CUDA_SUCCESS and graph is not None:
                driver.cuGraphDestroy(graph)
            raise
        finally:
            self._pool.handed_out = None
        graph = _check(driver.cuStreamEndCapture(self.stream), "cuStreamEndCapture")
        instantiate = getattr(driver, "cuGraphInstantiateWithFlags", driver.cuGraphInstantiate)
        try:
            executable = _check(instantiate(graph, 0), "cuGraphInstantiate")
        except CudaError:
            driver.cuGraphDestroy(graph)
            raise
        return CudaGraph(self, graph, executable, handed_out)

    def elapsed_ms(self, run: Any, repeat: int = 10) -> float:
        """The mean time of `repeat` calls of `run()` between two CUDA events, in ms."""
        driver = self.driver
        start = _check(driver.cuEventCreate(0), "cuEventCreate")
        stop = _check(driver.cuEventCreate(0), "cuEventCreate")
        _check(driver.cuEventRecord(start, self.stream), "cuEventRecord")
        for _ in range(repeat):
            run()
        _check(driver.cuEventRecord(stop, self.stream), "cuEventRecord")
        _check(driver.cuEventSynchronize(stop), "cuEventSynchronize")
        elapsed = _check(driver.cuEventElapsedTime(start, stop), "cuEventElapsedTime")
        return float(elapsed) / repeat


class CudaGraph:
    """An instantiated CUDA graph of recorded launches, replayed on its backend's stream;
    `buffers`: the pooled buffers the recording was handed."""

    def __init__(self, backend: CudaBackend, graph: Any, executable: Any, buffers: list[Any]
                 ) -> None:
        self.backend = backend
        self.graph = graph
        self.executable = executable
        self.buffers = buffers

    def launch(self) -> None:
        _check(self.backend.driver.cuGraphLaunch(self.executable, self.backend.stream),
               "cuGraphLaunch")

    def release(self) -> None:
        driver = self.backend.driver
        self.backend.synchronize()
        _check(driver.cuGraphExecDestroy(self.executable), "cuGraphExecDestroy")
        _check(driver.cuGraphDestroy(self.graph), "cuGraphDestroy")


def load_program(program: GpuProgram, entry: str | None = None, device: int = 0) -> GpuExecutable:
    """An executable of `program` (PTX kernels and their host plan) on CUDA device `device`."""
    if program.target != "cuda":
        raise CudaError(f"expected a program for cuda, found one for {program.target}")
    require_cuda()
    backend = CudaBackend(program.source, device)
    return GpuExecutable(HostProgram(program.plan), backend, entry, program.source)
