"""Canonicalization patterns of the graph dialect (Relay's SimplifyExpr), MLIR's
`getCanonicalizationPatterns` kept beside the ops.

The ops carry `GraphCanonicalizationPatterns` (dialects/graph/ops.py), which asks `patterns_for`
here, so xDSL's `canonicalize` applies them; the `graph-simplify` pass
(rewrites/graph_simplify.py) applies all of them to a fixpoint with `simplify`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph.ops import (
    AddOp,
    ConcatOp,
    ConstantOp,
    Conv2DOp,
    DivOp,
    FlattenOp,
    MulOp,
    PowOp,
    ReduceOp,
    ReshapeOp,
    SubOp,
    TransposeOp,
)
from dlc.dialects.graph.ops_control import IfOp
from dlc.dialects.graph.ops_quant import DequantizeOp, QuantizeOp
from dlc.dialects.graph.ops_tensor import BroadcastToOp, CastOp, PadOp, SliceOp
from dlc.dialects.graph.utils import (
    build_constant,
    compose_permutations,
    constant_array,
    is_identity_permutation,
    reshape_target,
    shape_of,
    splat_value,
)
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import region_dce


def _forward(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> None:
    """Replace `op`'s single result by `value` (same type) and erase `op`."""
    rewriter.replace(op, [], [value])


class RemoveIdentityTranspose(RewritePattern):
    """`transpose(x, [0, 1, ..., n-1])` → `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        if is_identity_permutation(op.perm_tuple()):
            _forward(rewriter, op, op.x)


class ComposeTransposes(RewritePattern):
    """`transpose(transpose(x, p), q)` → `transpose(x, p∘q)` (axis i of the result is p[q[i]])."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.x.owner
        if not isinstance(inner, TransposeOp):
            return
        perm = compose_permutations(inner.perm_tuple(), op.perm_tuple())
        if is_identity_permutation(perm):
            _forward(rewriter, op, inner.x)
            return
        rewriter.replace(op, TransposeOp(inner.x, perm))


class TransposeOfUnitAxesToReshape(RewritePattern):
    """A transpose that only moves size-1 axes is a reshape: the element order is unchanged.

    `transpose(x : 1x1x1x64, [0, 3, 1, 2])` → `reshape(x) : 1x64x1x1`.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        shape = shape_of(op.x)
        perm = op.perm_tuple()
        if is_identity_permutation(perm):
            return
        moved = [axis for axis in perm if shape[axis] != 1]
        if moved != sorted(moved):
            return
        rewriter.replace(op, ReshapeOp(op.x, reshape_target(op.result)))


class ComposeReshapes(RewritePattern):
    """`reshape(reshape(x))` → `reshape(x)`; flatten counts as a reshape on either side."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp | FlattenOp, rewriter: PatternRewriter) -> None:
        inner = op.x.owner
        if not isinstance(inner, ReshapeOp | FlattenOp):
            return
        runtime = [sum(1 for d in shape_of(v) if d < 0) for v in (inner.x, op.x, op.result)]
        if runtime[0] > 1 and len(set(runtime)) > 1:
            return  # runtime dims merged on the way: the pairing might not compose
        rewriter.replace(op, ReshapeOp(inner.x, reshape_target(op.result)))


class RemoveNoOpReshape(RewritePattern):
    """A reshape or flatten whose result type is its operand's type → its operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp | FlattenOp, rewriter: PatternRewriter) -> None:
        if op.result.type == op.x.type:
            _forward(rewriter, op, op.x)


class RemoveSingleInputConcat(RewritePattern):
    """`concat(x)` of one input → `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) == 1 and op.inputs[0].type == op.result.type:
            _forward(rewriter, op, op.inputs[0])


class RemoveNoOpTensorOp(RewritePattern):
    """Casts to the operand's own type, pads of zero, broadcasts to the operand's own shape and
    slices that take every element in order → their operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: CastOp | PadOp | BroadcastToOp | SliceOp, rewriter: PatternRewriter
    ) -> None:
        if op.result.type != op.x.type:  # (pads are non-negative: same type means none)
            return
        if isinstance(op, SliceOp):
            steps = zip(op.steps_tuple(), shape_of(op.x), strict=True)
            if any(step != 1 and dim != 1 for step, dim in steps):
                return  # a reversal keeps the type but not the order
        _forward(rewriter, op, op.x)


class RemoveUnitReduce(RewritePattern):
    """A reduction that keeps its axes and reduces only axes of size 1 (`result` of the
    operand's own type) → its operand: the sum, mean, max, min or product of one element is
    that element (a layer norm over a width-1 axis)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter) -> None:
        if op.result.type == op.x.type:
            _forward(rewriter, op, op.x)


_RIGHT_IDENTITY: dict[type[Operation], float] = {
    AddOp: 0, SubOp: 0, MulOp: 1, DivOp: 1, PowOp: 1,
}
"""For each binary op, the constant c with `x op c == x`."""

_COMMUTATIVE: tuple[type[Operation], ...] = (AddOp, MulOp)


class RemoveNeutralOperand(RewritePattern):
    """`x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1`, `x ** 1` → `x`.

    Only when the constant's broadcast leaves x's shape unchanged (the result type is x's type).
    `x + 0` turns -0.0 into +0.0; the rewrite keeps -0.0 (the values compare equal).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: AddOp | SubOp | MulOp | DivOp | PowOp, rewriter: PatternRewriter
    ) -> None:
        neutral = _RIGHT_IDENTITY[type(op)]
        candidates = [(op.lhs, op.rhs)]
        if isinstance(op, _COMMUTATIVE):
            candidates.append((op.rhs, op.lhs))
        for kept, constant in candidates:
            if kept.type != op.result.type:
                continue
            value = splat_value(constant)
            if value is not None and value == neutral:
                _forward(rewriter, op, kept)
                return


class InlineConstantIf(RewritePattern):
    """`graph.if` on a constant condition → the ops of the branch it takes, inlined in its
    place (exported models branch on shapes that are static here)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IfOp, rewriter: PatternRewriter) -> None:
        condition = op.cond.owner
        if not isinstance(condition, ConstantOp):
            return
        taken = op.then_region if bool(condition.to_array().reshape(-1)[0]) else op.else_region
        block = taken.block
        terminator = block.last_op
        assert terminator is not None, "verified: the region ends with graph.yield"
        values = list(terminator.operands)
        rewriter.erase_op(terminator)
        rewriter.inline_block(block, InsertPoint.before(op))
        rewriter.replace(op, [], values)


def image_taps(size: int, out: int, kernel: int, stride: int, dilation: int, pad: int,
               ) -> tuple[int, int]:
    """The first and last tap of a convolution window along one axis that read the image (not
    the zero padding) for at least one output position.

    Tap `k` reads input index `o * stride + k * dilation - pad` for the outputs `o` in
    [0, out); a tap whose every index falls outside [0, size) only multiplies padding.
    Returns (0, kernel - 1) when every tap reads the image, and (-1, -1) when none does.
    """
    kept = [k for k in range(kernel)
            if any(0 <= o * stride + k * dilation - pad < size for o in range(out))]
    return (kept[0], kept[-1]) if kept else (-1, -1)


class DropPaddingOnlyTaps(RewritePattern):
    """A conv whose outer kernel rows or columns read only zero padding → the same conv with
    those taps cut from its (constant) weight and the padding reduced to match.

    This is what a dilated conv with a large dilation on a small feature map looks like
    (DeepLab's ASPP: dilation 24 and 36 on a 16x16 map): every tap but the centre reads
    padding, so the 3x3 conv is a 1x1 conv that needs no padded copy of its input. The
    products dropped are `w * 0`, so the sums are unchanged (exactly, for finite weights).
    Only when the weight is a `graph.constant` and the new padding is non-negative.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp, rewriter: PatternRewriter) -> None:
        weight = constant_array(op.weight)
        if weight is None:
            return
        layout, kernel_layout = op.layout_value(), op.kernel_layout_value()
        in_shape, out_shape = shape_of(op.input), shape_of(op.result)
        top, left, bottom, right = op.padding_tuple()
        window: list[slice] = [slice(None)] * 4
        padding = [top, left, bottom, right]
        dilations = list(op.dilation_tuple())
        for axis, lo in enumerate((top, left)):
            dim = "HW"[axis]
            size, out = in_shape[layout.index(dim)], out_shape[layout.index(dim)]
            kernel = weight.shape[kernel_layout.index(dim)]
            stride, dilation = op.strides_tuple()[axis], op.dilation_tuple()[axis]
            first, last = image_taps(size, out, kernel, stride, dilation, lo)
            if first < 0 or (first, last) == (0, kernel - 1):
                continue  # (no tap reads the image: leave the all-zero conv alone)
            new_lo = lo - first * dilation
            new_hi = (out - 1) * stride + last * dilation - lo - (size - 1)
            if new_lo < 0 or new_hi < 0:
                continue
            window[kernel_layout.index(dim)] = slice(first, last + 1)
            padding[axis], padding[axis + 2] = new_lo, new_hi
            if first == last:
                dilations[axis] = 1  # one tap left: its dilation means nothing
        if all(cut == slice(None) for cut in window):
            return
        new_weight = build_constant(weight[tuple(window)])
        conv = Conv2DOp(op.input, new_weight, op.bias, strides=op.strides_tuple(),
                        padding=padding, dilation=dilations,
                        groups=op.groups_value(), layout=layout, kernel_layout=kernel_layout)
        conv.location = op.location
        rewriter.replace(op, [new_weight, conv], [conv.result])


FLOAT32_MAX = float(np.finfo(np.float32).max)


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))


class RemoveQuantizeRoundTrip(RewritePattern):
    """`quantize(dequantize(q, s, z), s, z)` → `q` (constant scales and zero points equal on
    both sides, the same axis, q of the quantize's type): a QDQ pair left around an op that
    folded away (a zero bias add), as ONNX Runtime's QDQ cleanup removes a DQ -> Q pair with
    matching parameters. Exact: with n = q - z an integer of magnitude at most 255 and each
    float32 operation rounding by at most 2^-24 relative, `(n s) / s` lies within
    255 * 2^-23 < 0.5 of n and rounds to n, and n + z = q needs no clamp. Not where 255 |s|
    overflows float32, nor for a scale of 0 or NaN."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp, rewriter: PatternRewriter) -> None:
        dq = op.x.owner
        if not isinstance(dq, DequantizeOp) or dq.x.type != op.result.type:
            return
        arrays = [constant_array(value) for value in
                  (dq.scale, op.scale, dq.zero_point, op.zero_point)]
        if any(array is None for array in arrays):
            return
        scale, y_scale, zero, y_zero = (np.asarray(array) for array in arrays)
        if not (_same_array(scale, y_scale) and _same_array(zero, y_zero)):
            return
        magnitude = np.abs(scale.astype(np.float64))
        if not (np.all(magnitude > 0) and np.all(255 * magnitude <= FLOAT32_MAX)):
            return
        if scale.size > 1:
            rank = len(shape_of(dq.x))
            if dq.axis_value() % rank != op.axis_value() % rank:
                return
        _forward(rewriter, op, dq.x)


def simplify_patterns() -> list[RewritePattern]:
    """Every graph-simplify pattern, for other passes and pipelines to reuse."""
    return [
        RemoveIdentityTranspose(),
        ComposeTransposes(),
        TransposeOfUnitAxesToReshape(),
        ComposeReshapes(),
        RemoveNoOpReshape(),
        RemoveSingleInputConcat(),
        RemoveNeutralOperand(),
        RemoveNoOpTensorOp(),
        RemoveUnitReduce(),
        InlineConstantIf(),
        DropPaddingOnlyTaps(),
        RemoveQuantizeRoundTrip(),
    ]


_PATTERNS_BY_OP: dict[type[Operation], tuple[type[RewritePattern], ...]] = {
    TransposeOp: (RemoveIdentityTranspose, ComposeTransposes, TransposeOfUnitAxesToReshape),
    ReshapeOp: (RemoveNoOpReshape, ComposeReshapes),
    FlattenOp: (RemoveNoOpReshape, ComposeReshapes),
    ConcatOp: (RemoveSingleInputConcat,),
    AddOp: (RemoveNeutralOperand,),
    SubOp: (RemoveNeutralOperand,),
    MulOp: (RemoveNeutralOperand,),
    DivOp: (RemoveNeutralOperand,),
    PowOp: (RemoveNeutralOperand,),
    CastOp: (RemoveNoOpTensorOp,),
    PadOp: (RemoveNoOpTensorOp,),
    BroadcastToOp: (RemoveNoOpTensorOp,),
    SliceOp: (RemoveNoOpTensorOp,),
    IfOp: (InlineConstantIf,),
    ReduceOp: (RemoveUnitReduce,),
    Conv2DOp: (DropPaddingOnlyTaps,),
    QuantizeOp: (RemoveQuantizeRoundTrip,),
}


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The graph-simplify patterns rooted at `op_type` (its canonicalization patterns)."""
    return tuple(pattern() for pattern in _PATTERNS_BY_OP.get(op_type, ()))


def simplify(module: ModuleOp, extra: Sequence[RewritePattern] = ()) -> bool:
    """Apply the simplify patterns (and `extra` ones) to a fixpoint, removing dead ops.

    Returns whether the module changed.
    """
    walker = PatternRewriteWalker(
        GreedyRewritePatternApplier([*simplify_patterns(), *extra]),
        post_walk_func=region_dce,
    )
    return walker.rewrite_module(module)
