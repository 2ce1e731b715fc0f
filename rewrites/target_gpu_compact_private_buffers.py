"""The `target-gpu-compact-private-buffers` pass: a local buffer that every thread indexes by its
own coordinate keeps one thread's slice (registers).

Counterpart: TVM's `lower_thread_allreduce`/`storage_rewrite` handling of `local` buffers
declared above the thread bindings (each thread allocates only its part).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp
from dlc.rewrites.gpu_common import (
    bound_extent,
    enclosing_thread_loops,
    is_thread_loop,
    kernel_where,
    kernels_of,
)
from dlc.rewrites.ir_builder import IRBuilder
from dlc.rewrites.llvm_lowering.common import lowering_error
from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class TargetGpuCompactPrivateBuffersPass(ModulePass):
    """Shrink the local buffers of kernels that each thread indexes by its coordinate.

    *Input invariant*: `target_gpu.kernel`s whose bodies still hold their bound loops (the
    output of `convert-loop-to-target-gpu`).

    *Output IR*: a `loop.alloc local` outside every `threadIdx` loop, accessed inside them, and
    indexed in some dimensions by the induction variable of a `threadIdx` loop (lower bound 0,
    step 1, as many iterations as the dimension) in every access, loses those dimensions: on
    the GPU each thread keeps only its own slice, e.g. `memref<16x16x4x4xf32>` indexed
    `[%ty, %tx, %i, %j]` -> `memref<4x4xf32>` indexed `[%i, %j]` (`memref<1xf32>` indexed by a
    zero when no dimension is left). Other buffers are unchanged, among them the scratch of one
    `threadIdx` loop (all its accesses in it).

    *Invariants*: the loop IR's serial semantics are kept. A local buffer outside the
    `threadIdx` loops that threads would have to share (accessed in them but not partitioned
    by them) is an error naming the buffer: local memory is private to a thread on the GPU.

    Options: none.
    """

    name: ClassVar[str] = "target-gpu-compact-private-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels_of(op):
            entry = kernel.body.block
            where = kernel_where(kernel)
            nested = [a for a in kernel.walk() if isinstance(a, AllocOp) and a.parent is not entry]
            for alloc in [*nested, *(a for a in entry.ops if isinstance(a, AllocOp))]:
                compact_thread_private(alloc, where)


def compact_thread_private(alloc: AllocOp, where: str) -> bool:
    """Drop the dimensions of a `loop.alloc local` outside the `threadIdx` loops that every
    access indexes by a `threadIdx` loop's induction variable (see the pass); returns whether
    the buffer changed."""
    if alloc.scope.data != "local" or enclosing_thread_loops(alloc):
        return False
    memref_type = alloc.result.type
    assert isinstance(memref_type, MemRefType)
    shape = memref_type.get_shape()
    accesses: list[LoadOp | StoreOp] = []
    for use in alloc.result.uses:
        user = use.operation
        if isinstance(user, LoadOp | StoreOp) and user.memref is alloc.result:
            accesses.append(user)
        elif not isinstance(user, BlockOp | DeallocOp):
            return False
    inside = [access for access in accesses if enclosing_thread_loops(access)]
    if not inside:
        return False
    outermost = {id(enclosing_thread_loops(access)[-1]) for access in inside}
    if len(inside) == len(accesses) and len(outermost) == 1:
        return False  # scratch of one thread loop: each thread's copy is its own
    droppable: dict[int, str] = {}
    for dim, size in enumerate(shape):
        axes = {_thread_axis_of(access.indices[dim], access, size) for access in accesses}
        if len(axes) == 1 and None not in axes:
            droppable[dim] = axes.pop()  # type: ignore[assignment]
    if not droppable or len(set(droppable.values())) != len(droppable):
        raise lowering_error(
            alloc,
            f"expected a local buffer allocated outside the threadIdx loops to be indexed by "
            f"their induction variables in every access (one slice per thread) {where}, found "
            f"{memref_type} that is not",
        )
    kept = [dim for dim in range(len(shape)) if dim not in droppable]
    new_type = MemRefType(memref_type.get_element_type(), [shape[d] for d in kept] or [1])
    new = IRBuilder.before(alloc).value(AllocOp(new_type, "local"), alloc.result.name_hint)
    for access in accesses:
        builder = IRBuilder.before(access)
        indices = [access.indices[d] for d in kept] or [builder.const(0)]
        if isinstance(access, LoadOp):
            replacement: Operation = LoadOp(new, indices, access.result.type)
            builder.insert(replacement)
            access.result.replace_all_uses_with(replacement.results[0])
            replacement.results[0].name_hint = access.result.name_hint
        else:
            builder.insert(StoreOp(access.value, new, indices))
        Rewriter.erase_op(access)
    alloc.result.replace_all_uses_with(new)
    Rewriter.erase_op(alloc)
    return True


def _thread_axis_of(index: SSAValue, access: Operation, size: int) -> str | None:
    """The `threadIdx` axis whose loop (0 to `size`, step 1, around `access`) has `index` as
    its induction variable, or None."""
    if not isinstance(index, BlockArgument):
        return None
    loop = index.owner.parent_op()
    if not isinstance(loop, ForOp) or not is_thread_loop(loop) or not loop.is_ancestor(access):
        return None
    try:
        extent = bound_extent(loop)
    except PassFailedException:
        return None
    if extent.lb != 0 or extent.step != 1 or extent.extent != size:
        return None
    assert loop.thread is not None
    return loop.thread.data
