"""Converters of ONNX pools: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.

1-D and 2-D pools are one graph.max_pool2d / graph.avg_pool2d. Pools over more axes, and
average pools with dilations (which graph.avg_pool2d does not have), are separable: the
window is a box and both the max and the average (whose divisor, the count of elements
counted, is a product over the axes) can be taken one axis at a time.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph import AddOp, AvgPool2DOp, DivOp, GlobalAvgPool2DOp, MaxPool2DOp, ReduceOp
from dlc.dialects.graph.attrs import is_float_type
from dlc.dialects.graph.ops import window_output_size
from dlc.dialects.graph.ops_tensor import CastOp, CompareOp, PadOp, SliceOp, WhereOp
from dlc.frontends.onnx.common import element_type_of, reshape, shape_of, window_attrs
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from dlc.frontends.onnx.tensors import numpy_dtype_of
from xdsl.dialects.builtin import IntegerType, f32, f64
from xdsl.ir import SSAValue


class _Window:
    """The window of a pool along one axis."""

    def __init__(self, kernel: int, stride: int, dilation: int, begin: int, end: int) -> None:
        self.kernel, self.stride, self.dilation = kernel, stride, dilation
        self.begin, self.end = begin, end


def _pool_2d(node: NodeContext, x: SSAValue, is_max: bool, windows: Sequence[_Window],
             ceil_mode: bool, include_pad: bool) -> SSAValue:
    """One graph pool over the last two axes of a 4-D `x`."""
    kernel = [w.kernel for w in windows]
    strides = [w.stride for w in windows]
    padding = [windows[0].begin, windows[1].begin, windows[0].end, windows[1].end]
    if is_max:
        return node.emit(MaxPool2DOp(x, kernel=kernel, strides=strides, padding=padding,
                                     dilation=[w.dilation for w in windows],
                                     ceil_mode=ceil_mode))
    return node.emit(AvgPool2DOp(x, kernel=kernel, strides=strides, padding=padding,
                                 ceil_mode=ceil_mode, count_include_pad=include_pad))


def _dilated_average(node: NodeContext, x: SSAValue, window: _Window, ceil_mode: bool,
                     include_pad: bool) -> SSAValue:
    """The average pool of the middle axis of a 3-D `x` with a dilated window: zero padding,
    the sum of one strided slice per tap, divided by the count of each window."""
    outer, length, inner = shape_of(x)
    size = window_output_size(length, window.kernel, window.stride, window.begin, window.end,
                              window.dilation, ceil_mode)
    extent = window.dilation * (window.kernel - 1) + 1
    needed = (size - 1) * window.stride + extent
    overhang = max(needed - (length + window.begin + window.end), 0)
    padded = node.emit(PadOp(x, [0, window.begin, 0, 0, window.end + overhang, 0]))
    total: SSAValue | None = None
    for tap in range(window.kernel):
        part = node.emit(SliceOp(padded, [0, tap * window.dilation, 0], [outer, size, inner],
                                 [1, window.stride, 1]))
        total = part if total is None else node.emit(AddOp(total, part))
    assert total is not None
    low, high = (-window.begin, length + window.end) if include_pad else (0, length)
    positions = (np.arange(size)[:, None] * window.stride - window.begin
                 + np.arange(window.kernel)[None, :] * window.dilation)
    counts = ((positions >= low) & (positions < high)).sum(axis=1)
    dtype = numpy_dtype_of(element_type_of(x))
    return node.emit(DivOp(total, node.constant(counts.astype(dtype).reshape(1, size, 1))))


def _pool_axis(node: NodeContext, x: SSAValue, axis: int, is_max: bool, window: _Window,
               ceil_mode: bool, include_pad: bool) -> SSAValue:
    """`x` pooled along `axis` alone."""
    shape = shape_of(x)
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    if not is_max and window.dilation > 1:
        flat = reshape(node, x, [outer, shape[axis], inner])
        pooled = _dilated_average(node, flat, window, ceil_mode, include_pad)
    else:
        flat = reshape(node, x, [outer, 1, shape[axis], inner])
        pooled = _pool_2d(node, flat, is_max, [window, _Window(1, 1, 1, 0, 0)], ceil_mode,
                          include_pad)
    size = shape_of(pooled)[-2]
    return reshape(node, pooled, [*shape[:axis], size, *shape[axis + 1:]])


def _pool(node: NodeContext, x: SSAValue, is_max: bool) -> SSAValue:
    """`x` (the node's input 0, maybe converted) pooled with the node's window attributes."""
    shape = shape_of(x)
    if len(shape) < 3:
        raise node.error(f"expected an input of rank >= 3 (N x C x D1 ...), found {x.type}")
    spatial = len(shape) - 2
    kernel = node.attr_ints("kernel_shape")
    assert kernel is not None
    if len(kernel) != spatial:
        raise node.error(f"expected {spatial} kernel_shape values, found {kernel}")
    strides, dilations, pads = window_attrs(node, shape[2:], kernel)
    windows = [_Window(kernel[i], strides[i], dilations[i], pads[i], pads[i + spatial])
               for i in range(spatial)]
    ceil_mode = bool(node.attr_int("ceil_mode", 0))
    include_pad = bool(node.attr_int("count_include_pad", 0))
    if spatial == 2 and (is_max or dilations == [1, 1]):
        return _pool_2d(node, x, is_max, windows, ceil_mode, include_pad)
    for axis in reversed(range(spatial)):
        x = _pool_axis(node, x, axis + 2, is_max, windows[axis], ceil_mode, include_pad)
    return x


def _argmax_indices(node: NodeContext, x: SSAValue, pooled: SSAValue) -> SSAValue:
    """MaxPool's `Indices` output: for each window, the flat index into `x` (N x C x D1 ...,
    row-major, or with `storage_order` 1 the spatial axes column-major; padding not counted)
    of its first element, in the window's row-major order, equal to the pooled max. One
    strided slice of `x` per tap, compared with the max; taken from the last tap to the
    first, each match replaces the index (a constant per tap), so the first match is left."""
    shape = shape_of(x)
    spatial = shape[2:]
    kernel = node.attr_ints("kernel_shape")
    assert kernel is not None
    strides, dilations, pads = window_attrs(node, spatial, kernel)
    ceil_mode = bool(node.attr_int("ceil_mode", 0))
    storage_order = node.attr_int("storage_order", 0)
    if storage_order not in (0, 1):
        raise node.error(f"expected storage_order 0 or 1, found {storage_order}")
    rank = len(spatial)
    sizes = [window_output_size(spatial[a], kernel[a], strides[a], pads[a], pads[a + rank],
                                dilations[a], ceil_mode) for a in range(rank)]
    needed = [(sizes[a] - 1) * strides[a] + dilations[a] * (kernel[a] - 1) + 1
              for a in range(rank)]
    ends = [max(needed[a] - spatial[a] - pads[a], 0) for a in range(rank)]
    padded = (node.emit(PadOp(x, [0, 0, *pads[:rank], 0, 0, *ends]))
              if any(pads[:rank]) or any(ends) else x)
    order = range(rank) if storage_order == 0 else reversed(range(rank))
    step, flat_strides = 1, [0] * rank
    for a in reversed(list(order)):
        flat_strides[a], step = step, step * spatial[a]
    grids = np.meshgrid(*(np.arange(n) for n in sizes), indexing="ij")
    index: SSAValue | None = None
    for tap in reversed(list(itertools.product(*(range(k) for k in kernel)))):
        positions = [grids[a] * strides[a] - pads[a] + tap[a] * dilations[a]
                     for a in range(rank)]
        valid = np.logical_and.reduce([(p >= 0) & (p < n) for p, n in
                                       zip(positions, spatial, strict=True)])
        if not valid.any():
            continue
        flat = sum((p * f for p, f in zip(positions, flat_strides, strict=True)),
                   np.zeros(sizes, np.int64)).astype(np.int64)
        here = node.constant(flat.reshape(1, 1, *sizes))
        part = node.emit(SliceOp(padded, [0, 0, *(t * d for t, d in zip(tap, dilations,
                                                                         strict=True))],
                                 [*shape[:2], *sizes], [1, 1, *strides]))
        match = node.emit(CompareOp(part, pooled, "eq"))
        if not valid.all():
            mask = node.constant(valid.reshape(1, 1, *sizes))
            match = node.emit(WhereOp(mask, match, node.constant(np.array(False))))
        index = here if index is None else node.emit(WhereOp(match, here, index))
    assert index is not None
    planes = np.arange(shape[0] * shape[1], dtype=np.int64) * math.prod(spatial)
    return node.emit(AddOp(index, node.constant(planes.reshape(*shape[:2], *[1] * rank))))


@register("MaxPool")
class MaxPool(OnnxOpConverter):
    """`MaxPool`: graph.max_pool2d (separable beyond 2-D). Integer inputs are pooled as floats
    wide enough to hold them exactly. The optional second output, `Indices` (from opset 8),
    is `_argmax_indices`."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        element = node.element_type(0)
        if is_float_type(element):
            pooled = _pool(node, node.input(0), is_max=True)
        else:
            assert isinstance(element, IntegerType)
            if element.width.data > 32:
                raise node.error(f"expected a float or at most 32-bit integer input, found "
                                 f"{node.input_type(0)}")
            wide = f32 if element.width.data <= 16 else f64
            as_float = node.emit(CastOp(node.input(0), wide))
            pooled = node.emit(CastOp(_pool(node, as_float, is_max=True), element))
        if len(node.node.output) < 2 or not node.node.output[1]:
            return [pooled]
        return [pooled, _argmax_indices(node, node.input(0), pooled)]


@register("AveragePool")
class AveragePool(OnnxOpConverter):
    """`AveragePool`: graph.avg_pool2d (separable beyond 2-D; dilated axes as strided
    slices summed and divided by the window counts)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return [_pool(node, node.input(0), is_max=False)]


@register("GlobalAveragePool")
class GlobalAveragePool(OnnxOpConverter):
    """`GlobalAveragePool`: graph.global_avg_pool2d on 4-D inputs, else a mean over the spatial
    axes."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        if node.rank(0) == 4:
            return [node.emit(GlobalAvgPool2DOp(node.input(0)))]
        axes = list(range(2, node.rank(0)))
        return [node.emit(ReduceOp(node.input(0), "mean", axes, keepdims=True))]


@register("GlobalMaxPool")
class GlobalMaxPool(OnnxOpConverter):
    """`GlobalMaxPool`: a max over the spatial axes."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        axes = list(range(2, node.rank(0)))
        return [node.emit(ReduceOp(node.input(0), "max", axes, keepdims=True))]
