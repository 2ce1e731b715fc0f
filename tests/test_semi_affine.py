"""Semi-affine products of symbols (`dialects.semi_affine`): the shape function of a runtime
plane flattened into one dim, `s0 * s1`, builds, prints, parses back, substitutes and
evaluates; a product with a dim is still refused, as in MLIR."""

from __future__ import annotations

import pytest
from dlc.dialects import make_context
from dlc.rewrites.output_sizes import size_exprs
from dlc.runtime.size_exprs import evaluate
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.parser import Parser


def test_a_product_of_symbols_round_trips_through_text() -> None:
    s0, s1, s2 = (AffineExpr.symbol(k) for k in range(3))
    size_map = AffineMapAttr(AffineMap(0, 3, (s0, s1 * s2 + s0 * 4)))
    text = str(size_map)
    assert text == "affine_map<()[s0, s1, s2] -> (s0, ((s1 * s2) + (s0 * 4)))>"
    assert Parser(make_context(), text).parse_attribute() == size_map


def test_a_product_of_symbols_substitutes_and_evaluates() -> None:
    s0, s1 = AffineExpr.symbol(0), AffineExpr.symbol(1)
    product = (s0 * s1).replace_dims_and_symbols([], [s1 + 1, AffineExpr.constant(3)])
    assert str(product) == "((s1 * 3) + 3)"  # xDSL distributes a constant factor
    assert (s0 * s1 + 2).eval([], [20, 40]) == 802
    (expr,) = size_exprs(AffineMapAttr(AffineMap(0, 2, (s0 * s1,))))
    assert expr == ["mul", {"s": 0}, {"s": 1}]
    assert evaluate(expr, [80, 80]) == 6400


def test_a_product_with_a_dim_is_still_refused() -> None:
    with pytest.raises(NotImplementedError):
        AffineExpr.dimension(0) * AffineExpr.symbol(0)
