"""Quantized graph ops with exact integer semantics (TVM's QNN dialect: `qnn.quantize`,
`qnn.dequantize`, `qnn.conv2d`, `qnn.dense`).

quantize, dequantize, conv2d_integer and matmul_integer. Scales and zero points are operands
(rank 0 for per-tensor, rank 1 for per-channel along `axis`), so that dynamic quantization (a
scale computed at run time) is the same op; where they are `graph.constant`s the verifier checks
their values (a positive finite scale). Requantization is not an op of its own: it is
`cast(acc) * multiplier` followed by `graph.quantize`, elementwise ops that `graph-fuse-ops`
puts into the integer conv/matmul's epilogue, so no int32 tensor is written between layers.
Each op has a NumPy implementation in `interpreter_quant.py`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from dlc.dialects.graph.attrs import FusionKind, is_float_type
from dlc.dialects.graph.ops import (
    ConstantOp,
    Conv2DOp,
    ConvLayouts,
    GraphCanonicalizationPatterns,
    GraphOp,
    MatmulOp,
    _ints,
    _normalize_axis,
    _tensor,
    i64_array,
    i64_attr,
    op_error,
    with_fusion_kind,
)
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    attr_def,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

I8 = IntegerType(8)
"""int8 (signless, as dlc spells ONNX's INT8)."""
UI8 = IntegerType(8, Signedness.UNSIGNED)
"""uint8."""


def quantized_range(element_type: Attribute) -> tuple[int, int] | None:
    """[lowest, highest] of a quantized element type (i8, ui8, i32), or None for other types."""
    if element_type == I8:
        return -128, 127
    if element_type == UI8:
        return 0, 255
    if element_type == i32:
        return -(2**31), 2**31 - 1
    return None


def _require_quantized(op_name: str, what: str, type: TensorType, allow_i32: bool = False
                       ) -> None:
    element = type.get_element_type()
    allowed = (I8, UI8, i32) if allow_i32 else (I8, UI8)
    if element not in allowed:
        names = "i8, ui8 or i32" if allow_i32 else "i8 or ui8"
        raise op_error(op_name, f"expected {what} of element type {names}, found {type}")


def constant_values(value: SSAValue) -> np.ndarray | None:
    """The array of `value` when a `graph.constant` defines it, else None."""
    owner = value.owner
    return owner.to_array() if isinstance(owner, ConstantOp) else None


def check_scale_values(op_name: str, scale: np.ndarray) -> None:
    """A scale must be positive and finite (0, NaN and inf leave quantization undefined)."""
    flat = np.asarray(scale, dtype=np.float64).reshape(-1)
    bad = [float(v) for v in flat if not (math.isfinite(v) and v > 0)]
    if bad:
        raise op_error(op_name, f"expected positive finite scales, found {bad[0]}")


def _check_params(op_name: str, data: TensorType, scale: Attribute, zero_point: Attribute,
                  axis: int, zero_point_element: Attribute | None) -> None:
    """Shared checks of quantize/dequantize: scale f32 of rank 0 or 1 (then of the length of
    `data`'s `axis`), a zero point of the scale's shape."""
    scale_type = _tensor(op_name, "the scale", scale)
    zp_type = _tensor(op_name, "the zero point", zero_point)
    if scale_type.get_element_type() != f32:
        raise op_error(op_name, f"expected an f32 scale, found {scale_type}")
    if scale_type.get_num_dims() > 1:
        raise op_error(op_name, f"expected a scale of rank 0 or 1, found {scale_type}")
    if zp_type.get_shape() != scale_type.get_shape():
        raise op_error(op_name, f"expected the zero point's shape {zp_type} to match the "
                                f"scale's {scale_type}")
    if zero_point_element is not None and zp_type.get_element_type() != zero_point_element:
        raise op_error(op_name, f"expected a zero point of element type {zero_point_element}, "
                                f"found {zp_type}")
    if scale_type.get_num_dims() == 1:
        rank = data.get_num_dims()
        channel_axis = _normalize_axis(op_name, axis, rank)
        channels = data.get_shape()[channel_axis]
        if channels < 0:
            raise op_error(op_name, f"expected per-channel scales along a static axis, found "
                                    f"axis {axis} of {data} (the dynamic batch)")
        if scale_type.get_shape()[0] != channels:
            raise op_error(op_name, f"expected {channels} per-channel scales (axis {axis} of "
                                    f"{data}), found {scale_type.get_shape()[0]}")


def _check_constant_scale(op: Operation, scale: SSAValue) -> None:
    values = constant_values(scale)
    if values is not None:
        check_scale_values(op.name, values)


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class QuantizeOp(GraphOp):
    """Quantize floats to int8/uint8 (ONNX QuantizeLinear, TVM's `qnn.quantize`).

    Semantics: `result = saturate(round_half_to_even(x / scale) + zero_point)`, saturating to
    the zero point's element type (i8: [-128, 127], ui8: [0, 255]). `scale` (f32) and
    `zero_point` (the result's element type) are of rank 0 (per tensor) or rank 1 (per channel,
    indexed by `x`'s dimension `axis`). NaN quantizes to the lowest value of the type. A scale
    that is not positive and finite is rejected when it is a constant, and undefined
    otherwise.

    Example:
        %q = graph.quantize %x, %s, %z {axis = 1 : i64}
            : (tensor<1x2x4xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<1x2x4xi8>
    """

    name = "graph.quantize"

    LEADING_DYNAMIC: ClassVar[bool] = True

    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    axis = attr_def(IntegerAttr[I64], default_value=i64_attr(1))

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
    assembly_format = (
        "$x `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, x: SSAValue | Operation, scale: SSAValue | Operation,
                 zero_point: SSAValue | Operation, axis: int = 1) -> None:
        types = [SSAValue.get(v).type for v in (x, scale, zero_point)]
        super().__init__(operands=[x, scale, zero_point],
                         result_types=[self.infer_type(*types, axis=axis)],
                         attributes={"axis": i64_attr(axis)})

    @classmethod
    def infer_type(cls, x: Attribute, scale: Attribute, zero_point: Attribute, *, axis: int = 1
                   ) -> TensorType:
        """`x`'s shape with the zero point's element type (i8 or ui8)."""
        x_type = _tensor(cls.name, "the input", x, leading_dynamic=True)
        if not is_float_type(x_type.get_element_type()):
            raise op_error(cls.name, f"expected a floating-point input, found {x_type}")
        zp_type = _tensor(cls.name, "the zero point", zero_point)
        _require_quantized(cls.name, "a zero point", zp_type)
        _check_params(cls.name, x_type, scale, zero_point, axis, None)
        return TensorType(zp_type.get_element_type(), x_type.get_shape())

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.scale.type, self.zero_point.type,
                               axis=self.axis_value())

    def verify_(self) -> None:
        super().verify_()
        _check_constant_scale(self, self.scale)

    def axis_value(self) -> int:
        """The per-channel axis (meaningful for rank-1 scales)."""
        return self.axis.value.data


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class DequantizeOp(GraphOp):
    """Dequantize int8/uint8/int32 values to f32 (ONNX DequantizeLinear, `qnn.dequantize`).

    Semantics: `result = (x - zero_point) * scale`, computed exactly in integers and then in
    f32. `scale` (f32) and `zero_point` (x's element type) are of rank 0 or 1 (per channel along
    `axis`); constant scales must be positive and finite.

    Example:
        %x = graph.dequantize %q, %s, %z
            : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
    """

    name = "graph.dequantize"

    LEADING_DYNAMIC: ClassVar[bool] = True

    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    axis = attr_def(IntegerAttr[I64], default_value=i64_attr(1))

    traits = traits_def(Pure())
    assembly_format = (
        "$x `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, x: SSAValue | Operation, scale: SSAValue | Operation,
                 zero_point: SSAValue | Operation, axis: int = 1) -> None:
        types = [SSAValue.get(v).type for v in (x, scale, zero_point)]
        super().__init__(operands=[x, scale, zero_point],
                         result_types=[self.infer_type(*types, axis=axis)],
                         attributes={"axis": i64_attr(axis)})

    @classmethod
    def infer_type(cls, x: Attribute, scale: Attribute, zero_point: Attribute, *, axis: int = 1
                   ) -> TensorType:
        """`x`'s shape in f32."""
        x_type = _tensor(cls.name, "the input", x, leading_dynamic=True)
        _require_quantized(cls.name, "an input", x_type, allow_i32=True)
        _check_params(cls.name, x_type, scale, zero_point, axis, x_type.get_element_type())
        return TensorType(f32, x_type.get_shape())

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.scale.type, self.zero_point.type,
                               axis=self.axis_value())

    def verify_(self) -> None:
        super().verify_()
        _check_constant_scale(self, self.scale)

    def axis_value(self) -> int:
        """The per-channel axis (meaningful for rank-1 scales)."""
        return self.axis.value.data


def _zero_point_type(op_name: str, what: str, zp: Attribute, data: TensorType,
                     channels: int | None) -> None:
    """A zero point of `data`'s element type, of rank 0 or (when `channels`) of shape
    [channels]."""
    zp_type = _tensor(op_name, what, zp)
    if zp_type.get_element_type() != data.get_element_type():
        raise op_error(op_name, f"expected {what} of element type {data.get_element_type()}, "
                                f"found {zp_type}")
    shape = zp_type.get_shape()
    if shape == () or shape == (1,) or (channels is not None and shape == (channels,)):
        return
    expected = "rank 0" if channels is None else f"rank 0 or shape ({channels})"
    raise op_error(op_name, f"expected {what} of {expected}, found {zp_type}")


def _as_i32(type: Attribute) -> TensorType:
    assert isinstance(type, TensorType)
    return TensorType(i32, type.get_shape())


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class Conv2DIntegerOp(ConvLayouts, GraphOp):
    # ConvLayouts: the accessors of graph.conv2d, so that its interpreter and compute
    # definition serve this op on the shifted (i32) operands.
    """Integer 2-D convolution with zero points, accumulating in i32 (ONNX ConvInteger,
    `qnn.conv2d`).

    Semantics: `graph.conv2d` (same attributes and layouts) of `input - input_zero_point` and
    `weight - weight_zero_point`, both widened to i32, plus the optional i32 `bias`; padding
    contributes 0 (the input's zero point). `input` and `weight` are i8 or ui8 (each its own);
    `input_zero_point` has the input's element type and rank 0, `weight_zero_point` the
    weight's element type and rank 0 or shape (O) (per output channel). The result is i32;
    overflow is undefined.

    Example:
        %r = graph.conv2d_integer %x, %w, %xz, %wz {padding = array<i64: 1, 1, 1, 1>}
            : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<4xi8>)
            -> tensor<1x4x8x8xi32>
    """

    name = "graph.conv2d_integer"

    LEADING_DYNAMIC: ClassVar[bool] = True

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    weight_zero_point = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    strides = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))
    padding = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([0, 0, 0, 0]))
    dilation = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))
    groups = attr_def(IntegerAttr[I64], default_value=i64_attr(1))
    layout = attr_def(StringAttr, default_value=StringAttr("NCHW"))
    kernel_layout = attr_def(StringAttr, default_value=StringAttr("OIHW"))

    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight `,` $input_zero_point `,` $weight_zero_point (`,` $bias^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        weight: SSAValue | Operation,
        input_zero_point: SSAValue | Operation,
        weight_zero_point: SSAValue | Operation,
        bias: SSAValue | Operation | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ) -> None:
        attributes = {
            "strides": i64_array(strides), "padding": i64_array(padding),
            "dilation": i64_array(dilation), "groups": i64_attr(groups),
            "layout": StringAttr("NCHW"), "kernel_layout": StringAttr("OIHW"),
        }
        operands = [input, weight, input_zero_point, weight_zero_point,
                    [] if bias is None else [bias]]
        types = [SSAValue.get(v).type for v in (input, weight, input_zero_point,
                                                weight_zero_point)]
        bias_type = None if bias is None else SSAValue.get(bias).type
        result = self._infer(*types, bias_type, strides, padding, dilation, groups,
                             "NCHW", "OIHW")
        super().__init__(operands=operands, result_types=[result], attributes=attributes)

    @classmethod
    def _infer(cls, x: Attribute, w: Attribute, xz: Attribute, wz: Attribute,
               bias: Attribute | None, strides: Sequence[int], padding: Sequence[int],
               dilation: Sequence[int], groups: int, layout: str, kernel_layout: str
               ) -> TensorType:
        x_type = _tensor(cls.name, "the input", x, leading_dynamic=True)
        w_type = _tensor(cls.name, "the weight", w)
        _require_quantized(cls.name, "an input", x_type)
        _require_quantized(cls.name, "a weight", w_type)
        if bias is not None:
            bias_type = _tensor(cls.name, "the bias", bias)
            if bias_type.get_element_type() != i32:
                raise op_error(cls.name, f"expected an i32 bias, found {bias_type}")
        try:
            result = Conv2DOp.infer_type(
                _as_i32(x_type), _as_i32(w_type), bias, strides=strides, padding=padding,
                dilation=dilation, groups=groups, layout=layout, kernel_layout=kernel_layout)
        except Exception as e:  # the conv's shape rules, reported under this op's name
            raise op_error(cls.name, str(e).split(" op ", 1)[-1]) from None
        channels = w_type.get_shape()[kernel_layout.index("O")]
        _zero_point_type(cls.name, "the input zero point", xz, x_type, None)
        _zero_point_type(cls.name, "the weight zero point", wz, w_type, channels)
        return result

    def inferred_result_type(self) -> TensorType:
        return self._infer(
            self.input.type, self.weight.type, self.input_zero_point.type,
            self.weight_zero_point.type, None if self.bias is None else self.bias.type,
            _ints(self.strides), _ints(self.padding), _ints(self.dilation),
            self.groups.value.data, self.layout.data, self.kernel_layout.data)


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class MatmulIntegerOp(GraphOp):
    """Integer matrix product with zero points, accumulating in i32 (ONNX MatMulInteger,
    `qnn.dense` / `qnn.batch_matmul`).

    Semantics: `graph.matmul` of `lhs - lhs_zero_point` and `rhs - rhs_zero_point`, both
    widened to i32 (numpy.matmul's shapes). `lhs` and `rhs` are i8 or ui8; `lhs_zero_point` has
    the lhs's element type and rank 0; `rhs_zero_point` the rhs's element type and rank 0 or
    shape (N) (per output column). The result is i32; overflow is undefined.

    Example:
        %r = graph.matmul_integer %a, %b, %az, %bz
            : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<2x4xi32>
    """

    name = "graph.matmul_integer"

    LEADING_DYNAMIC: ClassVar[bool] = True

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_zero_point = operand_def(TensorType)
    rhs_zero_point = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs `,` $lhs_zero_point `,` $rhs_zero_point attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation,
                 lhs_zero_point: SSAValue | Operation, rhs_zero_point: SSAValue | Operation
                 ) -> None:
        operands = [lhs, rhs, lhs_zero_point, rhs_zero_point]
        types = [SSAValue.get(v).type for v in operands]
        super().__init__(operands=operands, result_types=[self.infer_type(*types)])

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute, lhs_zp: Attribute, rhs_zp: Attribute
                   ) -> TensorType:
        """numpy.matmul's result shape, in i32."""
        lhs_type = _tensor(cls.name, "the lhs", lhs, leading_dynamic=True)
        rhs_type = _tensor(cls.name, "the rhs", rhs, leading_dynamic=True)
        _require_quantized(cls.name, "an lhs", lhs_type)
        _require_quantized(cls.name, "an rhs", rhs_type)
        try:
            result = MatmulOp.infer_type(_as_i32(lhs_type), _as_i32(rhs_type))
        except Exception as e:
            raise op_error(cls.name, str(e).split(" op ", 1)[-1]) from None
        _zero_point_type(cls.name, "the lhs zero point", lhs_zp, lhs_type, None)
        _zero_point_type(cls.name, "the rhs zero point", rhs_zp, rhs_type,
                         rhs_type.get_shape()[-1])
        return result

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.lhs.type, self.rhs.type, self.lhs_zero_point.type,
                               self.rhs_zero_point.type)


TABLE_ENTRIES = 256
"""Entries of a `graph.lookup` table: one for each value of an 8-bit integer."""


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class LookupOp(GraphOp):
    """Look each 8-bit integer up in a table (TFLite's LUT for int8 activations, ONNX Runtime's
    QLinearLookup): any elementwise function of an int8/uint8 tensor, precomputed.

    Semantics: `result[i...] = table[x[i...] - lowest]`, with `lowest` the least value of x's
    element type (ui8: 0, i8: -128), so that entry k holds the function at `lowest + k`.
    `table` is a rank-1 tensor of 256 entries of the result's element type (any); the result
    has x's shape. `graph-fold-lookup-tables` makes these from chains of elementwise ops (a
    requantized GELU: dequantize, erf, quantize...) that depend on one 8-bit tensor alone.

    Example:
        %y = graph.lookup %x, %t : (tensor<2x3xui8>, tensor<256xi8>) -> tensor<2x3xi8>
    """

    name = "graph.lookup"

    LEADING_DYNAMIC: ClassVar[bool] = True

    x = operand_def(TensorType)
    table = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$x `,` $table attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, table: SSAValue | Operation) -> None:
        types = [SSAValue.get(v).type for v in (x, table)]
        super().__init__(operands=[x, table], result_types=[self.infer_type(*types)])

    @classmethod
    def infer_type(cls, x: Attribute, table: Attribute) -> TensorType:
        """`x`'s shape with the table's element type."""
        x_type = _tensor(cls.name, "the input", x, leading_dynamic=True)
        _require_quantized(cls.name, "an input", x_type)
        table_type = _tensor(cls.name, "the table", table)
        if table_type.get_shape() != (TABLE_ENTRIES,):
            raise op_error(cls.name, f"expected a table of shape ({TABLE_ENTRIES}), found "
                                     f"{table_type}")
        return TensorType(table_type.get_element_type(), x_type.get_shape())

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.table.type)

    def lowest(self) -> int:
        """The least value of x's element type: the input of entry 0."""
        bounds = quantized_range(self.x.type.get_element_type())
        assert bounds is not None, "the verifier admits i8 and ui8 inputs only"
        return bounds[0]


QUANT_OPS = (QuantizeOp, DequantizeOp, Conv2DIntegerOp, MatmulIntegerOp, LookupOp)
"""The quantized ops, in the order the dialect lists them."""
