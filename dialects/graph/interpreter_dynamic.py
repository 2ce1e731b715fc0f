"""NumPy implementations of `graph.nonzero` and `graph.non_max_suppression`, for the graph
interpreter: the results padded to their static bound, then the count (`ops_dynamic.py`).

Importing this module registers them; `dialects.graph` imports it. NonMaxSuppression follows
ONNX's reference evaluator step for step (its IoU test, its order of candidates).
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.interpreter import implements
from dlc.dialects.graph.ops_dynamic import NonMaxSuppressionOp, NonZeroOp


@implements(NonZeroOp)
def _nonzero(op: NonZeroOp, args: list[np.ndarray]) -> list[np.ndarray]:
    (x,) = args
    found = np.stack(np.nonzero(np.atleast_1d(x))).astype(np.int64)
    padded = np.zeros(op.indices.type.get_shape(), dtype=np.int64)
    padded[:, : found.shape[1]] = found
    return [padded, np.array(found.shape[1], dtype=np.int64)]


def _corners(box: np.ndarray, center_point_box: bool) -> tuple[float, float, float, float]:
    """(y_min, x_min, y_max, x_max) of one box, as ONNX's reference computes them."""
    if center_point_box:
        x, y, w, h = box
        return y - h / 2, x - w / 2, y + h / 2, x + w / 2
    y1, x1, y2, x2 = box
    return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)


def suppresses(a: np.ndarray, b: np.ndarray, center_point_box: bool, threshold: float) -> bool:
    """Whether boxes a and b overlap with an IoU above `threshold` (ONNX's `suppress_by_iou`)."""
    ay0, ax0, ay1, ax1 = _corners(a, center_point_box)
    by0, bx0, by1, bx1 = _corners(b, center_point_box)
    inter_x = min(ax1, bx1) - max(ax0, bx0)
    inter_y = min(ay1, by1) - max(ay0, by0)
    if inter_x <= 0 or inter_y <= 0:
        return False
    inter = inter_x * inter_y
    area_a, area_b = (ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0)
    union = area_a + area_b - inter
    if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return bool(inter / union > threshold)


@implements(NonMaxSuppressionOp)
def _non_max_suppression(op: NonMaxSuppressionOp, args: list[np.ndarray]) -> list[np.ndarray]:
    boxes, scores = args[0], args[1]
    limit = min(max(int(args[2].reshape(-1)[0]), 0), op.bound_value())
    iou = args[3].reshape(-1)[0]
    threshold = args[4].reshape(-1)[0] if len(args) > 4 else None
    center = op.center_point_box_value()
    rows: list[tuple[int, int, int]] = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            class_scores = scores[b, c]
            order = np.argsort(-class_scores, kind="stable")  # descending, ties by index
            kept: list[int] = []
            for box in order:
                if len(kept) >= limit:
                    break
                if threshold is not None and not class_scores[box] > threshold:
                    continue
                if not any(suppresses(boxes[b, box], boxes[b, k], center, iou) for k in kept):
                    kept.append(int(box))
            rows.extend((b, c, k) for k in kept)
    padded = np.zeros(op.selected.type.get_shape(), dtype=np.int64)
    if rows:
        padded[: len(rows)] = rows
    return [padded, np.array(len(rows), dtype=np.int64)]
