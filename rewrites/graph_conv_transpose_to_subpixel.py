"""graph-conv-transpose-to-subpixel: a stride-s transposed conv as one ordinary conv computing
the s*s output phases as channels, then a depth-to-space shuffle (and a crop).

Counterpart: the sub-pixel convolution of Shi et al. (ESPCN, "PixelShuffle"), the rewrite that
ONNX Runtime and oneDNN apply to deconvolutions; TVM instead dilates and pads the input, which
multiplies mostly zeros. Here no product of a zero is computed except the taps a phase lacks
when the kernel is not a multiple of the stride (a 3-tap kernel at stride 2: 4 taps, one zero).

Derivation, along one axis (stride s, kernel K, crop `top`): the full output row Y = s*i + k
receives in[i] * w[k]. With Y = s*q + p (0 <= p < s) the taps are k = p + s*j, j in [0, J),
J = ceil(K/s), reading in[q - j]: phase p is the correlation of `in` (padded by J-1 in front)
with the flipped kernel w'_p[t] = w[p + s*(J-1-t)] (zero past K). One conv with weight
[g, s_h, s_w, O/g] x C/g x J_h x J_w computes all phases; its output, reshaped and transposed to
N x O x (R*s_h) x (C*s_w), is the full output, which a slice crops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from dlc.dialects.graph.attrs import is_float_type
from dlc.dialects.graph.ops import Conv2DOp, ReshapeOp, TransposeOp
from dlc.dialects.graph.ops_tensor import ConvTranspose2DOp, SliceOp
from dlc.dialects.graph.utils import build_constant, constant_array, shape_of
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


@dataclass(frozen=True)
class AxisPlan:
    """The sub-pixel conv along one spatial axis.

    Attributes:
        stride: the transposed conv's stride s (the number of phases).
        taps: J = ceil(K / s), the conv's kernel extent.
        pad_begin, pad_end: the conv's padding.
        rows: R, the conv's output extent (R*s rows after the shuffle).
        crop: the first shuffled row that is an output row.
    """

    stride: int
    taps: int
    pad_begin: int
    pad_end: int
    rows: int
    crop: int


def plan_axis(size: int, kernel: int, stride: int, top: int, out: int) -> AxisPlan | None:
    """The plan for an input of `size`, a `kernel` at `stride`, the crop `top` and `out`
    output rows; None when the crop is deeper than the kernel (the conv would need a negative
    padding)."""
    taps = -(-kernel // stride)
    first = top // stride  # the first phase row q that holds an output row
    pad_begin = taps - 1 - first
    if pad_begin < 0:
        return None
    needed = -(-(top + out) // stride) - first
    pad_end = max(0, needed - size - pad_begin + taps - 1)
    rows = size + pad_begin + pad_end - taps + 1
    return AxisPlan(stride, taps, pad_begin, pad_end, rows, top - stride * first)


def subpixel_weight(
    weight: np.ndarray, groups: int, stride: tuple[int, int], taps: tuple[int, int]
) -> np.ndarray:
    """ConvTranspose's C x O/g x K_h x K_w weight as the sub-pixel conv's OIHW weight:
    [g, p_h, p_w, o] x C/g x J_h x J_w with w'[g, p_h, p_w, o, c, t_h, t_w] =
    w[g*C/g + c, o, p_h + s_h*(J_h-1-t_h), p_w + s_w*(J_w-1-t_w)] (zero past the kernel)."""
    channels, outs, kh, kw = weight.shape
    (sh, sw), (jh, jw) = stride, taps
    padded = np.zeros((channels, outs, sh * jh, sw * jw), dtype=weight.dtype)
    padded[:, :, :kh, :kw] = weight
    # k = j*s + p: split each kernel axis into (j, p), flip j (t = J-1-j).
    split = padded.reshape(groups, channels // groups, outs, jh, sh, jw, sw)[:, :, :, ::-1, :, ::-1]
    # (g, c, o, t_h, p_h, t_w, p_w) -> (g, p_h, p_w, o, c, t_h, t_w)
    phases = split.transpose(0, 4, 6, 2, 1, 3, 5)
    return np.ascontiguousarray(phases.reshape(groups * sh * sw * outs, channels // groups,
                                               jh, jw))


def _build(ops: list[Operation], op: Operation) -> SSAValue:
    ops.append(op)
    return op.results[0]


@dataclass
class RewriteConvTransposeToSubpixel(RewritePattern):
    """`conv_transpose2d(x, w, b)` with a constant weight → conv2d, reshape, transpose,
    reshape, slice."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvTranspose2DOp, rewriter: PatternRewriter) -> None:
        if op.dilation_tuple() != (1, 1) or any(d < 0 for d in shape_of(op.input)[2:]):
            return  # a runtime height or width: its depth-to-space would merge runtime dims
        element_type = op.result.type.get_element_type()  # type: ignore[attr-defined]
        if not is_float_type(element_type):
            return
        weight = constant_array(op.weight)
        if weight is None:
            return
        bias = None
        if op.bias is not None:
            bias = constant_array(op.bias)
            if bias is None:
                return
        n, _, height, width = shape_of(op.input)
        _, outs, kh, kw = weight.shape
        _, out_channels, out_h, out_w = shape_of(op.result)
        groups = op.groups_value()
        top, left, _, _ = op.padding_tuple()
        sh, sw = op.strides_tuple()
        plan_h = plan_axis(height, kh, sh, top, out_h)
        plan_w = plan_axis(width, kw, sw, left, out_w)
        if plan_h is None or plan_w is None:
            return
        ops: list[Operation] = []
        new_weight = _build(ops, build_constant(
            subpixel_weight(weight, groups, (sh, sw), (plan_h.taps, plan_w.taps))))
        new_bias = None
        if bias is not None:
            # [g, p_h, p_w, o]: each group's bias repeated for every phase.
            tiled = np.broadcast_to(bias.reshape(groups, 1, 1, outs), (groups, sh, sw, outs))
            new_bias = _build(ops, build_constant(np.ascontiguousarray(tiled).reshape(-1)))
        conv = Conv2DOp(
            op.input, new_weight, new_bias,
            padding=(plan_h.pad_begin, plan_w.pad_begin, plan_h.pad_end, plan_w.pad_end),
            groups=groups)
        conv.location = op.location
        value = _build(ops, conv)
        rows, cols = plan_h.rows, plan_w.rows
        if sh * sw > 1:
            batch = max(n, -1)  # a dynamic batch stays the reshapes' leading -1
            value = _build(ops, ReshapeOp(value, [batch, groups, sh, sw, outs, rows, cols]))
            # (n, g, p_h, p_w, o, r, c) -> (n, g, o, r, p_h, c, p_w)
            value = _build(ops, TransposeOp(value, [0, 1, 4, 5, 2, 6, 3]))
            value = _build(ops, ReshapeOp(value, [batch, out_channels, rows * sh, cols * sw]))
        if (plan_h.crop, plan_w.crop, out_h, out_w) != (0, 0, rows * sh, cols * sw):
            value = _build(ops, SliceOp(value, [0, 0, plan_h.crop, plan_w.crop],
                                        [n, out_channels, out_h, out_w], [1, 1, 1, 1]))
        rewriter.replace(op, ops, [value])


@dataclass(frozen=True)
class GraphConvTransposeToSubpixelPass(ModulePass):
    """Rewrite transposed convs with a constant weight into sub-pixel convs.

    *Input invariant*: any module.

    *Output IR*: each `graph.conv_transpose2d` with dilation 1, a float element type, a weight
    (and bias, if any) that `graph.constant`s define, and a crop (`padding`'s top and left)
    no deeper than the kernel becomes `graph.conv2d` (stride 1, the same groups, a new weight
    of s_h*s_w times the output channels and ceil(K/s) taps per axis) on the same input,
    followed by `graph.reshape`, `graph.transpose`, `graph.reshape` (depth to space, only when
    the stride is above 1) and `graph.slice` (only when it crops). The old constants go when
    nothing else uses them.

    *Invariants*: results change only by the order of the sums.
    """

    name: ClassVar[str] = "graph-conv-transpose-to-subpixel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            RewriteConvTransposeToSubpixel(), post_walk_func=region_dce,
        ).rewrite_module(op)
