"""The `index` type -> the target's pointer-sized integer, and `arith.index_cast` (MLIR's
IndexToLLVM and the index half of ArithToLLVM).

xDSL 0.75 has no `index` dialect: index values are `index`-typed arith values, block arguments and
function arguments. Their type lowers through `LLVMLowering.convert_type`; the only op proper to
them is `arith.index_cast`, a sign extension, a truncation or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    lowered,
    lowering_error,
    replace_with_lowered,
)
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import IntegerType, VectorType
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern


@dataclass
class IndexCastLowering(RewritePattern):
    """`arith.index_cast` -> `llvm.sext` (widening), `llvm.trunc` (narrowing) or nothing, on
    scalars and on vectors (a vectorized loop's index arithmetic)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input, self.lowering, rewriter)
        result_type = self.lowering.convert_type(op.result.type)
        source_element, result_element = _element(source.type), _element(result_type)
        if not isinstance(source_element, IntegerType) or not isinstance(
            result_element, IntegerType
        ):
            raise lowering_error(
                op, f"expected integers or vectors of integers, found {op.input.type} to "
                f"{op.result.type}"
            )
        source_width, result_width = source_element.width.data, result_element.width.data
        new_ops: list[Operation] = []
        if result_width > source_width:
            new_ops.append(llvm.SExtOp(source, result_type))
        elif result_width < source_width:
            new_ops.append(llvm.TruncOp(source, result_type))
        new_result = new_ops[-1].results[0] if new_ops else source
        replace_with_lowered(op, new_ops, [new_result], rewriter)


def _element(type_: Attribute) -> Attribute:
    return type_.element_type if isinstance(type_, VectorType) else type_


def index_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns proper to index values: `arith.index_cast`."""
    return [IndexCastLowering(lowering)]
