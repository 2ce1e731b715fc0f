"""Compute definition of `graph.resize` (ONNX Resize: nearest, linear, cubic), axis by axis.

Counterpart: TVM's `topi.image.resize2d`, which computes the source coordinate and the
interpolation weights in the compute body. Here they depend only on static shapes and
attributes, so they are computed once, at compile time, into small tables that the compute
reads: for each resized axis a, `taps_a[t, o]` (i64, the input index of tap t of output o,
already clamped into the axis; `taps_a[o]` for nearest) and `weights_a[t, o]`, the output index
last so that the tables are read contiguously along the output's rows. Nearest is then
an injective gather (or, along an axis upsampled by an integer k whose taps are `o // k`, a
read at `o floordiv k`, which the vectorizer turns into one load and a shuffle); linear and
cubic, being separable, one sum over the taps of one axis per resized axis (tag "resize"; the
axes that shrink the data most first, at equal ratios the innermost first when they grow, last
when they shrink: a 2x upsampling gathers along the rows of the input's height only and then
mixes whole rows, which vectorizes without gathers). With tf_crop_and_resize, the outputs whose
coordinate falls outside the input (a prefix and a suffix of each axis, the coordinate being
monotonic) take `extrapolation_value` through a select on the output index.
"""

from __future__ import annotations

import math

import numpy as np
from dlc.dialects.graph.ops_tensor import ResizeOp
from dlc.rewrites.topi.common import (
    Extent,
    affine,
    binary,
    constant,
    convert_float,
    dense_constant,
    emit_compute,
    extent_affine,
    extents_of,
    index,
    read,
    shape_of,
    tensor_type,
    zero_attr,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, TensorType, f32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import PassFailedException

# ---------------------------------------------------------------------------------------------
# Tables, computed at compile time (ONNX's reference semantics)
# ---------------------------------------------------------------------------------------------


def source_coordinates(op: ResizeOp, axis: int, size: int, length: int) -> np.ndarray:
    """ONNX's coordinate_transformation_mode: the input coordinate of each output of `axis`."""
    mode, scale = op.coordinate_mode_value(), op.scales_tuple()[axis]
    out = np.arange(size, dtype=np.float64)
    width = scale * length  # ONNX uses the real-valued output width
    if mode == "asymmetric":
        return out / scale
    if mode == "align_corners":
        return np.zeros(size) if width == 1 else out * (length - 1) / (width - 1)
    if mode == "tf_half_pixel_for_nn":
        return (out + 0.5) / scale
    if mode == "tf_crop_and_resize":
        roi = op.roi_tuple()
        start, end = roi[axis], roi[axis + len(roi) // 2]
        if width == 1:
            return np.full(size, (end - start) * (length - 1) / 2 + start * (length - 1))
        return out * (end - start) * (length - 1) / (width - 1) + start * (length - 1)
    if mode == "pytorch_half_pixel" and width == 1:
        return np.full(size, -0.5)
    shift = length / 2 * (1 - size / width) if mode == "half_pixel_symmetric" else 0.0
    return shift + (out + 0.5) / scale - 0.5


def _nearest(x: np.ndarray, rounding: str) -> np.ndarray:
    if rounding == "floor":
        return np.floor(x)
    if rounding == "ceil":
        return np.ceil(x)
    if rounding == "round_prefer_ceil":
        return np.floor(x + 0.5)
    return np.ceil(x - 0.5)  # round_prefer_floor


def _kernel(op: ResizeOp, t: np.ndarray) -> np.ndarray:
    """The linear (triangle) or cubic (Keys, coefficient a) kernel at distances `t`."""
    t = np.abs(t)
    if op.mode_value() == "linear":
        return np.clip(1 - t, 0, 1)
    a = op.cubic_coeff_a_value()
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def axis_taps(op: ResizeOp, axis: int, size: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(taps, weights), each size × n: the input elements output o mixes, and how much.

    Linear and cubic evaluate their kernel at `(tap - x) * s` over every tap it reaches, with
    s = 1, or min(scale, 1) under antialias (then each row is normalized to sum 1).
    """
    x = source_coordinates(op, axis, size, length)
    if op.mode_value() == "nearest":
        taps = _nearest(x, op.nearest_mode_value())[:, None].astype(np.int64)
        weights = np.ones(taps.shape)
    else:
        base = np.floor(x)
        s = min(op.scales_tuple()[axis], 1.0) if op.antialias_value() else 1.0
        reach = 1 if op.mode_value() == "linear" else 2
        first = math.floor(-reach / s) + 1
        offsets = first + np.arange(2 - 2 * first)
        weights = _kernel(op, (offsets[None, :] - (x - base)[:, None]) * s)
        if op.antialias_value():
            weights = weights / weights.sum(axis=1, keepdims=True)
        taps = base.astype(np.int64)[:, None] + offsets
    if op.exclude_outside_value():
        weights = np.where((taps >= 0) & (taps < length), weights, 0.0)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(taps, 0, length - 1), weights


def inside_range(op: ResizeOp, axis: int, size: int, length: int) -> tuple[int, int] | None:
    """[first, last] outputs of `axis` whose coordinate lies in the input under
    tf_crop_and_resize (empty when first > last); None when every output does."""
    if op.coordinate_mode_value() != "tf_crop_and_resize":
        return None
    x = source_coordinates(op, axis, size, length)
    inside = np.flatnonzero((x >= 0) & (x <= length - 1))
    if inside.size == size:
        return None
    if inside.size == 0:
        return (1, 0)
    return int(inside[0]), int(inside[-1])


def _is_identity(op: ResizeOp, axis: int, size: int, length: int) -> bool:
    roi = op.roi_tuple()
    whole = not roi or (roi[axis] == 0.0 and roi[axis + len(roi) // 2] == 1.0)
    return size == length and math.isclose(op.scales_tuple()[axis], 1.0) and whole


# ---------------------------------------------------------------------------------------------
# The computes
# ---------------------------------------------------------------------------------------------


def _outside(
    b: Builder, i: list[SSAValue], ranges: dict[int, tuple[int, int]]
) -> SSAValue | None:
    """Whether output `i` lies outside the input along any axis with a partial range."""
    outside: SSAValue | None = None
    for axis, (first, last) in ranges.items():
        offset = affine(b, [(i[axis], 1)], -first)
        count = index(b, max(last - first + 1, 0))
        out = b.insert(arith.CmpiOp(offset, count, "uge")).result
        outside = out if outside is None else b.insert(arith.OrIOp(outside, out)).result
    return outside


def _interpolate(
    builder: Builder, op: ResizeOp, source: SSAValue, axis: int,
    table: tuple[SSAValue, SSAValue | None], taps: int, result_type: TensorType,
) -> SSAValue:
    """`out[o...] = sum over t of source[..., taps[t, o_axis], ...] * weights[t, o_axis]`."""
    taps_table, weight_table = table
    assert weight_table is not None

    def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        indices = list(i)
        raw = read(b, taps_table, [r[0], i[axis]])
        indices[axis] = b.insert(arith.IndexCastOp(raw, IndexType())).result
        weight = read(b, weight_table, [r[0], i[axis]])
        return binary(b, "mul", read(b, source, indices), weight)

    return emit_compute(
        builder, op, "resize", result_type, body, tag="resize", reduce_extents=[taps],
        combiner="sum", init=zero_attr(result_type.get_element_type()),
    )


def _repeat_factor(op: ResizeOp, axis: int, out_shape: tuple[int, ...],
                  in_shape: tuple[int, ...]) -> int | None:
    """The integer `k` when nearest's taps along `axis` are `o // k` (an integer upsampling
    whose rounding picks each input element for `k` consecutive outputs: asymmetric with
    floor, half_pixel with round_prefer_floor, ...), else None. The compute then divides the
    output index instead of reading the table, which the vectorizer turns into one load of
    `lanes / k` elements and a shuffle instead of a gather."""
    size, length = out_shape[axis], in_shape[axis]
    if size % length or size == length:
        return None
    factor = size // length
    taps, _ = axis_taps(op, axis, size, length)
    if not np.array_equal(taps[:, 0], np.arange(size) // factor):
        return None
    return factor


RUNTIME_SAMPLE_LENGTHS = (1, 2, 3, 7, 16, 61)
"""The input lengths on which a runtime axis's nearest taps are checked to be `o // k`."""


def _runtime_repeat_factor(op: ResizeOp, axis: int) -> int | None:
    """The integer `k` when nearest's taps along `axis` are `o // k` for every input length
    (its scale an integer, its taps `o // k` on each of `RUNTIME_SAMPLE_LENGTHS`), else None."""
    scale = op.scales_tuple()[axis]
    factor = round(scale)
    if op.mode_value() != "nearest" or factor < 2 or not math.isclose(scale, factor):
        return None
    for length in RUNTIME_SAMPLE_LENGTHS:
        taps, _ = axis_taps(op, axis, length * factor, length)
        if not np.array_equal(taps[:, 0], np.arange(length * factor) // factor):
            return None
    return factor


def _runtime_axes(op: ResizeOp, builder: Builder) -> tuple[dict[int, int], list[Extent]]:
    """The repeat factor of each runtime axis of `op`'s input that it resizes (every input
    length), and the output's extents (a runtime axis kept as it is, or `n * k`).

    Raises PassFailedException naming `op` for a runtime axis resized otherwise (its taps and
    weights depend on the length, which only a compile per shape knows)."""
    in_dims = extents_of(builder, op.x)
    out_dims: list[Extent] = list(shape_of(op.result))
    repeats: dict[int, int] = {}
    roi = op.roi_tuple()
    for axis, dim in enumerate(in_dims):
        if isinstance(dim, int):
            continue
        whole = not roi or (roi[axis], roi[axis + len(roi) // 2]) == (0.0, 1.0)
        if math.isclose(op.scales_tuple()[axis], 1.0) and whole:
            out_dims[axis] = dim
            continue
        factor = _runtime_repeat_factor(op, axis) if whole else None
        if factor is None:
            raise PassFailedException(
                f"'{op.name}' op expected a nearest resize by an integer scale whose taps are "
                f"o // scale along runtime dim {axis} of {op.x.type}, found mode "
                f"'{op.mode_value()}', scale {op.scales_tuple()[axis]}, coordinate mode "
                f"'{op.coordinate_mode_value()}': compile it for static shapes")
        repeats[axis] = factor
        out_dims[axis] = extent_affine(builder, dim, 0, factor)
    return repeats, out_dims


def _as_f32(b: Builder, size: Extent) -> SSAValue:
    """An index or a size as an f32 value."""
    value = index(b, size) if isinstance(size, int) else size
    as_int = b.insert(arith.IndexCastOp(value, i64)).result
    return b.insert(arith.SIToFPOp(as_int, f32)).result


def _runtime_coordinate(b: Builder, op: ResizeOp, out: SSAValue, length: Extent,
                        size: Extent) -> SSAValue:
    """The input coordinate (f32) of output `out` of an axis resized from `length` to the
    runtime `size` (scale `size / length`: ONNX's output width is `size` itself)."""
    mode = op.coordinate_mode_value()
    o = _as_f32(b, out)
    n, m = _as_f32(b, length), _as_f32(b, size)
    half = constant(b, 0.5, f32)
    if mode == "align_corners":
        one = constant(b, 1.0, f32)
        span = b.insert(arith.DivfOp(b.insert(arith.SubfOp(n, one)).result,
                                     b.insert(arith.SubfOp(m, one)).result)).result
        single = b.insert(arith.CmpfOp(m, one, "oeq")).result
        span = b.insert(arith.SelectOp(single, constant(b, 0.0, f32), span)).result
        return b.insert(arith.MulfOp(o, span)).result
    ratio = b.insert(arith.DivfOp(n, m)).result
    if mode == "asymmetric":
        return b.insert(arith.MulfOp(o, ratio)).result
    centre = b.insert(arith.MulfOp(b.insert(arith.AddfOp(o, half)).result, ratio)).result
    if mode == "tf_half_pixel_for_nn":
        return centre
    coordinate = b.insert(arith.SubfOp(centre, half)).result
    if mode == "pytorch_half_pixel":
        single = b.insert(arith.CmpfOp(m, constant(b, 1.0, f32), "oeq")).result
        coordinate = b.insert(arith.SelectOp(single, constant(b, -0.5, f32), coordinate)).result
    return coordinate  # half_pixel (half_pixel_symmetric shifts by 0 at this scale)


def _tap(b: Builder, position: SSAValue, length: Extent) -> SSAValue:
    """An f32 input position (whole) as an i64 index clamped into [0, length)."""
    whole = b.insert(arith.FPToSIOp(position, i64)).result
    whole = b.insert(arith.MaxSIOp(whole, constant(b, 0, i64))).result
    bound = b.insert(arith.IndexCastOp(
        index(b, length - 1) if isinstance(length, int) else affine(b, [(length, 1)], -1),
        i64)).result
    return b.insert(arith.MinSIOp(whole, bound)).result


RUNTIME_TAPS_TAG = "resize_taps"
"""The tag of a resize's tables over a runtime output axis (each output's taps and weight,
computed once per call, `_axis_tables`): kept materialised (`tensor-expr-inline`'s
`KEEP_TAGS`), so that the interpolation reads them as the static rules' constant tables,
rather than recomputing its coordinate at every element."""

RUNTIME_AXIS_TAG = "resize_axis"
"""The tag of the pass of a resize along one runtime output axis (`_resize_to_runtime_sizes`):
kept materialised, so that the next axis's pass reads its two rows, not four recomputed."""


def _axis_tables(builder: Builder, op: ResizeOp, length: Extent, size: Extent,
                 element_type: Attribute) -> list[SSAValue]:
    """The taps (i64, clamped into the axis) of each output of an axis resized from `length`
    to the runtime `size`: the nearest one (`nearest_mode`), or the two neighbours of its
    coordinate and the upper one's weight (linear), each a compute over `size`."""
    def coordinate(b: Builder, out: SSAValue) -> SSAValue:
        value = _runtime_coordinate(b, op, out, length, size)
        if op.mode_value() != "nearest":
            return value
        rounding = op.nearest_mode_value()
        half = constant(b, 0.5, f32)
        if rounding == "round_prefer_ceil":
            value = b.insert(arith.AddfOp(value, half)).result
        elif rounding == "round_prefer_floor":
            value = b.insert(arith.SubfOp(value, half)).result
        return b.insert((math_dialect.FloorOp if rounding in ("floor", "round_prefer_ceil")
                         else math_dialect.CeilOp)(value)).result

    def low(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        return _tap(b, b.insert(math_dialect.FloorOp(coordinate(b, i[0]))).result, length)

    def high(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        floor = b.insert(math_dialect.FloorOp(coordinate(b, i[0]))).result
        return _tap(b, b.insert(arith.AddfOp(floor, constant(b, 1.0, f32))).result, length)

    def weight(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        value = coordinate(b, i[0])
        floor = b.insert(math_dialect.FloorOp(value)).result
        return convert_float(b, b.insert(arith.SubfOp(value, floor)).result, element_type)

    bodies = [low] if op.mode_value() == "nearest" else [low, high, weight]
    types = [i64, i64, element_type]
    return [emit_compute(builder, op, "resize_taps", TensorType(t, [DYNAMIC_INDEX]), body,
                         tag=RUNTIME_TAPS_TAG, extents=[size])
            for body, t in zip(bodies, types, strict=False)]


def _resize_to_runtime_sizes(op: ResizeOp, builder: Builder) -> SSAValue:
    """A resize to the runtime sizes of `op.like` (`ResizeOp.sized_axes`), one axis at a time:
    each output reads its taps from the axis's tables (`_axis_tables`, computed once per
    call), then its nearest tap, or its two neighbours weighted (linear). The other axes map
    one to one (`graph.resize` verifies it)."""
    element_type = tensor_type(op.result).get_element_type()
    sized = op.sized_axes()
    in_dims, like_dims = extents_of(builder, op.x), extents_of(builder, op.like)
    source, dims = op.x, list(in_dims)
    for position, axis in enumerate(sized):
        length, size = in_dims[axis], like_dims[axis]
        dims[axis] = size
        shape = [s if a != axis else DYNAMIC_INDEX for a, s in enumerate(shape_of(source))]
        tables = _axis_tables(builder, op, length, size, element_type)

        def body(b: Builder, i: list[SSAValue], _: list[SSAValue], source: SSAValue = source,
                 axis: int = axis, tables: list[SSAValue] = tables) -> SSAValue:
            values = []
            for table in tables[:2]:
                indices = list(i)
                tap = read(b, table, [i[axis]])
                indices[axis] = b.insert(arith.IndexCastOp(tap, IndexType())).result
                values.append(read(b, source, indices))
            if len(values) == 1:
                return values[0]
            step = binary(b, "mul", binary(b, "sub", values[1], values[0]),
                          read(b, tables[2], [i[axis]]))
            return binary(b, "add", values[0], step)

        last = position == len(sized) - 1
        source = emit_compute(builder, op, "resize", TensorType(element_type, shape), body,
                              tag=INJECTIVE if last else RUNTIME_AXIS_TAG, extents=list(dims))
    return source


@compute_definition(ResizeOp)
def resize(op: ResizeOp, builder: Builder) -> SSAValue:
    """A resize by tables of taps and weights (`_resize_by_tables`), or, along axes sized by
    `like`, at coordinates computed at run time (`_resize_to_runtime_sizes`)."""
    if op.sized_axes():
        return _resize_to_runtime_sizes(op, builder)
    return _resize_by_tables(op, builder)


def _resize_by_tables(op: ResizeOp, builder: Builder) -> SSAValue:
    """`out[o...] = sum over taps t of x[taps_a[t_a, o_a]...] * prod_a weights_a[t_a, o_a]`,
    over the resized axes a (other axes map one to one), summed one axis at a time
    (`_interpolate`); nearest reads its single tap. Outputs outside the input
    (tf_crop_and_resize) are `extrapolation_value`. A runtime axis is kept, or repeated
    (nearest by an integer scale, `_runtime_axes`)."""
    in_shape, out_shape = shape_of(op.x), shape_of(op.result)
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    runtime_repeats, out_dims = _runtime_axes(op, builder)
    resized = [
        axis for axis, (size, length) in enumerate(zip(out_shape, in_shape, strict=True))
        if axis in runtime_repeats or (length >= 0 and not _is_identity(op, axis, size, length))
    ]
    nearest = op.mode_value() == "nearest"
    tables: dict[int, tuple[SSAValue, SSAValue | None]] = {}
    ranges: dict[int, tuple[int, int]] = {}
    extents: list[int] = []
    repeats = {axis: factor for axis in resized
               if nearest and (factor := runtime_repeats.get(axis)
                               or _repeat_factor(op, axis, out_shape, in_shape))}
    for axis in resized:
        if axis in runtime_repeats:
            extents.append(1)
            continue
        taps, weights = axis_taps(op, axis, out_shape[axis], in_shape[axis])
        extents.append(taps.shape[1])
        if (inside := inside_range(op, axis, out_shape[axis], in_shape[axis])) is not None:
            ranges[axis] = inside
        if axis in repeats:
            continue
        by_tap = np.ascontiguousarray(taps.T)
        taps_table = dense_constant(builder, by_tap[0] if nearest else by_tap, i64)
        taps_table.name_hint = f"resize_taps{axis}"
        weight_table = None
        if not nearest:
            weight_table = dense_constant(builder, np.ascontiguousarray(weights.T), element_type)
            weight_table.name_hint = f"resize_weights{axis}"
        tables[axis] = (taps_table, weight_table)
    extrapolation = op.extrapolation_value_value()

    if nearest or not resized:

        def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
            indices = list(i)
            for axis in resized:
                if axis in repeats:
                    divisor = index(b, repeats[axis])
                    indices[axis] = b.insert(arith.DivUIOp(i[axis], divisor)).result
                    continue
                raw = read(b, tables[axis][0], [i[axis]])
                indices[axis] = b.insert(arith.IndexCastOp(raw, IndexType())).result
            value = read(b, op.x, indices)
            if (outside := _outside(b, i, ranges)) is not None:
                fill = constant(b, extrapolation, element_type)
                value = b.insert(arith.SelectOp(outside, fill, value)).result
            return value

        return emit_compute(builder, op, "resize", result_type, body, tag=INJECTIVE,
                            extents=out_dims)

    # Linear and cubic are separable: one sum over the taps of one axis at a time. Axes that
    # shrink the data most go first; at equal ratios the innermost first when they grow and
    # last when they shrink, so that the gathered (contiguous-axis) pass runs over the fewest
    # rows and the other axes' passes read whole rows.
    def order_key(a: int) -> tuple[float, int]:
        ratio = out_shape[a] / in_shape[a]
        return (ratio, -a if ratio > 1 else a)

    order = sorted(resized, key=order_key)
    interpolated, shape = op.x, list(in_shape)
    for axis in order:
        shape[axis] = out_shape[axis]
        interpolated = _interpolate(
            builder, op, interpolated, axis, tables[axis], extents[resized.index(axis)],
            TensorType(element_type, shape),
        )
    if not ranges:
        return interpolated

    def extrapolate_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        value = read(b, interpolated, i)
        outside = _outside(b, i, ranges)
        assert outside is not None
        fill = constant(b, extrapolation, element_type)
        return b.insert(arith.SelectOp(outside, fill, value)).result

    return emit_compute(
        builder, op, "resize_extrapolate", result_type, extrapolate_body, tag=INJECTIVE
    )
