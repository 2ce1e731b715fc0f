"""Sizes of an entry's outputs computed from its inputs' sizes at call time: the JSON form of
the affine shape functions `convert-tensor-expr-to-loop` attaches (`dlc.dim_sizes`).

An expression is an int, `{"s": k}` (the k-th runtime size of the inputs, in `dim_args` order),
or `[op, lhs, rhs]` with op one of `add`, `mul`, `mod`, `floordiv`, `ceildiv` (MLIR's affine
expression kinds; subtraction is an addition of a product by -1). Runtime layer: no xDSL.
"""

from __future__ import annotations

from collections.abc import Sequence

_OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "mod": lambda a, b: a % b,
    "floordiv": lambda a, b: a // b,
    "ceildiv": lambda a, b: -(-a // b),
}


class SizeExprError(ValueError):
    """An expression that is not of the form above."""


def evaluate(expr: object, symbols: Sequence[int]) -> int:
    """The value of `expr` for the input sizes `symbols`."""
    if isinstance(expr, bool):
        raise SizeExprError(f"expected a size expression, found {expr!r}")
    if isinstance(expr, int):
        return expr
    if isinstance(expr, dict) and set(expr) == {"s"} and isinstance(expr["s"], int) \
            and 0 <= expr["s"] < len(symbols):
        return int(symbols[expr["s"]])
    if isinstance(expr, list) and len(expr) == 3 and expr[0] in _OPS:
        lhs, rhs = evaluate(expr[1], symbols), evaluate(expr[2], symbols)
        if expr[0] in ("mod", "floordiv", "ceildiv") and rhs == 0:
            raise SizeExprError(f"division by zero in {expr!r}")
        return int(_OPS[expr[0]](lhs, rhs))
    raise SizeExprError(f"expected a size expression over {len(symbols)} sizes, found "
                        f"{expr!r}"[:200])
