"""The pass `tensor-expr-inline`: injective producers substituted into their consumers.

Counterpart: TVM's `compute_inline` as its default schedules apply it to every injective stage
of a fused function (`schedule_injective`, `traverse_inline`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.tensor_expr.ops import ComputeOp, ReadOp, YieldOp
from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

KEEP_TAGS = ("pad", "winograd_input", "recurrent", "resize_taps", "resize_axis",
             "conv_transpose_taps")
"""The tags of injective computes kept materialised by default: a conv's padded input, the
transformed input of a Winograd conv (its products read each element KW times per output
channel; inlined, each read would redo the transform), what a recurrent op's GEMMs read
(transposed weights, GRU's reset gate: inlined, a GEMM would re-read or recompute them per
term), a resize to runtime sizes' tables and passes but its last (`topi.resize`: inlined,
every output would recompute its coordinates and both neighbours of each row), and a one-tap
transposed conv's weight laid out as a 1x1 conv's (`topi.nn`: kept, a constant one is laid
out at compile time)."""


TRANSCENDENTAL_OPS: tuple[type[Operation], ...] = (
    math.ExpOp, math.Exp2Op, math.ExpM1Op, math.LogOp, math.Log1pOp, math.Log2Op, math.Log10Op,
    math.TanhOp, math.ErfOp, math.PowFOp, math.SinOp, math.CosOp, math.TanOp, math.AtanOp,
    math.Atan2Op,
)
"""Ops whose cost is tens of instructions an element (a polynomial or a library call): a
producer that holds one is computed once and stored rather than recomputed per reader."""


def is_expensive(producer: ComputeOp) -> bool:
    """Whether `producer`'s body evaluates a transcendental function (`TRANSCENDENTAL_OPS`)."""
    return any(isinstance(op, TRANSCENDENTAL_OPS) for op in producer.body.walk())


def reads_repeat_work(producer: ComputeOp, readers: Sequence[ReadOp]) -> bool:
    """Whether inlining `producer` at `readers` would evaluate an element more than once: the
    reads sit in more than one compute, or in one compute at different indices (a stencil), or
    in a compute with more points than `producer` has elements (a broadcast: squeeze-excite's
    sigmoid of C channels read by the product over the C x H x W plane would be evaluated H * W
    times per channel). Reads of the same element in the same compute cost one evaluation
    (LLVM merges the copies)."""
    first = readers[0]
    home = first.parent_op()
    if any(read.parent_op() is not home or tuple(read.indices) != tuple(first.indices)
           for read in readers[1:]):
        return True
    return isinstance(home, ComputeOp) and _points(home) > _points(producer)


def _points(compute: ComputeOp) -> int:
    """The points a compute evaluates its body at: its result's elements times its reduction
    extents (per row for a result of runtime rows: its dynamic dims count 1)."""
    points = 1
    for size in (*compute.result.type.get_shape(), *compute.get_reduce_extents()):
        points *= max(size, 1)
    return points


def guard_uniform_along_vectors(pad: ComputeOp, readers: Sequence[ReadOp]) -> bool:
    """Whether a pad read only by reductions is as cheap inlined as stored: it pads no element
    of its innermost axis (its body reads its source there at its own innermost index), and each
    reading reduction reads it at the reduction's own innermost output index (a depthwise conv
    or a pool over NHWC: channels in, the same channels out). Each read's in-bounds test then
    depends on no index of the vectorized axis: one scalar test and select per vector of
    channels, where the stored pad cost a copy of the whole input (20-40% of an int8 NHWC
    depthwise conv). A reduction over the innermost axis (an NHWC conv's input channels) would
    carry the select into its multiply-adds: such a pad stays."""
    innermost = pad.spatial_indices[-1]
    rank = len(pad.spatial_indices)
    for op in pad.body.walk():
        if (isinstance(op, ReadOp) and len(op.indices) == rank
                and op.indices[-1] is not innermost):
            return False
    for read in readers:
        home = read.parent_op()
        while home is not None and not isinstance(home, ComputeOp):
            home = home.parent_op()
        if (home is None or not home.get_reduce_extents()
                or len(home.spatial_indices) != rank
                or read.indices[-1] is not home.spatial_indices[-1]):
            return False
    return True


def pools_over_runtime_extents(pad: ComputeOp, readers: Sequence[ReadOp]) -> bool:
    """Whether a pad of runtime extent that pads only after its input (a ceil-mode pool's
    overhang at the end of the rows, SqueezeNet's) is read only by reductions that read nothing
    else (a max or average pool's window: no weight): inlined, its bounds tests become the
    pool's, which the rule of runtime extents partitions out of each row's interior
    (`_partition_guards`: the last columns); stored, it is a copy of the whole input on every
    call (a third of SqueezeNet's pools' time). A pad before the input stays stored: a 5x5
    pool padded by 2 on every side (a YOLO neck's) would keep checks on its rows and two
    columns of scalar windows on each side, slower than the copy (1.2-1.6x -> 1.6-2.3x
    the static compile of the YOLO-style detector)."""
    if all(size >= 0 for size in pad.result.type.get_shape()):
        return False
    for op in pad.body.walk():  # the element at the pad's own index, clamped: no padding
        if isinstance(op, ReadOp) and any(  # before the input (a ceil-mode overhang only)
                index not in pad.spatial_indices and not (
                    isinstance(index.owner, arith.MinUIOp)
                    and index.owner.lhs in pad.spatial_indices) for index in op.indices):
            return False
    for read in readers:
        home = read.parent_op()
        while home is not None and not isinstance(home, ComputeOp):
            home = home.parent_op()
        if home is None or not home.get_reduce_extents() or any(
                isinstance(op, ReadOp) and op.tensor is not pad.result for op in home.walk()):
            return False
    return True


def inlinable_readers(producer: ComputeOp, keep_tags: Sequence[str]) -> list[ReadOp] | None:
    """The reads of `producer` to substitute, or None when it must stay materialised.

    A producer is inlined when it has no reduction, its tag is not in `keep_tags`, it is used
    at all, every use is a `tensor_expr.read` inside another compute (not a function result,
    not a call operand), and it is cheap to recompute: a producer that evaluates a
    transcendental function (`is_expensive`) is inlined only where each element is then still
    evaluated once (`reads_repeat_work`: not in a stencil, not under a broadcast). Softmax's
    exp(x - max), read by both the sum and the normalisation, stays one stored compute instead
    of two exps an element.
    """
    if producer.get_reduce_extents():
        return None
    readers: list[ReadOp] = []
    for use in producer.result.uses:
        reader = use.operation
        if not isinstance(reader, ReadOp) or producer.is_ancestor(reader):
            return None
        readers.append(reader)
    if not readers:
        return None
    if producer.tag is not None and producer.tag.data in keep_tags and not (
            producer.tag.data == "pad" and (guard_uniform_along_vectors(producer, readers)
                                            or pools_over_runtime_extents(producer, readers))):
        return None
    if is_expensive(producer) and reads_repeat_work(producer, readers):
        return None
    return readers


def substitute(producer: ComputeOp, read: ReadOp, rewriter: PatternRewriter) -> None:
    """Replaces `read` of `producer` by a copy of the producer's body at the read's indices."""
    mapping: dict[SSAValue, SSAValue] = dict(
        zip(producer.spatial_indices, read.indices, strict=True)
    )
    cloned: list[Operation] = []
    for op in producer.body.block.ops:
        if isinstance(op, YieldOp):
            break
        cloned.append(op.clone(value_mapper=mapping))
    rewriter.insert(cloned, InsertPoint.before(read))
    rewriter.replace(read, [], [mapping.get(producer.yielded, producer.yielded)])


@dataclass
class InlineInjectiveProducer(RewritePattern):
    """Inlines an injective compute into every compute that reads it, then erases it."""

    keep_tags: tuple[str, ...] = KEEP_TAGS

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ComputeOp, rewriter: PatternRewriter) -> None:
        readers = inlinable_readers(op, self.keep_tags)
        if readers is None:
            return
        for read in readers:
            substitute(op, read, rewriter)
        rewriter.erase(op)


def inline_patterns(keep_tags: Sequence[str] = KEEP_TAGS) -> list[RewritePattern]:
    """The patterns of `tensor-expr-inline`, for reuse in other passes and pipelines."""
    return [InlineInjectiveProducer(tuple(keep_tags))]


@dataclass(frozen=True)
class TensorExprInlinePass(ModulePass):
    """Inlines injective computes into the computes that read them (TVM's compute_inline).

    *Input invariant*: functions whose bodies hold `tensor_expr.compute`s (the output of
    `convert-graph-to-tensor-expr`); anything else is left alone.

    *Output IR*: every compute without reduction axes whose result is only read by other
    computes, and whose tag is not kept, is gone: each `tensor_expr.read` of it is replaced by a
    copy of its body with its index variables replaced by the read's indices. Computes whose
    result is returned or passed to a call, reductions, and `arith.constant` tensors stay. A
    chain of injective computes after a reduction becomes one epilogue compute reading the
    reduction: relu(bias_add(conv2d)) is conv2d plus one "relu" compute.

    A producer that evaluates a transcendental function (exp, log, tanh, erf, ...) is inlined
    only where that evaluates each of its elements once (one reading compute, one index
    tuple, no more points than the producer has elements): softmax's exp(x - max), read by its
    sum and its normalisation, stays stored, and so does squeeze-excite's per-channel sigmoid,
    read by the product over the whole plane.

    *Invariants*: every function computes the same values (each element of an inlined producer
    is recomputed where it is read, so a cheap producer read by several computes is computed
    several times, as with TVM's compute_inline); the number of materialised tensors never
    grows.

    Options:
        keep_tags (`keep-tags`): tags of computes that stay materialised even though they are
            injective. Default "pad,winograd_input,recurrent": a schedule wants the padded
            input of a conv2d as a buffer, so that the convolution's inner loops read it without
            bounds checks (inlined, every multiply-add would carry the clamp-and-select of the
            padding), a Winograd conv's transformed input likewise, and what a recurrent op's
            GEMMs read (`KEEP_TAGS`). A kept "pad" is still inlined where the bounds test
            it adds is uniform along the vectorized axis (`guard_uniform_along_vectors`: a
            channels-last pad read by reductions at their own channel, as an NHWC depthwise
            conv or pool reads it).
            `keep-tags=` (empty) inlines every injective compute.
    """

    name: ClassVar[str] = "tensor-expr-inline"

    keep_tags: tuple[str, ...] = field(default=KEEP_TAGS)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(inline_patterns(self.keep_tags)),
            apply_recursively=True,
        ).rewrite_module(op)
