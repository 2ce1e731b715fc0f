"""The `fuse` schedule primitive: merge a perfectly nested pair of loops into one loop.

Counterpart: TVM's `Schedule.fuse(*loops)`, MLIR's `coalesceLoops`.
"""

from __future__ import annotations

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.schedule.common import (
    IndexBuilder,
    ScheduleError,
    band_between,
    body_ops,
    constant_trip,
    constant_value,
    describe,
    index_constant,
    move_ops_into,
    nested_blocks,
    rename_axis,
    require_kind,
    value_name,
)
from xdsl.dialects.builtin import StringAttr


def fused_axis(outer: str, inner: str) -> str:
    """The axis name of the loop `fuse` makes: "i", "j" -> "i.j.fused"."""
    return f"{outer}.{inner}.fused"


def check_fuse(outer: ForOp, inner: ForOp) -> tuple[tuple[int, int | None, int, int | None],
                                                     tuple[int, int, int, int]]:
    """The bounds `(lb, ub, step, trip)` of both loops, after checking that `fuse(outer,
    inner)` applies: `inner`'s constant; `outer`'s constant, or from 0 by 1 to a runtime
    value defined outside it (a batch of runtime rows: its `ub` and `trip` None)."""
    if outer is inner:
        raise ScheduleError("cannot fuse: expected two distinct loops, found one", outer)
    band = band_between(outer, inner)
    if len(band) != 2:
        raise ScheduleError(
            f"cannot fuse: expected {describe(inner)} directly inside {describe(outer)}, "
            f"found {len(band) - 2} loop(s) between",
            inner,
        )
    inner_bounds = constant_trip(inner, "fuse")
    outer_bounds: tuple[int, int | None, int, int | None]
    if outer.constant_bounds() is None and \
            (constant_value(outer.lb), constant_value(outer.step)) == (0, 1):
        outer_bounds = (0, None, 1, None)
    else:
        outer_bounds = constant_trip(outer, "fuse")
    for loop in (outer, inner):
        require_kind(loop, ("serial",), "fuse")
    for block in nested_blocks(inner):
        kinds = [
            "spatial" if axis in (a.data for a in block.spatial_axes)
            else "reduction" if axis in (a.data for a in block.reduction_axes) else None
            for axis in (outer.axis.data, inner.axis.data)
        ]
        if kinds[0] != kinds[1]:
            raise ScheduleError(
                f"cannot fuse: expected both axes to have the same iteration kind in block "
                f'"{block.block_name.data}", found {kinds[0]} and {kinds[1]}',
                inner,
            )
    return outer_bounds, inner_bounds


def fuse(outer: ForOp, inner: ForOp) -> ForOp:
    """Fuses `inner` (directly and perfectly nested in `outer`) into `outer`; returns it.

    `inner` needs constant bounds, `outer` too or to run from 0 by 1 to a runtime value (a
    batch of runtime rows outside a static loop of channels: the fused loop's bound is then
    `arith.muli` of it and `n_inner`, before `outer`). The fused loop (the op of `outer`) runs
    over `[0, n_outer * n_inner)` step 1; its body recovers the two induction variables as
    `lb + (f / n_inner) * step` and `lb + (f % n_inner) * step` (`arith.divui`/`remui`, folded
    where trivial), then runs the index arithmetic of `outer`'s body and `inner`'s body. The
    axis is named "<outer>.<inner>.fused", in the loop and in the blocks' axis lists (both axes
    must have the same iteration kind in every block). Only serial loops fuse.
    """
    (lb0, _, step0, trip0), (lb1, _, step1, trip1) = check_fuse(outer, inner)
    outer_axis, inner_axis = outer.axis.data, inner.axis.data
    axis = fused_axis(outer_axis, inner_axis)
    outer_iv, inner_iv = outer.induction_var, inner.induction_var
    outer_uses = list(outer_iv.uses)
    moved = [op for op in body_ops(outer) if op is not inner] + body_ops(inner)
    for op in moved:
        op.detach()
    inner.detach()
    if trip0 is None:
        parent = outer.parent_block()
        assert parent is not None
        extent = IndexBuilder(outer, parent, outer).mul(outer.ub, trip1)
    else:
        extent = index_constant(trip0 * trip1, outer)
    outer.operands = (index_constant(0, outer), extent, index_constant(1, outer))
    outer.properties["axis"] = StringAttr(axis)
    outer_name, inner_name = outer_iv.name_hint, inner_iv.name_hint
    fused_name = fused_axis(outer_name, inner_name) if outer_name and inner_name else axis
    outer_iv.name_hint = value_name(fused_name)

    builder = IndexBuilder(outer, outer.body.block)
    outer_value = builder.add(builder.mul(builder.div(outer_iv, trip1), step0), lb0)
    inner_value = builder.add(builder.mul(builder.rem(outer_iv, trip1), step1), lb1)
    for value, name in ((outer_value, outer_name), (inner_value, inner_name)):
        if value is not outer_iv:
            value.name_hint = name
    for use in outer_uses:
        use.operation.operands[use.index] = outer_value
    inner_iv.replace_all_uses_with(inner_value)
    inner.erase()
    move_ops_into(moved, outer)
    rename_axis(outer, outer_axis, [axis])
    rename_axis(outer, inner_axis, [])
    return outer
