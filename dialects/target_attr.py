"""The `dlc.target` attribute (MLIR's DLTI target spec): the target an op's IR is compiled for,
as a target string (`llvm -mcpu=znver3`, `cuda -arch=sm_90`) parsed into the description of
`dlc.target`. Passes (`rewrites/pass_target.py`) and emitters (`codegen`) read it here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from dlc.dialects.contracts import TARGET_ATTR
from dlc.target import CpuTarget, GpuTarget, TargetError
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

_T = TypeVar("_T", CpuTarget, GpuTarget)


def op_target(
    op: Operation, parse: Callable[[str], _T], default: _T,
    error: type[DiagnosticException] = DiagnosticException,
) -> _T:
    """The target `op`'s `dlc.target` names (`parse` reads the string), or `default` when it
    has none; a malformed attribute raises `error` naming the op."""
    attr = op.attributes.get(TARGET_ATTR)
    if attr is None:
        return default
    if not isinstance(attr, StringAttr):
        raise error(f"'{op.name}' op expected {TARGET_ATTR} to be a string, found {attr}")
    try:
        return parse(attr.data)
    except TargetError as e:
        raise error(f"'{op.name}' op invalid {TARGET_ATTR}: {e}") from None
