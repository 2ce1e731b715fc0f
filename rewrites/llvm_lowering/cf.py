"""`cf` -> `llvm` (MLIR's ControlFlowToLLVM): unconditional and conditional branches.

Loops and structured control flow (`loop.for`, `scf.for`, `scf.if`, `scf.while`) are first
lowered to `cf` branches over `index` block arguments; these patterns finish the job. The block
arguments themselves get their lowered types when the enclosing `func.func` is lowered.
`WhileLowering` is the `scf.while` -> `cf` pattern that xDSL's `convert-scf-to-cf` lacks (MLIR's
SCFToControlFlow `WhileLowering`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.dialects.contracts import UNROLL_FULL_ATTR
from dlc.rewrites.llvm_lowering.common import LLVMLowering, lowered
from xdsl.dialects import cf, llvm, scf
from xdsl.ir import Block
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import BlockInsertPoint, InsertPoint


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


class WhileLowering(RewritePattern):
    """`scf.while` -> `cf`: the block is split at the loop; the "before" region becomes the
    header (its `scf.condition` a `cf.cond_br` to the "after" region's entry or to the
    continuation, whose arguments replace the loop's results), and the "after" region's
    `scf.yield` branches back to the header."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter) -> None:
        block = op.parent_block()
        parent = block.parent_region() if block is not None else None
        assert block is not None and parent is not None
        remaining = block.split_before(op)
        continuation = Block(arg_types=op.result_types)
        parent.insert_block_before(continuation, remaining)
        rewriter.insert(cf.BranchOp(remaining), InsertPoint.at_end(continuation))

        before_entry = op.before_region.first_block
        after_entry = op.after_region.first_block
        assert before_entry is not None and after_entry is not None
        condition = op.before_region.last_block.last_op  # type: ignore[union-attr]
        assert isinstance(condition, scf.ConditionOp)
        rewriter.insert(
            cf.ConditionalBranchOp(condition.condition, after_entry, condition.args,
                                   continuation, condition.args),
            InsertPoint.after(condition),
        )
        rewriter.erase(condition)
        terminator = op.after_region.last_block.last_op  # type: ignore[union-attr]
        assert isinstance(terminator, scf.YieldOp)
        rewriter.insert(cf.BranchOp(before_entry, *terminator.arguments),
                        InsertPoint.after(terminator))
        rewriter.erase(terminator)
        rewriter.inline_region(op.before_region, BlockInsertPoint.before(continuation))
        rewriter.inline_region(op.after_region, BlockInsertPoint.before(continuation))
        rewriter.insert(cf.BranchOp(before_entry, *op.arguments), InsertPoint.at_end(block))
        rewriter.replace(op, [], continuation.args)


def cf_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower `cf.br` and `cf.cond_br`."""
    return [BranchLowering(lowering), CondBranchLowering(lowering)]
