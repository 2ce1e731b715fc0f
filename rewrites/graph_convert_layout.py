"""graph-convert-layout: move convolutions to another data layout (Relay's ConvertLayout).

Each conv2d not in the target layout is rewritten as transpose → conv2d in the target layout →
transpose back (constant weights are transposed at compile time). Then the transposes sink through
the ops that do not care about the layout (elementwise and broadcast ops, pools, concat,
reductions, softmax), and adjacent inverse transposes cancel, so that a conv-heavy region runs in
the target layout end to end with transposes left only at its edges.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from dlc.dialects.graph.attrs import FusionKind, fusion_kind
from dlc.dialects.graph.canonicalize import (
    ComposeTransposes,
    RemoveIdentityTranspose,
    TransposeOfUnitAxesToReshape,
)
from dlc.dialects.graph.ops import (
    AvgPool2DOp,
    BatchNormOp,
    ConcatOp,
    ConstantOp,
    Conv2DOp,
    GlobalAvgPool2DOp,
    MaxPool2DOp,
    ReduceOp,
    SoftmaxOp,
    TransposeOp,
    broadcast_shapes,
    i64_attr,
)
from dlc.dialects.graph.ops_quant import Conv2DIntegerOp, DequantizeOp, QuantizeOp
from dlc.dialects.graph.utils import (
    build_constant,
    constant_array,
    inverse_permutation,
    layout_permutation,
    permute_layout,
    recreate,
    shape_of,
    splat_constant,
    splat_element,
)
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import Pure
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException, VerifyException

KERNEL_LAYOUTS: dict[str, str] = {"NCHW": "OIHW", "NHWC": "HWIO"}
"""The weight layout each supported data layout pairs with."""

POOL_LAYOUTS = ("NCHW", "NHWC")
"""Layouts a pool may be moved to (the ones the compute definitions know)."""


def _transpose_value(value: SSAValue, perm: Sequence[int]) -> tuple[list[Operation], SSAValue]:
    """`value` transposed by `perm`: a new constant when `value` is one, else a transpose op."""
    element = splat_element(value)
    array = constant_array(value) if element is None else None
    if element is not None or array is not None:
        if element is not None:
            constant = splat_constant(element, [shape_of(value)[axis] for axis in perm])
        else:
            constant = build_constant(np.transpose(array, perm))
        constant.result.name_hint = value.name_hint
        return [constant], constant.result
    transpose = TransposeOp(value, perm)
    return [transpose], transpose.result


def _permuted_type(type: Attribute, perm: Sequence[int]) -> TensorType:
    """The type of transpose(x : `type`, perm)."""
    assert isinstance(type, TensorType), f"expected a tensor type, found {type}"
    shape = type.get_shape()
    return TensorType(type.get_element_type(), [shape[axis] for axis in perm])


def _transposed_operand(value: SSAValue) -> TransposeOp | None:
    owner = value.owner
    return owner if isinstance(owner, TransposeOp) else None


def _replace_with_transposed(
    rewriter: PatternRewriter, op: Operation, new_ops: list[Operation], perm: Sequence[int]
) -> bool:
    """Replace `op` by `new_ops` (the last computing op's result in the source layout), then a
    transpose by `perm`; False (nothing changed) when the new op does not verify."""
    core = new_ops[-1]
    try:
        core.verify()
    except VerifyException:
        return False
    transpose = TransposeOp(core.results[0], perm)
    if transpose.result.type != op.results[0].type:
        return False
    rewriter.replace(op, [*new_ops, transpose])
    return True


class ConvertConvLayout(RewritePattern):
    """`conv2d` / `conv2d_integer` in another layout → transpose, the conv in `layout`,
    transpose back (only the convs `selected` holds, when given)."""

    def __init__(self, layout: str, selected: Collection[Operation] | None = None) -> None:
        self.layout = layout
        self.kernel_layout = KERNEL_LAYOUTS[layout]
        self.selected = selected

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp | Conv2DIntegerOp, rewriter: PatternRewriter
                          ) -> None:
        if self.selected is not None and op not in self.selected:
            return
        if op.layout_value() == self.layout and op.kernel_layout_value() == self.kernel_layout:
            return
        new_ops: list[Operation] = []
        input_ops, input = _transpose_value(
            op.input, layout_permutation(op.layout_value(), self.layout)
        )
        weight_ops, weight = _transpose_value(
            op.weight, layout_permutation(op.kernel_layout_value(), self.kernel_layout)
        )
        new_ops += input_ops + weight_ops
        conv = recreate(op, [input, weight, *op.operands[2:]],
                        [_permuted_type(op.result.type,
                                        layout_permutation(op.layout_value(), self.layout))])
        conv.attributes["layout"] = StringAttr(self.layout)
        conv.attributes["kernel_layout"] = StringAttr(self.kernel_layout)
        back = TransposeOp(conv.results[0], layout_permutation(self.layout, op.layout_value()))
        rewriter.replace(op, [*new_ops, conv, back])


def _is_layout_agnostic(op: Operation) -> bool:
    """Elementwise and NumPy-broadcasting graph ops: every axis is treated alike (not quantize
    and dequantize: their per-channel parameters follow an `axis`)."""
    if (op.dialect_name() != "graph" or isinstance(op, BatchNormOp | QuantizeOp | DequantizeOp)
            or op.regions):
        return False
    if fusion_kind(op) not in (FusionKind.ELEMENTWISE, FusionKind.BROADCAST):
        return False
    if len(op.results) != 1 or not op.operands or not op.has_trait(Pure):
        return False
    shapes = [shape_of(v) for v in op.operands]
    shape: tuple[int, ...] | None = shapes[0]
    for other in shapes[1:]:
        shape = None if shape is None else broadcast_shapes(shape, other)
    return shape == shape_of(op.results[0])


class SinkTransposeThroughElementwise(RewritePattern):
    """`op(transpose(a, p), transpose(b, p), c)` → `transpose(op(a, b, c'), p)`.

    For elementwise and broadcast ops (by fusion kind, so new ops are picked up): every operand
    must be a transpose by the same p of a full-rank value, a constant (transposed at compile
    time, after padding its rank), all ones in shape (broadcast along anything), or a value
    whose transpose by p's inverse is already computed ahead of the op (a residual add of a
    converted region's own input, `x + f(transpose(x))`: the add reads that transpose).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not _is_layout_agnostic(op):
            return
        rank = len(shape_of(op.results[0]))
        perms = {
            t.perm_tuple() for v in op.operands
            if (t := _transposed_operand(v)) is not None and len(shape_of(v)) == rank
        }
        if len(perms) != 1:
            return
        (perm,) = perms
        inverse = inverse_permutation(perm)
        new_ops: list[Operation] = []
        operands: list[SSAValue] = []
        for value in op.operands:
            shape = shape_of(value)
            transpose = _transposed_operand(value)
            if transpose is not None and transpose.perm_tuple() == perm:
                operands.append(transpose.x)
            elif all(dim == 1 for dim in shape):
                operands.append(value)
            elif (array := constant_array(value)) is not None:
                padded = array.reshape((1,) * (rank - array.ndim) + array.shape)
                constant = build_constant(np.transpose(padded, inverse))
                new_ops.append(constant)
                operands.append(constant.result)
            elif (existing := _existing_transpose(value, inverse, op)) is not None:
                operands.append(existing)  # a residual add of the region's own input
            else:
                return
        result_type = _permuted_type(op.results[0].type, inverse)
        new_ops.append(recreate(op, operands, [result_type]))
        _replace_with_transposed(rewriter, op, new_ops, perm)


def _existing_transpose(value: SSAValue, perm: Sequence[int], before: Operation
                        ) -> SSAValue | None:
    """`transpose(value, perm)` where one is already computed in `before`'s block ahead of it
    (a region's entry transpose of a value that its residual add also reads), else None."""
    for use in value.uses:
        user = use.operation
        if (isinstance(user, TransposeOp) and user.perm_tuple() == tuple(perm)
                and user.parent_block() is before.parent_block()
                and user.parent_block() is not None
                and user.parent_block().get_operation_index(user)  # type: ignore[union-attr]
                < before.parent_block().get_operation_index(before)):  # type: ignore[union-attr]
            return user.result
    return None


class SinkTransposeThroughPool(RewritePattern):
    """`pool(transpose(x, p))` → `transpose(pool(x) in x's layout, p)` (max, avg, global avg)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: MaxPool2DOp | AvgPool2DOp | GlobalAvgPool2DOp, rewriter: PatternRewriter
    ) -> None:
        transpose = _transposed_operand(op.x)
        if transpose is None:
            return
        perm = transpose.perm_tuple()
        layout = op.layout_value()
        source_layout = permute_layout(layout, inverse_permutation(perm))
        if source_layout not in POOL_LAYOUTS:
            return
        result_type = _permuted_type(op.result.type, inverse_permutation(perm))
        new = recreate(op, [transpose.x], [result_type])
        new.attributes["layout"] = StringAttr(source_layout)
        _replace_with_transposed(rewriter, op, [new], perm)


class SinkTransposeThroughConcat(RewritePattern):
    """`concat(transpose(a, p), transpose(b, p), axis=k)` → `transpose(concat(a, b, axis=p[k]), p)`.

    Constant inputs are transposed at compile time.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        perms = {t.perm_tuple() for v in op.inputs if (t := _transposed_operand(v)) is not None}
        if len(perms) != 1:
            return
        (perm,) = perms
        inverse = inverse_permutation(perm)
        new_ops: list[Operation] = []
        inputs: list[SSAValue] = []
        for value in op.inputs:
            transpose = _transposed_operand(value)
            if transpose is not None:
                inputs.append(transpose.x)
            elif (array := constant_array(value)) is not None:
                constant = build_constant(np.transpose(array, inverse))
                new_ops.append(constant)
                inputs.append(constant.result)
            else:
                return
        new_ops.append(ConcatOp(inputs, perm[op.normalized_axis()]))
        _replace_with_transposed(rewriter, op, new_ops, perm)


class SinkTransposeThroughReduce(RewritePattern):
    """`reduce(transpose(x, p), axes)` → `transpose(reduce(x, p[axes]), q)`.

    q is p restricted to the kept axes (p itself with keepdims).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter) -> None:
        transpose = _transposed_operand(op.x)
        if transpose is None:
            return
        perm = transpose.perm_tuple()
        axes = op.normalized_axes()
        source_axes = sorted(perm[axis] for axis in axes)
        new = ReduceOp(transpose.x, op.kind_value(), source_axes, op.keepdims_value())
        if op.keepdims_value():
            result_perm: Sequence[int] = perm
        else:
            kept = [axis for axis in range(len(perm)) if axis not in source_axes]
            result_perm = [kept.index(perm[axis]) for axis in range(len(perm)) if axis not in axes]
        _replace_with_transposed(rewriter, op, [new], result_perm)


class SinkTransposeThroughSoftmax(RewritePattern):
    """`softmax(transpose(x, p), axis=k)` → `transpose(softmax(x, axis=p[k]), p)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SoftmaxOp, rewriter: PatternRewriter) -> None:
        transpose = _transposed_operand(op.x)
        if transpose is None:
            return
        perm = transpose.perm_tuple()
        new = SoftmaxOp(transpose.x, perm[op.normalized_axis()])
        _replace_with_transposed(rewriter, op, [new], perm)


class SinkTransposeThroughQuantize(RewritePattern):
    """`quantize(transpose(x, p), s, z, axis=k)` → `transpose(quantize(x, s, z, axis=p[k]), p)`,
    and the same for dequantize (per-tensor or per-channel parameters)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp | DequantizeOp, rewriter: PatternRewriter) -> None:
        transpose = _transposed_operand(op.x)
        if transpose is None:
            return
        perm = transpose.perm_tuple()
        new = recreate(op, [transpose.x, op.scale, op.zero_point],
                       [_permuted_type(op.result.type, inverse_permutation(perm))])
        new.attributes["axis"] = i64_attr(perm[op.axis_value() % len(perm)])
        _replace_with_transposed(rewriter, op, [new], perm)


class FoldTransposeOfConstant(RewritePattern):
    """`transpose(constant)` → the transposed constant (same size: the module does not grow)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.x.owner, ConstantOp):
            return
        new_ops, _ = _transpose_value(op.x, op.perm_tuple())
        rewriter.replace(op, new_ops)


def layout_propagation_patterns() -> list[RewritePattern]:
    """The patterns that sink transposes and cancel them (no conversion of convolutions)."""
    return [
        ComposeTransposes(),
        RemoveIdentityTranspose(),
        FoldTransposeOfConstant(),
        SinkTransposeThroughElementwise(),
        SinkTransposeThroughPool(),
        SinkTransposeThroughConcat(),
        SinkTransposeThroughReduce(),
        SinkTransposeThroughSoftmax(),
        SinkTransposeThroughQuantize(),
    ]


LAYOUT_FOLLOWERS = (MaxPool2DOp, AvgPool2DOp, GlobalAvgPool2DOp, ConcatOp, ReduceOp, SoftmaxOp)
"""The ops other than elementwise ones that a transpose sinks through (their layout or axes
follow their input's): a region of converted convs extends through them."""


def is_pointwise(conv: Conv2DOp) -> bool:
    """A 1x1 conv of stride 1 without padding or groups: a matmul over the pixels, in any
    layout (channels-last, a GEMM over contiguous pixel rows)."""
    shape = conv.weight.type.get_shape()  # type: ignore[union-attr]
    kernel = [shape[conv.kernel_layout_value().index(axis)] for axis in "HW"]
    return (kernel == [1, 1] and conv.strides_tuple() == (1, 1) and conv.groups_value() == 1
            and not any(conv.padding_tuple()))


def depthwise_regions(module: ModuleOp) -> set[Operation]:
    """The float convs of the regions around depthwise convs: each depthwise conv, and each
    pointwise conv (`is_pointwise`) connected to one through elementwise ops, pools, concats,
    reductions, softmaxes and other such convs (a MobileNet's inverted residual blocks end to
    end, their squeeze-excite included). Convs with a spatial window (3x3, 7x7) stop a region:
    their schedules are NCHW ones (direct or Winograd), so a ResNet has no region at all. A
    region whose convs are fewer than twice its edges (`region_edges`: each a transpose) is
    left out: a lone depthwise conv between NCHW ops would pay a transpose of its input and
    one of its output, each a pass over memory like the conv itself."""

    def member(op: Operation) -> bool:
        if isinstance(op, Conv2DOp):
            return op.is_depthwise() or is_pointwise(op)
        return isinstance(op, LAYOUT_FOLLOWERS) or _is_layout_agnostic(op)

    selected: set[Operation] = set()
    seen: set[Operation] = set()
    for seed in module.walk():
        if not isinstance(seed, Conv2DOp) or not seed.is_depthwise() or seed in seen:
            continue
        region, frontier = {seed}, [seed]
        while frontier:
            op = frontier.pop()
            neighbours = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
            neighbours += [use.operation for result in op.results for use in result.uses]
            for neighbour in neighbours:
                if neighbour not in region and member(neighbour):
                    region.add(neighbour)
                    frontier.append(neighbour)
        seen |= region
        convs = {op for op in region if isinstance(op, Conv2DOp)}
        if len(convs) >= 2 * region_edges(region):
            selected |= convs
    return selected


def region_edges(region: set[Operation]) -> int:
    """The 4-D values that cross the boundary of `region` (ops): operands of its ops made
    outside it (not constants) and results used outside it, each counted once: the transposes
    converting the region adds before they sink and cancel."""
    crossing: set[SSAValue] = set()
    for op in region:
        for value in op.operands:
            if value.owner not in region and not isinstance(value.owner, ConstantOp):
                crossing.add(value)
        for result in op.results:
            if any(use.operation not in region for use in result.uses):
                crossing.add(result)
    return sum(1 for value in crossing if len(shape_of(value)) == 4)


@dataclass(frozen=True)
class GraphConvertLayoutPass(ModulePass):
    """Run every conv2d in one data layout; other layout-free ops follow; transposes at the edges.

    *Input invariant*: any module; conv2d and conv2d_integer in any layout (a permutation of
    NCHW with any kernel layout). Ops the pass does not know are left alone (a transpose stays
    in front of them).

    *Output IR*: every `graph.conv2d` and `graph.conv2d_integer` (only those the options
    select, when `integer_only` or `depthwise_regions` is set) has `layout` and its paired
    `kernel_layout` (NHWC/HWIO or NCHW/OIHW); constant weights are transposed at compile
    time. `graph.transpose` ops sink through
    elementwise and broadcast ops (by fusion kind; batch norm excepted, its channel axis is
    fixed), quantize and dequantize (whose per-channel `axis` is remapped), max/avg/global-avg
    pools (whose `layout` changes to NCHW or NHWC), concat, reduce and softmax (whose axes are
    remapped); transposes of transposes compose, identity ones vanish, and ones that only move
    size-1 axes become reshapes. So a region of conv-heavy code runs in `layout`, with
    transposes only where it meets the function's arguments and results or ops that depend on
    the layout (reshape, flatten, batch norm, …).

    *Invariants*: only data movement changes, so results are unchanged up to the order in
    which convolutions and pools sum (float rounding; integer convs are exact); the number of
    convolutions and pools is unchanged; each conversion adds at most one transpose per edge
    of the region.

    Options:
        layout: the target data layout, NHWC (default) or NCHW. Blocked layouts (NCHWc) are
            not supported yet.
        integer_only: convert only the integer convs (`conv2d_integer`): the `cpu` pipeline
            runs int8 regions in NHWC, where a conv is a GEMM over pixel rows of contiguous
            input channels (the VNNI kernel's A rows copied whole for a 1x1 conv, B the weight's
            panels packed at compile time) whose output channels are the contiguous axis the
            kernel's write-back stores in vectors, and a depthwise conv vectorizes along the
            channels; float convs keep the layout their schedules expect. A module without an
            integer conv to convert is left unchanged (its transposes do not move).
        depthwise_regions: convert the float convs of the regions around depthwise convs
            (`depthwise_regions`: each depthwise conv and the pointwise convs connected to it
            through layout-following ops), and no other float conv; with `integer_only`, the
            integer convs too. Channels-last, a depthwise conv vectorizes along its channels
            with no repacking of its input (NCHW, its channel kernel packs the input plane
            channel-last first on every call), its pad is read inline, a global average pool
            sums whole vectors of channels, and a pointwise conv is a GEMM over the pixels.
            Measured (`dlc profile`, 1 thread, sum of kernels, EfficientNet-B0): 25.0 ms NCHW,
            20.2 ms with its regions channels-last (ORT: 22.3 ms); the depthwise 5x5 conv on
            1152 x 7x7 0.39 -> 0.11 ms. Convs with a window (a ResNet's 3x3 convs, a stem)
            keep NCHW: in NHWC, ResNet-18 ran 2.9x slower.
    """

    name: ClassVar[str] = "graph-convert-layout"

    layout: str = "NHWC"
    integer_only: bool = False
    depthwise_regions: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.layout not in KERNEL_LAYOUTS:
            supported = ", ".join(KERNEL_LAYOUTS)
            raise PassFailedException(
                f"graph-convert-layout: expected layout in {supported}, found '{self.layout}'"
            )
        selected: set[Operation] | None = None
        if self.integer_only or self.depthwise_regions:
            selected = depthwise_regions(op) if self.depthwise_regions else set()
            if self.integer_only:
                selected.update(conv for conv in op.walk() if isinstance(conv, Conv2DIntegerOp))
            if not any(isinstance(conv, Conv2DOp | Conv2DIntegerOp)
                       and conv.layout_value() != self.layout for conv in selected):
                return  # nothing to convert: the module's own transposes stay where they are
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [ConvertConvLayout(self.layout, selected), *layout_propagation_patterns()]
            ),
            post_walk_func=region_dce,
        ).rewrite_module(op)
        # Only once nothing sinks any more: a reshape would stop the sinking of a transpose.
        PatternRewriteWalker(TransposeOfUnitAxesToReshape()).rewrite_module(op)
