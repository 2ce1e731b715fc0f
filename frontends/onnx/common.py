"""Helpers several converter families share: axes, reshapes, scalar arithmetic, window padding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from dlc.dialects.graph import AddOp, MaxOp, MinOp, MulOp, ReshapeOp
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue


class UnaryConverter(OnnxOpConverter):
    """An ONNX op that is one unary graph op on its only input (opset >= 6): a subclass names
    the op in `graph_op`."""

    graph_op: ClassVar[type[Operation]]

    @classmethod
    def _impl_v6(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(cls.graph_op(node.input(0)))]


def normalize_axis(node: NodeContext, axis: int, rank: int, *, inclusive: bool = False) -> int:
    """`axis` in [0, rank) (in [0, rank] with `inclusive`), negative counting from the end."""
    top = rank + 1 if inclusive else rank
    if not -rank <= axis < top:
        raise node.error(f"expected axis in [{-rank}, {top - 1}] for rank {rank}, found {axis}")
    return axis + rank if axis < 0 else axis


def normalize_axes(node: NodeContext, axes: Sequence[int], rank: int) -> list[int]:
    """Distinct axes in [0, rank), in the order given."""
    normalized = [normalize_axis(node, a, rank) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise node.error(f"expected distinct axes, found {list(axes)}")
    return normalized


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor value."""
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def element_type_of(value: SSAValue) -> Attribute:
    """The element type of a tensor value."""
    assert isinstance(value.type, TensorType)
    return value.type.element_type


RUNTIME_TARGET_SUFFIX = ".runtime_target"
"""The name suffix of a Reshape's target resolved over runtime sizes by the importer
(`_with_runtime_target`: `graph.reshape`'s shape, -1 for each runtime dim kept or merged),
which the Reshape converter takes as it is."""


def reshape(node: NodeContext, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    """`value` reshaped to `shape`, or `value` itself when it already has that shape; a
    dynamic dim in `shape` is the batch, kept as the leading dim."""
    if shape_of(value) == tuple(shape):
        return value
    # a dynamic leading dim (the batch) is kept: `shape = [-1, ...]` with the row's dims
    return node.emit(ReshapeOp(value, [-1 if dim < 0 else dim for dim in shape]))


def scaled(node: NodeContext, value: SSAValue, factor: float, like: int = 0) -> SSAValue:
    """`value * factor`, or `value` itself when the factor is 1."""
    if factor == 1.0:
        return value
    return node.emit(MulOp(value, node.scalar(factor, like)))


def shifted(node: NodeContext, value: SSAValue, offset: float, like: int = 0) -> SSAValue:
    """`value + offset`, or `value` itself when the offset is 0."""
    if offset == 0.0:
        return value
    return node.emit(AddOp(value, node.scalar(offset, like)))


def clamp(node: NodeContext, value: SSAValue, low: float | None, high: float | None,
          like: int = 0) -> SSAValue:
    """`min(max(value, low), high)`, each bound only where given."""
    if low is not None:
        value = node.emit(MaxOp(value, node.scalar(low, like)))
    if high is not None:
        value = node.emit(MinOp(value, node.scalar(high, like)))
    return value


def window_padding(node: NodeContext, spatial: Sequence[int], kernel: Sequence[int],
                   strides: Sequence[int], dilations: Sequence[int]) -> list[int]:
    """ONNX `pads` ([x1_begin, x2_begin, ..., x1_end, x2_end, ...]) of a sliding-window op,
    from attribute `pads` or `auto_pad` (NOTSET, VALID, SAME_UPPER, SAME_LOWER)."""
    rank = len(spatial)
    auto_pad = node.attr_str("auto_pad", "NOTSET")
    if auto_pad == "NOTSET":
        pads = node.attr_ints("pads", [0] * (2 * rank))
        assert pads is not None
        if len(pads) != 2 * rank:
            raise node.error(f"expected {2 * rank} pads, found {len(pads)}")
        if any(p < 0 for p in pads):
            raise node.error(f"expected non-negative pads, found {pads}")
        return pads
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"expected auto_pad NOTSET, VALID, SAME_UPPER or SAME_LOWER, found "
                         f"'{auto_pad}'")
    totals = [max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
              for size, k, s, d in zip(spatial, kernel, strides, dilations, strict=True)]
    return split_padding(totals, auto_pad)


def split_padding(totals: Sequence[int], auto_pad: str) -> list[int]:
    """Begin pads then end pads sharing each total as ONNX's auto_pad says: the odd one goes
    at the end for SAME_UPPER, at the beginning otherwise (SAME_LOWER, NOTSET)."""
    halves = [(total // 2, total - total // 2) for total in totals]
    if auto_pad == "SAME_UPPER":
        return [small for small, _ in halves] + [large for _, large in halves]
    return [large for _, large in halves] + [small for small, _ in halves]


def strides_and_dilations(node: NodeContext, rank: int) -> tuple[list[int], list[int]]:
    """Attributes `strides` and `dilations` of a sliding-window op (default 1 each)."""
    strides = node.attr_ints("strides", [1] * rank)
    dilations = node.attr_ints("dilations", [1] * rank)
    assert strides is not None and dilations is not None
    for name, values in (("strides", strides), ("dilations", dilations)):
        if len(values) != rank:
            raise node.error(f"expected {rank} {name}, found {len(values)}")
        if any(v < 1 for v in values):
            raise node.error(f"expected positive {name}, found {values}")
    return strides, dilations


def window_attrs(node: NodeContext, spatial: Sequence[int], kernel: Sequence[int]
                 ) -> tuple[list[int], list[int], list[int]]:
    """(strides, dilations, pads) of a sliding-window op over `spatial` dims, defaults filled."""
    strides, dilations = strides_and_dilations(node, len(spatial))
    return strides, dilations, window_padding(node, spatial, kernel, strides, dilations)


def as_int_list(array: np.ndarray) -> list[int]:
    """A 0-D or 1-D integer array as a list of Python ints."""
    return [int(v) for v in np.asarray(array).reshape(-1)]
