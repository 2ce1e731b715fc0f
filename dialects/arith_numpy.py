"""The NumPy semantics of upstream `arith` and `math` ops: one table for every dlc interpreter.

Counterpart: the folders of MLIR's `arith` and `math` dialects, as NumPy functions. The loop
interpreter applies them to single values (Python ints for `index`, NumPy scalars, 1-D vectors),
the tensor_expr evaluator to whole index spaces (NumPy arrays); both convert each result to its
op's result type afterwards, so an implementation here may return a wider type (a cast is the
identity here: `arith.sitofp` returns its operand unchanged and the result type makes it a float).

Integers are signless, as in `arith`: an op whose name says `u` reads its operands' bits as
unsigned, the others as signed, and `i1` true is -1 where read as signed. An integer division by
zero is undefined in `arith`; here it divides by 1 instead, so that lanes a select discards may
divide by zero. An interpreter that wants to report it checks before calling (see
`INTEGER_DIVISIONS`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Attribute, Operation

Value = Any
"""A runtime value: a Python int (index), a NumPy scalar, or a NumPy array."""

OpImpl = Callable[[Operation, list[Value]], Value]
"""An op's semantics: the op (for its attributes and result type) and its operand values."""


def numpy_dtype(type_: Attribute) -> np.dtype:
    """The NumPy dtype of a scalar type (`index` is int64); raises ValueError for other types."""
    if isinstance(type_, IndexType):
        return np.dtype(np.int64)
    # imported here: importing the graph dialect loads its interpreter, which imports this module
    from dlc.dialects.graph.attrs import to_numpy_dtype

    return to_numpy_dtype(type_)


def _is_i1(a: Value) -> bool:
    return isinstance(a, (np.bool_, np.ndarray)) and a.dtype == np.bool_


def signed(a: Value) -> Value:
    """`a` read as a signed integer: `i1` true is -1, other values as they are."""
    if _is_i1(a):
        return -np.asarray(a).astype(np.int8)
    return a


def unsigned(a: Value) -> Value:
    """`a`'s bits read as an unsigned integer of the same width (Python ints are 64-bit)."""
    if isinstance(a, int):
        return a % 2**64
    array = np.asarray(a)
    if array.dtype == np.bool_:
        return a
    return array.astype(np.dtype(f"u{array.dtype.itemsize}"))


def _nonzero(b: Value) -> Value:
    return np.where(b == 0, 1, b)


def trunc_div(a: Value, b: Value) -> Value:
    """Signed integer division rounding toward zero (`arith.divsi`)."""
    safe = _nonzero(b)
    quotient = a // safe
    inexact = (a % safe != 0) & ((a < 0) != (safe < 0))
    return np.where(inexact, quotient + 1, quotient)


def erf(x: Value) -> Value:
    """The error function elementwise, in float64."""
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, dtype=np.float64))


def round_half_away(x: Value) -> Value:
    """Rounding to the nearest integer, halfway cases away from zero (`math.round`)."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _binary(fn: Callable[[Value, Value], Value]) -> OpImpl:
    return lambda op, args: fn(args[0], args[1])


def _unary(fn: Callable[[Value], Value]) -> OpImpl:
    return lambda op, args: fn(args[0])


def _signed_binary(fn: Callable[[Value, Value], Value]) -> OpImpl:
    """An integer op on signed values; on `i1` the result keeps its low bit (wrapping)."""

    def run(op: Operation, args: list[Value]) -> Value:
        a, b = args[0], args[1]
        if not _is_i1(a):
            return fn(a, b)
        result = np.asarray(fn(signed(a), signed(b)))
        return result if result.dtype == np.bool_ else result % 2 != 0

    return run


def _unsigned_binary(fn: Callable[[Value, Value], Value]) -> OpImpl:
    return lambda op, args: fn(unsigned(args[0]), unsigned(args[1]))


def _on_ints_or_arrays(
    on_ints: Callable[[int, int], int], on_arrays: Callable[[Value, Value], Value]
) -> Callable[[Value, Value], Value]:
    """`on_ints` on two Python ints (index values read unsigned reach 2**64 - 1, past what NumPy
    takes as an int64), `on_arrays` otherwise."""
    return lambda a, b: (
        on_ints(a, b) if isinstance(a, int) and isinstance(b, int) else on_arrays(a, b)
    )


def predicate(op: Operation) -> int:
    """The `predicate` property of an `arith.cmpi` or `arith.cmpf`."""
    attr = op.properties["predicate"]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


CMPI: tuple[Callable[[Value, Value], Value], ...] = (
    np.equal,
    np.not_equal,
    lambda a, b: signed(a) < signed(b),
    lambda a, b: signed(a) <= signed(b),
    lambda a, b: signed(a) > signed(b),
    lambda a, b: signed(a) >= signed(b),
    lambda a, b: unsigned(a) < unsigned(b),
    lambda a, b: unsigned(a) <= unsigned(b),
    lambda a, b: unsigned(a) > unsigned(b),
    lambda a, b: unsigned(a) >= unsigned(b),
)
"""`arith.cmpi` by predicate number: eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge."""


def cmpf(predicate: int, a: Value, b: Value) -> Value:
    """`arith.cmpf`: 0 false, 1-7 ordered (oeq ogt oge olt ole one ord), 8-14 unordered, 15 true."""
    unordered = np.isnan(a) | np.isnan(b)
    if predicate in (0, 15):
        return np.full(np.shape(unordered), predicate == 15)
    if predicate in (7, 14):
        return ~unordered if predicate == 7 else unordered
    compare = (np.equal, np.greater, np.greater_equal, np.less, np.less_equal, np.not_equal)
    relation = compare[(predicate - 1) % 7](a, b)
    return relation & ~unordered if predicate < 8 else relation | unordered


def _extsi(op: Operation, args: list[Value]) -> Value:
    value = args[0]
    return np.where(value, -1, 0) if _is_i1(value) else value


def _fptoi(op: Operation, args: list[Value]) -> Value:
    return np.trunc(args[0])


def _bitcast(op: Operation, args: list[Value]) -> Value:
    return np.asarray(args[0]).view(numpy_dtype(op.results[0].type))


def _identity(a: Value) -> Value:
    return a


INTEGER_DIVISIONS: frozenset[str] = frozenset({
    "arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi",
    "arith.divui", "arith.remui", "arith.ceildivui",
})
"""The ops whose second operand must not be zero (undefined behaviour in `arith`)."""


ARITH_MATH_OPS: dict[str, OpImpl] = {
    # integer arithmetic (index and signless integers; signed unless the name says u)
    "arith.addi": _signed_binary(operator.add),
    "arith.subi": _signed_binary(operator.sub),
    "arith.muli": _signed_binary(operator.mul),
    "arith.divsi": _binary(trunc_div),
    "arith.remsi": _binary(lambda a, b: a - b * trunc_div(a, b)),
    "arith.floordivsi": _binary(lambda a, b: a // _nonzero(b)),
    "arith.ceildivsi": _binary(lambda a, b: -(-a // _nonzero(b))),
    "arith.divui": _unsigned_binary(lambda a, b: a // _nonzero(b)),
    "arith.remui": _unsigned_binary(lambda a, b: a % _nonzero(b)),
    "arith.ceildivui": _unsigned_binary(lambda a, b: -(-a // _nonzero(b))),
    "arith.maxsi": _signed_binary(np.maximum),
    "arith.minsi": _signed_binary(np.minimum),
    "arith.maxui": _unsigned_binary(_on_ints_or_arrays(max, np.maximum)),
    "arith.minui": _unsigned_binary(_on_ints_or_arrays(min, np.minimum)),
    "arith.andi": _binary(operator.and_),
    "arith.ori": _binary(operator.or_),
    "arith.xori": _binary(operator.xor),
    "arith.shli": _binary(np.left_shift),
    "arith.shrsi": _binary(np.right_shift),
    "arith.shrui": _unsigned_binary(np.right_shift),
    "arith.cmpi": lambda op, args: CMPI[predicate(op)](args[0], args[1]),
    # floating point
    "arith.addf": _binary(operator.add),
    "arith.subf": _binary(operator.sub),
    "arith.mulf": _binary(operator.mul),
    "arith.divf": _binary(np.divide),
    "arith.remf": _binary(np.fmod),
    "arith.negf": _unary(np.negative),
    "arith.maximumf": _binary(np.maximum),
    "arith.minimumf": _binary(np.minimum),
    "arith.maxnumf": _binary(np.fmax),
    "arith.minnumf": _binary(np.fmin),
    "arith.cmpf": lambda op, args: cmpf(predicate(op), args[0], args[1]),
    "arith.select": lambda op, args: np.where(args[0], args[1], args[2]),
    # casts: the result type is applied afterwards
    "arith.index_cast": _unary(_identity),
    "arith.index_castui": _unary(unsigned),
    "arith.sitofp": _unary(_identity),
    "arith.uitofp": _unary(unsigned),
    "arith.fptosi": _fptoi,
    "arith.fptoui": _fptoi,
    "arith.extf": _unary(_identity),
    "arith.truncf": _unary(_identity),
    "arith.extsi": _extsi,
    "arith.extui": _unary(unsigned),
    "arith.trunci": _unary(_identity),
    "arith.bitcast": _bitcast,
    # math
    "math.absf": _unary(np.abs),
    "math.absi": _unary(np.abs),
    "math.ceil": _unary(np.ceil),
    "math.floor": _unary(np.floor),
    "math.trunc": _unary(np.trunc),
    "math.round": _unary(round_half_away),
    "math.roundeven": _unary(np.rint),
    "math.sqrt": _unary(np.sqrt),
    "math.rsqrt": _unary(lambda x: 1 / np.sqrt(x)),
    "math.exp": _unary(np.exp),
    "math.exp2": _unary(np.exp2),
    "math.expm1": _unary(np.expm1),
    "math.log": _unary(np.log),
    "math.log2": _unary(np.log2),
    "math.log10": _unary(np.log10),
    "math.log1p": _unary(np.log1p),
    "math.sin": _unary(np.sin),
    "math.cos": _unary(np.cos),
    "math.tan": _unary(np.tan),
    "math.sinh": _unary(np.sinh),
    "math.cosh": _unary(np.cosh),
    "math.tanh": _unary(np.tanh),
    "math.asin": _unary(np.arcsin),
    "math.acos": _unary(np.arccos),
    "math.atan": _unary(np.arctan),
    "math.atan2": _binary(np.arctan2),
    "math.erf": _unary(erf),
    "math.powf": _binary(np.power),
    "math.fpowi": _binary(lambda a, b: np.power(a, np.asarray(b).astype(np.asarray(a).dtype))),
    "math.ipowi": _binary(np.power),
    "math.copysign": _binary(np.copysign),
    "math.fma": lambda op, args: args[0] * args[1] + args[2],
}
"""`arith` and `math` ops by name: operand values in, the result value out (before its type)."""
