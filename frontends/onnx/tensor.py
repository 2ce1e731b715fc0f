"""Converters of ONNX ops that move or select data without arithmetic: Identity, Dropout,
Reshape, Flatten, Transpose, Concat, Squeeze, Unsqueeze, Expand, Tile, Pad."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from dlc.dialects.dim_symbols import has_dynamic_leading_dim
from dlc.dialects.graph import ConcatOp, FlattenOp, TransposeOp
from dlc.dialects.graph.ops import broadcast_shapes
from dlc.dialects.graph.ops_tensor import BroadcastToOp, PadOp
from dlc.frontends.onnx.common import (
    RUNTIME_TARGET_SUFFIX,
    as_int_list,
    normalize_axes,
    normalize_axis,
    reshape,
)
from dlc.frontends.onnx.context import NodeContext, describe_node
from dlc.frontends.onnx.errors import DynamicInputError
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from dlc.frontends.onnx.select import strided_slice
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue


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
    """`Dropout`: its input, and an all-true mask if the mask is asked for. That is inference;
    from opset 12 also training mode with a ratio of 0, known at import time (nothing dropped).
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
        if node.has_input(2) and bool(node.require_const(2, "training_mode").reshape(-1)[0]):
            ratio = node.require_const(1, "the ratio") if node.has_input(1) else np.array(0.5)
            if float(ratio.reshape(-1)[0]) != 0.0:
                raise node.error(f"expected inference, or training with ratio 0, found "
                                 f"training with ratio {float(ratio.reshape(-1)[0])} (random)")
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
        shape = node.shape(0)
        if node.node.input[1].endswith(RUNTIME_TARGET_SUFFIX):  # the importer resolved it
            return [reshape(node, node.input(0), target)]  # (-1 for each runtime dim)
        if shape and shape[0] < 0:  # the dynamic batch: kept when the rows are reshaped alone
            if not target or target[0] not in (0, -1) or (target[0] == 0 and allow_zero):
                raise node.error(f"expected shape {list(target)} to keep the dynamic leading dim "
                                 f"of {node.input_type(0)} (0 or -1 first)")
            row = reshape_target(node, shape[1:], target[1:], allow_zero)
            return [reshape(node, node.input(0), [shape[0], *row])]
        shape = reshape_target(node, shape, target, allow_zero)
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


@register("Expand")
class Expand(OnnxOpConverter):
    """`Expand` (from opset 8): graph.broadcast_to the two-way broadcast of the input's shape
    and the import-time shape input; a leading -1 there (the importer's dynamic batch) is a
    broadcast to the batch (`expand_to_batch`)."""

    @classmethod
    def _impl_v8(cls, node: NodeContext) -> list[ConvertedValue]:
        target = as_int_list(node.require_const(1, "the shape"))
        if target and target[0] == -1:
            return [expand_to_batch(node, node.input(0), target)]
        shape = broadcast_shapes(node.shape(0), target)
        if shape is None:
            raise node.error(f"expected shape {target} to broadcast with "
                             f"{node.input_type(0)}")
        if shape == node.shape(0):
            return [_passthrough(node)]
        return [node.emit(BroadcastToOp(node.input(0), shape))]


def expand_to_batch(node: NodeContext, value: SSAValue, target: Sequence[int]) -> SSAValue:
    """`value` broadcast two-way with `target`, whose leading -1 is the dynamic batch: a
    graph.broadcast_to with that -1, sized by a batched graph input (or by `value`, when it has
    the batch itself). A value whose leading dim would have to equal the batch, or that would
    move the batch off the leading axis, is a `DynamicInputError` (the driver compiles shapes per
    call instead)."""
    value_type = value.type
    assert isinstance(value_type, TensorType)
    shape = list(value_type.get_shape())
    batched = has_dynamic_leading_dim(value_type)
    aligned = [1, *shape[1:]] if batched else shape
    dims = broadcast_shapes(aligned, [1, *target[1:]])
    if (dims is None or len(dims) != len(target) or (batched and len(shape) != len(target))
            or (len(shape) == len(target) and not batched and shape[0] != 1)):
        raise DynamicInputError(
            f"{describe_node(node.node)}: expected {value_type} to broadcast to the dynamic batch "
            f"as {list(target)} (-1: the batch), with the batch leading", node.node.input[0])
    result = [-1, *dims[1:]]
    if batched and result[1:] == shape[1:]:
        return value
    return node.emit(BroadcastToOp(value, result, None if batched else node.batch()))


@register("Tile")
class Tile(OnnxOpConverter):
    """`Tile`: the input viewed as 1 x d0 x 1 x d1 ..., broadcast to r0 x d0 x r1 x d1 ...,
    and reshaped to (r0*d0) x (r1*d1) ...; the repeats are known at import time."""

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        repeats = as_int_list(node.require_const(1, "the repeats"))
        shape = node.shape(0)
        if len(repeats) != len(shape) or any(r < 0 for r in repeats):
            raise node.error(f"expected {len(shape)} non-negative repeats, found {repeats}")
        if all(r == 1 for r in repeats):
            return [_passthrough(node)]
        interleaved = [d for pair in zip([1] * len(shape), shape, strict=True) for d in pair]
        tiled = [d for pair in zip(repeats, shape, strict=True) for d in pair]
        spread = node.emit(BroadcastToOp(reshape(node, node.input(0), interleaved), tiled))
        return [reshape(node, spread, [r * d for r, d in zip(repeats, shape, strict=True)])]


@register("Pad")
class Pad(OnnxOpConverter):
    """`Pad`: graph.pad (modes constant, reflect, edge); negative pads crop with graph.slice
    first. Pads and value are attributes before opset 11 and import-time inputs after; opset 18
    adds the axes input."""

    @classmethod
    def _pad(cls, node: NodeContext, pads: list[int], axes: list[int] | None,
             value: float) -> list[ConvertedValue]:
        shape = node.shape(0)
        rank = len(shape)
        axes = list(range(rank)) if axes is None else normalize_axes(node, axes, rank)
        if len(pads) != 2 * len(axes):
            raise node.error(f"expected {2 * len(axes)} pads, found {len(pads)}")
        full = [0] * (2 * rank)
        for i, axis in enumerate(axes):
            full[axis], full[axis + rank] = pads[i], pads[i + len(axes)]
        x = node.input(0)
        if any(p < 0 for p in full):
            starts = [max(-p, 0) for p in full[:rank]]
            ends = [d - max(-p, 0) for d, p in zip(shape, full[rank:], strict=True)]
            x = strided_slice(node, x, shape, starts, ends, list(range(rank)), [1] * rank)
            full = [max(p, 0) for p in full]
        mode = node.attr_str("mode", "constant")
        if not any(full):
            return [x]
        return [node.emit(PadOp(x, full, mode, value))]

    @classmethod
    def _impl_v2(cls, node: NodeContext) -> list[ConvertedValue]:
        pads = node.attr_ints("pads")
        assert pads is not None
        return cls._pad(node, pads, None, node.attr_float("value", 0.0))

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        pads = as_int_list(node.require_const(1, "the pads"))
        value = 0.0
        if node.has_input(2):
            value = node.require_const(2, "the constant value").reshape(-1)[0].item()
        return cls._pad(node, pads, node.optional_const_ints(3, "the axes"), value)
