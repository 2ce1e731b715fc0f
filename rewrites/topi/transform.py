"""Compute definitions of the data-movement graph ops: constant, reshape, flatten, transpose,
concat.

Counterpart: TVM's `topi.reshape`, `topi.transpose`, `topi.concatenate` (topi/transform.py).
Each is one injective compute whose body is an index map: reshape and flatten linearize the
output index and delinearize it into the input's (with `arith.divui` / `arith.remui` on index,
only across the axes whose sizes do not match one to one); concat selects among clamped reads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dlc.dialects.graph.ops import (
    ConcatOp,
    ConstantOp,
    FlattenOp,
    ReshapeOp,
    TransposeOp,
    dynamic_reshape_segments,
)
from dlc.rewrites.topi.common import (
    Extent,
    affine,
    clamp_index,
    divide_index,
    emit_compute,
    extents_of,
    index,
    read,
    remainder_index,
    require_equal_dims,
    shape_of,
    tensor_type,
)
from dlc.rewrites.topi.common import (
    constant as constant_scalar,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.ir import SSAValue


@compute_definition(ConstantOp)
def constant(op: ConstantOp, builder: Builder) -> SSAValue:
    """`arith.constant` holding the same elements attribute (the bytes are not unpacked)."""
    new = arith.ConstantOp(op.value)
    new.location = op.location
    builder.insert(new)
    return new.result


# ---------------------------------------------------------------------------------------------
# reshape and flatten
# ---------------------------------------------------------------------------------------------

AxisGroup = tuple[list[int], list[int]]
"""Input axes and output axes that hold the same elements (equal products of sizes)."""


def reshape_groups(in_shape: Sequence[int], out_shape: Sequence[int]) -> list[AxisGroup]:
    """The finest split of both shapes into consecutive groups with equal products.

    An output axis then depends only on the input axes of its group: a reshape that merges or
    splits a few axes needs no index arithmetic on the others. One group of all axes when the
    shapes do not split (only with zero-size axes).
    """
    groups: list[AxisGroup] = []
    i = j = 0
    while i < len(in_shape) or j < len(out_shape):
        in_axes: list[int] = []
        out_axes: list[int] = []
        if i < len(in_shape):
            in_axes.append(i)
            i += 1
        if j < len(out_shape):
            out_axes.append(j)
            j += 1
        while math.prod(in_shape[a] for a in in_axes) != math.prod(out_shape[a] for a in out_axes):
            if math.prod(in_shape[a] for a in in_axes) < math.prod(
                out_shape[a] for a in out_axes
            ) and i < len(in_shape):
                in_axes.append(i)
                i += 1
            elif j < len(out_shape):
                out_axes.append(j)
                j += 1
            else:
                return [(list(range(len(in_shape))), list(range(len(out_shape))))]
        groups.append((in_axes, out_axes))
    return groups


def reshape_indices(
    b: Builder, out_indices: Sequence[SSAValue], in_shape: Sequence[int],
    out_shape: Sequence[int],
) -> list[SSAValue]:
    """The input index of a row-major reshape from `in_shape` to `out_shape` at `out_indices`.

    Both shapes must hold at least one element.
    """
    zero = index(b, 0) if 1 in in_shape else None
    indices: list[SSAValue] = [zero or out_indices[0]] * len(in_shape)
    for in_axes, out_axes in reshape_groups(in_shape, out_shape):
        live = [axis for axis in in_axes if in_shape[axis] != 1]
        if not live:
            continue
        terms: list[tuple[SSAValue, int]] = []
        stride = 1
        for axis in reversed(out_axes):
            if out_shape[axis] != 1:
                terms.append((out_indices[axis], stride))
            stride *= out_shape[axis]
        linear = affine(b, list(reversed(terms)))
        stride = math.prod(in_shape[axis] for axis in live)
        for position, axis in enumerate(live):
            stride //= in_shape[axis]
            value = divide_index(b, linear, stride)
            indices[axis] = value if position == 0 else remainder_index(b, value, in_shape[axis])
    return indices


def _reshape_compute(builder: Builder, op: ReshapeOp | FlattenOp) -> SSAValue:
    in_shape, out_shape = shape_of(op.x), shape_of(op.result)
    label = "reshape" if isinstance(op, ReshapeOp) else "flatten"
    if any(dim < 0 for dim in in_shape[1:]) or (
            in_shape and in_shape[0] < 0 and (not out_shape or out_shape[0] >= 0)):
        return _dynamic_reshape(builder, op, label)  # runtime dims, kept (one not first)

    element_type = tensor_type(op.result).get_element_type()

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        if math.prod(out_shape) == 0:  # nothing to read: no element is ever computed
            return constant_scalar(b, 0, element_type)
        return read(b, op.x, reshape_indices(b, i, in_shape, out_shape))

    return emit_compute(builder, op, label, tensor_type(op.result), body, tag=INJECTIVE)


def _dynamic_reshape(builder: Builder, op: ReshapeOp | FlattenOp, label: str) -> SSAValue:
    """A reshape keeping each runtime dim or merging consecutive ones
    (`dynamic_reshape_segments`): a kept runtime dim's index is the result's, a merged one's
    is split by the runtime sizes of the operand's dims in it (innermost first), each static
    segment's is `reshape_indices` of that segment alone (no index arithmetic crosses a
    runtime dim)."""
    in_shape, out_shape = shape_of(op.x), shape_of(op.result)
    segments = op.segments() if isinstance(op, ReshapeOp) else dynamic_reshape_segments(
        in_shape, out_shape)
    assert segments is not None, "the verifier pairs the dynamic dims"
    element_type = tensor_type(op.result).get_element_type()
    in_extents = extents_of(builder, op.x)
    runtime = [(ins, outs[0]) for ins, outs in segments if outs and out_shape[outs[0]] < 0]
    extents: list[Extent] = list(out_shape)
    for in_axes, out_axis in runtime:
        extent: Extent = 1
        for axis in in_axes:
            extent = _product_extent(builder, extent, in_extents[axis])
        extents[out_axis] = extent

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        if 0 in out_shape:  # nothing to read
            return constant_scalar(b, 0, element_type)
        indices: list[SSAValue] = [i[0]] * len(in_shape)
        for in_axes, out_axis in runtime:
            rest = i[out_axis]
            for position, axis in enumerate(reversed(in_axes)):
                if position == len(in_axes) - 1:
                    indices[axis] = rest
                    break
                size = in_extents[axis]
                if isinstance(size, int):
                    indices[axis] = remainder_index(b, rest, size)
                    rest = divide_index(b, rest, size)
                else:
                    indices[axis] = b.insert(arith.RemUIOp(rest, size)).result
                    rest = b.insert(arith.DivUIOp(rest, size)).result
        for in_axes, out_axes in segments:
            if not in_axes or (out_axes and out_shape[out_axes[0]] < 0):
                continue  # dims of 1 only, or a runtime dim (above)
            if not out_axes:  # dims of 1 only
                found = [index(b, 0)] * len(in_axes)
            else:
                found = reshape_indices(b, [i[a] for a in out_axes],
                                        [in_shape[a] for a in in_axes],
                                        [out_shape[a] for a in out_axes])
            for axis, value in zip(in_axes, found, strict=True):
                indices[axis] = value
        return read(b, op.x, indices)

    return emit_compute(builder, op, label, tensor_type(op.result), body, tag=INJECTIVE,
                        extents=extents)


def _product_extent(b: Builder, lhs: Extent, rhs: Extent) -> Extent:
    """`lhs * rhs`: an int where both are static, else an `index` value."""
    if isinstance(lhs, int) and isinstance(rhs, int):
        return lhs * rhs
    if isinstance(lhs, int):
        lhs, rhs = rhs, lhs
    assert isinstance(lhs, SSAValue)
    if isinstance(rhs, int):
        return lhs if rhs == 1 else affine(b, [(lhs, rhs)])
    return b.insert(arith.MuliOp(lhs, rhs)).result


@compute_definition(ReshapeOp)
def reshape(op: ReshapeOp, builder: Builder) -> SSAValue:
    """`out[i...] = x[delinearize(linearize(i...))]` (row-major)."""
    return _reshape_compute(builder, op)


@compute_definition(FlattenOp)
def flatten(op: FlattenOp, builder: Builder) -> SSAValue:
    """A reshape to (prod(shape[:axis]), prod(shape[axis:]))."""
    return _reshape_compute(builder, op)


# ---------------------------------------------------------------------------------------------
# transpose and concat
# ---------------------------------------------------------------------------------------------


@compute_definition(TransposeOp)
def transpose(op: TransposeOp, builder: Builder) -> SSAValue:
    """`out[i...] = x[j...]` with `j[perm[k]] = i[k]`."""
    perm = op.perm_tuple()

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        indices = [i[0]] * len(perm)
        for out_axis, in_axis in enumerate(perm):
            indices[in_axis] = i[out_axis]
        return read(b, op.x, indices)

    in_extents = extents_of(builder, op.x)
    return emit_compute(builder, op, "transpose", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=[in_extents[axis] for axis in perm])


@compute_definition(ConcatOp)
def concat(op: ConcatOp, builder: Builder) -> SSAValue:
    """`out[..., k, ...] = input_j[..., k - offset_j, ...]` for the input j that holds k.

    Every input is read at its clamped index; a chain of `arith.select` on `k < offset_{j+1}`
    picks the value. Runtime sizes along the axis give runtime offsets (their sums, computed
    once outside the body) and a runtime result size; the inputs' other dims must agree (a
    size check).
    """
    axis = op.normalized_axis()
    all_sizes: list[Extent] = [extents_of(builder, v)[axis] for v in op.inputs]
    all_offsets: list[Extent] = [0]
    for size in all_sizes:
        all_offsets.append(_sum_extent(builder, all_offsets[-1], size))
    pieces = [(v, size, offset) for v, size, offset in zip(op.inputs, all_sizes, all_offsets,
                                                            strict=False) if size != 0]
    inputs = [v for v, _, _ in pieces]
    sizes = [size for _, size, _ in pieces]
    offsets = [offset for _, _, offset in pieces]
    element_type = tensor_type(op.result).get_element_type()
    require_equal_dims(builder, op, list(op.inputs), skip=axis)
    extents: list[Extent] = list(shape_of(op.result))
    if extents[axis] < 0:  # type: ignore[operator]
        extents[axis] = all_offsets[-1]

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        if not inputs or 0 in shape_of(op.result):  # no element is ever computed
            return constant_scalar(b, 0, element_type)
        if len(inputs) == 1:
            return read(b, inputs[0], i)
        value: SSAValue | None = None
        for j in reversed(range(len(inputs))):
            local = clamp_index(b, _minus_extent(b, i[axis], offsets[j]), sizes[j])
            element = read(b, inputs[j], [*i[:axis], local, *i[axis + 1 :]])
            if value is None:
                value = element
                continue
            next_offset = offsets[j + 1]
            bound = index(b, next_offset) if isinstance(next_offset, int) else next_offset
            before_next = b.insert(arith.CmpiOp(i[axis], bound, "ult")).result
            value = b.insert(arith.SelectOp(before_next, element, value)).result
        assert value is not None
        return value

    return emit_compute(builder, op, "concat", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=extents)


def _sum_extent(b: Builder, lhs: Extent, rhs: Extent) -> Extent:
    """`lhs + rhs`: an int where both are static, else an `index` value."""
    if isinstance(lhs, int) and isinstance(rhs, int):
        return lhs + rhs
    if isinstance(lhs, int):
        lhs, rhs = rhs, lhs
    assert isinstance(lhs, SSAValue)
    return affine(b, [(lhs, 1)], rhs) if isinstance(rhs, int) else affine(b, [(lhs, 1),
                                                                               (rhs, 1)])


def _minus_extent(b: Builder, value: SSAValue, offset: Extent) -> SSAValue:
    """`value - offset` on `index` (no op for a zero offset)."""
    if isinstance(offset, int):
        return affine(b, [(value, 1)], -offset)
    return affine(b, [(value, 1), (offset, -1)])
