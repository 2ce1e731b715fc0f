"""Converters of ONNX activations: Relu, Sigmoid, Tanh directly; LeakyRelu, PRelu, Elu,
HardSigmoid, HardSwish, Gelu, Clip through graph arithmetic; Softmax and LogSoftmax."""

from __future__ import annotations

import math

import numpy as np
from dlc.dialects.graph import (
    AddOp,
    ClipOp,
    ErfOp,
    ExpOp,
    LogOp,
    MaxOp,
    MinOp,
    MulOp,
    ReduceOp,
    ReluOp,
    SigmoidOp,
    SoftmaxOp,
    SubOp,
    TanhOp,
)
from dlc.dialects.graph.attrs import is_float_type
from dlc.frontends.onnx.common import (
    UnaryConverter,
    clamp,
    normalize_axis,
    reshape,
    scaled,
    shape_of,
    shifted,
)
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from xdsl.ir import SSAValue


@register("Relu")
class Relu(UnaryConverter):
    """`Relu`: graph.relu."""

    graph_op = ReluOp


@register("Sigmoid")
class Sigmoid(UnaryConverter):
    """`Sigmoid`: graph.sigmoid."""

    graph_op = SigmoidOp


@register("Tanh")
class Tanh(UnaryConverter):
    """`Tanh`: graph.tanh."""

    graph_op = TanhOp


def _negative_part(node: NodeContext, x: SSAValue) -> SSAValue:
    """`min(x, 0)`."""
    return node.emit(MinOp(x, node.scalar(0.0)))


@register("LeakyRelu")
class LeakyRelu(OnnxOpConverter):
    """`LeakyRelu`: `max(x, alpha * x)` for 0 <= alpha <= 1, else `relu(x) + alpha * min(x, 0)`."""

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        x = node.input(0)
        alpha = node.attr_float("alpha", 0.01)
        if 0.0 <= alpha <= 1.0:
            return [node.emit(MaxOp(x, scaled(node, x, alpha)))]
        negative = scaled(node, _negative_part(node, x), alpha)
        return [node.emit(AddOp(node.emit(ReluOp(x)), negative))]


@register("PRelu")
class PRelu(OnnxOpConverter):
    """`PRelu`: `relu(x) + slope * min(x, 0)`, the slope broadcast onto x."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        x = node.input(0)
        negative = node.emit(MulOp(_negative_part(node, x), node.input(1)))
        result = node.emit(AddOp(node.emit(ReluOp(x)), negative))
        if shape_of(result) != node.shape(0):
            raise node.error(f"expected the slope {node.input_type(1)} to broadcast to the "
                             f"input {node.input_type(0)}")
        return [result]


@register("Elu")
class Elu(OnnxOpConverter):
    """`Elu`: `relu(x) + alpha * (exp(min(x, 0)) - 1)`."""

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        x = node.input(0)
        alpha = node.attr_float("alpha", 1.0)
        negative = shifted(node, node.emit(ExpOp(_negative_part(node, x))), -1.0)
        return [node.emit(AddOp(node.emit(ReluOp(x)), scaled(node, negative, alpha)))]


def _hard_sigmoid(node: NodeContext, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    """`clip(alpha * x + beta, 0, 1)`."""
    linear = shifted(node, scaled(node, x, alpha), beta)
    return node.emit(ClipOp(linear, 0.0, 1.0))


@register("HardSigmoid")
class HardSigmoid(OnnxOpConverter):
    """`HardSigmoid`: `clip(alpha * x + beta, 0, 1)`."""

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        alpha = node.attr_float("alpha", 0.2)
        beta = node.attr_float("beta", 0.5)
        return [_hard_sigmoid(node, node.input(0), alpha, beta)]


@register("HardSwish")
class HardSwish(OnnxOpConverter):
    """`HardSwish` (from opset 14): `x * clip(x / 6 + 1/2, 0, 1)`."""

    @classmethod
    def _impl_v14(cls, node: NodeContext) -> list[ConvertedValue]:
        x = node.input(0)
        return [node.emit(MulOp(x, _hard_sigmoid(node, x, 1.0 / 6.0, 0.5)))]


@register("Gelu")
class Gelu(OnnxOpConverter):
    """`Gelu` (from opset 20): `x/2 * (1 + erf(x / sqrt 2))`, or with `approximate = "tanh"`
    `x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`."""

    @classmethod
    def _impl_v20(cls, node: NodeContext) -> list[ConvertedValue]:
        x = node.input(0)
        approximate = node.attr_str("approximate", "none")
        if approximate == "none":
            inner = node.emit(ErfOp(scaled(node, x, 1.0 / math.sqrt(2.0))))
        elif approximate == "tanh":
            cube = node.emit(MulOp(node.emit(MulOp(x, x)), x))
            poly = node.emit(AddOp(x, scaled(node, cube, 0.044715)))
            inner = node.emit(TanhOp(scaled(node, poly, math.sqrt(2.0 / math.pi))))
        else:
            raise node.error(f"expected approximate 'none' or 'tanh', found '{approximate}'")
        half_x = scaled(node, x, 0.5)
        return [node.emit(MulOp(half_x, shifted(node, inner, 1.0)))]


@register("Clip")
class Clip(OnnxOpConverter):
    """`Clip`: graph.clip for float tensors with bounds known at import time; otherwise
    graph.max and graph.min. Bounds are attributes before opset 11, optional inputs after."""

    @classmethod
    def _clip(cls, node: NodeContext, low: float | None, high: float | None) -> SSAValue:
        x = node.input(0)
        if (is_float_type(node.element_type(0)) and low is not None and high is not None
                and low <= high):
            return node.emit(ClipOp(x, low, high))
        return clamp(node, x, low, high)  # also min > max, where every element becomes max

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        low = node.attr_float("min", float(np.finfo(np.float32).min))
        high = node.attr_float("max", float(np.finfo(np.float32).max))
        return [cls._clip(node, low, high)]

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        bounds: list[float | None] = []
        for index in (1, 2):
            if not node.has_input(index):
                bounds.append(None)
                continue
            array = node.const(index)
            if array is None:  # a bound computed at run time: max/min with the tensor
                return [cls._dynamic(node)]
            bounds.append(array.reshape(-1)[0].item())
        low, high = bounds
        if is_float_type(node.element_type(0)):
            info = np.finfo(np.float32)
            low = float(info.min) if low is None else low
            high = float(info.max) if high is None else high
        return [cls._clip(node, low, high)]

    @classmethod
    def _dynamic(cls, node: NodeContext) -> SSAValue:
        x = node.input(0)
        if node.has_input(1):
            x = node.emit(MaxOp(x, node.input(1)))
        if node.has_input(2):
            x = node.emit(MinOp(x, node.input(2)))
        return x


def _coerced_2d(node: NodeContext, axis: int) -> tuple[SSAValue, int]:
    """Input 0 as a matrix split before `axis` (ONNX's softmax before opset 13), and the axis
    to normalize over: 1 for the matrix, or `axis` itself when it is already the last one."""
    x = node.input(0)
    shape = node.shape(0)
    axis = normalize_axis(node, axis, len(shape))
    if axis == len(shape) - 1:
        return x, axis
    rows = int(np.prod(shape[:axis], dtype=np.int64))
    return reshape(node, x, [rows, int(np.prod(shape[axis:], dtype=np.int64))]), 1


@register("Softmax")
class Softmax(OnnxOpConverter):
    """`Softmax`: graph.softmax; before opset 13 over the input flattened to 2-D at `axis`."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        x, axis = _coerced_2d(node, node.attr_int("axis", 1))
        return [reshape(node, node.emit(SoftmaxOp(x, axis)), node.shape(0))]

    @classmethod
    def _impl_v13(cls, node: NodeContext) -> list[ConvertedValue]:
        axis = normalize_axis(node, node.attr_int("axis", -1), node.rank(0))
        return [node.emit(SoftmaxOp(node.input(0), axis))]


def _log_softmax(node: NodeContext, x: SSAValue, axis: int) -> SSAValue:
    """`x - max - log(sum(exp(x - max)))` along `axis`."""
    shifted_x = node.emit(SubOp(x, node.emit(ReduceOp(x, "max", [axis], keepdims=True))))
    total = node.emit(ReduceOp(node.emit(ExpOp(shifted_x)), "sum", [axis], keepdims=True))
    return node.emit(SubOp(shifted_x, node.emit(LogOp(total))))


@register("LogSoftmax")
class LogSoftmax(OnnxOpConverter):
    """`LogSoftmax`: `x - max - log(sum(exp(x - max)))`; before opset 13 over the input
    flattened to 2-D at `axis`."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        x, axis = _coerced_2d(node, node.attr_int("axis", 1))
        return [reshape(node, _log_softmax(node, x, axis), node.shape(0))]

    @classmethod
    def _impl_v13(cls, node: NodeContext) -> list[ConvertedValue]:
        axis = normalize_axis(node, node.attr_int("axis", -1), node.rank(0))
        return [_log_softmax(node, node.input(0), axis)]
