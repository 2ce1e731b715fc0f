"""The `split` schedule primitive: one loop into a nest of loops (TVM's `sch.split`).

Counterpart: TVM's `Schedule.split(loop, factors)`, MLIR's `affine` tiling of a single loop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.schedule.common import (
    IndexBuilder,
    ScheduleError,
    body_ops,
    constant_value,
    index_constant,
    move_ops_into,
    new_loop,
    rename_axis,
    require_kind,
    value_name,
)
from xdsl.dialects.arith import MinUIOp, RemUIOp, SubiOp
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue


def split_axes(axis: str, parts: int) -> list[str]:
    """The axis names of the loops a split makes: "k" -> "k.0", "k.1", ..."""
    return [f"{axis}.{part}" for part in range(parts)]


def check_split(loop: ForOp, factors: Sequence[int]) -> int:
    """The loop's constant step, after checking that `split(loop, factors)` applies."""
    if not factors:
        raise ScheduleError("cannot split: expected at least one factor, found none", loop)
    for factor in factors:
        if factor <= 0:
            raise ScheduleError(
                f"cannot split: expected positive factors, found {factor}", loop
            )
    require_kind(loop, ("serial",), "split")
    step = constant_value(loop.step)
    if step is None or step <= 0:
        raise ScheduleError(
            "cannot split: expected a positive constant step, found one that is not", loop
        )
    return step


def split(loop: ForOp, factors: Sequence[int], exact: bool = False) -> list[ForOp]:
    """Splits `loop` into `len(factors) + 1` nested loops; returns them outermost first.

    With `loop` over `[lb, ub)` step `s` and factors `f1..fn` (the extents of the inner loops),
    the outer loop keeps the op (and `lb`, `ub`) with step `s * f1 * ... * fn`; inner loop `m`
    runs over `[0, s * fm * ... * fn)` with step `s * f(m+1) * ... * fn`, and the original
    induction variable becomes the sum of all of them (`arith.addi`s at the top of the
    innermost body). When the trip count is not a known multiple of the product of the
    factors, each inner loop's upper bound is guarded by `arith.minui(extent, ub - partial
    sum)`, so the last outer iteration runs a partial tile (no separate tail loop). Axes are
    named "<axis>.0" (outermost) to "<axis>.<n>", in the loops and in the blocks' axis lists.
    Only serial loops split; the outer loop keeps annotations. `exact`: the caller knows the
    trip count to be a multiple of the product (a runtime one, `split_peeled`), so that no
    inner bound is guarded.
    """
    step = check_split(loop, factors)
    trip = loop.trip_count()
    product = math.prod(factors)
    guarded = not exact and (trip is None or trip % product != 0)
    axis = loop.axis.data
    axes = split_axes(axis, len(factors) + 1)
    iv = loop.induction_var
    uses = list(iv.uses)
    original_ops = body_ops(loop)

    loop.operands[2] = index_constant(step * product, loop)
    loop.properties["axis"] = StringAttr(axes[0])
    name = iv.name_hint
    names = split_axes(name, len(axes)) if name is not None else axes
    iv.name_hint = value_name(names[0])

    loops = [loop]
    partial: SSAValue = iv
    zero = index_constant(0, loop)
    for position, factor in enumerate(factors, start=1):
        inner_step = step * math.prod(factors[position:])
        extent = index_constant(inner_step * factor, loop)
        parent = loops[-1]
        ub = extent
        if guarded:
            block = parent.body.block
            builder = IndexBuilder(loop, block)
            if position > 1:
                partial = builder.add(partial, parent.induction_var)
            prefix = names[position]
            remaining = builder.insert(SubiOp(loop.ub, partial), value_name(f"{prefix}.rem"))
            ub = builder.insert(MinUIOp(extent, remaining), value_name(f"{prefix}.ub"))
        inner = new_loop(
            zero, ub, index_constant(inner_step, loop), axes[position], name=names[position]
        )
        _append(parent, inner)
        loops.append(inner)

    innermost = loops[-1]
    move_ops_into(original_ops, innermost)
    first = innermost.body.block.first_op
    builder = IndexBuilder(loop, innermost.body.block, first)
    index: SSAValue = partial if guarded else iv
    for inner in loops[(len(loops) - 1 if guarded else 1):]:
        index = builder.add(index, inner.induction_var)
    if isinstance(index.owner, Operation):
        index.name_hint = name
    for use in uses:
        use.operation.operands[use.index] = index
    rename_axis(loop, axis, axes)
    return loops


def _append(parent: ForOp, op: ForOp) -> None:
    block = parent.body.block
    terminator = block.last_op
    assert terminator is not None
    block.insert_op_before(op, terminator)



def split_peeled(loop: ForOp, factor: int) -> tuple[ForOp, ForOp, ForOp]:
    """Splits `loop` over `[lb, ub)` step 1 (`ub`, maybe `lb`, runtime values) into whole tiles
    of `factor` iterations and the iterations left: returns (outer, inner, rest).

        loop.for %i.0 = lb to ub - (ub - lb) % factor step factor {          // outer
          loop.for %i.1 = 0 to factor step 1 { <body at %i.0 + %i.1> }       // inner
        }
        loop.for %i = ub - (ub - lb) % factor to ub step 1 { <body at %i> }  // rest

    Counterpart: TVM's loop partitioning of a split's tail, MLIR's `peelForLoop`. The inner
    loop has constant bounds (for the vectorizer); the rest, a copy of the body, runs fewer
    than `factor` iterations. The iterations run in their original order.
    """
    check_split(loop, [factor])
    if constant_value(loop.step) != 1:
        raise ScheduleError("cannot peel: expected a loop with step 1", loop)
    block = loop.parent_block()
    assert block is not None
    builder = IndexBuilder(loop, block, loop)
    ub = loop.ub
    count = ub if constant_value(loop.lb) == 0 else builder.insert(SubiOp(ub, loop.lb))
    rest_count = builder.insert(RemUIOp(count, index_constant(factor, loop)),
                                value_name(f"{loop.axis.data}.rest"))
    whole = builder.insert(SubiOp(ub, rest_count), value_name(f"{loop.axis.data}.whole"))
    rest = loop.clone()
    rest.operands[0] = whole
    block.insert_op_after(rest, loop)
    loop.operands[1] = whole
    outer, inner = split(loop, [factor], exact=True)
    return outer, inner, rest
