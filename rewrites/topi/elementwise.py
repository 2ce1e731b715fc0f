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
    return _broadcast_compute(op, builder, kind, lambda b, lhs, rhs: binary(b, kind, lhs, rhs))


@compute_definition(ModOp)
def mod(op: ModOp, builder: Builder) -> SSAValue:
    """`out[i...] = lhs[bcast(i)] mod rhs[bcast(i)]`: C's remainder (`fmod = 1`; `remsi`,
    `remui` unsigned, `float_remainder` for floats), else that moved to the divisor's sign
    (`_divisor_signed`: Python's `%`)."""
    element_type = tensor_type(op.result).get_element_type()

    def scalar(b: Builder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        if is_float(element_type):
            remainder = float_remainder(b, lhs, rhs)
        elif is_unsigned(element_type):
            return b.insert(arith.RemUIOp(lhs, rhs)).result  # no sign to move
        else:
            remainder = b.insert(arith.RemSIOp(lhs, rhs)).result
        return remainder if op.is_fmod() else _divisor_signed(b, remainder, rhs)

    return _broadcast_compute(op, builder, "mod", scalar)


def _broadcast_compute(op: Operation, builder: Builder, name: str,
                       scalar: Callable[[Builder, SSAValue, SSAValue], SSAValue]) -> SSAValue:
    """The compute of a binary op with NumPy broadcasting (`op.lhs`, `op.rhs`): `scalar` of the
    two operands read at each output index, their runtime dims checked equal."""
    result_type = tensor_type(op.result)  # type: ignore[attr-defined]
    check_element_type(op, result_type.get_element_type())
    out_shape = shape_of(op.result)  # type: ignore[attr-defined]
    operands = [op.lhs, op.rhs]  # type: ignore[attr-defined]
    require_equal_dims(builder, op, operands)

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        return scalar(b, *(broadcast_read(b, v, i, out_shape) for v in operands))

    return emit_compute(builder, op, name, result_type, body, tag=INJECTIVE,
                        extents=broadcast_extents(builder, operands, op.result))  # type: ignore[attr-defined]


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
    """Python's `%` from C's remainder (signed integers or floats): moved by `rhs` where
    nonzero and of the other sign; a float zero given `rhs`'s sign."""
    floating = is_float(remainder.type)
    zero = b.insert(arith.ConstantOp(FloatAttr(0.0, remainder.type) if floating
                                     else IntegerAttr(0, remainder.type))).result

    def compare(lhs: SSAValue, predicate: str) -> SSAValue:
        if floating:
            return b.insert(arith.CmpfOp(lhs, zero, "o" + predicate)).result
        return b.insert(arith.CmpiOp(lhs, zero, {"lt": "slt"}.get(predicate, predicate))).result

    differ = b.insert(arith.XOrIOp(compare(remainder, "lt"), compare(rhs, "lt"))).result
    nonzero = compare(remainder, "ne")
    moved = b.insert(arith.AndIOp(differ, nonzero)).result
    add = arith.AddfOp if floating else arith.AddiOp
    shifted = b.insert(add(remainder, rhs)).result
    result = b.insert(arith.SelectOp(moved, shifted, remainder)).result
    if not floating:
        return result
    is_zero = compare(result, "eq")
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
