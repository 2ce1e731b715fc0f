"""Converters of ONNX ops that move or select data without arithmetic: Identity, Dropout,
Reshape, Flatten, Transpose, Concat, Squeeze, Unsqueeze, ..."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dialects.graph import ConcatOp, FlattenOp, TransposeOp
from frontends.onnx.common import as_int_list, normalize_axes, normalize_axis, reshape
from frontends.onnx.context import NodeContext
from frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register


def _passthrough(node: NodeContext, index: int = 0) -> ConvertedValue:
    """Input `index` unchanged: its contents if known at import time, else its SSA value."""
    array = node.const(index)
    return array if array is not None else node.input(index)


@register("Identity")
class Identity(OnnxOpConverter):
    """`Identity`: its input."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return [_passthrough(node)]


@register("Dropout")
class Dropout(OnnxOpConverter):
    """`Dropout` at inference: its input, and an all-true mask if the mask is asked for.

    v12 takes `ratio` and `training_mode` as inputs; a training mode that is not known to be
    false at import time is an error.
    """

    @classmethod
    def _outputs(cls, node: NodeContext) -> list[ConvertedValue]:
        mask = np.ones(node.shape(0), dtype=np.bool_)
        return [_passthrough(node), mask]

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._outputs(node)

    @classmethod
    def _impl_v12(cls, node: NodeContext) -> list[ConvertedValue]:
        if node.has_input(2):
            training = node.require_const(2, "training_mode")
            if bool(training.reshape(-1)[0]):
                raise node.error("expected training_mode false (dlc imports models for "
                                 "inference), found true")
        return cls._outputs(node)


def reshape_target(node: NodeContext, shape: Sequence[int], target: Sequence[int],
                   allow_zero: bool) -> list[int]:
    """ONNX Reshape's output shape: 0 copies the input dim (unless `allow_zero`), one -1 is
    inferred."""
    result = list(target)
    for i, dim in enumerate(result):
        if dim == 0 and not allow_zero:
            if i >= len(shape):
                raise node.error(f"expected dim {i} of shape {list(target)} to copy an input "
                                 f"dim, found an input of rank {len(shape)}")
            result[i] = shape[i]
        elif dim < -1:
            raise node.error(f"expected dims >= -1, found {list(target)}")
    total = int(np.prod(shape, dtype=np.int64))
    if result.count(-1) > 1:
        raise node.error(f"expected at most one -1 in shape {list(target)}")
    if -1 in result:
        known = int(np.prod([d for d in result if d != -1], dtype=np.int64))
        if known == 0 or total % known:
            raise node.error(f"cannot reshape {list(shape)} to {list(target)}")
        result[result.index(-1)] = total // known
    if int(np.prod(result, dtype=np.int64)) != total:
        raise node.error(f"cannot reshape {list(shape)} ({total} elements) to {list(target)}")
    return result


@register("Reshape")
class Reshape(OnnxOpConverter):
    """`Reshape`: graph.reshape to the shape input, known at import time (`allowzero` v14)."""

    @classmethod
    def _impl_v5(cls, node: NodeContext) -> list[ConvertedValue]:
        target = as_int_list(node.require_const(1, "the shape"))
        allow_zero = bool(node.attr_int("allowzero", 0)) if node.opset >= 14 else False
        shape = reshape_target(node, node.shape(0), target, allow_zero)
        return [reshape(node, node.input(0), shape)]


@register("Flatten")
class Flatten(OnnxOpConverter):
    """`Flatten`: graph.flatten (negative axes from opset 11)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        axis = normalize_axis(node, node.attr_int("axis", 1), node.rank(0), inclusive=True)
        return [node.emit(FlattenOp(node.input(0), axis))]


@register("Transpose")
class Transpose(OnnxOpConverter):
    """`Transpose`: graph.transpose (default: the axes reversed)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        rank = node.rank(0)
        perm = node.attr_ints("perm", list(reversed(range(rank))))
        assert perm is not None
        if sorted(perm) != list(range(rank)):
            raise node.error(f"expected perm to be a permutation of 0..{rank - 1}, found {perm}")
        if perm == list(range(rank)):
            return [_passthrough(node)]
        return [node.emit(TransposeOp(node.input(0), perm))]


@register("Concat")
class Concat(OnnxOpConverter):
    """`Concat`: graph.concat (negative axes from opset 11)."""

    @classmethod
    def _impl_v4(cls, node: NodeContext) -> list[ConvertedValue]:
        axis = normalize_axis(node, node.attr_int("axis"), node.rank(0))
        inputs = node.inputs()
        if len(inputs) == 1:
            return [inputs[0]]
        return [node.emit(ConcatOp(inputs, axis))]


def _squeezed(node: NodeContext, axes: list[int] | None) -> list[int]:
    shape = node.shape(0)
    if axes is None:
        return [d for d in shape if d != 1]
    axes = normalize_axes(node, axes, len(shape))
    for axis in axes:
        if shape[axis] != 1:
            raise node.error(f"expected dim {axis} of {node.input_type(0)} to be 1")
    return [d for i, d in enumerate(shape) if i not in axes]


@register("Squeeze")
class Squeeze(OnnxOpConverter):
    """`Squeeze`: graph.reshape without the given size-1 axes (all of them by default); the
    axes are an attribute before opset 13 and an import-time input after."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        shape = _squeezed(node, node.attr_ints("axes", None))
        return [reshape(node, node.input(0), shape)]

    @classmethod
    def _impl_v13(cls, node: NodeContext) -> list[ConvertedValue]:
        shape = _squeezed(node, node.optional_const_ints(1, "the axes"))
        return [reshape(node, node.input(0), shape)]


def _unsqueezed(node: NodeContext, axes: list[int] | None) -> list[int]:
    if axes is None:
        raise node.error("expected axes, found none")
    shape = node.shape(0)
    rank = len(shape) + len(axes)
    inserted = normalize_axes(node, axes, rank)
    dims = iter(shape)
    return [1 if i in inserted else next(dims) for i in range(rank)]


@register("Unsqueeze")
class Unsqueeze(OnnxOpConverter):
    """`Unsqueeze`: graph.reshape with size-1 axes inserted; the axes are an attribute before
    opset 13 and an import-time input after."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        shape = _unsqueezed(node, node.attr_ints("axes"))
        return [reshape(node, node.input(0), shape)]

    @classmethod
    def _impl_v13(cls, node: NodeContext) -> list[ConvertedValue]:
        shape = _unsqueezed(node, node.optional_const_ints(1, "the axes"))
        return [reshape(node, node.input(0), shape)]
