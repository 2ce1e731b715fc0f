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

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    LoadOp,
    PrefetchOp,
    StoreOp,
    YieldOp,
)
from dlc.rewrites.loop_plan_memory import buffer_bytes
from dlc.rewrites.schedule.common import base_buffer, constant_value, kept_axes
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp
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
    which this pass does not reason about. A prefetch is a hint, not an access: it orders
    nothing."""
    uses: dict[SSAValue, list[tuple[LoadOp | StoreOp, bool]]] = {}
    inside: set[SSAValue] = set()
    for op in loop.walk():
        if isinstance(op, AllocOp):
            inside.add(op.result)
        if isinstance(op, LoadOp | StoreOp):
            if op.memref not in inside:
                uses.setdefault(op.memref, []).append((op, isinstance(op, StoreOp)))
            continue
        if isinstance(op, BlockOp | DeallocOp | AllocOp | PrefetchOp):
            continue
        if any(isinstance(value.type, MemRefType) for value in op.operands):
            return None
    return uses


def _same_slice(first: LoadOp | StoreOp, first_iv: SSAValue,
                second: LoadOp | StoreOp, second_iv: SSAValue) -> bool:
    """Whether some index position holds each access's own loop induction variable: iteration
    i of one loop and iteration j != i of the other then touch different slices. Through a
    view (`memref.collapse_shape`), only the leading axes it keeps count."""
    shared = min(kept_axes(first.memref), kept_axes(second.memref))
    return any(
        a is first_iv and b is second_iv
        for a, b in zip(list(first.indices)[:shared], list(second.indices)[:shared], strict=False)
    )


def _alias_key(buffer: SSAValue) -> object:
    """What `buffer` may share memory with: itself and its views, or, for a function argument,
    every other argument (a caller may pass one buffer as an input and as the output of a
    kernel)."""
    buffer = base_buffer(buffer)
    if isinstance(buffer, BlockArgument) and not isinstance(buffer.owner.parent_op(), ForOp):
        return "arguments"
    return buffer


def can_fuse(first: ForOp, second: ForOp) -> bool:
    """Whether `second` (after `first` in the same block) can run inside `first`'s iterations.

    Both must be loops of one kind of `FUSED_KINDS` over the same range. Each pair of an access in
    `first` and one in `second` to a buffer they share, one of the two a store, must index it at
    one same position by its loop's own induction variable: iteration i of either loop then
    touches only the slice i of what the other writes, so running `second`'s iteration i right
    after `first`'s keeps every dependence, and iterations stay independent. Accesses of one loop
    among themselves, and reads in both, constrain nothing (a conv's weight, read at the channel
    in one position, beside its input read at the channel in another). The function's arguments
    count as one buffer (they may alias).
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
    return all(
        _same_slice(a, a_iv, b, b_iv)
        for in_first, in_second in classes.values()
        for a, a_store, a_iv in in_first
        for b, b_store, b_iv in in_second
        if a_store or b_store  # two reads never conflict
    )


def _hoistable(op: Operation, first: Operation) -> bool:
    """Ops between two nests that may move above the first: constants, and allocations whose
    sizes (a runtime shape's) are defined before it."""
    if isinstance(op, arith.ConstantOp):
        return True
    if not isinstance(op, AllocOp):
        return False
    block = first.parent_block()
    before = set()
    for other in block.ops if block is not None else ():
        if other is first:
            break
        before.add(other)
    return all(not isinstance(size.owner, Operation) or size.owner in before
               or size.owner.parent_block() is not block for size in op.operands)


def fuse_into(first: ForOp, second: ForOp) -> None:
    """Moves `second`'s body to the end of `first`'s (its induction variable replaced by
    `first`'s) and erases `second`."""
    target = first.body.block
    source = second.body.block
    source.args[0].replace_all_uses_with(target.args[0])
    for op in list(source.ops):
        if isinstance(op, YieldOp):
            continue
        op.detach()
        _append(target, op)
    second.detach()
    second.erase()


def _append(body: Block, op: Operation) -> None:
    """Adds `op` at the end of a loop `body`, before its `loop.yield` if it has one."""
    terminator = body.last_op
    if isinstance(terminator, YieldOp):
        body.insert_op_before(op, terminator)
    else:
        body.add_op(op)


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
            if _hoistable(op, first):
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


def _enclosing_loops(op: Operation, stop: Block) -> list[ForOp]:
    """The loops around `op` below `stop`, outermost first."""
    loops: list[ForOp] = []
    parent = op.parent_op()
    while parent is not None and parent.parent_block() is not stop:
        if isinstance(parent, ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    if isinstance(parent, ForOp):
        loops.append(parent)
    return loops[::-1]


def _private_loops(
    accesses: list[LoadOp | StoreOp], block: Block,
) -> list[tuple[ForOp, int]]:
    """The outermost loops around every access (parallel or serial ones, from the outermost
    of `block` down, as long as each qualifies) whose induction variable indexes the buffer at
    one same position in every access, with that position."""
    common = _enclosing_loops(accesses[0], block)
    for access in accesses[1:]:
        loops = _enclosing_loops(access, block)
        shared = 0
        while shared < min(len(common), len(loops)) and common[shared] is loops[shared]:
            shared += 1
        common = common[:shared]
    private: list[tuple[ForOp, int]] = []
    for loop in common:
        if loop.kind.data not in FUSED_KINDS:
            break
        iv = loop.body.block.args[0]
        positions = [p for p, index in enumerate(accesses[0].indices) if index is iv]
        positions = [p for p in positions if all(a.indices[p] is iv for a in accesses)]
        if not positions:
            break
        private.append((loop, positions[0]))
    return private


def privatize_buffers(block: Block, max_bytes: int) -> int:
    """Makes each buffer allocated in `block` that only the iterations of a loop there touch,
    each its own slice, a buffer of one slice allocated in the loop's body (MLIR
    affine-loop-fusion's private memrefs); returns how many buffers shrank.

    A buffer qualifies when its uses are loads, stores, the read and write lists of blocks and
    one `loop.dealloc` in `block`, and the loops (parallel or serial) around all its accesses
    index it, from the outermost down, each at one position by their own induction variable:
    no iteration then reads what another wrote. Those positions become extent 1, indexed at 0;
    the buffer is allocated `local` (per thread) at the start of the innermost such loop's
    body and freed at its end, when one slice takes at most `max_bytes` (larger ones stay
    shared: a big local buffer would be a heap allocation per iteration).
    """
    shrunk = 0
    for alloc in [op for op in block.ops if isinstance(op, AllocOp)]:
        buffer = alloc.result
        accesses: list[LoadOp | StoreOp] = []
        deallocs: list[DeallocOp] = []
        usable = True
        for use in buffer.uses:
            user = use.operation
            if isinstance(user, LoadOp | StoreOp) and user.memref is buffer:
                accesses.append(user)
            elif isinstance(user, DeallocOp) and user.parent_block() is block:
                deallocs.append(user)
            elif not isinstance(user, BlockOp):
                usable = False
        if not usable or not accesses or len(deallocs) > 1:
            continue
        private = _private_loops(accesses, block)
        memref_type = buffer.type
        assert isinstance(memref_type, MemRefType)
        shape = list(memref_type.get_shape())
        if not private or all(shape[position] == 1 for _, position in private):
            continue
        positions = {position for _, position in private}
        new_shape = [1 if axis in positions else size for axis, size in enumerate(shape)]
        new_type = MemRefType(memref_type.get_element_type(), new_shape)
        slice_bytes = buffer_bytes(new_type)
        if slice_bytes is None or slice_bytes > max_bytes:
            continue
        body = private[-1][0].body.block
        new_alloc = AllocOp(new_type, "local")
        first = body.first_op
        assert first is not None
        if isinstance(first, arith.ConstantOp) and constant_value(first.result) == 0:
            zero = first  # made for a buffer privatized before
            body.insert_op_after(new_alloc, zero)
        else:
            zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
            body.insert_ops_before([zero, new_alloc], first)
        for access in accesses:
            first_index = len(access.operands) - len(access.indices)
            access.operands = tuple(
                zero.result if number - first_index in positions else operand
                for number, operand in enumerate(access.operands)
            )
        buffer.replace_all_uses_with(new_alloc.result)
        new_alloc.result.name_hint = buffer.name_hint
        for dealloc in deallocs:
            dealloc.detach()
            _append(body, dealloc)
        alloc.detach()
        alloc.erase()
        shrunk += 1
    return shrunk


@dataclass(frozen=True)
class LoopFuseNestsPass(ModulePass):
    """Fuse consecutive loop nests whose outer loops match and share only slices per iteration.

    *Input invariant*: loop-level functions (after a schedule marks loops `parallel`);
    anything else is left alone.

    *Output IR*: in each function body, a top-level `loop.for` of kind `parallel` or `serial`
    absorbs the top-level loops of its kind that follow it over the same bounds and step
    (`can_fuse`: each access of one and access of the other to a buffer both use, one of
    them a store, index it at one same position by their loop's own induction variable; the
    function's arguments count as one buffer, as a caller may pass one buffer as an input
    and the output), in order: their bodies run after its own in each iteration. Constants
    and allocations between them (of a runtime shape too, whose sizes are defined before the
    first loop) move above the fused loop, deallocations below it;
    any other op in between ends the run. The same is then done inside the fused loop, so
    that nests fuse as deep as their loops match
    (softmax's four nests over [batch, heads, rows] become one parallel loop over the rows
    running the four stages on each row).

    *Invariants*: results are unchanged (each iteration runs the same blocks in the same order
    on the same elements); buffers keep their size unless privatized; fewer parallel regions,
    never more.

    Then each buffer allocated in the function body that only a (fused) loop's iterations
    touch, each iteration its own slice (indexed by the loop's induction variable at one
    position in every access), becomes one slice allocated `local` in the loop's body
    (`privatize_buffers`, MLIR affine-loop-fusion's private memrefs): a conv's padded input,
    once its pad nest runs in the conv's channel loop, is one channel's plane that stays in
    cache, not the whole padded tensor written out and read back.

    Options:
        max_private_bytes: the largest slice a buffer is privatized to (the stack buffers of
            `convert-loop-to-llvm`, `max_stack_bytes`, by default).
    """

    name: ClassVar[str] = "loop-fuse-nests"

    max_private_bytes: int = 64 * 1024

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                fuse_block(function.body.block)
                privatize_buffers(function.body.block, self.max_private_bytes)
