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
from pathlib import Path

from runtime.metadata import METADATA_SYMBOL


class LibraryError(RuntimeError):
    """A shared library could not be built or loaded, or lacks a symbol."""


def export_shared_library(llvm_ir: str, path: str | Path, opt_level: int = 3) -> Path:
    """Compile `llvm_ir` for the host CPU and link it into the shared library `path`.

    The object code is position independent, optimized at `opt_level`, and linked with libm (and
    libgomp when it has parallel loops) by `cc -shared`. The library appears at `path` atomically (a reader never sees half a file).
    """
    from runtime.jit import host_target_machine, parse_and_optimize, uses_openmp

    compiler = shutil.which("cc")
    if compiler is None:
        raise LibraryError(
            "cannot link a shared library: no C compiler driver 'cc' on PATH (install gcc or "
            "clang)"
        )
    path = Path(path)
    machine = host_target_machine(opt_level, position_independent=True)
    module = parse_and_optimize(llvm_ir, machine, opt_level)
    object_code = machine.emit_object(module)
    directory = path.parent if str(path.parent) else Path(".")
    with tempfile.TemporaryDirectory(dir=directory, prefix=f".{path.name}.") as scratch:
        object_path = Path(scratch) / "module.o"
        object_path.write_bytes(object_code)
        linked = Path(scratch) / path.name
        result = subprocess.run(
            [compiler, "-shared", "-o", str(linked), str(object_path), "-lm",
             *(["-lgomp"] if uses_openmp(llvm_ir) else [])],
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

    def metadata_text(self) -> str | None:
        """The library's `dlc_metadata` JSON, or None if it has none."""
        try:
            first = ctypes.c_char.in_dll(self._library, METADATA_SYMBOL)
        except ValueError:
            return None
        return ctypes.string_at(ctypes.addressof(first)).decode()


def load_library(path: str | Path) -> SharedLibrary:
    """Load a shared library built by `export_shared_library` (ctypes only, no llvmlite)."""
    return SharedLibrary(path)
