"""Graph ops whose result size depends on the data: `nonzero`, `non_max_suppression`.

XLA's bounded dynamic shapes (its "dynamic padder"): each op produces its result padded to a
static upper bound along one axis, plus a count (an `i64` scalar tensor) of the valid entries
along it; the entries past the count are filled with a valid index (0). `dialects.graph.extents`
follows the valid extent through the ops that do not look at the padding and marks the entry
function's results that carry it, which the runtimes trim to the count.
"""

from __future__ import annotations

from dlc.dialects.graph.attrs import FusionKind, is_float_type
from dlc.dialects.graph.ops import _tensor, i64_attr, op_error, with_fusion_kind
from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

COUNT_TYPE = TensorType(i64, [])
"""The type of the count result of a data-dependent op: a 0-d `i64` tensor."""


def _require_count_type(op_name: str, found: Attribute) -> None:
    if found != COUNT_TYPE:
        raise op_error(op_name, f"expected the count result of type {COUNT_TYPE}, found {found}")


def _require_scalar(op_name: str, what: str, type: Attribute, float_type: bool) -> None:
    """A scalar operand: a 0-d or one-element 1-d tensor of a float (or integer) type."""
    tensor = _tensor(op_name, what, type)
    if tensor.get_shape() not in ((), (1,)):
        raise op_error(op_name, f"expected {what} to be a scalar (shape [] or [1]), found "
                                f"{tensor}")
    element = tensor.get_element_type()
    if float_type != is_float_type(element) or (not float_type and element != i64):
        kind = "a float" if float_type else "i64"
        raise op_error(op_name, f"expected {what} of {kind} element type, found {tensor}")


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class NonZeroOp(IRDLOperation):
    """The coordinates of the nonzero elements of `x`, padded to all of them (ONNX NonZero).

    Semantics: x of rank r (r >= 1; a 0-d x is read as shape [1]) and n elements. Result
    `indices` is r×n `i64`: column j < `count` holds the coordinates of the j-th nonzero element
    in row-major order; columns from `count` on hold 0 (a valid index). `count` (0-d `i64`) is
    the number of nonzero elements (NaN is nonzero; false is zero).

    Example:
        %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
    """

    name = "graph.nonzero"

    x = operand_def(TensorType)
    indices = result_def(TensorType)
    count = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue) -> None:
        super().__init__(operands=[x], result_types=[self.infer_type(x.type), COUNT_TYPE])

    @classmethod
    def infer_type(cls, x: Attribute) -> TensorType:
        """The padded indices' type: rank × numel (i64)."""
        shape = _tensor(cls.name, "the operand", x).get_shape()
        numel = 1
        for dim in shape:
            numel *= dim
        return TensorType(i64, [max(len(shape), 1), numel])

    def verify_(self) -> None:
        expected = self.infer_type(self.x.type)
        if self.indices.type != expected:
            raise op_error(self.name, f"expected indices of type {expected}, found "
                                      f"{self.indices.type}")
        _require_count_type(self.name, self.count.type)


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class NonMaxSuppressionOp(IRDLOperation):
    """Greedy non-maximum suppression of boxes per batch and class (ONNX NonMaxSuppression).

    Semantics: `boxes` B×N×4 (float; [y1, x1, y2, x2] corners in either order, or
    [x_center, y_center, width, height] with `center_point_box` = 1), `scores` B×C×N.
    Scalars: `max_output_boxes_per_class` (i64; negative counts as 0), `iou_threshold` and the
    optional `score_threshold` (the boxes' type). For each batch b and class c, the boxes whose
    score is above `score_threshold` (all of them without it) are visited by descending score,
    ties by ascending index, NaN scores last; a box is selected unless its IoU with a box
    already selected for (b, c) is above `iou_threshold` (ONNX's reference: boxes that do not
    overlap, or with an empty area, have IoU 0), until min(max_output_boxes_per_class, `bound`)
    are selected.
    `bound` (0 <= bound <= N) is the static bound on the boxes selected per class: the value of
    `max_output_boxes_per_class` where it is known when compiling, else N. Result `selected`
    is (B·C·bound)×3 `i64`: rows [b, c, box] in (b, c, selection) order, the first `count` valid
    and the rest 0; `count` (0-d i64) is their number.

    Example:
        %s, %n = graph.non_max_suppression %boxes, %scores, %max, %iou, %thr
            {bound = 2 : i64}
            : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>,
              tensor<1xf32> -> tensor<2x3xi64>, tensor<i64>
    """

    name = "graph.non_max_suppression"

    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    max_output_boxes_per_class = operand_def(TensorType)
    iou_threshold = operand_def(TensorType)
    score_threshold = opt_operand_def(TensorType)
    selected = result_def(TensorType)
    count = result_def(TensorType)
    bound = attr_def(IntegerAttr[I64])
    center_point_box = attr_def(IntegerAttr[I64], default_value=i64_attr(0))

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())
    assembly_format = (
        "$boxes `,` $scores `,` $max_output_boxes_per_class `,` $iou_threshold "
        "(`,` $score_threshold^)? attr-dict `:` type($boxes) `,` type($scores) `,` "
        "type($max_output_boxes_per_class) `,` type($iou_threshold) "
        "(`,` type($score_threshold)^)? `->` type($selected) `,` type($count)"
    )

    def __init__(
        self, boxes: SSAValue, scores: SSAValue, max_output_boxes_per_class: SSAValue,
        iou_threshold: SSAValue, score_threshold: SSAValue | None, bound: int,
        center_point_box: int = 0,
    ) -> None:
        super().__init__(
            operands=[boxes, scores, max_output_boxes_per_class, iou_threshold,
                      [score_threshold] if score_threshold is not None else []],
            result_types=[self.infer_type(boxes.type, scores.type, bound), COUNT_TYPE],
            attributes={"bound": i64_attr(bound),
                        "center_point_box": i64_attr(center_point_box)},
        )

    @classmethod
    def infer_type(cls, boxes: Attribute, scores: Attribute, bound: int) -> TensorType:
        """The padded selection's type, (B·C·bound)×3 (i64), after checking the shapes."""
        boxes_type = _tensor(cls.name, "the boxes", boxes)
        scores_type = _tensor(cls.name, "the scores", scores)
        box_shape, score_shape = boxes_type.get_shape(), scores_type.get_shape()
        if len(box_shape) != 3 or box_shape[2] != 4:
            raise op_error(cls.name, f"expected boxes of shape [batches, boxes, 4], found "
                                     f"{boxes_type}")
        if (len(score_shape) != 3 or score_shape[0] != box_shape[0]
                or score_shape[2] != box_shape[1]):
            raise op_error(cls.name, f"expected scores of shape [{box_shape[0]}, classes, "
                                     f"{box_shape[1]}] for boxes {boxes_type}, found "
                                     f"{scores_type}")
        if not is_float_type(boxes_type.get_element_type()) or (
                scores_type.get_element_type() != boxes_type.get_element_type()):
            raise op_error(cls.name, f"expected float boxes and scores of one type, found "
                                     f"{boxes_type} and {scores_type}")
        if not 0 <= bound <= box_shape[1]:
            raise op_error(cls.name, f"expected 'bound' in [0, {box_shape[1]}], found {bound}")
        return TensorType(i64, [box_shape[0] * score_shape[1] * bound, 3])

    def verify_(self) -> None:
        expected = self.infer_type(self.boxes.type, self.scores.type, self.bound_value())
        if self.selected.type != expected:
            raise op_error(self.name, f"expected selected indices of type {expected}, found "
                                      f"{self.selected.type}")
        _require_count_type(self.name, self.count.type)
        if self.center_point_box.value.data not in (0, 1):
            raise op_error(self.name, f"expected 'center_point_box' 0 or 1, found "
                                      f"{self.center_point_box.value.data}")
        _require_scalar(self.name, "max_output_boxes_per_class",
                        self.max_output_boxes_per_class.type, float_type=False)
        for what, value in (("iou_threshold", self.iou_threshold),
                            ("score_threshold", self.score_threshold)):
            if value is None:
                continue
            _require_scalar(self.name, what, value.type, float_type=True)
            if value.type.get_element_type() != self.boxes.type.get_element_type():
                raise op_error(self.name, f"expected {what} of the boxes' element type, found "
                                          f"{value.type}")

    def bound_value(self) -> int:
        """The static bound on the boxes selected per batch and class."""
        return self.bound.value.data

    def center_point_box_value(self) -> bool:
        """Whether boxes are [x_center, y_center, width, height]."""
        return bool(self.center_point_box.value.data)
