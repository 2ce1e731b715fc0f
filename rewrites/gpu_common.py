"""What the GPU kernel passes share: bound loops and the launch sizes they need, where a buffer
lives, and the kernels of a module.

A loop bound to a GPU axis (`loop.for ... kind bound thread "threadIdx.x"`) stands for the
threads (or blocks) of that axis: it keeps serial semantics in loop IR (the loop interpreter runs
it as a loop) until `target-gpu-map-bound-loops` gives each iteration to one thread or block.
Every pass from `convert-loop-to-target-gpu` to that one reads the launch sizes off the bound
loops with `launch_dims`, so that they agree with the launch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dlc.dialects.loop.ops import AllocOp, AsyncCopyOp, ForOp, LoadOp, MatrixLoadOp, StoreOp
from dlc.dialects.target_gpu.ops import DIMENSIONS, KernelOp, is_shared_memref
from dlc.rewrites.llvm_lowering.common import lowering_error
from dlc.rewrites.schedule.common import constant_value
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

LaunchDims = dict[str, list[int]]
"""Threads per block and blocks per grid along x, y, z: `{"thread": [..], "block": [..]}`."""


def is_thread_loop(op: Operation) -> bool:
    """Whether `op` is a `loop.for` bound to a `threadIdx` axis."""
    return (
        isinstance(op, ForOp)
        and op.kind.data == "bound"
        and op.thread is not None
        and op.thread.data.startswith("threadIdx")
    )


def bound_loops(op: Operation) -> list[ForOp]:
    """The loops bound to a GPU axis in `op` (itself included), outermost first."""
    return [loop for loop in op.walk() if isinstance(loop, ForOp) and loop.kind.data == "bound"]


def bound_axis(loop: ForOp) -> tuple[str, str]:
    """("thread" | "block", dimension) of a bound loop: "threadIdx.y" -> ("thread", "y")."""
    assert loop.thread is not None
    kind, _, dimension = loop.thread.data.partition(".")
    return ("thread" if kind == "threadIdx" else "block"), dimension


def enclosing_thread_loops(op: Operation) -> list[ForOp]:
    """The `threadIdx` loops around `op`, innermost first."""
    loops: list[ForOp] = []
    parent = op.parent_op()
    while parent is not None:
        if is_thread_loop(parent):
            assert isinstance(parent, ForOp)
            loops.append(parent)
        parent = parent.parent_op()
    return loops


@dataclass(frozen=True)
class BoundExtent:
    """How many GPU coordinates a bound loop needs, and whether it needs a guard.

    Attributes:
        lb: the constant lower bound.
        step: the constant step.
        extent: the trip count, or an upper bound of it when `exact` is false.
        exact: whether every one of `extent` iterations runs (constant upper bound).
    """

    lb: int
    step: int
    extent: int
    exact: bool


def bound_extent(loop: ForOp) -> BoundExtent:
    """The launch extent a bound loop needs: its constant trip count, or the bound a
    `minui`/`minsi` with a constant operand puts on its upper bound (a split's partial tile)."""
    lb, step = constant_value(loop.lb), constant_value(loop.step)
    thread = loop.thread.data if loop.thread is not None else "?"
    if lb is None or step is None or step <= 0:
        raise lowering_error(
            loop,
            f'expected constant lower bound and positive constant step for axis '
            f'"{loop.axis.data}" bound to {thread}, found bounds that are not',
        )
    ub = constant_value(loop.ub)
    if ub is not None:
        return BoundExtent(lb, step, max(0, -(-(ub - lb) // step)), True)
    owner = loop.ub.owner
    if isinstance(owner, arith.MinUIOp | arith.MinSIOp):
        limits = [c for c in map(constant_value, owner.operands) if c is not None]
        if limits:
            return BoundExtent(lb, step, max(0, -(-(min(limits) - lb) // step)), False)
    raise lowering_error(
        loop,
        f'expected a constant upper bound (or a minui/minsi of a constant) for axis '
        f'"{loop.axis.data}" bound to {thread}, found one that is not',
    )


def launch_dims(bound: Sequence[ForOp], where: str) -> LaunchDims:
    """The launch sizes of the bound loops of one kernel: per axis, the largest trip count of
    the loops bound to it (1 where none is). Fails if a loop is bound to the same axis as a loop
    around it (`where` says where, in the message)."""
    dims: LaunchDims = {"thread": [1, 1, 1], "block": [1, 1, 1]}
    for loop in bound:
        kind, dimension = bound_axis(loop)
        for other in bound:
            if other is not loop and other.thread == loop.thread and loop.is_ancestor(other):
                raise lowering_error(
                    other,
                    f'expected one loop bound to {loop.thread.data} on each path {where}, '  # type: ignore[union-attr]
                    f'found axis "{other.axis.data}" inside axis "{loop.axis.data}"',
                )
        position = DIMENSIONS.index(dimension)
        dims[kind][position] = max(dims[kind][position], bound_extent(loop).extent)
    return dims


def buffer_scope(buffer: SSAValue) -> str:
    """"shared", "local" or "global": where a memref value of a kernel lives."""
    if is_shared_memref(buffer.type):
        return "shared"
    owner = buffer.owner
    if isinstance(owner, AllocOp):
        return owner.scope.data
    return "global"


def accessed_buffers(op: Operation) -> tuple[set[SSAValue], set[SSAValue]]:
    """(read, written) shared and global buffers of the loads (matrix loads among them),
    stores and async copies (read the source, write the destination) in `op`."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for nested in op.walk():
        if isinstance(nested, LoadOp | MatrixLoadOp) and buffer_scope(nested.memref) != "local":
            reads.add(nested.memref)
        elif isinstance(nested, StoreOp) and buffer_scope(nested.memref) != "local":
            writes.add(nested.memref)
        elif isinstance(nested, AsyncCopyOp):
            reads.add(nested.source)
            writes.add(nested.dest)
    return reads, writes


def kernels_of(module: ModuleOp) -> list[KernelOp]:
    """Every `target_gpu.kernel` of a module, in `target_gpu.module`s or at the top level."""
    return [op for op in module.walk() if isinstance(op, KernelOp)]


def kernel_where(kernel: KernelOp) -> str:
    """How messages say which kernel: `in kernel @name`."""
    return f"in kernel @{kernel.sym_name.data}"
