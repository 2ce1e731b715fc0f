"""Default CPU schedule of a padding nest (TOPI's "pad" compute): border fills, interior copy.

Counterpart: TVM's `topi.nn.pad` scheduled as an injective op, and oneDNN's padded-buffer
preparation (memset + interior copy).

A "pad" block stores `select(in_bounds, X[clamp(i - before)], value)` at every point of the
padded buffer `P` (`value` a constant, or a load at constant indices: an int8 conv's input
zero point): the clamped indices are not contiguous in the innermost axis, so the nest
cannot be vectorized as it is. It becomes, inside the loops of the leading axes that are not
padded (N, C for an NCHW conv2d), fills of the border (`border_boxes`: on each padded axis the
slab before and the slab after the interior) and an interior copy, each vectorized in the
innermost axis, so that every point is stored once; the outermost loop runs in parallel (one
parallel region, and each channel's border and interior are written together; with no leading
axis of two or more iterations, as a batch-1 NHWC input has, the interior copy's rows run in
parallel and the border's slabs serially):

    loop.for %n, %c (parallel) {
      loop.for ... { loop.block "pad.fill" { P[n, c, i + start...] = value } }   // each slab
      loop.for ... { loop.block "pad" { P[n, c, i + before...] = X[n, c, i...] } }  // interior
    }

The interior's extent on each axis is what the block's condition lets through (`i - before <
extent`, unsigned), not the shape of `X`: once a slice is inlined into the pad (an ONNX Pad with
a negative pad), `X` is the unsliced buffer and only its leading part is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dlc.dialects.loop.ops import BlockOp, ForOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.llvm_lowering.loop import MAX_UNROLLED_TRIP
from dlc.rewrites.schedule import ScheduleError, vectorize
from dlc.rewrites.schedule.common import constant_value, index_constant, value_name
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import Elementwise, body_of
from dlc.rewrites.schedule_rules.reduction import mark_parallel
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, MemRefType, StringAttr
from xdsl.ir import Block, Operation, SSAValue

PAD_BLOCK = "pad"
"""The name TOPI gives the compute that materialises a padded input (`rewrites.topi.nn`)."""


ULT = 6
"""The `arith.cmpi` predicate code of `ult`: the in-bounds test of TOPI's `guarded_read`."""


def _offset(index: SSAValue, iv: SSAValue) -> int | None:
    """`before` if `index` is `iv` or `iv - before` (`iv + -before`), else None."""
    if index is iv:
        return 0
    owner = index.owner
    if isinstance(owner, arith.SubiOp) and owner.lhs is iv:
        return constant_value(owner.rhs)
    if isinstance(owner, arith.AddiOp) and owner.lhs is iv:
        value = constant_value(owner.rhs)
        return None if value is None else -value
    return None


def _read_offset(index: SSAValue, iv: SSAValue) -> tuple[int, int | None] | None:
    """`(before, limit)` if the load index `index` is `minui(iv - before, limit)`, `(before,
    None)` if it is `iv - before` unclamped, else None."""
    owner = index.owner
    if isinstance(owner, arith.MinUIOp):
        offset, limit = _offset(owner.lhs, iv), constant_value(owner.rhs)
        return None if offset is None or limit is None else (offset, limit)
    offset = _offset(index, iv)
    return None if offset is None else (offset, None)


def _in_bounds_terms(condition: SSAValue) -> list[tuple[SSAValue, int]] | None:
    """The `(index, extent)` pairs of the `cmpi ult, index, extent` tests whose conjunction
    (`andi`) `condition` is, or None if it is anything else."""
    owner = condition.owner
    if isinstance(owner, arith.AndIOp):
        lhs, rhs = _in_bounds_terms(owner.lhs), _in_bounds_terms(owner.rhs)
        return None if lhs is None or rhs is None else lhs + rhs
    if isinstance(owner, arith.CmpiOp) and owner.predicate.value.data == ULT:
        extent = constant_value(owner.rhs)
        return None if extent is None else [(owner.lhs, extent)]
    return None


def _interior(
    condition: SSAValue, ivs: list[SSAValue], reads: list[tuple[int, int | None]],
    source_shape: list[int], padded_shape: list[int],
) -> list[int] | None:
    """The extent of the interior (the points where `condition` holds) on each axis, counted
    from `before`; None unless `condition` bounds each axis read at an offset, on that offset,
    and copying the interior reads exactly what the clamped reads did, inside `source_shape`.

    `condition` decides, not `source_shape`: an inlined slice leaves the unsliced buffer there.
    """
    terms = _in_bounds_terms(condition)
    if terms is None:
        return None
    bounds: list[int | None] = [None] * len(ivs)
    for index, extent in terms:
        tested = [axis for axis, iv in enumerate(ivs) if _offset(index, iv) == reads[axis][0]]
        if len(tested) != 1:  # not `iv - before` of one axis, at the offset it is read at
            return None
        axis = tested[0]
        bound = bounds[axis]
        bounds[axis] = extent if bound is None else min(bound, extent)
    interior: list[int] = []
    for bound, (before, limit), source, padded in zip(
        bounds, reads, source_shape, padded_shape, strict=True
    ):
        if bound is None and before:  # reads before the source without a test
            return None
        extent = padded - before if bound is None else min(bound, padded - before)
        if extent > source or (limit is not None and extent > limit + 1):
            return None
        interior.append(max(extent, 0))
    return interior


def _pad_parts(
    nest: Elementwise,
) -> tuple[LoadOp, StoreOp, SSAValue, list[int], list[int]] | None:
    """The load, the store, the pad value, the `before` offsets and the interior's extents of a
    pad nest, or None."""
    if len(nest.blocks) != 1 or nest.blocks[0].block_name.data != PAD_BLOCK:
        return None
    block = nest.blocks[0]
    stores = [op for op in block.walk() if isinstance(op, StoreOp)]
    if len(stores) != 1:
        return None
    store = stores[0]
    select = store.value.owner
    if not isinstance(select, arith.SelectOp) or not _uniform_value(select.rhs):
        return None
    loads = [op for op in block.walk() if isinstance(op, LoadOp) and op is not select.rhs.owner]
    if len(loads) != 1:
        return None
    load = loads[0]
    ivs = [loop.induction_var for loop in nest.spatial]
    if list(store.indices) != ivs or len(load.indices) != len(ivs):
        return None
    if select.lhs is not load.result:
        return None
    reads = [_read_offset(index, iv) for index, iv in zip(load.indices, ivs, strict=True)]
    if any(read is None or read[0] < 0 for read in reads):
        return None
    known = [read for read in reads if read is not None]
    source_type, padded_type = load.memref.type, store.memref.type
    if not isinstance(source_type, MemRefType) or not isinstance(padded_type, MemRefType):
        return None
    interior = _interior(select.cond, ivs, known, list(source_type.get_shape()),
                         list(padded_type.get_shape()))
    if interior is None:
        return None
    return load, store, select.rhs, [before for before, _ in known], interior


def _uniform_value(value: SSAValue) -> bool:
    """A constant, or a load at constant indices (a quantized input's zero point: an int8
    conv pads with it)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return True
    return isinstance(owner, LoadOp) and all(
        isinstance(index.owner, arith.ConstantOp) for index in owner.indices)


def _clone_uniform(value: SSAValue) -> list[Operation]:
    """Copies of the ops computing a `_uniform_value` (the last one's result is the value)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return [owner.clone()]
    assert isinstance(owner, LoadOp)
    ops: list[Operation] = [index.owner.clone() for index in owner.indices]  # type: ignore[union-attr]
    ops.append(LoadOp(owner.memref, [op.results[0] for op in ops]))
    return ops


def _nest(
    shape: list[int], axes: list[str], anchor: Operation,
    make: Callable[[list[SSAValue]], list[Operation]],
) -> ForOp:
    """A perfect nest of serial unit loops over `shape` around `make(ivs)`."""
    blocks = [Block(arg_types=[IndexType()]) for _ in shape]
    for block, axis in zip(blocks, axes, strict=True):
        block.args[0].name_hint = value_name(axis)
    ops = make([block.args[0] for block in blocks])
    loop: Operation | None = None
    for depth in reversed(range(len(shape))):
        inner = [loop] if loop is not None else ops
        blocks[depth].add_ops([*inner, YieldOp()])
        loop = ForOp(index_constant(0, anchor), index_constant(shape[depth], anchor),
                     index_constant(1, anchor), blocks[depth], axes[depth])
    assert isinstance(loop, ForOp)
    return loop


def border_boxes(
    shape: list[int], before: list[int], interior: list[int],
) -> list[tuple[list[int], list[int]]]:
    """The `(starts, extents)` of disjoint boxes, none empty, that cover `shape` less the
    interior box (`before` to `before + interior` on each axis): on each axis in turn, the
    slabs before and after the interior, over the interior of the axes before it and the
    whole of the axes after it."""
    boxes: list[tuple[list[int], list[int]]] = []
    for axis, size in enumerate(shape):
        low, high = before[axis], before[axis] + interior[axis]
        for start, stop in ((0, low), (high, size)):
            starts = [*before[:axis], start, *([0] * (len(shape) - axis - 1))]
            extents = [*interior[:axis], stop - start, *shape[axis + 1:]]
            if all(extent > 0 for extent in extents):
                boxes.append((starts, extents))
    return boxes


def _vectorize_innermost(root: ForOp, config: CpuConfig) -> None:
    """Vectorize each innermost loop of the nest that is long enough and legal to; unroll one
    too short to vectorize with its loop over rows (`_unroll_narrow`)."""
    for loop in [op for op in root.walk() if isinstance(op, ForOp)]:
        if any(isinstance(op, ForOp) for op in body_of(loop)):
            continue
        if (loop.trip_count() or 0) < config.min_vector_extent:
            _unroll_narrow(loop)
            continue
        try:
            vectorize(loop)
        except ScheduleError:
            pass


def _unroll_narrow(loop: ForOp) -> None:
    """Mark a slab's innermost loop, too short to vectorize (the left and right border columns
    of a padded plane, 1-3 wide), and the loop over its rows around it `unrolled` when the two
    run at most `MAX_UNROLLED_TRIP` iterations together: straight-line stores. Left serial,
    LLVM would unroll the short loop and vectorize the one over rows into scatters a row apart
    (`vpscatterqq`: 10% of a 5x5/2 depthwise conv on 672 x 14x14, its pad's side columns)."""
    rows = loop.parent_op()
    trip = loop.trip_count() or 0
    if not isinstance(rows, ForOp) or body_of(rows) != [loop] or trip < 1:
        return
    row_trip = rows.trip_count() or 0
    if row_trip < 1 or row_trip * trip > MAX_UNROLLED_TRIP:
        return
    for unrolled in (rows, loop):
        if unrolled.kind.data == "serial":
            unrolled.properties["kind"] = StringAttr("unrolled")


def schedule_pad(nest: Elementwise, config: CpuConfig) -> bool:
    """Split a pad nest into a fill and an interior copy, each vectorized and parallel;
    returns False, changing nothing, if the nest is not a pad of that form."""
    parts = _pad_parts(nest)
    if parts is None:
        return False
    load, store, pad_value, before, interior = parts
    root = nest.spatial[0]
    source, padded = load.memref, store.memref
    padded_type = padded.type
    assert isinstance(padded_type, MemRefType)
    axes = [loop.axis.data for loop in nest.spatial]
    value_owner = pad_value.owner
    value_reads = [value_owner.memref] if isinstance(value_owner, LoadOp) else []

    def shifted(ivs: list[SSAValue], offsets: list[int], body: list[Operation]) -> list[SSAValue]:
        """`ivs[d] + offsets[d]` each (the iv itself at offset 0), their adds appended to
        `body`."""
        indices: list[SSAValue] = []
        for iv, offset in zip(ivs, offsets, strict=True):
            if offset == 0:
                indices.append(iv)
                continue
            add = arith.AddiOp(iv, index_constant(offset, root))
            body.append(add)
            indices.append(add.result)
        return indices

    def fill(ivs: list[SSAValue], starts: list[int]) -> list[Operation]:
        value = _clone_uniform(pad_value)
        body: list[Operation] = [*value]
        body.append(StoreOp(value[-1].results[0], padded, shifted(ivs, starts, body)))
        return [BlockOp(f"{PAD_BLOCK}.fill", value_reads, [padded], body, axes)]

    def copy(ivs: list[SSAValue]) -> list[Operation]:
        element = LoadOp(source, ivs)
        body: list[Operation] = [element]
        body.append(StoreOp(element.result, padded, shifted(ivs, list(before), body)))
        return [BlockOp(PAD_BLOCK, [source], [padded], body, axes)]

    padded_shape = list(padded_type.get_shape())
    if 0 in padded_shape:  # an empty buffer (an input of batch 0): nothing to store
        root.detach()
        root.erase()
        return True
    shared = 0
    while (shared < len(before) - 1 and before[shared] == 0
           and interior[shared] == padded_shape[shared]):
        shared += 1

    def both(outer: list[SSAValue]) -> list[Operation]:
        inner_axes = axes[shared:]
        outer_starts = [0] * shared
        fill_nests = [
            _nest(extents, inner_axes, root,
                  lambda ivs, starts=starts: fill([*outer, *ivs], [*outer_starts, *starts]))
            for starts, extents in border_boxes(
                padded_shape[shared:], before[shared:], interior[shared:])
        ]
        copy_nest = _nest(interior[shared:], inner_axes, root,
                          lambda ivs: copy([*outer, *ivs]))
        return [*fill_nests, copy_nest]

    if shared and math.prod(interior[:shared]) >= 2:
        nests = [_nest(interior[:shared], axes[:shared], root, both)]
        parallel_roots = nests
    else:
        # No leading axis to split (an NHWC input of batch 1): each nest is a region of its
        # own, the interior copy in parallel over its rows; the border's thin slabs stay
        # serial (a region each would cost more than they do). The copy of batch-1 NHWC
        # inputs ran on one thread: 40% of an int8 depthwise conv's time at 112x112.
        nests = both([index_constant(0, root)] * shared)
        parallel_roots = nests if not shared else nests[-1:]
    parent = root.parent_block()
    assert parent is not None
    for nest_root in nests:
        parent.insert_op_before(nest_root, root)
    root.detach()
    root.erase()
    for nest_root in nests:
        _vectorize_innermost(nest_root, config)
    if config.parallel:
        mark_parallel(parallel_roots)
    return True
