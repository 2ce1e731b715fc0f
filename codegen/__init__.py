"""The `-t` targets of dlc-opt: emitters that print lowered IR (LLVM IR, PTX, OpenCL C).

Emitters only print; every lowering is done by passes before them.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import NamedTuple

from xdsl.utils.target import Target


class TargetEntry(NamedTuple):
    """Where a `-t` target's class lives, and the line `dlc-opt --help` shows for it."""

    module: str
    cls: str
    summary: str


TARGETS: dict[str, TargetEntry] = {
    "llvm": TargetEntry(
        "dlc.codegen.llvm", "LLVMIRTarget",
        "LLVM IR of an llvm-dialect module, for the host CPU (after -p cpu)"),
    "ptx": TargetEntry(
        "dlc.codegen.ptx", "PTXTarget",
        "PTX of the module's kernels for an NVIDIA GPU, 'ptx{arch=sm_90}' (after -p gpu-ptx)"),
    "opencl": TargetEntry(
        "dlc.codegen.opencl", "OpenCLTarget",
        "the module's kernels as one OpenCL C program (after -p gpu-opencl)"),
}
"""dlc's `-t` targets by name; nothing is imported until a target is used."""


def get_dlc_targets() -> dict[str, Callable[[], type[Target]]]:
    """dlc's targets whose module exists, each behind a factory that imports it on first use."""
    def factory(module: str, cls: str) -> Callable[[], type[Target]]:
        return lambda: getattr(importlib.import_module(module), cls)

    return {
        name: factory(entry.module, entry.cls)
        for name, entry in TARGETS.items()
        if importlib.util.find_spec(entry.module) is not None
    }
