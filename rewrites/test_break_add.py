"""test-break-add: a deliberately wrong pass, for testing `dlc-opt --check-semantics` only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import AddOp, SubOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


class BreakAdd(RewritePattern):
    """`graph.add` → `graph.sub`: wrong on purpose."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, SubOp(op.lhs, op.rhs))


@dataclass(frozen=True)
class TestBreakAddPass(ModulePass):
    """Turn every `graph.add` into `graph.sub` — a broken pass that `--check-semantics` must catch.

    *Input invariant*: any module.

    *Output IR*: each `graph.add %a, %b` is `graph.sub %a, %b` (same types).

    *Invariants*: none on purpose: results change wherever an add's rhs is non-zero. Test only.

    No options.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class, despite its name

    name: ClassVar[str] = "test-break-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(BreakAdd()).rewrite_module(op)
