"""Compute definitions of the neural-network graph ops: conv2d (and transposed), matmul,
batch_norm, softmax.

Counterpart: TVM's `topi.nn.conv2d_nchw` / `conv2d_nhwc` / `depthwise_conv2d_nchw` /
`group_conv2d_nchw` (with `topi.nn.pad`), `topi.nn.conv2d_transpose_nchw`,
`topi.nn.batch_matmul`, `topi.nn.batch_norm` and `topi.nn.softmax`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from dlc.dialects.graph.ops import BatchNormOp, Conv2DOp, MatmulOp, SoftmaxOp
from dlc.dialects.graph.ops_tensor import ConvTranspose2DOp
from dlc.dialects.tensor_expr.ops import ComputeBody
from dlc.rewrites.topi.common import (
    Extent,
    accumulator_type,
    affine,
    binary,
    broadcast_indices,
    check_element_type,
    clamp_index,
    constant,
    convert_float,
    dim_size,
    divide_index,
    emit_compute,
    extent_affine,
    extents_of,
    guarded_read,
    index,
    lowest_attr,
    read,
    remainder_index,
    require_sizes,
    scalar_attr,
    shape_of,
    tensor_type,
    window_extent,
    zero_attr,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

PAD_TAG = "pad"
"""The tag (and name) of the compute that materialises a zero-padded input."""

_V = TypeVar("_V")


# ---------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------


def pad(
    builder: Builder,
    origin: Operation,
    x: SSAValue,
    before: dict[int, int],
    after: dict[int, int],
    pad_value: float | Callable[[Builder], SSAValue],
) -> SSAValue:
    """The compute "pad": `x` with `before[axis]` / `after[axis]` elements of `pad_value` added.

    `padded[i...] = select(in_bounds, x[clamp(i - before)], pad_value)` (TVM's topi.nn.pad);
    a callable `pad_value` builds the value in the compute's body (a read of a zero point).
    """
    in_dims = extents_of(builder, x)
    out_dims = [extent_affine(builder, dim, before.get(axis, 0) + after.get(axis, 0))
                for axis, dim in enumerate(in_dims)]
    out_shape = [dim if isinstance(dim, int) else DYNAMIC_INDEX for dim in out_dims]
    element_type = tensor_type(x).get_element_type()

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        indices = [affine(b, [(i[axis], 1)], -before.get(axis, 0)) for axis in range(len(i))]
        guarded = [bool(before.get(axis, 0) or after.get(axis, 0)) for axis in range(len(i))]
        value = pad_value(b) if callable(pad_value) else scalar_attr(pad_value, element_type)
        return guarded_read(b, x, indices, guarded, value, in_dims)

    return emit_compute(
        builder, origin, PAD_TAG, TensorType(element_type, out_shape), body, tag=PAD_TAG,
        extents=out_dims,
    )


def conv2d_tag(op: Conv2DOp) -> str:
    """"conv2d_nchw", "depthwise_conv2d_nhwc", "group_conv2d_nchw", …: the schedule's key."""
    layout = op.layout_value().lower()
    if op.is_depthwise():
        return f"depthwise_conv2d_{layout}"
    if op.groups_value() > 1:
        return f"group_conv2d_{layout}"
    return f"conv2d_{layout}"


@compute_definition(Conv2DOp)
def conv2d(op: Conv2DOp, builder: Builder) -> SSAValue:
    """Grouped, strided, dilated conv2d over a "pad" compute, then a "bias_add" compute.

    `out[n, o, h, w] = sum over (rc, rh, rw) of
    pad[n, g(o) * C/groups + rc, h * sh + rh * dh, w * sw + rw * dw] * weight[o, rc, rh, rw]`
    with `g(o) = o / (O/groups)`, for any permutation of NCHW (input) and OIHW (weight); the rc
    axis is dropped when each group has one input channel (depthwise).
    """
    layout, kernel_layout = op.layout_value(), op.kernel_layout_value()
    n_pos, c_pos, h_pos, w_pos = (layout.index(d) for d in "NCHW")
    o_pos, i_pos, kh_pos, kw_pos = (kernel_layout.index(d) for d in "OIHW")
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    check_element_type(op, element_type)
    accumulator = accumulator_type(element_type)
    w_shape = shape_of(op.weight)
    group_channels, groups = w_shape[i_pos], op.groups_value()
    outs_per_group = w_shape[o_pos] // groups
    top, left, bottom, right = op.padding_tuple()
    (sh, sw), (dh, dw) = op.strides_tuple(), op.dilation_tuple()
    source = op.input
    out_dims: list[Extent] = list(result_type.get_shape())
    for pos, kpos, axis in ((h_pos, kh_pos, 0), (w_pos, kw_pos, 1)):
        if out_dims[pos] < 0:  # a runtime extent (`window_output_size` at run time)
            out_dims[pos] = window_extent(
                builder, dim_size(builder, op.input, pos), w_shape[kpos],
                (sh, sw)[axis], (top, left)[axis], (bottom, right)[axis], (dh, dw)[axis],
                origin=op, axis=pos)
    if any((top, left, bottom, right)):
        source = pad(builder, op, op.input, {h_pos: top, w_pos: left},
                     {h_pos: bottom, w_pos: right}, 0)
    extents = [group_channels, w_shape[kh_pos], w_shape[kw_pos]]
    if group_channels == 1:
        extents = extents[1:]

    def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        rc = r[0] if group_channels > 1 else index(b, 0)
        rh, rw = r[-2], r[-1]
        channel = rc
        if groups > 1:
            group = divide_index(b, i[c_pos], outs_per_group)
            channel = group if group_channels == 1 else affine(
                b, [(group, group_channels), (rc, 1)]
            )
        x_indices = _place(
            {n_pos: i[n_pos], c_pos: channel, h_pos: affine(b, [(i[h_pos], sh), (rh, dh)]),
             w_pos: affine(b, [(i[w_pos], sw), (rw, dw)])}
        )
        w_indices = _place({o_pos: i[c_pos], i_pos: rc, kh_pos: rh, kw_pos: rw})
        return binary(b, "mul", convert_float(b, read(b, source, x_indices), accumulator),
                      convert_float(b, read(b, op.weight, w_indices), accumulator))

    conv = emit_compute(
        builder, op, "conv2d", TensorType(accumulator, result_type.get_shape()), body,
        tag=conv2d_tag(op), reduce_extents=extents, combiner="sum", init=zero_attr(accumulator),
        extents=out_dims,
    )
    return bias_add(builder, op, conv, op.bias, c_pos, element_type)


def _place(by_position: dict[int, SSAValue]) -> list[SSAValue]:
    """The values of `by_position` ordered by their position."""
    return [by_position[pos] for pos in range(len(by_position))]


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------


@compute_definition(MatmulOp)
def matmul(op: MatmulOp, builder: Builder) -> SSAValue:
    """`out[b..., i, j] = sum over k of lhs[bcast(b...), i, k] * rhs[bcast(b...), k, j]`.

    numpy.matmul's rules: batch axes broadcast, a 1-D lhs has no `i` axis and a 1-D rhs no `j`
    axis. Tagged "matmul" (or "batch_matmul" with batch axes).
    """
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    check_element_type(op, element_type)
    accumulator = accumulator_type(element_type)
    a_shape, b_shape = shape_of(op.lhs), shape_of(op.rhs)
    out_shape = shape_of(op.result)
    lhs_vector, rhs_vector = len(a_shape) == 1, len(b_shape) == 1
    batch_rank = len(out_shape) - (0 if lhs_vector else 1) - (0 if rhs_vector else 1)
    batch_shape = out_shape[:batch_rank]

    def operand_indices(
        b: Builder, shape: Sequence[int], batch: list[SSAValue], matrix: list[SSAValue]
    ) -> list[SSAValue]:
        return [*broadcast_indices(b, batch, shape[: len(shape) - 2], batch_shape), *matrix]

    def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        k, batch = r[0], i[:batch_rank]
        row = [] if lhs_vector else [i[batch_rank]]
        column = [] if rhs_vector else [i[-1]]
        lhs = read(b, op.lhs, [k] if lhs_vector else operand_indices(b, a_shape, batch, [*row, k]))
        rhs = read(
            b, op.rhs, [k] if rhs_vector else operand_indices(b, b_shape, batch, [k, *column])
        )
        return binary(b, "mul", convert_float(b, lhs, accumulator),
                      convert_float(b, rhs, accumulator))

    extents, k_size = _matmul_extents(builder, op, batch_rank)
    product = emit_compute(
        builder, op, "matmul", TensorType(accumulator, out_shape), body,
        tag="batch_matmul" if batch_rank else "matmul", reduce_extents=[max(a_shape[-1], -1)],
        combiner="sum", init=zero_attr(accumulator), extents=extents,
        reduce_sizes=[k_size] if isinstance(k_size, SSAValue) else [],
    )
    return bias_add(builder, op, product, None, 0, element_type)


def _matmul_extents(b: Builder, op: MatmulOp, batch_rank: int) -> tuple[list[Extent], Extent]:
    """(the result's extents, the contracting dim's) of `op`: each batch dim the operand's
    that is not broadcast there (the lhs's where both are: their sizes checked equal at run
    time), the rows the lhs's, the columns the rhs's, the contracting dim the lhs's (checked
    equal to the rhs's where either is a runtime size)."""
    a, c = extents_of(b, op.lhs), extents_of(b, op.rhs)
    a_matrix, c_matrix = (a[-1:] if len(a) == 1 else a[-2:]), (c[-1:] if len(c) == 1 else c[-2:])
    a_batch, c_batch = a[:len(a) - len(a_matrix)], c[:len(c) - len(c_matrix)]
    batch: list[Extent] = []
    for dim in range(batch_rank):
        sides = [operand[dim - (batch_rank - len(operand))] for operand in (a_batch, c_batch)
                 if dim >= batch_rank - len(operand)]
        sizes = [size for size in sides if size != 1] or [1]
        for other in sizes[1:]:
            require_sizes(b, op, "eq", sizes[0], other,
                          f"needs equal sizes along batch dim {dim} of its operands")
        batch.append(sizes[0])
    k_lhs, k_rhs = a[-1], c[0] if len(c) == 1 else c[-2]
    require_sizes(b, op, "eq", k_lhs, k_rhs, "needs equal contracting dims")
    rows = [] if len(a) == 1 else [a[-2]]
    columns = [] if len(c) == 1 else [c[-1]]
    return [*batch, *rows, *columns], k_lhs


# ---------------------------------------------------------------------------------------------
# batch_norm
# ---------------------------------------------------------------------------------------------


@compute_definition(BatchNormOp)
def batch_norm(op: BatchNormOp, builder: Builder) -> SSAValue:
    """`out = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]`, c = axis 1."""
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    epsilon = op.epsilon_value()

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        channel = [i[1]]
        centered = binary(b, "sub", read(b, op.x, i), read(b, op.mean, channel))
        variance = binary(b, "add", read(b, op.var, channel), constant(b, epsilon, element_type))
        deviation = b.insert(mathd.SqrtOp(variance)).result
        normalized = binary(b, "div", centered, deviation)
        scaled = binary(b, "mul", normalized, read(b, op.scale, channel))
        return binary(b, "add", scaled, read(b, op.bias, channel))

    return emit_compute(builder, op, "batch_norm", result_type, body, tag=INJECTIVE)


# ---------------------------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------------------------


@compute_definition(SoftmaxOp)
def softmax(op: SoftmaxOp, builder: Builder) -> SSAValue:
    """Numerically stable softmax in four computes (TVM's topi.nn.softmax).

    softmax_max = max over the axis of x; softmax_exp = exp(x - softmax_max);
    softmax_sum = sum over the axis of softmax_exp; softmax = softmax_exp * (1 / softmax_sum)
    (within an ulp or two of the quotient; the reciprocal is loop-invariant along the axis). The
    reductions drop the axis; tags are "softmax_max", "softmax_exp", "softmax_sum",
    "softmax_norm".
    """
    x_type = tensor_type(op.x)
    element_type = x_type.get_element_type()
    axis = op.normalized_axis()
    shape = shape_of(op.x)
    reduced_type = TensorType(element_type, [*shape[:axis], *shape[axis + 1 :]])

    def along_axis(source: SSAValue) -> ComputeBody:
        def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
            return read(b, source, [*i[:axis], r[0], *i[axis:]])

        return body

    def without_axis(i: Sequence[_V]) -> list[_V]:
        return [*i[:axis], *i[axis + 1 :]]

    sizes = extents_of(builder, op.x)
    runtime_axis = [size for size in sizes[axis:axis + 1] if isinstance(size, SSAValue)]
    maximum = emit_compute(
        builder, op, "softmax_max", reduced_type, along_axis(op.x), tag="softmax_max",
        reduce_extents=[max(shape[axis], -1)], combiner="max", init=lowest_attr(element_type),
        extents=without_axis(sizes), reduce_sizes=runtime_axis,
    )

    def exp_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        shifted = binary(b, "sub", read(b, op.x, i), read(b, maximum, without_axis(i)))
        return b.insert(mathd.ExpOp(shifted)).result

    exp = emit_compute(builder, op, "softmax_exp", x_type, exp_body, tag="softmax_exp")
    total = emit_compute(
        builder, op, "softmax_sum", reduced_type, along_axis(exp), tag="softmax_sum",
        reduce_extents=[max(shape[axis], -1)], combiner="sum", init=zero_attr(element_type),
        extents=without_axis(sizes), reduce_sizes=runtime_axis,
    )

    def norm_body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        # One division per row (loop-invariant along the axis, hoisted out of it), a multiply
        # per element: a vector division takes ~16 cycles, and it was the row's costliest op.
        scale = binary(b, "div", constant(b, 1.0, element_type),
                       read(b, total, without_axis(i)))
        return binary(b, "mul", read(b, exp, i), scale)

    return emit_compute(builder, op, "softmax", x_type, norm_body, tag="softmax_norm")


# ---------------------------------------------------------------------------------------------
# conv_transpose2d
# ---------------------------------------------------------------------------------------------


@compute_definition(ConvTranspose2DOp)
def conv_transpose2d(op: ConvTranspose2DOp, builder: Builder) -> SSAValue:
    """The gather form of the transposed convolution (TVM dilates and pads the input instead).

    `out[n, o, y, x] = sum over (rc, rh, rw) of in[n, c, ty / sh, tx / sw] * w[c, o', rh, rw]`
    with `ty = y + top - rh * dh` (likewise tx), `c = g(o) * C/groups + rc`, `o' = o mod
    (O/groups)`, counting only terms where `ty` is a multiple of `sh` inside [0, H * sh) (reads
    are clamped and the others select 0). Tag "conv2d_transpose_nchw"; then "bias_add".
    Over a runtime height and width (sizes as index arithmetic: `H * sh + KH - sh - pads +
    output_padding` at dilation 1), a kernel as large as its stride with no dilation (a
    UNet's 2x2 up-convs of stride 2) meets each output with exactly one tap, `(y + top) mod
    sh` at row `(y + top) / sh`: a 1x1 conv to every tap's channels and a depth-to-space
    (`_one_tap_conv_transpose`).
    """
    result_type = tensor_type(op.result)
    element_type = result_type.get_element_type()
    check_element_type(op, element_type)
    accumulator = accumulator_type(element_type)
    _, channels, _, _ = shape_of(op.input)
    _, outs_per_group, kh, kw = shape_of(op.weight)
    groups = op.groups_value()
    in_per_group = channels // groups
    top, left, bottom, right = op.padding_tuple()
    strides, dilation = op.strides_tuple(), op.dilation_tuple()
    sizes = tuple(extents_of(builder, op.input)[2:])
    extents: list[Extent] = list(extents_of(builder, op.input)[:2])
    extents[1] = outs_per_group * groups
    for axis, (size, k) in enumerate(zip(sizes, (kh, kw), strict=True)):
        extents.append(extent_affine(
            builder, size, dilation[axis] * (k - 1) + 1 + op.output_padding_tuple()[axis]
            - strides[axis] - (top, left)[axis] - (bottom, right)[axis], strides[axis]))
    runtime = any(not isinstance(size, int) for size in sizes)
    if runtime and (kh, kw) == strides and dilation == (1, 1) and groups == 1:
        conv = _one_tap_conv_transpose(builder, op, extents, accumulator)
        return bias_add(builder, op, conv, op.bias, 1, element_type)

    def source_index(
        b: Builder, out: SSAValue, tap: SSAValue, axis: int
    ) -> tuple[SSAValue, SSAValue]:
        """(clamped input index, whether the tap lands on an input element) along `axis`."""
        stride, size = strides[axis], sizes[axis]
        offset = affine(b, [(out, 1), (tap, -dilation[axis])], (top, left)[axis])
        span = index(b, size * stride) if isinstance(size, int) else affine(b, [(size, stride)])
        inside = b.insert(arith.CmpiOp(offset, span, "ult")).result
        if stride > 1:
            remainder = remainder_index(b, offset, stride)
            exact = b.insert(arith.CmpiOp(remainder, index(b, 0), "eq")).result
            inside = b.insert(arith.AndIOp(inside, exact)).result
        return clamp_index(b, divide_index(b, offset, stride), size), inside

    def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        n, o, y, x = i
        rc, rh, rw = r
        channel, local_out = rc, o
        if groups > 1:
            group = divide_index(b, o, outs_per_group)
            channel = affine(b, [(group, in_per_group), (rc, 1)])
            local_out = remainder_index(b, o, outs_per_group)
        iy, hit_y = source_index(b, y, rh, 0)
        ix, hit_x = source_index(b, x, rw, 1)
        hit = b.insert(arith.AndIOp(hit_y, hit_x)).result
        product = binary(
            b, "mul", convert_float(b, read(b, op.input, [n, channel, iy, ix]), accumulator),
            convert_float(b, read(b, op.weight, [channel, local_out, rh, rw]), accumulator),
        )
        return b.insert(arith.SelectOp(hit, product, constant(b, 0, accumulator))).result

    conv = emit_compute(
        builder, op, "conv_transpose2d", TensorType(accumulator, result_type.get_shape()), body,
        tag="conv2d_transpose_nchw", reduce_extents=[in_per_group, kh, kw], combiner="sum",
        init=zero_attr(accumulator), extents=extents if runtime else None,
    )
    return bias_add(builder, op, conv, op.bias, 1, element_type)


ONE_TAP_WEIGHT_TAG = "conv_transpose_taps"
"""The tag of a one-tap transposed conv's weight laid out as a 1x1 conv's
(`_one_tap_conv_transpose`): kept materialised (`tensor-expr-inline`'s `KEEP_TAGS`), so that a
constant weight is laid out at compile time (`loop-fold-constant-nests`)."""


def _one_tap_conv_transpose(builder: Builder, op: ConvTranspose2DOp, extents: list[Extent],
                            accumulator: Attribute) -> SSAValue:
    """A transposed conv whose kernel is its stride (no dilation), each output meeting one tap
    (`conv_transpose2d`), as a 1x1 conv and a depth-to-space: `t[n, k, i, j] = sum over c of
    in[n, c, i, j] * w'[k, c]` with `w'[(o * sh + a) * sw + b, c] = w[c, o, a, b]` (the
    sub-pixel conv, over the input's runtime plane: the 1x1 conv kernels of runtime extents
    take it), then `out[n, o, y, x] = t[n, (o * sh + (y + top) mod sh) * sw + (x + left) mod sw,
    (y + top) / sh, (x + left) / sw]`. One group (`conv_transpose2d` takes groups of
    channels in the gather form)."""
    _, channels, _, _ = shape_of(op.input)
    _, outs, sh_k, sw_k = shape_of(op.weight)
    top, left, _, _ = op.padding_tuple()
    sh, sw = op.strides_tuple()
    taps = outs * sh * sw
    weight_type = tensor_type(op.weight).get_element_type()

    def layout(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        k, c = i
        o = divide_index(b, k, sh * sw)
        a = remainder_index(b, divide_index(b, k, sw), sh)
        return read(b, op.weight, [c, o, a, remainder_index(b, k, sw)])

    weight = emit_compute(builder, op, "conv_transpose_taps", TensorType(weight_type,
                                                                       [taps, channels]),
                          layout, tag=ONE_TAP_WEIGHT_TAG)

    def product(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
        n, k, y, x = i
        return binary(
            b, "mul", convert_float(b, read(b, op.input, [n, r[0], y, x]), accumulator),
            convert_float(b, read(b, weight, [k, r[0]]), accumulator))

    in_dims = extents_of(builder, op.input)
    sub_pixels = emit_compute(
        builder, op, "conv_transpose2d", TensorType(accumulator, [
            tensor_type(op.input).get_shape()[0], taps, *tensor_type(op.input).get_shape()[2:]]),
        product, tag="conv2d_nchw", reduce_extents=[channels], combiner="sum",
        init=zero_attr(accumulator), extents=[in_dims[0], taps, *in_dims[2:]])

    def shuffle(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        n, o, y, x = i
        rows = [affine(b, [(y, 1)], top), affine(b, [(x, 1)], left)]
        a, c = (remainder_index(b, v, s) for v, s in zip(rows, (sh, sw), strict=True))
        k = affine(b, [(o, sh * sw), (a, sw), (c, 1)])
        return read(b, sub_pixels, [n, k, divide_index(b, rows[0], sh),
                                    divide_index(b, rows[1], sw)])

    assert (sh_k, sw_k) == (sh, sw)
    return emit_compute(builder, op, "depth_to_space", TensorType(
        accumulator, tensor_type(op.result).get_shape()), shuffle, tag=INJECTIVE,
        extents=extents)


def bias_add(
    builder: Builder, op: Operation, conv: SSAValue, bias: SSAValue | None,
    channel_pos: int, element_type: Attribute | None = None,
) -> SSAValue:
    """`conv + bias[c]` as the injective compute "bias_add" (conv itself without a bias).

    With `element_type` other than the accumulator's (a bf16 or f16 conv accumulated in f32), the
    bias is added in the accumulator's type and the sum rounded once to `element_type` (the
    compute "round" where there is no bias).
    """
    accumulator = tensor_type(conv).get_element_type()
    element_type = element_type or accumulator
    if bias is None and element_type == accumulator:
        return conv

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        value = read(b, conv, i)
        if bias is not None:
            term = convert_float(b, read(b, bias, [i[channel_pos]]), accumulator) if (
                element_type != accumulator) else read(b, bias, [i[channel_pos]])
            value = binary(b, "add", value, term)
        return convert_float(b, value, element_type)

    result_type = TensorType(element_type, shape_of(conv))
    name = "bias_add" if bias is not None else "round"
    return emit_compute(builder, op, name, result_type, body, tag=INJECTIVE,
                        extents=extents_of(builder, conv))
