"""Converters of ONNX pools: MaxPool, AveragePool (1-D and 2-D), GlobalAveragePool,
GlobalMaxPool."""

from __future__ import annotations

from xdsl.ir import Operation

from dialects.graph import AvgPool2DOp, GlobalAvgPool2DOp, MaxPool2DOp, ReduceOp
from frontends.onnx.common import reshape, shape_of, window_attrs
from frontends.onnx.context import NodeContext
from frontends.onnx.nn import as_2d, pads_2d, spatial_rank
from frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register


def _pool(node: NodeContext, make: type[Operation], **extra: object) -> ConvertedValue:
    """A 1-D or 2-D pool of input 0 with the node's window attributes."""
    spatial = spatial_rank(node)
    kernel = node.attr_ints("kernel_shape")
    assert kernel is not None
    if len(kernel) != spatial:
        raise node.error(f"expected {spatial} kernel_shape values, found {kernel}")
    strides, dilations, pads = window_attrs(node, node.shape(0)[2:], kernel)
    x = node.input(0)
    if spatial == 1:
        x = as_2d(node, x)
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
    if make is MaxPool2DOp:
        extra["dilation"] = dilations
    elif dilations != [1] * len(dilations):
        raise node.error(f"expected dilations of 1, found {dilations}")
    ceil_mode = bool(node.attr_int("ceil_mode", 0))
    pool = node.emit(make(x, kernel=kernel, strides=strides, padding=pads_2d(pads),
                          ceil_mode=ceil_mode, **extra))
    if spatial == 1:
        n, c, _, length = shape_of(pool)
        pool = reshape(node, pool, [n, c, length])
    return pool


@register("MaxPool")
class MaxPool(OnnxOpConverter):
    """`MaxPool`: graph.max_pool2d (output 0 only; the Indices output is not supported)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return [_pool(node, MaxPool2DOp)]


@register("AveragePool")
class AveragePool(OnnxOpConverter):
    """`AveragePool`: graph.avg_pool2d."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        include_pad = bool(node.attr_int("count_include_pad", 0))
        return [_pool(node, AvgPool2DOp, count_include_pad=include_pad)]


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
