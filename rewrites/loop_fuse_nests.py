"""The pass `loop-fuse-nests`: consecutive loop nests of a kernel whose outer loops run over the
same range as one nest, when each iteration of the later one uses only what the same iteration
of the earlier one made.

Counterpart: TVM's `compute_at` of a stage at the outer axes of its consumer (what its softmax and
layer-norm schedules do by hand), MLIR's `affine-loop-fusion` of sibling and producer-consumer
nests, here only where the outer loops match one for one. A kernel made of several nests (softmax:
max, exp, sum, normalise) otherwise runs one parallel region per nest: a fork and a join each, a
barrier a descheduled thread holds up on a shared machine, and each nest streams the whole tensor
through the cache again; fused, a thread runs every stage over its own rows while they are in its
cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.schedule.common import constant_value
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

FUSED_KINDS = ("parallel", "serial")
"""Loop kinds this pass fuses (a pair of the same kind): parallel loops, and serial loops (the
unit loops around a kernel's parallel loop, and the loops inside them once they are fused)."""


def _same_bound(a: SSAValue, b: SSAValue) -> bool:
    if a is b:
        return True
    x, y = constant_value(a), constant_value(b)
    return x is not None and x == y


def _memory_uses(loop: ForOp) -> dict[SSAValue, list[tuple[LoadOp | StoreOp, bool]]] | None:
    """Each buffer from outside `loop` that `loop` loads or stores, with those accesses (and
    whether each is a store); None when something else in it takes a buffer (a call, a copy),
    which this pass does not reason about."""
    uses: dict[SSAValue, list[tuple[LoadOp | StoreOp, bool]]] = {}
    inside: set[SSAValue] = set()
    for op in loop.walk():
        if isinstance(op, AllocOp):
            inside.add(op.result)
        if isinstance(op, LoadOp | StoreOp):
            if op.memref not in inside:
                uses.setdefault(op.memref, []).append((op, isinstance(op, StoreOp)))
            continue
        if isinstance(op, BlockOp | DeallocOp | AllocOp):
            continue
        if any(isinstance(value.type, MemRefType) for value in op.operands):
            return None
    return uses


def _iteration_position(
    accesses: Iterable[tuple[LoadOp | StoreOp, SSAValue]],
) -> set[int]:
    """The index positions at which every access indexes its buffer by its loop's induction
    variable itself."""
    positions: set[int] | None = None
    for access, induction_var in accesses:
        here = {p for p, index in enumerate(access.indices) if index is induction_var}
        positions = here if positions is None else positions & here
    return positions or set()


def _alias_key(buffer: SSAValue) -> object:
    """What `buffer` may share memory with: itself, or, for a function argument, every other
    argument (a caller may pass one buffer as an input and as the output of a kernel)."""
    if isinstance(buffer, BlockArgument) and not isinstance(buffer.owner.parent_op(), ForOp):
        return "arguments"
    return buffer


def can_fuse(first: ForOp, second: ForOp) -> bool:
    """Whether `second` (after `first` in the same block) can run inside `first`'s iterations.

    Both must be loops of one kind of `FUSED_KINDS` over the same range. Every buffer one of them
    stores to and the other loads or stores must be indexed, by the stores of the one and every
    access of the other, at one same position by the loop's own induction variable: iteration i
    of either loop then touches only the slice i of what the other one stores, so running
    `second`'s iteration i right after `first`'s keeps every dependence, and iterations stay
    independent. The function's arguments count as one buffer (they may alias): a layer norm's
    scale, read by the second loop at the row's column only, does not stop the fusion with a
    first loop that only reads the input, as the scale is not stored to.
    """
    if first.kind.data not in FUSED_KINDS or second.kind.data != first.kind.data:
        return False
    if not all(_same_bound(a, b) for a, b in zip(first.operands, second.operands, strict=True)):
        return False
    first_uses, second_uses = _memory_uses(first), _memory_uses(second)
    if first_uses is None or second_uses is None:
        return False
    first_iv, second_iv = first.body.block.args[0], second.body.block.args[0]
    classes: dict[object, tuple[list[tuple[LoadOp | StoreOp, bool, SSAValue]], ...]] = {}
    for uses, iv, side in ((first_uses, first_iv, 0), (second_uses, second_iv, 1)):
        for buffer, accesses in uses.items():
            sides = classes.setdefault(_alias_key(buffer), ([], []))
            sides[side].extend((access, store, iv) for access, store in accesses)
    for in_first, in_second in classes.values():
        # Fusing reorders only pairs of an access of `first` and one of `second` of which one
        # stores: those accesses must all slice the buffer by the iteration. (Pairs within one
        # loop keep their order; a buffer both only read, or only read by one while the other
        # reads it too, orders nothing.)
        involved: list[tuple[LoadOp | StoreOp, bool, SSAValue]] = []
        if any(store for _, store, _ in in_first):
            involved += [use for use in in_first if use[1]] + in_second
        if any(store for _, store, _ in in_second):
            involved += in_first + [use for use in in_second if use[1]]
        if not in_first or not in_second or not involved:
            continue
        if not _iteration_position((access, iv) for access, _, iv in involved):
            return False
    return True


def _hoistable(op: Operation) -> bool:
    """Ops between two nests that may move above the first: constants and allocations of a
    static shape (their operands are none)."""
    return isinstance(op, arith.ConstantOp) or (isinstance(op, AllocOp) and not op.operands)


def fuse_into(first: ForOp, second: ForOp) -> None:
    """Moves `second`'s body to the end of `first`'s (its induction variable replaced by
    `first`'s) and erases `second`."""
    target = first.body.block
    terminator = target.last_op
    source = second.body.block
    source.args[0].replace_all_uses_with(target.args[0])
    for op in list(source.ops):
        if isinstance(op, YieldOp):
            continue
        op.detach()
        if isinstance(terminator, YieldOp):
            target.insert_op_before(op, terminator)
        else:
            target.add_op(op)
    second.detach()
    second.erase()


def fuse_block(block: Block) -> int:
    """Fuses runs of fusable parallel loops among `block`'s ops; returns how many loops were
    fused away. Constants and allocations between two fused loops move above the first,
    deallocations below it."""
    fused = 0
    position = 0
    while True:
        ops = list(block.ops)
        if position >= len(ops):
            return fused
        first = ops[position]
        position += 1
        if not isinstance(first, ForOp) or first.kind.data not in FUSED_KINDS:
            continue
        fused_here = fused
        hoist: list[Operation] = []
        sink: list[Operation] = []
        for op in ops[position:]:
            if _hoistable(op):
                hoist.append(op)
            elif isinstance(op, DeallocOp):
                sink.append(op)
            elif isinstance(op, ForOp) and can_fuse(first, op):
                for moved in hoist:
                    moved.detach()
                    block.insert_op_before(moved, first)
                hoist = []
                fuse_into(first, op)
                fused += 1
            else:
                break
        for moved in reversed(sink):
            moved.detach()
            block.insert_op_after(moved, first)
        if fused > fused_here:  # the loops inside, once from different nests, may fuse too
            fused += fuse_block(first.body.block)
        position = list(block.ops).index(first) + 1


@dataclass(frozen=True)
class LoopFuseNestsPass(ModulePass):
    """Fuse consecutive loop nests whose outer loops match and share only slices per iteration.

    *Input invariant*: loop-level functions (after a schedule marks loops `parallel`);
    anything else is left alone.

    *Output IR*: in each function body, a top-level `loop.for` of kind `parallel` or `serial`
    absorbs the top-level loops of its kind that follow it over the same bounds and step
    (`can_fuse`: every
    buffer one of them writes and the other uses is indexed at one same position by the loop's
    own induction variable in the stores of the one and every access of the other; the
    function's arguments count as one buffer, as a caller may pass one buffer as an input and
    the output), in order: their bodies run after
    its own in each iteration. Constants and static allocations between them move above the
    fused loop, deallocations below it; any other op in between ends the run. The same is
    then done inside the fused loop, so that nests fuse as deep as their loops match
    (softmax's four nests over [batch, heads, rows] become one parallel loop over the rows
    running the four stages on each row).

    *Invariants*: results are unchanged (each iteration runs the same blocks in the same order
    on the same elements); buffers keep their size; fewer parallel regions, never more.

    No options.
    """

    name: ClassVar[str] = "loop-fuse-nests"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                fuse_block(function.body.block)
