"""Converters of elementwise ONNX ops: arithmetic (Add ... Pow), unary math (Sqrt ... Neg) and the
variadic Min, Max, Sum, Mean. Each maps onto the graph op of the same meaning."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.ir import Operation, SSAValue

from dialects.graph import (
    AbsOp,
    AddOp,
    DivOp,
    ErfOp,
    ExpOp,
    LogOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    PowOp,
    ReciprocalOp,
    SqrtOp,
    SubOp,
)
from frontends.onnx.context import NodeContext
from frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from frontends.onnx.tensors import numpy_dtype_of


class _Binary(OnnxOpConverter):
    """A binary op with multidirectional (NumPy) broadcasting, opset >= 7."""

    graph_op: ClassVar[type[Operation]]

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(cls.graph_op(node.input(0), node.input(1)))]


@register("Add")
class Add(_Binary):
    """`Add`: graph.add."""

    graph_op = AddOp


@register("Sub")
class Sub(_Binary):
    """`Sub`: graph.sub."""

    graph_op = SubOp


@register("Mul")
class Mul(_Binary):
    """`Mul`: graph.mul."""

    graph_op = MulOp


@register("Div")
class Div(_Binary):
    """`Div`: graph.div."""

    graph_op = DivOp


@register("Pow")
class Pow(OnnxOpConverter):
    """`Pow`: graph.pow; from v12 the exponent may have another element type, and is converted
    to the base's when it is known at import time."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        base = node.input(0)
        if node.element_type(1) == node.element_type(0):
            return [node.emit(PowOp(base, node.input(1)))]
        exponent = node.const(1)
        if exponent is None:
            raise node.error(f"expected the exponent's element type {node.element_type(0)} or "
                             f"an exponent known at import time, found {node.input_type(1)}")
        dtype = numpy_dtype_of(node.element_type(0))
        return [node.emit(PowOp(base, node.constant(exponent.astype(dtype))))]


class _Unary(OnnxOpConverter):
    """An elementwise unary op."""

    graph_op: ClassVar[type[Operation]]

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(cls.graph_op(node.input(0)))]


@register("Sqrt")
class Sqrt(_Unary):
    """`Sqrt`: graph.sqrt."""

    graph_op = SqrtOp


@register("Reciprocal")
class Reciprocal(_Unary):
    """`Reciprocal`: graph.reciprocal."""

    graph_op = ReciprocalOp


@register("Exp")
class Exp(_Unary):
    """`Exp`: graph.exp."""

    graph_op = ExpOp


@register("Log")
class Log(_Unary):
    """`Log`: graph.log."""

    graph_op = LogOp


@register("Erf")
class Erf(OnnxOpConverter):
    """`Erf` (from opset 9): graph.erf."""

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(ErfOp(node.input(0)))]


@register("Abs")
class Abs(_Unary):
    """`Abs`: graph.abs."""

    graph_op = AbsOp


@register("Neg")
class Neg(_Unary):
    """`Neg`: graph.neg."""

    graph_op = NegOp


class _Variadic(OnnxOpConverter):
    """An op over one or more inputs, folded left to right with a broadcasting binary op."""

    graph_op: ClassVar[type[Operation]]

    @classmethod
    def fold(cls, node: NodeContext) -> SSAValue:
        values = node.inputs()
        if not values:
            raise node.error("expected at least one input, found none")
        result = values[0]
        for value in values[1:]:
            result = node.emit(cls.graph_op(result, value))
        return result

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        return [cls.fold(node)]


@register("Max")
class Max(_Variadic):
    """`Max`: graph.max over the inputs."""

    graph_op = MaxOp


@register("Min")
class Min(_Variadic):
    """`Min`: graph.min over the inputs."""

    graph_op = MinOp


@register("Sum")
class Sum(_Variadic):
    """`Sum`: graph.add over the inputs."""

    graph_op = AddOp


@register("Mean")
class Mean(_Variadic):
    """`Mean`: the sum of the inputs divided by their count."""

    graph_op = AddOp

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        total = cls.fold(node)
        count = len(node.inputs())
        if count == 1:
            return [total]
        dtype = numpy_dtype_of(node.element_type(0))
        return [node.emit(DivOp(total, node.constant(np.array(count, dtype=dtype))))]
