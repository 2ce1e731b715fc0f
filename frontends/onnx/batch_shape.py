"""The shape of a dynamic batch at import time: `Shape` of a batched value, moved into a
`Reshape` target.

Exporters write `x.view(x.size(0), ...)` as `Shape -> Gather -> Unsqueeze -> Concat -> Reshape`.
With a dynamic batch (`import_onnx(dynamic_batch=True)`) the importer folds such a chain as it
folds static shapes, with one symbolic element: `BATCH`, the batch's size, known only at run
time. The shape arrays are NumPy object arrays whose elements are ints or `BATCH`; only ops that
move elements (Gather, Slice, Concat, Squeeze, Unsqueeze, Identity, integer Cast, Reshape and
Where of such arrays), the Shape of one, and comparisons whose answer is known (`BATCH` is never
-1) fold them (`fold_symbolic`), a result without `BATCH` becoming an ordinary int64 constant
(`Shape -> Gather(1)`: a static dim). A `Reshape`, `Expand` or `ConstantOfShape` whose shape
starts with `BATCH` keeps the batch (`reshape_target`: the converters' leading -1: a view, a
broadcast to the batch). Any other use of `BATCH` (arithmetic on it, a shape that moves it off
the leading axis) is not per row: the importer raises `DynamicInputError`, and the driver falls
back to shapes per call (TVM Relax's symbolic shapes do this arithmetic; dlc does not).
"""

from __future__ import annotations

import numpy as np


class _Batch:
    """The dynamic batch's size as an element of a shape array. It has no arithmetic: NumPy
    raises TypeError on `BATCH * 2`, which the importer turns into a fallback."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "BATCH"


BATCH = _Batch()
"""The one symbolic element."""

MOVING_OPS = frozenset({"Gather", "Slice", "Concat", "Squeeze", "Unsqueeze", "Identity", "Cast",
                        "Reshape", "Shape", "Equal", "Where"})
"""The ONNX ops `fold_symbolic` folds on shape arrays holding `BATCH`: those that move elements,
the shape of such an array, and the two that an exporter's `x.expand(n, -1)` adds (PyTorch's
`Equal(target, -1)` and `Where` that put 1 for each -1; `BATCH`, a size of at least 1, is never
-1)."""


def symbolic_shape(shape: tuple[int, ...], start: int = 0, end: int | None = None
                   ) -> np.ndarray:
    """`Shape` of a value of `shape` whose leading dim (< 0) is the dynamic batch, sliced by
    `start`/`end` (Shape v15): an object array, or an int64 one when the slice leaves the
    batch out."""
    elements: list[object] = [BATCH, *shape[1:]]
    return as_shape_array(elements[slice(start, end)])


def as_shape_array(elements: object) -> np.ndarray:
    """`elements` as an int64 array when none is `BATCH`, else as an object array."""
    array = np.array(elements, dtype=object)
    if not has_batch(array):
        return array.astype(np.int64)
    return array


def has_batch(array: np.ndarray | None) -> bool:
    """Whether `array` is a shape array holding `BATCH`."""
    return array is not None and array.dtype == object and any(
        element is BATCH for element in array.reshape(-1))


def fold_symbolic(op_type: str, arrays: list[np.ndarray | None], attrs: dict[str, object]
                  ) -> np.ndarray | None:
    """The result of `op_type` (one of `MOVING_OPS`) on constant `arrays` (None: an absent
    optional input), one of them holding `BATCH`, with the node's `attrs`; None when the node
    does not just move elements (a float Cast, a Gather of non-constant indices)."""
    if any(a is None for a in arrays[:1]):
        return None
    data = arrays[0]
    assert data is not None
    if op_type == "Identity":
        return data
    if op_type == "Cast":
        to = attrs.get("to")
        return data if to in (6, 7) else None  # INT32, INT64
    if op_type == "Gather":
        if len(arrays) < 2 or arrays[1] is None:
            return None
        axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
        return as_shape_array(np.take(data, arrays[1].astype(np.int64), axis=axis))
    if op_type == "Concat":
        if any(a is None for a in arrays):
            return None
        axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
        return as_shape_array(np.concatenate(
            [a.astype(object) for a in arrays if a is not None], axis=axis))
    if op_type in ("Squeeze", "Unsqueeze"):
        axes = arrays[1] if len(arrays) > 1 and arrays[1] is not None else attrs.get("axes")
        return _squeezed(data, op_type, axes)
    if op_type == "Slice":
        return _sliced(data, arrays[1:])
    if op_type == "Equal":
        return _equal(arrays)
    return _reshaped(op_type, data, arrays, attrs)


def _reshaped(op_type: str, data: np.ndarray, arrays: list[np.ndarray | None],
              attrs: dict[str, object]) -> np.ndarray | None:
    """Shape, Reshape or Where (by a constant condition) of a shape array holding `BATCH`."""
    if op_type == "Shape":
        start, end = int(attrs.get("start", 0)), attrs.get("end")  # type: ignore[call-overload]
        return np.array(data.shape[start:None if end is None else int(end)], np.int64)  # type: ignore[call-overload]
    if op_type == "Reshape":
        if len(arrays) < 2 or arrays[1] is None or has_batch(arrays[1]):
            return None
        return as_shape_array(data.reshape([int(d) for d in arrays[1].reshape(-1)]))
    if op_type == "Where":
        if len(arrays) < 3 or any(a is None for a in arrays) or has_batch(arrays[0]):
            return None
        condition, lhs, rhs = (np.asarray(a) for a in arrays)  # type: ignore[arg-type]
        return as_shape_array(np.where(condition.astype(bool), lhs.astype(object),
                                       rhs.astype(object)))
    return None


def _equal(arrays: list[np.ndarray | None]) -> np.ndarray | None:
    """Equal of two shape arrays, elementwise, when every comparison is known: `BATCH` equals
    itself and is never below 1 (a batch size), so it differs from -1 and 0; against another
    positive size it is unknown (None)."""
    if len(arrays) != 2 or arrays[0] is None or arrays[1] is None:
        return None
    lhs, rhs = np.broadcast_arrays(arrays[0].astype(object), arrays[1].astype(object))

    def equal(a: object, b: object) -> bool | None:
        if a is BATCH and b is BATCH:
            return True
        if a is BATCH or b is BATCH:
            other = b if a is BATCH else a
            return False if int(other) < 1 else None  # type: ignore[call-overload]
        return bool(a == b)

    results = [equal(a, b) for a, b in zip(lhs.reshape(-1), rhs.reshape(-1), strict=True)]
    if any(r is None for r in results):
        return None
    return np.array(results, bool).reshape(lhs.shape)


def _squeezed(data: np.ndarray, op_type: str, axes: object) -> np.ndarray | None:
    """Squeeze or Unsqueeze of a shape array over `axes` (None: Squeeze's every unit axis)."""
    if axes is None:
        return as_shape_array(np.squeeze(data)) if op_type == "Squeeze" else None
    listed = [int(a) for a in np.asarray(axes).reshape(-1)]
    if op_type == "Squeeze":
        return as_shape_array(np.squeeze(data, axis=tuple(listed)))
    rank = data.ndim + len(listed)
    result = data
    for axis in sorted(a % rank for a in listed):
        result = np.expand_dims(result, axis)
    return as_shape_array(result)


def _sliced(data: np.ndarray, bounds: list[np.ndarray | None]) -> np.ndarray | None:
    """Slice (v10+) of a shape array by constant starts, ends, axes and steps."""
    if len(bounds) < 2 or bounds[0] is None or bounds[1] is None:
        return None
    starts, ends = bounds[0].astype(np.int64), bounds[1].astype(np.int64)
    axes = bounds[2] if len(bounds) > 2 and bounds[2] is not None else np.arange(len(starts))
    steps = bounds[3] if len(bounds) > 3 and bounds[3] is not None else np.ones_like(starts)
    index = [slice(None)] * data.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        index[int(axis)] = slice(int(start), int(end), int(step))
    return as_shape_array(data[tuple(index)])


def reshape_target(target: np.ndarray) -> np.ndarray | None:
    """The int64 target of a Reshape whose target is the shape array `target`: `BATCH` first
    becomes -1 (the converter keeps the dynamic leading dim); None when `BATCH` is elsewhere
    or more than once (the batch would mix with other axes)."""
    elements = list(target.reshape(-1))
    if not elements or elements[0] is not BATCH or any(e is BATCH for e in elements[1:]):
        return None
    return np.array([-1, *(int(e) for e in elements[1:])], dtype=np.int64)  # type: ignore[call-overload]
