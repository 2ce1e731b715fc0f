"""Shared libraries: load one with ctypes (TVM's `tvm.runtime.load_module`).

Loading needs nothing but ctypes: the signatures of the entry functions are in the library
itself, as the null-terminated JSON string `dlc_metadata`. Writing a library is the driver's
(`dlc.driver.export`).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import TYPE_CHECKING

from dlc.runtime.metadata import METADATA_SYMBOL, MODEL_SYMBOL

if TYPE_CHECKING:
    pass


class LibraryError(RuntimeError):
    """A shared library could not be built or loaded, or lacks a symbol."""


OPENMP_ENVIRONMENT = {"GOMP_SPINCOUNT": "1000"}
"""Set in the process environment (unless already set) before libgomp loads: an idle OpenMP
thread spins for a short while (1000 polls, some tens of microseconds: long enough to stay awake
between the kernels of one call), then sleeps on a futex.

A long spin (it was 100000 polls, about a millisecond) was measured to be the worst choice when
the cores are shared: every spinning thread takes a core that a thread doing work (its own
process's, or a twin replica's) needs, and every parallel region waits for its slowest thread.
On a 2-vCPU host loaded by other processes (load average 10-14; `benchmarks/periodic.py`),
conv3x3+BN+ReLU (64 channels, 56x56) took 30-58 ms per call with the long spin against 1.5-4 ms
with 1000 polls (or none), and ResNet-18 320-690 ms against 80-140 ms (ONNX Runtime: 2.3 and
167 ms). Fully passive waiting (`OMP_WAIT_POLICY=passive`, no spin at all) made 2-thread kernels
on an idle 2-vCPU host run on one core (the woken thread kept landing on its waker's core), so
the spin stays, short. Parallel loops take guided chunks (`convert-loop-to-llvm`'s
`parallel_schedule`), so a thread that starts late holds no static share of the work, and a
kernel whose regions wait for late threads runs serially for a while (`adaptive_threads`).
A user's own `OMP_*`/`GOMP_*` settings win."""


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
