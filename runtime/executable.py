"""`Executable`: a compiled dlc entry function called on NumPy arrays (TVM's `Module` +
`PackedFunc`, reduced to destination-passing style).

The native code comes from a JIT engine (`runtime.jit`) or a shared library
(`runtime.library`); the signature comes from the module's `dlc_metadata`. Calling checks every
input against it (count, shape, dtype), allocates the outputs 64-byte aligned, and calls the
function through ctypes with one pointer per buffer. Nothing here imports llvmlite.
"""

from __future__ import annotations

import ctypes
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from runtime.metadata import FunctionSignature, MetadataError, decode_metadata

OUTPUT_ALIGNMENT = 64
"""Byte alignment of the output buffers `Executable` allocates (a cache line, an AVX-512
vector)."""


class NativeModule(Protocol):
    """Where compiled code lives: functions by address, and the signature metadata."""

    def address(self, name: str) -> int:
        """The address of the function `name`."""
        ...

    def metadata_text(self) -> str | None:
        """The `dlc_metadata` JSON, or None."""
        ...


class ExecutableError(ValueError):
    """An executable was called wrongly (inputs that do not match its signature) or has no
    usable entry function."""


def aligned_empty(shape: Sequence[int], dtype: np.dtype[Any], alignment: int) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts at a multiple of `alignment`."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def _dtype(name: str, signature: FunctionSignature) -> np.dtype[Any]:
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
    writes into caller-provided outputs instead.
    """

    def __init__(
        self,
        native: NativeModule,
        entry: str | None = None,
        exporter: Callable[[Path], Path] | None = None,
    ) -> None:
        text = native.metadata_text()
        if text is None:
            raise ExecutableError(
                "the compiled module has no entry functions (a func.func with "
                "dlc.num_outputs, lowered by convert-loop-to-llvm)"
            )
        try:
            self.signatures = decode_metadata(text)
        except MetadataError as e:
            raise ExecutableError(str(e)) from None
        self._native = native
        self._exporter = exporter
        self.signature = self._select(entry)
        self._dtypes = [_dtype(arg.dtype, self.signature) for arg in self.signature.arguments]
        prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * len(self.signature.arguments)))
        self._function = prototype(native.address(self.signature.name))

    def _select(self, entry: str | None) -> FunctionSignature:
        names = ", ".join(f"@{name}" for name in sorted(self.signatures)) or "none"
        if entry is not None:
            if entry not in self.signatures:
                raise ExecutableError(f"no entry function @{entry} (entry functions: {names})")
            return self.signatures[entry]
        if len(self.signatures) != 1:
            raise ExecutableError(
                f"expected one entry function or an explicit entry, found {names}"
            )
        return next(iter(self.signatures.values()))

    @property
    def name(self) -> str:
        """The entry function's name."""
        return self.signature.name

    def entry(self, name: str) -> Executable:
        """Another entry function of the same compiled module."""
        return Executable(self._native, name, self._exporter)

    def _check(self, index: int, value: object, role: str) -> np.ndarray:
        spec = self.signature.arguments[index]
        dtype = self._dtypes[index]
        what = f"{role} {index} ('{spec.name}') of @{self.name}"
        array = np.asarray(value)
        if array.dtype != dtype:
            raise ExecutableError(f"{what}: expected dtype {dtype}, found {array.dtype}")
        if array.shape != spec.shape:
            raise ExecutableError(
                f"{what}: expected shape {spec.shape}, found {tuple(array.shape)}"
            )
        return array

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
        arrays = [
            np.ascontiguousarray(self._check(i, value, "input")) for i, value in enumerate(inputs)
        ]
        outputs = self._outputs(out, len(arrays))
        if out is not None:
            self._check_no_aliasing(self.name, arrays, outputs)
        self._function(*(array.ctypes.data for array in (*arrays, *outputs)))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _outputs(self, out: Sequence[np.ndarray] | None, first: int) -> list[np.ndarray]:
        specs = self.signature.outputs
        if out is None:
            return [
                aligned_empty(spec.shape, self._dtypes[first + i], OUTPUT_ALIGNMENT)
                for i, spec in enumerate(specs)
            ]
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
            checked.append(self._check(first + i, array, "output"))
        return checked

    @staticmethod
    def _check_no_aliasing(name: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> None:
        """Outputs must not overlap inputs or each other (entry arguments are `noalias`)."""
        for i, output in enumerate(outputs):
            for other in (*inputs, *outputs[:i]):
                if np.may_share_memory(output, other):
                    raise ExecutableError(
                        f"output {len(inputs) + i} of @{name} overlaps another argument"
                    )

    def export(self, path: str | Path) -> Path:
        """Write the compiled module as a shared library that `dlc.load` opens."""
        if self._exporter is None:
            raise ExecutableError("this executable cannot be exported")
        return self._exporter(Path(path))


def library_exporter(source: Path) -> Callable[[Path], Path]:
    """An exporter that copies an existing shared library."""

    def export(path: Path) -> Path:
        if path.resolve() != source.resolve():
            temporary = path.with_name(f".{path.name}.tmp")
            shutil.copyfile(source, temporary)
            temporary.replace(path)
        return path

    return export
