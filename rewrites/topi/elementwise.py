"""Compute definitions of the elementwise graph ops: broadcasting binary ops, unary ops, clip.

Counterpart: TVM's `topi.add` … (topi/broadcast.py) and `topi.nn.relu`, `topi.sigmoid`,
`topi.clip` (topi/math.py). Each op is one injective compute named after the op (`add`, `relu`),
tagged "injective"; broadcast operands read index 0 along their broadcast axes.
"""

from __future__ import annotations

from collections.abc import Callable

from dlc.dialects.graph.ops import (
    AbsOp,
    AddOp,
    CeilOp,
    ClipOp,
    DivOp,
    ErfOp,
    ExpOp,
    FloorOp,
    LogOp,
    MaxOp,
    MinOp,
    ModOp,
    MulOp,
    NegOp,
    PowOp,
    ReciprocalOp,
    ReluOp,
    RoundOp,
    SigmoidOp,
    SqrtOp,
    SubOp,
    TanhOp,
)
from dlc.rewrites.topi.common import (
    binary,
    broadcast_extents,
    broadcast_read,
    check_element_type,
    constant,
    emit_compute,
    is_float,
    is_unsigned,
    read,
    require_equal_dims,
    shape_of,
    tensor_type,
)
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

INJECTIVE = "injective"
"""The tag of computes whose every element depends on one element of each input (TVM's
elemwise, broadcast and injective tags in one): schedules inline or fuse them freely."""


def op_short_name(op_name: str) -> str:
    """`graph.max_pool2d` → `max_pool2d`: the name a compute takes from its op."""
    return op_name.split(".", 1)[-1]


# ---------------------------------------------------------------------------------------------
# Binary ops with NumPy broadcasting
# ---------------------------------------------------------------------------------------------

_BINARY_KIND = {
    AddOp: "add", SubOp: "sub", MulOp: "mul", DivOp: "div", MaxOp: "max", MinOp: "min",
    PowOp: "pow",
}


@compute_definition(*_BINARY_KIND)
def broadcast_binary(
    op: AddOp | SubOp | MulOp | DivOp | MaxOp | MinOp | PowOp, builder: Builder
) -> SSAValue:
    """`out[i...] = lhs[bcast(i)] <kind> rhs[bcast(i)]` (TVM's topi.add etc.)."""
    kind = _BINARY_KIND[type(op)]
    result_type = tensor_type(op.result)
    check_element_type(op, result_type.get_element_type())
    out_shape = shape_of(op.result)
    require_equal_dims(builder, op, [op.lhs, op.rhs])

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        lhs = broadcast_read(b, op.lhs, i, out_shape)
        rhs = broadcast_read(b, op.rhs, i, out_shape)
        return binary(b, kind, lhs, rhs)

    return emit_compute(builder, op, kind, result_type, body, tag=INJECTIVE,
                        extents=broadcast_extents(builder, [op.lhs, op.rhs], op.result))


@compute_definition(ModOp)
def mod(op: ModOp, builder: Builder) -> SSAValue:
    """`out[i...] = lhs[bcast(i)] mod rhs[bcast(i)]`: C's remainder (`fmod = 1`; `remsi`,
    `remui` unsigned, `float_remainder` for floats), else moved by the divisor where it is
    nonzero and its sign differs from the divisor's (Python's `%`; a float zero takes the
    divisor's sign)."""
    result_type = tensor_type(op.result)
    check_element_type(op, result_type.get_element_type())
    out_shape = shape_of(op.result)
    require_equal_dims(builder, op, [op.lhs, op.rhs])
    element_type = result_type.get_element_type()
    unsigned = is_unsigned(element_type)

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        lhs = broadcast_read(b, op.lhs, i, out_shape)
        rhs = broadcast_read(b, op.rhs, i, out_shape)
        if is_float(element_type):
            remainder = float_remainder(b, lhs, rhs)
            return remainder if op.is_fmod() else _divisor_signed(b, remainder, rhs)
        if unsigned:
            return b.insert(arith.RemUIOp(lhs, rhs)).result
        remainder = b.insert(arith.RemSIOp(lhs, rhs)).result
        if op.is_fmod():
            return remainder
        zero = b.insert(arith.ConstantOp(IntegerAttr(0, lhs.type))).result
        nonzero = b.insert(arith.CmpiOp(remainder, zero, "ne")).result
        signs = [b.insert(arith.CmpiOp(v, zero, "slt")).result for v in (remainder, rhs)]
        differ = b.insert(arith.XOrIOp(*signs)).result
        moved = b.insert(arith.AndIOp(nonzero, differ)).result
        shifted = b.insert(arith.AddiOp(remainder, rhs)).result
        return b.insert(arith.SelectOp(moved, shifted, remainder)).result

    return emit_compute(builder, op, "mod", result_type, body, tag=INJECTIVE,
                        extents=broadcast_extents(builder, [op.lhs, op.rhs], op.result))


def float_remainder(b: Builder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """C's `fmod(lhs, rhs)` of floats (dlc's scalar ops have no remainder): in f64,
    `q = trunc(lhs / rhs)` and `r = fma(-q, rhs, lhs)`, the remainder itself where `q` is
    right (it is representable, and the fma rounds once); a quotient rounded up to the next
    integer leaves `r` of the other sign than `lhs`, moved back by `copysign(rhs, lhs)`; a
    zero takes `lhs`'s sign, an infinite `rhs` gives `lhs` (where `lhs` is finite). Exact for
    f16 and f32 operands while `|lhs / rhs| < 2**53`, as for f64 ones short of the last bit
    where the moved value needs 54 bits."""
    wide = lhs.type != f64
    a, d = ((b.insert(arith.ExtFOp(v, f64)).result if wide else v) for v in (lhs, rhs))
    quotient = b.insert(arith.DivfOp(a, d)).result
    whole = b.insert(mathd.TruncOp(quotient)).result
    negated = b.insert(arith.NegfOp(whole)).result
    r = b.insert(mathd.FmaOp(negated, d, a)).result
    zero = b.insert(arith.ConstantOp(FloatAttr(0.0, f64))).result
    signs = [b.insert(arith.CmpfOp(v, zero, "olt")).result for v in (r, a)]
    differ = b.insert(arith.XOrIOp(*signs)).result
    nonzero = b.insert(arith.CmpfOp(r, zero, "one")).result
    overshot = b.insert(arith.AndIOp(differ, nonzero)).result
    moved = b.insert(arith.AddfOp(r, b.insert(mathd.CopySignOp(d, a)).result)).result
    r = b.insert(arith.SelectOp(overshot, moved, r)).result
    r = b.insert(mathd.CopySignOp(r, a)).result  # a zero (and every remainder) has lhs's sign
    infinite = b.insert(arith.ConstantOp(FloatAttr(float("inf"), f64))).result
    magnitude = b.insert(mathd.AbsFOp(d)).result
    divisor_infinite = b.insert(arith.CmpfOp(magnitude, infinite, "oeq")).result
    finite = b.insert(arith.CmpfOp(b.insert(mathd.AbsFOp(a)).result, infinite, "olt")).result
    keep = b.insert(arith.AndIOp(divisor_infinite, finite)).result
    r = b.insert(arith.SelectOp(keep, a, r)).result
    return b.insert(arith.TruncFOp(r, lhs.type)).result if wide else r


def _divisor_signed(b: Builder, remainder: SSAValue, rhs: SSAValue) -> SSAValue:
    """Python's `%` from C's remainder of floats: moved by `rhs` where nonzero and of the other
    sign, a zero given `rhs`'s sign."""
    zero = b.insert(arith.ConstantOp(FloatAttr(0.0, remainder.type))).result
    signs = [b.insert(arith.CmpfOp(v, zero, "olt")).result for v in (remainder, rhs)]
    differ = b.insert(arith.XOrIOp(*signs)).result
    nonzero = b.insert(arith.CmpfOp(remainder, zero, "one")).result
    moved = b.insert(arith.AndIOp(differ, nonzero)).result
    shifted = b.insert(arith.AddfOp(remainder, rhs)).result
    result = b.insert(arith.SelectOp(moved, shifted, remainder)).result
    is_zero = b.insert(arith.CmpfOp(result, zero, "oeq")).result
    signed_zero = b.insert(mathd.CopySignOp(zero, rhs)).result
    return b.insert(arith.SelectOp(is_zero, signed_zero, result)).result


# ---------------------------------------------------------------------------------------------
# Unary ops
# ---------------------------------------------------------------------------------------------

ScalarFn = Callable[[Builder, SSAValue], SSAValue]


def _relu(b: Builder, x: SSAValue) -> SSAValue:
    return binary(b, "max", x, constant(b, 0, x.type))


def _sigmoid(b: Builder, x: SSAValue) -> SSAValue:
    """1 / (1 + exp(-x))."""
    minus_x = b.insert(arith.NegfOp(x)).result
    exp = b.insert(mathd.ExpOp(minus_x)).result
    one = constant(b, 1, x.type)
    denominator = b.insert(arith.AddfOp(one, exp)).result
    return b.insert(arith.DivfOp(one, denominator)).result


def _neg(b: Builder, x: SSAValue) -> SSAValue:
    if is_float(x.type):
        return b.insert(arith.NegfOp(x)).result
    return b.insert(arith.SubiOp(constant(b, 0, x.type), x)).result


def _abs(b: Builder, x: SSAValue) -> SSAValue:
    if is_float(x.type):
        return b.insert(mathd.AbsFOp(x)).result
    if is_unsigned(x.type):
        return x
    return b.insert(mathd.AbsIOp(x)).result


def _reciprocal(b: Builder, x: SSAValue) -> SSAValue:
    return b.insert(arith.DivfOp(constant(b, 1, x.type), x)).result


def _math(op_type: type[mathd.ExpOp | mathd.TanhOp | mathd.ErfOp | mathd.SqrtOp | mathd.LogOp
                         | mathd.CeilOp | mathd.FloorOp | mathd.RoundEvenOp]) -> ScalarFn:
    return lambda b, x: b.insert(op_type(x)).result


_UNARY: dict[type, ScalarFn] = {
    ReluOp: _relu,
    SigmoidOp: _sigmoid,
    TanhOp: _math(mathd.TanhOp),
    ExpOp: _math(mathd.ExpOp),
    ErfOp: _math(mathd.ErfOp),
    SqrtOp: _math(mathd.SqrtOp),
    NegOp: _neg,
    AbsOp: _abs,
    LogOp: _math(mathd.LogOp),
    ReciprocalOp: _reciprocal,
    CeilOp: _math(mathd.CeilOp),
    FloorOp: _math(mathd.FloorOp),
    RoundOp: _math(mathd.RoundEvenOp),
}


def elementwise(
    builder: Builder, op: Operation, x: SSAValue, fn: ScalarFn, name: str | None = None
) -> SSAValue:
    """Emits `out[i...] = fn(x[i...])`, named after `op` (the origin) unless `name` is given."""

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        return fn(b, read(b, x, i))

    compute_name = name if name is not None else op_short_name(op.name)
    return emit_compute(builder, op, compute_name, tensor_type(x), body, tag=INJECTIVE)


@compute_definition(*_UNARY)
def unary(
    op: ReluOp | SigmoidOp | TanhOp | ExpOp | ErfOp | SqrtOp | NegOp | AbsOp | LogOp
    | ReciprocalOp | CeilOp | FloorOp | RoundOp,
    builder: Builder,
) -> SSAValue:
    """`out[i...] = f(x[i...])`; sigmoid is 1 / (1 + exp(-x)), erf is math.erf, round is
    math.roundeven (ONNX rounds halves to even)."""
    check_element_type(op, tensor_type(op.x).get_element_type())
    return elementwise(builder, op, op.x, _UNARY[type(op)])


@compute_definition(ClipOp)
def clip(op: ClipOp, builder: Builder) -> SSAValue:
    """`out = min(max(x, lo), hi)`, the f32 bounds converted to the element type."""
    element_type: Attribute = tensor_type(op.x).get_element_type()
    check_element_type(op, element_type)
    low, high = op.min_value(), op.max_value()
    if not is_float(element_type) and (low != int(low) or high != int(high)):
        raise PassFailedException(
            f"'{op.name}' op expected integer bounds for {element_type}, found min {low} and "
            f"max {high}"
        )

    def fn(b: Builder, x: SSAValue) -> SSAValue:
        clamped = binary(b, "max", x, constant(b, low, element_type))
        return binary(b, "min", clamped, constant(b, high, element_type))

    return elementwise(builder, op, op.x, fn)
