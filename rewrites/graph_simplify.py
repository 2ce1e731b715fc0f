"""graph-simplify: the graph dialect's canonicalization patterns, applied to a fixpoint.

The patterns live with the dialect (dialects/graph/canonicalize.py), so that `canonicalize` and
`graph-simplify` apply the same rewrites.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.canonicalize import simplify, simplify_patterns
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

__all__ = ["GraphSimplifyPass", "simplify", "simplify_patterns"]


@dataclass(frozen=True)
class GraphSimplifyPass(ModulePass):
    """Canonicalize graph ops: drop no-op reshapes, transposes, concats and neutral operands.

    *Input invariant*: any module; only graph ops are rewritten, other ops are left alone.

    *Output IR*: the same ops, with these rewritten to a fixpoint (dead Pure ops removed):
    transpose(transpose(x)) composed into one transpose, identity transposes removed,
    transposes that only move size-1 axes turned into reshapes, reshape/flatten chains merged
    into one reshape, reshapes to the operand's own type removed, single-input concats
    removed, `x + 0`, `x - 0`, `x * 1`, `x / 1`, `x ** 1` (either side for + and *) removed
    when the constant's broadcast leaves x's type unchanged, casts, pads, broadcasts and
    slices that return their operand unchanged removed, reductions (keeping their axes) over
    axes of size 1 removed, a `graph.if` on a constant condition
    replaced by the ops of the branch it takes, and the outer kernel rows and columns of a conv
    with a constant weight that only ever read zero padding cut off (a dilated conv on a map
    smaller than its dilation: DeepLab's ASPP 3x3 convs become 1x1 convs), and a quantize of a
    dequantize with the same constant scales, zero points and axis replaced by the integers it
    started from (exact: `RemoveQuantizeRoundTrip`).

    *Invariants*: results are unchanged bit for bit, except that `-0.0 + 0` keeps its sign
    (and a conv's dropped `w * 0` products, which a non-finite weight would have made NaN);
    no op is created that was not there in another form; the patterns are also the ops'
    canonicalization patterns, so `canonicalize` applies them.

    No options.
    """

    name: ClassVar[str] = "graph-simplify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        simplify(op)
