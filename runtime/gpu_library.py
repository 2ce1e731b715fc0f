"""GPU shared libraries (written by `dlc.driver.gpu_library`) as the runtime sees them: entry
functions that take host arrays and return a status, the message of a failure, and the driver
library their device runtime opens (TVM's `cuda`/`opencl` modules loaded from a library).

A GPU library opens `libOpenCL.so.1` or `libcuda.so.1` at its first call. With a C interface
(`runtime.c_api`) its entry and these functions are local to it; `NativeModule.address` finds
them through `<prefix>_dlc_symbol` as it finds a CPU library's. Where no system
OpenCL loader exists but pyopencl's wheel is installed (`pip install 'dlc[opencl]'`: pyopencl
bundles an ICD loader and PoCL), `configure_driver` points an OpenCL library at that bundled
loader instead. Only ctypes and the standard library are used here.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from dlc.runtime.c_api import LAST_ERROR_SYMBOL, SET_DRIVER_SYMBOL
from dlc.runtime.executable import ExecutableError, NativeModule


def last_error(native: NativeModule) -> str:
    """The message a GPU library left for its last failure."""
    function = ctypes.CFUNCTYPE(ctypes.c_char_p)(native.address(LAST_ERROR_SYMBOL))
    message = function()
    return message.decode(errors="replace") if message else ""


def check_status(native: NativeModule, status: int, entry: str, device: str) -> None:
    """Raise an ExecutableError with the library's message when an entry returned nonzero."""
    if status != 0:
        raise ExecutableError(
            f"@{entry} failed on {device}: {last_error(native) or f'status {status}'}"
        )


def configure_driver(native: NativeModule, device: str) -> None:
    """Before a GPU library's first call: for OpenCL without a system loader, point it at the
    loader bundled with pyopencl (`bundled_opencl`), its vendor libraries (PoCL) loaded first
    so that the loader finds them by name, and `PYOPENCL_HOME` set (unless set) as the bundled
    loader expects. Nothing otherwise: the library opens the system's driver, and says so in
    its error when there is none. A `<prefix>_set_driver_library` call after this one wins."""
    if device != "opencl":
        return
    bundled = bundled_opencl()
    if bundled is None:
        return
    os.environ.setdefault("PYOPENCL_HOME", str(bundled.home))
    for vendor in bundled.vendors:
        ctypes.CDLL(str(vendor))
    function = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)(native.address(SET_DRIVER_SYMBOL))
    function(str(bundled.loader).encode())  # nonzero once this library is open: it keeps its own


@dataclass(frozen=True)
class BundledOpenCL:
    """The OpenCL ICD loader in pyopencl's wheel, and what it needs: the vendor libraries its
    .icd files name (PoCL), loaded before it (the loader opens them by bare name), and the
    package directory, in `PYOPENCL_HOME` (the bundled loader reads it). A C program sets the
    same up with `PYOPENCL_HOME=<home> LD_PRELOAD=<vendors>` and
    `<prefix>_set_driver_library("<loader>")`."""

    loader: Path
    vendors: tuple[Path, ...]
    home: Path


def bundled_opencl() -> BundledOpenCL | None:
    """pyopencl's bundled OpenCL loader where the system has no `libOpenCL.so.1`; None where
    the system has one or pyopencl is not installed."""
    try:
        ctypes.CDLL("libOpenCL.so.1")
        return None
    except OSError:
        pass
    spec = importlib.util.find_spec("pyopencl")
    if spec is None or not spec.submodule_search_locations:
        return None
    home = Path(next(iter(spec.submodule_search_locations)))
    libraries = home / ".libs"
    loaders = sorted(libraries.glob("libOpenCL*.so*"))
    if not loaders:
        return None
    vendors = tuple(libraries / icd.read_text().strip() for icd in sorted(libraries.glob("*.icd")))
    return BundledOpenCL(loaders[0], tuple(v for v in vendors if v.is_file()), home)
