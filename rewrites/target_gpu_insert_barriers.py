"""The `target-gpu-insert-barriers` pass: a `target_gpu.barrier` wherever the threads of a block
communicate through shared or global memory.

Counterpart: TVM's `thread_storage_sync` (`tir.transform.ThreadSync("shared")`), which plans the
`__syncthreads()` of a kernel from the accesses of the statements between thread bindings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.contracts import GLOBAL_FENCE_ATTR
from dlc.dialects.loop.ops import AsyncCopyOp, BlockOp, ForOp, LoadOp, MatrixLoadOp, StoreOp
from dlc.dialects.target_gpu.ops import BarrierOp
from dlc.rewrites.gpu_common import (
    accessed_buffers,
    bound_loops,
    buffer_scope,
    is_thread_loop,
    kernel_where,
    kernels_of,
    launch_dims,
)
from dlc.rewrites.ir_builder import IRBuilder
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class TargetGpuInsertBarriersPass(ModulePass):
    """Insert the barriers that order the threads of a block around shared and global memory.

    *Input invariant*: `target_gpu.kernel`s whose bodies still hold their bound loops (the
    output of `convert-loop-to-target-gpu`): the statements of a kernel body outside every
    `threadIdx` loop run once per block, those inside one run once per thread.

    *Output IR*: in kernels with more than one thread per block, a `target_gpu.barrier` before
    each block-level statement that reads a shared or global buffer another statement wrote,
    or writes one another statement read or wrote, since the last barrier (read after write,
    write after read or write), including across the iterations of the serial loops around
    them; it carries `dlc.global_fence` when it orders a global buffer. A statement meeting
    its own earlier accesses (the next iteration of a loop around it) needs a barrier only in
    shared memory: in global memory each thread of a statement keeps to its own elements.

    *Invariants*: nothing else changes (a barrier is a no-op in the loop IR's serial
    semantics). Statements inside one `threadIdx` loop are assumed to touch shared memory only
    where that thread owns it (no barrier can go inside them), as in TVM.

    Options: none.
    """

    name: ClassVar[str] = "target-gpu-insert-barriers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels_of(op):
            dims = launch_dims(bound_loops(kernel), kernel_where(kernel))
            if any(size > 1 for size in dims["thread"]):
                insert_barriers(kernel.body.block)


@dataclass
class SyncState:
    """The statements that wrote and read each buffer since the last barrier."""

    writes: dict[SSAValue, set[Operation]] = field(default_factory=dict)
    reads: dict[SSAValue, set[Operation]] = field(default_factory=dict)

    def copy(self) -> SyncState:
        return SyncState(
            {k: set(v) for k, v in self.writes.items()}, {k: set(v) for k, v in self.reads.items()}
        )

    def join(self, other: SyncState) -> SyncState:
        joined = self.copy()
        for mine, theirs in ((joined.writes, other.writes), (joined.reads, other.reads)):
            for buffer, statements in theirs.items():
                mine.setdefault(buffer, set()).update(statements)
        return joined

    def same(self, other: SyncState) -> bool:
        return self.writes == other.writes and self.reads == other.reads

    def conflicts(
        self, op: Operation, reads: set[SSAValue], writes: set[SSAValue]
    ) -> set[SSAValue]:
        """The buffers `op` must not touch before a barrier: it reads what another statement
        wrote, or writes what another statement read or wrote. A statement meeting its own
        earlier accesses (the next iteration of a loop around it) conflicts only in shared
        memory: in global memory each thread of a statement keeps to its own elements."""

        def other(buffer: SSAValue, statements: set[Operation] | None) -> bool:
            if not statements:
                return False
            return bool(statements - {op}) or buffer_scope(buffer) == "shared"

        found = {b for b in reads if other(b, self.writes.get(b))}
        found |= {b for b in writes if other(b, self.writes.get(b)) or other(b, self.reads.get(b))}
        return found

    def record(self, op: Operation, reads: set[SSAValue], writes: set[SSAValue]) -> None:
        for buffer in reads:
            self.reads.setdefault(buffer, set()).add(op)
        for buffer in writes:
            self.writes.setdefault(buffer, set()).add(op)


def insert_barriers(block: Block) -> None:
    """Insert `target_gpu.barrier`s between the block-level statements of a kernel body that
    communicate through shared or global memory (see `SyncState.conflicts`)."""
    _sync_block(block, SyncState())


def _is_compound(op: Operation) -> bool:
    """Statements at block level whose body the scan enters: loops that are not threadIdx loops
    (their bounds are uniform across the block) and blocks."""
    return (isinstance(op, ForOp) and not is_thread_loop(op)) or isinstance(op, BlockOp)


def _sync_block(block: Block, state: SyncState) -> SyncState:
    for op in list(block.ops):
        if isinstance(op, BarrierOp):
            state = SyncState()
            continue
        if not any(isinstance(n, LoadOp | MatrixLoadOp | StoreOp | AsyncCopyOp)
                   for n in op.walk()):
            continue
        if _is_compound(op) and any(is_thread_loop(n) for n in op.walk()):
            state = _sync_compound(op, state)
            continue
        reads, writes = accessed_buffers(op)
        conflicts = state.conflicts(op, reads, writes)
        if conflicts:
            _barrier_before(op, conflicts)
            state = SyncState()
        state.record(op, reads, writes)
    return state


def _sync_compound(op: Operation, state: SyncState) -> SyncState:
    body = op.regions[0].block
    if isinstance(op, BlockOp) or (isinstance(op, ForOp) and op.kind.data == "bound"):
        return _sync_block(body, state)  # a blockIdx loop runs once per block
    entry = state
    current = entry
    end = entry
    for _ in range(3):  # a loop's body runs after its entry and after its own end
        end = _sync_block(body, current.copy())
        following = entry.join(end)
        if following.same(current):
            break
        current = following
    return entry.join(end)


def _barrier_before(op: Operation, conflicts: set[SSAValue]) -> None:
    previous = op.prev_op
    barrier = previous if isinstance(previous, BarrierOp) else BarrierOp()
    if any(buffer_scope(buffer) == "global" for buffer in conflicts):
        barrier.attributes[GLOBAL_FENCE_ATTR] = UnitAttr()
    if barrier is not previous:
        IRBuilder.before(op).insert(barrier)
