"""The host side of a GPU module: its functions run as a plan of buffer allocations and kernel
launches on a device backend (TVM's graph executor over device functions, reduced to
destination-passing style).

After `convert-loop-to-target-gpu`, a module's host functions (`func.func`) hold only
`arith.constant`s, `loop.alloc global`/`loop.dealloc`, `memref.get_global`, `func.call`,
`target_gpu.launch` and `func.return`. `HostProgram` translates each such function once into a
list of steps; `GpuExecutable` calls an entry function on NumPy arrays through a `DeviceBackend`
(OpenCL in `runtime.opencl`, CUDA in `runtime.cuda`): it uploads the inputs, allocates the
outputs, runs the steps, and downloads the outputs. The weights (`memref.global`s) are uploaded
once per executable.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from dlc.dialects.arith_numpy import numpy_dtype
from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
from dlc.dialects.loop.ops import AllocOp, DeallocOp
from dlc.dialects.target_gpu.ops import LaunchOp
from dlc.runtime.executable import ExecutableError
from dlc.runtime.metadata import FunctionSignature
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation, SSAValue


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


def nbytes(memref_type: MemRefType) -> int:
    """The size in bytes of a row-major memref."""
    count = int(np.prod(memref_type.get_shape(), dtype=np.int64))
    return count * numpy_dtype(memref_type.get_element_type()).itemsize


Environment = dict[SSAValue, Any]
Step = Callable[[Environment, DeviceBackend], None]


class HostProgram:
    """The host functions of a GPU module, each translated into steps on first call."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.functions = {
            op.sym_name.data: op for op in module.ops
            if isinstance(op, func.FuncOp) and op.body.blocks
        }
        self._globals = {
            op.sym_name.data: op for op in module.ops if isinstance(op, memref.GlobalOp)
        }
        self._steps: dict[str, list[Step]] = {}
        self._uploaded: dict[tuple[int, str], Any] = {}
        self.signatures = self._entry_signatures()

    def _entry_signatures(self) -> dict[str, FunctionSignature]:
        from dlc.rewrites.convert_loop_to_llvm import entry_signature
        from dlc.rewrites.llvm_lowering.common import LLVMLowering

        return {
            name: entry_signature(function, LLVMLowering())
            for name, function in self.functions.items()
            if NUM_OUTPUTS_ATTR in function.attributes
            and function.sym_visibility != StringAttr("private")
        }

    def call(self, name: str, args: Sequence[Any], backend: DeviceBackend) -> None:
        """Run host function @name with device buffers (and scalars) `args`."""
        function = self.functions.get(name)
        if function is None:
            raise HostProgramError(f"expected a host function @{name}, found none")
        env: Environment = dict(zip(function.body.block.args, args, strict=True))
        for step in self._compile(name):
            step(env, backend)

    def _compile(self, name: str) -> list[Step]:
        steps = self._steps.get(name)
        if steps is None:
            function = self.functions[name]
            steps = self._steps[name] = [self._step(op) for op in function.body.block.ops]
        return steps

    def _step(self, op: Operation) -> Step:  # noqa: C901 - one case per host op
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if not isinstance(value, IntegerAttr | FloatAttr):
                raise HostProgramError(f"'{op.name}' op of {op.result.type} is not supported on "
                                       "the host")
            constant, result = value.value.data, op.result
            return lambda env, backend: env.__setitem__(result, constant)
        if isinstance(op, AllocOp):
            size, result = nbytes(op.result.type), op.result  # type: ignore[arg-type]
            return lambda env, backend: env.__setitem__(result, backend.allocate(size))
        if isinstance(op, DeallocOp):
            buffer = op.memref
            return lambda env, backend: backend.free(env[buffer])
        if isinstance(op, memref.GetGlobalOp):
            return self._get_global(op)
        if isinstance(op, LaunchOp):
            return self._launch(op)
        if isinstance(op, func.CallOp):
            callee, arguments = op.callee.string_value(), tuple(op.arguments)
            if op.results:
                raise HostProgramError(f"'{op.name}' op with results is not supported on the host")
            return lambda env, backend: self.call(callee, [env[a] for a in arguments], backend)
        if isinstance(op, func.ReturnOp):
            if op.arguments:
                raise HostProgramError("'func.return' op with values is not supported on the host")
            return lambda env, backend: None
        raise HostProgramError(
            f"'{op.name}' op is not supported in a host function of a GPU module (expected "
            "constants, loop.alloc/dealloc, memref.get_global, func.call, target_gpu.launch; "
            "were all loop nests outlined by convert-loop-to-target-gpu?)"
        )

    def _get_global(self, op: memref.GetGlobalOp) -> Step:
        name, result = op.name_.string_value(), op.memref
        global_op = self._globals.get(name)
        if global_op is None or not isinstance(global_op.initial_value, DenseIntOrFPElementsAttr):
            raise HostProgramError(f"'memref.get_global' op expected an initialized "
                                   f"memref.global @{name}, found none")
        from dlc.dialects.graph.ops import elements_to_array

        def get_global(env: Environment, backend: DeviceBackend) -> None:
            key = (id(backend), name)
            if key not in self._uploaded:
                array = elements_to_array(global_op.initial_value, global_op.name)  # type: ignore[arg-type]
                self._uploaded[key] = backend.upload(np.ascontiguousarray(array))
            env[result] = self._uploaded[key]

        return get_global

    def _launch(self, op: LaunchOp) -> Step:
        kernel = op.kernel.nested_references.data[-1].data if op.kernel.nested_references.data \
            else op.kernel.root_reference.data
        grid, block, arguments = tuple(op.grid), tuple(op.block), tuple(op.args)
        dtypes = [
            None if isinstance(a.type, MemRefType) else numpy_dtype(a.type) for a in arguments
        ]

        def launch(env: Environment, backend: DeviceBackend) -> None:
            args = [
                KernelArgument(env[a]) if dtype is None else KernelArgument(dtype.type(env[a]),
                                                                             dtype)
                for a, dtype in zip(arguments, dtypes, strict=True)
            ]
            backend.launch(
                kernel,
                (env[grid[0]], env[grid[1]], env[grid[2]]),
                (env[block[0]], env[block[1]], env[block[2]]),
                args,
            )

        return launch

    def launches(self) -> list[LaunchOp]:
        """Every launch of the host functions."""
        return [op for f in self.functions.values() for op in f.walk() if isinstance(op, LaunchOp)]


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
        return GpuExecutable(self.program, self.backend, name, self.source)

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

    def export(self, path: object) -> None:
        """GPU executables live in the process that compiled them (no shared library)."""
        raise ExecutableError("a GPU executable cannot be exported; compile the model again")


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
