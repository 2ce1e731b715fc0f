"""Converters of ONNX ops whose results are known at import time: Constant, Shape, Size,
ConstantOfShape, Range. They produce arrays, never ops (TVM folds the same ops with `infer_value`).
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.extents import extent_of
from dlc.dialects.graph.ops_tensor import BroadcastToOp
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register

_CONSTANT_VALUE_ATTRS = (
    "value", "value_float", "value_floats", "value_int", "value_ints", "sparse_value",
    "value_string", "value_strings",
)


@register("Constant")
class Constant(OnnxOpConverter):
    """`Constant`: the value of exactly one of its `value*` attributes."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        given = [name for name in _CONSTANT_VALUE_ATTRS if node.has_attr(name)]
        if len(given) != 1:
            raise node.error(f"expected exactly one value attribute, found {len(given)}"
                             + (f" ({', '.join(given)})" if given else ""))
        name = given[0]
        if name == "value":
            tensor = node.attr_tensor("value")
            assert tensor is not None
            return [tensor]
        if name == "value_float":
            return [np.array(node.attr_float(name), dtype=np.float32)]
        if name == "value_floats":
            return [np.array(node.attr_floats(name), dtype=np.float32)]
        if name == "value_int":
            return [np.array(node.attr_int(name), dtype=np.int64)]
        if name == "value_ints":
            return [np.array(node.attr_ints(name), dtype=np.int64)]
        raise node.error(f"expected a dense numeric value, found attribute '{name}' (sparse and "
                         "string constants are not supported)")


def static_shape(node: NodeContext) -> tuple[int, ...]:
    """The static shape of input 0, which must not have a data-dependent extent (the padded
    result of NonZero or NonMaxSuppression: its shape is the bound, not the data's)."""
    if node.const(0) is None:
        extent = extent_of(node.input(0))
        if extent is not None:
            raise node.error(f"consumes the data-dependent extent of {extent.source} along "
                             f"axis {extent.axis}: its size is known only at run time, and dlc "
                             "compiles static shapes (a known limit)")
    if any(dim < 0 for dim in node.shape(0)):
        raise node.error(f"reads the shape of {node.input_type(0)}, whose leading dim is the "
                         "dynamic batch: known at run time only")
    return node.shape(0)


@register("Shape")
class Shape(OnnxOpConverter):
    """`Shape`: the static shape of its input as an int64 vector (v15: sliced by start/end)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return [np.array(static_shape(node), dtype=np.int64)]

    @classmethod
    def _impl_v15(cls, node: NodeContext) -> list[ConvertedValue]:
        shape = static_shape(node)
        start = node.attr_int("start", 0)
        end = node.attr_int("end", len(shape))
        return [np.array(shape[slice(start, end)], dtype=np.int64)]


@register("Size")
class Size(OnnxOpConverter):
    """`Size`: the static element count of its input as an int64 scalar."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return [np.array(int(np.prod(static_shape(node), dtype=np.int64)), dtype=np.int64)]


@register("ConstantOfShape")
class ConstantOfShape(OnnxOpConverter):
    """`ConstantOfShape`: a tensor of the shape given by its (import-time) input, filled with
    the one element of attribute `value` (default float32 0); with a leading -1 there (the
    importer's dynamic batch), that element broadcast to the batch's rows."""

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        shape = node.require_const(0, "the shape")
        if shape.ndim != 1 or shape.dtype != np.int64:
            raise node.error(f"expected the shape as a 1-D int64 tensor, found {shape.dtype} of "
                             f"shape {list(shape.shape)}")
        batch = shape.size > 0 and shape[0] == -1  # the importer's dynamic batch
        if ((shape[1:] if batch else shape) < 0).any():
            raise node.error(f"expected non-negative dimensions, found {shape.tolist()}")
        value = node.attr_tensor("value")
        if value is None:
            value = np.zeros((1,), dtype=np.float32)
        if value.size != 1:
            raise node.error(f"expected attribute 'value' to hold one element, found {value.size}")
        if batch:  # one element broadcast to the batch's rows
            one = node.constant(value.reshape((1,) * shape.size))
            return [node.emit(BroadcastToOp(one, [int(d) for d in shape], node.batch()))]
        # A read-only view of the one value: weights made this way cost no memory until used.
        return [np.broadcast_to(value.reshape(()), tuple(int(d) for d in shape))]


@register("Range")
class Range(OnnxOpConverter):
    """`Range`: `start + delta * i` for i < max(ceil((limit - start) / delta), 0); all three
    inputs must be known at import time, since they fix the output's shape."""

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        start, limit, delta = (node.require_const(i, what).reshape(())
                               for i, what in enumerate(("start", "limit", "delta")))
        if delta == 0:
            raise node.error("expected a non-zero delta, found 0")
        count = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
        steps = np.arange(count, dtype=start.dtype)
        return [(start + steps * delta).astype(start.dtype)]
