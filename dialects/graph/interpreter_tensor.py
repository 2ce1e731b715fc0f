"""NumPy implementations of the ops of `ops_tensor.py`, registered with the graph interpreter.

Importing this module registers them; `dialects.graph` imports it, so that every user of the
interpreter has them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.interpreter import InterpreterError, implements
from dlc.dialects.graph.ops_tensor import (
    ArangeOp,
    ArgMaxOp,
    BroadcastToOp,
    CastOp,
    CompareOp,
    ConvTranspose2DOp,
    GatherOp,
    PadOp,
    ResizeOp,
    SliceOp,
    TopKOp,
    WhereOp,
)
from dlc.dialects.graph.utils import shape_of


def _result_dtype(op: CastOp) -> np.dtype:
    return to_numpy_dtype(op.result.type.get_element_type())


@implements(CastOp)
def _cast(op: CastOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    dtype = _result_dtype(op)
    if np.issubdtype(dtype, np.integer) and np.issubdtype(x.dtype, np.floating):
        x = np.trunc(x)  # toward zero; NaN and out-of-range values are undefined
    return x.astype(dtype)


_PREDICATES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}


@implements(CompareOp)
def _compare(op: CompareOp, args: list[np.ndarray]) -> np.ndarray:
    lhs, rhs = args
    return np.asarray(_PREDICATES[op.predicate_value()](lhs, rhs), dtype=np.bool_)


@implements(WhereOp)
def _where(op: WhereOp, args: list[np.ndarray]) -> np.ndarray:
    condition, lhs, rhs = args
    return np.asarray(np.where(condition, lhs, rhs), dtype=lhs.dtype)


@implements(GatherOp)
def _gather(op: GatherOp, args: list[np.ndarray]) -> np.ndarray:
    x, indices = args
    axis = op.normalized_axis()
    dim = x.shape[axis]
    if indices.size and (indices.min() < -dim or indices.max() >= dim):
        raise InterpreterError(f"graph interpreter: 'graph.gather' index out of range "
                               f"[{-dim}, {dim}): {indices.min()} .. {indices.max()}")
    wrapped = np.where(indices < 0, indices + dim, indices).astype(np.int64)
    return np.take(x, wrapped, axis=axis)


@implements(ArangeOp)
def _arange(op: ArangeOp, args: list[np.ndarray]) -> np.ndarray:
    (like,) = args
    dtype = to_numpy_dtype(op.result.type.get_element_type())
    return np.arange(like.shape[op.normalized_axis()], dtype=dtype)


@implements(SliceOp)
def _slice(op: SliceOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    index = []
    for start, size, step in zip(op.starts_tuple(), op.sizes_tuple(), op.steps_tuple(),
                                 strict=True):
        if size < 0:  # the dynamic batch, taken whole
            index.append(slice(None))
            continue
        if size == 0:
            index.append(slice(0, 0))
            continue
        stop = start + size * step
        index.append(slice(start, None if stop < 0 else stop, step))
    return np.ascontiguousarray(x[tuple(index)])


@implements(PadOp)
def _pad(op: PadOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    pads = op.pads_tuple()
    rank = x.ndim
    widths = [(pads[a], pads[a + rank]) for a in range(rank)]
    mode = op.mode_value()
    if mode == "constant":
        value = np.array(op.pad_value()).astype(x.dtype)
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=mode)


@implements(BroadcastToOp)
def _broadcast_to(op: BroadcastToOp, args: list[np.ndarray]) -> np.ndarray:
    shape = op.shape_tuple()
    if shape and shape[0] < 0 and all(size >= 0 for size in shape[1:]):
        shape = (args[-1].shape[0], *shape[1:])  # the dynamic batch: the batch operand's rows
    if any(size < 0 for size in shape):  # runtime sizes: the sizing operand's, else x's
        like, x = args[1].shape, args[0].shape
        declared = shape_of(op.batch)  # type: ignore[arg-type]
        at, x_at = len(shape) - len(like), len(shape) - len(x)
        shape = tuple(size if size >= 0 else like[d - at]
                      if d >= at and declared[d - at] < 0 else x[d - x_at]
                      for d, size in enumerate(shape))
    return np.broadcast_to(args[0], shape)


# ---------------------------------------------------------------------------------------------
# resize: one interpolation matrix per axis
# ---------------------------------------------------------------------------------------------


def _source_coordinates(op: ResizeOp, axis: int, size: int, length: int, scale: float
                        ) -> np.ndarray:
    """The input coordinate of each of the `size` output positions of `axis` (of `length`).

    As in ONNX, the modes that need an output width use the real-valued `scale * length`.
    """
    mode = op.coordinate_mode_value()
    out = np.arange(size, dtype=np.float64)
    width = scale * length
    if mode == "align_corners":
        return np.zeros(size) if width == 1 else out * (length - 1) / (width - 1)
    if mode == "asymmetric":
        return out / scale
    if mode == "tf_half_pixel_for_nn":
        return (out + 0.5) / scale
    if mode == "pytorch_half_pixel":
        return np.full(size, -0.5) if width == 1 else (out + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = length / 2 * (1 - size / width)
        return offset + (out + 0.5) / scale - 0.5
    if mode == "tf_crop_and_resize":
        roi = op.roi_tuple()
        start, end = roi[axis], roi[axis + len(roi) // 2]
        if width == 1:
            return np.full(size, (end - start) * (length - 1) / 2 + start * (length - 1))
        return out * (end - start) * (length - 1) / (width - 1) + start * (length - 1)
    return (out + 0.5) / scale - 0.5  # half_pixel


def _nearest_weights(ratio: np.ndarray, rounding: str) -> np.ndarray:
    """Weights of the two taps floor(x) and floor(x) + 1 for mode nearest."""
    if rounding == "floor":
        upper = np.zeros_like(ratio, dtype=bool)
    elif rounding == "ceil":
        upper = np.ones_like(ratio, dtype=bool)
    elif rounding == "round_prefer_ceil":
        upper = ratio >= 0.5
    else:
        upper = ratio > 0.5
    upper = upper | (ratio == 1.0)  # an integer coordinate is the upper tap
    return np.stack([~upper, upper], axis=-1).astype(np.float64)


def _cubic_kernel(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def _kernel_weights(op: ResizeOp, ratio: np.ndarray, scale: float) -> tuple[int, np.ndarray]:
    """(offset of the first tap from floor(x), weights of the taps) for linear and cubic.

    The kernel is evaluated at `(tap - x) * s`, with `s` = 1, or min(scale, 1) under
    antialias (a kernel 1 / scale wide when downsampling, normalized to sum 1).
    """
    s = min(scale, 1.0) if op.antialias_value() else 1.0
    reach = 1 if op.mode_value() == "linear" else 2
    first = int(np.floor(-reach / s)) + 1
    t = (first + np.arange(2 - 2 * first)[None, :] - ratio[:, None]) * s
    if op.mode_value() == "linear":
        weights = np.clip(1 - np.abs(t), 0, 1)
    else:
        weights = _cubic_kernel(t, op.cubic_coeff_a_value())
    if op.antialias_value():
        weights = weights / weights.sum(axis=1, keepdims=True)
    return first, weights


def _interpolation_matrix(op: ResizeOp, axis: int, size: int, length: int, scale: float
                          ) -> np.ndarray:
    """The size x length matrix that resizes one axis (extrapolated rows are zero)."""
    x = _source_coordinates(op, axis, size, length, scale)
    base = np.floor(x)
    ratio = x - base
    # ONNX prefers the left neighbour: an integer coordinate is the upper tap of a ratio of 1.
    integral = ratio == 0
    base[integral] -= 1
    ratio[integral] = 1.0
    if op.mode_value() == "nearest":
        first, weights = 0, _nearest_weights(ratio, op.nearest_mode_value())
    else:
        first, weights = _kernel_weights(op, ratio, scale)
    taps = base[:, None].astype(np.int64) + first + np.arange(weights.shape[1])
    if op.exclude_outside_value():
        weights = np.where((taps >= 0) & (taps < length), weights, 0.0)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    matrix = np.zeros((size, length))
    rows = np.repeat(np.arange(size), weights.shape[1])
    np.add.at(matrix, (rows, np.clip(taps, 0, length - 1).reshape(-1)), weights.reshape(-1))
    return matrix


def _extrapolated(op: ResizeOp, axis: int, size: int, length: int, scale: float
                  ) -> np.ndarray | None:
    """Which outputs of `axis` fall outside the input under tf_crop_and_resize, else None."""
    if op.coordinate_mode_value() != "tf_crop_and_resize":
        return None
    x = _source_coordinates(op, axis, size, length, scale)
    return (x < 0) | (x > length - 1)


@implements(ResizeOp)
def _resize(op: ResizeOp, args: list[np.ndarray]) -> np.ndarray:
    x = args[0]
    sized = op.sized_axes()
    scales = list(op.scales_tuple())
    sizes = [d if d >= 0 else  # a runtime dim: floor(n * scale), a dynamic batch each row
             math.floor(x.shape[axis] * scales[axis] + 1e-9)
             for axis, d in enumerate(op.result.type.get_shape())]
    for axis in sized:  # the sizing operand's size, at scale out / n
        sizes[axis] = args[1].shape[axis]
        scales[axis] = sizes[axis] / x.shape[axis]
    nearest = op.mode_value() == "nearest"
    result = x if nearest else x.astype(np.float64)
    roi = op.roi_tuple()
    for axis, (size, scale) in enumerate(zip(sizes, scales, strict=True)):
        length = x.shape[axis]
        whole = not roi or (roi[axis] == 0.0 and roi[axis + len(roi) // 2] == 1.0)
        if size == length and math.isclose(scale, 1.0) and whole:
            continue  # the identity, whatever the modes say
        matrix = _interpolation_matrix(op, axis, size, length, scale)
        if nearest:  # exact for every dtype: a gather
            result = np.take(result, matrix.argmax(axis=1), axis=axis)
        else:
            result = np.moveaxis(np.tensordot(matrix, result, axes=([1], [axis])), 0, axis)
        outside = _extrapolated(op, axis, size, length, scale)
        if outside is not None:
            mask = outside.reshape([-1 if a == axis else 1 for a in range(x.ndim)])
            result = np.where(mask, op.extrapolation_value_value(), result)
    return np.asarray(result).astype(x.dtype)


# ---------------------------------------------------------------------------------------------
# argmax, topk
# ---------------------------------------------------------------------------------------------


@implements(ArgMaxOp)
def _argmax(op: ArgMaxOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    axis = op.normalized_axis()
    if op.select_last_index_value():
        index = x.shape[axis] - 1 - np.argmax(np.flip(x, axis=axis), axis=axis)
    else:
        index = np.argmax(x, axis=axis)
    if op.keepdims_value():
        index = np.expand_dims(index, axis)
    return index.astype(np.int64)


def _descending_key(x: np.ndarray) -> np.ndarray:
    """A key whose ascending order is x's descending order."""
    if np.issubdtype(x.dtype, np.unsignedinteger) or x.dtype == np.bool_:
        return -x.astype(np.float64) if x.dtype.itemsize >= 8 else -x.astype(np.int64)
    return -x


@implements(TopKOp)
def _topk(op: TopKOp, args: list[np.ndarray]) -> list[np.ndarray]:
    (x,) = args
    axis = op.normalized_axis()
    if not op.largest_value():
        order = np.argsort(x, axis=axis, kind="stable")  # NaN last, as above every number
    elif np.issubdtype(x.dtype, np.floating):
        # Descending with NaN first (above every number); lexsort is stable, its last key first.
        order = np.lexsort((_descending_key(x), ~np.isnan(x)), axis=axis)
    else:
        order = np.argsort(_descending_key(x), axis=axis, kind="stable")
    indices = np.take(order, np.arange(op.k_value()), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)]


# ---------------------------------------------------------------------------------------------
# conv_transpose2d
# ---------------------------------------------------------------------------------------------


@implements(ConvTranspose2DOp)
def _conv_transpose2d(op: ConvTranspose2DOp, args: list[np.ndarray]) -> np.ndarray:
    x, w = args[0], args[1]
    groups = op.groups_value()
    (sh, sw), (dh, dw) = op.strides_tuple(), op.dilation_tuple()
    top, left, bottom, right = op.padding_tuple()
    extra_h, extra_w = op.output_padding_tuple()
    n, c, h, width = x.shape
    _, o_per_group, kh, kw = w.shape
    full_h = sh * (h - 1) + dh * (kh - 1) + 1 + extra_h
    full_w = sw * (width - 1) + dw * (kw - 1) + 1 + extra_w
    xg = x.reshape(n, groups, c // groups, h, width)
    wg = w.reshape(groups, c // groups, o_per_group, kh, kw)
    full = np.zeros((n, groups, o_per_group, full_h, full_w), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            contribution = np.einsum("ngchw,gco->ngohw", xg, wg[..., i, j], optimize=True)
            full[:, :, :, i * dh: i * dh + sh * (h - 1) + 1: sh,
                 j * dw: j * dw + sw * (width - 1) + 1: sw] += contribution
    full = full.reshape(n, groups * o_per_group, full_h, full_w)
    y = full[:, :, top: full_h - bottom, left: full_w - right]
    if len(args) == 3:
        y = y + args[2].reshape(1, -1, 1, 1)
    return np.ascontiguousarray(y).astype(x.dtype)
