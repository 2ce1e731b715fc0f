"""Shared libraries: load one with ctypes (TVM's `tvm.runtime.load_module`).

Loading needs nothing but ctypes: the signatures of the entry functions are in the library
itself, as the null-terminated JSON string `dlc_metadata` (in a model library with a C
interface, found through its `dlc_prefix`: `runtime.c_api`). Writing a library is the driver's
(`dlc.driver.export`).

Trust: loading a library runs its code, constructors included. A model library from an
untrusted source is code from an untrusted source.
"""

from __future__ import annotations

import copy
import ctypes
import os
import platform
from collections.abc import Callable
from pathlib import Path

from dlc.runtime.c_api import PREFIX_SYMBOL, read_prefix
from dlc.runtime.metadata import METADATA_SYMBOL, MODEL_SYMBOL, VARIANTS_SYMBOL, MetadataError


class LibraryError(RuntimeError):
    """A shared library could not be built or loaded, or lacks a symbol."""


OPENMP_ENVIRONMENT = {"GOMP_SPINCOUNT": "100000"}
"""Set in the process environment (unless already set) before libgomp loads: an idle OpenMP
thread spins for a bounded while (100000 polls, of the order of a millisecond: it stays awake
between the kernels of one call), then sleeps on a futex; libgomp throttles the spin when there
are more threads than cores.

Measured on an idle 2-vCPU host, one run each (`python3 benchmarks/models.py --models
transformer resnet18 --threads 2`, ratios to ONNX Runtime in the same run), with parallel loops
in static chunks: 100000 polls gave ResNet-18 1.06x and the transformer block 0.81-1.26x; 1000
polls made them 1.4-3.3x (a thread that slept between two kernels is woken for every parallel
region). Guided chunks (`convert-loop-to-llvm{parallel_schedule=guided}`) cost ResNet-18 1.44x,
and the adaptive team (`adaptive_threads=true`) 1.5-1.9x: on an idle machine the wake-up of a
thread already counts as a late thread, so kernels ran serially. Both stay as options for
machines whose cores are loaded by other processes, where short spins and guided chunks were
measured better (conv3x3+BN+ReLU at load 10-14: 30-58 ms per call with the long spin against
1.5-4 ms with 1000 polls). Beside a twin process running the same model (2x is the fair share),
the defaults took ResNet-18 from 19.6 to 51.9 ms (2.65x; ONNX Runtime 2.57x) and the conv from
0.81 to 0.97 ms (1.2x): `python3 -m benchmarks.periodic`. Fully passive waiting
(`OMP_WAIT_POLICY=passive`) made 2-thread kernels on an idle 2-vCPU host run on one core (the
woken thread kept landing on its waker's core). A user's own `OMP_*`/`GOMP_*` settings win."""


def prepare_openmp_environment() -> None:
    """Sets `OPENMP_ENVIRONMENT` (where unset) for a libgomp that has not loaded yet: before JIT
    code or a library linked with -lgomp brings it in; and `OMP_NUM_THREADS` from
    `DLC_NUM_THREADS` (where that is set and this is not), for code compiled for a target
    without a thread count (`-num-cores`), which runs on the OpenMP runtime's default."""
    for name, value in OPENMP_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    threads = os.environ.get("DLC_NUM_THREADS", "").strip()
    if threads.isdigit() and int(threads) > 0:
        os.environ.setdefault("OMP_NUM_THREADS", threads)


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

    Trust: loading a library runs its code (its constructors, and the initializers of what it
    links, run at load time), with this process's rights. A model library from an untrusted
    source is code from an untrusted source: load only libraries you would run as programs.

    A model library exported with its C interface (`runtime.c_api`) keeps every internal
    symbol local; it exports `dlc_prefix` (the C prefix), through which the internal symbols
    are found (`<prefix>_dlc_symbol`). Other libraries (kernels built for tuning, older
    exports) export their symbols directly.

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
        self.prefix: str | None = None
        """The C interface's prefix, None for a library without one."""
        self._lookup: Callable[[bytes], int | None] | None = None
        prefix = self._exported_string(PREFIX_SYMBOL)
        if prefix is not None:
            self.prefix, self._lookup = self._symbol_lookup(prefix, "has a broken C interface")

    def _symbol_lookup(self, prefix: str, failure: str
                       ) -> tuple[str, Callable[[bytes], int | None]]:
        """(`prefix` checked, its `<prefix>_dlc_symbol`), or a LibraryError saying `failure`."""
        try:
            checked = read_prefix(prefix)
            lookup = getattr(self._library, f"{checked}_dlc_symbol")
        except (MetadataError, AttributeError) as e:
            raise LibraryError(f"{self.path} {failure}: {e}") from None
        lookup.restype = ctypes.c_void_p
        lookup.argtypes = [ctypes.c_char_p]
        return checked, lookup

    def variant(self, prefix: str) -> SharedLibrary:
        """The view of this library (of several shapes, `runtime.variants`) whose symbols are
        those of its variant `prefix` (through `<prefix>_dlc_symbol`)."""
        view = copy.copy(self)
        view.prefix, view._lookup = self._symbol_lookup(prefix, f"has no variant '{prefix}'")
        return view

    def variants_text(self) -> str | None:
        """The table of variants of a library of several shapes (JSON), or None."""
        return self._string(VARIANTS_SYMBOL)

    def _exported(self, name: str) -> int | None:
        try:
            return ctypes.addressof(ctypes.c_char.in_dll(self._library, name))
        except ValueError:
            return None

    def _exported_string(self, name: str) -> str | None:
        address = self._exported(name)
        if address is None:
            return None
        try:
            return ctypes.string_at(address).decode()
        except UnicodeDecodeError:
            raise LibraryError(f"@{name} of {self.path} is not text") from None

    def _symbol(self, name: str) -> int | None:
        """The address of the library's symbol `name` (internal ones through the C
        interface), or None."""
        if self._lookup is not None:
            return self._lookup(name.encode()) or None
        return self._exported(name)

    def address(self, name: str) -> int:
        """The address of the function `name`."""
        address = self._symbol(name)
        if address is None:
            raise LibraryError(f"no function @{name} in {self.path}")
        return address

    def symbol_address(self, name: str) -> int:
        """The address of the symbol `name` (a function or a weight)."""
        address = self._symbol(name)
        if address is None:
            raise LibraryError(f"no symbol @{name} in {self.path}")
        return address

    def _string(self, symbol: str) -> str | None:
        address = self._symbol(symbol)
        if address is None:
            return None
        try:
            return ctypes.string_at(address).decode()
        except UnicodeDecodeError:
            raise LibraryError(f"@{symbol} of {self.path} is not text") from None

    def metadata_text(self) -> str | None:
        """The library's `dlc_metadata` JSON, or None if it has none."""
        return self._string(METADATA_SYMBOL)

    def model_text(self) -> str | None:
        """The library's `dlc_model` JSON (a compiled model's description), or None."""
        return self._string(MODEL_SYMBOL)


def load_library(path: str | Path) -> SharedLibrary:
    """Load a shared library built by `export_shared_library` or `CompiledModel.export` (ctypes
    only, no llvmlite). Loading runs the library's code: see `SharedLibrary`'s trust note."""
    return SharedLibrary(path)
