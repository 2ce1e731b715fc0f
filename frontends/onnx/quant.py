"""Converters of ONNX's quantization ops, in both formats ONNX Runtime writes.

QDQ format: `QuantizeLinear` / `DequantizeLinear` around float ops (graph.quantize /
graph.dequantize; `graph-fold-qdq` later turns the pairs around convs and matmuls into integer
ops). Operator format: `QLinearConv`, `QLinearMatMul`, `ConvInteger`, `MatMulInteger`,
`DynamicQuantizeLinear`, and the `com.microsoft` ops of ORT's quantizers that have a public spec
(`QLinearAdd`, `QGemm`, `QLinearGlobalAveragePool`, `MatMulIntegerToFloat`,
`DynamicQuantizeMatMul`). TVM's counterpart is
`relay.frontend.onnx`'s QLinear* converters onto the QNN dialect.

Requantization (`QLinearConv`, `QLinearMatMul`) is `quantize(f32(acc) * (sx * sw / sy), 1, zy)`,
the multiplier computed in float32 as ONNX Runtime does, so that it fuses into the integer op's
epilogue.
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph import (
    AddOp,
    CastOp,
    DivOp,
    GlobalAvgPool2DOp,
    MulOp,
    NegOp,
    ReduceOp,
    ReshapeOp,
    SubOp,
    TransposeOp,
)
from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.interpreter_quant import quantize
from dlc.dialects.graph.ops import ConstantOp, MaxOp, MinOp
from dlc.dialects.graph.ops_quant import (
    Conv2DIntegerOp,
    DequantizeOp,
    MatmulIntegerOp,
    QuantizeOp,
    check_scale_values,
)
from dlc.frontends.onnx.common import normalize_axis, shape_of, window_attrs
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.nn import check_kernel_shape, pads_2d
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from onnx import TensorProto
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

_QUANTIZED_DTYPES = (np.dtype(np.int8), np.dtype(np.uint8))

# ---------------------------------------------------------------------------------------------
# Scales and zero points
# ---------------------------------------------------------------------------------------------


def _check_scale(node: NodeContext, index: int) -> None:
    """A scale known at import time must be positive and finite: an error naming the node."""
    if not node.has_input(index):
        raise node.error(f"expected a scale as input {index}, found none")
    values = node.const(index)
    if values is None:
        return
    try:
        check_scale_values("graph.quantize", values)
    except VerifyException:
        bad = [float(v) for v in np.asarray(values, np.float64).reshape(-1)
               if not (np.isfinite(v) and v > 0)]
        raise node.error(f"expected positive finite scales (input {index}), found "
                         f"{bad[0]}") from None


def _param(node: NodeContext, value: SSAValue) -> SSAValue:
    """A scale or zero point as the ops want it: rank 0 when it has one element, else rank 1."""
    shape = shape_of(value)
    if int(np.prod(shape)) == 1 and shape != ():
        if isinstance(value.owner, ConstantOp):  # stays a constant, for graph-fold-qdq
            return node.constant(value.owner.to_array().reshape(()))
        return node.emit(ReshapeOp(value, []))
    if len(shape) > 1:
        raise node.error(f"expected a scale or zero point of rank 0 or 1, found shape "
                         f"{list(shape)}")
    return value


def _zero_point(node: NodeContext, index: int, like_scale: int, dtype: np.dtype
                ) -> SSAValue:
    """Input `index` (a zero point), or zeros of `dtype` shaped like the scale at `like_scale`
    when absent."""
    if node.has_input(index):
        array = node.const(index)
        if array is not None and array.dtype not in (*_QUANTIZED_DTYPES, np.dtype(np.int32)):
            raise node.error(f"expected an int8, uint8 or int32 zero point, found {array.dtype}")
        return node.input(index)
    return node.constant(np.zeros(node.shape(like_scale), dtype))


def _output_dtype(node: NodeContext) -> np.dtype:
    """QuantizeLinear's result type without a zero point: `output_dtype` (opset 21) or uint8."""
    code = node.attr_int("output_dtype", 0) if node.has_attr("output_dtype") else 0
    if code in (0, TensorProto.UINT8):
        return np.dtype(np.uint8)
    if code == TensorProto.INT8:
        return np.dtype(np.int8)
    raise node.error(f"expected output_dtype UINT8 or INT8, found {code}")


def _axis(node: NodeContext, scale_index: int) -> int:
    rank = node.rank(0)
    axis = node.attr_int("axis", 1)
    if node.rank(scale_index) == 0 or int(np.prod(node.shape(scale_index))) == 1:
        return 0  # per tensor: the axis is not used
    return normalize_axis(node, axis, rank)


def _check_zero_point_range(node: NodeContext, zero_point: SSAValue, element: object) -> None:
    """A zero point must have the quantized element type (so lie in its range)."""
    zp_type = zero_point.type
    assert isinstance(zp_type, TensorType)
    if zp_type.get_element_type() != element:
        raise node.error(f"expected a zero point of element type {element}, found "
                         f"{zp_type.get_element_type()}")


# ---------------------------------------------------------------------------------------------
# QDQ
# ---------------------------------------------------------------------------------------------


@register("QuantizeLinear")
class QuantizeLinear(OnnxOpConverter):
    """`QuantizeLinear`: graph.quantize (computed at import time for a constant input)."""

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        _check_scale(node, 1)
        zp = _zero_point(node, 2, 1, _output_dtype(node))
        if zp_type_np(zp) not in _QUANTIZED_DTYPES:
            raise node.error(f"expected an int8 or uint8 zero point, found {zp_type_np(zp)}")
        axis = _axis(node, 1)
        x, scale = node.const(0), node.const(1)
        zp_array = node.const(2) if node.has_input(2) else np.zeros(node.shape(1), zp_type_np(zp))
        if x is not None and scale is not None and zp_array is not None:
            def flat(a: np.ndarray) -> np.ndarray:
                return a.reshape(-1) if a.size > 1 else a.reshape(())

            return [quantize(x.astype(np.float32), flat(scale), flat(zp_array), axis)]
        return [node.emit(QuantizeOp(_float32(node, node.input(0)), _param(node, node.input(1)),
                                     _param(node, zp), axis))]


def zp_type_np(zp: SSAValue) -> np.dtype:
    """The NumPy dtype of a zero point value."""
    zp_type = zp.type
    assert isinstance(zp_type, TensorType)
    return to_numpy_dtype(zp_type.get_element_type())


def _float32(node: NodeContext, value: SSAValue) -> SSAValue:
    value_type = value.type
    assert isinstance(value_type, TensorType)
    if value_type.get_element_type() == f32:
        return value
    return node.emit(CastOp(value, f32))


@register("DequantizeLinear")
class DequantizeLinear(OnnxOpConverter):
    """`DequantizeLinear`: graph.dequantize (kept for constant inputs too, so that
    `graph-fold-qdq` sees the integer weights)."""

    fold_constant_inputs = False

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        _check_scale(node, 1)
        x = node.input(0)
        x_type = x.type
        assert isinstance(x_type, TensorType)
        zp = _zero_point(node, 2, 1, zp_type_np_of(x_type))
        _check_zero_point_range(node, zp, x_type.get_element_type())
        return [node.emit(DequantizeOp(x, _param(node, node.input(1)), _param(node, zp),
                                       _axis(node, 1)))]


def zp_type_np_of(x_type: TensorType) -> np.dtype:
    """The NumPy dtype of tensors of `x_type`."""
    return to_numpy_dtype(x_type.get_element_type())


# ---------------------------------------------------------------------------------------------
# Integer convolutions and matmuls
# ---------------------------------------------------------------------------------------------


def _conv_integer(node: NodeContext, x: int, w: int, xz: SSAValue, wz: SSAValue,
                  bias: SSAValue | None) -> SSAValue:
    if node.rank(x) != 4 or node.rank(w) != 4:
        raise node.error(f"expected a 2-D convolution (input and weight of rank 4), found "
                         f"{node.input_type(x)} and {node.input_type(w)}")
    kernel = list(node.shape(w)[2:])
    check_kernel_shape(node, kernel)
    strides, dilations, pads = window_attrs(node, node.shape(x)[2:], kernel)
    try:
        return node.emit(Conv2DIntegerOp(
            node.input(x), node.input(w), _param(node, xz), _param(node, wz), bias,
            strides=strides, padding=pads_2d(pads), dilation=dilations,
            groups=node.attr_int("group", 1)))
    except VerifyException as e:
        raise node.error(str(e)) from None


def _matmul_integer(node: NodeContext, a: int, b: int, az: SSAValue, bz: SSAValue) -> SSAValue:
    if int(np.prod(shape_of(az))) != 1:
        raise node.error(f"expected a per-tensor zero point of A, found shape "
                         f"{list(shape_of(az))}")
    try:
        return node.emit(MatmulIntegerOp(node.input(a), node.input(b), _param(node, az),
                                         _param(node, bz)))
    except VerifyException as e:
        raise node.error(str(e)) from None


def _default_zp(node: NodeContext, index: int, data: int) -> SSAValue:
    """Zero point input `index`, or a scalar 0 of input `data`'s type when absent."""
    if node.has_input(index):
        return node.input(index)
    return node.constant(np.zeros((), zp_type_np_of(node.input_type(data))))


@register("ConvInteger")
class ConvInteger(OnnxOpConverter):
    """`ConvInteger`: graph.conv2d_integer (2-D)."""

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        return [_conv_integer(node, 0, 1, _default_zp(node, 2, 0), _default_zp(node, 3, 1),
                              None)]


@register("MatMulInteger")
class MatMulInteger(OnnxOpConverter):
    """`MatMulInteger`: graph.matmul_integer."""

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        return [_matmul_integer(node, 0, 1, _default_zp(node, 2, 0), _default_zp(node, 3, 1))]


def requantize(node: NodeContext, acc: SSAValue, multiplier: SSAValue, y_zero_point: SSAValue
               ) -> SSAValue:
    """`quantize(f32(acc) * multiplier, 1, y_zero_point)`: the int32 accumulator rescaled and
    saturated into the output's type (elementwise, so it fuses into acc's producer)."""
    scaled = node.emit(MulOp(node.emit(CastOp(acc, f32)), multiplier))
    one = node.constant(np.array(1.0, np.float32))
    return node.emit(QuantizeOp(scaled, one, _param(node, y_zero_point), 1))


def _multiplier(node: NodeContext, x_scale: int, w_scale: int, y_scale: int | None,
                shape: list[int], axis: int) -> SSAValue:
    """`x_scale * w_scale / y_scale` in float32, broadcast along `axis` of a `shape` result."""
    scales = [node.input(i) for i in (x_scale, w_scale) + (() if y_scale is None else (y_scale,))]
    arrays = [node.const(i) for i in (x_scale, w_scale) + (() if y_scale is None else (y_scale,))]
    if all(a is not None for a in arrays):
        m = np.float32(arrays[0].reshape(-1)[0]) * arrays[1].astype(np.float32).reshape(-1)
        if y_scale is not None:
            m = m / np.float32(arrays[2].reshape(-1)[0])
        m = m.astype(np.float32)
        if m.size > 1:
            bshape = [1] * len(shape)
            bshape[axis] = m.size
            m = m.reshape(bshape)
        else:
            m = m.reshape(())
        return node.constant(m)
    product = node.emit(MulOp(_param(node, scales[0]), _param(node, scales[1])))
    if y_scale is not None:
        product = node.emit(DivOp(product, _param(node, scales[2])))
    if len(shape_of(product)) == 1 and shape_of(product)[0] > 1:
        bshape = [1] * len(shape)
        bshape[axis] = shape_of(product)[0]
        product = node.emit(ReshapeOp(product, bshape))
    return product


@register("QLinearConv")
class QLinearConv(OnnxOpConverter):
    """`QLinearConv`: conv2d_integer (with the int32 bias), then requantization."""

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        for index in (1, 4, 6):
            _check_scale(node, index)
        bias = node.input(8) if node.has_input(8) else None
        acc = _conv_integer(node, 0, 3, node.input(2), node.input(5), bias)
        multiplier = _multiplier(node, 1, 4, 6, list(shape_of(acc)), 1)
        return [requantize(node, acc, multiplier, node.input(7))]


@register("QLinearMatMul")
class QLinearMatMul(OnnxOpConverter):
    """`QLinearMatMul`: matmul_integer, then requantization (per-column scales allowed)."""

    @classmethod
    def _impl_v10(cls, node: NodeContext) -> list[ConvertedValue]:
        for index in (1, 4, 6):
            _check_scale(node, index)
        acc = _matmul_integer(node, 0, 3, node.input(2), node.input(5))
        shape = list(shape_of(acc))
        multiplier = _multiplier(node, 1, 4, 6, shape, len(shape) - 1)
        return [requantize(node, acc, multiplier, node.input(7))]


def dynamic_quantize(node: NodeContext, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """DynamicQuantizeLinear: uint8 `y`, `scale = (max(0, max x) - min(0, min x)) / 255` and
    `zero_point = saturate(round(-min(0, min x) / scale))`, all computed at run time."""
    rank = len(shape_of(x))
    zero = node.constant(np.array(0.0, np.float32))
    low = node.emit(MinOp(node.emit(ReduceOp(x, "min", list(range(rank)), False)), zero))
    high = node.emit(MaxOp(node.emit(ReduceOp(x, "max", list(range(rank)), False)), zero))
    scale = node.emit(DivOp(node.emit(SubOp(high, low)),
                            node.constant(np.array(255, np.float32))))
    zp = node.emit(QuantizeOp(node.emit(NegOp(low)), scale,
                              node.constant(np.array(0, np.uint8)), 1))
    return node.emit(QuantizeOp(x, scale, zp, 1)), scale, zp


@register("DynamicQuantizeLinear")
class DynamicQuantizeLinear(OnnxOpConverter):
    """`DynamicQuantizeLinear`: uint8 quantization with a scale and zero point from the input's
    range, computed at run time."""

    @classmethod
    def _impl_v11(cls, node: NodeContext) -> list[ConvertedValue]:
        return list(dynamic_quantize(node, _float32(node, node.input(0))))


# ---------------------------------------------------------------------------------------------
# com.microsoft (ONNX Runtime's contrib ops with a public spec)
# ---------------------------------------------------------------------------------------------


@register("QLinearAdd", "com.microsoft")
class QLinearAdd(OnnxOpConverter):
    """`com.microsoft.QLinearAdd`: `quantize(dequantize(A) + dequantize(B), C_scale, C_zp)`."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        for index in (1, 4, 6):
            _check_scale(node, index)
        a = node.emit(DequantizeOp(node.input(0), _param(node, node.input(1)),
                                   _param(node, _default_zp(node, 2, 0)), 1))
        b = node.emit(DequantizeOp(node.input(3), _param(node, node.input(4)),
                                   _param(node, _default_zp(node, 5, 3)), 1))
        total = node.emit(AddOp(a, b))
        return [node.emit(QuantizeOp(total, _param(node, node.input(6)),
                                     _param(node, _default_zp(node, 7, 0)), 1))]


def _to_float(node: NodeContext, acc: SSAValue, scale: SSAValue, bias: SSAValue | None
              ) -> SSAValue:
    result = node.emit(MulOp(node.emit(CastOp(acc, f32)), scale))
    return result if bias is None else node.emit(AddOp(result, bias))


@register("MatMulIntegerToFloat", "com.microsoft")
class MatMulIntegerToFloat(OnnxOpConverter):
    """`com.microsoft.MatMulIntegerToFloat`: `f32(MatMulInteger(A, B, a_zp, b_zp)) * a_scale *
    b_scale (+ bias)`."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        acc = _matmul_integer(node, 0, 1, _default_zp(node, 4, 0), _default_zp(node, 5, 1))
        shape = list(shape_of(acc))
        scale = _multiplier(node, 2, 3, None, shape, len(shape) - 1)
        return [_to_float(node, acc, scale, node.input(6) if node.has_input(6) else None)]


@register("DynamicQuantizeMatMul", "com.microsoft")
class DynamicQuantizeMatMul(OnnxOpConverter):
    """`com.microsoft.DynamicQuantizeMatMul`: A quantized to uint8 at run time
    (DynamicQuantizeLinear), MatMulInteger with B, scaled back to float (+ bias)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        a, a_scale, a_zp = dynamic_quantize(node, _float32(node, node.input(0)))
        b_zp = _default_zp(node, 3, 1)
        try:
            acc = node.emit(MatmulIntegerOp(a, node.input(1), a_zp, _param(node, b_zp)))
        except VerifyException as e:
            raise node.error(str(e)) from None
        _check_scale(node, 2)
        b_scale = _param(node, node.input(2))
        scale = node.emit(MulOp(a_scale, b_scale))
        return [_to_float(node, acc, scale, node.input(4) if node.has_input(4) else None)]


@register("QGemm", "com.microsoft")
class QGemm(OnnxOpConverter):
    """`com.microsoft.QGemm`: `alpha * (A' - a_zp) @ (B' - b_zp)` in int32 plus the int32 C
    (at scale a_scale * b_scale), scaled by `a_scale * b_scale`, then quantized to
    (y_scale, y_zero_point) when they are given, else float."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        for index in (1, 4):
            _check_scale(node, index)
        if node.attr_int("transA", 0):
            raise node.error("expected transA = 0 (a transposed activation is not supported)")
        a, b = node.input(0), node.input(3)
        b_zp = _param(node, _default_zp(node, 5, 3))
        if node.attr_int("transB", 0):
            b = node.emit(TransposeOp(b, [1, 0]))
        try:
            acc = node.emit(MatmulIntegerOp(a, b, _param(node, _default_zp(node, 2, 0)), b_zp))
        except VerifyException as e:
            raise node.error(str(e)) from None
        if node.has_input(6):
            acc = node.emit(AddOp(acc, node.input(6)))
        shape = list(shape_of(acc))
        alpha = node.attr_float("alpha", 1.0)
        quantized_output = node.has_input(7)
        if quantized_output:
            _check_scale(node, 7)
        multiplier = _multiplier(node, 1, 4, 7 if quantized_output else None, shape,
                                 len(shape) - 1)
        if alpha != 1.0:
            multiplier = node.emit(MulOp(multiplier, node.constant(np.array(alpha, np.float32))))
        if not quantized_output:
            return [node.emit(MulOp(node.emit(CastOp(acc, f32)), multiplier))]
        return [requantize(node, acc, multiplier, _default_zp(node, 8, 0))]


@register("QLinearGlobalAveragePool", "com.microsoft")
class QLinearGlobalAveragePool(OnnxOpConverter):
    """`com.microsoft.QLinearGlobalAveragePool`: `quantize(global_avg_pool(dequantize(X)))`
    (NCHW; channels_last = 0)."""

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        for index in (1, 3):
            _check_scale(node, index)
        if node.attr_int("channels_last", 0):
            raise node.error("expected channels_last = 0 (NCHW)")
        if node.rank(0) != 4:
            raise node.error(f"expected an input of rank 4, found {node.input_type(0)}")
        x = node.emit(DequantizeOp(node.input(0), _param(node, node.input(1)),
                                   _param(node, _default_zp(node, 2, 0)), 1))
        pooled = node.emit(GlobalAvgPool2DOp(x))
        return [node.emit(QuantizeOp(pooled, _param(node, node.input(3)),
                                     _param(node, _default_zp(node, 4, 0)), 1))]
