"""`arith` -> `llvm`: every arith op, on scalars and on 1-D vectors (MLIR's ArithToLLVM).

Integer and float arithmetic map to the llvm op of the same meaning; min/max and saturating
float-to-int casts map to LLVM intrinsics; the rounding divisions expand into a few llvm ops.
`arith.index_cast` lives with the index lowering (`rewrites.llvm_lowering.index`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.llvm_vector import FCmpOp, SelectOp
from dlc.rewrites.llvm_lowering.bf16 import bf16_constant, bf16_to_f32, f32_to_bf16, is_bf16
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    int_constant,
    intrinsic_suffix,
    lowered_operands,
    lowering_error,
    ops_append,
    replace_with_lowered,
)
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

INTEGER_BINARY_OPS: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.RemUIOp: llvm.URemOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.ShRSIOp: llvm.AShrOp,
}
"""arith integer binary op -> the llvm op with the same semantics."""

FLOAT_BINARY_OPS: dict[type[Operation], type[llvm.AbstractFloatArithOp]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}
"""arith float binary op -> the llvm op with the same semantics (fast-math flags carried over)."""

BINARY_INTRINSICS: dict[type[Operation], str] = {
    arith.MinSIOp: "llvm.smin",
    arith.MaxSIOp: "llvm.smax",
    arith.MinUIOp: "llvm.umin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaximumfOp: "llvm.maximum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaxnumfOp: "llvm.maxnum",
}
"""arith min/max -> the LLVM intrinsic of the same NaN and signedness semantics."""

CAST_OPS: dict[type[Operation], type[Operation]] = {
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.BitcastOp: llvm.BitcastOp,
}
"""arith cast -> the llvm cast of the same semantics."""

SATURATING_CASTS: dict[type[Operation], str] = {
    arith.FPToSIOp: "llvm.fptosi.sat",
    arith.FPToUIOp: "llvm.fptoui.sat",
}
"""Float-to-int casts. xDSL's llvm dialect has no fptosi/fptoui; the saturating intrinsics agree
with them wherever those are defined (they are poison out of range)."""

UNSUPPORTED_OPS = (arith.AddUIExtendedOp, arith.MulUIExtendedOp, arith.MulSIExtendedOp)


@dataclass
class ConstantLowering(RewritePattern):
    """`arith.constant` -> `llvm.mlir.constant` (scalars and dense vectors)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter) -> None:
        result_type = self.lowering.convert_type(op.result.type)
        value = op.value
        if isinstance(value, IntegerAttr):
            assert isinstance(result_type, IntegerType)
            raw = value.value.data
            if result_type.width.data == 1:
                raw &= 1
            new_value: Attribute = IntegerAttr(raw, result_type)
        elif is_bf16(op.result.type) and isinstance(value, FloatAttr | DenseIntOrFPElementsAttr):
            new_value = bf16_constant(value, result_type)
        elif isinstance(value, FloatAttr):
            new_value = value
        elif isinstance(value, DenseIntOrFPElementsAttr) and isinstance(result_type, VectorType):
            new_value = value
            if isinstance(value.get_element_type(), IndexType):
                new_value = DenseIntOrFPElementsAttr.from_list(
                    result_type, [int(v) for v in value.get_values()]
                )
        else:
            raise lowering_error(
                op, f"expected a scalar or vector constant, found {op.result.type}"
            )
        constant = llvm.ConstantOp(new_value, result_type)
        replace_with_lowered(op, [constant], constant.results, rewriter)


@dataclass
class BinaryLowering(RewritePattern):
    """Integer and float binary arith ops -> the llvm op or intrinsic of the same meaning."""

    lowering: LLVMLowering
    op_types: ClassVar[tuple[type[Operation], ...]] = (
        *INTEGER_BINARY_OPS, *FLOAT_BINARY_OPS, *BINARY_INTRINSICS
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = type(op)
        if kind in INTEGER_BINARY_OPS:
            lhs, rhs = lowered_operands(op, self.lowering, rewriter)
            new_op = INTEGER_BINARY_OPS[kind](lhs, rhs)
            _copy_overflow_flags(op, new_op)
        elif kind in FLOAT_BINARY_OPS:
            lhs, rhs = lowered_operands(op, self.lowering, rewriter)
            new_op = FLOAT_BINARY_OPS[kind](lhs, rhs, _fast_math(op))
        elif kind in NSZ_MIN_MAX and _no_signed_zeros(op):
            lhs, rhs = lowered_operands(op, self.lowering, rewriter)
            ops = nan_propagating_select(lhs, rhs, NSZ_MIN_MAX[kind])
            replace_with_lowered(op, ops, ops[-1].results, rewriter)
            return
        elif kind in BINARY_INTRINSICS:
            lhs, rhs = lowered_operands(op, self.lowering, rewriter)
            name = f"{BINARY_INTRINSICS[kind]}.{intrinsic_suffix(lhs.type)}"
            new_op = call_intrinsic(name, [lhs, rhs], lhs.type)
        else:
            return
        replace_with_lowered(op, [new_op], new_op.results, rewriter)


NSZ_MIN_MAX: dict[type[Operation], str] = {
    arith.MaximumfOp: "ogt",
    arith.MinimumfOp: "olt",
}
"""`maximumf`/`minimumf` with the `nsz` fast-math flag -> the predicate that picks `lhs` in
`nan_propagating_select`."""


def _no_signed_zeros(op: Operation) -> bool:
    flags = op.properties.get("fastmath")
    return isinstance(flags, arith.FastMathFlagsAttr) and bool({"nsz", "fast"} & flags.data)


def nan_propagating_select(lhs: SSAValue, rhs: SSAValue, predicate: str) -> list[Operation]:
    """`lhs <predicate> b ? lhs : b` with `b = isnan(lhs) ? lhs : rhs`: IEEE maximum (`ogt`)
    or minimum (`olt`) up to the sign of a zero result, a NaN from either side kept. x86 has
    the outer select as one `maxps` (which returns its second operand when unordered) after a
    NaN test and a blend: 3 instructions where `llvm.maximum` orders +0 above -0 with 3 more
    (AVX-512: `vpmovd2m`, two blends), and on scalars moves the sign through a general
    register."""
    nan = FCmpOp(lhs, lhs, "uno")
    other = SelectOp(nan.results[0], lhs, rhs)
    pick = FCmpOp(lhs, other.results[0], predicate)
    return [nan, other, pick, SelectOp(pick.results[0], lhs, other.results[0])]


def _fast_math(op: Operation) -> llvm.FastMathAttr:
    flags = op.properties.get("fastmath")
    if isinstance(flags, arith.FastMathFlagsAttr) and flags.data:
        return llvm.FastMathAttr(list(flags.data))
    return llvm.FastMathAttr(None)


def _copy_overflow_flags(source: Operation, target: Operation) -> None:
    flags = source.properties.get("overflowFlags")
    if not isinstance(flags, arith.IntegerOverflowAttr) or not flags.data:
        return
    if "overflowFlags" not in type(target).get_irdl_definition().properties:
        return
    bits = (1 if arith.IntegerOverflowFlag.NSW in flags.data else 0) | (
        2 if arith.IntegerOverflowFlag.NUW in flags.data else 0
    )
    target.properties["overflowFlags"] = IntegerAttr(bits, 32)


@dataclass
class NegfLowering(RewritePattern):
    """`arith.negf` -> `llvm.fneg`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter) -> None:
        (operand,) = lowered_operands(op, self.lowering, rewriter)
        new_op = llvm.FNegOp(operand, _fast_math(op))
        replace_with_lowered(op, [new_op], new_op.results, rewriter)


@dataclass
class CmpiLowering(RewritePattern):
    """`arith.cmpi` -> `llvm.icmp` with the predicate of the same name."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = lowered_operands(op, self.lowering, rewriter)
        name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        predicate = IntegerAttr(llvm.ICmpPredicateFlag(name).to_int(), 64)
        new_op = llvm.ICmpOp(lhs, rhs, predicate)
        replace_with_lowered(op, [new_op], new_op.results, rewriter)


@dataclass
class CmpfLowering(RewritePattern):
    """`arith.cmpf` -> `llvm.fcmp` with the predicate of the same name; on vectors (which the
    vectorizer makes, typed `vector<N x i1>`) one vector `llvm.fcmp` (dlc's, which takes
    vectors: `dialects.llvm_vector`). LLVM does not always rebuild one from lanes. The
    predicates `false` and `true` become constants (xDSL's LLVM IR export cannot print them)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = lowered_operands(op, self.lowering, rewriter)
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if name in ("false", "true"):
            result_type = self.lowering.convert_type(op.result.type)
            constant = _integer_splat(int(name == "true"), result_type)
            replace_with_lowered(op, [constant], constant.results, rewriter)
            return
        new_op = FCmpOp(lhs, rhs, name)
        new_op.properties["fastmathFlags"] = _fast_math(op)
        replace_with_lowered(op, [new_op], new_op.results, rewriter)


@dataclass
class SelectLowering(RewritePattern):
    """`arith.select` -> `llvm.select`, with a scalar or (as the vectorizer makes) a vector
    condition (dlc's `llvm.select`, which takes vectors: `dialects.llvm_vector`)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        cond, lhs, rhs = lowered_operands(op, self.lowering, rewriter)
        new_op = SelectOp(cond, lhs, rhs)
        replace_with_lowered(op, [new_op], new_op.results, rewriter)


@dataclass
class CastLowering(RewritePattern):
    """arith casts -> llvm casts; fptosi/fptoui -> saturating intrinsics (vectors of f32 to
    i32 on x86 as `cvttps2dq` with fixes: `saturated_truncation`); uitofp expanded;
    truncf f64 -> f16 through f32 rounded to odd (no `__truncdfhf2` libcall)."""

    lowering: LLVMLowering
    op_types: ClassVar[tuple[type[Operation], ...]] = (
        *CAST_OPS, *SATURATING_CASTS, arith.UIToFPOp
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = type(op)
        if kind not in CAST_OPS and kind not in SATURATING_CASTS and kind is not arith.UIToFPOp:
            return
        (source,) = lowered_operands(op, self.lowering, rewriter)
        result_type = self.lowering.convert_type(op.results[0].type)
        if kind is arith.ExtFOp and is_bf16(op.operands[0].type):
            new_ops = bf16_to_f32(source, result_type)
        elif kind is arith.TruncFOp and is_bf16(op.results[0].type):
            new_ops = []
            if _element(source.type) == Float64Type():
                new_ops = double_to_float_odd(source)
                source = new_ops[-1].results[0]
            new_ops += f32_to_bf16(source, result_type)
        elif kind is arith.TruncFOp and _element(source.type) == Float64Type() and isinstance(
            _element(result_type), Float16Type
        ):
            new_ops = double_to_half(source, result_type)
        elif kind in CAST_OPS:
            new_ops = [CAST_OPS[kind](source, result_type)]
        elif kind is arith.FPToSIOp and (
                truncating := x86_truncating_conversion(source.type, result_type,
                                                        self.lowering.features)):
            new_ops = saturated_truncation(source, result_type, truncating)
        elif kind in SATURATING_CASTS:
            name = (
                f"{SATURATING_CASTS[kind]}.{intrinsic_suffix(result_type)}"
                f".{intrinsic_suffix(source.type)}"
            )
            new_ops = [call_intrinsic(name, [source], result_type)]
        else:
            new_ops = unsigned_to_float(source, result_type)
        replace_with_lowered(op, new_ops, new_ops[-1].results, rewriter)


X86_TRUNCATING_CONVERSIONS: dict[int, tuple[str, str, tuple[int, ...]]] = {
    16: ("avx512f", "llvm.x86.avx512.mask.cvttps2dq.512", (0, -1, 4)),
    8: ("avx", "llvm.x86.avx.cvtt.ps2dq.256", ()),
    4: ("sse2", "llvm.x86.sse2.cvttps2dq", ()),
}
"""`cvttps2dq` by the f32 lanes it converts: the feature it needs, the intrinsic, and the
arguments after the source (AVX-512's pass-through vector, mask and rounding: all lanes, the
current mode)."""


def x86_truncating_conversion(source: Attribute, result: Attribute, features: frozenset[str]
                              ) -> tuple[str, tuple[int, ...]] | None:
    """The x86 intrinsic (and its extra arguments) that converts a vector of f32 `source` to
    i32 `result` toward zero, where the target has it; None otherwise (scalars, other types,
    other targets: `llvm.fptosi.sat`, which AArch64 has as one instruction)."""
    if not (isinstance(source, VectorType) and isinstance(result, VectorType)):
        return None
    if not isinstance(source.element_type, Float32Type) or result.element_type != i32:
        return None
    entry = X86_TRUNCATING_CONVERSIONS.get(source.get_shape()[0])
    if entry is None or len(source.get_shape()) != 1 or entry[0] not in features:
        return None
    return entry[1], entry[2]


def saturated_truncation(source: SSAValue, result_type: VectorType,
                         conversion: tuple[str, tuple[int, ...]]) -> list[Operation]:
    """`llvm.fptosi.sat` of f32 lanes to i32 as `cvttps2dq` and two fixes: the instruction
    gives INT_MIN for every lane out of range or NaN (the saturated value below the range);
    lanes >= 2^31 take INT_MAX and NaN lanes 0. Five instructions where LLVM's x86 backend
    scalarizes the vector intrinsic (a conversion and two compares per lane): the same
    results, bit for bit."""
    name, extra = conversion
    ops: list[Operation] = []
    args: list[SSAValue] = [source]
    if extra:
        passthru, mask, rounding = extra
        ops += [_integer_splat(passthru, result_type), int_constant(mask, i16),
                int_constant(rounding, i32)]
        args += [op.results[0] for op in ops]
    truncated = call_intrinsic(name, args, result_type)
    limit = _float_splat(2.0**31, source.type)
    above = FCmpOp(source, limit.results[0], "oge")
    largest = _integer_splat(2**31 - 1, result_type)
    high = SelectOp(above.results[0], largest.results[0], truncated.results[0])
    nan = FCmpOp(source, source, "uno")
    zero = _integer_splat(0, result_type)
    fixed = SelectOp(nan.results[0], zero.results[0], high.results[0])
    return [*ops, truncated, limit, above, largest, high, nan, zero, fixed]


def _element(type_: Attribute) -> Attribute:
    return type_.element_type if isinstance(type_, VectorType) else type_


def double_to_half(source: SSAValue, result_type: Attribute) -> list[Operation]:
    """`fptrunc` f64 -> f16 through f32 rounded to odd, so that it rounds once, correctly.

    LLVM lowers a direct f64 -> f16 truncation on x86 without AVX512-FP16 to a call of
    `__truncdfhf2`, which the JIT cannot always resolve. Rounding to f32 and then to f16 would
    round twice; rounding to f32 *to odd* (toward zero, then the last bit set when inexact) and
    then to nearest f16 is exact, as f32 keeps more than 11 + 2 significand bits. With `t` the
    nearest f32: inexact iff `fpext(t) != x` (bitwise); `t` rounded away from zero iff
    `|fpext(t)| > |x|` (the magnitude bits as integers), and then toward zero is `bits(t) - 1`.
    """
    ops = double_to_float_odd(source)
    ops.append(llvm.FPTruncOp(ops[-1].results[0], result_type))
    return ops


def double_to_float_odd(source: SSAValue) -> list[Operation]:
    """llvm ops: f64 `source` (or a vector) rounded to f32 *to odd* (see `double_to_half`): a
    second rounding to any type of at most 22 significand bits is then correctly rounded."""
    shape = source.type.get_shape() if isinstance(source.type, VectorType) else None

    def like_source(scalar: Attribute) -> Attribute:
        return scalar if shape is None else VectorType(scalar, shape)

    ops: list[Operation] = []
    nearest = ops_append(ops, llvm.FPTruncOp(source, like_source(Float32Type())))
    back = ops_append(ops, llvm.FPExtOp(nearest, source.type))
    x_bits = ops_append(ops, llvm.BitcastOp(source, like_source(i64)))
    back_bits = ops_append(ops, llvm.BitcastOp(back, like_source(i64)))
    inexact = ops_append(ops, _icmp("ne", back_bits, x_bits))
    magnitude = ops_append(ops, _integer_splat((1 << 63) - 1, like_source(i64)))
    x_magnitude = ops_append(ops, llvm.AndOp(x_bits, magnitude))
    back_magnitude = ops_append(ops, llvm.AndOp(back_bits, magnitude))
    away = ops_append(ops, _icmp("ugt", back_magnitude, x_magnitude))
    t_bits = ops_append(ops, llvm.BitcastOp(nearest, like_source(i32)))
    toward_zero = ops_append(ops, llvm.SubOp(t_bits, ops_append(
        ops, llvm.ZExtOp(ops_append(ops, llvm.AndOp(inexact, away)), like_source(i32))
    )))
    odd = ops_append(ops, llvm.OrOp(toward_zero, ops_append(
        ops, llvm.ZExtOp(inexact, like_source(i32))
    )))
    ops.append(llvm.BitcastOp(odd, like_source(Float32Type())))
    return ops


def unsigned_to_float(source: SSAValue, result_type: Attribute) -> list[Operation]:
    """`uitofp` from llvm ops (xDSL's llvm dialect has none).

    Below 64 bits the value is zero-extended to i64 and converted as signed, which is exact.
    At 64 bits the high and low halves are converted separately in f64 and added (one rounding
    in f64; a narrower result type then rounds a second time).
    """
    source_type = source.type
    shape = source_type.get_shape() if isinstance(source_type, VectorType) else None
    element = source_type.element_type if isinstance(source_type, VectorType) else source_type
    assert isinstance(element, IntegerType)

    def like_source(scalar: Attribute) -> Attribute:
        return scalar if shape is None else VectorType(scalar, shape)

    if element.width.data < 64:
        widened = llvm.ZExtOp(source, like_source(i64))
        return [widened, llvm.SIToFPOp(widened, result_type)]
    if element.width.data > 64:
        raise ValueError(f"uitofp from {source_type} is not supported")
    ops: list[Operation] = []
    f64 = like_source(Float64Type())
    shift = ops_append(ops, _integer_splat(32, like_source(i64)))
    mask = ops_append(ops, _integer_splat(0xFFFFFFFF, like_source(i64)))
    high = ops_append(ops, llvm.LShrOp(source, shift))
    low = ops_append(ops, llvm.AndOp(source, mask))
    high_f = ops_append(ops, llvm.SIToFPOp(high, f64))
    low_f = ops_append(ops, llvm.SIToFPOp(low, f64))
    scale = ops_append(ops, _float_splat(2.0**32, f64))
    scaled = ops_append(ops, llvm.FMulOp(high_f, scale))
    total = ops_append(ops, llvm.FAddOp(scaled, low_f))
    if f64 != result_type:
        ops.append(llvm.FPTruncOp(total, result_type))
    return ops


def _integer_splat(value: int, type_: Attribute) -> llvm.ConstantOp:
    if isinstance(type_, VectorType):
        return llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [value]), type_)
    return int_constant(value, type_)


def _float_splat(value: float, type_: Attribute) -> llvm.ConstantOp:
    if isinstance(type_, VectorType):
        return llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [value]), type_)
    return llvm.ConstantOp(FloatAttr(value, type_), type_)


@dataclass
class RoundingDivisionLowering(RewritePattern):
    """`arith.floordivsi`, `arith.ceildivsi`, `arith.ceildivui` -> a division and a correction.

    With q and r the truncating quotient and remainder: floor = q - (r != 0 && sign(r) != sign(b)),
    ceil (signed) = q + (r != 0 && sign(r) == sign(b)), ceil (unsigned) = q + (r != 0).
    """

    lowering: LLVMLowering

    op_types: ClassVar[tuple[type[Operation], ...]] = (
        arith.FloorDivSIOp, arith.CeilDivSIOp, arith.CeilDivUIOp
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, arith.FloorDivSIOp | arith.CeilDivSIOp | arith.CeilDivUIOp):
            return
        lhs, rhs = lowered_operands(op, self.lowering, rewriter)
        type_ = lhs.type
        signed = not isinstance(op, arith.CeilDivUIOp)
        ops: list[Operation] = []
        zero = ops_append(ops, _integer_splat(0, type_))
        quotient = ops_append(ops, (llvm.SDivOp if signed else llvm.UDivOp)(lhs, rhs))
        remainder = ops_append(ops, (llvm.SRemOp if signed else llvm.URemOp)(lhs, rhs))
        inexact = ops_append(ops, _icmp("ne", remainder, zero))
        if signed:
            sign_mix = ops_append(ops, llvm.XOrOp(remainder, rhs))
            signs = "slt" if isinstance(op, arith.FloorDivSIOp) else "sge"
            sign_test = ops_append(ops, _icmp(signs, sign_mix, zero))
            inexact = ops_append(ops, llvm.AndOp(inexact, sign_test))
        correction = ops_append(ops, llvm.ZExtOp(inexact, type_))
        adjust = llvm.SubOp if isinstance(op, arith.FloorDivSIOp) else llvm.AddOp
        ops.append(adjust(quotient, correction))
        replace_with_lowered(op, ops, ops[-1].results, rewriter)


def _icmp(predicate: str, lhs: SSAValue, rhs: SSAValue) -> llvm.ICmpOp:
    return llvm.ICmpOp(lhs, rhs, IntegerAttr(llvm.ICmpPredicateFlag(predicate).to_int(), 64))


@dataclass
class UnsupportedArithLowering(RewritePattern):
    """Arith ops without a lowering yet: fail with a message rather than leave them behind."""

    op_types: ClassVar[tuple[type[Operation], ...]] = UNSUPPORTED_OPS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, UNSUPPORTED_OPS):
            raise lowering_error(op, "has no lowering to the llvm dialect yet")


def arith_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower every `arith` op except `arith.index_cast`."""
    return [
        ConstantLowering(lowering),
        BinaryLowering(lowering),
        NegfLowering(lowering),
        CmpiLowering(lowering),
        CmpfLowering(lowering),
        SelectLowering(lowering),
        CastLowering(lowering),
        RoundingDivisionLowering(lowering),
        UnsupportedArithLowering(),
    ]

