"""Compute definitions of the reductions: `graph.reduce` (sum, mean, max, min, prod) and
`graph.argmax`.

Counterpart: TVM's `topi.sum` / `topi.max` / `topi.min` / `topi.prod` (topi/reduction.py),
`topi.mean`'s sum-then-divide and `topi.argmax`. A reduce is one reduction compute named and
tagged `reduce_<combiner>`; a mean is "reduce_mean_sum" (tag "reduce_sum") followed by the
injective division "reduce_mean".
"""

from __future__ import annotations

import math

from dlc.dialects.graph.ops import ReduceOp
from dlc.dialects.graph.ops_tensor import ArgMaxOp
from dlc.rewrites.topi.common import (
    binary,
    check_element_type,
    constant,
    emit_compute,
    extents_of,
    index,
    index_to_element,
    is_float,
    read,
    reduction,
    shape_of,
    tensor_type,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.ir import SSAValue


@compute_definition(ReduceOp)
def reduce(op: ReduceOp, builder: Builder) -> SSAValue:
    """`out[kept...] = combine over (reduced...) of x[...]`; keepdims leaves size-1 axes that the
    body ignores. A mean divides the sum by the number of reduced elements (integers toward
    zero). Runtime dims: a kept one sizes the result, a reduced one is a runtime reduction
    extent, and a mean's count is then their product at run time."""
    kind, axes, keepdims = op.kind_value(), op.normalized_axes(), op.keepdims_value()
    in_shape = shape_of(op.x)
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    check_element_type(op, element_type)
    combiner, init = reduction("sum" if kind == "mean" else kind, element_type)

    def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        indices: list[SSAValue] = []
        kept, reduced = iter(i), iter(r)
        for axis in range(len(in_shape)):
            if axis not in axes:
                indices.append(next(kept))
                continue
            indices.append(next(reduced))
            if keepdims:
                next(kept)
        return read(b, op.x, indices)

    sizes = extents_of(builder, op.x)
    kept = [sizes[axis] for axis in range(len(in_shape)) if axis not in axes]
    if keepdims:
        kept = [1 if axis in axes else sizes[axis] for axis in range(len(in_shape))]
    reduced = [sizes[axis] for axis in axes]
    name = "reduce_mean_sum" if kind == "mean" else f"reduce_{kind}"
    tag = "reduce_sum" if kind == "mean" else f"reduce_{kind}"
    total = emit_compute(
        builder, op, name, result_type, body, tag=tag,
        reduce_extents=[max(in_shape[axis], -1) for axis in axes], combiner=combiner,
        init=init,
        extents=kept, reduce_sizes=[d for d in reduced if isinstance(d, SSAValue)],
    )
    if kind != "mean":
        return total
    count = math.prod(d for d in reduced if isinstance(d, int))
    runtime = [d for d in reduced if isinstance(d, SSAValue)]
    counted: SSAValue | None = None
    for size in runtime:  # a runtime count: the sizes' product, made outside the bodies
        counted = size if counted is None else builder.insert(arith.MuliOp(counted, size)).result
    if counted is not None and count != 1:
        counted = builder.insert(arith.MuliOp(counted, index(builder, count))).result

    def mean_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        value = read(b, total, i)
        divisor = constant(b, count, element_type) if counted is None \
            else index_to_element(b, counted, element_type)
        return binary(b, "div", value, divisor)

    return emit_compute(builder, op, "reduce_mean", result_type, mean_body, tag=INJECTIVE,
                        extents=kept)


@compute_definition(ArgMaxOp)
def argmax(op: ArgMaxOp, builder: Builder) -> SSAValue:
    """Two reductions over the axis (TVM's argmax has a tuple combiner; tensor_expr has none):
    "argmax_max" is the maximum m, then "argmax" the first index r with x[r] == m (min over
    r, init dim) or the last (max over r, init -1) with `select_last_index`. A NaN counts as
    the maximum, as in NumPy."""
    axis, keepdims = op.normalized_axis(), op.keepdims_value()
    in_shape = shape_of(op.x)
    element_type = tensor_type(op.x).get_element_type()
    check_element_type(op, element_type)
    dim = in_shape[axis]
    reduced_type = TensorType(element_type, tensor_type(op.result).get_shape())
    last = op.select_last_index_value()

    def along_axis(b: Builder, i: list[SSAValue], r: SSAValue) -> SSAValue:
        kept = [*i[:axis], *i[axis + 1 :]] if keepdims else i
        return read(b, op.x, [*kept[:axis], r, *kept[axis:]])

    sizes = extents_of(builder, op.x)
    kept = [*sizes[:axis], *([1] if keepdims else []), *sizes[axis + 1:]]
    combiner, init = reduction("max", element_type)
    maximum = emit_compute(
        builder, op, "argmax_max", reduced_type,
        lambda b, i, r: along_axis(b, i, r[0]), tag="reduce_max",
        reduce_extents=[dim], combiner=combiner, init=init, extents=kept,
    )

    def index_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        x = along_axis(b, i, r[0])
        best = read(b, maximum, i)
        if is_float(element_type):
            equal = b.insert(arith.CmpfOp(x, best, "oeq")).result
            nan = b.insert(arith.CmpfOp(x, x, "uno")).result
            hit = b.insert(arith.OrIOp(equal, nan)).result
        else:
            hit = b.insert(arith.CmpiOp(x, best, "eq")).result
        position = b.insert(arith.IndexCastOp(r[0], i64)).result
        miss = constant(b, -1 if last else dim, i64)
        return b.insert(arith.SelectOp(hit, position, miss)).result

    return emit_compute(
        builder, op, "argmax", tensor_type(op.result), index_body, tag="argmax",
        reduce_extents=[dim], combiner="max" if last else "min",
        init=IntegerAttr(-1 if last else dim, i64), extents=kept,
    )
