"""The `compute_at` and `reverse_compute_at` schedule primitives: move a nest under a loop.

Counterpart: TVM's `Schedule.compute_at(block, loop)` and `Schedule.reverse_compute_at(block,
loop)`. dlc handles the common case: the moved block indexes the buffer it shares with the other
nest by its own loop variables (identity), and the other nest's indices of that buffer are pure
index expressions of loop variables. The moved block then runs over the loops inside `loop` on
which those expressions depend, with the expressions (cloned) as its indices: exactly the
elements one iteration of `loop` reads (or produces). Buffers keep their full size.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.loop.ops import BlockOp, DeallocOp, ForOp, LoadOp, StoreOp
from dlc.rewrites.schedule.common import (
    ScheduleError,
    accesses,
    depends_on,
    describe,
    disjoint_iterations,
    enclosing_loops,
    is_defined_outside,
    is_pure,
    nest_root,
    nested_blocks,
    new_loop,
    program_order_index,
    same_value,
)
from dlc.rewrites.schedule.compute_inline import (
    check_alone,
    check_free_values,
    identity_loops,
    producer_store,
)
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue


class _Region:
    """The loops inside `loop` that index expressions depend on, and the expressions' ops."""

    def __init__(self, loop: ForOp, indices: Sequence[SSAValue], what: str, culprit: Operation):
        self.loop = loop
        self.indices = list(indices)
        self.inner: list[ForOp] = []
        self.ops: list[Operation] = []
        seen: set[SSAValue] = set()
        pending = list(indices)
        while pending:
            value = pending.pop()
            if value in seen or _available_at_top(value, loop):
                continue
            seen.add(value)
            if isinstance(value, BlockArgument):
                owner = value.owner.parent_op()
                if isinstance(owner, ForOp) and loop.is_ancestor(owner):
                    self.inner.append(owner)
                    continue
            op = value.owner
            if not isinstance(op, Operation) or not is_pure(op):
                raise ScheduleError(
                    f"cannot {what}: expected the indices to be index arithmetic on loop "
                    f"variables, found a value computed by something else inside "
                    f"{describe(loop)}",
                    culprit,
                )
            if op not in self.ops:
                self.ops.append(op)
            pending.extend(op.operands)
        order = {op: position for position, op in enumerate(loop.walk())}
        self.inner.sort(key=lambda inner: order[inner])
        self.ops.sort(key=lambda op: order[op])
        for inner in self.inner:
            for bound in inner.operands:
                if not _available_at_top(bound, loop):
                    raise ScheduleError(
                        f"cannot {what}: expected the bounds of {describe(inner)} to be defined "
                        f"outside {describe(loop)}, found they are not",
                        culprit,
                    )

    def build(
        self, block: Block, before: Operation | None
    ) -> tuple[Block, Operation | None, list[SSAValue]]:
        """Builds the region's loops, then the indices, in `block` before `before`.

        Returns the innermost body, the op before which what follows goes, and the indices.
        """
        mapper: dict[SSAValue, SSAValue] = {}
        target, position = block, before
        for inner in self.inner:
            copy = new_loop(inner.lb, inner.ub, inner.step, inner.axis.data)
            _insert(target, copy, position)
            mapper[inner.induction_var] = copy.induction_var
            target, position = copy.body.block, copy.body.block.last_op
        for op in self.ops:
            _insert(target, op.clone(value_mapper=mapper), position)
        return target, position, [mapper.get(index, index) for index in self.indices]


def _insert(block: Block, op: Operation, before: Operation | None) -> None:
    if before is None:
        block.add_op(op)
    else:
        block.insert_op_before(op, before)


def _available_at_top(value: SSAValue, loop: ForOp) -> bool:
    return value is loop.induction_var or is_defined_outside(value, loop)


def _nests(block: BlockOp, loop: ForOp, what: str, block_first: bool) -> tuple[Operation,
                                                                                 Operation]:
    """The nest roots of `block` and `loop`: distinct, in one region, in the expected order."""
    root, loop_root = nest_root(block), nest_root(loop)
    if root is loop_root:
        raise ScheduleError(
            f"cannot {what}: expected {describe(loop)} in another nest than the block, found "
            "the same nest",
            loop,
        )
    if root.parent_block() is not loop_root.parent_block():
        raise ScheduleError(
            f"cannot {what}: expected both nests in the same region, found they are not", loop
        )
    if (program_order_index(root) < program_order_index(loop_root)) != block_first:
        order = "before" if block_first else "after"
        raise ScheduleError(
            f"cannot {what}: expected the block's nest {order} the nest of {describe(loop)}, "
            "found it is not",
            block,
        )
    return root, loop_root


def _check_between(
    first: Operation, last: Operation, touched: set[SSAValue], written: set[SSAValue],
    what: str, culprit: Operation,
) -> None:
    """No nest strictly between `first` and `last` accesses `touched` or writes `written`."""
    current = first.next_op
    while current is not None and current is not last:
        for other in nested_blocks(current):
            buffers = set(other.reads) | set(other.writes)
            if buffers & touched or set(other.writes) & written:
                raise ScheduleError(
                    f"cannot {what}: expected no nest between the two to use the moved block's "
                    f"buffers, found {describe(other)}",
                    culprit,
                )
        current = current.next_op


def _set_axes(
    block: BlockOp, indices: Sequence[SSAValue], spatial: Sequence[str], reduction: Sequence[str]
) -> None:
    """Spatial axes: the loops around the moved block its `indices` depend on, then `spatial`."""
    names = [
        loop.axis.data for loop in enclosing_loops(block)
        if any(depends_on(index, {loop.induction_var}) for index in indices)
    ]
    names += [name for name in spatial if name not in names]
    block.properties["spatial_axes"] = ArrayAttr(StringAttr(name) for name in names)
    block.properties["reduction_axes"] = ArrayAttr(
        StringAttr(name) for name in reduction if name not in names
    )


def compute_at(block: BlockOp, loop: ForOp) -> None:
    """Moves producer `block` under `loop` of its consumer, computing what one iteration reads.

    Preconditions (all checked first): `block` stores one scalar into one `loop.alloc` buffer at
    the induction variables of all its loops (over the whole buffer; they hold nothing else) and
    uses only those and values from outside its nest; `loop` is in a later nest of the same
    region; every load of the buffer is inside `loop`, all at the same indices, pure index
    expressions of loop variables; the loops inside `loop` those depend on have bounds defined
    outside `loop`; nothing between the nests, nor in the consumer's nest, writes what the
    producer reads or (for the nests between) touches the buffer. The producer's nest is
    replaced by copies of those loops (same bounds and axes) at the top of `loop`'s body, the
    consumer's index expressions (cloned) as the producer's indices.
    """
    what = "compute_at"
    buffer, store = producer_store(block, what)
    loops = identity_loops(block, store, what)
    root, loop_root = _nests(block, loop, what, block_first=True)
    check_free_values(block, root, loops, what)
    loads: list[LoadOp] = []
    for use in buffer.uses:
        user = use.operation
        if root.is_ancestor(user) or isinstance(user, BlockOp | DeallocOp):
            continue
        if not isinstance(user, LoadOp) or not loop.is_ancestor(user):
            where = describe(user) if not isinstance(user, LoadOp) else "a load outside it"
            raise ScheduleError(
                f"cannot {what}: expected every use of the buffer to be a load inside "
                f"{describe(loop)}, found {where}",
                block,
            )
        loads.append(user)
    if not loads:
        raise ScheduleError(
            f"cannot {what}: expected a load of the buffer inside {describe(loop)}, found none",
            block,
        )
    indices = list(loads[0].indices)
    for load in loads[1:]:
        if not all(same_value(a, b) for a, b in zip(load.indices, indices, strict=True)):
            raise ScheduleError(
                f"cannot {what}: expected every load of the buffer at the same indices, found "
                "different ones",
                block,
            )
    region = _Region(loop, indices, what, block)
    for outer in _concurrent_loops(loop):
        if disjoint_iterations(outer, [indices]) is None:
            raise ScheduleError(
                f"cannot {what}: expected the iterations of {outer.kind.data} "
                f"{describe(outer)} to compute disjoint parts of the buffer, found they may "
                "overlap",
                block,
            )
    inputs = set(block.reads)
    _check_between(root, loop_root, {buffer}, inputs, what, block)
    for other in nested_blocks(loop_root):
        if set(other.writes) & inputs or buffer in other.writes:
            raise ScheduleError(
                f"cannot {what}: expected the consumer's nest not to write the producer's inputs "
                f"or buffer, found {describe(other)}",
                other,
            )

    body = loop.body.block
    target, position, values = region.build(body, body.first_op)
    store_indices = list(store.indices)
    for producer_loop in loops:
        iv = producer_loop.induction_var
        iv.replace_all_uses_with(values[store_indices.index(iv)])
    block.detach()
    _insert(target, block, position)
    root.detach()
    root.erase()
    _set_axes(block, values, [], [])


def reverse_compute_at(block: BlockOp, loop: ForOp) -> None:
    """Moves consumer `block` under `loop` of its producer, consuming what one iteration makes.

    Preconditions (all checked first): `block` is alone in its loops (a perfect band, no other
    statement) and uses only its loop variables and values from outside its nest; it loads
    exactly one buffer that blocks inside `loop` write, always at the same indices, each the
    induction variable of a distinct loop of its nest; `loop` is in an earlier nest of the same
    region; every store into that buffer in `loop`'s nest is inside `loop`, at the same indices,
    which are pure index expressions of spatial loop variables (a reduction over the buffer
    finishes inside `loop`); nothing in the producer's nest or between the nests touches what
    the consumer writes or writes what it reads. The consumer's nest is replaced by a nest at
    the end of `loop`'s body: copies of the loops inside `loop` the producer's indices depend
    on, then the consumer's loops that do not index the buffer; the consumer then loads the
    buffer at the producer's index expressions.
    """
    what = "reverse_compute_at"
    loops = enclosing_loops(block)
    root, loop_root = _nests(block, loop, what, block_first=False)
    check_alone(block, loops, what)
    check_free_values(block, root, loops, what)
    _check_defined_before(block, root, loop_root, what)
    produced = {buffer for other in nested_blocks(loop) for buffer in other.writes}
    shared = [buffer for buffer in block.reads if buffer in produced]
    if len(shared) != 1:
        raise ScheduleError(
            f"cannot {what}: expected the block to read exactly one buffer written inside "
            f"{describe(loop)}, found {len(shared)}",
            block,
        )
    buffer = shared[0]
    index_loops = _consumer_index_loops(block, buffer, loops, what)
    producer_indices = _producer_indices(loop, loop_root, buffer, what)
    region = _Region(loop, producer_indices, what, block)
    _check_reduction_done(loop, region, buffer, what)
    for outer in _concurrent_loops(loop):
        dims = disjoint_iterations(outer, [producer_indices])
        stores = [op for op in block.walk() if isinstance(op, StoreOp)]
        if dims is None or any(
            index_loops[dim].induction_var not in list(store.indices)
            for store in stores for dim in dims
        ):
            raise ScheduleError(
                f"cannot {what}: expected the iterations of {outer.kind.data} "
                f"{describe(outer)} to write disjoint parts of the block's buffers, found they "
                "may overlap",
                block,
            )
    written, read = set(block.writes), set(block.reads) - {buffer}
    _check_between(loop_root, root, written | {buffer}, read, what, block)
    for other in nested_blocks(loop_root):
        if (set(other.reads) | set(other.writes)) & written or set(other.writes) & read:
            raise ScheduleError(
                f"cannot {what}: expected the producer's nest not to use what the consumer "
                f"writes nor write what it reads, found {describe(other)}",
                other,
            )
    rest = [inner for inner in loops if inner not in index_loops.values()]
    for inner in rest:
        for bound in inner.operands:
            if not is_defined_outside(bound, root) or not _before(bound, loop_root):
                raise ScheduleError(
                    f"cannot {what}: expected the bounds of {describe(inner)} to be defined "
                    "before the producer's nest, found they are not",
                    inner,
                )

    index_axes = {inner.axis.data for inner in index_loops.values()}
    spatial = [a.data for a in block.spatial_axes if a.data not in index_axes]
    reduction = [a.data for a in block.reduction_axes if a.data not in index_axes]
    body = loop.body.block
    target, position, values = region.build(body, body.last_op)
    for inner in rest:
        copy = new_loop(inner.lb, inner.ub, inner.step, inner.axis.data)
        _insert(target, copy, position)
        inner.induction_var.replace_all_uses_with(copy.induction_var)
        target, position = copy.body.block, copy.body.block.last_op
    for dim, consumer_loop in index_loops.items():
        consumer_loop.induction_var.replace_all_uses_with(values[dim])
    block.detach()
    _insert(target, block, position)
    root.detach()
    root.erase()
    _set_axes(block, values, spatial, reduction)


def _concurrent_loops(loop: ForOp) -> list[ForOp]:
    """`loop` and the loops around it whose iterations run concurrently (parallel, bound)."""
    return [
        outer for outer in [*enclosing_loops(loop), loop]
        if outer.kind.data in ("parallel", "bound")
    ]


def _check_defined_before(
    block: BlockOp, root: Operation, loop_root: Operation, what: str
) -> None:
    """What `block` uses from outside its nest is defined before `loop_root` (it moves there)."""
    for op in block.walk():
        for operand in op.operands:
            if is_defined_outside(operand, root) and not _before(operand, loop_root):
                raise ScheduleError(
                    f"cannot {what}: expected the block to use only values defined before the "
                    "producer's nest, found one defined after it",
                    block,
                )


def _producer_indices(
    loop: ForOp, loop_root: Operation, buffer: SSAValue, what: str
) -> list[SSAValue]:
    """The indices at which the producer's nest stores `buffer`: all inside `loop`, all same."""
    stores = [op for op in accesses(loop_root, buffer) if isinstance(op, StoreOp)]
    if any(not loop.is_ancestor(store) for store in stores):
        raise ScheduleError(
            f"cannot {what}: expected every store into the buffer in the producer's nest inside "
            f"{describe(loop)}, found one outside",
            loop,
        )
    indices = list(stores[0].indices)
    for store in stores[1:]:
        if not all(same_value(a, b) for a, b in zip(store.indices, indices, strict=True)):
            raise ScheduleError(
                f"cannot {what}: expected every store into the buffer at the same indices, "
                "found different ones",
                loop,
            )
    return indices


def _check_reduction_done(loop: ForOp, region: _Region, buffer: SSAValue, what: str) -> None:
    """The buffer's elements are final at the end of an iteration of `loop`."""
    for inner in region.inner:
        for writer in nested_blocks(inner):
            if inner.axis.data in (axis.data for axis in writer.reduction_axes):
                raise ScheduleError(
                    f"cannot {what}: expected the producer's indices to depend on spatial loops "
                    f"only, found reduction loop \"{inner.axis.data}\"",
                    loop,
                )
    for outer in [*enclosing_loops(loop), loop]:
        for writer in nested_blocks(outer):
            if buffer in writer.writes and outer.axis.data in (
                axis.data for axis in writer.reduction_axes
            ):
                raise ScheduleError(
                    f"cannot {what}: expected the reduction into the buffer to finish inside "
                    f"{describe(loop)}, found it runs over \"{outer.axis.data}\" around it",
                    loop,
                )


def _before(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined in an enclosing region of `op`, or before it in its block."""
    owner = value.owner
    if isinstance(owner, Block):
        holder = owner.parent_op()
        return holder is None or holder.is_ancestor(op)
    block = op.parent_block()
    if owner.parent_block() is block:
        assert block is not None
        return block.get_operation_index(owner) < block.get_operation_index(op)
    return is_defined_outside(value, op) and (owner.parent_op() or op).is_ancestor(op)


def _consumer_index_loops(
    block: BlockOp, buffer: SSAValue, loops: list[ForOp], what: str
) -> dict[int, ForOp]:
    """Dimension -> consumer loop whose variable indexes it, for the consumer's loads."""
    loads = [op for op in accesses(block, buffer) if isinstance(op, LoadOp)]
    indices = list(loads[0].indices)
    for load in loads[1:]:
        if list(load.indices) != indices:
            raise ScheduleError(
                f"cannot {what}: expected every load of the buffer at the same indices, found "
                "different ones",
                block,
            )
    by_iv = {loop.induction_var: loop for loop in loops}
    if len(set(indices)) != len(indices) or any(index not in by_iv for index in indices):
        raise ScheduleError(
            f"cannot {what}: expected the buffer's indices to be distinct loop variables of the "
            "block's nest, found other indices",
            block,
        )
    return {position: by_iv[index] for position, index in enumerate(indices)}
