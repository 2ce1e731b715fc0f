"""Compute definition of `graph.topk`, by ranking (no sort in tensor_expr).

Counterpart: TVM's `topi.topk`, which calls an external sort; here the selection is written as
reductions, O(n²) per row along the axis, which suits the small axes of inference graphs:
"topk_rank" counts, for each element, the elements that come before it (greater, or equal with
a lower index, for `largest`); "topk_indices" then picks, for output position j < k, the position
of the element whose rank is j, and "topk_values" reads x there.

NaN ranks above every number, as NumPy's sort and ONNX Runtime order it (first for `largest`,
last otherwise), and NaNs tie with each other; so the ranks are a permutation of the axis even
with NaN, and every output position selects exactly one element.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.graph.ops_tensor import TopKOp
from dlc.rewrites.topi.common import (
    check_element_type,
    clamp_index,
    constant,
    emit_compute,
    is_bool,
    is_float,
    is_unsigned,
    read,
    shape_of,
    tensor_type,
)
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i1, i64
from xdsl.ir import SSAValue


@compute_definition(TopKOp)
def topk(op: TopKOp, builder: Builder) -> Sequence[SSAValue]:
    """values[.., j, ..] = the x whose rank is j; indices likewise its position (i64)."""
    axis = op.normalized_axis()
    x_type = tensor_type(op.x)
    element_type = x_type.get_element_type()
    check_element_type(op, element_type)
    dim = shape_of(op.x)[axis]
    largest = op.largest_value()
    rank_type = TensorType(i64, x_type.get_shape())

    def at(i: list[SSAValue], position: SSAValue) -> list[SSAValue]:
        return [*i[:axis], position, *i[axis + 1 :]]

    def rank_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        mine, other = read(b, op.x, i), read(b, op.x, at(i, r[0]))
        if is_float(element_type):
            ahead, tied = _float_order(b, other, mine, largest)
        else:
            unsigned = is_bool(element_type) or is_unsigned(element_type)
            order = ("ugt" if largest else "ult") if unsigned else ("sgt" if largest else "slt")
            ahead = b.insert(arith.CmpiOp(other, mine, order)).result
            tied = b.insert(arith.CmpiOp(other, mine, "eq")).result
        earlier = b.insert(arith.CmpiOp(r[0], i[axis], "ult")).result
        tie_break = b.insert(arith.AndIOp(tied, earlier)).result
        before = b.insert(arith.OrIOp(ahead, tie_break)).result
        return b.insert(arith.ExtUIOp(before, i64)).result

    rank = emit_compute(
        builder, op, "topk_rank", rank_type, rank_body, tag="topk",
        reduce_extents=[dim], combiner="sum", init=IntegerAttr(0, i64),
    )

    def selected(b: Builder, i: list[SSAValue], r: SSAValue) -> SSAValue:
        position = b.insert(arith.IndexCastOp(i[axis], i64)).result
        return b.insert(arith.CmpiOp(read(b, rank, at(i, r)), position, "eq")).result

    def indices_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        hit = selected(b, i, r[0])
        position = b.insert(arith.IndexCastOp(r[0], i64)).result
        return b.insert(arith.SelectOp(hit, position, constant(b, 0, i64))).result

    indices = emit_compute(
        builder, op, "topk_indices", tensor_type(op.indices), indices_body, tag="topk",
        reduce_extents=[dim], combiner="sum", init=IntegerAttr(0, i64),
    )

    def values_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        position = b.insert(arith.IndexCastOp(read(b, indices, i), IndexType())).result
        return read(b, op.x, at(i, clamp_index(b, position, max(dim, 1))))

    values = emit_compute(
        builder, op, "topk_values", tensor_type(op.values), values_body, tag="topk",
    )
    return [values, indices]


def _float_order(
    b: Builder, other: SSAValue, mine: SSAValue, largest: bool
) -> tuple[SSAValue, SSAValue]:
    """(other comes strictly before mine, other ties with mine) in the order where NaN is above
    every number and equal to NaN: `ugt` (or `ult`) holds where either is NaN, so a NaN `mine`
    (for largest) or a NaN `other` (for smallest) is excluded."""
    other_nan = b.insert(arith.CmpfOp(other, other, "uno")).result
    mine_nan = b.insert(arith.CmpfOp(mine, mine, "uno")).result
    true = b.insert(arith.ConstantOp(IntegerAttr(1, i1))).result
    if largest:
        unordered_ahead = b.insert(arith.CmpfOp(other, mine, "ugt")).result
        not_nan = b.insert(arith.XOrIOp(mine_nan, true)).result
    else:
        unordered_ahead = b.insert(arith.CmpfOp(other, mine, "ult")).result
        not_nan = b.insert(arith.XOrIOp(other_nan, true)).result
    ahead = b.insert(arith.AndIOp(unordered_ahead, not_nan)).result
    equal = b.insert(arith.CmpfOp(other, mine, "oeq")).result
    both_nan = b.insert(arith.AndIOp(other_nan, mine_nan)).result
    return ahead, b.insert(arith.OrIOp(equal, both_nan)).result
