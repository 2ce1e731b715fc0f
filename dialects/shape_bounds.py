"""Shape bounds of a module: every tensor or memref dimension fits in i64, as MLIR's shaped types
require (xDSL's parser and verifier accept any integer), so that a dimension of 2^64 is an error
naming its op instead of a failure to build an index constant deep in the lowering."""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

MAX_DIMENSION = (1 << 63) - 1


def verify_shape_bounds(root: Operation) -> None:
    """Raises `VerifyException` naming the first op (in walk order) with a result or block
    argument whose type has a dimension above 2^63 - 1."""
    for op in root.walk():
        for index, result in enumerate(op.results):
            _check(op, f"result #{index}", result.type)
        for region in op.regions:
            for block in region.blocks:
                for index, arg in enumerate(block.args):
                    _check(op, f"block argument #{index}", arg.type)


def _check(op: Operation, what: str, type: Attribute) -> None:
    if not isinstance(type, TensorType | MemRefType):
        return
    for dimension in type.get_shape():
        if dimension > MAX_DIMENSION:
            raise VerifyException(
                f"'{op.name}' op expected the dimensions of {what} to be at most 2^63 - 1, "
                f"found {dimension} in {type}"
            )
