"""Converters of ONNX reductions: ReduceSum/Mean/Max/Min/Prod on graph.reduce, and ReduceL1,
ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp composed from it."""

from __future__ import annotations

from typing import ClassVar

from xdsl.ir import SSAValue

from dialects.graph import AbsOp, AddOp, ExpOp, LogOp, MulOp, ReduceOp, SqrtOp, SubOp
from frontends.onnx.common import normalize_axes
from frontends.onnx.context import NodeContext
from frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register


class _Reduce(OnnxOpConverter):
    """A reduction whose axes are an attribute before opset 18 and an optional input known at
    import time from opset 18 (ReduceSum: 13), with `noop_with_empty_axes`."""

    KIND: ClassVar[str] = "sum"
    """The graph.reduce kind, for the reductions that are one graph.reduce."""

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        """The reduction of `x` over `axes` (all when empty)."""
        return node.emit(ReduceOp(x, cls.KIND, axes, keepdims))

    @classmethod
    def _convert(cls, node: NodeContext, axes: list[int]) -> list[ConvertedValue]:
        keepdims = bool(node.attr_int("keepdims", 1))
        axes = normalize_axes(node, axes, node.rank(0))
        return [cls.reduce(node, node.input(0), axes, keepdims)]

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
    """`ReduceMean`: graph.reduce mean."""

    KIND = "mean"


@register("ReduceMax")
class ReduceMax(_Reduce):
    """`ReduceMax`: graph.reduce max."""

    KIND = "max"


@register("ReduceMin")
class ReduceMin(_Reduce):
    """`ReduceMin`: graph.reduce min."""

    KIND = "min"


@register("ReduceProd")
class ReduceProd(_Reduce):
    """`ReduceProd`: graph.reduce prod."""

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

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        return node.emit(LogOp(node.emit(ReduceOp(x, "sum", axes, keepdims))))


@register("ReduceLogSumExp")
class ReduceLogSumExp(_Reduce):
    """`ReduceLogSumExp`: `max + log(sum(exp(x - max)))`, stable for large x."""

    @classmethod
    def reduce(cls, node: NodeContext, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        peak = node.emit(ReduceOp(x, "max", axes, keepdims=True))
        total = node.emit(ReduceOp(node.emit(ExpOp(node.emit(SubOp(x, peak)))), "sum", axes,
                                   keepdims))
        if not keepdims:
            peak = node.emit(ReduceOp(x, "max", axes, keepdims=False))
        return node.emit(AddOp(node.emit(LogOp(total)), peak))
