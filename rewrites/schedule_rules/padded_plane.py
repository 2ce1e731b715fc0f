"""The zero-padded input plane of a channel kernel's plane packing, read through its pad.

A depthwise conv in NCHW whose channel kernel packs its input plane channel-last
(`reduction.plan_channel_kernel`'s `plane_packing`) reads the padded buffer that the pad nest
before it wrote (`pad.schedule_pad`: border fills and an interior copy): a pass that writes the
whole padded plane, then the pack's pass that reads it back. When the padded buffer is the
function's own (`loop.alloc`), only the pad's blocks write it and only the conv reads it, the
pack can read the unpadded input and write the packed plane's interior, with the border of the
packed plane zero-filled, and the pad nest goes: one pass over the plane less (a 5x5/2
depthwise conv on 672 x 14x14: 0.055 -> 0.036 ms without its pad stage).

`find_padded_plane` recognises the scheduled pad (its "pad" copy block, `P[i + before] =
X[i]`, and "pad.fill" blocks storing float zero); the builder asks for it before packing.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp
from dlc.rewrites.schedule.common import constant_value
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, MemRefType, NoneAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

PAD_BLOCK = "pad"
FILL_BLOCK = "pad.fill"


@dataclass
class PaddedPlane:
    """The pad of a buffer `P[b..., c, plane...]`: `P[i + before] = X[i]` over `X`'s shape,
    zero elsewhere. `nests` are the ops that write `P` (the pad's loop nests), `alloc` and
    `dealloc` its buffer's."""

    source: SSAValue
    before: list[int]
    padded: list[int]
    nests: list[Operation]
    alloc: AllocOp
    dealloc: DeallocOp | None


def _offset_of(index: SSAValue, iv: SSAValue) -> int | None:
    """`d` if `index` is `iv` (0) or `iv + d` (a constant `d`), else None."""
    if index is iv:
        return 0
    owner = index.owner
    if isinstance(owner, arith.AddiOp):
        for value, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if value is iv:
                return constant_value(other)
    return None


def _trip(iv: SSAValue) -> int | None:
    """The trip count of the loop whose induction variable `iv` is, if constant."""
    loop = iv.block.parent_op() if isinstance(iv, BlockArgument) else None
    if isinstance(loop, ForOp) and loop.induction_var is iv:
        bounds = loop.constant_bounds()
        if bounds is not None and bounds[2] == 1:
            return bounds[1] - bounds[0]
    return None


def _is_zero_fill(block: BlockOp, buffer: SSAValue) -> bool:
    stores = [op for op in block.walk() if isinstance(op, StoreOp)]
    if len(stores) != 1 or stores[0].memref is not buffer:
        return False
    value = stores[0].value.owner
    return (isinstance(value, arith.ConstantOp) and isinstance(value.value, FloatAttr)
            and value.value.value.data == 0.0)


def _pad_nests(function_body: list[Operation], buffer: SSAValue, readers: set[BlockOp],
               ) -> tuple[list[Operation], BlockOp, DeallocOp | None] | None:
    """The ops of `function_body` that write `buffer` (each only through "pad.fill" blocks
    storing float zero and one "pad" copy block), the copy block and the buffer's dealloc;
    None if anything else writes or reads it (besides `readers`) or uses it otherwise."""
    copy: BlockOp | None = None
    nests: list[Operation] = []
    dealloc: DeallocOp | None = None
    for op in function_body:
        if isinstance(op, DeallocOp) and op.memref is buffer:
            dealloc = op
            continue
        blocks = [b for b in op.walk() if isinstance(b, BlockOp)
                  and (buffer in b.reads or buffer in b.writes)]
        if not blocks:
            if op is not buffer.owner and any(operand is buffer for inner in op.walk()
                                              for operand in inner.operands):
                return None  # a view of the buffer, or another use
            continue
        if all(b in readers for b in blocks):
            continue
        for b in blocks:
            name = b.block_name.data
            if list(b.writes) != [buffer] or buffer in b.reads:
                return None
            if name == PAD_BLOCK and copy is None:
                copy = b
            elif name != FILL_BLOCK or not _is_zero_fill(b, buffer):
                return None
        nests.append(op)
    return None if copy is None else (nests, copy, dealloc)


def _copy_offsets(copy: BlockOp, buffer: SSAValue) -> tuple[SSAValue, list[int]] | None:
    """The source of the pad's copy `P[i + before] = X[i]` and `before`, when the copy reads
    the whole of an identity-layout `X`."""
    loads = [op for op in copy.walk() if isinstance(op, LoadOp)]
    stores = [op for op in copy.walk() if isinstance(op, StoreOp)]
    if len(loads) != 1 or len(stores) != 1 or stores[0].value is not loads[0].result:
        return None
    load, store = loads[0], stores[0]
    source_type, padded_type = load.memref.type, buffer.type
    if not isinstance(source_type, MemRefType) or not isinstance(padded_type, MemRefType):
        return None
    if not isinstance(source_type.layout, NoneAttr):
        return None
    shape, padded = list(source_type.get_shape()), list(padded_type.get_shape())
    if not len(load.indices) == len(store.indices) == len(shape) == len(padded):
        return None
    before: list[int] = []
    for axis, (read, written) in enumerate(zip(load.indices, store.indices, strict=True)):
        offset = _offset_of(written, read)
        if offset is None or offset < 0 or shape[axis] + offset > padded[axis]:
            return None
        if _trip(read) != shape[axis] and not (shape[axis] == 1 and constant_value(read) == 0):
            return None  # the copy must read the whole source
        before.append(offset)
    return load.memref, before


def find_padded_plane(function_body: list[Operation], buffer: SSAValue, readers: set[BlockOp],
                      ) -> PaddedPlane | None:
    """The pad that wrote `buffer` (an op of `function_body`'s allocation), when its blocks are
    the only writers, `readers` the only other blocks that touch it, its fill is float zero
    and its copy reads the whole of an identity-layout source; else None."""
    alloc = buffer.owner
    if not isinstance(alloc, AllocOp) or alloc not in function_body:
        return None
    found = _pad_nests(function_body, buffer, readers)
    if found is None:
        return None
    nests, copy, dealloc = found
    offsets = _copy_offsets(copy, buffer)
    if offsets is None:
        return None
    source, before = offsets
    padded_type = buffer.type
    assert isinstance(padded_type, MemRefType)
    return PaddedPlane(source, before, list(padded_type.get_shape()), nests, alloc, dealloc)
