"""The `target-gpu-unroll` pass: `unrolled` loops of kernels with a small constant trip count are
replicated in the IR (GPU C compilers and NVPTX then keep their local buffers in registers).

Counterpart: TVM's `tir.transform.UnrollLoop` on device code (explicit unrolling, as the OpenCL C
printer has no unroll directive LLVM would honour everywhere); the copies are made by the
`unroll` schedule primitive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.gpu_common import kernels_of
from dlc.rewrites.schedule import ScheduleError, unroll
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class TargetGpuUnrollPass(ModulePass):
    """Unroll the `unrolled` loops of kernels whose trip count is a small constant.

    *Input invariant*: `target_gpu.kernel`s (loops of kind `unrolled` anywhere in them).

    *Output IR*: each `unrolled` loop with constant bounds and at most `max_trip_count`
    iterations is replaced by that many copies of its body, in order, the induction variable
    of each copy an `arith.constant` (outermost loops first: the copies of the loops inside are
    unrolled in turn); other `unrolled` loops stay loops. Local buffers indexed by those
    induction variables then have constant indices.

    *Invariants*: results are unchanged (the copies run in the loop's order); host functions
    are not touched.

    Options:
        max_trip_count: the largest trip count unrolled.
    """

    name: ClassVar[str] = "target-gpu-unroll"

    max_trip_count: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels_of(op):
            kept: set[ForOp] = set()
            while True:  # outermost first; the copies of inner loops are unrolled in later rounds
                loop = next((o for o in kernel.walk() if isinstance(o, ForOp)
                             and o.kind.data == "unrolled" and o not in kept), None)
                if loop is None:
                    break
                if not self.unroll_constant_loop(loop):
                    kept.add(loop)

    def unroll_constant_loop(self, loop: ForOp) -> bool:
        """Replicate the body of an `unrolled` loop with constant bounds (at most
        `max_trip_count` iterations); returns whether it did."""
        trip = loop.trip_count()
        if trip is None or trip > self.max_trip_count:
            return False
        try:
            unroll(loop)
        except ScheduleError:
            return False
        return True
