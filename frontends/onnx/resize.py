"""Converters of ONNX Resize and Upsample: graph.resize, with the output sizes and the scales of
the coordinate transformation computed at import time."""

from __future__ import annotations

import math

import numpy as np
from dlc.dialects.graph.ops_tensor import ResizeOp
from dlc.frontends.onnx.common import normalize_axes
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register


def _given(node: NodeContext, index: int, what: str) -> np.ndarray | None:
    """Optional input `index`, known at import time; None when absent or empty."""
    if not node.has_input(index):
        return None
    array = node.require_const(index, what)
    return None if array.size == 0 else array.reshape(-1)


def _resize(node: NodeContext, sizes: list[int], scales: list[float], mode: str,
            coordinate_mode: str, nearest_mode: str, roi: list[float] | None = None
            ) -> ConvertedValue:
    if (sizes == list(node.shape(0)) and all(math.isclose(s, 1.0) for s in scales)
            and coordinate_mode != "tf_crop_and_resize"):
        return node.input(0)
    return node.emit(ResizeOp(
        node.input(0), sizes, scales, mode=mode, coordinate_transformation_mode=coordinate_mode,
        nearest_mode=nearest_mode, cubic_coeff_a=node.attr_float("cubic_coeff_a", -0.75),
        exclude_outside=bool(node.attr_int("exclude_outside", 0)),
        antialias=bool(node.attr_int("antialias", 0)), roi=roi or [],
        extrapolation_value=node.attr_float("extrapolation_value", 0.0)))


def _from_scales(node: NodeContext, scales: list[float]) -> list[int]:
    """ONNX's output sizes for `scales`: floor(scale * dim); -1 for a dynamic dim (the batch,
    whose scale `graph.resize` checks is 1)."""
    shape = node.shape(0)
    if len(scales) != len(shape) or any(not s > 0 for s in scales):
        raise node.error(f"expected {len(shape)} positive scales, found {scales}")
    return [int(math.floor(s * d)) if d >= 0 else -1 for s, d in zip(scales, shape, strict=True)]


class _Legacy(OnnxOpConverter):
    """Upsample and Resize-10: `asymmetric` coordinates, nearest rounding down."""

    @classmethod
    def _convert(cls, node: NodeContext, scales: list[float]) -> list[ConvertedValue]:
        mode = node.attr_str("mode", "nearest")
        if mode not in ("nearest", "linear", "bilinear"):
            raise node.error(f"expected mode nearest or linear, found '{mode}'")
        sizes = _from_scales(node, scales)
        return [_resize(node, sizes, scales, "nearest" if mode == "nearest" else "linear",
                        "asymmetric", "floor")]


@register("Upsample")
class Upsample(_Legacy):
    """`Upsample` (deprecated at opset 10): scales are an attribute before opset 9, an
    import-time input after."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        scales = node.attr_floats("scales")
        assert scales is not None
        return cls._convert(node, scales)

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._convert(node, [float(s) for s in node.require_const(1, "the scales")])


@register("Resize")
class Resize(_Legacy):
    """`Resize`: graph.resize in modes nearest, linear and cubic. Opset 10 is Upsample's
    semantics; from opset 11 the output comes from `scales` or `sizes` (import-time inputs) with
    the coordinate transformation and rounding of the attributes; opset 18 adds `axes` and
    `keep_aspect_ratio_policy`, and antialias."""

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        return cls._convert(node, [float(s) for s in node.require_const(1, "the scales")])

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        coordinate_mode = node.attr_str("coordinate_transformation_mode", "half_pixel")
        shape = node.shape(0)
        axes = normalize_axes(node, node.attr_ints("axes", list(range(len(shape))))
                              or [], len(shape))
        roi = None
        if coordinate_mode == "tf_crop_and_resize":
            roi = cls._roi(node, axes)
        scales_in = _given(node, 2, "the scales")
        sizes_in = _given(node, 3, "the sizes")
        if (scales_in is None) == (sizes_in is None):
            raise node.error("expected exactly one of scales and sizes")
        if sizes_in is not None:
            sizes, scales = cls._sizes(node, axes, [int(v) for v in sizes_in])
        else:
            scales = [1.0] * len(shape)
            if len(scales_in) != len(axes):
                raise node.error(f"expected {len(axes)} scales, found {len(scales_in)}")
            for axis, scale in zip(axes, scales_in, strict=True):
                scales[axis] = float(scale)
            sizes = _from_scales(node, scales)
        return [_resize(node, sizes, scales, node.attr_str("mode", "nearest"), coordinate_mode,
                        node.attr_str("nearest_mode", "round_prefer_floor"), roi)]

    @classmethod
    def _roi(cls, node: NodeContext, axes: list[int]) -> list[float]:
        """The region of tf_crop_and_resize for every axis (starts, then ends)."""
        given = _given(node, 1, "the roi")
        if given is None or len(given) != 2 * len(axes):
            raise node.error(f"expected a roi of {2 * len(axes)} values for "
                             "tf_crop_and_resize")
        rank = node.rank(0)
        roi = [0.0] * rank + [1.0] * rank
        for i, axis in enumerate(axes):
            roi[axis], roi[axis + rank] = float(given[i]), float(given[i + len(axes)])
        return roi

    @classmethod
    def _sizes(cls, node: NodeContext, axes: list[int], given: list[int]
               ) -> tuple[list[int], list[float]]:
        """(sizes, scales) for `sizes` given on `axes`, with `keep_aspect_ratio_policy`."""
        shape = node.shape(0)
        # -1 for a dynamic batch (the importer's `BATCH_TARGET_INPUTS`): the rows kept
        batch = [a for a, s in zip(axes, given, strict=False) if s == -1 and shape[a] < 0]
        if len(given) != len(axes) or any(s < 1 for a, s in zip(axes, given, strict=True)
                                          if a not in batch):
            raise node.error(f"expected {len(axes)} positive sizes, found {given}")
        sizes = list(shape)
        for axis, size in zip(axes, given, strict=True):
            sizes[axis] = size
        sizes = [-1 if d < 0 else d for d in sizes]
        scales = [1.0 if d < 0 else s / d for s, d in zip(sizes, shape, strict=True)]
        policy = node.attr_str("keep_aspect_ratio_policy", "stretch")
        if policy == "stretch":
            return sizes, scales
        if policy not in ("not_larger", "not_smaller"):
            raise node.error(f"expected keep_aspect_ratio_policy stretch, not_larger or "
                             f"not_smaller, found '{policy}'")
        pick = min if policy == "not_larger" else max
        kept = [a for a in axes if a not in batch]
        scale = pick(scales[a] for a in kept)
        for axis in kept:
            scales[axis] = scale
            sizes[axis] = int(scale * shape[axis] + 0.5)
        return sizes, scales
