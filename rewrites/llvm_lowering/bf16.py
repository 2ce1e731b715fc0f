"""bf16 in the CPU lowering: stored as its 16 bits (`i16`), computed in f32.

llvmlite has no `bfloat` type, and LLVM lowers bf16 arithmetic without AVX512-BF16 to libcalls
(`__truncsfbf2`) that the JIT cannot always resolve; so, as MLIR's `arith-emulate-unsupported-
floats` and `arith-expand` do it, a bf16 value lives in an `i16` (its bit pattern), arithmetic is
done in f32 and only the conversions know the format:

- `legalize_bf16_arith` (run before the loops are lowered, so that vectorized loops see it):
  every arith/math op on bf16 (scalars or vectors) computes in f32 between an `arith.extf` of
  each bf16 operand and an `arith.truncf` of each bf16 result; each op still rounds its result
  to bf16, as `bfloat` arithmetic would. Constants, `arith.select`, `arith.bitcast`, `extf` and
  `truncf` stay as they are.
- `bf16_to_f32`: `bitcast(zext(bits) << 16)`, exact.
- `f32_to_bf16`: round to nearest, ties to even, on the bits: `(bits + 0x7FFF + lsb) >> 16`,
  where `lsb` is bit 16 of `bits`; a NaN keeps its sign and high payload and gets the quiet bit.
  Overflow rounds to infinity, as IEEE rounding does. From f64 the value is first rounded to f32
  to odd (`arith.double_to_float_odd`), so that the result is rounded once.
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.llvm_vector import SelectOp
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    VectorType,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

_KEPT = (arith.ConstantOp, arith.SelectOp, arith.BitcastOp, arith.ExtFOp, arith.TruncFOp)
"""arith ops left on bf16: they move or convert bits and compute nothing."""


def is_bf16(type_: Attribute) -> bool:
    """Whether `type_` is bf16 or a vector of bf16."""
    if isinstance(type_, VectorType):
        type_ = type_.element_type
    return isinstance(type_, BFloat16Type)


def _like(type_: Attribute, element: Attribute) -> Attribute:
    """`element`, or a vector of it of `type_`'s shape when `type_` is a vector."""
    return VectorType(element, type_.get_shape()) if isinstance(type_, VectorType) else element


def bf16_bits(value: float) -> int:
    """The bf16 bit pattern of `value`, rounded to nearest even (as `f32_to_bf16` computes)."""
    from dlc.dialects.graph.attrs import BFLOAT16

    return int(np.array([value], np.float32).astype(BFLOAT16).view(np.uint16)[0])


def legalize_bf16_arith(module: ModuleOp) -> None:
    """Make every arith/math op on bf16 compute in f32 between extf and truncf (see above)."""
    rewriter = Rewriter()
    for op in list(module.walk()):
        if not op.name.startswith(("arith.", "math.")) or isinstance(op, _KEPT):
            if isinstance(op, arith.ExtFOp) and is_bf16(op.input.type) and not isinstance(
                _element(op.result.type), Float32Type
            ):
                _widen_extf(op, rewriter)
            continue
        types = [*(v.type for v in op.operands), *(r.type for r in op.results)]
        if not any(is_bf16(t) for t in types):
            continue
        operands: list[SSAValue] = []
        for operand in op.operands:
            if is_bf16(operand.type):
                extended = arith.ExtFOp(operand, _like(operand.type, Float32Type()))
                rewriter.insert_op(extended, InsertPoint.before(op))
                operand = extended.result
            operands.append(operand)
        result_types = [_like(r.type, Float32Type()) if is_bf16(r.type) else r.type
                        for r in op.results]
        wide = type(op).create(
            operands=operands, result_types=result_types, properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        rewriter.insert_op(wide, InsertPoint.before(op))
        replacements: list[SSAValue] = []
        for old, new in zip(op.results, wide.results, strict=True):
            if is_bf16(old.type):
                truncated = arith.TruncFOp(new, old.type)
                rewriter.insert_op(truncated, InsertPoint.before(op))
                new = truncated.result
            replacements.append(new)
        rewriter.replace_op(op, [], replacements)


def _widen_extf(op: arith.ExtFOp, rewriter: Rewriter) -> None:
    """`extf bf16 -> f64` as `extf bf16 -> f32` then `extf f32 -> f64`."""
    to_f32 = arith.ExtFOp(op.input, _like(op.input.type, Float32Type()))
    rewriter.insert_op(to_f32, InsertPoint.before(op))
    to_wide = arith.ExtFOp(to_f32.result, op.result.type)
    rewriter.replace_op(op, [to_wide])


def _element(type_: Attribute) -> Attribute:
    return type_.element_type if isinstance(type_, VectorType) else type_


def _splat(value: int, type_: Attribute) -> llvm.ConstantOp:
    if isinstance(type_, VectorType):
        return llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [value]), type_)
    return llvm.ConstantOp(IntegerAttr(value, type_), type_)


def bf16_constant(value: Attribute, result_type: Attribute) -> Attribute:
    """The i16 attribute (scalar or dense vector) holding the bits of a bf16 constant."""
    if isinstance(value, FloatAttr):
        return IntegerAttr(bf16_bits(value.value.data), i16)
    assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(result_type, VectorType)
    bits = [bf16_bits(float(v)) for v in value.get_values()]
    signed = [b - (1 << 16) if b >= 1 << 15 else b for b in bits]
    return DenseIntOrFPElementsAttr.from_list(result_type, signed)


def bf16_to_f32(bits: SSAValue, result_type: Attribute) -> list[Operation]:
    """llvm ops: the f32 (or vector) value of bf16 `bits` (i16 or a vector of i16); exact."""
    ops: list[Operation] = [llvm.ZExtOp(bits, _like(result_type, i32))]
    ops.append(llvm.ShlOp(ops[-1].results[0], _append(ops, _splat(16, _like(result_type, i32)))))
    ops.append(llvm.BitcastOp(ops[-1].results[0], result_type))
    return ops


def f32_to_bf16(value: SSAValue, result_type: Attribute) -> list[Operation]:
    """llvm ops: f32 `value` (or a vector) rounded to nearest even bf16, as i16 `result_type`."""
    wide = _like(result_type, i32)
    ops: list[Operation] = []
    bits = _append(ops, llvm.BitcastOp(value, wide))
    sixteen = _append(ops, _splat(16, wide))
    high = _append(ops, llvm.LShrOp(bits, sixteen))
    lsb = _append(ops, llvm.AndOp(high, _append(ops, _splat(1, wide))))
    bias = _append(ops, llvm.AddOp(lsb, _append(ops, _splat(0x7FFF, wide))))
    rounded = _append(ops, llvm.AddOp(bits, bias))
    quiet = _append(ops, llvm.OrOp(bits, _append(ops, _splat(0x400000, wide))))
    magnitude = _append(ops, llvm.AndOp(bits, _append(ops, _splat(0x7FFFFFFF, wide))))
    is_nan = _append(ops, llvm.ICmpOp(magnitude, _append(ops, _splat(0x7F800000, wide)),
                                      IntegerAttr(llvm.ICmpPredicateFlag.UGT.to_int(), i64)))
    chosen = _append(ops, SelectOp(is_nan, quiet, rounded))  # dlc's: vector conditions too
    shifted = _append(ops, llvm.LShrOp(chosen, sixteen))
    ops.append(llvm.TruncOp(shifted, result_type))
    return ops


def _append(ops: list[Operation], op: Operation) -> SSAValue:
    ops.append(op)
    return op.results[0]
