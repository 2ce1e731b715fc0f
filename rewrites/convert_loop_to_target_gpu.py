"""The `convert-loop-to-target-gpu` pass: loop nests bound to GPU axes -> kernels and launches.

Counterpart: TVM's `split_host_device` + `thread_storage_sync` + `lower_thread_allreduce`'s
storage handling, MLIR's `gpu-kernel-outlining` after `gpu-map-parallel-loops`, and
`gpu.barrier` insertion. Each loop nest at the top level of a host function becomes one
`target_gpu.kernel` (in a `target_gpu.module`) and one `target_gpu.launch` in its place.

Semantics kept: the loop IR before the pass has serial semantics (every loop kind runs in
order, which is how the loop interpreter checks schedules); the kernel computes the same thing
when each (block, thread) pair runs one iteration of the bound loops:
- a loop bound to `blockIdx.<d>`/`threadIdx.<d>` becomes `lb + id * step` with `id` the block or
  thread coordinate; the launch size along that axis is the largest trip count of the loops
  bound to it, and a loop with fewer iterations (or a dynamic `minui`/`minsi` upper bound) is
  guarded by `scf.if iv < ub`;
- statements outside every `threadIdx` loop run once per block in the loop IR but once per
  thread on the GPU: pure ones are recomputed by every thread, and those that store to shared or
  global memory are wrapped in trip-1 `threadIdx` loops (run by thread 0 only);
- a `loop.alloc local` outside the `threadIdx` loops that every access indexes by their
  induction variables (one slice per thread) is compacted to the slice of one thread
  (registers), e.g. `memref<16x16x4x4xf32>` indexed `[%ty, %tx, %i, %j]` -> `memref<4x4xf32>`;
- `loop.alloc shared` (in the nest, or before it in the host function) becomes a
  `target_gpu.shared_alloc` at the kernel's entry;
- `target_gpu.barrier`s are inserted between the block-level statements that communicate
  through shared or global memory (read after write, write after read or write), including
  across iterations of the serial loops around them;
- loops of kind `vectorized` (constant trip 2, 4, 8 or 16) become vector loads, stores and
  arithmetic (`loop.load ... -> vector<4xf32>`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.contracts import GLOBAL_FENCE_ATTR
from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    LoadOp,
    StoreOp,
    YieldOp,
)
from dlc.dialects.target_gpu.ops import (
    DIMENSIONS,
    BarrierOp,
    BlockIdOp,
    KernelOp,
    LaunchOp,
    ReturnOp,
    SharedAllocOp,
    ThreadIdOp,
    is_shared_memref,
    shared_memref_type,
)
from dlc.dialects.target_gpu.ops import ModuleOp as GpuModuleOp
from dlc.rewrites.pass_target import gpu_target_for
from dlc.target import GpuTarget
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, is_side_effect_free
from xdsl.utils.exceptions import PassFailedException

HIGHER_LEVEL_DIALECTS = ("graph", "tensor_expr")
"""Dialects that must be lowered to loops before this pass."""

VECTOR_WIDTHS = (2, 4, 8, 16)
"""Trip counts of `vectorized` loops that become vector operations (OpenCL's vector widths)."""


def _erase(op: Operation, safe: bool = True) -> None:
    """Detach `op` from its block and erase it (with `safe`, it must have no uses left)."""
    if op.parent is not None:
        op.detach()
    op.erase(safe_erase=safe)


def _fail(op: Operation, message: str) -> PassFailedException:
    return PassFailedException(f"'{op.name}' op {message}")


def _describe_nest(nest: Operation) -> str:
    if isinstance(nest, ForOp):
        return f'loop "{nest.axis.data}"'
    if isinstance(nest, BlockOp):
        return f'block "{nest.block_name.data}"'
    return f"'{nest.name}'"


def constant_index(value: SSAValue) -> int | None:
    """The integer an `arith.constant` defines, or None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def is_thread_loop(op: Operation) -> bool:
    """Whether `op` is a `loop.for` bound to a `threadIdx` axis."""
    return (
        isinstance(op, ForOp)
        and op.kind.data == "bound"
        and op.thread is not None
        and op.thread.data.startswith("threadIdx")
    )


def bound_axis(loop: ForOp) -> tuple[str, str]:
    """("thread" | "block", dimension) of a bound loop: "threadIdx.y" -> ("thread", "y")."""
    assert loop.thread is not None
    kind, _, dimension = loop.thread.data.partition(".")
    return ("thread" if kind == "threadIdx" else "block"), dimension


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
    lb, step = constant_index(loop.lb), constant_index(loop.step)
    thread = loop.thread.data if loop.thread is not None else "?"
    if lb is None or step is None or step <= 0:
        raise _fail(
            loop,
            f'expected constant lower bound and positive constant step for axis '
            f'"{loop.axis.data}" bound to {thread}, found bounds that are not',
        )
    ub = constant_index(loop.ub)
    if ub is not None:
        return BoundExtent(lb, step, max(0, -(-(ub - lb) // step)), True)
    owner = loop.ub.owner
    if isinstance(owner, arith.MinUIOp | arith.MinSIOp):
        limits = [c for c in map(constant_index, owner.operands) if c is not None]
        if limits:
            return BoundExtent(lb, step, max(0, -(-(min(limits) - lb) // step)), False)
    raise _fail(
        loop,
        f'expected a constant upper bound (or a minui/minsi of a constant) for axis '
        f'"{loop.axis.data}" bound to {thread}, found one that is not',
    )


# ----------------------------------------------------------------------------------------------
# Buffers
# ----------------------------------------------------------------------------------------------


def buffer_scope(buffer: SSAValue) -> str:
    """"shared", "local" or "global": where a memref value of a kernel lives."""
    if is_shared_memref(buffer.type):
        return "shared"
    owner = buffer.owner
    if isinstance(owner, AllocOp):
        return owner.scope.data
    return "global"


def accessed_buffers(op: Operation) -> tuple[set[SSAValue], set[SSAValue]]:
    """(read, written) shared and global buffers of the loads and stores in `op`."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for nested in op.walk():
        if isinstance(nested, LoadOp) and buffer_scope(nested.memref) != "local":
            reads.add(nested.memref)
        elif isinstance(nested, StoreOp) and buffer_scope(nested.memref) != "local":
            writes.add(nested.memref)
    return reads, writes


# ----------------------------------------------------------------------------------------------
# The pass
# ----------------------------------------------------------------------------------------------


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
    the nest with bound loops turned into `target_gpu.block_id`/`thread_id` arithmetic and
    `scf.if` guards, shared buffers as `target_gpu.shared_alloc` (memory space 3), thread-private
    local buffers compacted to one thread's slice, block-level stores run by thread 0,
    `target_gpu.barrier`s where threads communicate, and `vectorized` loops as vector ops.
    Host functions keep their other ops (constants, `loop.alloc global`, `memref.get_global`,
    `func.call`, deallocs). Constants a nest uses are cloned into its kernel.

    *Invariants*: no `loop.for` of kind `bound` and no `loop.alloc shared` remains; every
    kernel respects the target's limits (threads per block, block and grid sizes, shared
    memory), else the pass fails naming the op; a nest without a bound loop is an error that
    says so. Statements inside one `threadIdx` loop are assumed to touch shared memory only
    where that thread owns it (no barrier can go inside them), as in TVM.

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
                raise _fail(
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
        """Replace `nest` by a launch of a new kernel that runs it."""
        bound = [op for op in nest.walk() if isinstance(op, ForOp) and op.kind.data == "bound"]
        where = f"in @{function.sym_name.data}"
        if not bound:
            raise _fail(
                nest,
                f"expected a loop bound to a GPU block or thread axis in the nest of "
                f"{_describe_nest(nest)} {where} (schedule it for the GPU, e.g. with "
                f"loop-gpu-default-schedule), found none",
            )
        for op in nest.walk():
            if isinstance(op, func.CallOp):
                raise _fail(op, f"expected no calls inside the kernel nest {where}, found one")
            if isinstance(op, AllocOp) and op.scope.data == "global":
                raise _fail(
                    op,
                    f"expected global buffers to be allocated outside the kernel nest of "
                    f"{_describe_nest(nest)} {where}, found one inside",
                )
        launch_dims = self._launch_dims(bound, where)
        anchor = arith.ConstantOp(IntegerAttr(0, IndexType()))  # marks where the launch goes
        host_block = nest.parent_block()
        assert host_block is not None
        host_block.insert_op_before(anchor, nest)
        kernel, arguments = KernelBuilder(nest, launch_dims, self.target, where).build(
            self.kernel_name(function, nest)
        )
        self.gpu_module().body.block.add_op(kernel)
        self._insert_launch(anchor, kernel, arguments, launch_dims)

    def _launch_dims(self, bound: list[ForOp], where: str) -> dict[str, list[int]]:
        dims: dict[str, list[int]] = {"thread": [1, 1, 1], "block": [1, 1, 1]}
        for loop in bound:
            kind, dimension = bound_axis(loop)
            for other in bound:
                if other is not loop and other.thread == loop.thread and loop.is_ancestor(other):
                    raise _fail(
                        other,
                        f'expected one loop bound to {loop.thread.data} on each path {where}, '  # type: ignore[union-attr]
                        f'found axis "{other.axis.data}" inside axis "{loop.axis.data}"',
                    )
            position = DIMENSIONS.index(dimension)
            dims[kind][position] = max(dims[kind][position], bound_extent(loop).extent)
        self._check_limits(bound[0], dims, where)
        return dims

    def _check_limits(self, anchor: Operation, dims: dict[str, list[int]], where: str) -> None:
        target = self.target
        threads = dims["thread"][0] * dims["thread"][1] * dims["thread"][2]
        if threads > target.max_threads_per_block:
            raise _fail(
                anchor,
                f"expected at most {target.max_threads_per_block} threads per block on "
                f"{target.name} {where}, found {threads} ({'x'.join(map(str, dims['thread']))})",
            )
        for kind, limits in (("thread", target.max_block_dims), ("block", target.max_grid_dims)):
            for dimension, size, limit in zip(DIMENSIONS, dims[kind], limits, strict=True):
                if size > limit:
                    what = "threadIdx" if kind == "thread" else "blockIdx"
                    raise _fail(
                        anchor,
                        f"expected at most {limit} along {what}.{dimension} on {target.name} "
                        f"{where}, found {size}",
                    )

    def _insert_launch(
        self,
        anchor: Operation,
        kernel: KernelOp,
        arguments: Sequence[SSAValue],
        dims: dict[str, list[int]],
    ) -> None:
        block = anchor.parent_block()
        assert block is not None
        sizes: list[SSAValue] = []
        cache: dict[int, SSAValue] = {}
        for kind in ("block", "thread"):
            for size in dims[kind]:
                if size not in cache:
                    constant = arith.ConstantOp(IntegerAttr(size, IndexType()))
                    block.insert_op_before(constant, anchor)
                    cache[size] = constant.result
                sizes.append(cache[size])
        launch = LaunchOp(
            f"{self.module_name}::{kernel.sym_name.data}", sizes[:3], sizes[3:], arguments
        )
        block.insert_op_before(launch, anchor)
        _erase(anchor)


# ----------------------------------------------------------------------------------------------
# Building one kernel
# ----------------------------------------------------------------------------------------------


class KernelBuilder:
    """Moves one nest into a new kernel and rewrites it for SIMT execution (see the module doc)."""

    def __init__(
        self, nest: ForOp | BlockOp, dims: dict[str, list[int]], target: GpuTarget, where: str
    ) -> None:
        self.nest = nest
        self.dims = dims
        self.target = target
        self.where = where
        self.entry = Block()
        self._constants: dict[int, SSAValue] = {}
        self._ids: dict[tuple[str, str], SSAValue] = {}

    # -- outlining ----------------------------------------------------------------------------

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
            clone = op.clone()
            for index, operand in enumerate(clone.operands):
                clone.operands[index] = mapping.get(operand, operand)
            self.entry.add_op(clone)
            for old, new in zip(op.results, clone.results, strict=True):
                mapping[old] = new
                if isinstance(op, arith.ConstantOp) and isinstance(new.type, IndexType):
                    value = constant_index(new)
                    if value is not None:
                        self._constants.setdefault(value, new)
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
            _erase(alloc)
        self._rewrite()
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
            elif isinstance(value.type, MemRefType | IndexType) or _is_scalar(value.type):
                arguments.append(value)
            else:
                raise _fail(
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
            raise _fail(
                alloc,
                f"expected a {alloc.scope.data} buffer to be used by one kernel nest "
                f"{self.where}, found it also used by '{user.name}' outside it",
            )

    def _move_host_alloc(self, alloc: AllocOp) -> SSAValue:
        for use in list(alloc.result.uses):
            if isinstance(use.operation, DeallocOp):
                _erase(use.operation)
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

    # -- rewriting the nest inside the kernel -------------------------------------------------

    def _rewrite(self) -> None:
        self._hoist_shared_allocs()
        self._erase_deallocs()
        for alloc in [op for op in self.nest.walk() if isinstance(op, AllocOp)]:
            compact_thread_private(alloc, self.where)
        for alloc in [op for op in self.entry.ops if isinstance(op, AllocOp)]:
            compact_thread_private(alloc, self.where)
        if any(size > 1 for size in self.dims["thread"]):
            self._wrap_block_level_stores(self.entry)
            insert_barriers(self.entry)
        for loop in [op for op in self.entry.walk() if isinstance(op, ForOp)]:
            if loop.kind.data == "bound":
                self._convert_bound_loop(loop)
        kept: set[ForOp] = set()
        while True:  # outermost first; the copies of inner loops are unrolled in later rounds
            loop = next((op for op in self.entry.walk() if isinstance(op, ForOp)
                         and op.kind.data == "unrolled" and op not in kept), None)
            if loop is None:
                break
            if not unroll_constant_loop(loop):
                kept.add(loop)
        for loop in [op for op in self.entry.walk() if isinstance(op, ForOp)]:
            if loop.kind.data == "vectorized":
                materialize_vector_loop(loop)

    def _hoist_shared_allocs(self) -> None:
        shared_bytes = 0
        first_non_alloc = next(
            (op for op in self.entry.ops if not isinstance(op, arith.ConstantOp | AllocOp
                                                        | SharedAllocOp)),
            None,
        )
        for op in list(self.entry.walk()):
            if isinstance(op, AllocOp) and op.scope.data == "shared":
                memref_type = op.result.type
                assert isinstance(memref_type, MemRefType)
                new = SharedAllocOp(
                    shared_memref_type(memref_type.get_shape(), memref_type.get_element_type())
                )
                new.result.name_hint = op.result.name_hint
                self.entry.insert_op_before(new, first_non_alloc)  # type: ignore[arg-type]
                op.result.replace_all_uses_with(new.result)
                _erase(op)
        for op in self.entry.ops:
            if isinstance(op, SharedAllocOp):
                shared_bytes += _bytes(op.result.type)
        if shared_bytes > self.target.shared_memory_bytes:
            first = next(op for op in self.entry.ops if isinstance(op, SharedAllocOp))
            raise _fail(
                first,
                f"expected at most {self.target.shared_memory_bytes} bytes of shared memory per "
                f"block on {self.target.name} {self.where}, found {shared_bytes}",
            )

    def _erase_deallocs(self) -> None:
        for op in list(self.entry.walk()):
            if isinstance(op, DeallocOp):
                _erase(op)

    def index_constant(self, value: int) -> SSAValue:
        """An `index` constant at the kernel's entry."""
        if value not in self._constants:
            constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
            first = self.entry.first_op
            assert first is not None
            self.entry.insert_op_before(constant, first)
            self._constants[value] = constant.result
        return self._constants[value]

    def coordinate(self, kind: str, dimension: str) -> SSAValue:
        """`target_gpu.thread_id`/`block_id` of one dimension, created once at the entry."""
        key = (kind, dimension)
        if key not in self._ids:
            op = ThreadIdOp(dimension) if kind == "thread" else BlockIdOp(dimension)
            op.result.name_hint = f"{'t' if kind == 'thread' else 'b'}id_{dimension}"
            anchor = next(
                (o for o in self.entry.ops
                 if not isinstance(o, arith.ConstantOp | ThreadIdOp | BlockIdOp)),
                None,
            )
            assert anchor is not None
            self.entry.insert_op_before(op, anchor)
            self._ids[key] = op.result
        return self._ids[key]

    def _wrap_block_level_stores(self, block: Block) -> None:
        """Wrap the block-level statements that store to shared or global memory in trip-1
        `threadIdx` loops: they run on thread 0 only, as they run once per block in the IR."""
        for op in list(block.ops):
            if is_thread_loop(op) or op.has_trait(IsTerminator):
                continue
            if any(is_thread_loop(nested) for nested in op.walk()):
                for region in op.regions:
                    for inner in region.blocks:
                        self._wrap_block_level_stores(inner)
                continue
            if accessed_buffers(op)[1]:
                self._single_thread(op)

    def _single_thread(self, op: Operation) -> None:
        block = op.parent_block()
        assert block is not None
        zero, one = self.index_constant(0), self.index_constant(1)
        inner: Operation = op
        anchor = op.next_op
        op.detach()
        for dimension, size in zip(DIMENSIONS, self.dims["thread"], strict=True):
            if size <= 1:
                continue
            loop = ForOp(zero, one, one, [inner], f"single.{dimension}", "bound",
                         f"threadIdx.{dimension}")
            inner = loop
        block.insert_op_before(inner, anchor)  # type: ignore[arg-type]

    def _convert_bound_loop(self, loop: ForOp) -> None:
        kind, dimension = bound_axis(loop)
        extent = bound_extent(loop)
        block = loop.parent_block()
        assert block is not None
        coordinate = self.coordinate(kind, dimension)
        new_ops: list[Operation] = []
        iv: SSAValue = coordinate
        if extent.step != 1:
            scaled = arith.MuliOp(iv, self.index_constant(extent.step))
            new_ops.append(scaled)
            iv = scaled.result
        if extent.lb != 0:
            shifted = arith.AddiOp(iv, self.index_constant(extent.lb))
            new_ops.append(shifted)
            iv = shifted.result
        if new_ops:
            iv.name_hint = loop.induction_var.name_hint
        launch = self.dims[kind][DIMENSIONS.index(dimension)]
        for op in new_ops:
            block.insert_op_before(op, loop)
        loop.induction_var.replace_all_uses_with(iv)
        body = [op for op in loop.body.block.ops if not isinstance(op, YieldOp)]
        for op in body:
            op.detach()
        if extent.exact and extent.extent == launch:
            for op in body:
                block.insert_op_before(op, loop)
        else:
            condition = arith.CmpiOp(iv, loop.ub, "ult")
            guard = scf.IfOp(condition, [], Region(Block([*body, scf.YieldOp()])))
            block.insert_op_before(condition, loop)
            block.insert_op_before(guard, loop)
        _erase(loop)


def _is_scalar(type_: Attribute) -> bool:
    from xdsl.dialects.builtin import AnyFloat, IntegerType

    return isinstance(type_, IntegerType | AnyFloat)


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


# ----------------------------------------------------------------------------------------------
# Thread-private local buffers
# ----------------------------------------------------------------------------------------------


def _enclosing_thread_loops(op: Operation) -> list[ForOp]:
    loops: list[ForOp] = []
    parent = op.parent_op()
    while parent is not None:
        if is_thread_loop(parent):
            assert isinstance(parent, ForOp)
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def compact_thread_private(alloc: AllocOp, where: str = "") -> bool:
    """Drop the dimensions of a `loop.alloc local` outside the `threadIdx` loops that every
    access indexes by the induction variable of a `threadIdx` loop (lb 0, step 1, as many
    iterations as the dimension): on the GPU each thread keeps only its own slice. Returns
    whether the buffer changed; fails if the buffer is accessed inside `threadIdx` loops but is
    not partitioned by them (threads would each see a private copy)."""
    if alloc.scope.data != "local" or _enclosing_thread_loops(alloc):
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
    inside = [access for access in accesses if _enclosing_thread_loops(access)]
    if not inside:
        return False
    outermost = {id(_enclosing_thread_loops(access)[-1]) for access in inside}
    if len(inside) == len(accesses) and len(outermost) == 1:
        return False  # scratch of one thread loop: each thread's copy is its own
    droppable: dict[int, str] = {}
    for dim, size in enumerate(shape):
        axes = {_thread_axis_of(access.indices[dim], access, size) for access in accesses}
        if len(axes) == 1 and None not in axes:
            droppable[dim] = axes.pop()  # type: ignore[assignment]
    if not droppable or len(set(droppable.values())) != len(droppable):
        raise _fail(
            alloc,
            f"expected a local buffer allocated outside the threadIdx loops to be indexed by "
            f"their induction variables in every access (one slice per thread) {where}, found "
            f"{memref_type} that is not",
        )
    kept = [dim for dim in range(len(shape)) if dim not in droppable]
    new_type = MemRefType(memref_type.get_element_type(), [shape[d] for d in kept] or [1])
    new = AllocOp(new_type, "local")
    new.result.name_hint = alloc.result.name_hint
    block = alloc.parent_block()
    assert block is not None
    block.insert_op_before(new, alloc)
    for access in accesses:
        indices = [access.indices[d] for d in kept]
        if not indices:
            zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
            access_block = access.parent_block()
            assert access_block is not None
            access_block.insert_op_before(zero, access)
            indices = [zero.result]
        if isinstance(access, LoadOp):
            replacement: Operation = LoadOp(new.result, indices, access.result.type)
            access_block = access.parent_block()
            assert access_block is not None
            access_block.insert_op_before(replacement, access)
            access.result.replace_all_uses_with(replacement.results[0])
            replacement.results[0].name_hint = access.result.name_hint
        else:
            replacement = StoreOp(access.value, new.result, indices)
            access_block = access.parent_block()
            assert access_block is not None
            access_block.insert_op_before(replacement, access)
        _erase(access)
    alloc.result.replace_all_uses_with(new.result)
    _erase(alloc)
    return True


def _thread_axis_of(index: SSAValue, access: Operation, size: int) -> str | None:
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


# ----------------------------------------------------------------------------------------------
# Barriers
# ----------------------------------------------------------------------------------------------


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


def _is_compound(op: Operation) -> bool:
    """Statements at block level whose body the scan enters: loops that are not threadIdx loops
    (their bounds are uniform across the block) and blocks."""
    return (isinstance(op, ForOp) and not is_thread_loop(op)) or isinstance(op, BlockOp)


def insert_barriers(block: Block) -> None:
    """Insert `target_gpu.barrier`s between the block-level statements of a kernel body that
    communicate through shared or global memory (see `SyncState.conflicts`)."""
    _sync_block(block, SyncState())


def _sync_block(block: Block, state: SyncState) -> SyncState:
    for op in list(block.ops):
        if isinstance(op, BarrierOp):
            state = SyncState()
            continue
        if not any(isinstance(n, LoadOp | StoreOp) for n in op.walk()):
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
    block = op.parent_block()
    assert block is not None
    previous = op.prev_op
    barrier = previous if isinstance(previous, BarrierOp) else BarrierOp()
    if any(buffer_scope(buffer) == "global" for buffer in conflicts):
        barrier.attributes[GLOBAL_FENCE_ATTR] = UnitAttr()
    if barrier is not previous:
        block.insert_op_before(barrier, op)


# ----------------------------------------------------------------------------------------------
# Unrolled and vectorized loops
# ----------------------------------------------------------------------------------------------

MAX_UNROLL = 64
"""`unrolled` loops of at most this many iterations are replicated in kernels (their local
buffers then have constant indices, which LLVM and OpenCL compilers keep in registers)."""


def unroll_constant_loop(loop: ForOp) -> bool:
    """Replicate the body of an `unrolled` loop with constant bounds (at most `MAX_UNROLL`
    iterations); returns whether it did. Other `unrolled` loops stay loops."""
    from dlc.rewrites.schedule import ScheduleError, unroll

    trip = loop.trip_count()
    if trip is None or trip > MAX_UNROLL:
        return False
    try:
        unroll(loop)
    except ScheduleError:
        return False
    return True


# ----------------------------------------------------------------------------------------------
# Vectorized loops
# ----------------------------------------------------------------------------------------------


def _body_ops(loop: ForOp) -> Iterator[Operation]:
    """The ops of a loop's body in order, entering `loop.block`s (not their terminators)."""
    for op in loop.body.block.ops:
        if isinstance(op, YieldOp):
            continue
        if isinstance(op, BlockOp):
            yield op
            yield from (o for o in op.body.block.ops if not isinstance(o, YieldOp))
        else:
            yield op


def materialize_vector_loop(loop: ForOp) -> bool:
    """Turn a `vectorized` loop into vector operations when its shape allows; returns whether
    it did. Otherwise the loop stays (it then runs serially)."""
    bounds = loop.constant_bounds()
    if bounds is None or bounds[2] != 1:
        return False
    lb, ub, _ = bounds
    width = ub - lb
    if width not in VECTOR_WIDTHS:
        return False
    plan = _plan_vectorization(loop, width)
    if plan is None:
        return False
    _apply_vectorization(loop, lb, width, plan)
    return True


def _plan_vectorization(loop: ForOp, width: int) -> set[Operation] | None:
    """The ops that become vector ops, or None if some op cannot."""
    lanes: set[SSAValue] = {loop.induction_var}
    vectors: set[SSAValue] = set()
    vector_ops: set[Operation] = set()
    for op in _body_ops(loop):
        if isinstance(op, BlockOp):
            continue
        if op.regions or isinstance(op, AllocOp):
            return None
        lane_operands = [v for v in op.operands if v in lanes]
        if isinstance(op, arith.AddiOp) and lane_operands:
            if len(lane_operands) != 1:
                return None
            lanes.add(op.result)
        elif isinstance(op, LoadOp | StoreOp):
            vectorized = _plan_access(op, lanes, vectors)
            if vectorized is None:
                return None
            if vectorized:
                vector_ops.add(op)
        elif lane_operands:
            return None  # the lane index used other than in addi and as the last index
        elif any(v in vectors for v in op.operands):
            if not is_side_effect_free(op) or len(op.results) != 1:
                return None
            if isinstance(op.results[0].type, VectorType):
                return None
            vectors.add(op.results[0])
            vector_ops.add(op)
    return vector_ops


def _plan_access(
    op: LoadOp | StoreOp, lanes: set[SSAValue], vectors: set[SSAValue]
) -> bool | None:
    """Whether a load or store becomes a vector access (None: it cannot be vectorized)."""
    indices = list(op.indices)
    value = op.result if isinstance(op, LoadOp) else op.value
    if any(i in lanes for i in indices[:-1]) or isinstance(value.type, VectorType):
        return None
    is_lane = bool(indices) and indices[-1] in lanes
    if isinstance(op, LoadOp):
        if is_lane:
            vectors.add(op.result)
        return is_lane
    if op.value in vectors and not is_lane:
        return None  # varying values stored to one element: a reduction across lanes
    return is_lane


def _apply_vectorization(loop: ForOp, lb: int, width: int, vector_ops: set[Operation]) -> None:
    block = loop.parent_block()
    assert block is not None
    base = arith.ConstantOp(IntegerAttr(lb, IndexType()))
    block.insert_op_before(base, loop)
    loop.induction_var.replace_all_uses_with(base.result)
    widened: dict[SSAValue, SSAValue] = {}

    def vector_of(value: SSAValue, anchor: Operation, element: Attribute) -> SSAValue:
        if value in widened:
            return widened[value]
        splat = vector.BroadcastOp(value, VectorType(element, [width]))
        anchor_block = anchor.parent_block()
        assert anchor_block is not None
        anchor_block.insert_op_before(splat, anchor)
        return splat.results[0]

    for op in list(_body_ops(loop)):
        if op not in vector_ops:
            continue
        op_block = op.parent_block()
        assert op_block is not None
        if isinstance(op, LoadOp):
            new: Operation = LoadOp(op.memref, list(op.indices),
                                    VectorType(op.result.type, [width]))
            op_block.insert_op_before(new, op)
            widened[op.result] = new.results[0]
        elif isinstance(op, StoreOp):
            memref_type = op.memref.type
            assert isinstance(memref_type, MemRefType)
            value = vector_of(op.value, op, memref_type.get_element_type())
            new = StoreOp(value, op.memref, list(op.indices))
            op_block.insert_op_before(new, op)
        else:
            operands = [
                vector_of(v, op, v.type) if not isinstance(v.type, VectorType) else v
                for v in op.operands
            ]
            result_type = VectorType(op.results[0].type, [width])
            new = type(op).create(
                operands=operands,
                result_types=[result_type],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            op_block.insert_op_before(new, op)
            widened[op.results[0]] = new.results[0]
    for op in reversed(list(_body_ops(loop))):
        if op in vector_ops:
            _erase(op, safe=False)
    body = [op for op in loop.body.block.ops if not isinstance(op, YieldOp)]
    for op in body:
        op.detach()
        block.insert_op_before(op, loop)
    _erase(loop)


def kernels_of(module: ModuleOp) -> Iterable[KernelOp]:
    """Every `target_gpu.kernel` of a module, in `target_gpu.module`s or at the top level."""
    return (op for op in module.walk() if isinstance(op, KernelOp))
