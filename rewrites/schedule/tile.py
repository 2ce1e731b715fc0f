"""The `tile` schedule primitive: split two nested loops and interleave the pieces.

Counterpart: TVM's `split` + `reorder` idiom for 2-D tiling, MLIR's `tileLoops`.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.schedule.common import Renest, ScheduleError, band_between, depends_on, describe
from dlc.rewrites.schedule.split import check_split, split


def tile(outer: ForOp, inner: ForOp, factors: Sequence[int]) -> list[ForOp]:
    """Tiles the band `outer`..`inner` by `factors` (the tile extents, one per loop).

    Equivalent to `split(outer, [f0])`, `split(inner, [f1])`, then `reorder` to
    `outer.0, inner.0, <loops between>, outer.1, inner.1`; returns those four loops. `inner`
    must be perfectly nested in `outer` (not necessarily directly), and the bounds of `inner`
    and of the loops between must not depend on the band's induction variables (so that the
    reorder is legal); all checks happen before anything changes.
    """
    if len(factors) != 2:
        raise ScheduleError(
            f"cannot tile: expected 2 tile sizes, found {len(factors)}", outer
        )
    if outer is inner:
        raise ScheduleError("cannot tile: expected two distinct loops, found one", outer)
    band = band_between(outer, inner)
    check_split(outer, factors[:1])
    check_split(inner, factors[1:])
    ivs = {loop.induction_var for loop in band}
    for loop in band[1:]:
        if any(depends_on(bound, ivs) for bound in loop.operands):
            raise ScheduleError(
                f"cannot tile: expected the bounds of {describe(loop)} not to depend on the "
                "band's induction variables, found they do",
                loop,
            )
    middle = band[1:-1]
    outer_0, outer_1 = split(outer, factors[:1])
    inner_0, inner_1 = split(inner, factors[1:])
    new_band = band_between(outer_0, inner_1)
    Renest(new_band, [outer_0, inner_0, *middle, outer_1, inner_1]).apply()
    return [outer_0, inner_0, outer_1, inner_1]

