"""Shared libraries: load one with ctypes (TVM's `tvm.runtime.load_module`).

Loading needs nothing but ctypes: the signatures of the entry functions are in the library
itself, as the null-terminated JSON string `dlc_metadata`. Writing a library is the driver's
(`dlc.driver.export`).
"""

from __future__ import annotations

import ctypes
import os
import platform
from pathlib import Path
from typing import TYPE_CHECKING

from dlc.runtime.metadata import METADATA_SYMBOL, MODEL_SYMBOL

if TYPE_CHECKING:
    pass


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


ELF_MACHINES: dict[int, str] = {62: "x86_64", 183: "aarch64"}
"""The architectures of ELF's `e_machine` numbers (EM_X86_64, EM_AARCH64), by dlc's names."""


def elf_arch(header: bytes) -> str | None:
    """The architecture an ELF file's first 20 bytes name (by `ELF_MACHINES`), or None when they
    are not a little-endian ELF header of one of them."""
    if len(header) < 20 or header[:4] != b"\x7fELF" or header[5] != 1:
        return None
    return ELF_MACHINES.get(int.from_bytes(header[18:20], "little"))


def machine_arch() -> str:
    """The architecture this process runs on, by dlc's names (`x86_64`, `aarch64`)."""
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


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
            with open(self.path, "rb") as file:
                arch = elf_arch(file.read(20))
            if arch is not None and arch != machine_arch():
                raise LibraryError(
                    f"cannot load {self.path}: it is built for {arch} and this host is "
                    f"{machine_arch()} (run it on an {arch} machine, or under qemu-{arch})"
                ) from None
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
