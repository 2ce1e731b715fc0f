"""The host side of a GPU program: its functions run as a plan of buffer allocations and kernel
launches on a device backend (TVM's graph executor over device functions, reduced to
destination-passing style).

A `GpuProgram` is plain data: the kernels' source (OpenCL C or PTX) and a `HostPlan`, one
`HostFunction` per host function of the lowered module, each a list of steps over numbered
slots (its arguments first): `Alloc`, `Free`, `Scalar`, `Weight` (a constant array, uploaded
once per device), `Launch` (kernel name, grid, block, arguments) and `Call`; the driver
(`dlc.driver.gpu`) makes it from the IR. `GpuExecutable` calls an entry function on NumPy arrays
through a `DeviceBackend` (OpenCL in `runtime.opencl`, CUDA in `runtime.cuda`): it uploads the
inputs, allocates the outputs, runs the steps, and downloads the outputs. Only NumPy and the
standard library are imported here: no compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from dlc.runtime.executable import ExecutableError
from dlc.runtime.metadata import FunctionSignature

# ----------------------------------------------------------------------------------------------
# The host plan: plain data
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alloc:
    """Slot `result` <- a new device buffer of `nbytes` bytes (contents undefined)."""

    result: int
    nbytes: int


@dataclass(frozen=True)
class Free:
    """Release the buffer in slot `buffer` (made by an `Alloc`)."""

    buffer: int


@dataclass(frozen=True)
class Scalar:
    """Slot `result` <- the scalar `value` (a host constant passed to a launch or a call)."""

    result: int
    value: int | float


@dataclass(frozen=True)
class Weight:
    """Slot `result` <- the device copy of the plan's constant `name` (uploaded once)."""

    result: int
    name: str


@dataclass(frozen=True)
class LaunchArgument:
    """A launch argument: the value in slot `slot`, a device buffer, or a scalar of NumPy dtype
    `dtype` (a dtype name: `float32`, `int64`, ...)."""

    slot: int
    dtype: str | None = None


@dataclass(frozen=True)
class Launch:
    """Run kernel `kernel` on a grid of `grid` blocks of `block` threads."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[LaunchArgument, ...]


@dataclass(frozen=True)
class Call:
    """Run host function `callee` on the values in slots `args`."""

    callee: str
    args: tuple[int, ...]


Step = Alloc | Free | Scalar | Weight | Launch | Call
"""One step of a host function."""


@dataclass(frozen=True)
class HostFunction:
    """A host function: slots 0 to `num_arguments - 1` hold its arguments (device buffers and
    scalars), the steps fill the others in order; it returns nothing."""

    name: str
    num_arguments: int
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class HostPlan:
    """The host functions of a GPU program, the constant arrays they use by name, and the
    signatures of its entry functions."""

    functions: Mapping[str, HostFunction]
    constants: Mapping[str, np.ndarray]
    signatures: Mapping[str, FunctionSignature]


@dataclass(frozen=True)
class GpuProgram:
    """What a GPU runtime loads: the kernels' source for `target` (`opencl`: OpenCL C; `cuda`:
    PTX) and the host plan that launches them."""

    target: str
    source: str
    plan: HostPlan


class HostProgramError(ExecutableError):
    """A host function holds an op the GPU runtimes cannot run."""


@dataclass(frozen=True)
class KernelArgument:
    """One argument of a launch as the backend receives it: a device buffer or a scalar with
    its NumPy dtype."""

    value: Any
    dtype: np.dtype[Any] | None = None

    @property
    def is_buffer(self) -> bool:
        return self.dtype is None


class DeviceBackend(Protocol):
    """What a GPU runtime provides to run host plans."""

    def allocate(self, nbytes: int) -> Any:
        """A new device buffer of `nbytes` bytes (contents undefined)."""
        ...

    def upload(self, array: np.ndarray) -> Any:
        """A new device buffer holding `array`'s bytes."""
        ...

    def write(self, buffer: Any, array: np.ndarray) -> None:
        """Copy `array` into the existing device buffer."""
        ...

    def read(self, buffer: Any, array: np.ndarray) -> None:
        """Copy the device buffer into `array` (waiting for the launches before it)."""
        ...

    def free(self, buffer: Any) -> None:
        """Release a buffer made by `allocate`."""
        ...

    def launch(
        self,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[KernelArgument],
    ) -> None:
        """Enqueue kernel `kernel` on a grid of blocks."""
        ...

    def synchronize(self) -> None:
        """Wait for every enqueued launch."""
        ...


class LaunchGraph(Protocol):
    """Launches recorded once and replayed as a unit (a CUDA graph).

    Attributes:
        buffers: the pooled buffers handed out while the launches were recorded.
    """

    buffers: list[Any]

    def launch(self) -> None:
        """Enqueue every recorded launch again, in order."""
        ...

    def release(self) -> None:
        """Free the graph."""
        ...


class GraphBackend(DeviceBackend, Protocol):
    """A backend that can also record launches into a graph (CUDA; not OpenCL)."""

    def capture(self, run: Callable[[], None]) -> LaunchGraph:
        """The launches `run()` enqueues, recorded instead of run, and the pooled buffers it
        was handed (it must not allocate or copy: buffers come from the pool, weights are
        already on the device)."""
        ...

    def hold(self, buffer: Any) -> bool:
        """Keep a freed pooled buffer out of reuse (a graph uses it) until `free`d again;
        False if it is not a freed pooled buffer."""
        ...


class BufferPool:
    """Device buffers by size, reused once freed: device allocation is slow (and on CUDA
    `cuMemFree` synchronizes), and a host plan allocates the same sizes on every call.

    `make(size)` allocates a new device buffer of `size` bytes; `key(buffer)` is what the pool
    remembers a buffer's size by (the default, `id`, works for buffer objects handed back as
    they were handed out).
    """

    def __init__(self, make: Callable[[int], Any], key: Callable[[Any], Hashable] = id) -> None:
        self._make = make
        self._key = key
        self._free: dict[int, list[Any]] = {}
        self._sizes: dict[Hashable, int] = {}
        self.handed_out: list[Any] | None = None
        """Where set (a list), every buffer `allocate` hands out is appended to it."""

    def allocate(self, nbytes: int) -> Any:
        """A buffer of at least one byte, reused from freed ones of the same size."""
        size = max(1, nbytes)
        free = self._free.get(size)
        if free:
            buffer = free.pop()
        else:
            buffer = self._make(size)
            self._sizes[self._key(buffer)] = size
        if self.handed_out is not None:
            self.handed_out.append(buffer)
        return buffer

    def free(self, buffer: Any) -> None:
        """Keep `buffer` (made by `allocate`) for reuse."""
        self._free.setdefault(self._sizes[self._key(buffer)], []).append(buffer)

    def hold(self, buffer: Any) -> bool:
        """Take the freed `buffer` out of reuse until it is `free`d again; False if it is not
        a freed buffer of this pool."""
        key = self._key(buffer)
        free = self._free.get(self._sizes.get(key, -1), [])
        index = next((i for i, b in enumerate(free) if self._key(b) == key), None)
        if index is None:
            return False
        del free[index]
        return True

    def drain(self) -> list[Any]:
        """The freed buffers, forgotten by the pool (for the caller to release)."""
        buffers = [buffer for same_size in self._free.values() for buffer in same_size]
        for buffer in buffers:
            del self._sizes[self._key(buffer)]
        self._free.clear()
        return buffers


Environment = dict[int, Any]
"""The values of a host function's slots while it runs."""

Action = Callable[[Environment, DeviceBackend], None]
"""A step, ready to run."""


class HostProgram:
    """The host functions of a GPU program, each step bound once to what it does."""

    def __init__(self, plan: HostPlan) -> None:
        self.plan = plan
        self.signatures = plan.signatures
        self._uploaded: dict[tuple[int, str], Any] = {}
        self._actions = {
            name: [self._action(step) for step in function.steps]
            for name, function in plan.functions.items()
        }

    def call(self, name: str, args: Sequence[Any], backend: DeviceBackend) -> None:
        """Run host function @name with device buffers (and scalars) `args`."""
        actions = self._actions.get(name)
        if actions is None:
            raise HostProgramError(f"expected a host function @{name}, found none")
        expected = self.plan.functions[name].num_arguments
        if len(args) != expected:
            raise HostProgramError(f"@{name} takes {expected} arguments, found {len(args)}")
        env: Environment = dict(enumerate(args))
        for action in actions:
            action(env, backend)

    def _action(self, step: Step) -> Action:
        if isinstance(step, Alloc):
            result, size = step.result, step.nbytes
            return lambda env, backend: env.__setitem__(result, backend.allocate(size))
        if isinstance(step, Free):
            buffer = step.buffer
            return lambda env, backend: backend.free(env[buffer])
        if isinstance(step, Scalar):
            result, value = step.result, step.value
            return lambda env, backend: env.__setitem__(result, value)
        if isinstance(step, Weight):
            return self._weight(step)
        if isinstance(step, Launch):
            return self._launch(step)
        callee, arguments = step.callee, step.args
        return lambda env, backend: self.call(callee, [env[a] for a in arguments], backend)

    def _weight(self, step: Weight) -> Action:
        result, name = step.result, step.name
        if name not in self.plan.constants:
            raise HostProgramError(f"expected a constant '{name}' in the host plan, found none")

        def weight(env: Environment, backend: DeviceBackend) -> None:
            key = (id(backend), name)
            if key not in self._uploaded:
                array = np.ascontiguousarray(self.plan.constants[name])
                self._uploaded[key] = backend.upload(array)
            env[result] = self._uploaded[key]

        return weight

    def _launch(self, step: Launch) -> Action:
        kernel, grid, block = step.kernel, step.grid, step.block
        arguments = [(a.slot, None if a.dtype is None else np.dtype(a.dtype)) for a in step.args]

        def launch(env: Environment, backend: DeviceBackend) -> None:
            args = [
                KernelArgument(env[slot]) if dtype is None
                else KernelArgument(dtype.type(env[slot]), dtype)
                for slot, dtype in arguments
            ]
            backend.launch(kernel, grid, block, args)

        return launch


class GpuExecutable:
    """One entry function of a GPU module, callable on NumPy arrays like `runtime.Executable`.

    `f(a, b)` checks the inputs against the signature, copies them to the device, allocates the
    outputs there, runs the host plan (kernel launches), and returns the outputs as NumPy arrays
    (a tuple when there are several).
    """

    def __init__(
        self, program: HostProgram, backend: DeviceBackend, entry: str | None, source: str
    ) -> None:
        self.program = program
        self.backend = backend
        self.source = source
        names = ", ".join(f"@{n}" for n in sorted(program.signatures)) or "none"
        if entry is None:
            if len(program.signatures) != 1:
                raise ExecutableError(
                    f"expected one entry function or an explicit entry, found {names}"
                )
            entry = next(iter(program.signatures))
        if entry not in program.signatures:
            raise ExecutableError(f"no entry function @{entry} (entry functions: {names})")
        self.signature = program.signatures[entry]

    @property
    def name(self) -> str:
        """The entry function's name."""
        return self.signature.name

    def entry(self, name: str) -> GpuExecutable:
        """Another entry function of the same module (sharing the device program)."""
        executable = GpuExecutable(self.program, self.backend, name, self.source)
        executable.exporter = self.exporter
        return executable

    def __call__(
        self, *inputs: object, out: Sequence[np.ndarray] | None = None
    ) -> np.ndarray | tuple[np.ndarray, ...]:
        signature = self.signature
        if len(inputs) != len(signature.inputs):
            names = ", ".join(arg.name for arg in signature.inputs)
            raise ExecutableError(
                f"@{self.name} expects {len(signature.inputs)} inputs ({names}), "
                f"found {len(inputs)}"
            )
        arrays = [self._check(i, value, "input") for i, value in enumerate(inputs)]
        first = len(arrays)
        if out is None:
            outputs = [
                np.empty(spec.shape, dtype=np.dtype(spec.dtype)) for spec in signature.outputs
            ]
        else:
            if len(out) != len(signature.outputs):
                raise ExecutableError(
                    f"@{self.name} has {len(signature.outputs)} outputs, found {len(out)} in out="
                )
            outputs = [self._check(first + i, array, "output") for i, array in enumerate(out)]
        backend = self.backend
        buffers = [backend.upload(array) for array in arrays]
        buffers += [backend.allocate(max(1, array.nbytes)) for array in outputs]
        try:
            self.program.call(self.name, buffers, backend)
            for buffer, array in zip(buffers[first:], outputs, strict=True):
                backend.read(buffer, array)
        finally:
            for buffer in buffers:
                backend.free(buffer)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    @property
    def input_names(self) -> list[str]:
        """The entry's input names, in order."""
        return [arg.name for arg in self.signature.inputs]

    @property
    def output_names(self) -> list[str]:
        """The entry's output names, in order."""
        return [arg.name for arg in self.signature.outputs]

    def run(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Runs on inputs given by name; returns the outputs by name."""
        names = self.input_names
        missing = [name for name in names if name not in inputs]
        unknown = sorted(set(inputs) - set(names))
        if missing or unknown:
            raise ExecutableError(
                f"@{self.name} expects inputs {', '.join(repr(n) for n in names)}: missing "
                f"{missing or 'none'}, unknown {unknown or 'none'}"
            )
        results = self(*(inputs[name] for name in names))
        outputs = results if isinstance(results, tuple) else (results,)
        return dict(zip(self.output_names, outputs, strict=True))

    def prepare(self, *inputs: object) -> DeviceCall:
        """Upload `inputs` and allocate the outputs once, for timing the kernels alone:
        `call = f.prepare(a, b); call.run(); call.outputs()`."""
        arrays = [self._check(i, value, "input") for i, value in enumerate(inputs)]
        outputs = [np.empty(spec.shape, dtype=np.dtype(spec.dtype))
                   for spec in self.signature.outputs]
        buffers = [self.backend.upload(array) for array in arrays]
        buffers += [self.backend.allocate(max(1, array.nbytes)) for array in outputs]
        return DeviceCall(self, buffers, outputs)

    def _check(self, index: int, value: object, role: str) -> np.ndarray:
        spec = self.signature.arguments[index]
        array = np.ascontiguousarray(np.asarray(value))
        what = f"{role} {index} ('{spec.name}') of @{self.name}"
        if array.dtype != np.dtype(spec.dtype):
            raise ExecutableError(f"{what}: expected dtype {spec.dtype}, found {array.dtype}")
        if array.shape != spec.shape:
            raise ExecutableError(f"{what}: expected shape {spec.shape}, found {array.shape}")
        return array

    exporter: Callable[..., Path] | None = None
    """Writes the program as a GPU shared library: `exporter(path, c_prefix, c_header)` (set
    by the driver, which compiles it)."""

    def export(
        self, path: str | Path, *, c_prefix: str | None = None,
        c_header: str | Path | None = None,
    ) -> Path:
        """Write the program as a shared library (device code and native host code) that
        `dlc.load` opens and C calls (`dlc.driver.gpu_library`). A model's library has the C
        interface of a GPU library (`dlc.runtime.c_api`) under `c_prefix` (default: the file
        name made a C identifier); `c_header` is where to write its header (default: none)."""
        if self.exporter is None:
            raise ExecutableError("this GPU executable cannot be exported; compile the model "
                                  "again")
        return self.exporter(Path(path), c_prefix, c_header)


class DeviceCall:
    """An entry function bound to device buffers (see `GpuExecutable.prepare`)."""

    def __init__(
        self, executable: GpuExecutable, buffers: list[Any], outputs: list[np.ndarray]
    ) -> None:
        self.executable = executable
        self.buffers = buffers
        self._outputs = outputs
        self._graph: LaunchGraph | None = None
        self._held: list[Any] = []

    def run(self) -> None:
        """Enqueue the entry's launches (asynchronous where the backend is): the recorded
        graph after `capture`, else the host plan, launch by launch."""
        if self._graph is not None:
            self._graph.launch()
            return
        self.executable.program.call(self.executable.name, self.buffers,
                                     self.executable.backend)

    def capture(self) -> bool:
        """Record the entry's launches once as a graph that `run` then replays with one host
        call (TVM's CUDA graph executor, ONNX Runtime's `enable_cuda_graph`): the host plan's
        per-launch Python work goes. The buffers the recorded launches use stay this call's
        until `release`. False, changing nothing, where the backend cannot record (OpenCL)."""
        if self._graph is not None:
            return True
        backend = self.executable.backend
        if not hasattr(backend, "capture"):
            return False
        self.run()  # uploads the weights and fills the buffer pool: nothing to allocate below
        backend.synchronize()
        graph_backend: GraphBackend = backend  # type: ignore[assignment]
        self._graph = graph_backend.capture(
            lambda: self.executable.program.call(self.executable.name, self.buffers, backend)
        )
        used = {id(buffer): buffer for buffer in self._graph.buffers}.values()
        self._held = [buffer for buffer in used if graph_backend.hold(buffer)]
        return True

    def outputs(self) -> list[np.ndarray]:
        """Wait for the launches and copy the outputs back."""
        first = len(self.buffers) - len(self._outputs)
        for buffer, array in zip(self.buffers[first:], self._outputs, strict=True):
            self.executable.backend.read(buffer, array)
        return self._outputs

    def release(self) -> None:
        """Free the device buffers (and the recorded graph)."""
        if self._graph is not None:
            self._graph.release()
            self._graph = None
        for buffer in [*self.buffers, *self._held]:
            self.executable.backend.free(buffer)
        self.buffers, self._held = [], []
