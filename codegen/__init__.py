"""The `-t` targets of dlc-opt: emitters that print lowered IR (LLVM IR, PTX, OpenCL C).

Emitters only print; every lowering is done by passes before them.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from xdsl.utils.target import Target

TARGETS: dict[str, tuple[str, str]] = {
    "llvm": ("dlc.codegen.llvm", "LLVMIRTarget"),
    "ptx": ("dlc.codegen.ptx", "PTXTarget"),
    "opencl": ("dlc.codegen.opencl", "OpenCLTarget"),
}


def get_dlc_targets() -> dict[str, Callable[[], type[Target]]]:
    """dlc's targets whose module exists, each behind a factory that imports it on first use."""
    def factory(module: str, cls: str) -> Callable[[], type[Target]]:
        return lambda: getattr(importlib.import_module(module), cls)

    return {
        name: factory(module, cls)
        for name, (module, cls) in TARGETS.items()
        if importlib.util.find_spec(module) is not None
    }
