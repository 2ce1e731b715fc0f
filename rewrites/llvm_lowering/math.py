"""`math` -> `llvm`: LLVM intrinsics where LLVM has one, libm calls where it has not
(MLIR's MathToLLVM plus MathToLibm).

Intrinsics take scalars and vectors alike (LLVM expands a vector intrinsic it cannot select into
per-lane libm calls). libm functions (erf, cbrt, ...) are scalar: on vectors they are called lane
by lane. f16 and bf16 operands are computed in f32 through libm. The JIT resolves libm symbols
from the process, and shared libraries link `-lm`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    ensure_declared,
    int_constant,
    intrinsic_suffix,
    lowered_operands,
    lowering_error,
    ops_append,
    replace_with_lowered,
    scalarize,
)
from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

FLOAT_INTRINSICS: dict[type[Operation], str] = {
    math.AbsFOp: "llvm.fabs",
    math.CeilOp: "llvm.ceil",
    math.FloorOp: "llvm.floor",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
    math.SqrtOp: "llvm.sqrt",
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.Log10Op: "llvm.log10",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.TanOp: "llvm.tan",
    math.AsinOp: "llvm.asin",
    math.AcosOp: "llvm.acos",
    math.AtanOp: "llvm.atan",
    math.SinhOp: "llvm.sinh",
    math.CoshOp: "llvm.cosh",
    math.TanhOp: "llvm.tanh",
    math.PowFOp: "llvm.pow",
    math.CopySignOp: "llvm.copysign",
    math.Atan2Op: "llvm.atan2",
}
"""math ops on floats -> the LLVM intrinsic (overloaded on the operand type) that computes them."""

INTEGER_INTRINSICS: dict[type[Operation], tuple[str, bool]] = {
    math.AbsIOp: ("llvm.abs", True),
    math.CountLeadingZerosOp: ("llvm.ctlz", True),
    math.CountTrailingZerosOp: ("llvm.cttz", True),
    math.CtPopOp: ("llvm.ctpop", False),
}
"""math ops on integers -> (intrinsic, whether it takes the `i1 false` poison flag)."""

LIBM_FUNCTIONS: dict[type[Operation], str] = {
    math.ErfOp: "erf",
    math.CbrtOp: "cbrt",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
}
"""math ops without an LLVM intrinsic -> the libm function (double; `f` suffix for float)."""


@dataclass
class FloatIntrinsicLowering(RewritePattern):
    """math ops on floats that LLVM knows -> `llvm.call_intrinsic`; `math.fma` -> `llvm.intr.fma`;
    `math.rsqrt` -> 1 / sqrt; `math.fpowi` -> `llvm.powi`."""

    lowering: LLVMLowering
    op_types: ClassVar[tuple[type[Operation], ...]] = (
        *FLOAT_INTRINSICS, math.FmaOp, math.RsqrtOp, math.FPowIOp
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = type(op)
        if kind in FLOAT_INTRINSICS:
            operands = lowered_operands(op, self.lowering, rewriter)
            result_type = operands[0].type
            name = f"{FLOAT_INTRINSICS[kind]}.{intrinsic_suffix(result_type)}"
            new_ops: list[Operation] = [call_intrinsic(name, operands, result_type)]
        elif isinstance(op, math.FmaOp):
            a, b, c = lowered_operands(op, self.lowering, rewriter)
            new_ops = [llvm.FMAOp(a, b, c)]
        elif isinstance(op, math.RsqrtOp):
            (operand,) = lowered_operands(op, self.lowering, rewriter)
            new_ops = _reciprocal_sqrt(operand)
        elif isinstance(op, math.FPowIOp):
            base, exponent = lowered_operands(op, self.lowering, rewriter)
            name = (
                f"llvm.powi.{intrinsic_suffix(base.type)}.{intrinsic_suffix(exponent.type)}"
            )
            new_ops = [call_intrinsic(name, [base, exponent], base.type)]
        else:
            return
        replace_with_lowered(op, new_ops, new_ops[-1].results, rewriter)


def _reciprocal_sqrt(operand: SSAValue) -> list[Operation]:
    type_ = operand.type
    element = type_.element_type if isinstance(type_, VectorType) else type_
    if isinstance(type_, VectorType):
        one = llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [1.0]), type_)
    else:
        one = llvm.ConstantOp(FloatAttr(1.0, element), type_)
    root = call_intrinsic(f"llvm.sqrt.{intrinsic_suffix(type_)}", [operand], type_)
    return [one, root, llvm.FDivOp(one, root)]


@dataclass
class IntegerIntrinsicLowering(RewritePattern):
    """`math.absi`, `math.ctlz`, `math.cttz`, `math.ctpop` -> LLVM bit intrinsics."""

    lowering: LLVMLowering
    op_types: ClassVar[tuple[type[Operation], ...]] = tuple(INTEGER_INTRINSICS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        entry = INTEGER_INTRINSICS.get(type(op))
        if entry is None:
            return
        name, takes_poison_flag = entry
        (operand,) = lowered_operands(op, self.lowering, rewriter)
        new_ops: list[Operation] = []
        args = [operand]
        if takes_poison_flag:
            args.append(ops_append(new_ops, int_constant(0, i1)))
        new_ops.append(
            call_intrinsic(f"{name}.{intrinsic_suffix(operand.type)}", args, operand.type)
        )
        replace_with_lowered(op, new_ops, new_ops[-1].results, rewriter)


@dataclass
class LibmLowering(RewritePattern):
    """math ops without an LLVM intrinsic -> calls to libm (lane by lane on vectors)."""

    lowering: LLVMLowering
    op_types: ClassVar[tuple[type[Operation], ...]] = tuple(LIBM_FUNCTIONS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        function = LIBM_FUNCTIONS.get(type(op))
        if function is None:
            return
        operands = lowered_operands(op, self.lowering, rewriter)
        result_type = operands[0].type
        element = result_type.element_type if isinstance(result_type, VectorType) else result_type
        compute_type: Attribute = (
            Float64Type() if isinstance(element, Float64Type) else Float32Type()
        )
        if not isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type):
            raise lowering_error(op, f"expected a float operand, found {result_type}")
        symbol = function if isinstance(compute_type, Float64Type) else f"{function}f"
        signature = llvm.LLVMFunctionType([compute_type] * len(operands), compute_type)
        ensure_declared(op, symbol, signature, rewriter)

        def call_one(values: Sequence[SSAValue]) -> tuple[list[Operation], SSAValue]:
            ops: list[Operation] = []
            args = [_convert_float(v, compute_type, ops) for v in values]
            result = ops_append(ops, llvm.CallOp(symbol, *args, return_type=compute_type))
            return ops, _convert_float(result, element, ops)

        if isinstance(result_type, VectorType):
            new_ops, result = scalarize(operands, result_type, call_one)
        else:
            new_ops, result = call_one(operands)
        replace_with_lowered(op, new_ops, [result], rewriter)


def _convert_float(value: SSAValue, target: Attribute, ops: list[Operation]) -> SSAValue:
    """`value` extended or truncated to the float type `target` (ops appended to `ops`)."""
    source = value.type
    if source == target:
        return value
    widths = {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}
    if widths[type(source)] < widths[type(target)]:
        return ops_append(ops, llvm.FPExtOp(value, target))
    return ops_append(ops, llvm.FPTruncOp(value, target))


@dataclass
class UnsupportedMathLowering(RewritePattern):
    """math ops without a lowering yet (`math.ipowi`): fail rather than leave them behind."""

    op_types: ClassVar[tuple[type[Operation], ...]] = (math.IPowIOp,)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, math.IPowIOp):
            raise lowering_error(op, "has no lowering to the llvm dialect yet")


def math_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower every `math` op."""
    return [
        FloatIntrinsicLowering(lowering),
        IntegerIntrinsicLowering(lowering),
        LibmLowering(lowering),
        UnsupportedMathLowering(),
    ]
