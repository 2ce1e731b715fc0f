"""The `cache_read` and `cache_write` schedule primitives: stage a buffer through a copy.

Counterpart: TVM's `Schedule.cache_read(block, read_buffer_index, storage_scope)` and
`Schedule.cache_write(block, write_buffer_index, storage_scope)`. The copy has the buffer's full
shape; `compute_at`/`reverse_compute_at` then move the copy nest where it is used (dlc does not
shrink the allocation to the region a tile needs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dlc.dialects.loop.ops import ALLOC_SCOPES, AllocOp, BlockOp, LoadOp, StoreOp
from dlc.rewrites.schedule.common import (
    IndexBuilder,
    ScheduleError,
    accesses,
    enclosing_loops,
    index_constant,
    nest_root,
    nested_blocks,
    new_loop,
    program_order_index,
    replace_buffer,
)
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

IndexMap = Callable[[IndexBuilder, Sequence[SSAValue]], list[SSAValue]]
"""Maps the copy loops' induction variables to the destination's indices."""


def copy_nest(
    name: str,
    source: SSAValue,
    destination: SSAValue,
    before: Operation,
    destination_indices: IndexMap | None = None,
) -> BlockOp:
    """Inserts before `before` a nest copying `source` into `destination`; returns its block.

    One `loop.for` per dimension of `source` (axes "ax0", "ax1", ..., over `[0, dim)`) around a
    block `name` that loads `source` at the loop variables and stores into `destination` at
    `destination_indices(builder, ivs)` (default: the same indices).
    """
    memref_type = source.type
    assert isinstance(memref_type, MemRefType)
    parent = before.parent_block()
    assert parent is not None
    axes = [f"ax{dim}" for dim in range(memref_type.get_num_dims())]
    zero, one = index_constant(0, before), index_constant(1, before)
    loops = [
        new_loop(zero, index_constant(size, before), one, axis)
        for axis, size in zip(axes, memref_type.get_shape(), strict=True)
    ]
    ivs: list[SSAValue] = [loop.induction_var for loop in loops]
    body = Block()
    builder = IndexBuilder(before, body)
    value = builder.insert(LoadOp(source, ivs))
    indices = destination_indices(builder, ivs) if destination_indices is not None else ivs
    builder.insert_op(StoreOp(value, destination, indices))
    block = BlockOp(name, [source], [destination], body, spatial_axes=axes)
    nest: Operation = block
    for loop in reversed(loops):
        loop.body.block.insert_op_before(nest, loop.body.block.first_op)  # type: ignore[arg-type]
        nest = loop
    parent.insert_op_before(nest, before)
    return block


def allocate_like(buffer: SSAValue, scope: str, before: Operation) -> SSAValue:
    """Inserts a `loop.alloc <scope>` with `buffer`'s type before `before`."""
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    alloc = AllocOp(memref_type, scope)
    if buffer.name_hint:
        alloc.result.name_hint = f"{buffer.name_hint}_{scope}"
    parent = before.parent_block()
    assert parent is not None
    parent.insert_op_before(alloc, before)
    return alloc.result


def check_scope(block: BlockOp, scope: str, what: str) -> None:
    if scope not in ALLOC_SCOPES:
        raise ScheduleError(
            f"cannot {what}: expected a scope among {', '.join(ALLOC_SCOPES)}, found '{scope}'",
            block,
        )


def check_static(block: BlockOp, buffer: SSAValue, what: str) -> MemRefType:
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    if any(size < 0 for size in memref_type.get_shape()):
        raise ScheduleError(
            f"cannot {what}: expected a buffer of static shape, found {memref_type}", block
        )
    return memref_type


def read_operand(block: BlockOp, operand_index: int, what: str) -> SSAValue:
    """`block.reads[operand_index]`, or a ScheduleError."""
    if not 0 <= operand_index < len(block.reads):
        raise ScheduleError(
            f"cannot {what}: expected an operand index below {len(block.reads)} (the number of "
            f"buffers the block reads), found {operand_index}",
            block,
        )
    buffer = block.reads[operand_index]
    check_static(block, buffer, what)
    return buffer


def check_not_written_in_nest(block: BlockOp, buffer: SSAValue, what: str) -> Operation:
    """The block's nest root, after checking that no block in the nest writes `buffer`."""
    root = nest_root(block)
    for other in nested_blocks(root):
        if buffer in other.writes:
            raise ScheduleError(
                f"cannot {what}: expected the buffer not to be written in the block's nest, "
                f'found block "{other.block_name.data}" writing it',
                block,
            )
    return root


def cache_read(block: BlockOp, operand_index: int, scope: str) -> BlockOp:
    """Makes `block` read `block.reads[operand_index]` from a copy in `scope`.

    Inserts, before the block's nest, a `loop.alloc <scope>` of the buffer's shape and a copy
    nest whose block is named "<block>.<scope>_read<operand_index>"; the block's loads of the
    buffer (and its `reads`) then use the copy. Fails if the buffer is written in the block's
    nest. Returns the copy block.
    """
    what = "cache_read"
    check_scope(block, scope, what)
    buffer = read_operand(block, operand_index, what)
    root = check_not_written_in_nest(block, buffer, what)
    copy = allocate_like(buffer, scope, root)
    name = f"{block.block_name.data}.{scope}_read{operand_index}"
    copy_block = copy_nest(name, buffer, copy, root)
    replace_buffer(block, buffer, copy)
    return copy_block


def cache_write(block: BlockOp, scope: str) -> BlockOp:
    """Makes the nest of `block` write its buffer into a copy in `scope`, then write it back.

    `block` must write exactly one buffer. Inserts a `loop.alloc <scope>` before the block's
    nest; every block of that nest accessing the buffer (e.g. a reduction's init and update)
    uses the copy instead; a write-back nest (block "<block>.<scope>_write") follows the nest.
    A copy-in nest ("<block>.<scope>_fill") precedes the nest, so that the write-back never
    overwrites elements the nest did not write (nor the nest reads what it did not write),
    unless the nest's first access to the buffer is a store that provably writes every element
    (its indices are the variables of loops over `[0, dim)` step 1) or the buffer is a
    `loop.alloc` nothing accessed before the nest. Returns the write-back block.
    """
    what = "cache_write"
    check_scope(block, scope, what)
    if len(block.writes) != 1:
        raise ScheduleError(
            f"cannot {what}: expected a block writing one buffer, found {len(block.writes)}",
            block,
        )
    buffer = block.writes[0]
    check_static(block, buffer, what)
    root = nest_root(block)
    first = next(iter(accesses(root, buffer)), None)
    stray = [
        access for access in accesses(root, buffer)
        if not any(b.is_ancestor(access) for b in nested_blocks(root))
    ]
    if stray:
        raise ScheduleError(
            f"cannot {what}: expected every access to the buffer in the nest inside a block, "
            f"found a '{stray[0].name}' outside",
            block,
        )
    copy = allocate_like(buffer, scope, root)
    name = block.block_name.data
    covered = isinstance(first, StoreOp) and _writes_everything(first, root)
    if not covered and not _fresh_before(buffer, root):
        copy_nest(f"{name}.{scope}_fill", buffer, copy, root)
    for other in nested_blocks(root):
        if buffer in other.reads or buffer in other.writes:
            replace_buffer(other, buffer, copy)
    after = root.next_op
    assert after is not None, "a nest is always followed by its region's terminator"
    return copy_nest(f"{name}.{scope}_write", copy, buffer, after)



def _writes_everything(store: StoreOp, root: Operation) -> bool:
    """Whether `store` writes every element of its buffer: its indices are distinct induction
    variables of loops inside `root` around it, each over `[0, dim)` step 1."""
    memref_type = store.memref.type
    assert isinstance(memref_type, MemRefType)
    indices = list(store.indices)
    if len(set(indices)) != len(indices):
        return False
    loops = {loop.induction_var: loop for loop in enclosing_loops(store) if root.is_ancestor(loop)}
    for index, size in zip(indices, memref_type.get_shape(), strict=True):
        loop = loops.get(index)
        if loop is None or loop.constant_bounds() != (0, size, 1):
            return False
    return True


def _fresh_before(buffer: SSAValue, root: Operation) -> bool:
    """Whether `buffer` is a `loop.alloc` that nothing accesses before the nest `root`: what the
    nest does not write is undefined before it as after the write-back."""
    if not isinstance(buffer.owner, AllocOp):
        return False
    region_block = root.parent_block()
    position = program_order_index(root)
    for use in buffer.uses:
        user = use.operation
        if root.is_ancestor(user) or not isinstance(user, LoadOp | StoreOp):
            continue
        user_root = nest_root(user)
        if user_root.parent_block() is not region_block:
            return False
        if program_order_index(user_root) < position:
            return False
    return True
