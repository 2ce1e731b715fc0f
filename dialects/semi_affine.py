"""Semi-affine products of symbols in xDSL's affine expressions: `s0 * s1`, as MLIR allows.

MLIR's affine maps may multiply by a symbolic expression (one without dims: a "semi-affine"
map); xDSL 0.75 builds and prints such a product (`AffineBinaryOpExpr` of kind `Mul`) but its
`AffineExpr.__mul__`, which its parser and `replace_dims_and_symbols` call, refuses any factor
that is not a constant (its TODO #1087). dlc's shape functions need the product: the size of
a runtime height and width flattened into one dim (`?x144x?x?` reshaped to `?x144x?`) is
`s1 * s2`. Importing this module (`dlc.dialects` does, so every layer that reads or writes
affine maps has it) extends `__mul__` to a product of two symbolic expressions, built as it
is (no simplification beyond xDSL's own); a product with a dim still raises, as in MLIR.

Bottom layer: imports only xdsl.
"""

from __future__ import annotations

from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineExpr

_affine_mul = AffineExpr.__mul__


def _symbolic(expr: AffineExpr) -> bool:
    """Whether `expr` has no dims (symbols and constants only): MLIR's symbolic expression."""
    return not expr.used_dims()


def _semi_affine_mul(self: AffineExpr, other: AffineExpr | int) -> AffineExpr:
    if isinstance(other, AffineExpr) and not isinstance(self, AffineConstantExpr) \
            and not isinstance(other, AffineConstantExpr) and _symbolic(self) \
            and _symbolic(other):
        return AffineBinaryOpExpr(AffineBinaryOpKind.Mul, self, other)
    return _affine_mul(self, other)


if getattr(AffineExpr.__mul__, "__name__", "") != _semi_affine_mul.__name__:
    AffineExpr.__mul__ = _semi_affine_mul  # type: ignore[method-assign]
    AffineExpr.__rmul__ = _semi_affine_mul  # type: ignore[method-assign]
