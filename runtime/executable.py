"""`Executable`: a compiled dlc entry function called on NumPy arrays (TVM's `Module` +
`PackedFunc`, reduced to destination-passing style).

The native code comes from the driver (object code linked in process) or a shared library
(`runtime.library`; a GPU library's entry runs its kernels on the device and returns a status,
`runtime.gpu_library`); the signature comes from the module's `dlc_metadata`. Calling checks every
input against it (count, shape, dtype), allocates the outputs 64-byte aligned, and calls the
function through ctypes with one pointer per buffer. An entry with a dynamic batch (arguments
whose metadata has `batch`: one row each) takes N from the batched inputs' leading dims (they
must agree), allocates outputs of N rows and calls its native batch loop `<entry>__batch(n,
...)` once. Nothing here imports llvmlite.
"""

from __future__ import annotations

import ctypes
import inspect
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from dlc.runtime.files import write_atomically
from dlc.runtime.metadata import (
    BATCH_ENTRY_SUFFIX,
    FunctionSignature,
    MetadataError,
    ModelInfo,
    decode_metadata,
    decode_model_info,
    format_bytes,
    is_block_entry,
    metadata_device,
)
from dlc.runtime.size_exprs import evaluate

OUTPUT_ALIGNMENT = 64
"""Byte alignment of the output buffers `Executable` allocates (a cache line, an AVX-512
vector)."""


SHAPE_CACHE_SIZE = 64
"""The input sizes an executable over runtime shapes remembers the checked output shapes of
(the oldest forgotten first)."""

class NativeModule(Protocol):
    """Where compiled code lives: functions by address, and the signature metadata."""

    def address(self, name: str) -> int:
        """The address of the function `name`."""
        ...

    def metadata_text(self) -> str | None:
        """The `dlc_metadata` JSON, or None."""
        ...


class ModelModule(NativeModule, Protocol):
    """A compiled model: also its description and the addresses of its kernels and weights."""

    def model_text(self) -> str | None:
        """The `dlc_model` JSON, or None."""
        ...

    def symbol_address(self, name: str) -> int:
        """The address of a kernel or a weight."""
        ...


class ExecutableError(ValueError):
    """An executable was called wrongly (inputs that do not match its signature) or has no
    usable entry function."""


def data_address(array: np.ndarray) -> int:
    """The address of a C-contiguous `array`'s first element. Through the buffer protocol
    (a `c_char` over the array's memory): about a third of `array.ctypes.data`'s time, which
    builds a ctypes helper object on every call; a call of a small kernel passes several. An
    array the protocol will not expose writable (read-only, or empty) takes `ctypes.data`."""
    try:
        return ctypes.addressof(_CHAR.from_buffer(array))
    except (TypeError, ValueError):
        return array.ctypes.data


_CHAR = ctypes.c_char


def aligned_empty(shape: Sequence[int], dtype: np.dtype[Any], alignment: int) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts at a multiple of `alignment`."""
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = -data_address(raw) % alignment
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def memory_available(
    proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup"),
    address_space_limit: int | None = None,
) -> int | None:
    """The memory this process may still use, in bytes, None where unknown: the least of the
    machine's memory plus swap (`/proc/meminfo`), its cgroup's limit (v2 `memory.max`, v1
    `memory.limit_in_bytes`) less what the cgroup uses, and the address-space limit
    (`RLIMIT_AS`, `ulimit -v`; default: this process's) less what the process has mapped."""
    limits: list[int] = []
    try:
        text = (proc / "meminfo").read_text()
    except OSError:
        text = ""
    sizes = dict(re.findall(r"^(MemTotal|SwapTotal):\s+(\d+) kB", text, re.MULTILINE))
    if "MemTotal" in sizes:
        limits.append((int(sizes["MemTotal"]) + int(sizes.get("SwapTotal", 0))) * 1024)
    cgroup = _cgroup_headroom(proc, cgroup_root)
    if cgroup is not None:
        limits.append(cgroup)
    if address_space_limit is None:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        address_space_limit = soft if soft != resource.RLIM_INFINITY else -1
    if address_space_limit >= 0:
        mapped = _status_bytes(proc / "self" / "status", "VmSize") or 0
        limits.append(max(0, address_space_limit - mapped))
    return min(limits) if limits else None


def _status_bytes(path: Path, field: str) -> int | None:
    """A `kB` field of a /proc status file, in bytes."""
    try:
        match = re.search(rf"^{field}:\s+(\d+) kB", path.read_text(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) * 1024 if match else None


def _cgroup_headroom(proc: Path, cgroup_root: Path) -> int | None:
    """The cgroup memory limit of this process less its current use (v2, else v1)."""
    try:
        lines = (proc / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        relative = path.lstrip("/")
        if controllers == "":  # v2: 0::/path
            limit_file, usage_file = "memory.max", "memory.current"
            directory = cgroup_root / relative
        elif "memory" in controllers.split(","):
            limit_file, usage_file = "memory.limit_in_bytes", "memory.usage_in_bytes"
            directory = cgroup_root / "memory" / relative
        else:
            continue
        try:
            limit_text = (directory / limit_file).read_text().strip()
        except OSError:
            continue
        if limit_text == "max" or not limit_text.isdigit() or int(limit_text) >= 1 << 60:
            continue
        try:
            used = int((directory / usage_file).read_text().strip())
        except (OSError, ValueError):
            used = 0
        return max(0, int(limit_text) - used)
    return None


def bfloat16_dtype() -> np.dtype[Any]:
    """The NumPy dtype of bf16 arguments: `ml_dtypes.bfloat16` where ml_dtypes is installed (it
    comes with onnx), else `uint16` holding the bits (the upper half of the float32 pattern).

    An executable whose argument is bf16 also accepts a `uint16` array as those bits.
    """
    try:
        import ml_dtypes
    except ImportError:
        return np.dtype(np.uint16)
    return np.dtype(ml_dtypes.bfloat16)


def _dtype(name: str, signature: FunctionSignature) -> np.dtype[Any]:
    if name == "bfloat16":
        return bfloat16_dtype()
    try:
        return np.dtype(name)
    except TypeError:
        raise ExecutableError(
            f"@{signature.name} uses element type '{name}', which NumPy does not have"
        ) from None


class Executable:
    """One entry function of a compiled module, callable on NumPy arrays.

    `f(a, b)` checks `a` and `b` against the function's inputs, allocates its outputs, runs it and
    returns the output array (or a tuple of them when there are several). `f(a, b, out=(c,))`
    writes into caller-provided outputs instead. `device` is the GPU target of a GPU library
    (`opencl`, `cuda`: its entry runs the kernels on the device and returns a status, a failure
    raises an ExecutableError with the library's message), None for CPU code.
    """

    def __init__(
        self,
        native: NativeModule,
        entry: str | None = None,
        exporter: Callable[..., Path] | None = None,
    ) -> None:
        text = native.metadata_text()
        if text is None:
            raise ExecutableError(
                "the compiled module has no entry functions (a func.func with "
                "dlc.num_outputs, lowered by convert-loop-to-llvm)"
            )
        try:
            self.signatures = decode_metadata(text)
            self.device: str | None = metadata_device(text)
        except MetadataError as e:
            raise ExecutableError(str(e)) from None
        self._native = native
        self._exporter = exporter
        self.signature = self._select(entry)
        self._dtypes = [_dtype(arg.dtype, self.signature) for arg in self.signature.arguments]
        self._static_dims = [
            tuple((dim, size) for dim, size in enumerate(arg.shape) if size >= 0)
            if -1 in arg.shape else None for arg in self.signature.arguments
        ]
        """Per argument with runtime dims (-1, `FunctionSignature.dim_args`): its static dims
        as (dim, size) pairs (None for an argument of static shape)."""
        self._sized_outputs = any(spec.sizes for spec in self.signature.outputs)
        self._shapes_by_sizes: dict[tuple[int, ...], dict[int, tuple[int, ...]]] = {}
        """Whether an output's runtime dims have a shape function (`ArgumentSpec.sizes`)."""
        self._function_pointer: Callable[..., int | None] | None = None
        self._batch_function: Callable[..., None] | None = None
        if self.device is not None:
            from dlc.runtime.gpu_library import configure_driver

            configure_driver(native, self.device)
        self.model = self._model_info(native)
        self._memory_checked = False
        self.stats: Any = None
        """How the compile went (the driver's `CompileStats`), when this process compiled it or
        took it from the cache; None for a loaded library."""
        self.compiled: Any = None
        """The driver's `CompiledModel` (object code and weights), when this process compiled it
        or took it from the cache; None for a loaded library."""

    def _model_info(self, native: NativeModule) -> ModelInfo | None:
        model_text = getattr(native, "model_text", None)
        text = model_text() if model_text is not None else None
        if text is None:
            return None
        try:
            info = decode_model_info(text)
        except MetadataError as e:
            raise ExecutableError(str(e)) from None
        return info if info.entry == self.signature.name else None

    @property
    def _function(self) -> Callable[..., int | None]:
        """The entry function, looked up on the first call (a module compiled for another
        architecture has signatures to export but no code to call: its lookup says so). A GPU
        library's entry returns a status."""
        if self._function_pointer is None:
            result = None if self.device is None else ctypes.c_int
            prototype = ctypes.CFUNCTYPE(
                result, *([ctypes.c_void_p] * len(self.signature.arguments)),
                *([ctypes.c_int64] * len(self.signature.dim_args)),
            )
            self._function_pointer = prototype(self._native.address(self.signature.name))
        return self._function_pointer

    @property
    def native(self) -> NativeModule:
        """Where the compiled code lives (a JIT-linked module or a shared library)."""
        return self._native

    @property
    def input_names(self) -> tuple[str, ...]:
        """The inputs' names, in order (the model's names, e.g. ONNX's, where known)."""
        if self.model is not None:
            return self.model.input_names
        return tuple(arg.name for arg in self.signature.inputs)

    @property
    def output_names(self) -> tuple[str, ...]:
        """The outputs' names, in order (without the counts of padded outputs)."""
        if self.model is not None:
            names = self.model.output_names
        else:
            names = tuple(arg.name for arg in self.signature.outputs)
        counts = self.signature.count_outputs
        return tuple(name for i, name in enumerate(names) if i not in counts)

    def _select(self, entry: str | None) -> FunctionSignature:
        names = ", ".join(f"@{name}" for name in sorted(self.signatures)) or "none"
        if entry is not None:
            if entry not in self.signatures:
                raise ExecutableError(f"no entry function @{entry} (entry functions: {names})")
            return self.signatures[entry]
        entries = [s for name, s in self.signatures.items()
                   if not is_block_entry(name, self.signatures)]
        if len(entries) != 1:
            raise ExecutableError(
                f"expected one entry function or an explicit entry, found {names}"
            )
        return entries[0]

    @property
    def name(self) -> str:
        """The entry function's name."""
        return self.signature.name

    def entry(self, name: str) -> Executable:
        """Another entry function of the same compiled module."""
        return Executable(self._native, name, self._exporter)

    def _check(self, index: int, value: object, role: str, rows: int | None = None
               ) -> np.ndarray:
        """`value` as argument `index`'s array; a batched argument (`ArgumentSpec.batch`) has
        `rows` rows (any number when None: the first input fixes it)."""
        spec = self.signature.arguments[index]
        dtype = self._dtypes[index]
        names = self.input_names if role == "input" else ()
        name = names[index] if index < len(names) else spec.name
        what = f"{role} {index} ('{name}') of @{self.name}"
        shape = spec.shape
        static = self._static_dims[index]
        if static is not None:  # dims whose sizes the call passes (`FunctionSignature.dim_args`)
            given = getattr(value, "shape", None)
            given = np.shape(value) if given is None else given  # type: ignore[arg-type]
            if len(given) == len(shape) and all(given[dim] == size for dim, size in static):
                shape = given
        if spec.batch:
            given = getattr(value, "shape", None) or np.shape(value)  # type: ignore[arg-type]
            shape = (int(given[0]) if rows is None and given else rows or 0, *spec.shape[1:])
        if (
            isinstance(value, np.ndarray) and value.dtype == dtype and value.shape == shape
        ):
            return value
        array = np.asarray(value)
        if spec.dtype == "bfloat16" and array.dtype == np.uint16:
            array = array.view(dtype)  # bf16 given as its bits
        if not isinstance(value, np.ndarray) and np.can_cast(array.dtype, dtype, "same_kind"):
            array = array.astype(dtype)  # a Python or NumPy scalar, or a list: take its value
        if array.dtype != dtype:
            raise ExecutableError(f"{what}: expected dtype {dtype}, found {array.dtype}")
        if array.shape != shape:
            if spec.batch:
                row = "x".join(map(str, spec.shape[1:]))
                raise ExecutableError(
                    f"{what}: expected shape {spec.batch}x{row} ('{spec.batch}' = {shape[0]}), "
                    f"found {tuple(array.shape)}")
            raise ExecutableError(
                f"{what}: expected shape {spec.shape}, found {tuple(array.shape)}"
            )
        return array

    @property
    def batch_symbol(self) -> str | None:
        """The symbol of the dynamic batch the entry runs per row (`ArgumentSpec.batch`), or
        None when every argument is passed whole."""
        return next((arg.batch for arg in self.signature.arguments if arg.batch), None)

    def _rows(self, arrays: list[np.ndarray]) -> int:
        """The batch of a call: the leading dim of the batched inputs, which must agree."""
        first: tuple[str, int] | None = None
        names = self.input_names
        for index, (spec, array) in enumerate(zip(self.signature.inputs, arrays, strict=True)):
            if not spec.batch:
                continue
            if first is None:
                first = (names[index], array.shape[0])
            elif array.shape[0] != first[1]:
                raise ExecutableError(
                    f"input {index} ('{names[index]}') of @{self.name}: dim 0 is "
                    f"'{spec.batch}' = {array.shape[0]}, but '{spec.batch}' = {first[1]} from "
                    f"dim 0 of input '{first[0]}'")
        return 1 if first is None else first[1]

    @property
    def _batch_entry(self) -> Callable[..., None]:
        """The native batch loop `<entry>__batch(i64 n, ptr...)` of an entry with batched
        arguments (`convert-loop-to-llvm` adds it with the metadata's `batch`)."""
        if self._batch_function is None:
            name = f"{self.name}{BATCH_ENTRY_SUFFIX}"
            try:
                address = self._native.address(name)
            except Exception as e:  # noqa: BLE001 - each native module has its own lookup error
                raise ExecutableError(
                    f"@{self.name} has batched arguments but no batch entry @{name}: {e}"
                ) from None
            prototype = ctypes.CFUNCTYPE(
                None, ctypes.c_int64, *([ctypes.c_void_p] * len(self.signature.arguments)))
            self._batch_function = prototype(address)
        return self._batch_function

    def __call__(
        self, *inputs: object, out: Sequence[np.ndarray] | None = None
    ) -> np.ndarray | tuple[np.ndarray, ...]:
        arrays = self.prepare_inputs(inputs)
        rows = self._rows(arrays) if self.batch_symbol is not None else None
        outputs = self._outputs(out, len(arrays), rows, arrays)
        if out is not None:
            self._check_no_aliasing(self.name, arrays, outputs)
        if rows is not None and not self.signature.dim_args:  # the native loop over its rows
            self._batch_entry(rows, *map(data_address, (*arrays, *outputs)))
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        buffers = (*arrays, *outputs)
        status = self._function(*map(data_address, buffers),
                                *(buffers[a].shape[d] for a, d in self.signature.dim_args))
        if self.device is not None:
            from dlc.runtime.gpu_library import check_status

            check_status(self._native, status, self.name, self.device)
        if self.signature.valid_extents:
            outputs = self._trimmed(outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _trimmed(self, outputs: list[np.ndarray]) -> list[np.ndarray]:
        """The outputs as the model defines them: each padded output cut to its count along
        its axis (a view), the counts left out (`FunctionSignature.valid_extents`)."""
        trims = {output: (axis, count) for output, axis, count in self.signature.valid_extents}
        counts = self.signature.count_outputs
        result = []
        for index, array in enumerate(outputs):
            if index in counts:
                continue
            if index in trims:
                axis, count = trims[index]
                valid = int(outputs[count])
                if not 0 <= valid <= array.shape[axis]:
                    raise ExecutableError(
                        f"output {index} of @{self.name}: count {valid} outside the bound "
                        f"{array.shape[axis]} of axis {axis}")
                array = array[(slice(None),) * axis + (slice(0, valid),)]
            result.append(array)
        return result

    def prepare_inputs(self, inputs: Sequence[object]) -> list[np.ndarray]:
        """The inputs as C-contiguous arrays after checking them against the signature (count,
        shape, dtype; Python scalars and lists take the expected dtype) and the model's memory
        needs against the machine's (`check_memory`)."""
        self.check_memory()
        if len(inputs) != len(self.signature.inputs):
            names = ", ".join(self.input_names)
            raise ExecutableError(
                f"@{self.name} expects {len(self.signature.inputs)} inputs ({names}), "
                f"found {len(inputs)}"
            )
        return [
            np.ascontiguousarray(self._check(i, value, "input")) for i, value in enumerate(inputs)
        ]

    def check_memory(self) -> None:
        """Fails (ExecutableError) when one call would allocate more than this machine's memory
        and swap (`ModelInfo.memory_bytes`, and the inputs and outputs): the compiled code does
        not check its allocations, and a failed one would crash the process. Static shapes make
        the need known before the call; an absurd one comes from a model attribute out of range
        (a padding of 2^31) or a huge input dimension. A caller that makes inputs (random ones)
        checks first."""
        if self._memory_checked:
            return
        available = memory_available()
        arguments = sum(  # runtime dims (-1) count once: the caller holds those arrays
            math.prod(map(abs, spec.shape)) * _dtype(spec.dtype, self.signature).itemsize
            for spec in self.signature.arguments
        )
        model_bytes = self.model.memory_bytes if self.model is not None else 0
        needed = model_bytes + arguments
        if available is not None and needed > available:
            parts = [f"inputs and outputs of {format_bytes(arguments)}"]
            if self.model is not None:
                parts = [f"a workspace of {format_bytes(self.model.workspace_bytes)}",
                         f"kernel buffers of up to {format_bytes(self.model.kernel_buffer_bytes)}",
                         *parts]
            raise ExecutableError(
                f"@{self.name} needs {format_bytes(needed)} of memory per call "
                f"({', '.join(parts)}); this process may use {format_bytes(available)} more "
                "(the least of memory and swap, its cgroup's limit and its address-space limit)"
            )
        self._memory_checked = True

    def run(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Runs on inputs given by name; returns the outputs by name."""
        names = self.input_names
        unknown = sorted(set(inputs) - set(names))
        missing = [name for name in names if name not in inputs]
        if unknown or missing:
            problems = []
            if missing:
                problems.append(f"missing {', '.join(repr(n) for n in missing)}")
            if unknown:
                problems.append(f"unknown {', '.join(repr(n) for n in unknown)}")
            raise ExecutableError(
                f"@{self.name} expects inputs {', '.join(repr(n) for n in names)}: "
                f"{'; '.join(problems)}"
            )
        results = self(*(inputs[name] for name in names))
        outputs = results if isinstance(results, tuple) else (results,)
        return dict(zip(self.output_names, outputs, strict=True))

    def _outputs(self, out: Sequence[np.ndarray] | None, first: int, rows: int | None = None,
                 inputs: Sequence[np.ndarray] = ()) -> list[np.ndarray]:
        specs = self.signature.outputs
        computed = self._computed_shapes(first, inputs)
        if out is None:
            dynamic = [first + i for i, spec in enumerate(specs)
                       if -1 in spec.shape[1 if spec.batch else 0:] and i not in computed]
            if dynamic:
                raise ExecutableError(
                    f"output {dynamic[0]} of @{self.name} has dims of runtime size "
                    f"{specs[dynamic[0] - first].shape} (-1: any): pass the outputs as out=")
            return [
                aligned_empty(computed[i] if i in computed else
                              (rows, *spec.shape[1:]) if spec.batch and rows is not None
                              else spec.shape, self._dtypes[first + i], OUTPUT_ALIGNMENT)
                for i, spec in enumerate(specs)
            ]
        for i, shape in computed.items():
            given = getattr(out[i], "shape", None) if i < len(out) else None
            if given is not None and tuple(given) != shape:
                raise ExecutableError(
                    f"output {first + i} of @{self.name}: expected shape {shape} (its runtime "
                    f"dims computed from the inputs' shapes), found {tuple(given)}")
        if len(out) != len(specs):
            raise ExecutableError(
                f"@{self.name} has {len(specs)} outputs, found {len(out)} in out="
            )
        checked = []
        for i, array in enumerate(out):
            if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
                raise ExecutableError(
                    f"output {first + i} of @{self.name}: expected a C-contiguous ndarray"
                )
            if not array.flags.writeable:
                raise ExecutableError(
                    f"output {first + i} of @{self.name}: expected a writeable array, found a "
                    "read-only one"
                )
            checked.append(self._check(first + i, array, "output", rows))
        return checked

    def _computed_shapes(self, first: int, inputs: Sequence[np.ndarray]
                         ) -> dict[int, tuple[int, ...]]:
        """The shape of each output whose runtime dims the function computes from the inputs'
        sizes (`ArgumentSpec.sizes`), by output position; an `ExecutableError` for inputs too
        small for the model (a negative size). Inputs of sizes seen before (the last
        `SHAPE_CACHE_SIZE`) reuse that call's checked shapes: a model's hundreds of size checks
        and shape expressions (MobileNetV2: 209) cost about a tenth of a millisecond of Python
        each call otherwise."""
        if not inputs or not (self._sized_outputs or self.signature.size_checks):
            return {}
        specs = self.signature.outputs
        symbols = [inputs[a].shape[d] for a, d in self.signature.dim_args if a < first]
        known = self._shapes_by_sizes.get(tuple(symbols))
        if known is not None:
            return known
        self._check_sizes(inputs, symbols)
        shapes: dict[int, tuple[int, ...]] = {}
        for i, spec in enumerate(specs):
            if not spec.sizes:
                continue
            sizes = iter(evaluate(expr, symbols) for expr in spec.sizes)
            shape = tuple(next(sizes) if size < 0 else size for size in spec.shape)
            if any(size < 0 for size in shape):
                given = ", ".join(str(tuple(array.shape)) for array in inputs)
                raise ExecutableError(
                    f"output {first + i} of @{self.name} would have shape {shape} for inputs "
                    f"of shapes {given}: the inputs are too small")
            shapes[i] = shape
        if len(self._shapes_by_sizes) >= SHAPE_CACHE_SIZE:
            self._shapes_by_sizes.pop(next(iter(self._shapes_by_sizes)))
        self._shapes_by_sizes[tuple(symbols)] = shapes
        return shapes

    def _check_sizes(self, inputs: Sequence[np.ndarray], symbols: Sequence[int]) -> None:
        """The inputs' runtime sizes must meet the model's size checks
        (`FunctionSignature.size_checks`): an `ExecutableError` naming the op that needs it."""
        for kind, lhs, rhs, what in self.signature.size_checks:
            a, b = evaluate(lhs, symbols), evaluate(rhs, symbols)
            if a == b if kind == "eq" else a >= b:
                continue
            given = ", ".join(f"'{name}' {tuple(array.shape)}" for name, array in zip(
                self.input_names, inputs, strict=False))
            relation = f"{a} != {b}" if kind == "eq" else f"{a} < {b}"
            raise ExecutableError(
                f"inputs of @{self.name} break a size constraint of the model: {what}, found "
                f"{relation} for inputs {given}")

    @staticmethod
    def _check_no_aliasing(name: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> None:
        """Outputs must not overlap inputs or each other (entry arguments are `noalias`)."""
        for i, output in enumerate(outputs):
            for other in (*inputs, *outputs[:i]):
                if np.may_share_memory(output, other):
                    raise ExecutableError(
                        f"output {len(inputs) + i} of @{name} overlaps another argument"
                    )

    def export(
        self, path: str | Path, *, c_prefix: str | None = None,
        c_header: str | Path | None = None,
    ) -> Path:
        """Write the compiled module as a shared library that `dlc.load` opens.

        A compiled model's library has a C interface (`dlc.runtime.c_api`): functions named
        `<c_prefix>_run` etc. (default prefix: the file name made a C identifier), the only
        symbols it exports; `c_header` is where to write its header (default: none). A
        library loaded with `dlc.load` is copied as it is (its prefix cannot change).
        """
        return call_exporter(self._exporter, path, c_prefix, c_header)


def call_exporter(exporter: Callable[..., Path] | None, path: str | Path,
                  c_prefix: str | None, c_header: str | Path | None) -> Path:
    """`exporter(path, ...)` with the C options given, or an `ExecutableError` where there is
    none or it takes no such options (a loaded library's, which copies the file)."""
    if exporter is None:
        raise ExecutableError("this executable cannot be exported")
    options = {name: value for name, value in (("c_prefix", c_prefix),
                                               ("c_header", c_header)) if value is not None}
    try:
        inspect.signature(exporter).bind(Path(path), **options)
    except TypeError:
        raise ExecutableError(
            f"this executable cannot be exported with {' or '.join(options)} (a library "
            "loaded with dlc.load is copied as it is)"
        ) from None
    return exporter(Path(path), **options)


def run_by_name(call: Callable[..., Any], input_names: Sequence[str],
                output_names: Sequence[str], inputs: Mapping[str, object]
                ) -> dict[str, np.ndarray]:
    """`call(*inputs in order)`'s outputs by name, for inputs given by name (an
    `ExecutableError` names the missing and unknown ones): the `run` of the executables that
    hold several compiled ones."""
    missing = [n for n in input_names if n not in inputs]
    unknown = sorted(set(inputs) - set(input_names))
    if missing or unknown:
        problems = ([f"missing {', '.join(map(repr, missing))}"] if missing else []) + (
            [f"unknown {', '.join(map(repr, unknown))}"] if unknown else [])
        raise ExecutableError(f"the model expects inputs {', '.join(map(repr, input_names))}: "
                              f"{'; '.join(problems)}")
    results = call(*(inputs[n] for n in input_names))
    outputs = results if isinstance(results, tuple) else (results,)
    return dict(zip(output_names, outputs, strict=True))


def library_exporter(source: Path) -> Callable[[Path], Path]:
    """An exporter that copies an existing shared library: into a new file of an unpredictable
    name beside `path` (never through a link planted there), then renamed over `path`, so that
    a reader never sees half a file and nothing is left behind on failure."""

    def export(path: Path) -> Path:
        if path.resolve() == source.resolve():
            return path
        write_atomically(path, source.read_bytes(), mode=0o755)
        return path

    return export
