"""The `convert-loop-to-target-gpu` pass: loop nests bound to GPU axes -> kernels and launches.

Counterpart: MLIR's `gpu-kernel-outlining` (after `gpu-map-parallel-loops`), TVM's
`split_host_device`. Each loop nest at the top level of a host function becomes one
`target_gpu.kernel` (in a `target_gpu.module`) and one `target_gpu.launch` in its place; the
kernel holds the nest as it was, bound loops included. The passes after it make the kernel run
on the GPU, each with one job:
`target-gpu-compact-private-buffers` (a thread's slice of a local buffer),
`target-gpu-insert-barriers` (threads that communicate through memory),
`target-gpu-map-bound-loops` (bound loops -> thread and block coordinates),
`target-gpu-unroll` and `target-gpu-vectorize` (`unrolled` and `vectorized` loops).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
)
from dlc.dialects.target_gpu.ops import (
    DIMENSIONS,
    KernelOp,
    LaunchOp,
    ReturnOp,
    SharedAllocOp,
    shared_memref_type,
)
from dlc.dialects.target_gpu.ops import ModuleOp as GpuModuleOp
from dlc.rewrites.gpu_common import LaunchDims, bound_loops, launch_dims
from dlc.rewrites.ir_builder import IRBuilder
from dlc.rewrites.llvm_lowering.common import lowering_error
from dlc.rewrites.pass_target import gpu_target_for
from dlc.rewrites.schedule.common import describe
from dlc.target import GpuTarget
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import is_side_effect_free

HIGHER_LEVEL_DIALECTS = ("graph", "tensor_expr")
"""Dialects that must be lowered to loops before this pass."""


@dataclass(frozen=True)
class ConvertLoopToTargetGpuPass(ModulePass):
    """Outline every loop nest of the host functions into a GPU kernel and launch it.

    *Input invariant*: loop-level IR (no graph or tensor_expr op): `func.func`s whose top-level
    loop nests (a `loop.for` or `loop.block` directly in a function's body) each have at least
    one loop bound to a GPU axis (`kind bound thread "blockIdx.x"`, ...). Bound loops have
    constant lower bounds and steps and a constant upper bound (or a `minui`/`minsi` with a
    constant); no two nested loops are bound to the same axis; nests allocate no global
    buffer and call no function.

    *Output IR*: each nest is replaced by a `target_gpu.launch @<module>::@<kernel>` whose grid
    and block sizes are the bound loops' largest trip counts per axis, with the nest's buffers
    and non-constant scalars as arguments; the kernel (in `target_gpu.module @<module>`) holds
    the constants the nest uses (cloned), its `loop.alloc local` buffers from the host, every
    `loop.alloc shared` buffer (in the nest, or before it in the host function) as a
    `target_gpu.shared_alloc` (memory space 3) at its entry, and the nest itself, bound loops
    included (`target-gpu-map-bound-loops` maps them). Deallocations of kernel buffers are
    dropped. Host functions keep their other ops (constants, `loop.alloc global`,
    `memref.get_global`, `func.call`, deallocs).

    *Invariants*: no loop nest remains in a host function and no `loop.alloc shared` anywhere;
    every kernel respects the target's limits (threads per block, block and grid sizes, shared
    memory), else the pass fails naming the op; a nest without a bound loop is an error that
    says so. The loop IR's serial semantics are kept (a bound loop still runs as a loop).

    Options:
        target: the GPU to compile for, a target string (`cuda -arch=sm_90`, `opencl`);
            empty: the module's `dlc.target`, else `dlc.target.DEFAULT_GPU_TARGET` (sm_80).
        module_name: the symbol of the `target_gpu.module` that receives the kernels.
    """

    name: ClassVar[str] = "convert-loop-to-target-gpu"

    target: str = ""
    module_name: str = "kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = gpu_target_for(self.name, self.target, op)
        for nested in op.walk():
            dialect = nested.name.split(".", 1)[0]
            if dialect in HIGHER_LEVEL_DIALECTS:
                raise lowering_error(
                    nested,
                    f"expected loop-level IR (lower it to the loop dialect first), found an op "
                    f"of dialect {dialect}",
                )
        outliner = KernelOutliner(op, target, self.module_name)
        for function in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            for nest in [n for n in function.body.block.ops if isinstance(n, ForOp | BlockOp)]:
                outliner.outline(function, nest)


@dataclass
class KernelOutliner:
    """Outlines nests of one module into kernels of one `target_gpu.module`."""

    module: ModuleOp
    target: GpuTarget
    module_name: str
    _gpu_module: GpuModuleOp | None = None
    _names: set[str] = field(default_factory=set)

    def gpu_module(self) -> GpuModuleOp:
        """The `target_gpu.module` receiving kernels (found or created at the module's end)."""
        if self._gpu_module is None:
            for op in self.module.ops:
                if isinstance(op, GpuModuleOp) and op.sym_name.data == self.module_name:
                    self._gpu_module = op
            if self._gpu_module is None:
                self._gpu_module = GpuModuleOp(self.module_name)
                self.module.body.block.add_op(self._gpu_module)
            for op in self._gpu_module.body.block.ops:
                name = getattr(op, "sym_name", None)
                if name is not None:
                    self._names.add(name.data)
        return self._gpu_module

    def kernel_name(self, function: func.FuncOp, nest: Operation) -> str:
        names = [b.block_name.data for b in nest.walk() if isinstance(b, BlockOp)]
        computes = [name for name in names if "." not in name]  # not made by a schedule
        stem = computes[-1] if computes else names[0] if names else "kernel"
        base = re.sub(r"[^A-Za-z0-9_]", "_", f"{function.sym_name.data}_{stem}")
        name, index = base, 0
        self.gpu_module()
        while name in self._names:
            index += 1
            name = f"{base}_{index}"
        self._names.add(name)
        return name

    def outline(self, function: func.FuncOp, nest: ForOp | BlockOp) -> None:
        """Replace `nest` by a launch of a new kernel that holds it."""
        bound = bound_loops(nest)
        where = f"in @{function.sym_name.data}"
        if not bound:
            raise lowering_error(
                nest,
                f"expected a loop bound to a GPU block or thread axis in the nest of "
                f"{describe(nest)} {where} (schedule it for the GPU, e.g. with "
                f"loop-gpu-default-schedule), found none",
            )
        for op in nest.walk():
            if isinstance(op, func.CallOp):
                raise lowering_error(
                    op, f"expected no calls inside the kernel nest {where}, found one")
            if isinstance(op, AllocOp) and op.scope.data == "global":
                raise lowering_error(
                    op,
                    f"expected global buffers to be allocated outside the kernel nest of "
                    f"{describe(nest)} {where}, found one inside",
                )
        dims = launch_dims(bound, where)
        self._check_limits(bound[0], dims, where)
        anchor = arith.ConstantOp(IntegerAttr(0, IndexType()))  # marks where the launch goes
        IRBuilder.before(nest).insert(anchor)
        kernel, arguments = KernelBuilder(nest, self.target, where).build(
            self.kernel_name(function, nest)
        )
        self.gpu_module().body.block.add_op(kernel)
        self._insert_launch(anchor, kernel, arguments, dims)

    def _check_limits(self, anchor: Operation, dims: LaunchDims, where: str) -> None:
        target = self.target
        threads = dims["thread"][0] * dims["thread"][1] * dims["thread"][2]
        if threads > target.max_threads_per_block:
            raise lowering_error(
                anchor,
                f"expected at most {target.max_threads_per_block} threads per block on "
                f"{target.name} {where}, found {threads} ({'x'.join(map(str, dims['thread']))})",
            )
        for kind, limits in (("thread", target.max_block_dims), ("block", target.max_grid_dims)):
            for dimension, size, limit in zip(DIMENSIONS, dims[kind], limits, strict=True):
                if size > limit:
                    what = "threadIdx" if kind == "thread" else "blockIdx"
                    raise lowering_error(
                        anchor,
                        f"expected at most {limit} along {what}.{dimension} on {target.name} "
                        f"{where}, found {size}",
                    )

    def _insert_launch(
        self, anchor: Operation, kernel: KernelOp, arguments: Sequence[SSAValue], dims: LaunchDims
    ) -> None:
        builder = IRBuilder.before(anchor)
        sizes: dict[int, SSAValue] = {}
        for size in (*dims["block"], *dims["thread"]):
            if size not in sizes:
                sizes[size] = builder.value(arith.ConstantOp(IntegerAttr(size, IndexType())))
        builder.insert(LaunchOp(
            f"{self.module_name}::{kernel.sym_name.data}",
            [sizes[size] for size in dims["block"]],
            [sizes[size] for size in dims["thread"]],
            arguments,
        ))
        Rewriter.erase_op(anchor)


class KernelBuilder:
    """Moves one nest into a new kernel with the buffers and constants it needs."""

    def __init__(self, nest: ForOp | BlockOp, target: GpuTarget, where: str) -> None:
        self.nest = nest
        self.target = target
        self.where = where
        self.entry = Block()

    def build(self, name: str) -> tuple[KernelOp, list[SSAValue]]:
        """The kernel and the host values to launch it with."""
        clones, arguments, moved = self._classify_free_values()
        kernel = KernelOp(name, [value.type for value in arguments])
        self.entry = kernel.body.block
        mapping: dict[SSAValue, SSAValue] = {}
        for value, arg in zip(arguments, self.entry.args, strict=True):
            mapping[value] = arg
            if value.name_hint:
                arg.name_hint = value.name_hint
        for op in clones:
            self.entry.add_op(op.clone(value_mapper=mapping))
        for alloc in moved:
            mapping[alloc.result] = self._move_host_alloc(alloc)
        self.nest.detach()
        self.entry.add_op(self.nest)
        self.entry.add_op(ReturnOp())
        for op in self.nest.walk():
            for index, operand in enumerate(op.operands):
                if operand in mapping:
                    op.operands[index] = mapping[operand]
        for alloc in moved:
            Rewriter.erase_op(alloc)
        self._hoist_shared_allocs()
        for op in [op for op in self.entry.walk() if isinstance(op, DeallocOp)]:
            Rewriter.erase_op(op)
        return kernel, arguments

    def _classify_free_values(
        self,
    ) -> tuple[list[Operation], list[SSAValue], list[AllocOp]]:
        """(ops to clone into the kernel in order, kernel arguments, host allocs to move in)."""
        clones: list[Operation] = []
        arguments: list[SSAValue] = []
        moved: list[AllocOp] = []
        seen: set[SSAValue] = set()

        def clonable(value: SSAValue) -> bool:
            owner = value.owner
            if not isinstance(owner, Operation) or owner.regions:
                return False
            if not is_side_effect_free(owner) or isinstance(owner, memref.GetGlobalOp):
                return False
            return all(clonable(operand) for operand in owner.operands)

        def visit(value: SSAValue) -> None:
            if value in seen or not self._is_free(value):
                return
            seen.add(value)
            owner = value.owner
            if isinstance(owner, AllocOp) and owner.scope.data in ("shared", "local"):
                self._check_only_nest_uses(owner)
                moved.append(owner)
            elif clonable(value):
                assert isinstance(owner, Operation)
                for operand in owner.operands:
                    visit(operand)
                if owner not in clones:
                    clones.append(owner)
            elif isinstance(value.type, MemRefType | IndexType | IntegerType | AnyFloat):
                arguments.append(value)
            else:
                raise lowering_error(
                    self.nest,
                    f"expected the values a kernel nest uses from outside to be memrefs or "
                    f"scalars {self.where}, found {value.type}",
                )

        for op in self.nest.walk():
            for operand in op.operands:
                visit(operand)
        return clones, arguments, moved

    def _is_free(self, value: SSAValue) -> bool:
        owner = value.owner
        if isinstance(owner, Block):
            holder = owner.parent_op()
            return holder is None or not (holder is self.nest or self.nest.is_ancestor(holder))
        return not (owner is self.nest or self.nest.is_ancestor(owner))

    def _check_only_nest_uses(self, alloc: AllocOp) -> None:
        for use in alloc.result.uses:
            user = use.operation
            if isinstance(user, DeallocOp) or self.nest.is_ancestor(user):
                continue
            raise lowering_error(
                alloc,
                f"expected a {alloc.scope.data} buffer to be used by one kernel nest "
                f"{self.where}, found it also used by '{user.name}' outside it",
            )

    def _move_host_alloc(self, alloc: AllocOp) -> SSAValue:
        for use in list(alloc.result.uses):
            if isinstance(use.operation, DeallocOp):
                Rewriter.erase_op(use.operation)
        memref_type = alloc.result.type
        assert isinstance(memref_type, MemRefType)
        if alloc.scope.data == "shared":
            new: Operation = SharedAllocOp(
                shared_memref_type(memref_type.get_shape(), memref_type.get_element_type())
            )
        else:
            new = AllocOp(memref_type, "local")
        new.results[0].name_hint = alloc.result.name_hint
        self.entry.add_op(new)
        return new.results[0]

    def _hoist_shared_allocs(self) -> None:
        """Every `loop.alloc shared` of the nest -> a `target_gpu.shared_alloc` at the entry
        (after the constants and the moved buffers); fails past the target's shared memory."""
        first_non_alloc = next(
            op for op in self.entry.ops
            if not isinstance(op, arith.ConstantOp | AllocOp | SharedAllocOp)
        )
        for op in list(self.entry.walk()):
            if isinstance(op, AllocOp) and op.scope.data == "shared":
                memref_type = op.result.type
                assert isinstance(memref_type, MemRefType)
                new = SharedAllocOp(
                    shared_memref_type(memref_type.get_shape(), memref_type.get_element_type())
                )
                new.result.name_hint = op.result.name_hint
                IRBuilder.before(first_non_alloc).insert(new)
                op.result.replace_all_uses_with(new.result)
                Rewriter.erase_op(op)
        shared = [op for op in self.entry.ops if isinstance(op, SharedAllocOp)]
        shared_bytes = sum(_bytes(op.result.type) for op in shared)
        if shared_bytes > self.target.shared_memory_bytes:
            raise lowering_error(
                shared[0],
                f"expected at most {self.target.shared_memory_bytes} bytes of shared memory per "
                f"block on {self.target.name} {self.where}, found {shared_bytes}",
            )


def _bytes(type_: Attribute) -> int:
    assert isinstance(type_, MemRefType)
    element = type_.get_element_type()
    width = getattr(element, "bitwidth", None)
    if width is None:
        width = getattr(getattr(element, "width", None), "data", 32)
    count = 1
    for size in type_.get_shape():
        count *= size
    return count * max(1, (width + 7) // 8)
