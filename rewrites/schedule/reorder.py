"""The `reorder` schedule primitive: permute the loops of a perfectly nested band.

Counterpart: TVM's `Schedule.reorder(*loops)`, MLIR's `permuteLoops`.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.schedule.common import Renest, ScheduleError, chain_band


def plan_reorder(loops: Sequence[ForOp]) -> Renest:
    """The checked re-nesting `reorder(loops)` performs; raises a ScheduleError if illegal."""
    if len(loops) < 2:
        raise ScheduleError(
            f"cannot reorder: expected at least two loops, found {len(loops)}",
            loops[0] if loops else None,
        )
    band = chain_band(loops)
    positions = sorted(band.index(loop) for loop in loops)
    order = list(band)
    for position, loop in zip(positions, loops, strict=True):
        order[position] = loop
    return Renest(band, order)


def reorder(loops: Sequence[ForOp]) -> None:
    """Re-nests `loops` in the given order, outermost first.

    The loops must lie on one perfectly nested band (each body between them holds only pure
    index arithmetic and the next loop); loops of that band not named keep their positions, and
    the named ones take the positions the named loops occupied, in the given order (TVM's rule).
    The loops are moved, not rebuilt. Index arithmetic in the band's bodies moves to the
    outermost body where its operands are defined. Fails if a loop's bounds depend on an
    induction variable of a loop that would no longer enclose it (e.g. the guarded inner loop
    of a non-divisible split moved above its outer loop).
    """
    plan_reorder(loops).apply()
