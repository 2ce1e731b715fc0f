"""`TypeDispatchApplier`: the patterns it tries for an op, and the same lowering as xDSL's
greedy applier."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects import make_context
from dlc.rewrites.convert_loop_to_llvm import op_patterns, structure_patterns
from dlc.rewrites.llvm_lowering.common import LLVMLowering
from dlc.rewrites.pattern_dispatch import TypeDispatchApplier, rewritten_op_types
from xdsl.dialects import arith
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


class OnAdd(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp | arith.AddfOp, rewriter: PatternRewriter) -> None:
        pass


@dataclass
class FromTable(RewritePattern):
    op_types: ClassVar[tuple[type[Operation], ...]] = (arith.MuliOp,)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        pass


class AnyOp(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        pass


def test_op_types_from_annotation_table_or_none() -> None:
    assert rewritten_op_types(OnAdd()) == (arith.AddiOp, arith.AddfOp)
    assert rewritten_op_types(FromTable()) == (arith.MuliOp,)
    assert rewritten_op_types(AnyOp()) is None


def test_candidates_keep_order_and_include_generic_patterns() -> None:
    on_add, table, generic = OnAdd(), FromTable(), AnyOp()
    applier = TypeDispatchApplier([on_add, generic, table])
    assert applier.candidates(arith.AddiOp) == (on_add, generic)
    assert applier.candidates(arith.MuliOp) == (generic, table)
    assert applier.candidates(arith.SubiOp) == (generic,)


def test_every_llvm_lowering_pattern_names_its_op_types() -> None:
    """A pattern without op types is tried on every op: the lowering keeps none."""
    lowering = LLVMLowering()
    for pattern in [*structure_patterns(lowering), *op_patterns(lowering, True)]:
        assert rewritten_op_types(pattern), type(pattern).__name__


KERNEL = """
func.func @f(%a: memref<8x16xf32>, %b: memref<8x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind unrolled {
    loop.for %j = %c0 to %c16 step %c1 axis "j" kind vectorized {
      %x = loop.load %a[%i, %j] : memref<8x16xf32> -> f32
      %e = math.exp %x : f32
      %y = arith.mulf %e, %x : f32
      %k = arith.index_cast %j : index to i32
      %f = arith.sitofp %k : i32 to f32
      %z = arith.maximumf %y, %f : f32
      loop.store %z, %b[%i, %j] : f32 -> memref<8x16xf32>
    }
  }
  func.return
}
"""


def test_same_lowering_as_the_greedy_applier() -> None:
    lowering = LLVMLowering()
    results = []
    for applier in (GreedyRewritePatternApplier, TypeDispatchApplier):
        module = Parser(make_context(), KERNEL).parse_module()
        for patterns in (structure_patterns(lowering), op_patterns(lowering, True)):
            PatternRewriteWalker(applier(patterns)).rewrite_module(module)
        results.append(str(module))
    assert results[0] == results[1]
    assert "loop.for" not in results[1] and "arith." not in results[1]
    assert "dlc.unroll_full" in results[1]
