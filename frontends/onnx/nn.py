"""Converters of ONNX ops with weights: Conv and ConvTranspose (1-D and 2-D), MatMul, Gemm."""

from __future__ import annotations

from dlc.dialects.graph import AddOp, Conv2DOp, MatmulOp, TransposeOp
from dlc.dialects.graph.ops_tensor import ConvTranspose2DOp
from dlc.frontends.onnx.common import (
    reshape,
    scaled,
    shape_of,
    split_padding,
    strides_and_dilations,
    window_attrs,
)
from dlc.frontends.onnx.context import NodeContext, describe_node
from dlc.frontends.onnx.errors import DynamicInputError
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from xdsl.ir import SSAValue


def check_kernel_shape(node: NodeContext, kernel: list[int]) -> None:
    """Attribute `kernel_shape`, where given, must equal the weight's spatial dims."""
    declared = node.attr_ints("kernel_shape", None)
    if declared is not None and declared != kernel:
        raise node.error(f"expected kernel_shape {declared} to match the weight's spatial dims "
                         f"{kernel}")


def spatial_rank(node: NodeContext, index: int = 0) -> int:
    """The number of spatial dims of an N x C x D1 x ... input: 1 or 2 (dlc has 2-D windows)."""
    rank = node.rank(index)
    if rank not in (3, 4):
        raise node.error(f"expected a 1-D or 2-D {node.op_type} (an input of rank 3 or 4), "
                         f"found rank {rank}")
    return rank - 2


def as_2d(node: NodeContext, value: SSAValue) -> SSAValue:
    """An N x C x L tensor as N x C x 1 x L (1-D windows run as 2-D ones of height 1)."""
    n, c, length = shape_of(value)
    return reshape(node, value, [n, c, 1, length])


def pads_2d(pads: list[int]) -> list[int]:
    """ONNX pads of a 1-D or 2-D window as dlc's [top, left, bottom, right]."""
    if len(pads) == 2:  # [begin, end] of the one spatial dim, which becomes W
        return [0, pads[0], 0, pads[1]]
    return pads


@register("Conv")
class Conv(OnnxOpConverter):
    """`Conv`: graph.conv2d; a 1-D convolution runs as a 2-D one of height 1."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        spatial = spatial_rank(node)
        if node.rank(1) != spatial + 2:
            raise node.error(f"expected a weight of rank {spatial + 2}, found "
                             f"{node.input_type(1)}")
        kernel = list(node.shape(1)[2:])
        check_kernel_shape(node, kernel)
        strides, dilations, pads = window_attrs(node, node.shape(0)[2:], kernel)
        x, w = node.input(0), node.input(1)
        bias = node.input(2) if node.has_input(2) else None
        if spatial == 1:
            x, w = as_2d(node, x), as_2d(node, w)
            strides, dilations = [1, *strides], [1, *dilations]
        conv = node.emit(Conv2DOp(x, w, bias, strides=strides, padding=pads_2d(pads),
                                  dilation=dilations, groups=node.attr_int("group", 1)))
        if spatial == 1:
            n, o, _, length = shape_of(conv)
            conv = reshape(node, conv, [n, o, length])
        return [conv]


def transpose_padding(node: NodeContext, spatial: list[int], kernel: list[int],
                      strides: list[int], dilations: list[int], extra: list[int]
                      ) -> tuple[list[int], list[int]]:
    """ConvTranspose's (pads, output_padding): from attribute `output_shape` or `auto_pad`
    SAME_* (total padding split as ONNX says), else attribute `pads`. A negative end pad
    becomes output padding (extra zero rows at the end)."""
    rank = len(spatial)
    auto_pad = node.attr_str("auto_pad", "NOTSET")
    output_shape = node.attr_ints("output_shape", None)
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [size * s for size, s in zip(spatial, strides, strict=True)]
    if output_shape is None:
        pads = [0] * (2 * rank) if auto_pad == "VALID" else node.attr_ints("pads", [0] * (2 * rank))
        assert pads is not None
        if len(pads) != 2 * rank:
            raise node.error(f"expected {2 * rank} pads, found {len(pads)}")
    else:
        output_shape = output_shape[-rank:]
        if len(output_shape) != rank:
            raise node.error(f"expected {rank} output_shape values, found {output_shape}")
        if node.attr_ints("output_shape", None) is not None and any(d < 0 for d in spatial):
            raise DynamicInputError(  # pads that depend on the runtime sizes
                f"{describe_node(node.node)}: expected no output_shape over runtime sizes, found "
                f"{output_shape} for {list(spatial)}", node.node.input[0])
        totals = [strides[i] * (spatial[i] - 1) + extra[i] + (kernel[i] - 1) * dilations[i] + 1
                  - output_shape[i] for i in range(rank)]
        pads = split_padding(totals, auto_pad)
    output_padding = list(extra)
    for i in range(rank):
        if pads[rank + i] < 0:
            output_padding[i] -= pads[rank + i]
            pads[rank + i] = 0
    if any(p < 0 for p in pads):
        raise node.error(f"expected non-negative pads, found {pads}")
    return pads, output_padding


@register("ConvTranspose")
class ConvTranspose(OnnxOpConverter):
    """`ConvTranspose`: graph.conv_transpose2d; 1-D runs as 2-D of height 1."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        spatial_dims = spatial_rank(node)
        if node.rank(1) != spatial_dims + 2:
            raise node.error(f"expected a weight of rank {spatial_dims + 2}, found "
                             f"{node.input_type(1)}")
        kernel = list(node.shape(1)[2:])
        check_kernel_shape(node, kernel)
        spatial = list(node.shape(0)[2:])
        strides, dilations = strides_and_dilations(node, spatial_dims)
        extra = node.attr_ints("output_padding", [0] * spatial_dims)
        assert extra is not None
        if len(extra) != spatial_dims:
            raise node.error(f"expected {spatial_dims} output_padding values, found {extra}")
        pads, output_padding = transpose_padding(node, spatial, kernel, strides, dilations,
                                                 extra)
        x, w = node.input(0), node.input(1)
        bias = node.input(2) if node.has_input(2) else None
        if spatial_dims == 1:
            x, w = as_2d(node, x), as_2d(node, w)
            strides, dilations = [1, *strides], [1, *dilations]
            output_padding = [0, *output_padding]
        conv = node.emit(ConvTranspose2DOp(
            x, w, bias, strides=strides, padding=pads_2d(pads), output_padding=output_padding,
            dilation=dilations, groups=node.attr_int("group", 1)))
        if spatial_dims == 1:
            n, o, _, length = shape_of(conv)
            conv = reshape(node, conv, [n, o, length])
        return [conv]


@register("MatMul")
class MatMul(OnnxOpConverter):
    """`MatMul`: graph.matmul (both follow numpy.matmul)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        return [node.emit(MatmulOp(node.input(0), node.input(1)))]


@register("Gemm")
class Gemm(OnnxOpConverter):
    """`Gemm`: `alpha * op(A) @ op(B) + beta * C` as graph.transpose, matmul, mul and add;
    C is optional from opset 11."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        operands = []
        for index, flag in ((0, "transA"), (1, "transB")):
            if node.rank(index) != 2:
                raise node.error(f"expected a 2-D input {index}, found {node.input_type(index)}")
            value = node.input(index)
            if node.attr_int(flag, 0):
                value = node.emit(TransposeOp(value, [1, 0]))
            operands.append(value)
        product = scaled(node, node.emit(MatmulOp(*operands)), node.attr_float("alpha", 1.0))
        if not node.has_input(2):
            return [product]
        c = scaled(node, node.input(2), node.attr_float("beta", 1.0), like=2)
        result = node.emit(AddOp(product, c))
        if shape_of(result) != shape_of(product):
            raise node.error(f"expected C {node.input_type(2)} to broadcast to "
                             f"{product.type}")
        return [result]
