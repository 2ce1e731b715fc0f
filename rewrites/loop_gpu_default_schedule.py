"""The `loop-gpu-default-schedule` pass: schedules every loop nest for a GPU with the default
rules (TVM dlight's `ApplyDefaultSchedule` with the GPU rules).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.contracts import SCHEDULED_ATTR
from dlc.rewrites.gpu_schedule_rules import GpuScheduleConfig, schedule_function
from dlc.rewrites.pass_target import gpu_target_for
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class LoopGpuDefaultSchedulePass(ModulePass):
    """Bind every loop nest to GPU blocks and threads with the default GPU rules.

    *Input invariant*: loop-level IR (`convert-tensor-expr-to-loop`'s nests: spatial loops
    around blocks, or around an init block, reduction loops, an update block and fused
    epilogue blocks). Nests that already have a `bound` loop and functions marked
    `dlc.scheduled` are left as they are.

    *Output IR*: each top-level nest rewritten by the first rule of
    `rewrites.gpu_schedule_rules` that applies: `gemm` (shared-memory block tiles, register
    thread tiles, vectorized tile reads), `tree-reduction` (one block per output, a tree of
    threads through shared memory), `thread-per-output`/`elementwise` (a grid-stride loop of
    `blockIdx.x` x `threadIdx.x`), or `single` (one thread). Every nest then has a loop bound
    to a GPU axis, as `convert-loop-to-target-gpu` requires.

    *Invariants*: the loop IR keeps its serial semantics (the loop interpreter computes the same
    results before and after, up to floating-point reassociation of reductions); block names
    are kept; new blocks are named `<block>.<role>` (`matmul.load_a`, `matmul.mma`,
    `softmax_max.tree`, ...); tile sizes and thread counts come from the target description.

    Options:
        target: the GPU to schedule for, a target string (`cuda -arch=sm_90`, `opencl`);
            empty: the module's `dlc.target`, else `dlc.target.DEFAULT_GPU_TARGET` (sm_80).
        threads: threads per block of elementwise and reduction kernels (0: 256, capped by
            the target).
        pipeline_depth: the K tiles of an `mma-gemm` in flight (2: load tile k + 1 with
            `cp.async` while computing tile k; 3: two ahead; 1: no pipeline, copies through
            registers).
    """

    name: ClassVar[str] = "loop-gpu-default-schedule"

    target: str = ""
    threads: int = 0
    pipeline_depth: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = gpu_target_for(self.name, self.target, op)
        if self.pipeline_depth not in (1, 2, 3):
            raise PassFailedException(
                f"'{self.name}' expected a pipeline_depth of 1, 2 or 3, found "
                f"{self.pipeline_depth}")
        config = dataclasses.replace(GpuScheduleConfig.for_target(target, self.threads),
                                     pipeline_depth=self.pipeline_depth)
        for function in list(op.ops):
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            if SCHEDULED_ATTR in function.attributes:
                continue
            schedule_function(function, config)
