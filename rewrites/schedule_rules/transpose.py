"""Default CPU schedule of a transposing copy: blocks of lanes x lanes, transposed in registers.

Counterpart: TVM's x86 `schedule_injective` leaves a transpose to LLVM (scalar, or gathers);
ONNX Runtime's MLAS and oneDNN's reorders transpose 8x8 or 16x16 blocks with shuffles.

A copy `out[..., i, ..., j] = x[..., j, ..., i]` whose innermost write axis `j` is not the
innermost read axis `i` cannot be vectorized along either axis with contiguous accesses alone:
along `j` it gathers (a load per lane), along `i` it scatters. The nest is tiled by the
target's lanes L on both axes and the tile's loops ordered `j.1` (vectorized) outside `i.1`
(serial, L iterations), which the vectorizer widens as one L x L transpose in registers
(`LoopVectorizer.widen_transposed_copy`: L contiguous row loads, L log2 L shuffles, L
contiguous stores):

    for ... { for i.0 { for j.0 {                    // the other loops keep their order
      for j.1 (vectorized L) { for i.1 (serial L) {
        out[..., i.0 L + i.1, ..., j.0 L + j.1] = x[..., j.0 L + j.1, ..., i.0 L + i.1] } } } } }

The rule is keyed on the access pattern only: one block that copies a load into a store
(no arithmetic on the value), the store indexed by the loops in order (its innermost axis the
innermost loop's), the load by a permutation of them whose last index is another loop's.
When that other loop's extent is not a multiple of L and the loop just outside it indexes the
axis just before it in both buffers (NCHW -> NHWC over a 56 x 56 plane), the two merge into one
loop over a `memref.collapse_shape` of those axes in each buffer (56 x 56 = 196 x 16) first.
Both extents must then be multiples of L; otherwise the rule does not apply.
"""

from __future__ import annotations

from dlc.dialects.loop.ops import BlockOp, ForOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.schedule import fuse, reorder, split
from dlc.rewrites.schedule.common import is_pure, set_block_buffers
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import Elementwise, extent
from dlc.rewrites.schedule_rules.partial_sums import collapse_axes, defined_outside
from dlc.rewrites.schedule_rules.reduction import mark_parallel
from xdsl.dialects.builtin import MemRefType, NoneAttr, StringAttr
from xdsl.ir import SSAValue


def copied_value(block: BlockOp) -> tuple[LoadOp, StoreOp] | None:
    """The load and the store of a block that only stores what it loads."""
    ops = [op for op in block.body.block.ops if not isinstance(op, YieldOp)]
    if len(ops) != 2 or not isinstance(ops[0], LoadOp) or not isinstance(ops[1], StoreOp):
        return None
    load, store = ops
    if store.value is not load.result or load.memref is store.memref:
        return None
    return load, store


def permuting_copy(nest: Elementwise) -> tuple[LoadOp, StoreOp] | None:
    """The load and the store of a nest that copies one buffer into another, the store
    indexed by the nest's spatial loops in order and the load by a permutation of them."""
    if len(nest.blocks) != 1 or len(nest.spatial) < 2:
        return None
    copy = copied_value(nest.blocks[0])
    if copy is None:
        return None
    load, store = copy
    ivs = [loop.induction_var for loop in nest.spatial]
    if list(store.indices) != ivs or sorted(map(id, load.indices)) != sorted(map(id, ivs)):
        return None
    return load, store


def schedule_transposed_copy(nest: Elementwise, config: CpuConfig) -> bool:
    """Tile a transposing copy by lanes on both axes for the in-register transpose (module
    docstring); returns False, changing nothing, when the nest is not such a copy."""
    copy = permuting_copy(nest)
    if copy is None:
        return False
    load, store = copy
    loops = nest.spatial
    ivs = [loop.induction_var for loop in loops]
    for access in (load, store):
        buffer_type = access.memref.type
        if (not isinstance(buffer_type, MemRefType)
                or not isinstance(buffer_type.layout, NoneAttr)
                or not defined_outside(access.memref, loops[0])):
            return False
    lanes = config.lanes(load.result.type)
    inner = loops[-1]
    read = ivs.index(load.indices[-1])  # the loop the read walks contiguously
    if lanes < 2 or loops[read] is inner or extent(inner) % lanes:
        return False
    if extent(loops[read]) % lanes:
        if not _mergeable(load, store, ivs, read) or (
                extent(loops[read - 1]) * extent(loops[read])) % lanes:
            return False
        _merge(loops, read, load, store, nest.blocks[0])
        read -= 1
    i0, i1 = split(loops[read], [lanes])
    j0, j1 = split(loops[-1], [lanes])
    reorder([i0, j0, j1, i1])
    j1.properties["kind"] = StringAttr("vectorized")
    if config.parallel:
        mark_parallel([loops[0]])
    return True


def _mergeable(load: LoadOp, store: StoreOp, ivs: list[SSAValue], read: int) -> bool:
    """Whether the loop outside the read's loop indexes the axis just before the read's last
    axis in the load (and, the store being indexed in loop order, in the store)."""
    if read == 0:
        return False
    indices = list(load.indices)
    return len(indices) >= 2 and indices[-2] is ivs[read - 1]


def _merge(loops: list[ForOp], read: int, load: LoadOp, store: StoreOp, block: BlockOp) -> None:
    """Fuse loops `read - 1` and `read` into one, the load and the store reading and writing a
    `memref.collapse_shape` of the two axes they index by them (made before the nest)."""
    root = loops[0]
    parent = root.parent_block()
    assert parent is not None
    load_rank = len(load.indices)
    load_view = collapse_axes(load.memref, load_rank - 2, 2)
    store_view = collapse_axes(store.memref, read - 1, 2)
    parent.insert_op_before(load_view, root)
    parent.insert_op_before(store_view, root)
    merged = fuse(loops[read - 1], loops[read])
    iv = merged.induction_var
    load_indices = list(load.indices)[:-2]
    load.operands = (load_view.result, *load_indices, iv)
    store_indices = list(store.indices)
    store.operands = (store.value, store_view.result,
                      *store_indices[:read - 1], iv, *store_indices[read + 1:])
    for op in reversed(list(merged.body.block.ops)):
        if is_pure(op) and op.results and not any(result.uses for result in op.results):
            op.detach()
            op.erase()
    set_block_buffers(block, [load_view.result], [store_view.result])
    loops[read - 1:read + 1] = [merged]
