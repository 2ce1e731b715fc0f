"""`checked_sizes`: the input sizes a function's `eq` size checks make equal, the rule by which
kernels over runtime sizes treat two sizes as one (an epilogue fused into its reduction, a
concat's pieces merged into planes)."""

from __future__ import annotations

from dlc.rewrites.output_sizes import checked_sizes
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, DictionaryAttr, StringAttr
from xdsl.ir.affine import AffineExpr, AffineMap

COUNT = 6


def _checks(pairs: list[tuple[AffineExpr, AffineExpr]], kind: str = "eq") -> ArrayAttr:
    return ArrayAttr([DictionaryAttr({
        "sizes": AffineMapAttr(AffineMap(0, COUNT, (lhs, rhs))), "kind": StringAttr(kind),
        "what": StringAttr("a check")}) for lhs, rhs in pairs])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, COUNT - 1), st.integers(0, COUNT - 1)), max_size=8))
def test_symbols_are_equal_exactly_when_checks_chain_them(pairs: list[tuple[int, int]]) -> None:
    group = list(range(COUNT))

    def find(k: int) -> int:
        while group[k] != k:
            k = group[k]
        return k

    for a, b in pairs:
        group[find(a)] = find(b)
    sizes = checked_sizes(_checks([(AffineExpr.symbol(a), AffineExpr.symbol(b))
                                   for a, b in pairs]), COUNT)
    for a in range(COUNT):
        for b in range(COUNT):
            assert (sizes[a] == sizes[b]) == (find(a) == find(b)), (pairs, a, b)


def test_a_symbol_checked_equal_to_an_expression_takes_it() -> None:
    """A residual's size checked against a stride-2 conv's output size: the residual's symbol
    becomes the conv's expression of its input's; `ge` checks say nothing of equality."""
    strided = (AffineExpr.symbol(1) - 1) // 2 + 1
    sizes = checked_sizes(_checks([(strided, AffineExpr.symbol(4))]), COUNT)
    assert sizes[4] == strided and sizes[1] == AffineExpr.symbol(1)
    unchanged = checked_sizes(_checks([(AffineExpr.symbol(0), AffineExpr.symbol(3))], "ge"),
                              COUNT)
    assert unchanged == [AffineExpr.symbol(k) for k in range(COUNT)]
