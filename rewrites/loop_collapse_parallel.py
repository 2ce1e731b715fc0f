"""The pass `loop-collapse-parallel`: a serial loop of runtime extent whose body is one parallel
loop (a kernel's batch of runtime size around the parallel loop its schedule chose inside an
image) becomes one parallel loop over both.

Counterpart: MLIR's `scf-parallel-loop-collapsing` and `affine-loop-coalescing`, TVM's `fuse` of
the outer axes before `parallel`, ONNX Runtime's thread pool taking a batch and channels as one
range.

The schedules of runtime extents parallelize a loop inside an image (its channels' blocks, its
rows): the batch is a runtime size, most often one image. At a batch of n the serial batch loop
around it starts and joins n teams per kernel call, each with 1/n of the work (ShuffleNet-V2 at
batch 4: 380 teams a call, not 95). Collapsed, one team takes every image's iterations.

It runs after `loop-fuse-nests`, which fuses consecutive nests over the same batch (a Winograd
conv's pad, transform and products per image) by comparing their loops' bounds: a batch loop
whose body then holds several nests keeps its per-image order and is not collapsed.

A loop collapses when:
- it is serial, runs from 0 by 1 to a runtime value, and no loop around it is parallel;
- its body is one parallel loop with constant bounds, besides pure index arithmetic (moved into
  the collapsed loop; `fuse`);
- every block inside treats both axes alike (`fuse`'s check).

Loops of static extent are left alone: a static compile's IR does not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.schedule import ScheduleError, fuse
from dlc.rewrites.schedule.common import body_ops, constant_value, is_pure
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass


def _collapsible(outer: ForOp) -> ForOp | None:
    """The parallel loop `outer`'s body consists of, when `outer` may collapse with it (the
    module docs), else None."""
    if outer.kind.data != "serial" or outer.trip_count() is not None or \
            (constant_value(outer.lb), constant_value(outer.step)) != (0, 1):
        return None
    ops = body_ops(outer)
    loops = [op for op in ops if isinstance(op, ForOp)]
    if len(loops) != 1 or not all(op is loops[0] or is_pure(op) for op in ops):
        return None
    inner = loops[0]
    if inner.kind.data != "parallel" or inner.trip_count() is None:
        return None
    parent = outer.parent_op()
    while parent is not None:
        if isinstance(parent, ForOp) and parent.kind.data == "parallel":
            return None
        parent = parent.parent_op()
    return inner


def collapse_parallel(outer: ForOp) -> ForOp | None:
    """`outer` and the parallel loop of its body as one parallel loop (`fuse`), returned; None
    (nothing changed) where they do not collapse."""
    inner = _collapsible(outer)
    if inner is None:
        return None
    inner.properties["kind"] = StringAttr("serial")
    try:
        fused = fuse(outer, inner)
    except ScheduleError:
        inner.properties["kind"] = StringAttr("parallel")
        return None
    fused.properties["kind"] = StringAttr("parallel")
    return fused


@dataclass(frozen=True)
class LoopCollapseParallelPass(ModulePass):
    """Collapse each serial loop of runtime extent around a parallel loop into one parallel loop
    (module docs).

    Input invariant: scheduled loop-level functions (after `loop-fuse-nests`).
    Output IR: the same functions, such a pair of loops one parallel loop from 0 by 1 to the
    product of their trip counts (`arith.muli` before it), each induction variable recovered by
    division and remainder; everything else unchanged.

    Invariants: every iteration of the pair runs once, with the same induction variables
    (the results do not change); loops of static extent and batch loops holding more than one
    nest are left as they are; the output verifies.
    """

    name: ClassVar[str] = "loop-collapse-parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, ForOp)]:
            collapse_parallel(loop)
