"""Converters of ONNX ops that select elements: Gather, GatherElements, Slice, Split, ArgMax,
TopK."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph import AddOp, MulOp
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
    indices make the whole index an import-time constant."""

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        shape, index_shape = node.shape(0), node.shape(1)
        rank = len(shape)
        axis = normalize_axis(node, node.attr_int("axis", 0), rank)
        if len(index_shape) != rank or any(
                index_shape[d] > shape[d] for d in range(rank) if d != axis):
            raise node.error(f"expected indices of rank {rank} no larger than the data "
                             f"{list(shape)} off axis {axis}, found {list(index_shape)}")
        if is_float_type(node.element_type(1)):
            raise node.error("expected integer indices")
        strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(rank)]
        grid = np.indices(index_shape, dtype=np.int64)
        offset = sum((grid[d] * strides[d] for d in range(rank) if d != axis),
                     np.zeros(index_shape, np.int64))
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
        linear = node.emit(AddOp(index, node.constant(offset)))
        return [node.emit(GatherOp(flat, linear, 0))]


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
        start, end = (start + dim if start < 0 else start), (end + dim if end < 0 else end)
        low, high = (0, dim) if step > 0 else (-1, dim - 1)
        begin, stop, stride = min(max(start, max(low, 0)), high), min(max(end, low), high), step
        size = len(range(begin, stop, stride))
        first[axis], sizes[axis], strides[axis] = (begin if size else 0), size, stride
    if sizes == list(shape) and strides == [1] * rank:
        return x
    return node.emit(SliceOp(x, first, sizes, strides))


@register("Slice")
class Slice(OnnxOpConverter):
    """`Slice`: graph.slice; the bounds are attributes before opset 10 and import-time inputs
    after (with steps)."""

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
