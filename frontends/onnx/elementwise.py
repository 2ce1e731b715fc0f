"""Converters of elementwise ONNX ops: arithmetic (Add ... Pow), unary math (Sqrt ... Neg,
Ceil, Floor, Round), the variadic Min, Max, Sum, Mean, comparisons, Where and Cast. Each maps
onto the graph op of the same meaning."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from dlc.dialects.graph import (
    AbsOp,
    AddOp,
    CeilOp,
    DivOp,
    ErfOp,
    ExpOp,
    FloorOp,
    LogOp,
    MaxOp,
    MinOp,
    ModOp,
    MulOp,
    NegOp,
    PowOp,
    ReciprocalOp,
    RoundOp,
    SqrtOp,
    SubOp,
)
from dlc.dialects.graph.attrs import is_float_type
from dlc.dialects.graph.ops_tensor import CastOp, CompareOp, WhereOp
from dlc.frontends.onnx.common import UnaryConverter
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from dlc.frontends.onnx.tensors import element_type, numpy_dtype_of, onnx_type_name
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue


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


@register("Mod")
class Mod(OnnxOpConverter):
    """`Mod` (v10): graph.mod, `fmod` as given (ONNX asks floats for `fmod = 1` before opset
    28; graph.mod computes both remainders for any type)."""

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(ModOp(node.input(0), node.input(1),
                                bool(node.attr_int("fmod", 0))))]


@register("Pow")
class Pow(OnnxOpConverter):
    """`Pow`: graph.pow. From v12 the exponent may have another element type: then both are
    cast to the floating-point one of the two (the base's when both are integers) and the
    result back to the base's type."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        base, exponent = node.input(0), node.input(1)
        base_type, exponent_type = node.element_type(0), node.element_type(1)
        if base_type == exponent_type:
            return [node.emit(PowOp(base, exponent))]
        common = exponent_type if is_float_type(exponent_type) else base_type
        if base_type != common:
            base = node.emit(CastOp(base, common))
        if exponent_type != common:
            exponent = node.emit(CastOp(exponent, common))
        result = node.emit(PowOp(base, exponent))
        return [result if common == base_type else node.emit(CastOp(result, base_type))]


@register("Sqrt")
class Sqrt(UnaryConverter):
    """`Sqrt`: graph.sqrt."""

    graph_op = SqrtOp


@register("Reciprocal")
class Reciprocal(UnaryConverter):
    """`Reciprocal`: graph.reciprocal."""

    graph_op = ReciprocalOp


@register("Exp")
class Exp(UnaryConverter):
    """`Exp`: graph.exp."""

    graph_op = ExpOp


@register("Log")
class Log(UnaryConverter):
    """`Log`: graph.log."""

    graph_op = LogOp


@register("Erf")
class Erf(OnnxOpConverter):
    """`Erf` (from opset 9): graph.erf."""

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(ErfOp(node.input(0)))]


@register("Ceil")
class Ceil(UnaryConverter):
    """`Ceil`: graph.ceil."""

    graph_op = CeilOp


@register("Floor")
class Floor(UnaryConverter):
    """`Floor`: graph.floor."""

    graph_op = FloorOp


@register("Round")
class Round(OnnxOpConverter):
    """`Round` (from opset 11): graph.round (halves to even)."""

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(RoundOp(node.input(0)))]


@register("Abs")
class Abs(UnaryConverter):
    """`Abs`: graph.abs."""

    graph_op = AbsOp


@register("Neg")
class Neg(UnaryConverter):
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


class _Compare(OnnxOpConverter):
    """A broadcasting comparison: graph.compare with `predicate`, an i1 result."""

    predicate: ClassVar[str]

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(CompareOp(node.input(0), node.input(1), cls.predicate))]


class _Logical(OnnxOpConverter):
    """A boolean op (And, Or, Xor from v7, Not from v1; dlc imports opsets from 7): `build`
    of its operands, which must be booleans (`i1`)."""

    build: ClassVar[Callable[[NodeContext], Operation]]

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        for index in range(len(node.inputs())):
            if node.element_type(index) != i1:
                raise node.error(f"expected boolean operands, found {node.input_type(index)}")
        return [node.emit(cls.build(node))]


@register("And")
class And(_Logical):
    """`And`: graph.min on `i1` (an unsigned minimum: `and`)."""

    @classmethod
    def build(cls, node: NodeContext) -> Operation:
        return MinOp(node.input(0), node.input(1))


@register("Or")
class Or(_Logical):
    """`Or`: graph.max on `i1` (an unsigned maximum: `or`)."""

    @classmethod
    def build(cls, node: NodeContext) -> Operation:
        return MaxOp(node.input(0), node.input(1))


@register("Xor")
class Xor(_Logical):
    """`Xor`: graph.compare ne."""

    @classmethod
    def build(cls, node: NodeContext) -> Operation:
        return CompareOp(node.input(0), node.input(1), "ne")


@register("Not")
class Not(_Logical):
    """`Not`: graph.compare eq with false."""

    @classmethod
    def build(cls, node: NodeContext) -> Operation:
        return CompareOp(node.input(0), node.constant(np.array(False)), "eq")


@register("Equal")
class Equal(_Compare):
    """`Equal`: graph.compare eq."""

    predicate = "eq"


@register("Less")
class Less(_Compare):
    """`Less`: graph.compare lt."""

    predicate = "lt"


@register("LessOrEqual")
class LessOrEqual(_Compare):
    """`LessOrEqual` (from opset 12): graph.compare le."""

    predicate = "le"


@register("Greater")
class Greater(_Compare):
    """`Greater`: graph.compare gt."""

    predicate = "gt"


@register("GreaterOrEqual")
class GreaterOrEqual(_Compare):
    """`GreaterOrEqual` (from opset 12): graph.compare ge."""

    predicate = "ge"


@register("Where")
class Where(OnnxOpConverter):
    """`Where` (from opset 9): graph.where."""

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(WhereOp(node.input(0), node.input(1), node.input(2)))]


def cast_to(node: NodeContext, value: SSAValue, element: Attribute) -> SSAValue:
    """`value` converted to `element` (itself when it already has that element type)."""
    assert isinstance(value.type, TensorType)
    if value.type.element_type == element:
        return value
    return node.emit(CastOp(value, element))


@register("Cast")
class Cast(OnnxOpConverter):
    """`Cast`: graph.cast to attribute `to` (numeric and bool types, f16 and bf16; no strings)."""

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        to = node.attr_int("to")
        element = element_type(to)
        if element is None:
            raise node.error(f"expected a numeric or bool target type, found "
                             f"{onnx_type_name(to)}")
        return [cast_to(node, node.input(0), element)]


@register("CastLike")
class CastLike(OnnxOpConverter):
    """`CastLike` (from opset 15): graph.cast to the element type of input 1."""

    @classmethod
    def _impl_v15(cls, node: NodeContext) -> list[ConvertedValue]:
        return [cast_to(node, node.input(0), node.element_type(1))]
