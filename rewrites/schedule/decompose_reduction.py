"""The `decompose_reduction` schedule primitive: hoist a reduction's init into its own nest.

Counterpart: TVM's `Schedule.decompose_reduction(block, loop)`. dlc's lowering already keeps the
init as a separate block (spatial loops, init block, reduction loops, update block); this
primitive distributes the loops from `loop` down to the init over it, so that the update's loops
become a perfect band that `reorder` can permute (e.g. a reduction loop moved outward).
"""

from __future__ import annotations

from dlc.dialects.loop.ops import BlockOp, ForOp, LoadOp, StoreOp
from dlc.rewrites.schedule.common import (
    ScheduleError,
    accesses,
    band_between,
    body_ops,
    depends_on,
    describe,
    enclosing_loops,
    is_defined_outside,
    is_pure,
    move_ops_into,
    nested_blocks,
    new_loop,
    same_value,
)
from xdsl.ir import Operation, SSAValue


def find_init(block: BlockOp, loop: ForOp) -> tuple[BlockOp, list[ForOp]]:
    """The init block of reduction `block` and the band from `loop` to the init's loop."""
    if not loop.is_ancestor(block):
        raise ScheduleError(f"expected {describe(loop)} around {describe(block)}, found not", loop)
    reduction_axes = {axis.data for axis in block.reduction_axes}
    reduction_loops = [outer for outer in enclosing_loops(block)
                       if outer.axis.data in reduction_axes]
    if not reduction_loops:
        raise ScheduleError(
            "cannot decompose the reduction: expected a reduction loop around the block, "
            "found none",
            block,
        )
    first = reduction_loops[0]
    if loop is first or first.is_ancestor(loop):
        raise ScheduleError(
            f"cannot decompose the reduction: expected a loop outside the reduction loops, "
            f"found reduction loop \"{first.axis.data}\" around it",
            loop,
        )
    init = _previous_init(block, first)
    parent = init.parent_op()
    assert isinstance(parent, ForOp) and (parent is loop or loop.is_ancestor(parent))
    band = band_between(loop, parent)
    others = [
        op for op in body_ops(parent) if op is not init and op is not first and not is_pure(op)
    ]
    if others:
        raise ScheduleError(
            f"cannot decompose the reduction: expected only the init and the reduction loop in "
            f"{describe(parent)}, found also '{others[0].name}'",
            parent,
        )
    _check_legal(block, init, band)
    return init, band


def _previous_init(block: BlockOp, first: ForOp) -> BlockOp:
    written = set(block.writes)
    candidate = first.prev_op
    while candidate is not None:
        if isinstance(candidate, BlockOp) and set(candidate.writes) & written:
            return candidate
        if not is_pure(candidate):
            break
        candidate = candidate.prev_op
    raise ScheduleError(
        f"cannot decompose the reduction: expected an init block writing the reduction's buffer "
        f"just before loop \"{first.axis.data}\", found none",
        block,
    )


def _check_legal(block: BlockOp, init: BlockOp, band: list[ForOp]) -> None:
    """The init and the update touch each element at the same indices, one per iteration."""
    for buffer in init.writes:
        if buffer not in block.writes:
            raise ScheduleError(
                f"cannot decompose the reduction: expected the init to write only the "
                f"reduction's buffers, found it writes {buffer.type}",
                init,
            )
        stores = [op for op in accesses(init, buffer) if isinstance(op, StoreOp)]
        if not stores:
            continue
        indices = list(stores[0].indices)
        for access in [*accesses(init, buffer), *accesses(block, buffer)]:
            if not all(same_value(a, b) for a, b in zip(access.indices, indices, strict=True)):
                kind = "load" if isinstance(access, LoadOp) else "store"
                raise ScheduleError(
                    f"cannot decompose the reduction: expected every access to {buffer.type} "
                    f"at the init's indices, found a {kind} at other indices",
                    block,
                )
        for loop in band:
            if not any(depends_on(index, {loop.induction_var}) for index in indices):
                raise ScheduleError(
                    f"cannot decompose the reduction: expected the init's indices to depend on "
                    f"{describe(loop)}, found they do not (it would initialise once instead of "
                    "every iteration)",
                    loop,
                )
    for other in nested_blocks(band[0]):
        if other is not init and set(other.writes) & set(init.reads):
            raise ScheduleError(
                f"cannot decompose the reduction: expected nothing in the nest to write what the "
                f"init reads, found {describe(other)}",
                other,
            )


def decompose_reduction(block: BlockOp, loop: ForOp) -> BlockOp:
    """Moves the init of reduction `block` into a copy of the loops `loop`..init, before `loop`.

    The init is the `loop.block` writing the reduction's buffer just before its outermost
    reduction loop. The loops from `loop` down to the init's parent must be a perfect band, the
    init's parent holding only the init, the reduction loop and index arithmetic. The copies have
    the same bounds, axes and kinds; the index arithmetic the init or the bounds need is copied
    with them. Legal when every access of the buffer in the init and the update is at the init's
    store indices, and those depend on every copied loop. Returns the init block (same op).
    """
    init, band = find_init(block, loop)
    needed = _needed_values(init, band)
    mapper: dict[SSAValue, SSAValue] = {}
    copies: list[ForOp] = []
    for level, original in enumerate(band):
        bounds = [mapper.get(bound, bound) for bound in original.operands]
        copy = new_loop(bounds[0], bounds[1], bounds[2], original.axis.data, like=original)
        mapper[original.induction_var] = copy.induction_var
        if level == 0:
            parent = loop.parent_block()
            assert parent is not None
            parent.insert_op_before(copy, loop)
        else:
            _append(copies[-1], copy)
        for op in body_ops(original):
            if is_pure(op) and any(result in needed for result in op.results):
                _append(copy, op.clone(value_mapper=mapper))
        copies.append(copy)
    move_ops_into([init], copies[-1])
    for op in init.walk():
        op.operands = tuple(mapper.get(operand, operand) for operand in op.operands)
    return init


def _append(loop: ForOp, op: Operation) -> None:
    block = loop.body.block
    terminator = block.last_op
    assert terminator is not None
    block.insert_op_before(op, terminator)


def _needed_values(init: BlockOp, band: list[ForOp]) -> set[SSAValue]:
    """Results of the band's pure ops that the init or the inner loops' bounds use."""
    pending: list[SSAValue] = [
        operand for op in init.walk() for operand in op.operands
        if is_defined_outside(operand, init)
    ]
    pending += [bound for loop in band[1:] for bound in loop.operands]
    needed: set[SSAValue] = set()
    while pending:
        value = pending.pop()
        owner = value.owner
        if value in needed or not isinstance(owner, Operation):
            continue
        if not any(owner.parent_op() is loop for loop in band):
            continue
        needed.add(value)
        pending.extend(owner.operands)
    return needed
