"""Converters of ONNX ops whose output size depends on the data: NonZero, NonMaxSuppression.

Each becomes a graph op with its result padded to a static bound and a count
(`dialects/graph/ops_dynamic.py`); the importer marks the graph outputs that carry the count
(`dialects.graph.extents`). A constant input makes NonZero an import-time constant of its exact
shape.
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.ops_dynamic import NonMaxSuppressionOp, NonZeroOp
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from xdsl.dialects.builtin import TensorType, i64


@register("NonZero")
class NonZero(OnnxOpConverter):
    """`NonZero`: graph.nonzero, padded to every element (a constant input: its exact value)."""

    fold_constant_inputs = False  # folded here, to the exact shape rather than the bound

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        const = node.const(0)
        if const is not None:
            return [np.array(np.nonzero(np.atleast_1d(const)), dtype=np.int64)
                    .reshape(max(const.ndim, 1), -1)]
        return list(node.emit_op(NonZeroOp(node.input(0))).results[:1])


@register("NonMaxSuppression")
class NonMaxSuppression(OnnxOpConverter):
    """`NonMaxSuppression`: graph.non_max_suppression. The bound on the boxes selected per class
    is `max_output_boxes_per_class` clipped to the number of boxes when it is known at import
    time, else the number of boxes (so a runtime value needs no recompile); an absent (or
    empty) `max_output_boxes_per_class` selects nothing, an absent `iou_threshold` is 0, an absent
    `score_threshold` filters nothing."""

    fold_constant_inputs = False

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        boxes_shape = node.shape(0)
        if len(boxes_shape) != 3:
            raise node.error(f"expected boxes of shape [batches, boxes, 4], found "
                             f"{list(boxes_shape)}")
        num_boxes = boxes_shape[1]
        center = node.attr_int("center_point_box", 0)
        if center not in (0, 1):
            raise node.error(f"expected center_point_box 0 or 1, found {center}")
        float_type = node.element_type(0)
        known = node.const(2) if node.has_input(2) else np.zeros(0, np.int64)
        if known is not None and known.size == 0:  # absent, or empty: selects nothing
            max_boxes, bound = node.constant(np.zeros((), dtype=np.int64)), 0
        elif known is not None:
            if known.size != 1:
                raise node.error(f"expected one max_output_boxes_per_class, found "
                                 f"{known.size}")
            max_boxes = node.input(2)
            bound = min(max(int(known.reshape(-1)[0]), 0), num_boxes)
        else:
            max_boxes, bound = node.input(2), num_boxes
        if max_boxes.type != TensorType(i64, []) and max_boxes.type != TensorType(i64, [1]):
            raise node.error(f"expected max_output_boxes_per_class of type tensor<i64> or "
                             f"tensor<1xi64>, found {max_boxes.type}")
        if node.has_input(3):
            iou = node.input(3)
        else:
            iou = node.constant(np.zeros((), dtype=to_numpy_dtype(float_type)))
        score = node.input(4) if node.has_input(4) else None
        op = node.emit_op(NonMaxSuppressionOp(node.input(0), node.input(1), max_boxes, iou, score,
                                              bound, center))
        return [op.results[0]]

