"""`cf` -> `llvm` (MLIR's ControlFlowToLLVM): unconditional and conditional branches.

Loops and structured control flow (`loop.for`, `scf.for`, `scf.if`) are first lowered to `cf`
branches over `index` block arguments; these patterns finish the job. The block arguments
themselves get their lowered types when the enclosing `func.func` is lowered.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.dialects.contracts import UNROLL_FULL_ATTR
from dlc.rewrites.llvm_lowering.common import LLVMLowering, lowered
from xdsl.dialects import cf, llvm
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern


@dataclass
class BranchLowering(RewritePattern):
    """`cf.br` -> `llvm.br` (keeping a loop's `UNROLL_FULL_ATTR`)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter) -> None:
        args = [lowered(arg, self.lowering, rewriter) for arg in op.arguments]
        branch = llvm.BrOp(op.successor, *args)
        if UNROLL_FULL_ATTR in op.attributes:
            branch.attributes[UNROLL_FULL_ATTR] = op.attributes[UNROLL_FULL_ATTR]
        rewriter.replace(op, [branch], [])


@dataclass
class CondBranchLowering(RewritePattern):
    """`cf.cond_br` -> `llvm.cond_br`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter) -> None:
        then_args = [lowered(arg, self.lowering, rewriter) for arg in op.then_arguments]
        else_args = [lowered(arg, self.lowering, rewriter) for arg in op.else_arguments]
        branch = llvm.CondBrOp(op.cond, op.then_block, then_args, op.else_block, else_args)
        rewriter.replace(op, [branch], [])


def cf_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower `cf.br` and `cf.cond_br`."""
    return [BranchLowering(lowering), CondBranchLowering(lowering)]
