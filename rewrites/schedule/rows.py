"""The `block_rows` schedule primitive: a loop over a runtime number of rows, as blocks of a
static number of rows and a loop over the rows left.

Counterpart: TVM's handling of a symbolic extent in its default schedules (split by a constant
factor, the tail guarded) and IREE's peeling of dynamic dims (a main loop of full tiles, a
remainder loop), with the tile's buffers taken as views so that each part is a nest of static
shape.

A nest whose outermost loop runs over `[0, n)` rows (`n` a runtime value: a dim passed beside
the pointers) and whose loads and stores use that loop's induction variable only as the
leading index of a buffer is rewritten as

    loop.for %o = 0 to n - n % 8 step 8 axis "<i>.rows" {       // whole blocks of 8
      %xv = loop.rows %x[%o] : memref<?x..> -> memref<8x..>     // one per row buffer
      <the nest over [0, 8), on the views>
    }
    loop.for %r = n - n % 8 to n - n % 4 step 4 axis "<i>.rest4" {  // 4 of the rows left
      %xv = loop.rows %x[%r] : memref<?x..> -> memref<4x..>
      <the nest over [0, 4), on the views>
    }
    ... (one loop per block size given, down to single rows)

The iterations run in the same order as before (row after row), so the rewrite holds for any
nest of that form; each inner nest has static extents, for the default schedules to tile and
vectorize as they do a nest of static shape.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from dlc.dialects.loop.ops import BlockOp, ForOp, LoadOp, PrefetchOp, RowsOp, StoreOp
from dlc.rewrites.schedule.common import ScheduleError, constant_value, index_constant
from xdsl.dialects.arith import AddiOp, CmpiOp, RemUIOp, SelectOp, SubiOp
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Block, Operation, SSAValue

ROWS_AXIS_SUFFIX = ".rows"
"""The axis of the loop over whole blocks of the largest size: `<axis>.rows`."""

REST_AXIS_SUFFIX = ".rest"
"""The axis of a loop over rows left by a larger block: `<axis>.rest<size>`."""

_ACCESSES = (LoadOp, StoreOp, PrefetchOp)


def row_buffers(loop: ForOp) -> list[SSAValue]:
    """The buffers the nest of `loop` indexes by its induction variable, in order of first
    access, after checking that `block_rows` applies (a `ScheduleError` says why not)."""
    if constant_value(loop.lb) != 0 or constant_value(loop.step) != 1:
        raise ScheduleError("cannot block rows: expected a loop from 0 with step 1", loop)
    if loop.kind.data != "serial":
        raise ScheduleError(
            f"cannot block rows: expected a serial loop, found kind {loop.kind.data}", loop)
    iv = loop.body.block.args[0]
    buffers: list[SSAValue] = []
    for use in iv.uses:
        access = use.operation
        if not isinstance(access, _ACCESSES) or use.index != _first_index(access):
            raise ScheduleError(
                f"cannot block rows: expected the induction variable only as the leading index "
                f"of loads and stores, found a use by '{access.name}'", loop)
        if access.memref not in buffers:
            buffers.append(access.memref)
    for buffer in buffers:
        if not isinstance(buffer.type, MemRefType) or not _defined_outside(buffer, loop):
            raise ScheduleError(
                f"cannot block rows: expected row buffers defined outside the nest, found "
                f"{buffer.type}", loop)
        for use in buffer.uses:
            user = use.operation
            if not loop.is_ancestor(user) or isinstance(user, BlockOp):
                continue
            if not isinstance(user, _ACCESSES) or user.indices[0] is not iv:
                raise ScheduleError(
                    f"cannot block rows: expected every access of a row buffer to lead with "
                    f"the induction variable, found '{user.name}' of {buffer.type}", loop)
    if any(use.operation is not loop and loop.is_ancestor(use.operation) for use in loop.ub.uses):
        raise ScheduleError("cannot block rows: the number of rows is used inside the nest", loop)
    return buffers


def _first_index(access: Operation) -> int:
    """The operand position of an access's first index."""
    assert isinstance(access, _ACCESSES)
    return len(access.operands) - len(access.indices)


def _defined_outside(value: SSAValue, loop: ForOp) -> bool:
    owner = value.owner
    holder = owner.parent_op() if isinstance(owner, Block) else owner
    return holder is None or not loop.is_ancestor(holder)


def block_rows(loop: ForOp, sizes: Sequence[int], exact: bool = False) -> list[ForOp]:
    """Rewrites the nest of `loop` (see the module docstring) into one loop per block size of
    `sizes` (descending, the last 1), returned in order; `loop` is erased. The first loop runs
    over whole blocks of `sizes[0]` rows. Then, by default (each size a multiple of the next),
    each next loop runs over the rows its predecessor left, in blocks of its size (none or one
    for powers of two); with `exact` (every size below the first), the one whose size is the
    number of rows left runs once, on all of them, and the others not at all (a remainder of
    r rows is one nest of r rows: for a GEMM, one pass over its weights)."""
    check_block_sizes(loop, sizes, exact)
    buffers = row_buffers(loop)
    parent = loop.parent_block()
    assert parent is not None
    count = loop.ub
    axis = loop.axis.data
    start = index_constant(0, loop)
    parts: list[ForOp] = []
    ops: list[Operation] = []
    rest: SSAValue | None = None  # the rows left after the whole blocks (exact)
    for position, size in enumerate(sizes):
        step = index_constant(size, loop)
        suffix = ROWS_AXIS_SUFFIX if position == 0 else f"{REST_AXIS_SUFFIX}{size}"
        if size == 1 and not (exact and position):
            end = count
        elif position == 0 or not exact:
            left = RemUIOp(count, step)
            whole = SubiOp(count, left)
            whole.result.name_hint = f"{axis}_whole{size}"
            ops += [left, whole]
            end = whole.result
        else:  # [start, start + size) when `size` rows are left, else empty
            if rest is None:
                left = SubiOp(count, start)
                left.result.name_hint = f"{axis}_rest"
                ops.append(left)
                rest = left.result
            matches = CmpiOp(rest, step, "eq")
            extent = SelectOp(matches, step, index_constant(0, loop))
            stop = AddiOp(start, extent)
            ops += [matches, extent, stop]
            end = stop.result
        parts.append(_part(loop, buffers, start, end, step, size, axis + suffix))
        if not exact or position == 0:
            start = end
    parent.insert_ops_before([*ops, *parts], loop)
    loop.detach()
    loop.erase()
    return parts


def check_block_sizes(loop: ForOp, sizes: Sequence[int], exact: bool) -> None:
    """A `ScheduleError` unless `sizes` are block sizes `block_rows` takes."""
    if exact:
        valid = bool(sizes) and list(sizes[1:]) == list(range(sizes[0] - 1, 0, -1))
        expected = "a block size, then every size below it in descending order"
    else:
        valid = bool(sizes) and sizes[-1] == 1 and all(
            small > 0 and large != small and not large % small
            for large, small in itertools.pairwise(sizes))
        expected = "block sizes in descending order, each a multiple of the next, ending with 1"
    if not valid:
        raise ScheduleError(f"cannot block rows: expected {expected}, found {list(sizes)}", loop)


def _part(loop: ForOp, buffers: list[SSAValue], lb: SSAValue, ub: SSAValue, step: SSAValue,
          rows: int, axis: str) -> ForOp:
    """A loop over `[lb, ub)` by `step` whose body takes `rows`-row views of `buffers` at its
    induction variable and runs a copy of `loop` over `[0, rows)` on them."""
    body = Block(arg_types=[IndexType()])
    first = body.args[0]
    first.name_hint = axis.replace(".", "_")
    views = [RowsOp(buffer, first, rows) for buffer in buffers]
    for view, buffer in zip(views, buffers, strict=True):
        view.result.name_hint = f"{buffer.name_hint or 'rows'}_rows"
    mapping: dict[SSAValue, SSAValue] = {loop.ub: index_constant(rows, loop)}
    mapping.update((buffer, view.result) for buffer, view in zip(buffers, views, strict=True))
    body.add_ops([*views, loop.clone(value_mapper=mapping)])
    return ForOp(lb, ub, step, body, axis)


def inner_nest(part: ForOp) -> ForOp:
    """The nest of static rows inside a loop `block_rows` made."""
    nest = [op for op in part.body.block.ops if isinstance(op, ForOp)]
    assert len(nest) == 1, "block_rows puts one nest in each part"
    return nest[0]
