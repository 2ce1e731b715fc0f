"""Compute definitions of the quantized graph ops: quantize, dequantize, conv2d_integer,
matmul_integer and lookup.

Counterpart: TVM's QNN canonicalization (`qnn.quantize` → round/clip/cast, `qnn.conv2d` →
`nn.conv2d` over zero-point-shifted int32 operands). The integer conv and matmul shift their
operands in injective computes ("shift") that `tensor-expr-inline` inlines into the reduction,
then reuse graph.conv2d's and graph.matmul's definitions; quantize saturates in f32 and rounds
half to even while converting, the interpreter's values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dlc.dialects.graph.ops_quant import (
    Conv2DIntegerOp,
    DequantizeOp,
    LookupOp,
    MatmulIntegerOp,
    QuantizeOp,
    quantized_range,
)
from dlc.rewrites.topi.common import (
    binary,
    check_element_type,
    constant,
    emit_compute,
    read,
    shape_of,
    tensor_type,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.nn import conv2d, matmul, pad
from dlc.rewrites.topi.registry import compute_definition
from dlc.rewrites.topi.tensor import convert
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, TensorType, f32, i32
from xdsl.ir import Operation, SSAValue


def _param(b: Builder, param: SSAValue, channel: SSAValue | None) -> SSAValue:
    """A rank-0 or rank-1 scale / zero point: its only element, or the element at `channel`."""
    shape = shape_of(param)
    if not shape:
        return read(b, param, [])
    if shape[0] == 1 or channel is None:
        return read(b, param, [constant(b, 0, IndexType())])
    return read(b, param, [channel])


def _channel(i: list[SSAValue], axis: int) -> SSAValue | None:
    """The index along `axis` (None for a rank-0 tensor, whose parameters are per tensor)."""
    return i[axis % len(i)] if i else None


@compute_definition(QuantizeOp)
def quantize(op: QuantizeOp, builder: Builder) -> SSAValue:
    """`out[i...] = convert(clamp(roundeven(x[i...] / scale[c]) + zp[c], lo, hi))`, computed as
    `round(clamp(x / scale, lo - zp, hi - zp)) + zp`: the same value (the bounds are integers,
    and rounding is monotone), in fewer vector instructions — a clamp whose `maxnumf` and
    `minnumf` are one instruction each against a constant bound (NaN quantizes to `lo`), and the
    rounding, conversion and zero point in one f32 add and one i32 subtraction (`_rounded_i32`)."""
    result_type = tensor_type(op.result)
    element = result_type.get_element_type()
    bounds = quantized_range(element)
    assert bounds is not None, "the verifier admits i8 and ui8 results only"
    axis = op.axis_value()

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        channel = _channel(i, axis)
        x = convert(b, read(b, op.x, i), f32)
        scale = _param(b, op.scale, channel)
        zero_point = convert(b, _param(b, op.zero_point, channel), i32)
        float_zero_point = convert(b, zero_point, f32)
        scaled = binary(b, "div", x, scale)
        low, high = (binary(b, "sub", constant(b, bound, f32), float_zero_point)
                     for bound in bounds)
        above = b.insert(arith.MaxnumfOp(scaled, low)).result
        clamped = b.insert(arith.MinnumfOp(above, high)).result
        return convert(b, _rounded_i32(b, clamped, zero_point), element)

    return emit_compute(builder, op, "quantize", result_type, body, tag=INJECTIVE)


MAGIC = 12582912.0
"""1.5 * 2^23: for an f32 `x` with |x| < 2^22, `x + MAGIC` is `MAGIC` plus `x` rounded to an
integer, halves to even (f32's spacing is 1 there), whose bits are `MAGIC_BITS` plus that
integer."""
MAGIC_BITS = 0x4B400000


def _rounded_i32(b: Builder, x: SSAValue, offset: SSAValue) -> SSAValue:
    """`roundeven(x) + offset` as i32, for an f32 `x` of magnitude below 2^22 and an i32
    `offset`: `bitcast(x + 1.5 * 2^23) - (bits(1.5 * 2^23) - offset)`, two vector instructions
    (LLVM's x86 backend scalarizes vector `fptosi.sat`: 16 conversions and 32 compares per 16
    values; and `roundeven` then a conversion is two more). The offset joins in the integer
    subtraction, not the f32 add: `x + (MAGIC + offset)` would break ties toward an even sum, the
    wrong integer when the offset is odd. The rounding is the f32 add's, round to nearest even,
    the default floating-point environment that LLVM assumes."""
    shifted = binary(b, "add", x, constant(b, MAGIC, f32))
    bits = b.insert(arith.BitcastOp(shifted, i32)).result
    bias = b.insert(arith.SubiOp(constant(b, MAGIC_BITS, i32), offset)).result
    return b.insert(arith.SubiOp(bits, bias)).result


@compute_definition(DequantizeOp)
def dequantize(op: DequantizeOp, builder: Builder) -> SSAValue:
    """`out[i...] = f32(i32(x[i...]) - i32(zp[c])) * scale[c]`."""
    result_type = tensor_type(op.result)
    axis = op.axis_value()

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        channel = _channel(i, axis)
        x = convert(b, read(b, op.x, i), i32)
        zero_point = convert(b, _param(b, op.zero_point, channel), i32)
        difference = convert(b, binary(b, "sub", x, zero_point), f32)
        return binary(b, "mul", difference, _param(b, op.scale, channel))

    return emit_compute(builder, op, "dequantize", result_type, body, tag=INJECTIVE)


@compute_definition(LookupOp)
def lookup(op: LookupOp, builder: Builder) -> SSAValue:
    """`out[i...] = table[i32(x[i...]) - lowest]`: one load at a data-dependent index (the
    table, 256 entries, stays in the L1)."""

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        value = convert(b, read(b, op.x, i), i32)
        offset = binary(b, "sub", value, constant(b, op.lowest(), i32))
        position = b.insert(arith.IndexCastOp(offset, IndexType())).result
        return read(b, op.table, [position])

    return emit_compute(builder, op, "lookup", tensor_type(op.result), body, tag=INJECTIVE)


def _shift(builder: Builder, origin: Operation, x: SSAValue, zero_point: SSAValue,
           channel_axis: int | None) -> SSAValue:
    """The compute "shift": `i32(x[i...]) - i32(zp[c])` (`c` the index along `channel_axis`)."""
    shape = shape_of(x)

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        channel = None if channel_axis is None else _channel(i, channel_axis)
        value = convert(b, read(b, x, i), i32)
        return binary(b, "sub", value, convert(b, _param(b, zero_point, channel), i32))

    return emit_compute(builder, origin, "shift", TensorType(i32, shape), body, tag=INJECTIVE)


class _OnShifted:
    """`op` seen with some operands replaced (the shifted i32 tensors), so that graph.conv2d's
    and graph.matmul's definitions serve the integer ops; everything else is `op`'s."""

    def __init__(self, op: Operation, **operands: SSAValue | None) -> None:
        self._op = op
        self._operands = operands

    def __getattr__(self, name: str) -> Any:
        if name in self._operands:
            return self._operands[name]
        return getattr(self._op, name)


def _operands_i32(op: Operation, values: Sequence[SSAValue]) -> None:
    for value in values:
        check_element_type(op, tensor_type(value).get_element_type())


@compute_definition(Conv2DIntegerOp)
def conv2d_integer(op: Conv2DIntegerOp, builder: Builder) -> SSAValue:
    """graph.conv2d's definition over `shift(pad(input))` and `shift(weight)` (per output
    channel). The input is padded in its own 8-bit type with its zero point (which shifts to
    0), so that the conv's reduction reads bytes: `ext(pad[..]) - zp` is the int8 GEMM operand
    that the VNNI schedule (schedule_rules/vnni.py) matches, and the pad buffer is 4x smaller
    than a padded int32 copy."""
    _operands_i32(op, [op.input, op.weight])
    source = op.input
    padding = op.padding_tuple()
    if any(padding):
        layout = op.layout_value()
        h_pos, w_pos = layout.index("H"), layout.index("W")
        top, left, bottom, right = padding
        zero_point = op.input_zero_point
        source = pad(builder, op, op.input, {h_pos: top, w_pos: left},
                     {h_pos: bottom, w_pos: right}, lambda b: _param(b, zero_point, None))
    x = _shift(builder, op, source, op.input_zero_point, None)
    output_channels = op.kernel_layout_value().index("O")
    w = _shift(builder, op, op.weight, op.weight_zero_point, output_channels)
    shifted = _OnShifted(op, input=x, weight=w, bias=op.bias, padding_tuple=lambda: (0, 0, 0, 0))
    return conv2d(shifted, builder)  # type: ignore[arg-type]


@compute_definition(MatmulIntegerOp)
def matmul_integer(op: MatmulIntegerOp, builder: Builder) -> SSAValue:
    """graph.matmul's definition over `shift(lhs)` and `shift(rhs)` (per output column)."""
    _operands_i32(op, [op.lhs, op.rhs])
    a = _shift(builder, op, op.lhs, op.lhs_zero_point, None)
    b = _shift(builder, op, op.rhs, op.rhs_zero_point, -1)
    return matmul(_OnShifted(op, lhs=a, rhs=b), builder)  # type: ignore[arg-type]
