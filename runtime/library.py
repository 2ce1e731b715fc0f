"""Shared libraries: export LLVM IR as a `.so` (TVM's `export_library`), load one with ctypes.

Loading needs nothing but ctypes: the signatures of the entry functions are in the library
itself, as the null-terminated JSON string `dlc_metadata`. Exporting needs llvmlite (imported
only there) and a C compiler driver (`cc`) to link.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dlc.runtime.metadata import METADATA_SYMBOL, MODEL_SYMBOL

if TYPE_CHECKING:
    import numpy as np


class LibraryError(RuntimeError):
    """A shared library could not be built or loaded, or lacks a symbol."""


OPENMP_ENVIRONMENT = {"GOMP_SPINCOUNT": "100000"}
"""Set in the process environment (unless already set) before libgomp loads: an idle OpenMP
thread spins for a bounded while (100k polls, of the order of a millisecond), then sleeps. Passive
waiting (`OMP_WAIT_POLICY=passive`, every region wakes its threads from a futex) made 2-thread
kernels run on one core on the 2-vCPU hosts dlc is measured on: the woken thread kept landing on
its waker's core (conv3x3 64->64 56x56: 2.5 ms at 2 threads vs 1.1 ms with the bounded spin, the
same as 1 thread). Spinning forever (`active`) would steal a core from other processes; libgomp
still throttles the spin when there are more threads than cores. A user's own `OMP_*`/`GOMP_*`
settings win."""


def prepare_openmp_environment() -> None:
    """Sets `OPENMP_ENVIRONMENT` (where unset) for a libgomp that has not loaded yet: before JIT
    code or a library linked with -lgomp brings it in."""
    for name, value in OPENMP_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def export_shared_library(llvm_ir: str, path: str | Path, opt_level: int = 3) -> Path:
    """Compile `llvm_ir` for the host CPU and link it into the shared library `path`.

    The object code is position independent, optimized at `opt_level`, and linked with libm (and
    libgomp when it has parallel loops) by `cc -shared`. The library appears at `path`
    atomically (a reader never sees half a file).
    """
    from dlc.runtime.jit import host_target_machine, parse_and_optimize, uses_openmp

    _c_compiler()
    machine = host_target_machine(opt_level, position_independent=True)
    module = parse_and_optimize(llvm_ir, machine, opt_level)
    return link_shared_library([machine.emit_object(module)], {}, path, uses_openmp(llvm_ir))


def _c_compiler() -> str:
    compiler = shutil.which("cc")
    if compiler is None:
        raise LibraryError(
            "cannot link a shared library: no C compiler driver 'cc' on PATH (install gcc or "
            "clang)"
        )
    return compiler


def weights_assembly(layout: Sequence[tuple[str, int, int]], blob: Path, alignment: int) -> str:
    """GNU assembler source defining each weight as a global read-only symbol whose bytes are
    `.incbin`'d from `blob` (so that megabytes of weights never pass through a compiler)."""
    lines = ['\t.section .rodata.dlc_weights,"a",@progbits']
    quoted = str(blob).replace("\\", "\\\\").replace('"', '\\"')
    for symbol, offset, nbytes in layout:
        lines += [
            f"\t.globl {symbol}",
            f"\t.type {symbol}, @object",
            f"\t.balign {alignment}",
            f"{symbol}:",
            f'\t.incbin "{quoted}", {offset}, {nbytes}' if nbytes else "\t.zero 1",
            f"\t.size {symbol}, {max(nbytes, 1)}",
        ]
    lines.append('\t.section .note.GNU-stack,"",@progbits')
    return "\n".join(lines) + "\n"


def link_shared_library(
    objects: Sequence[bytes],
    weights: Mapping[str, np.ndarray],
    path: str | Path,
    uses_openmp: bool = False,
) -> Path:
    """Link position-independent `objects` and the `weights` they reference into the shared
    library `path` with `cc -shared`.

    The weights are embedded in the library's read-only data under their symbols (assembled
    from one blob with `.incbin`), each aligned to `WEIGHT_ALIGNMENT`. References inside the
    library bind to its own definitions (`-Bsymbolic`). The library appears at `path`
    atomically: on any failure nothing is left there.
    """
    from dlc.runtime.artifact import WEIGHT_ALIGNMENT, write_weights

    compiler = _c_compiler()
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise LibraryError(f"cannot write {path}: no such directory {directory}")
    with tempfile.TemporaryDirectory(dir=directory, prefix=f".{path.name}.") as scratch:
        inputs: list[str] = []
        for index, data in enumerate(objects):
            object_path = Path(scratch) / f"unit{index}.o"
            object_path.write_bytes(data)
            inputs.append(str(object_path))
        if weights:
            blob = Path(scratch) / "weights.bin"
            layout = write_weights(weights, blob, WEIGHT_ALIGNMENT)
            assembly = Path(scratch) / "weights.s"
            assembly.write_text(weights_assembly(layout, blob.resolve(), WEIGHT_ALIGNMENT))
            inputs.append(str(assembly))
        linked = Path(scratch) / path.name
        result = subprocess.run(
            [compiler, "-shared", "-Wl,-Bsymbolic", "-o", str(linked), *inputs, "-lm",
             *(["-lgomp"] if uses_openmp else [])],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise LibraryError(
                f"linking {path} failed ({compiler} exited with {result.returncode}): "
                f"{result.stderr.strip()}"
            )
        os.replace(linked, path)
    return path


class SharedLibrary:
    """A dlc shared library loaded with ctypes.

    Note: the dynamic loader caches libraries by path; loading a path again in the same process
    returns the library first loaded there, even if the file has been replaced since.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise LibraryError(f"no shared library at {self.path}")
        prepare_openmp_environment()
        try:
            self._library = ctypes.CDLL(str(self.path.resolve()))
        except OSError as e:
            raise LibraryError(f"cannot load {self.path}: {e}") from None

    def address(self, name: str) -> int:
        """The address of the exported function `name`."""
        try:
            function = getattr(self._library, name)
        except AttributeError:
            raise LibraryError(f"no function @{name} in {self.path}") from None
        address = ctypes.cast(function, ctypes.c_void_p).value
        assert address is not None
        return address

    def symbol_address(self, name: str) -> int:
        """The address of the exported symbol `name` (a function or a weight)."""
        try:
            return ctypes.addressof(ctypes.c_char.in_dll(self._library, name))
        except ValueError:
            raise LibraryError(f"no symbol @{name} in {self.path}") from None

    def _string(self, symbol: str) -> str | None:
        try:
            first = ctypes.c_char.in_dll(self._library, symbol)
        except ValueError:
            return None
        try:
            return ctypes.string_at(ctypes.addressof(first)).decode()
        except UnicodeDecodeError:
            raise LibraryError(f"@{symbol} of {self.path} is not text") from None

    def metadata_text(self) -> str | None:
        """The library's `dlc_metadata` JSON, or None if it has none."""
        return self._string(METADATA_SYMBOL)

    def model_text(self) -> str | None:
        """The library's `dlc_model` JSON (a compiled model's description), or None."""
        return self._string(MODEL_SYMBOL)


def load_library(path: str | Path) -> SharedLibrary:
    """Load a shared library built by `export_shared_library` (ctypes only, no llvmlite)."""
    return SharedLibrary(path)
