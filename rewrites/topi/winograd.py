"""Compute definition of `graph.conv2d_winograd`: Winograd's F(m, 3) along the rows.

Counterpart: TVM's `topi.nn.conv2d_winograd_nchw` (input transform, batched products, output
transform), here one-dimensional as `dialects/graph/winograd.py` describes. Four computes:

    pad            the input zero-padded, with the rows of a last partial tile
    winograd_input V[n, a, c, t, x] = sum_r B^T[a, r] * pad[n, c, m*t + r, x]
    conv2d         M[n, a, k, t, w] = sum_(c, j) U[a, k, c, j] * V[n, a, c, t, w + j]
    winograd_output y[n, k, h, w] = sum_a A^T[h mod m, a] * M[n, a, k, h / m, w] (+ bias[k])

The transform coefficients are selected from the (small, constant) matrices by the transform's
own row (`a`, `h mod m`): axes outside the vectorized `w`, so the selects are loop-invariant
there. The middle compute is a conv2d-shaped reduction scheduled by the same rules as a direct
conv: vectorized along `w` on wide rows, over the output channels `k` on narrow ones (the
channel kernel, with `U` packed per transform row).
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.ops import Conv2DWinogradOp
from dlc.dialects.graph.winograd import tile_rows, transform_matrices
from dlc.rewrites.topi.common import (
    Extent,
    accumulator_type,
    affine,
    binary,
    check_element_type,
    constant,
    convert_float,
    divide_index,
    emit_compute,
    extents_of,
    index,
    read,
    remainder_index,
    shape_of,
    tensor_type,
    window_extent,
    zero_attr,
)
from dlc.rewrites.topi.nn import bias_add, pad
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, SSAValue

WINOGRAD_INPUT_TAG = "winograd_input"
WINOGRAD_OUTPUT_TAG = "winograd_output"


def _coefficient(
    b: Builder, matrix: np.ndarray, row: SSAValue, column: int, element_type: Attribute
) -> SSAValue:
    """`matrix[row, column]` for a run-time `row`: a chain of selects on constants."""
    values = [float(v) for v in matrix[:, column]]
    value = constant(b, values[-1], element_type)
    for position in range(len(values) - 2, -1, -1):
        if set(values[position:]) == {values[position]}:
            continue  # the rows from here on share one value: no select needed yet
        is_row = b.insert(arith.CmpiOp(row, index(b, position), "eq")).result
        choice = constant(b, values[position], element_type)
        value = b.insert(arith.SelectOp(is_row, choice, value)).result
    return value


def _linear_combination(
    b: Builder, matrix: np.ndarray, row: SSAValue, terms: list[SSAValue],
    element_type: Attribute,
) -> SSAValue:
    """`sum_j matrix[row, j] * terms[j]`, skipping columns of zeros."""
    total: SSAValue | None = None
    for column, term in enumerate(terms):
        if not matrix[:, column].any():
            continue
        product = binary(b, "mul", _coefficient(b, matrix, row, column, element_type), term)
        total = product if total is None else binary(b, "add", total, product)
    assert total is not None, "a transform matrix has a non-zero column"
    return total


@compute_definition(Conv2DWinogradOp)
def conv2d_winograd(op: Conv2DWinogradOp, builder: Builder) -> SSAValue:
    """pad → winograd_input → conv2d (1xKW per transform row) → winograd_output → bias_add.

    On f16/bf16 the transforms, products and sums are in f32 (the accumulator type) and the
    result is rounded once, in "bias_add" (or "round").
    """
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    check_element_type(op, element_type)
    accumulator = accumulator_type(element_type)
    tile = op.tile_value()
    b_t, _, a_t = transform_matrices(tile)
    alpha, out_channels, channels, kw = shape_of(op.weight)
    n, _, out_h, out_w = result_type.get_shape()
    top, left, bottom, right = op.padding_tuple()
    if out_h >= 0 and out_w >= 0:
        tiles: Extent = tile_rows(out_h, tile)
        extra = tiles * tile - out_h
    else:  # a runtime plane: its rows, tiles and the padding's last rows sized at run time
        in_dims = extents_of(builder, op.input)
        out_h = window_extent(builder, in_dims[2], 3, 1, top, bottom, 1, origin=op, axis=2)
        out_w = window_extent(builder, in_dims[3], kw, 1, left, right, 1, origin=op, axis=3)
        tiles = tile_count(builder, out_h, tile)
        extra = tile - 1  # the rows a last partial tile reads past the padded input, at most
    source = op.input
    if any((top, left, bottom + extra, right)):
        source = pad(builder, op, op.input, {2: top, 3: left}, {2: bottom + extra, 3: right}, 0)
    width = extents_of(builder, source)[3]
    batch = extents_of(builder, op.input)[0]

    def input_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        batch, row, channel, t, x = i
        rows = [
            convert_float(b, read(b, source, [batch, channel, affine(b, [(t, tile)], r), x]),
                          accumulator)
            for r in range(alpha)
        ]
        return _linear_combination(b, b_t, row, rows, accumulator)

    transformed = emit_compute(
        builder, op, "winograd_input",
        TensorType(accumulator, _shape([n, alpha, channels, tiles, width])), input_body,
        tag=WINOGRAD_INPUT_TAG, extents=[batch, alpha, channels, tiles, width],
    )

    def product_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        batch, row, k, t, w = i
        channel, j = r
        return binary(
            b, "mul", convert_float(b, read(b, op.weight, [row, k, channel, j]), accumulator),
            read(b, transformed, [batch, row, channel, t, affine(b, [(w, 1), (j, 1)])]),
        )

    products = emit_compute(
        builder, op, "conv2d",
        TensorType(accumulator, _shape([n, alpha, out_channels, tiles, out_w])),
        product_body, tag="conv2d_winograd_nchw", reduce_extents=[channels, kw],
        combiner="sum", init=zero_attr(accumulator),
        extents=[batch, alpha, out_channels, tiles, out_w],
    )

    def output_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        batch, k, h, w = i
        t, row = divide_index(b, h, tile), remainder_index(b, h, tile)
        terms = [read(b, products, [batch, index(b, a), k, t, w]) for a in range(alpha)]
        return _linear_combination(b, a_t, row, terms, accumulator)

    output = emit_compute(
        builder, op, "winograd_output", TensorType(accumulator, result_type.get_shape()),
        output_body, tag=WINOGRAD_OUTPUT_TAG, extents=[batch, out_channels, out_h, out_w])
    return bias_add(builder, op, output, op.bias, 1, element_type)


def tile_count(b: Builder, rows: Extent, tile: int) -> Extent:
    """`ceil(rows / tile)`: the transforms of `tile` rows that cover `rows` output rows."""
    if isinstance(rows, int):
        return tile_rows(rows, tile)
    return divide_index(b, affine(b, [(rows, 1)], tile - 1), tile)


def _shape(extents: list[Extent]) -> list[int]:
    """A tensor type's shape for `extents` (`?` where one is a runtime value)."""
    return [e if isinstance(e, int) and e >= 0 else DYNAMIC_INDEX for e in extents]
