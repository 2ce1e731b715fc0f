"""graph-conv-subsample: a conv that reads only every s-th input row (or column) runs on those
rows alone, with stride 1.

Along a spatial axis where the kernel has one tap, no padding and stride s > 1, output point `o`
reads input line `s * o` and nothing else: the input lines between are never read. The rewrite
slices them out (`graph.slice` with step s) and gives the conv stride 1 along that axis. The
conv then reads its input contiguously, and where both axes are subsampled (ResNet's 1x1
stride-2 downsampling convs) its output plane is one run of pixels the default schedule
blocks as a GEMM's rows; strided, the kernel read every vector with a shuffle and blocked each
output row of 7-28 pixels alone (512 -> 1024 channels at 28x28, 2 threads: 2.1 ms strided, 1.1
ms sliced; the slice copies a quarter of the input, once).

Counterpart: TVM's `conv2d_NCHWc` handles 1x1 strides in its index arithmetic (its vectors run
along channels); ONNX Runtime's NCHWc convs likewise. dlc's row kernel vectorizes along the
output row, so the subsampling is a layout decision made once, at the graph level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import Conv2DOp
from dlc.dialects.graph.ops_tensor import SliceOp
from dlc.dialects.graph.utils import shape_of
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


@dataclass
class SubsampleConvInput(RewritePattern):
    """`conv2d(x)` with a one-tap, unpadded, strided axis → `conv2d(slice(x, step s))` with
    stride 1 along it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp, rewriter: PatternRewriter) -> None:
        layout, kernel_layout = op.layout_value(), op.kernel_layout_value()
        input_shape, weight_shape = shape_of(op.input), shape_of(op.weight)
        output_shape = shape_of(op.result)
        if any(size < 0 for size in (*input_shape, *weight_shape)):
            return
        strides = list(op.strides_tuple())
        dilation = list(op.dilation_tuple())
        top, left, bottom, right = op.padding_tuple()
        pads = ((top, bottom), (left, right))
        sizes, steps = list(input_shape), [1] * len(input_shape)
        for i, axis in enumerate("HW"):
            taps = weight_shape[kernel_layout.index(axis)]
            if taps != 1 or strides[i] == 1 or pads[i] != (0, 0):
                continue
            position = layout.index(axis)
            sizes[position] = output_shape[position]
            steps[position] = strides[i]
            strides[i] = dilation[i] = 1
        if steps == [1] * len(steps):
            return
        sliced = SliceOp(op.input, [0] * len(sizes), sizes, steps)
        sliced.location = op.location
        conv = Conv2DOp(sliced.result, op.weight, op.bias, strides=strides,
                        padding=op.padding_tuple(), dilation=dilation,
                        groups=op.groups_value(), layout=layout, kernel_layout=kernel_layout)
        conv.location = op.location
        rewriter.replace_op(op, [sliced, conv])


@dataclass(frozen=True)
class GraphConvSubsamplePass(ModulePass):
    """Slice out the input lines a strided one-tap conv axis never reads.

    *Input invariant*: any module.

    *Output IR*: each `graph.conv2d` with static shapes that has, along H or W, one kernel
    tap, no padding and a stride s > 1 reads a `graph.slice` of its input (start 0, step s,
    the output's size along those axes) and has stride 1 (and dilation 1) along them; its
    other attributes are unchanged.

    *Invariants*: results are unchanged (the same products summed in the same order).
    """

    name: ClassVar[str] = "graph-conv-subsample"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(SubsampleConvInput()).rewrite_module(op)
