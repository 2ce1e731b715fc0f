"""`loop.intrinsic` -> the LLVM intrinsic its library entry names (target/intrinsics.py).

Counterpart: the `impl` half of TVM's `TensorIntrin` (an `T.call_llvm_pure_intrin`). Each operand
is passed as its entry says: "vector" operands bitcast to the intrinsic's argument type (64 i8
-> 16 i32), "splat32" operands (4 bytes, or 2 bf16) bitcast to one i32 word broadcast to every
lane, then bitcast to the argument type; the result is bitcast back to the accumulator's type.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.dialects.loop.ops import IntrinsicOp, intrinsic_element_type
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    lowered_operands,
    lowering_error,
    ops_append,
    replace_with_lowered,
    splat,
)
from dlc.target.intrinsics import IntrinsicError, get_intrinsic
from xdsl.dialects import llvm
from xdsl.dialects.builtin import VectorType, i32
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern


def _cast(value: SSAValue, type_: VectorType, ops: list[Operation]) -> SSAValue:
    return value if value.type == type_ else ops_append(ops, llvm.BitcastOp(value, type_))


@dataclass
class IntrinsicLowering(RewritePattern):
    """`loop.intrinsic "NAME" %acc, %a, %b` -> `llvm.call_intrinsic` of the entry's intrinsic."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IntrinsicOp, rewriter: PatternRewriter) -> None:
        try:
            entry = get_intrinsic(op.intrinsic.data)
        except IntrinsicError as error:
            raise lowering_error(op, str(error)) from None
        if not entry.llvm_intrinsic:
            raise lowering_error(
                op, f"expected an intrinsic with an LLVM call, found \"{entry.name}\" "
                f"({entry.ptx}), which only the GPU path emits")
        ops: list[Operation] = []
        args: list[SSAValue] = []
        for operand, value in zip(entry.operands, lowered_operands(op, self.lowering, rewriter),
                                  strict=True):
            lanes, element = operand.llvm_type
            arg_type = VectorType(intrinsic_element_type(element), [lanes])
            if operand.passing == "splat32":
                word = ops_append(ops, llvm.BitcastOp(value, i32))
                words = VectorType(i32, [lanes * _bits(element) // 32])
                broadcast = splat(word, words)
                ops.extend(broadcast)
                args.append(_cast(broadcast[-1].results[0], arg_type, ops))
            else:
                args.append(_cast(value, arg_type, ops))
        acc_lanes, acc_element = entry.acc.llvm_type
        acc_type = VectorType(intrinsic_element_type(acc_element), [acc_lanes])
        call = call_intrinsic(entry.llvm_intrinsic, args, acc_type)
        ops.append(call)
        result_type = op.result.type
        assert isinstance(result_type, VectorType)
        result = _cast(call.results[0], result_type, ops)
        replace_with_lowered(op, ops, [result], rewriter)


def _bits(element: str) -> int:
    return {"i8": 8, "f16": 16, "bf16": 16, "i32": 32, "f32": 32}[element]


def intrinsic_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The pattern lowering `loop.intrinsic`."""
    return [IntrinsicLowering(lowering)]
