"""The `target-gpu-map-bound-loops` pass: the loops of a kernel bound to GPU axes -> thread and
block coordinates (SIMT code: every thread runs the kernel body once).

Counterpart: MLIR's `convert-parallel-loops-to-gpu` (an `scf.parallel` mapped to GPU ids becomes
`gpu.thread_id`/`gpu.block_id` arithmetic with `scf.if` guards), TVM's thread binding lowered in
`split_host_device` and codegen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.loop.ops import ForOp, YieldOp
from dlc.dialects.target_gpu.ops import DIMENSIONS, BlockIdOp, KernelOp, ThreadIdOp
from dlc.rewrites.gpu_common import (
    LaunchDims,
    accessed_buffers,
    bound_axis,
    bound_extent,
    bound_loops,
    is_thread_loop,
    kernel_where,
    kernels_of,
    launch_dims,
)
from dlc.rewrites.ir_builder import IRBuilder, wrap_in_bound_loops
from dlc.rewrites.schedule.common import constant_value
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator


@dataclass(frozen=True)
class TargetGpuMapBoundLoopsPass(ModulePass):
    """Map the bound loops of every kernel onto the thread and block coordinates.

    *Input invariant*: `target_gpu.kernel`s whose bound loops are those of
    `convert-loop-to-target-gpu`'s output (constant lower bounds and steps, constant upper
    bounds or a `minui`/`minsi` with a constant), launched with, per axis, the largest trip
    count of the loops bound to it; barriers where threads communicate
    (`target-gpu-insert-barriers`).

    *Output IR*: a loop bound to `blockIdx.<d>`/`threadIdx.<d>` becomes `lb + id * step` with
    `id` a `target_gpu.block_id`/`thread_id "<d>"` (one per dimension, at the kernel's entry),
    its body in its place; a loop with fewer iterations than the launch has threads (or blocks)
    along its axis, or with a dynamic upper bound, is guarded by `scf.if iv < ub`. Statements
    outside every `threadIdx` loop run once per block in the loop IR but once per thread on
    the GPU: those that store to shared or global memory first move into trip-1 `threadIdx`
    loops (the thread at 0 of each dimension with more than one thread runs them); pure ones
    are recomputed by every thread.

    *Invariants*: no `loop.for` of kind `bound` remains in kernels; each (block, thread) pair
    runs one iteration of the bound loops, which computes what the loop IR computed serially.

    Options: none.
    """

    name: ClassVar[str] = "target-gpu-map-bound-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels_of(op):
            BoundLoopMapper(kernel, launch_dims(bound_loops(kernel), kernel_where(kernel))).run()


@dataclass
class BoundLoopMapper:
    """Maps the bound loops of one kernel, with the index constants and coordinates it needs
    kept at the kernel's entry."""

    kernel: KernelOp
    dims: LaunchDims
    _constants: dict[int, SSAValue] = field(default_factory=dict)
    _coordinates: dict[tuple[str, str], SSAValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for op in self.entry.ops:
            value = constant_value(op.results[0]) if len(op.results) == 1 else None
            if value is not None and isinstance(op.results[0].type, IndexType):
                self._constants.setdefault(value, op.results[0])

    @property
    def entry(self) -> Block:
        return self.kernel.body.block

    def run(self) -> None:
        if any(size > 1 for size in self.dims["thread"]):
            self._wrap_block_level_stores(self.entry)
        for loop in [op for op in self.entry.walk() if isinstance(op, ForOp)]:
            if loop.kind.data == "bound":
                self._map(loop)

    def index_constant(self, value: int) -> SSAValue:
        """An `index` constant at the kernel's entry."""
        if value not in self._constants:
            first = self.entry.first_op
            assert first is not None
            self._constants[value] = IRBuilder.before(first).const(value)
        return self._constants[value]

    def coordinate(self, kind: str, dimension: str) -> SSAValue:
        """`target_gpu.thread_id`/`block_id` of one dimension, created once at the entry
        (after its constants and the coordinates made before)."""
        key = (kind, dimension)
        if key not in self._coordinates:
            op = ThreadIdOp(dimension) if kind == "thread" else BlockIdOp(dimension)
            anchor = next(o for o in self.entry.ops
                          if not isinstance(o, arith.ConstantOp | ThreadIdOp | BlockIdOp))
            name = f"{'t' if kind == 'thread' else 'b'}id_{dimension}"
            self._coordinates[key] = IRBuilder.before(anchor).value(op, name)
        return self._coordinates[key]

    def _wrap_block_level_stores(self, block: Block) -> None:
        """Wrap the block-level statements that store to shared or global memory in trip-1
        `threadIdx` loops: they run on thread 0 only, as they run once per block in the IR."""
        axes = [(f"single.{dimension}", f"threadIdx.{dimension}")
                for dimension, size in zip(DIMENSIONS, self.dims["thread"], strict=True)
                if size > 1]
        for op in list(block.ops):
            if is_thread_loop(op) or op.has_trait(IsTerminator):
                continue
            if any(is_thread_loop(nested) for nested in op.walk()):
                for region in op.regions:
                    for inner in region.blocks:
                        self._wrap_block_level_stores(inner)
                continue
            if accessed_buffers(op)[1]:
                wrap_in_bound_loops([op], axes, self.index_constant(0), self.index_constant(1))

    def _map(self, loop: ForOp) -> None:
        kind, dimension = bound_axis(loop)
        extent = bound_extent(loop)
        builder = IRBuilder.before(loop, constants=self.index_constant)
        iv = builder.add(builder.mul(self.coordinate(kind, dimension), extent.step), extent.lb)
        if extent.step != 1 or extent.lb != 0:
            iv.name_hint = loop.induction_var.name_hint
        loop.induction_var.replace_all_uses_with(iv)
        body = [op for op in loop.body.block.ops if not isinstance(op, YieldOp)]
        for op in body:
            op.detach()
        if extent.exact and extent.extent == self.dims[kind][DIMENSIONS.index(dimension)]:
            builder.insert(body)
        else:
            condition = builder.value(arith.CmpiOp(iv, loop.ub, "ult"))
            builder.insert(scf.IfOp(condition, [], Region(Block([*body, scf.YieldOp()]))))
        Rewriter.erase_op(loop)
