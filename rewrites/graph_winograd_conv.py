"""graph-winograd-conv: 3-row convs by Winograd's F(m, 3) along the rows, the weight transformed
at compile time.

Counterpart: Relay's AlterOpLayout choosing `conv2d_winograd_without_weight_transform` on x86
(TVM's `conv2d_nchw_winograd` strategy) followed by FoldConstant of the weight transform. The
algorithm and its matrices are in `dialects/graph/winograd.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.attrs import is_float_type
from dlc.dialects.graph.ops import Conv2DOp, Conv2DWinogradOp
from dlc.dialects.graph.utils import build_constant, constant_array, shape_of
from dlc.dialects.graph.winograd import TILES, tile_rows, transform_weight
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

MAX_COST = 0.75
"""A conv is rewritten only when its 1xKW convs do at most this fraction of the direct conv's
multiply-adds (rows rounded up to whole tiles): the transforms cost a pass over the input and
one over the output, which fewer saved multiplies would not pay for."""


def multiply_ratio(out_rows: int, tile: int) -> float:
    """The multiply-adds of F(tile, 3) along `out_rows` rows over the direct conv's."""
    return tile_rows(out_rows, tile) * (tile + 2) / (3 * out_rows)


def choose_tile(out_rows: int, tile: int = 0) -> int | None:
    """`tile` if given, else the supported tile with the fewest multiplies for `out_rows` rows;
    None when even that one saves too little (`MAX_COST`)."""
    best = tile or min(TILES, key=lambda m: (multiply_ratio(out_rows, m), -m))
    return best if multiply_ratio(out_rows, best) <= MAX_COST else None


def _eligible(op: Conv2DOp, min_channels: int, min_width: int) -> bool:
    weight_shape = shape_of(op.weight)
    element_type = op.result.type.get_element_type()  # type: ignore[attr-defined]
    width = shape_of(op.result)[3]
    return (
        (op.result.type.has_static_shape()  # type: ignore[attr-defined]
         or has_runtime_plane(op.result))
        and op.layout_value() == "NCHW" and op.kernel_layout_value() == "OIHW"
        and op.groups_value() == 1 and op.strides_tuple() == (1, 1)
        and op.dilation_tuple() == (1, 1) and weight_shape[2] == 3
        and min(weight_shape[0], weight_shape[1]) >= min_channels
        and (width < 0 or width >= min_width)
        and is_float_type(element_type)
    )


def has_runtime_plane(value: SSAValue) -> bool:
    """Whether `value`'s height or width (NCHW) is a runtime extent (a model compiled over
    runtime shapes, `dynamic_shapes`): its transforms' tiles then are runtime extents too. A
    runtime batch over a static plane keeps the direct conv (the batch's rows are compiled as
    static blocks, `graph-batch-rows`)."""
    return any(dim < 0 for dim in shape_of(value)[2:])


@dataclass
class RewriteConvToWinograd(RewritePattern):
    """`conv2d(x, w, b)` with a constant weight → `conv2d_winograd(x, G w, b)`."""

    tile: int = 0
    min_channels: int = 16
    min_width: int = 8

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp, rewriter: PatternRewriter) -> None:
        if not _eligible(op, self.min_channels, self.min_width):
            return
        weight = constant_array(op.weight)
        if weight is None:
            return
        rows = shape_of(op.result)[2]
        tile = choose_tile(rows, self.tile) if rows >= 0 else self.tile or max(TILES)
        if tile is None:
            return
        transformed = build_constant(transform_weight(weight, tile))
        transformed.result.name_hint = op.weight.name_hint
        winograd = Conv2DWinogradOp(
            op.input, transformed, op.bias, padding=op.padding_tuple(), tile=tile)
        winograd.location = op.location  # the ONNX node name profiles and diagnostics show
        rewriter.replace(op, [transformed, winograd])


@dataclass(frozen=True)
class GraphWinogradConvPass(ModulePass):
    """Rewrite 3-row convs with a constant weight into `graph.conv2d_winograd`.

    *Input invariant*: any module.

    *Output IR*: each `graph.conv2d` with layout NCHW / OIHW, one group, stride 1, dilation 1,
    a weight of 3 rows (any width) that a `graph.constant` defines, a float element type (on
    f16 and bf16 the transforms compute in f32, `rewrites.topi.winograd`) and at
    least `min-channels` input and output channels and an output row of at least `min-width`
    becomes `graph.conv2d_winograd` with the same input, bias and padding and the weight
    `U = G w` (a new constant, computed in float64 and stored in the weight's dtype), when
    F(tile, 3) does at most 3/4 of the direct conv's multiply-adds. The old weight constant goes
    when nothing else uses it. A conv over a runtime plane (a runtime height or width) is
    rewritten with F(4, 3) (or `tile`), its tiles counted at run time, whatever its width; one
    over a runtime batch of static planes (a dynamic leading dim only: `graph-batch-rows`
    compiles its rows as static blocks) stays direct.

    *Invariants*: results change only by rounding (the transforms add and scale by small
    constants in the element type).

    Options:
        tile: rows per transform, 2 or 4; 0 (default) picks the one with fewer multiplies.
        min-channels: the fewest input and output channels a rewritten conv has (default 16):
            the transforms cost the same per channel at any width, the saved multiplies grow
            with the channels.
        min-width: the narrowest output row a rewritten conv has (default 8): on ResNet-18's
            7-wide layer4 convs Winograd gained nothing measurable (1.04x alone, the whole
            model 22.7 vs 23.0 ms with them).
    """

    name: ClassVar[str] = "graph-winograd-conv"

    tile: int = 0
    min_channels: int = 16
    min_width: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.tile not in (0, *TILES):
            raise PassFailedException(
                f"graph-winograd-conv: expected tile 0 or one of {list(TILES)}, found {self.tile}"
            )
        PatternRewriteWalker(
            RewriteConvToWinograd(self.tile, self.min_channels, self.min_width),
            post_walk_func=region_dce,
        ).rewrite_module(op)
