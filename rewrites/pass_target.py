"""The target a pass compiles for: its `target` option, else the module's `dlc.target`, else the
fixed default (MLIR's DLTI lookup: an explicit option wins over the IR's target spec).

Never the host: a pass's output depends only on its input and options.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from dlc.dialects.target_attr import op_target
from dlc.target import (
    DEFAULT_CPU_TARGET,
    DEFAULT_GPU_TARGET,
    CpuTarget,
    GpuTarget,
    TargetError,
    parse_cpu_target,
    parse_gpu_target,
)
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

_T = TypeVar("_T", CpuTarget, GpuTarget)


def _target_for(
    pass_name: str, option: str, module: ModuleOp, parse: Callable[[str], _T], default: _T
) -> _T:
    if option:
        try:
            return parse(option)
        except TargetError as e:
            raise PassFailedException(f"{pass_name}: invalid target option: {e}") from None
    return op_target(module, parse, default, PassFailedException)


def cpu_target_for(pass_name: str, option: str, module: ModuleOp) -> CpuTarget:
    """The CPU target of `pass_name` given its `target` option on `module`."""
    return _target_for(pass_name, option, module, parse_cpu_target, DEFAULT_CPU_TARGET)


def gpu_target_for(pass_name: str, option: str, module: ModuleOp) -> GpuTarget:
    """The GPU target of `pass_name` given its `target` option on `module`."""
    return _target_for(pass_name, option, module, parse_gpu_target, DEFAULT_GPU_TARGET)
