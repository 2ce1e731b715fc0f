"""Compute definitions of the pooling graph ops: max_pool2d, avg_pool2d, global_avg_pool2d.

Counterpart: TVM's `topi.nn.pool2d` and `topi.nn.global_pool`. Where a window can leave the
input, the windows read a "pad" compute of it: padding, and the overhang of a last window in ceil
mode, hold -inf for a max (the integer type's minimum for the int8/uint8 pools of quantized
models; either never wins) and 0 for a sum. Averages are a sum compute (tag
"pool_avg") followed by an injective division by the number of counted elements, which is a
constant when every window counts the same number.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.graph.ops import AvgPool2DOp, GlobalAvgPool2DOp, MaxPool2DOp
from dlc.rewrites.topi.common import (
    Extent,
    affine,
    binary,
    constant,
    dim_size,
    emit_compute,
    extent_affine,
    extents_of,
    guarded_read,
    index,
    index_to_element,
    may_leave,
    read,
    reduction,
    shape_of,
    tensor_type,
    window_extent,
    zero_attr,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.nn import pad
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
from xdsl.ir import SSAValue


class _Window:
    """The geometry of a 2-D pooling window over the H and W axes of an NCHW-like layout.

    Over a runtime height or width (`in_sizes` holds an `index` value, built with `builder`
    before the computes), the output size is index arithmetic (`window_extent`), and a window
    that may leave the input (padding, ceil mode) reads a "pad" compute of it made large enough
    for any size: the end padding, plus stride - 1 in ceil mode.
    """

    def __init__(
        self, op: MaxPool2DOp | AvgPool2DOp, builder: Builder, dilation: Sequence[int] = (1, 1)
    ) -> None:
        layout = op.layout_value()
        self.input = op.x
        self.h_pos, self.w_pos = layout.index("H"), layout.index("W")
        self.kernel = op.kernel_tuple()
        self.strides = op.strides_tuple()
        self.dilation = tuple(dilation)
        top, left, bottom, right = op.padding_tuple()
        self.pad_begin, self.pad_end = (top, left), (bottom, right)
        self.ceil_mode = op.ceil_mode_value()
        self.in_dims = in_dims = extents_of(builder, op.x)
        self.in_sizes = (in_dims[self.h_pos], in_dims[self.w_pos])
        self.out_dims: list[Extent] = list(in_dims)
        for axis, pos in enumerate((self.h_pos, self.w_pos)):
            self.out_dims[pos] = window_extent(
                builder, self.in_sizes[axis], self.kernel[axis], self.strides[axis],
                self.pad_begin[axis], self.pad_end[axis], self.dilation[axis], self.ceil_mode,
                origin=op, axis=pos)
        self.out_sizes = (self.out_dims[self.h_pos], self.out_dims[self.w_pos])

    def dynamic(self, axis: int) -> bool:
        """Whether the input's size along `axis` (0: H, 1: W) is a runtime extent."""
        return isinstance(self.in_sizes[axis], SSAValue)

    def guarded(self, axis: int) -> bool:
        """Whether the window can leave the input along `axis` (0: H, 1: W)."""
        if self.dynamic(axis):
            return bool(self.pad_begin[axis] or self.pad_end[axis] or self.ceil_mode)
        last = (
            (self.out_sizes[axis] - 1) * self.strides[axis]
            + (self.kernel[axis] - 1) * self.dilation[axis]
            - self.pad_begin[axis]
        )
        return may_leave(-self.pad_begin[axis], last, self.in_sizes[axis])

    def padded(
        self, builder: Builder, origin: MaxPool2DOp | AvgPool2DOp, x: SSAValue,
        pad_value: IntegerAttr | FloatAttr,
    ) -> SSAValue:
        """`x`, or, when a window can leave it, a "pad" compute (`topi.nn.pad`) of `x` with the
        padding and the overhang of a last ceil-mode window filled with `pad_value`: windows then
        read it at plain affine indices (`h * sh + rh * dh`), which vectorize, instead of through
        clamps and selects."""
        if not (self.guarded(0) or self.guarded(1)):
            return x
        before: dict[int, int] = {}
        after: dict[int, int] = {}
        for axis, pos in enumerate((self.h_pos, self.w_pos)):
            before[pos] = self.pad_begin[axis]
            if self.dynamic(axis):
                after[pos] = self.pad_end[axis] + (self.strides[axis] - 1 if self.ceil_mode else 0)
                continue
            last = (
                (self.out_sizes[axis] - 1) * self.strides[axis]
                + (self.kernel[axis] - 1) * self.dilation[axis]
            )
            after[pos] = max(0, last + 1 - self.pad_begin[axis] - self.in_sizes[axis])
        return pad(builder, origin, x, before, after, pad_value.value.data)

    def read(
        self, b: Builder, x: SSAValue, i: list[SSAValue], r: list[SSAValue],
        pad_value: IntegerAttr | FloatAttr,
    ) -> SSAValue:
        """x at the window element `r` of the output point `i`, or `pad_value` outside the
        input; `x` is the input as `padded` returned it (padded if it is not the op's input)."""
        indices = list(i)
        guarded = [False] * len(i)
        padded = x is not self.input
        for axis, pos in enumerate((self.h_pos, self.w_pos)):
            indices[pos] = affine(
                b, [(i[pos], self.strides[axis]), (r[axis], self.dilation[axis])],
                0 if padded else -self.pad_begin[axis],
            )
            guarded[pos] = not padded and self.guarded(axis)
        return guarded_read(b, x, indices, guarded, pad_value, self.in_dims)

    def counts(self, axis: int, include_pad: bool) -> list[int]:
        """The number of elements each window counts along `axis`, per output position; over a
        runtime extent, the count of the first and of a middle window (they differ where a
        window may reach into the padding or past the end)."""
        if self.dynamic(axis):
            kernel, begin, end = self.kernel[axis], self.pad_begin[axis], self.pad_end[axis]
            uniform = (include_pad and not self.ceil_mode) or not (begin or end or self.ceil_mode)
            return [kernel] if uniform else [kernel, kernel - 1]
        size, kernel, stride = self.in_sizes[axis], self.kernel[axis], self.strides[axis]
        begin, end = self.pad_begin[axis], self.pad_end[axis]
        counts = []
        for position in range(self.out_sizes[axis]):
            start = position * stride - begin
            if include_pad:
                counts.append(min(start + kernel, size + end) - start)
            else:
                counts.append(min(start + kernel, size) - max(start, 0))
        return counts

    def count_index(self, b: Builder, axis: int, position: SSAValue, include_pad: bool) -> SSAValue:
        """`counts(axis)[position]` as index arithmetic (a constant when all counts agree)."""
        counts = self.counts(axis, include_pad)
        if len(set(counts)) == 1:
            return index(b, counts[0])
        size, kernel, stride = self.in_sizes[axis], self.kernel[axis], self.strides[axis]
        begin, end = self.pad_begin[axis], self.pad_end[axis]
        limit = extent_affine(b, size, end if include_pad else 0)
        stop = b.insert(
            arith.MinSIOp(
                affine(b, [(position, stride)], kernel - begin),
                index(b, limit) if isinstance(limit, int) else limit,
            )
        ).result
        start = affine(b, [(position, stride)], -begin)
        if not include_pad:
            start = b.insert(arith.MaxSIOp(start, index(b, 0))).result
        return b.insert(arith.SubiOp(stop, start)).result


@compute_definition(MaxPool2DOp)
def max_pool2d(op: MaxPool2DOp, builder: Builder) -> SSAValue:
    """`out[n, c, h, w] = max over (rh, rw) of x[n, c, h*sh + rh*dh - top, w*sw + rw*dw - left]`,
    out-of-input elements reading -inf, or the minimum of an integer type (tag "pool_max")."""
    window = _Window(op, builder, op.dilation_tuple())
    result_type = tensor_type(op.result)
    combiner, lowest = reduction("max", result_type.get_element_type())
    source = window.padded(builder, op, op.x, lowest)

    def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        return window.read(b, source, i, r, lowest)

    return emit_compute(
        builder, op, "max_pool2d", result_type, body, tag="pool_max",
        reduce_extents=window.kernel, combiner=combiner, init=lowest, extents=window.out_dims,
    )


@compute_definition(AvgPool2DOp)
def avg_pool2d(op: AvgPool2DOp, builder: Builder) -> SSAValue:
    """A window sum ("avg_pool2d_sum", tag "pool_avg"), then "avg_pool2d": the sum divided by the
    number of input elements in the window (padding included with `count_include_pad`)."""
    window = _Window(op, builder)
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    include_pad = op.count_include_pad_value()

    source = window.padded(builder, op, op.x, zero_attr(element_type))

    def sum_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        return window.read(b, source, i, r, zero_attr(element_type))

    total = emit_compute(
        builder, op, "avg_pool2d_sum", result_type, sum_body, tag="pool_avg",
        reduce_extents=window.kernel, combiner="sum", init=zero_attr(element_type),
        extents=window.out_dims,
    )

    counts_h, counts_w = (set(window.counts(axis, include_pad)) for axis in (0, 1))

    def divide_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        value = read(b, total, i)
        if len(counts_h) == len(counts_w) == 1:
            divisor = constant(b, min(counts_h) * min(counts_w), element_type)
        else:
            count_h = window.count_index(b, 0, i[window.h_pos], include_pad)
            count_w = window.count_index(b, 1, i[window.w_pos], include_pad)
            count = b.insert(arith.MuliOp(count_h, count_w)).result
            divisor = index_to_element(b, count, element_type)
        return binary(b, "div", value, divisor)

    return emit_compute(builder, op, "avg_pool2d", result_type, divide_body, tag=INJECTIVE,
                        extents=window.out_dims)


@compute_definition(GlobalAvgPool2DOp)
def global_avg_pool2d(op: GlobalAvgPool2DOp, builder: Builder) -> SSAValue:
    """The sum over H and W ("global_avg_pool2d_sum", tag "pool_avg"), then divided by H*W."""
    layout = op.layout_value()
    h_pos, w_pos = layout.index("H"), layout.index("W")
    in_shape = shape_of(op.x)
    result_type: TensorType = tensor_type(op.result)
    element_type = result_type.get_element_type()

    def sum_body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        indices = list(i)
        indices[h_pos], indices[w_pos] = r
        return read(b, op.x, indices)

    plane: tuple[Extent, Extent] = tuple(  # type: ignore[assignment]
        in_shape[pos] if in_shape[pos] >= 0 else dim_size(builder, op.x, pos)
        for pos in (h_pos, w_pos))
    total = emit_compute(
        builder, op, "global_avg_pool2d_sum", result_type, sum_body, tag="pool_avg",
        reduce_extents=[d if isinstance(d, int) else -1 for d in plane], combiner="sum",
        init=zero_attr(element_type),
        reduce_sizes=[d for d in plane if isinstance(d, SSAValue)],
    )
    runtime = any(isinstance(d, SSAValue) for d in plane)
    count: Extent = plane[0] * plane[1] if not runtime else builder.insert(arith.MuliOp(
        *(index(builder, d) if isinstance(d, int) else d for d in plane))).result

    def divide_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        value = read(b, total, i)
        divisor = index_to_element(b, count, element_type) if isinstance(count, SSAValue) \
            else constant(b, count, element_type)
        return binary(b, "div", value, divisor)

    return emit_compute(
        builder, op, "global_avg_pool2d", result_type, divide_body, tag=INJECTIVE
    )
