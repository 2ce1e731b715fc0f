"""Compute definitions of `graph.nonzero` and `graph.non_max_suppression`: padded results.

Counterpart: TVM's `topi.argwhere` and `topi.vision.non_max_suppression`, which write a
data-dependent number of rows; here, as in XLA's bounded dynamic shapes, the result has its
static bound and the rows past the count hold 0 (`dialects/graph/ops_dynamic.py`). No scatter
exists in tensor_expr, so each output element finds its input:

- nonzero: "nonzero_flag" marks the nonzero elements, a scan carries their running sum (its
  final state is the count, its outputs the inclusive prefix sums), and the j-th nonzero
  element sits at the first flat position whose prefix exceeds j, found by a binary search
  unrolled in "nonzero_position" (O(n log n)); "nonzero_indices" unravels it.
- non_max_suppression: "nms_rank" ranks each box within its (batch, class) by descending score
  (ties: lower index first), "nms_candidates" lists the boxes by rank (rank-major, the scan's
  sequence); a `tensor_expr.scan` over the ranks carries the boxes selected so far and their
  count per (batch, class), and selects the candidate when it passes the score threshold, the
  count is below max_output_boxes_per_class and no selected box overlaps it by more than the IoU
  threshold (ONNX's reference IoU test, step for step); "nms_offset" and "nms_selected" then
  lay the selections out (batch, class)-major. The ranking is O(boxes²) per class, the
  selection O(boxes × bound), the layout O(rows × batches × classes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph.ops_dynamic import NonMaxSuppressionOp, NonZeroOp
from dlc.dialects.tensor_expr.scan import ScanOp
from dlc.rewrites.topi.common import (
    check_element_type,
    clamp_index,
    constant,
    dense_constant,
    divide_index,
    emit_compute,
    index,
    is_float,
    read,
    remainder_index,
    shape_of,
    tensor_type,
)
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i1, i64
from xdsl.ir import SSAValue

TAG = "dynamic"


def _i64(b: Builder, value: SSAValue) -> SSAValue:
    return b.insert(arith.IndexCastOp(value, i64)).result


def _as_index(b: Builder, value: SSAValue, dim: int) -> SSAValue:
    """An i64 position as an index clamped into [0, dim)."""
    return clamp_index(b, b.insert(arith.IndexCastOp(value, IndexType())).result, max(dim, 1))


def _flag(b: Builder, condition: SSAValue) -> SSAValue:
    return b.insert(arith.ExtUIOp(condition, i64)).result


def _and(b: Builder, *conditions: SSAValue) -> SSAValue:
    result = conditions[0]
    for condition in conditions[1:]:
        result = b.insert(arith.AndIOp(result, condition)).result
    return result


def _cmpi(b: Builder, lhs: SSAValue, rhs: SSAValue, predicate: str) -> SSAValue:
    return b.insert(arith.CmpiOp(lhs, rhs, predicate)).result


def _cmpf(b: Builder, lhs: SSAValue, rhs: SSAValue, predicate: str) -> SSAValue:
    return b.insert(arith.CmpfOp(lhs, rhs, predicate)).result


def _padded_constant(b: Builder, shape: Sequence[int]) -> list[SSAValue]:
    """An all-zero selection and a zero count (an empty bound)."""
    return [dense_constant(b, np.zeros(shape, dtype=np.int64), i64),
            dense_constant(b, np.zeros((), dtype=np.int64), i64)]


# ---------------------------------------------------------------------------------------------
# nonzero
# ---------------------------------------------------------------------------------------------


def _running_sum(op: NonZeroOp, builder: Builder, flags: SSAValue
                 ) -> tuple[SSAValue, SSAValue]:
    """(total, inclusive prefix sums) of a 1-d i64 tensor: a scan carrying the running sum."""

    def step(b: Builder, states: list[SSAValue], slices: list[SSAValue]) -> list[SSAValue]:
        def body(bb: Builder, _i: list[SSAValue], _r: list[SSAValue]) -> SSAValue:
            return bb.insert(arith.AddiOp(read(bb, states[0], []), read(bb, slices[0], []))).result

        total = emit_compute(b, op, "nonzero_running", TensorType(i64, []), body, tag=TAG)
        return [total, total]

    zero = dense_constant(builder, np.zeros((), dtype=np.int64), i64)
    scan = ScanOp.build("nonzero", [zero], [flags], step)
    scan.location = op.location
    for arg, hint in zip(scan.body.block.args, ["running", "flag"], strict=True):
        arg.name_hint = hint
    builder.insert(scan)
    scan.outs[0].name_hint, scan.outs[1].name_hint = "nonzero_count", "nonzero_prefix"
    return scan.outs[0], scan.outs[1]


@compute_definition(NonZeroOp)
def nonzero(op: NonZeroOp, builder: Builder) -> Sequence[SSAValue]:
    """indices[d, j] = coordinate d of the j-th nonzero element (row-major), 0 past the count."""
    shape = shape_of(op.x)
    element = tensor_type(op.x).get_element_type()
    check_element_type(op, element)
    numel = int(np.prod(shape, dtype=np.int64))
    if numel == 0:
        return _padded_constant(builder, shape_of(op.indices))
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]

    def is_nonzero(b: Builder, flat: SSAValue) -> SSAValue:
        at = [remainder_index(b, divide_index(b, flat, stride), dim)
              for stride, dim in zip(strides, shape, strict=True)]
        x = read(b, op.x, at)
        zero = constant(b, 0, element)
        return _cmpf(b, x, zero, "une") if is_float(element) else _cmpi(b, x, zero, "ne")

    def flag_body(b: Builder, i: list[SSAValue], _r: list[SSAValue]) -> SSAValue:
        return _flag(b, is_nonzero(b, i[0]))

    flags = emit_compute(builder, op, "nonzero_flag", TensorType(i64, [numel]), flag_body,
                         tag=TAG)
    count, prefix = _running_sum(op, builder, flags)
    search_steps = numel.bit_length()  # a lower bound over numel + 1 outcomes

    def position_body(b: Builder, i: list[SSAValue], _r: list[SSAValue]) -> SSAValue:
        """The first flat position whose prefix exceeds j (binary search, unrolled)."""
        j = _i64(b, i[0])
        low, high = constant(b, 0, i64), constant(b, numel, i64)
        one = constant(b, 1, i64)
        for _ in range(search_steps):
            open_range = _cmpi(b, low, high, "slt")
            middle = b.insert(arith.ShRUIOp(b.insert(arith.AddiOp(low, high)).result,
                                            one)).result
            at_or_below = _cmpi(b, read(b, prefix, [_as_index(b, middle, numel)]), j, "sle")
            right = _and(b, open_range, at_or_below)
            left = _and(b, open_range, b.insert(arith.XOrIOp(
                at_or_below, b.insert(arith.ConstantOp(IntegerAttr(1, i1))).result)).result)
            after = b.insert(arith.AddiOp(middle, one)).result
            low = b.insert(arith.SelectOp(right, after, low)).result
            high = b.insert(arith.SelectOp(left, middle, high)).result
        return low

    position = emit_compute(builder, op, "nonzero_position", TensorType(i64, [numel]),
                            position_body, tag=TAG)

    def indices_body(b: Builder, i: list[SSAValue], _r: list[SSAValue]) -> SSAValue:
        d, j = i
        flat = read(b, position, [j])
        coordinate = constant(b, 0, i64)
        for axis, (stride, dim) in enumerate(zip(strides, shape, strict=True)):
            value = b.insert(arith.RemSIOp(
                b.insert(arith.DivSIOp(flat, constant(b, stride, i64))).result,
                constant(b, dim, i64))).result
            here = _cmpi(b, d, index(b, axis), "eq")
            coordinate = b.insert(arith.SelectOp(here, value, coordinate)).result
        valid = _cmpi(b, _i64(b, j), read(b, count, []), "slt")
        return b.insert(arith.SelectOp(valid, coordinate, constant(b, 0, i64))).result

    indices = emit_compute(builder, op, "nonzero_indices", tensor_type(op.indices), indices_body,
                           tag=TAG)
    return [indices, count]


# ---------------------------------------------------------------------------------------------
# non_max_suppression
# ---------------------------------------------------------------------------------------------


def _scalar(b: Builder, value: SSAValue) -> SSAValue:
    """The element of a 0-d or one-element tensor."""
    return read(b, value, [index(b, 0)] * len(shape_of(value)))


def _corners(b: Builder, box: list[SSAValue], center: bool
             ) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
    """(y_min, x_min, y_max, x_max) as ONNX's reference computes them."""
    if center:
        two = constant(b, 2, box[0].type)
        half_w = b.insert(arith.DivfOp(box[2], two)).result
        half_h = b.insert(arith.DivfOp(box[3], two)).result
        return (b.insert(arith.SubfOp(box[1], half_h)).result,
                b.insert(arith.SubfOp(box[0], half_w)).result,
                b.insert(arith.AddfOp(box[1], half_h)).result,
                b.insert(arith.AddfOp(box[0], half_w)).result)

    def low_high(p: SSAValue, q: SSAValue) -> tuple[SSAValue, SSAValue]:
        q_first = _cmpf(b, p, q, "oge")  # max_min: lhs >= rhs gives (rhs, lhs)
        return (b.insert(arith.SelectOp(q_first, q, p)).result,
                b.insert(arith.SelectOp(q_first, p, q)).result)

    y0, y1 = low_high(box[0], box[2])
    x0, x1 = low_high(box[1], box[3])
    return y0, x0, y1, x1


def _suppresses(b: Builder, first: list[SSAValue], second: list[SSAValue], center: bool,
                threshold: SSAValue) -> SSAValue:
    """Whether two boxes overlap with an IoU above `threshold` (ONNX's `suppress_by_iou`)."""
    ay0, ax0, ay1, ax1 = _corners(b, first, center)
    by0, bx0, by1, bx1 = _corners(b, second, center)

    def sub(p: SSAValue, q: SSAValue) -> SSAValue:
        return b.insert(arith.SubfOp(p, q)).result

    def mul(p: SSAValue, q: SSAValue) -> SSAValue:
        return b.insert(arith.MulfOp(p, q)).result

    def low(p: SSAValue, q: SSAValue) -> SSAValue:
        return b.insert(arith.SelectOp(_cmpf(b, p, q, "olt"), p, q)).result

    def high(p: SSAValue, q: SSAValue) -> SSAValue:
        return b.insert(arith.SelectOp(_cmpf(b, p, q, "ogt"), p, q)).result

    zero = constant(b, 0, ax0.type)
    inter_x_low, inter_x_high = high(ax0, bx0), low(ax1, bx1)
    inter_y_low, inter_y_high = high(ay0, by0), low(ay1, by1)
    inter = mul(sub(inter_x_high, inter_x_low), sub(inter_y_high, inter_y_low))
    area_a = mul(sub(ax1, ax0), sub(ay1, ay0))
    area_b = mul(sub(bx1, bx0), sub(by1, by0))
    union = sub(b.insert(arith.AddfOp(area_a, area_b)).result, inter)
    iou = b.insert(arith.DivfOp(inter, union)).result
    return _and(b, _cmpf(b, inter_x_high, inter_x_low, "ogt"),
                _cmpf(b, inter_y_high, inter_y_low, "ogt"), _cmpf(b, inter, zero, "ogt"),
                _cmpf(b, area_a, zero, "ogt"), _cmpf(b, area_b, zero, "ogt"),
                _cmpf(b, union, zero, "ogt"), _cmpf(b, iou, threshold, "ogt"))


def _nms_candidates(op: NonMaxSuppressionOp, builder: Builder) -> SSAValue:
    """candidates[t, b, c] = the box of rank t in (b, c), by descending score, ties by index."""
    batches, num_boxes, _ = shape_of(op.boxes)
    classes = shape_of(op.scores)[1]
    count_init = IntegerAttr(0, i64)
    scores = op.scores

    def rank_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        """Whether box r comes before box i[2]: NaN scores last (tied with each other), so
        that the ranks are a permutation of the boxes (the interpreter's stable argsort)."""
        mine, other = read(b, scores, i), read(b, scores, [i[0], i[1], r[0]])
        mine_nan, other_nan = _cmpf(b, mine, mine, "uno"), _cmpf(b, other, other, "uno")
        over_nan = _and(b, mine_nan, _cmpf(b, other, other, "ord"))
        ahead = b.insert(arith.OrIOp(_cmpf(b, other, mine, "ogt"), over_nan)).result
        same = b.insert(arith.OrIOp(_cmpf(b, other, mine, "oeq"),
                                    _and(b, mine_nan, other_nan))).result
        tied = _and(b, same, _cmpi(b, r[0], i[2], "ult"))
        return _flag(b, b.insert(arith.OrIOp(ahead, tied)).result)

    rank = emit_compute(builder, op, "nms_rank", TensorType(i64, [batches, classes, num_boxes]),
                        rank_body, tag=TAG, reduce_extents=[num_boxes], combiner="sum",
                        init=count_init)

    def candidates_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        t, n, c = i
        hit = _cmpi(b, read(b, rank, [n, c, r[0]]), _i64(b, t), "eq")
        return b.insert(arith.SelectOp(hit, _i64(b, r[0]), constant(b, 0, i64))).result

    return emit_compute(builder, op, "nms_candidates",
                        TensorType(i64, [num_boxes, batches, classes]), candidates_body,
                        tag=TAG, reduce_extents=[num_boxes], combiner="sum", init=count_init)


@compute_definition(NonMaxSuppressionOp)
def non_max_suppression(op: NonMaxSuppressionOp, builder: Builder) -> Sequence[SSAValue]:
    """selected[row] = [b, c, box] of the row-th selection, (b, c)-major; 0 past the count."""
    batches, num_boxes, _ = shape_of(op.boxes)
    classes = shape_of(op.scores)[1]
    bound = op.bound_value()
    element = tensor_type(op.boxes).get_element_type()
    check_element_type(op, element)
    if bound == 0 or batches * classes == 0:
        return _padded_constant(builder, shape_of(op.selected))
    center = op.center_point_box_value()
    count_init = IntegerAttr(0, i64)
    scores = op.scores
    candidates = _nms_candidates(op, builder)
    selected_type = TensorType(i64, [batches, classes, bound])
    counts_type = TensorType(i64, [batches, classes])
    no_selection = dense_constant(builder, np.zeros((batches, classes, bound), np.int64), i64)
    no_counts = dense_constant(builder, np.zeros((batches, classes), np.int64), i64)

    def box(b: Builder, n: SSAValue, which: SSAValue) -> list[SSAValue]:
        position = _as_index(b, which, num_boxes)
        return [read(b, op.boxes, [n, position, index(b, k)]) for k in range(4)]

    def step(b: Builder, states: list[SSAValue], slices: list[SSAValue]) -> list[SSAValue]:
        chosen, counts = states
        (candidate,) = slices

        def suppressed_body(bb: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
            n, c = i
            taken = _cmpi(bb, _i64(bb, r[0]), read(bb, counts, [n, c]), "slt")
            other = read(bb, chosen, [n, c, r[0]])
            overlap = _suppresses(bb, box(bb, n, read(bb, candidate, [n, c])),
                                  box(bb, n, other), center, _scalar(bb, op.iou_threshold))
            return _flag(bb, _and(bb, taken, overlap))

        suppressed = emit_compute(b, op, "nms_suppressed", counts_type, suppressed_body,
                                  tag=TAG, reduce_extents=[bound], combiner="sum",
                                  init=count_init)

        def accept_body(bb: Builder, i: list[SSAValue], _r: list[SSAValue]) -> SSAValue:
            n, c = i
            count = read(bb, counts, [n, c])
            free = _cmpi(bb, read(bb, suppressed, [n, c]), constant(bb, 0, i64), "eq")
            below = _and(bb, _cmpi(bb, count, _scalar(bb, op.max_output_boxes_per_class), "slt"),
                         _cmpi(bb, count, constant(bb, bound, i64), "slt"))
            accept = _and(bb, free, below)
            if op.score_threshold is not None:
                which = _as_index(bb, read(bb, candidate, [n, c]), num_boxes)
                score = read(bb, scores, [n, c, which])
                accept = _and(bb, accept, _cmpf(bb, score, _scalar(bb, op.score_threshold),
                                                "ogt"))
            return _flag(bb, accept)

        accepted = emit_compute(b, op, "nms_accept", counts_type, accept_body, tag=TAG)

        def counts_body(bb: Builder, i: list[SSAValue], _r: list[SSAValue]) -> SSAValue:
            return bb.insert(arith.AddiOp(read(bb, counts, i), read(bb, accepted, i))).result

        def chosen_body(bb: Builder, i: list[SSAValue], _r: list[SSAValue]) -> SSAValue:
            n, c, m = i
            here = _and(bb, _cmpi(bb, _i64(bb, m), read(bb, counts, [n, c]), "eq"),
                        _cmpi(bb, read(bb, accepted, [n, c]), constant(bb, 1, i64), "eq"))
            return bb.insert(arith.SelectOp(here, read(bb, candidate, [n, c]),
                                            read(bb, chosen, i))).result

        return [emit_compute(b, op, "nms_chosen", selected_type, chosen_body, tag=TAG),
                emit_compute(b, op, "nms_counts", counts_type, counts_body, tag=TAG)]

    scan = ScanOp.build("nms", [no_selection, no_counts], [candidates], step)
    scan.location = op.location
    for arg, hint in zip(scan.body.block.args, ["chosen", "counts", "candidate"], strict=True):
        arg.name_hint = hint
    no_selection.name_hint, no_counts.name_hint = "none_chosen", "no_counts"
    builder.insert(scan)
    chosen, counts = scan.outs[0], scan.outs[1]
    chosen.name_hint, counts.name_hint = "nms_chosen", "nms_counts"
    groups = batches * classes

    def group_count(b: Builder, q: SSAValue) -> SSAValue:
        return read(b, counts, [divide_index(b, q, classes), remainder_index(b, q, classes)])

    def offset_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        n, c = i
        mine = b.insert(arith.AddiOp(b.insert(arith.MuliOp(n, index(b, classes))).result,
                                     c)).result
        before = _cmpi(b, r[0], mine, "ult")
        return b.insert(arith.SelectOp(before, group_count(b, r[0]),
                                       constant(b, 0, i64))).result

    offsets = emit_compute(builder, op, "nms_offset", counts_type, offset_body, tag=TAG,
                           reduce_extents=[groups], combiner="sum", init=count_init)

    def total_body(b: Builder, _i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        return group_count(b, r[0])

    total = emit_compute(builder, op, "nms_count", TensorType(i64, []), total_body, tag=TAG,
                         reduce_extents=[groups], combiner="sum", init=count_init)

    def selected_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        row, column = i
        n, c = divide_index(b, r[0], classes), remainder_index(b, r[0], classes)
        within = b.insert(arith.SubiOp(_i64(b, row), read(b, offsets, [n, c]))).result
        hit = _and(b, _cmpi(b, within, constant(b, 0, i64), "sge"),
                   _cmpi(b, within, read(b, counts, [n, c]), "slt"))
        chosen_box = read(b, chosen, [n, c, _as_index(b, within, bound)])
        value = b.insert(arith.SelectOp(_cmpi(b, column, index(b, 0), "eq"), _i64(b, n),
                                        b.insert(arith.SelectOp(
                                            _cmpi(b, column, index(b, 1), "eq"), _i64(b, c),
                                            chosen_box)).result)).result
        return b.insert(arith.SelectOp(hit, value, constant(b, 0, i64))).result

    selected = emit_compute(builder, op, "nms_selected", tensor_type(op.selected), selected_body,
                            tag=TAG, reduce_extents=[groups], combiner="sum", init=count_init)
    return [selected, total]

