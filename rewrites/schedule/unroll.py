"""The `unroll` schedule primitive: replicate a loop's body in the IR (fully or by a factor).

Counterpart: TVM's `Schedule.unroll` (which only annotates; dlc unrolls here, in the IR) and
MLIR's `loopUnrollFull` / `loopUnrollByFactor`.
"""

from __future__ import annotations

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.schedule.common import (
    IndexBuilder,
    ScheduleError,
    body_ops,
    constant_trip,
    index_constant,
    rename_axis,
    require_kind,
)
from xdsl.ir import SSAValue

MAX_FULL_UNROLL = 1024
"""The largest trip count `unroll` replicates fully; beyond it the IR grows too much."""


def check_unroll(loop: ForOp, factor: int | None) -> tuple[int, int, int, int]:
    """The loop's constant bounds, after checking that `unroll(loop, factor)` applies."""
    require_kind(loop, ("serial", "unrolled"), "unroll")
    bounds = constant_trip(loop, "unroll")
    trip = bounds[3]
    if factor is None:
        if trip > MAX_FULL_UNROLL:
            raise ScheduleError(
                f"cannot unroll: expected a trip count of at most {MAX_FULL_UNROLL} to unroll "
                f"fully, found {trip}",
                loop,
            )
        return bounds
    if factor <= 0:
        raise ScheduleError(f"cannot unroll: expected a positive factor, found {factor}", loop)
    if trip % factor:
        raise ScheduleError(
            f"cannot unroll: expected the factor {factor} to divide the trip count {trip} "
            "(split the loop first)",
            loop,
        )
    return bounds


def unroll(loop: ForOp, factor: int | None = None) -> ForOp | None:
    """Unrolls `loop`; returns the remaining loop (partial unroll) or None (full unroll).

    Full unroll (no factor): the loop is replaced by `trip count` copies of its body, in order,
    each with the induction variable replaced by its `arith.constant` value; the loop's axis is
    removed from the copied blocks' axis lists. Partial unroll by `factor` (dividing the trip
    count): the loop keeps running with step `step * factor`, its body followed by `factor - 1`
    copies using `iv + k * step`; the first copy is the original body, so handles to ops inside
    it stay valid. Needs constant bounds.
    """
    lb, _, step, trip = check_unroll(loop, factor)
    if factor is None:
        _unroll_fully(loop, lb, step, trip)
        return None
    if factor == 1:
        return loop
    iv = loop.induction_var
    original = body_ops(loop)
    loop.operands[2] = index_constant(step * factor, loop)
    block = loop.body.block
    for copy in range(1, factor):
        builder = IndexBuilder(loop, block)
        mapper: dict[SSAValue, SSAValue] = {iv: builder.add(iv, copy * step)}
        for op in original:
            builder.insert_op(op.clone(value_mapper=mapper))
    return loop


def _unroll_fully(loop: ForOp, lb: int, step: int, trip: int) -> None:
    parent = loop.parent_block()
    assert parent is not None
    iv = loop.induction_var
    original = body_ops(loop)
    axis = loop.axis.data
    builder = IndexBuilder(loop, parent, loop)
    for iteration in range(trip):
        mapper: dict[SSAValue, SSAValue] = {iv: index_constant(lb + iteration * step, loop)}
        for op in original:
            clone = op.clone(value_mapper=mapper)
            builder.insert_op(clone)
            rename_axis(clone, axis, [])
    loop.detach()
    loop.erase()
