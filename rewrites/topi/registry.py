"""The registry of compute definitions: graph op class → the function that defines it in TE.

Counterpart: TVM's `FTVMCompute` op attribute (each Relay op registers its TOPI compute). A
definition module registers its functions with `@compute_definition(OpClass, ...)`; the registry
is filled when `rewrites.topi` is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from xdsl.builder import Builder
from xdsl.ir import Operation, SSAValue

Definition = Callable[[Any, Builder], SSAValue]
"""`definition(op, builder) -> value`: inserts, with `builder`, the ops that compute the result of
the graph op `op` (one or more `tensor_expr.compute`, or an `arith.constant`) from `op`'s operands,
and returns the value that replaces `op`'s result."""

_DEFINITIONS: dict[type[Operation], Definition] = {}

_F = TypeVar("_F", bound=Definition)


def compute_definition(*op_types: type[Operation]) -> Callable[[_F], _F]:
    """Decorator: registers the decorated function as the definition of each of `op_types`."""

    def register(definition: _F) -> _F:
        for op_type in op_types:
            if op_type in _DEFINITIONS:
                raise ValueError(f"'{op_type.name}' already has a compute definition")
            _DEFINITIONS[op_type] = definition
        return definition

    return register


def lookup_definition(op_type: type[Operation]) -> Definition | None:
    """The definition registered for `op_type`, or None."""
    return _DEFINITIONS.get(op_type)


def defined_op_types() -> list[type[Operation]]:
    """The op classes that have a definition, sorted by op name."""
    return sorted(_DEFINITIONS, key=lambda op_type: op_type.name)
