"""graph-conv-column-to-row: a conv down a column (input width 1, kernel width 1) as the same
conv along a row (height 1), so that its long spatial axis is the contiguous one.

An N x C x H x 1 tensor and an N x C x 1 x H tensor hold their elements in the same order, so
the rewrite only reshapes: the input to N x C x 1 x H, the weight to O x C x 1 x KH, the result
back. The default CPU schedule vectorizes a conv's innermost spatial axis, which for a column
is one element wide: a 5x1 conv over a 256x1 input ran scalar at 0.5 GFLOP/s; as a row it is
the row kernel (vectors along the 256 outputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import Conv2DOp, ReshapeOp
from dlc.dialects.graph.utils import build_constant, constant_array, reshape_target, shape_of
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import region_dce


def _as_row(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """`value` (4-D, width 1) as the same elements of height 1: a new constant when it is one,
    else a reshape."""
    n, c, h, _ = shape_of(value)
    array = constant_array(value)
    op: Operation = (ReshapeOp(value, [max(n, -1), c, 1, h]) if array is None
                     else build_constant(array.reshape(n, c, 1, h)))
    ops.append(op)
    return op.results[0]


@dataclass
class RewriteColumnConvToRow(RewritePattern):
    """`conv2d(x: NxCxHx1, w: OxCxKHx1)` → `reshape(conv2d(x as NxCx1xH, w as OxCx1xKH))`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp, rewriter: PatternRewriter) -> None:
        if op.layout_value() != "NCHW" or op.kernel_layout_value() != "OIHW":
            return
        _, _, height, width = shape_of(op.input)
        _, _, kh, kw = shape_of(op.weight)
        top, left, bottom, right = op.padding_tuple()
        if width != 1 or kw != 1 or left or right or height == 1:
            return
        (sh, _), (dh, _) = op.strides_tuple(), op.dilation_tuple()
        ops: list[Operation] = []
        x, w = _as_row(op.input, ops), _as_row(op.weight, ops)
        conv = Conv2DOp(x, w, op.bias, strides=(1, sh), padding=(0, top, 0, bottom),
                        dilation=(1, dh), groups=op.groups_value())
        conv.location = op.location
        ops.append(conv)
        ops.append(ReshapeOp(conv.result, reshape_target(op.result)))
        rewriter.replace(op, ops, [ops[-1].results[0]])


@dataclass(frozen=True)
class GraphConvColumnToRowPass(ModulePass):
    """Rewrite convs down a column (width 1) as convs along a row (height 1).

    *Input invariant*: any module.

    *Output IR*: each `graph.conv2d` with layout NCHW / OIHW, an input of width 1 and more
    than one row, a kernel of width 1 and no left or right padding becomes a `graph.conv2d`
    with height and width exchanged (strides, dilations and padding exchanged too) on the input
    reshaped to height 1 and the weight reshaped likewise (a new constant when the weight is
    a `graph.constant`), followed by a `graph.reshape` back to the original result type.

    *Invariants*: results are unchanged (the same products summed in the same order).
    """

    name: ClassVar[str] = "graph-conv-column-to-row"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(RewriteColumnConvToRow(), post_walk_func=region_dce).rewrite_module(
            op)
