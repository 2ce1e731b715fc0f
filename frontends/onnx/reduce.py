"""Converters of ONNX reductions: ReduceSum/Mean/Max/Min/Prod on graph.reduce, and ReduceL1,
ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp composed from it."""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from dlc.dialects.graph import (
    AbsOp,
    AddOp,
    ExpOp,
    GlobalAvgPool2DOp,
    LogOp,
    MulOp,
    ReduceOp,
    ReshapeOp,
    SqrtOp,
    SubOp,
)
from dlc.frontends.onnx.common import normalize_axes
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from dlc.frontends.onnx.tensors import numpy_dtype_of
from xdsl.ir import SSAValue


class _Reduce(OnnxOpConverter):
    """A reduction whose axes are an attribute before opset 18 and an optional input known at
    import time from opset 18 (ReduceSum: 13), with `noop_with_empty_axes`."""

    KIND: ClassVar[str] = "sum"
    """The graph.reduce kind, for the reductions that are one graph.reduce."""
    EMPTY: ClassVar[float] = 0.0
    """The result of reducing no elements (ONNX's identity of the reduction)."""

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        """The reduction of `x` over `axes` (all when empty)."""
        return node.emit(ReduceOp(x, cls.KIND, axes, keepdims))

    @classmethod
    def _convert(cls, node: NodeContext, axes: list[int]) -> list[ConvertedValue]:
        keepdims = bool(node.attr_int("keepdims", 1))
        shape = node.shape(0)
        axes = normalize_axes(node, axes, len(shape))
        reduced = axes or list(range(len(shape)))
        if any(shape[a] == 0 for a in reduced):
            return [cls._empty(node, shape, reduced, keepdims)]
        return [cls.reduce(node, node.input(0), axes, keepdims)]

    @classmethod
    def _empty(cls, node: NodeContext, shape: tuple[int, ...], axes: list[int],
               keepdims: bool) -> np.ndarray:
        """A reduction over no elements: the identity, whatever the input (a constant)."""
        dims = [1 if a in axes else d for a, d in enumerate(shape) if keepdims or a not in axes]
        dtype = numpy_dtype_of(node.element_type(0))
        value = cls.EMPTY
        if dtype.kind in "iu" and math.isinf(value):
            value = np.iinfo(dtype).min if value < 0 else np.iinfo(dtype).max
        elif dtype == np.bool_ and math.isinf(value):
            value = value > 0
        elif dtype.kind in "biu" and math.isnan(value):
            value = 0
        return np.full(dims, value, dtype=dtype)

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._convert(node, node.attr_ints("axes", []) or [])

    @classmethod
    def _axes_input(cls, node: NodeContext) -> list[ConvertedValue]:
        axes = node.optional_const_ints(1, "the axes") or []
        if not axes and node.attr_int("noop_with_empty_axes", 0):
            return [node.input(0)]
        return cls._convert(node, axes)

    @classmethod
    def _impl_v18(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._axes_input(node)


@register("ReduceSum")
class ReduceSum(_Reduce):
    """`ReduceSum`: graph.reduce sum (axes an input from opset 13)."""

    KIND = "sum"

    @classmethod
    def _impl_v13(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._axes_input(node)


@register("ReduceMean")
class ReduceMean(_Reduce):
    """`ReduceMean`: graph.reduce mean; over the runtime height and width of an NCHW image
    (`x.mean([2, 3])` over a runtime plane), graph.global_avg_pool2d (then the unit dims
    dropped without `keepdims`), which takes runtime extents."""

    EMPTY = float("nan")

    KIND = "mean"

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        shape = node.shape(0)
        if len(shape) != 4 or sorted(axes) != [2, 3] or all(d >= 0 for d in shape[1:]):
            return super().reduce(node, x, axes, keepdims)
        pooled = node.emit(GlobalAvgPool2DOp(x))
        return pooled if keepdims else node.emit(ReshapeOp(pooled, [max(shape[0], -1),
                                                                    shape[1]]))


@register("ReduceMax")
class ReduceMax(_Reduce):
    """`ReduceMax`: graph.reduce max."""

    EMPTY = float("-inf")

    KIND = "max"


@register("ReduceMin")
class ReduceMin(_Reduce):
    """`ReduceMin`: graph.reduce min."""

    EMPTY = float("inf")

    KIND = "min"


@register("ReduceProd")
class ReduceProd(_Reduce):
    """`ReduceProd`: graph.reduce prod."""

    EMPTY = 1.0

    KIND = "prod"


@register("ReduceSumSquare")
class ReduceSumSquare(_Reduce):
    """`ReduceSumSquare`: the sum of x * x."""

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return node.emit(ReduceOp(node.emit(MulOp(x, x)), "sum", axes, keepdims))


@register("ReduceL1")
class ReduceL1(_Reduce):
    """`ReduceL1`: the sum of |x|."""

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return node.emit(ReduceOp(node.emit(AbsOp(x)), "sum", axes, keepdims))


@register("ReduceL2")
class ReduceL2(_Reduce):
    """`ReduceL2`: the square root of the sum of x * x."""

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        total = ReduceSumSquare.reduce(node, x, axes, keepdims)
        return node.emit(SqrtOp(total))


@register("ReduceLogSum")
class ReduceLogSum(_Reduce):
    """`ReduceLogSum`: the log of the sum."""

    EMPTY = float("-inf")

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return node.emit(LogOp(node.emit(ReduceOp(x, "sum", axes, keepdims))))


@register("ReduceLogSumExp")
class ReduceLogSumExp(_Reduce):
    """`ReduceLogSumExp`: `max + log(sum(exp(x - max)))`, stable for large x."""

    EMPTY = float("-inf")

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        peak = node.emit(ReduceOp(x, "max", axes, keepdims=True))
        total = node.emit(ReduceOp(node.emit(ExpOp(node.emit(SubOp(x, peak)))), "sum", axes,
                                   keepdims))
        if not keepdims:
            peak = node.emit(ReduceOp(x, "max", axes, keepdims=False))
        return node.emit(AddOp(node.emit(LogOp(total)), peak))
