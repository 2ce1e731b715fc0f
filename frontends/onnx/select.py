"""Converters of ONNX ops that select elements: Gather, GatherElements, GatherND, Slice, Split,
ArgMax, TopK."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph import AddOp, ClipOp, MulOp, ReshapeOp, SubOp
from dlc.dialects.graph.attrs import is_float_type
from dlc.dialects.graph.ops_tensor import (
    ArgMaxOp,
    CastOp,
    CompareOp,
    GatherOp,
    SliceOp,
    TopKOp,
    WhereOp,
)
from dlc.dialects.graph.utils import constant_array
from dlc.frontends.onnx.common import as_int_list, normalize_axes, normalize_axis, reshape
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue


@register("Gather")
class Gather(OnnxOpConverter):
    """`Gather`: graph.gather (negative axes from opset 11)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        axis = normalize_axis(node, node.attr_int("axis", 0), node.rank(0))
        return [node.emit(GatherOp(node.input(0), node.input(1), axis))]


@register("GatherElements")
class GatherElements(OnnxOpConverter):
    """`GatherElements` (`numpy.take_along_axis`): a graph.gather from `x` flattened, at the
    linear index of each element, `indices[i] * stride(axis)` plus the linear offset of `i`'s
    other coordinates (an import-time constant); negative indices count from the end. Constant
    indices make the whole index an import-time constant. Indices of a runtime length along
    the axis (over runtime shapes: BERT's token types at its positions) take the offset
    broadcast along it, which does not vary there."""

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        shape, index_shape = node.shape(0), node.shape(1)
        rank = len(shape)
        axis = normalize_axis(node, node.attr_int("axis", 0), rank)
        if len(index_shape) != rank or any(
                index_shape[d] > shape[d] or index_shape[d] < 0 for d in range(rank)
                if d != axis) or any(d < 0 for d in shape):
            raise node.error(f"expected indices of rank {rank} no larger than the data "
                             f"{list(shape)} off axis {axis}, found {list(index_shape)}")
        if is_float_type(node.element_type(1)):
            raise node.error("expected integer indices")
        strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(rank)]
        grid_shape = [1 if d == axis and size < 0 else size for d, size in enumerate(index_shape)]
        grid = np.indices(grid_shape, dtype=np.int64)
        offset = sum((grid[d] * strides[d] for d in range(rank) if d != axis),
                     np.zeros(grid_shape, np.int64))
        flat = reshape(node, node.input(0), [int(np.prod(shape, dtype=np.int64))])
        indices = node.const(1)
        if indices is not None:
            index = indices.astype(np.int64)
            if np.any((index < -shape[axis]) | (index >= shape[axis])):
                raise node.error(f"expected indices in [{-shape[axis]}, {shape[axis]}) along "
                                 f"axis {axis}")
            linear = node.constant(offset + np.where(index < 0, index + shape[axis], index)
                                   * strides[axis])
            return [node.emit(GatherOp(flat, linear, 0))]
        index = node.input(1)
        if node.element_type(1) != i64:
            index = node.emit(CastOp(index, i64))
        dim = node.constant(np.array(shape[axis], np.int64))
        negative = node.emit(CompareOp(index, node.constant(np.array(0, np.int64)), "lt"))
        index = node.emit(WhereOp(negative, node.emit(AddOp(index, dim)), index))
        index = node.emit(MulOp(index, node.constant(np.array(strides[axis], np.int64))))
        linear = node.emit(AddOp(index, node.constant(offset))) if offset.any() else index
        return [node.emit(GatherOp(flat, linear, 0))]


@register("GatherND")
class GatherND(OnnxOpConverter):
    """`GatherND`: a graph.gather along axis 0 of the data with its first `batch_dims + k`
    axes flattened into one (`k`: the indices' last dim), at the linear index of each index
    tuple: `sum_j index[..., j] * stride_j` (negative indices count from the end) plus the
    tuple's batch offset, an import-time constant. Each component `index[..., j]` is a
    graph.gather of the indices along their last axis, so indices that carry a valid extent
    (NonZero's, transposed) keep it through to the result. Constant indices make the whole
    index an import-time constant (checked against the data's dims)."""

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._impl_v12(node)

    @classmethod
    def _impl_v12(cls, node: NodeContext) -> list[ConvertedValue]:
        shape, index_shape = node.shape(0), node.shape(1)
        batch = node.attr_int("batch_dims", 0)
        if is_float_type(node.element_type(1)):
            raise node.error("expected integer indices")
        if not index_shape:
            raise node.error("expected indices of rank at least 1, found a scalar")
        k = index_shape[-1]
        if not 0 <= batch < min(len(shape), len(index_shape)):
            raise node.error(f"expected batch_dims in [0, {min(len(shape), len(index_shape))}),"
                             f" found {batch}")
        if tuple(index_shape[:batch]) != tuple(shape[:batch]):
            raise node.error(f"expected the first {batch} dims of the indices "
                             f"{list(index_shape)} to be the data's {list(shape[:batch])}")
        if not 1 <= k <= len(shape) - batch:
            raise node.error(f"expected the indices' last dim in [1, {len(shape) - batch}] for "
                             f"data {list(shape)} and batch_dims {batch}, found {k}")
        dims = np.array(shape[batch:batch + k], np.int64)
        strides = np.array([int(np.prod(dims[j + 1:], dtype=np.int64)) for j in range(k)],
                           np.int64)
        rest = list(shape[batch + k:])
        flat = reshape(node, node.input(0), [int(np.prod(shape[:batch + k], dtype=np.int64)),
                                             *rest])
        tuples = tuple(index_shape[:-1])
        # Each tuple's batch offset: its batch coordinates' linear index times the size of
        # one batch element's indexed block.
        grid = np.indices(tuples, dtype=np.int64) if tuples else np.zeros((0,), np.int64)
        batch_strides = [int(np.prod(shape[d + 1:batch], dtype=np.int64)) * int(np.prod(dims))
                         for d in range(batch)]
        offset = sum((grid[d] * batch_strides[d] for d in range(batch)),
                     np.zeros(tuples, np.int64))
        indices = node.const(1)
        if indices is not None:
            index = indices.astype(np.int64)
            if np.any((index < -dims) | (index >= dims)):
                raise node.error(f"expected index tuples within the dims {dims.tolist()}")
            linear = (np.where(index < 0, index + dims, index) * strides).sum(axis=-1)
            return [node.emit(GatherOp(flat, node.constant(offset + linear), 0))]
        index = node.input(1)
        if node.element_type(1) != i64:
            index = node.emit(CastOp(index, i64))
        negative = node.emit(CompareOp(index, node.constant(np.array(0, np.int64)), "lt"))
        index = node.emit(WhereOp(negative, node.emit(AddOp(index, node.constant(dims))), index))
        last = len(index_shape) - 1
        linear: SSAValue | None = None
        for j in range(k):
            part = node.emit(GatherOp(index, node.constant(np.array(j, np.int64)), last))
            if strides[j] != 1:
                part = node.emit(MulOp(part, node.constant(np.array(strides[j], np.int64))))
            linear = part if linear is None else node.emit(AddOp(linear, part))
        assert linear is not None
        if batch:
            linear = node.emit(AddOp(linear, node.constant(offset)))
        return [node.emit(GatherOp(flat, linear, 0))]


WHOLE_AXIS_END = 2**31 - 1
"""The least end of a slice that takes a dynamic axis whole (exporters write INT64_MAX or
INT32_MAX for `x[a:]`)."""


def strided_slice(node: NodeContext, x: SSAValue, shape: Sequence[int], starts: Sequence[int],
                  ends: Sequence[int], axes: Sequence[int], steps: Sequence[int]) -> SSAValue:
    """graph.slice of `x` with ONNX Slice's bounds: negative ones count from the end, then they
    are clamped to [0, dim] (step > 0), or the start to [0, dim - 1] and the end to [-1, dim - 1]
    (step < 0: unlike Python's `slice.indices`, a start below -dim is 0, not empty); `x` itself
    when nothing is cut."""
    rank = len(shape)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.error(f"expected as many starts, ends, axes and steps, found {len(starts)}, "
                         f"{len(ends)}, {len(axes)} and {len(steps)}")
    first, sizes, strides = [0] * rank, list(shape), [1] * rank
    for axis, start, end, step in zip(normalize_axes(node, axes, rank), starts, ends, steps,
                                      strict=True):
        if step == 0:
            raise node.error(f"expected non-zero steps, found {list(steps)}")
        dim = shape[axis]
        if dim < 0:  # a runtime size: only taken whole
            if start == 0 and step == 1 and end >= WHOLE_AXIS_END:
                continue
            raise node.error(f"expected dynamic dim {axis} taken whole (start 0, step 1, end "
                             f"at least {WHOLE_AXIS_END}), found start {start}, end {end}, "
                             f"step {step}")
        start, end = (start + dim if start < 0 else start), (end + dim if end < 0 else end)
        low, high = (0, dim) if step > 0 else (-1, dim - 1)
        begin, stop, stride = min(max(start, max(low, 0)), high), min(max(end, low), high), step
        size = len(range(begin, stop, stride))
        first[axis], sizes[axis], strides[axis] = (begin if size else 0), size, stride
    if sizes == list(shape) and strides == [1] * rank:
        return x
    return node.emit(SliceOp(x, first, sizes, strides))


def _one_int(value: SSAValue) -> int | None:
    """The integer held by a one-element integer `graph.constant`, else None."""
    known = constant_array(value)
    if known is None or known.size != 1 or known.dtype.kind not in "iu":
        return None
    return int(known.reshape(-1)[0])


def _offset_form(value: SSAValue) -> tuple[SSAValue, int]:
    """(base, c) with `value` = base + c elementwise, seen through reshapes and additions or
    subtractions of one-element constants (`Unsqueeze(i)` and `Unsqueeze(Add(i, 1))` share the
    base `i`)."""
    offset = 0
    while True:
        owner = value.owner
        if isinstance(owner, ReshapeOp):
            value = owner.x
        elif isinstance(owner, AddOp) and (c := _one_int(owner.rhs)) is not None:
            offset, value = offset + c, owner.lhs
        elif isinstance(owner, AddOp) and (c := _one_int(owner.lhs)) is not None:
            offset, value = offset + c, owner.rhs
        elif isinstance(owner, SubOp) and (c := _one_int(owner.rhs)) is not None:
            offset, value = offset - c, owner.lhs
        else:
            return value, offset


def runtime_window(node: NodeContext) -> SSAValue | None:
    """Slice (opset 10+) with starts and ends computed at run time as one base plus constant
    offsets (`starts = i`, `ends = i + k`: loop bodies slicing at the iteration number), unit
    steps and constant axes: a window of static size k whose start is known at run time, as one
    graph.gather per axis at `start + arange(k)`. A negative start counts from the end; the
    start is then clamped to [0, dim - k], so that the window stays inside the data (where
    ONNX would clamp the end and return fewer elements, a shape known only at run time: a
    known deviation, so it is used only in Loop/Scan/If bodies, whose shapes cannot be
    specialized per call; a top-level Slice with runtime bounds is specialized on them, exactly).
    None when the bounds are not of that form."""
    axes_given = node.const(3) if node.has_input(3) else np.array([], np.int64)
    steps_given = node.const(4) if node.has_input(4) else np.array([1], np.int64)
    if axes_given is None or steps_given is None or np.any(steps_given != 1):
        return None
    start_base, start_offset = _offset_form(node.input(1))
    end_base, end_offset = _offset_form(node.input(2))
    if start_base is not end_base or node.rank(1) != 1:
        return None
    count = node.shape(1)[0]
    shape = node.shape(0)
    axes = normalize_axes(node, as_int_list(axes_given) or list(range(count)), len(shape))
    if len(axes) != count:
        raise node.error(f"expected as many axes as starts, found {len(axes)} and {count}")
    size = end_offset - start_offset
    dtype = node.input_type(1).get_element_type()
    starts = node.input(1)
    if dtype != i64:
        starts = node.emit(CastOp(starts, i64))
    x = node.input(0)
    for index, axis in enumerate(axes):
        dim = shape[axis]
        if not 0 <= size <= dim:
            raise node.error(f"expected the window size (ends - starts = {size}, known at "
                             f"import time) in [0, {dim}] along axis {axis}")
        start = node.emit(GatherOp(starts, node.constant(np.array(index, np.int64)), 0))
        negative = node.emit(CompareOp(start, node.constant(np.array(0, np.int64)), "lt"))
        wrapped = node.emit(AddOp(start, node.constant(np.array(dim, np.int64))))
        start = node.emit(ClipOp(node.emit(WhereOp(negative, wrapped, start)), 0, dim - size))
        positions = node.emit(AddOp(start, node.constant(np.arange(size, dtype=np.int64))))
        x = node.emit(GatherOp(x, positions, axis))
    return x


@register("Slice")
class Slice(OnnxOpConverter):
    """`Slice`: graph.slice; the bounds are attributes before opset 10 and import-time inputs
    after (with steps), or starts and ends that differ by constants (`runtime_window`)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        starts, ends = node.attr_ints("starts"), node.attr_ints("ends")
        assert starts is not None and ends is not None
        axes = node.attr_ints("axes", list(range(len(starts))))
        assert axes is not None
        return [strided_slice(node, node.input(0), node.shape(0), starts, ends, axes,
                              [1] * len(starts))]

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        if (node.const(1) is None or node.const(2) is None) and node.scope.in_region:
            window = runtime_window(node)
            if window is not None:
                return [window]
        starts = as_int_list(node.require_const(1, "the starts"))
        ends = as_int_list(node.require_const(2, "the ends"))
        axes = node.optional_const_ints(3, "the axes") or list(range(len(starts)))
        steps = node.optional_const_ints(4, "the steps") or [1] * len(starts)
        return [strided_slice(node, node.input(0), node.shape(0), starts, ends, axes, steps)]


@register("Split")
class Split(OnnxOpConverter):
    """`Split`: one graph.slice per output along `axis`; the sizes come from attribute `split`
    (before opset 13), the import-time input `split` (from 13), `num_outputs` (from 18), or
    an equal split among the outputs."""

    @classmethod
    def _slices(cls, node: NodeContext, sizes: list[int] | None,
                uneven: bool = False) -> list[ConvertedValue]:
        """Slices of the given sizes; without sizes, one per output: equal ones, or with
        `uneven` (opset 18) ceil(dim / outputs) each and a smaller last one."""
        shape = node.shape(0)
        axis = normalize_axis(node, node.attr_int("axis", 0), len(shape))
        dim = shape[axis]
        if sizes is None:
            count = len(node.node.output)
            chunk = -(-dim // count)
            if not uneven and dim % count:
                raise node.error(f"expected dim {dim} to split evenly into {count} outputs")
            sizes = [min(chunk, max(dim - i * chunk, 0)) for i in range(count)]
        if sum(sizes) != dim or any(s < 0 for s in sizes):
            raise node.error(f"expected non-negative split sizes adding up to {dim}, found "
                             f"{sizes}")
        outputs: list[ConvertedValue] = []
        offset = 0
        for size in sizes:
            outputs.append(strided_slice(node, node.input(0), shape, [offset], [offset + size],
                                         [axis], [1]))
            offset += size
        return outputs

    @classmethod
    def _impl_v2(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._slices(node, node.attr_ints("split", None))

    @classmethod
    def _impl_v13(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._slices(node, node.optional_const_ints(1, "the split sizes"))

    @classmethod
    def _impl_v18(cls, node: NodeContext) -> list[ConvertedValue]:
        sizes = node.optional_const_ints(1, "the split sizes")
        if sizes is None and node.attr_int("num_outputs", len(node.node.output)) != len(
                node.node.output):
            raise node.error(f"expected num_outputs to equal the {len(node.node.output)} "
                             "outputs")
        return cls._slices(node, sizes, uneven=True)


@register("ArgMax")
class ArgMax(OnnxOpConverter):
    """`ArgMax`: graph.argmax (`select_last_index` from opset 12)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        axis = normalize_axis(node, node.attr_int("axis", 0), node.rank(0))
        keepdims = bool(node.attr_int("keepdims", 1))
        last = bool(node.attr_int("select_last_index", 0))
        return [node.emit(ArgMaxOp(node.input(0), axis, keepdims, last))]


@register("TopK")
class TopK(OnnxOpConverter):
    """`TopK`: graph.topk; k is an attribute before opset 10 and an import-time input after;
    `largest` and `sorted` from opset 11."""

    @classmethod
    def _topk(cls, node: NodeContext, k: int) -> list[ConvertedValue]:
        axis = normalize_axis(node, node.attr_int("axis", -1), node.rank(0))
        largest = bool(node.attr_int("largest", 1))
        op = node.emit_op(TopKOp(node.input(0), k, axis, largest,
                                 bool(node.attr_int("sorted", 1))))
        return list(op.results)

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._topk(node, node.attr_int("k"))

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        k = as_int_list(node.require_const(1, "k"))
        if len(k) != 1:
            raise node.error(f"expected one k, found {k}")
        return cls._topk(node, k[0])


_SCATTER_REDUCTIONS = {
    "none": None, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
}
"""ScatterND's `reduction` (v16, v18) -> how an update combines with the element it lands on."""


@register("ScatterND")
class ScatterND(OnnxOpConverter):
    """`ScatterND` (v11; `reduction` from v16) of inputs all known at import time: folded to a
    constant (the data with each update written, or combined by `reduction`, at its index
    tuple; a negative index counts from the end). A Swin transformer builds its shifted
    windows' attention mask so from its static sizes. Inputs known only at run time are
    refused naming the node: dlc has no scatter op (its computes are gathers, each output
    computed from inputs at indices it derives)."""

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        data, indices, updates = (node.const(i) for i in range(3))
        if data is None or indices is None or updates is None:
            raise node.error("expected the data, indices and updates known at import time: a "
                             "scatter of values known only at run time is not supported")
        reduction = node.attr_str("reduction", "none")
        if reduction not in _SCATTER_REDUCTIONS:
            raise node.error(f"expected reduction one of {sorted(_SCATTER_REDUCTIONS)}, found "
                             f"'{reduction}'")
        k = indices.shape[-1] if indices.ndim else 0
        if indices.ndim == 0 or not 1 <= k <= data.ndim or \
                updates.shape != indices.shape[:-1] + data.shape[k:]:
            raise node.error(f"expected indices [..., k] with k in [1, {data.ndim}] and updates "
                             f"of shape indices.shape[:-1] + data.shape[k:], found indices "
                             f"{list(indices.shape)} and updates {list(updates.shape)}")
        output = np.array(data, copy=True)
        combine = _SCATTER_REDUCTIONS[reduction]
        for at in np.ndindex(*indices.shape[:-1]):
            where = tuple(int(i) for i in indices[at])
            if any(not -d <= i < d for i, d in zip(where, data.shape, strict=False)):
                raise node.error(f"index {list(where)} is outside the data's dims "
                                 f"{list(data.shape[:k])}")
            output[where] = updates[at] if combine is None else combine(output[where],
                                                                        updates[at])
        return [output]
