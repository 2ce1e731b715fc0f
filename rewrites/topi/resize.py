"""Compute definition of `graph.resize` (ONNX Resize: nearest, linear, cubic), axis by axis.

Counterpart: TVM's `topi.image.resize2d`, which computes the source coordinate and the
interpolation weights in the compute body. Here they depend only on static shapes and
attributes, so they are computed once, at compile time, into small tables that the compute
reads: for each resized axis a, `taps_a[o, t]` (i64, the input index of tap t of output o,
already clamped into the axis; `taps_a[o]` for nearest) and `weights_a[o, t]`. Nearest is then
an injective gather; linear and cubic a sum over the taps of all resized axes (tag "resize").
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import SSAValue

from dialects.graph.ops_tensor import ResizeOp
from rewrites.topi.common import (
    binary,
    dense_constant,
    emit_compute,
    read,
    shape_of,
    tensor_type,
    zero_attr,
)
from rewrites.topi.elementwise import INJECTIVE
from rewrites.topi.registry import compute_definition


def source_coordinates(mode: str, size: int, length: int, scale: float) -> np.ndarray:
    """ONNX's coordinate_transformation_mode: the input coordinate of each output position."""
    out = np.arange(size, dtype=np.float64)
    width = scale * length  # ONNX uses the real-valued output width
    if mode == "asymmetric":
        return out / scale
    if mode == "align_corners":
        return np.zeros(size) if width == 1 else out * (length - 1) / (width - 1)
    if mode == "tf_half_pixel_for_nn":
        return (out + 0.5) / scale
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


def _cubic(ratio: np.ndarray, a: float) -> np.ndarray:
    """Weights of taps floor(x) - 1 … floor(x) + 2 for the fraction `ratio` (Keys' kernel)."""
    distances = np.stack([ratio + 1, ratio, 1 - ratio, 2 - ratio], axis=-1)
    near = ((a + 2) * distances - (a + 3)) * distances * distances + 1
    far = ((a * distances - 5 * a) * distances + 8 * a) * distances - 4 * a
    return np.where(distances <= 1, near, far)


def axis_taps(op: ResizeOp, size: int, length: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(taps, weights), each size × n: the input elements output o mixes, and how much."""
    x = source_coordinates(op.coordinate_mode_value(), size, length, scale)
    mode = op.mode_value()
    if mode == "nearest":
        taps = _nearest(x, op.nearest_mode_value())[:, None].astype(np.int64)
        weights = np.ones(taps.shape)
    else:
        base = np.floor(x)
        ratio = x - base
        if mode == "linear":
            offsets, weights = np.arange(2), np.stack([1 - ratio, ratio], axis=-1)
        else:
            offsets, weights = np.arange(-1, 3), _cubic(ratio, op.cubic_coeff_a_value())
        taps = base.astype(np.int64)[:, None] + offsets
    if op.exclude_outside_value():
        weights = np.where((taps >= 0) & (taps < length), weights, 0.0)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(taps, 0, length - 1), weights


@compute_definition(ResizeOp)
def resize(op: ResizeOp, builder: Builder) -> SSAValue:
    """`out[o...] = sum over taps t of x[taps_a[o_a, t_a]...] * prod_a weights_a[o_a, t_a]`,
    over the resized axes a (other axes map one to one); nearest reads its single tap."""
    in_shape, out_shape = shape_of(op.x), shape_of(op.result)
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    resized = [
        axis for axis, (size, length, scale) in enumerate(
            zip(out_shape, in_shape, op.scales_tuple(), strict=True))
        if not (size == length and math.isclose(scale, 1.0))
    ]
    tables: dict[int, tuple[SSAValue, SSAValue | None]] = {}
    extents: list[int] = []
    nearest = op.mode_value() == "nearest"
    for axis in resized:
        taps, weights = axis_taps(op, out_shape[axis], in_shape[axis], op.scales_tuple()[axis])
        taps_table = dense_constant(builder, taps[:, 0] if nearest else taps, i64)
        taps_table.name_hint = f"resize_taps{axis}"
        weight_table = None
        if not nearest:
            weight_table = dense_constant(builder, weights, element_type)
            weight_table.name_hint = f"resize_weights{axis}"
        tables[axis] = (taps_table, weight_table)
        extents.append(taps.shape[1])

    def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        indices = list(i)
        weight: SSAValue | None = None
        for position, axis in enumerate(resized):
            taps_table, weight_table = tables[axis]
            tap = [] if nearest else [r[position]]
            raw = read(b, taps_table, [i[axis], *tap])
            indices[axis] = b.insert(arith.IndexCastOp(raw, IndexType())).result
            if weight_table is not None:
                w = read(b, weight_table, [i[axis], *tap])
                weight = w if weight is None else binary(b, "mul", weight, w)
        value = read(b, op.x, indices)
        return value if weight is None else binary(b, "mul", value, weight)

    if nearest or not resized:
        return emit_compute(builder, op, "resize", result_type, body, tag=INJECTIVE)
    return emit_compute(
        builder, op, "resize", result_type, body, tag="resize", reduce_extents=extents,
        combiner="sum", init=zero_attr(element_type),
    )

