"""Converters of ONNX normalizations: BatchNormalization (graph.batch_norm), and
InstanceNormalization, LayerNormalization and LRN through reductions, pools and arithmetic."""

from __future__ import annotations

from dlc.dialects.graph import (
    AddOp,
    AvgPool2DOp,
    BatchNormOp,
    DivOp,
    MulOp,
    PowOp,
    ReciprocalOp,
    ReduceOp,
    SqrtOp,
    SubOp,
)
from dlc.frontends.onnx.common import normalize_axis, reshape, scaled, shape_of, shifted
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from xdsl.ir import SSAValue


@register("BatchNormalization")
class BatchNormalization(OnnxOpConverter):
    """`BatchNormalization`: graph.batch_norm; in training mode (opset 14) with the batch's
    statistics."""

    @classmethod
    def _convert(cls, node: NodeContext) -> list[ConvertedValue]:
        operands = [node.input(i) for i in range(5)]
        epsilon = node.attr_float("epsilon", 1e-5)
        return [node.emit(BatchNormOp(*operands, epsilon=epsilon))]

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        if node.attr_int("spatial", 1) != 1:
            raise node.error("expected spatial = 1, found 0 (per-activation statistics are not "
                             "supported)")
        return cls._convert(node)

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._convert(node)

    @classmethod
    def _impl_v14(cls, node: NodeContext) -> list[ConvertedValue]:
        if not node.attr_int("training_mode", 0):
            return cls._convert(node)
        return cls._training(node)

    @classmethod
    def _training(cls, node: NodeContext) -> list[ConvertedValue]:
        """Training mode: normalized with the batch's own mean and (population) variance;
        outputs Y and the running mean and variance, `input * momentum + batch * (1 -
        momentum)`."""
        x = node.input(0)
        rank = node.rank(0)
        axes = [a for a in range(rank) if a != 1]
        per_channel = [1, node.shape(0)[1]] + [1] * (rank - 2)
        mean = node.emit(ReduceOp(x, "mean", axes, keepdims=False))
        centered = node.emit(SubOp(x, reshape(node, mean, per_channel)))
        var = node.emit(ReduceOp(node.emit(MulOp(centered, centered)), "mean", axes,
                                 keepdims=False))
        epsilon = node.attr_float("epsilon", 1e-5)
        y = node.emit(BatchNormOp(x, node.input(1), node.input(2), mean, var, epsilon=epsilon))
        momentum = node.attr_float("momentum", 0.9)
        running = [
            node.emit(AddOp(scaled(node, node.input(index), momentum, like=index),
                            scaled(node, batch, 1.0 - momentum, like=index)))
            for index, batch in ((3, mean), (4, var))
        ]
        return [y, *running]


def _normalize(node: NodeContext, x: SSAValue, axes: list[int], epsilon: float
               ) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(x - mean) / sqrt(var + epsilon) over `axes`, with the mean and 1 / sqrt(var + eps)."""
    mean = node.emit(ReduceOp(x, "mean", axes, keepdims=True))
    centered = node.emit(SubOp(x, mean))
    var = node.emit(ReduceOp(node.emit(MulOp(centered, centered)), "mean", axes, keepdims=True))
    inv_std = node.emit(ReciprocalOp(node.emit(SqrtOp(shifted(node, var, epsilon)))))
    return node.emit(MulOp(centered, inv_std)), mean, inv_std


@register("InstanceNormalization")
class InstanceNormalization(OnnxOpConverter):
    """`InstanceNormalization`: normalized over the spatial axes of each (n, c), then scaled and
    shifted per channel."""

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        rank = node.rank(0)
        if rank < 3:
            raise node.error(f"expected an input of rank >= 3, found {node.input_type(0)}")
        normalized, _, _ = _normalize(node, node.input(0), list(range(2, rank)),
                                      node.attr_float("epsilon", 1e-5))
        per_channel = [node.shape(0)[1]] + [1] * (rank - 2)
        scale = reshape(node, node.input(1), per_channel)
        bias = reshape(node, node.input(2), per_channel)
        return [node.emit(AddOp(node.emit(MulOp(normalized, scale)), bias))]


@register("LayerNormalization")
class LayerNormalization(OnnxOpConverter):
    """`LayerNormalization` (from opset 17): normalized over the axes from `axis` on, then
    scaled and shifted; outputs Y, Mean and InvStdDev."""

    @classmethod
    def _impl_v17(cls, node: NodeContext) -> list[ConvertedValue]:
        rank = node.rank(0)
        axis = normalize_axis(node, node.attr_int("axis", -1), rank)
        normalized, mean, inv_std = _normalize(node, node.input(0), list(range(axis, rank)),
                                               node.attr_float("epsilon", 1e-5))
        result = node.emit(MulOp(normalized, node.input(1)))
        if node.has_input(2):
            result = node.emit(AddOp(result, node.input(2)))
        if shape_of(result) != node.shape(0):
            raise node.error(f"expected scale and bias to broadcast to {node.input_type(0)}")
        return [result, mean, inv_std]


@register("LRN")
class LRN(OnnxOpConverter):
    """`LRN`: `x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta`.

    The channel-window sum is an average pool (padding counted) of x^2 viewed as
    N x 1 x C x (D1*...*Dk), times `size`.
    """

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        size = node.attr_int("size")
        if size < 1:
            raise node.error(f"expected a positive size, found {size}")
        alpha = node.attr_float("alpha", 1e-4)
        beta = node.attr_float("beta", 0.75)
        bias = node.attr_float("bias", 1.0)
        shape = node.shape(0)
        if len(shape) < 3:
            raise node.error(f"expected an input of rank >= 3, found {node.input_type(0)}")
        x = node.input(0)
        rest = 1
        for dim in shape[2:]:
            rest *= dim
        squares = reshape(node, node.emit(MulOp(x, x)), [shape[0], 1, shape[1], rest])
        before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
        window_mean = node.emit(AvgPool2DOp(squares, kernel=[size, 1],
                                            padding=[before, 0, after, 0],
                                            count_include_pad=True))
        # alpha / size * (size * mean) == alpha * mean
        denominator = shifted(node, scaled(node, reshape(node, window_mean, shape), alpha), bias)
        powered = node.emit(PowOp(denominator, node.scalar(beta)))
        return [node.emit(DivOp(x, powered))]
