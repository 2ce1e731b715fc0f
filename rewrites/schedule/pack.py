"""The `pack` schedule primitive: re-lay out an input buffer into a blocked layout.

Counterpart: MLIR's `tensor.pack` (inner tiles, outer dims permutation) and TVM's
`Schedule.transform_layout`. The classic use is GEMM's B panel: `[K][N]` with tiles `[0, 16]`
and `outer_perm [1, 0]` becomes `[N/16][K][16]`, so that the 16 columns a vectorized micro-kernel
reads at one `k` are contiguous and the panels are read in order.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.loop.ops import AllocOp, BlockOp, ForOp, LoadOp
from dlc.rewrites.schedule.cache import check_not_written_in_nest, copy_nest, read_operand
from dlc.rewrites.schedule.common import IndexBuilder, ScheduleError, refresh_reads
from xdsl.dialects.arith import AddiOp
from xdsl.dialects.builtin import MemRefType, VectorType
from xdsl.ir import BlockArgument, SSAValue


def packed_shape(shape: Sequence[int], tiles: Sequence[int], perm: Sequence[int]) -> list[int]:
    """The shape of the packed buffer: permuted outer dimensions, then the tiles."""
    outer = [size // tile if tile else size for size, tile in zip(shape, tiles, strict=True)]
    return [outer[dim] for dim in perm] + [tile for tile in tiles if tile]


def check_pack(
    block: BlockOp, operand_index: int, tiles: Sequence[int], perm: Sequence[int] | None
) -> tuple[SSAValue, list[int]]:
    """The buffer and the permutation, after checking that `pack` applies."""
    what = "pack"
    buffer = read_operand(block, operand_index, what)
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    shape = memref_type.get_shape()
    if len(tiles) != len(shape):
        raise ScheduleError(
            f"cannot pack: expected {len(shape)} tile sizes (one per dimension of "
            f"{memref_type}), found {len(tiles)}",
            block,
        )
    for size, tile in zip(shape, tiles, strict=True):
        if tile < 0 or (tile and size % tile):
            raise ScheduleError(
                f"cannot pack: expected tile sizes that divide the dimensions of {memref_type} "
                f"(0: not tiled), found {tile} for {size}",
                block,
            )
    order = list(range(len(shape))) if perm is None else list(perm)
    if sorted(order) != list(range(len(shape))):
        raise ScheduleError(
            f"cannot pack: expected outer_perm to be a permutation of 0..{len(shape) - 1}, "
            f"found {order}",
            block,
        )
    check_not_written_in_nest(block, buffer, what)
    for op in block.walk():
        if isinstance(op, LoadOp) and op.memref is buffer and isinstance(
            op.result.type, VectorType
        ):
            raise ScheduleError(
                "cannot pack: expected scalar loads of the buffer, found a vector load", block
            )
    return buffer, order


def pack(
    block: BlockOp, operand_index: int, tiles: Sequence[int], perm: Sequence[int] | None = None
) -> BlockOp:
    """Makes `block` read `block.reads[operand_index]` from a packed copy; returns the copy block.

    The packed buffer (`loop.alloc global`, shape `packed_shape`) is filled by a nest placed
    before the block's nest (block "<block>.pack<operand_index>") that iterates over the source
    and stores element `x` at `[perm(x_d / t_d), x_d % t_d for tiled d]`. The block's loads are
    rewritten to those indices; when an index is `outer + inner` with `outer` a loop variable
    aligned to the tile and `inner` a loop variable over `[0, t)`, the division and remainder
    fold to `outer / t` and `inner`.
    """
    buffer, order = check_pack(block, operand_index, tiles, perm)
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    packed_type = MemRefType(
        memref_type.get_element_type(), packed_shape(memref_type.get_shape(), tiles, order)
    )
    root = check_not_written_in_nest(block, buffer, "pack")
    alloc = AllocOp(packed_type, "global")
    if buffer.name_hint:
        alloc.result.name_hint = f"{buffer.name_hint}_packed"
    parent = root.parent_block()
    assert parent is not None
    parent.insert_op_before(alloc, root)
    packed = alloc.result

    def packed_indices(builder: IndexBuilder, indices: Sequence[SSAValue]) -> list[SSAValue]:
        outer: list[SSAValue] = []
        inner: list[SSAValue] = []
        for index, tile in zip(indices, tiles, strict=True):
            if not tile:
                outer.append(index)
                continue
            folded = _fold_split_index(index, tile)
            if folded is not None:
                outer.append(builder.div(folded[0], tile))
                inner.append(folded[1])
            else:
                outer.append(builder.div(index, tile))
                inner.append(builder.rem(index, tile))
        return [outer[dim] for dim in order] + inner

    name = f"{block.block_name.data}.pack{operand_index}"
    copy = copy_nest(name, buffer, packed, root, packed_indices)
    for load in [op for op in block.walk() if isinstance(op, LoadOp) and op.memref is buffer]:
        parent_block = load.parent_block()
        assert parent_block is not None
        builder = IndexBuilder(root, parent_block, load)
        load.operands = (packed, *packed_indices(builder, list(load.indices)))
    refresh_reads(block, [packed])
    return copy


def _fold_split_index(index: SSAValue, tile: int) -> tuple[SSAValue, SSAValue] | None:
    """`(outer, inner)` if `index = outer + inner` splits at a multiple of `tile`, else None."""
    owner = index.owner
    if not isinstance(owner, AddiOp):
        return None
    for outer, inner in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
        outer_loop, inner_loop = _loop_of(outer), _loop_of(inner)
        if outer_loop is None or inner_loop is None:
            continue
        outer_bounds, inner_bounds = outer_loop.constant_bounds(), inner_loop.constant_bounds()
        if outer_bounds is None or inner_bounds is None:
            continue
        lb, _, step = outer_bounds
        if lb % tile or step % tile:
            continue
        if inner_bounds[0] == 0 and inner_bounds[2] == 1 and inner_bounds[1] <= tile:
            return outer, inner
    return None


def _loop_of(value: SSAValue) -> ForOp | None:
    if isinstance(value, BlockArgument):
        loop = value.owner.parent_op()
        if isinstance(loop, ForOp):
            return loop
    return None
