"""The shape of a dynamic batch at import time: `Shape` of a batched value, moved into a
`Reshape` target.

Exporters write `x.view(x.size(0), ...)` as `Shape -> Gather -> Unsqueeze -> Concat -> Reshape`.
With a dynamic batch (`import_onnx(dynamic_batch=True)`) the importer folds such a chain as it
folds static shapes, with one symbolic element: `BATCH`, the batch's size, known only at run
time. The shape arrays are NumPy object arrays whose elements are ints or `BATCH`; only ops that
move elements (Gather, Slice, Concat, Squeeze, Unsqueeze, Identity, integer Cast) fold them
(`fold_symbolic`), a result without `BATCH` becoming an ordinary int64 constant (`Shape ->
Gather(1)`: a static dim), and a `Reshape` whose target starts with `BATCH` keeps the batch
(`reshape_target`: the converter's leading -1). Any other use of `BATCH` (arithmetic on it,
`Expand` or `ConstantOfShape` to it, a `Reshape` that moves it) is not per row: the importer
raises `DynamicInputError`, and the driver falls back to shapes per call (TVM Relax's symbolic
shapes do this arithmetic; dlc does not).
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

MOVING_OPS = frozenset({"Gather", "Slice", "Concat", "Squeeze", "Unsqueeze", "Identity", "Cast"})
"""The ONNX ops `fold_symbolic` folds on shape arrays holding `BATCH`."""


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
    return None


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
