"""The `compute_inline` schedule primitive: inline an injective producer into its consumers.

Counterpart: TVM's `Schedule.compute_inline(block)`; at the tensor_expr level dlc does the same
in `tensor-expr-inline`, this one works on loop-level IR after other schedule steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp
from dlc.rewrites.schedule.common import (
    ScheduleError,
    band_between,
    describe,
    enclosing_loops,
    is_defined_outside,
    is_pure,
    nest_root,
    nested_blocks,
    program_order_index,
    refresh_reads,
)
from xdsl.dialects.builtin import MemRefType, VectorType
from xdsl.ir import Operation, SSAValue


def producer_store(block: BlockOp, what: str) -> tuple[SSAValue, StoreOp]:
    """The one buffer and store of a single-statement producer block, or a ScheduleError."""
    stores = [op for op in block.walk() if isinstance(op, StoreOp)]
    if len(block.writes) != 1 or len(stores) != 1 or stores[0].memref is not block.writes[0]:
        raise ScheduleError(
            f"cannot {what}: expected a block that stores one value into one buffer, found "
            f"{len(stores)} store(s) into {len(block.writes)} buffer(s)",
            block,
        )
    buffer, store = block.writes[0], stores[0]
    if isinstance(store.value.type, VectorType):
        raise ScheduleError(f"cannot {what}: expected a scalar store, found a vector one", block)
    if not isinstance(buffer.owner, AllocOp):
        raise ScheduleError(
            f"cannot {what}: expected the written buffer to be an intermediate (a loop.alloc), "
            "found a function argument",
            block,
        )
    return buffer, store


def identity_loops(block: BlockOp, store: StoreOp, what: str) -> list[ForOp]:
    """The loops around `block`, each indexing its own dimension of the store over its extent.

    The store's indices must be the induction variables of all the loops around the block (a
    permutation), each loop running over `[0, dim)` step 1, and the loops a perfect band whose
    innermost body holds only the block and index arithmetic: then every element of the buffer
    is written exactly once, by one iteration.
    """
    loops = enclosing_loops(block)
    ivs = [loop.induction_var for loop in loops]
    indices = list(store.indices)
    if len(set(indices)) != len(indices) or set(indices) != set(ivs):
        raise ScheduleError(
            f"cannot {what}: expected the store's indices to be the induction variables of the "
            f"{len(loops)} loop(s) around the block, found other indices",
            block,
        )
    memref_type = store.memref.type
    assert isinstance(memref_type, MemRefType)
    shape = memref_type.get_shape()
    for loop in loops:
        dim = shape[indices.index(loop.induction_var)]
        if loop.constant_bounds() != (0, dim, 1):
            raise ScheduleError(
                f"cannot {what}: expected {describe(loop)} to run over [0, {dim}) step 1, the "
                "dimension it indexes, found other bounds",
                loop,
            )
    check_alone(block, loops, what)
    return loops


def check_alone(block: BlockOp, loops: list[ForOp], what: str) -> None:
    """The loops around `block` are a perfect band whose innermost body is only the block (and
    index arithmetic)."""
    if not loops:
        return
    band_between(loops[0], loops[-1])
    others = [op for op in loops[-1].body.block.ops
              if op is not block and not is_pure(op) and op.name != "loop.yield"]
    if others:
        raise ScheduleError(
            f"cannot {what}: expected the block alone in its loops, found also "
            f"'{others[0].name}'",
            block,
        )


def check_body(block: BlockOp, store: StoreOp, what: str) -> None:
    """The producer computes its value from scalar loads and pure ops only."""
    for op in block.body.block.ops:
        if op is store or op.name == "loop.yield" or is_pure(op):
            continue
        if isinstance(op, LoadOp) and not isinstance(op.result.type, VectorType):
            if op.memref is store.memref:
                raise ScheduleError(
                    f"cannot {what}: expected a block that does not read what it writes, found "
                    "a load of its own buffer",
                    block,
                )
            continue
        raise ScheduleError(
            f"cannot {what}: expected only scalar loads and side-effect-free ops besides the "
            f"store, found '{op.name}'",
            block,
        )


def check_free_values(block: BlockOp, root: Operation, loops: list[ForOp], what: str) -> None:
    """The block uses, from outside itself, only its loops' variables and values from outside
    its nest (so that a copy of it can be placed elsewhere)."""
    ivs = {loop.induction_var for loop in loops}
    for op in block.walk():
        for operand in op.operands:
            if operand in ivs or is_defined_outside(operand, root):
                continue
            if not is_defined_outside(operand, block):
                continue
            raise ScheduleError(
                f"cannot {what}: expected the block to use only its loops' induction variables "
                f"and values from outside its nest, found a use of a value computed in the nest",
                block,
            )


@dataclass(frozen=True)
class _InlinePlan:
    """What `compute_inline` needs once its preconditions hold."""

    buffer: SSAValue
    store: StoreOp
    loops: list[ForOp]
    root: Operation
    loads: list[LoadOp]


def _plan_inline(block: BlockOp) -> _InlinePlan:
    """Checks every precondition of `compute_inline` (a ScheduleError names the first that
    fails) without changing anything, and returns what inlining needs."""
    what = "inline"
    buffer, store = producer_store(block, what)
    loops = identity_loops(block, store, what)
    check_body(block, store, what)
    root = nest_root(block)
    check_free_values(block, root, loops, what)
    loads = _consumer_loads(block, buffer, root, what)
    _check_inputs_unchanged(block, root, what)
    _check_inputs_live(block, root, loads, what)
    return _InlinePlan(buffer, store, loops, root, loads)


def compute_inline_refusal(block: BlockOp) -> str | None:
    """Why `compute_inline(block)` would refuse, or None if it applies (the legality rule, for
    search spaces that must not propose an illegal inline)."""
    try:
        _plan_inline(block)
    except ScheduleError as error:
        return str(error)
    return None


def compute_inline(block: BlockOp) -> None:
    """Replaces every load of the buffer `block` produces by the producer's computation.

    Preconditions (all checked first, by `_plan_inline`; `compute_inline_refusal` asks the same
    question): `block` stores one scalar into one `loop.alloc` buffer at the induction variables
    of all the loops around it, which run over the whole buffer and hold nothing else; its body
    has only scalar loads (not of its own buffer) and pure ops; nothing else writes the buffer;
    every other use of the buffer is a scalar `loop.load` in a later nest of the same region, a
    block's `reads`, or a `loop.dealloc`; nothing after the producer writes what it reads, and
    nothing before its last consumer deallocates what it reads (the consumers will read it).
    Then each load is replaced by a copy of the producer's body with its loop variables replaced
    by the load's indices; the consumers' `reads` are updated; the producer's nest, and the
    buffer if nothing else uses it, are erased.
    """
    plan = _plan_inline(block)
    store = plan.store
    positions = {
        iv: list(store.indices).index(iv) for iv in (l.induction_var for l in plan.loops)
    }
    body = [op for op in block.body.block.ops if op is not store and op.name != "loop.yield"]
    inputs = [op.memref for op in body if isinstance(op, LoadOp)]
    consumers: list[BlockOp] = []
    for load in plan.loads:
        mapper: dict[SSAValue, SSAValue] = {
            iv: load.indices[position] for iv, position in positions.items()
        }
        parent = load.parent_block()
        assert parent is not None
        for op in body:
            parent.insert_op_before(op.clone(value_mapper=mapper), load)
        load.result.replace_all_uses_with(mapper.get(store.value, store.value))
        consumer = _enclosing_block(load)
        load.detach()
        load.erase()
        if consumer is not None and consumer not in consumers:
            consumers.append(consumer)
    for consumer in consumers:
        refresh_reads(consumer, inputs)
    plan.root.detach()
    plan.root.erase()
    _erase_if_unused(plan.buffer)


def _enclosing_block(op: Operation) -> BlockOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, BlockOp):
        parent = parent.parent_op()
    return parent


def _consumer_loads(
    block: BlockOp, buffer: SSAValue, root: Operation, what: str
) -> list[LoadOp]:
    loads: list[LoadOp] = []
    region_block = root.parent_block()
    for use in buffer.uses:
        user = use.operation
        if root.is_ancestor(user) or isinstance(user, DeallocOp):
            continue
        if isinstance(user, BlockOp) and buffer not in user.writes:
            continue
        if not isinstance(user, LoadOp) or isinstance(user.result.type, VectorType):
            raise ScheduleError(
                f"cannot {what}: expected only scalar loads of the buffer outside the producer, "
                f"found '{user.name}'",
                block,
            )
        user_root = nest_root(user)
        if user_root.parent_block() is not region_block or (
            program_order_index(user_root) < program_order_index(root)
        ):
            raise ScheduleError(
                f"cannot {what}: expected every load of the buffer in a later nest of the same "
                "region, found one that is not",
                block,
            )
        loads.append(user)
    if not loads:
        raise ScheduleError(f"cannot {what}: expected a consumer of the buffer, found none", block)
    return loads


def _check_inputs_unchanged(block: BlockOp, root: Operation, what: str) -> None:
    inputs = set(block.reads)
    later = root.next_op
    while later is not None:
        for other in nested_blocks(later):
            written = inputs & set(other.writes)
            if written:
                raise ScheduleError(
                    f"cannot {what}: expected the producer's inputs unchanged until its "
                    f"consumers, found {describe(other)} writing one",
                    block,
                )
        later = later.next_op


def _check_inputs_live(
    block: BlockOp, root: Operation, loads: list[LoadOp], what: str
) -> None:
    """No buffer the producer reads is deallocated between its nest and its last consumer's:
    the inlined copies read those buffers where the consumers are (Winograd's input transform
    reads the padded input, which is freed as soon as the transform has run)."""
    inputs = set(block.reads) | {op.memref for op in block.walk() if isinstance(op, LoadOp)}
    last = max((nest_root(load) for load in loads), key=program_order_index)
    later = root.next_op
    while later is not None and later is not last:
        for op in [later, *later.walk()]:
            if isinstance(op, DeallocOp) and op.memref in inputs:
                raise ScheduleError(
                    f"cannot {what}: expected the buffers the producer reads to live until its "
                    f"last consumer, found a 'loop.dealloc' of {op.memref.type} before it",
                    block,
                )
        later = later.next_op


def _erase_if_unused(buffer: SSAValue) -> None:
    if any(not isinstance(use.operation, DeallocOp) for use in buffer.uses):
        return
    for use in list(buffer.uses):
        use.operation.detach()
        use.operation.erase()
    alloc = buffer.owner
    assert isinstance(alloc, Operation)
    alloc.detach()
    alloc.erase()
