"""Per-kernel timing of a compiled model (TVM's debug executor, `tvmc run --profile`).

CPU: the entry function's kernel calls are replayed one by one from Python, each on the buffers
the compiled model gives it (its inputs and outputs, the planned workspace at the call's
offsets, the weights by symbol), in program order so that every kernel sees the data it would
see; each call is timed on its own. The model itself runs as one native call, so these timings
add a few microseconds of Python per call that the model does not pay.

GPU (`GpuExecutable`, OpenCL or CUDA): the host plan runs as it does in a call, on buffers
uploaded once, with every launch timed on its own: the device is synchronized before and after
it, so each time is the kernel's plus one launch's latency (the whole model's time is measured
without those synchronizations). Only NumPy and ctypes are used.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from dlc.runtime.executable import Executable, ExecutableError, aligned_empty
from dlc.runtime.gpu_host import DeviceBackend, GpuExecutable, KernelArgument
from dlc.runtime.metadata import WEIGHT_ALIGNMENT, KernelCall


@dataclass(frozen=True)
class CallTiming:
    """The median time of one kernel call (None: the call cannot be replayed on its own)."""

    index: int
    call: KernelCall
    seconds: float | None


@dataclass(frozen=True)
class Profile:
    """Kernel timings and the whole model's median time, in seconds."""

    calls: tuple[CallTiming, ...]
    model_seconds: float

    @property
    def kernel_seconds(self) -> float:
        """The sum of the kernels' median times."""
        return sum(t.seconds for t in self.calls if t.seconds is not None)

    def table(self, top: int | None = None) -> str:
        """A text table: one row per call in program order (or the `top` slowest)."""
        rows = list(self.calls)
        if top is not None and top < 0:
            raise ExecutableError(f"expected a non-negative number of rows (top), found {top}")
        if top is not None:
            rows = sorted(rows, key=lambda t: -(t.seconds or 0.0))[:top]
        total = self.kernel_seconds or 1.0
        width = max([len("kernel"), *(len(t.call.kernel) for t in rows)])
        lines = [f"{'#':>3}  {'kernel':<{width}}  {'time (ms)':>9}  {'%':>5}  ONNX nodes"]
        for timing in rows:
            nodes = ", ".join(timing.call.nodes) or "-"
            if len(nodes) > 60:
                nodes = nodes[:57] + "..."
            if timing.seconds is None:
                time_text, share = "-", "-"
            else:
                time_text = f"{timing.seconds * 1e3:.3f}"
                share = f"{100 * timing.seconds / total:.1f}"
            lines.append(
                f"{timing.index:>3}  {timing.call.kernel:<{width}}  {time_text:>9}  {share:>5}  "
                f"{nodes}"
            )
        lines.append(f"     {'sum of kernels':<{width}}  {self.kernel_seconds * 1e3:>9.3f}")
        lines.append(f"     {'whole model (one call)':<{width}}  {self.model_seconds * 1e3:>9.3f}")
        return "\n".join(lines)


def median_seconds(function: Callable[[], object], repeat: int, *, warm_up: bool = True) -> float:
    """The median wall time of `repeat` calls of `function`, in seconds, after one untimed call
    (unless `warm_up` is False: the caller has warmed up already)."""
    check_repeat(repeat)
    if warm_up:
        function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _Replay:
    """The argument pointers of each replayable call, over buffers owned here."""

    def __init__(self, executable: Executable, inputs: Sequence[object]) -> None:
        model = executable.model
        if model is None:
            raise ExecutableError(
                f"@{executable.name} is not a compiled model (no dlc_model description): "
                "nothing to profile per kernel"
            )
        symbol_address = getattr(executable.native, "symbol_address", None)
        if symbol_address is None:
            raise ExecutableError("this executable cannot look up its kernels' symbols")
        self.inputs = executable.prepare_inputs(inputs)
        outputs = executable(*self.inputs)
        self.outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
        self.workspace = aligned_empty((max(model.workspace_bytes, 1),), np.dtype(np.uint8),
                                       WEIGHT_ALIGNMENT)
        self.model = model
        self.symbol_address: Callable[[str], int] = symbol_address

    def pointer(self, kind: str, index: int, offset: int, symbol: str) -> int:
        if kind == "input":
            return int(self.inputs[index].ctypes.data)
        if kind == "output":
            return int(self.outputs[index].ctypes.data)
        if kind == "workspace":
            return int(self.workspace.ctypes.data) + offset
        return self.symbol_address(symbol)

    def functions(self) -> list[Callable[[], Any] | None]:
        """One zero-argument callable per call (None where a call cannot be replayed)."""
        result: list[Callable[[], Any] | None] = []
        for call in self.model.calls:
            if not call.arguments:
                result.append(None)
                continue
            pointers = [self.pointer(a.kind, a.index, a.offset, a.symbol) for a in call.arguments]
            prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * len(pointers)))
            kernel = prototype(self.symbol_address(call.symbol))
            result.append(lambda kernel=kernel, pointers=pointers: kernel(*pointers))
        return result


def check_repeat(repeat: int) -> None:
    """Raises `ExecutableError` unless `repeat` (timed runs, of which a median) is positive."""
    if repeat < 1:
        raise ExecutableError(f"expected a positive number of timed runs (repeat), found {repeat}")


class _TimedBackend:
    """A device backend that runs each launch alone (synchronized before and after) and
    records its wall time; everything else is the wrapped backend's."""

    def __init__(self, backend: DeviceBackend) -> None:
        self.backend = backend
        self.launches: list[tuple[str, float]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def launch(
        self,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[KernelArgument],
    ) -> None:
        self.backend.synchronize()
        start = time.perf_counter()
        self.backend.launch(kernel, grid, block, args)
        self.backend.synchronize()
        self.launches.append((kernel, time.perf_counter() - start))


def _profile_gpu(executable: GpuExecutable, inputs: Sequence[object], repeat: int) -> Profile:
    """`profile` for a GPU executable: each launch of the host plan timed on its own."""
    call = executable.prepare(*inputs)
    timed = _TimedBackend(executable.backend)
    try:
        samples: list[list[float]] = []
        kernels: list[str] = []
        for run in range(repeat + 1):  # the first run warms up (weights, buffers, JIT)
            timed.launches = []
            executable.program.call(executable.name, call.buffers, timed)
            if run == 0:
                kernels = [kernel for kernel, _ in timed.launches]
                samples = [[] for _ in kernels]
                continue
            if [kernel for kernel, _ in timed.launches] != kernels:
                raise ExecutableError(f"@{executable.name} launched other kernels on another run")
            for index, (_, seconds) in enumerate(timed.launches):
                samples[index].append(seconds)

        def whole() -> None:
            call.run()
            executable.backend.synchronize()

        model_seconds = median_seconds(whole, repeat)
    finally:
        call.release()
    timings = tuple(
        CallTiming(index, KernelCall(kernel, (), (), kernel),
                   statistics.median(times) if times else None)
        for index, (kernel, times) in enumerate(zip(kernels, samples, strict=True))
    )
    return Profile(timings, model_seconds)


def profile(
    executable: Executable | GpuExecutable, inputs: Sequence[object], repeat: int = 10
) -> Profile:
    """Times each kernel call of a compiled model on `inputs`, and the whole model.

    Every call is replayed `repeat` times (after one warm-up pass) in program order; the result
    is each call's median. On a GPU, every launch of the entry's host plan is a call. Raises
    `ExecutableError` if the executable is not a compiled model, or `repeat` is not positive.
    """
    check_repeat(repeat)
    if isinstance(executable, GpuExecutable):
        return _profile_gpu(executable, inputs, repeat)
    replay = _Replay(executable, inputs)
    functions = replay.functions()
    for function in functions:
        if function is not None:
            function()
    samples: list[list[float]] = [[] for _ in functions]
    for _ in range(repeat):
        for index, function in enumerate(functions):
            if function is None:
                continue
            start = time.perf_counter()
            function()
            samples[index].append(time.perf_counter() - start)
    timings = tuple(
        CallTiming(index, call, statistics.median(times) if times else None)
        for index, (call, times) in enumerate(zip(replay.model.calls, samples, strict=True))
    )
    model_seconds = median_seconds(
        lambda: executable(*replay.inputs), repeat, warm_up=False
    )
    return Profile(timings, model_seconds)
