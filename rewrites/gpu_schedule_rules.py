"""The default GPU schedule rules that `loop-gpu-default-schedule` applies (TVM dlight's GPU rules:
`Matmul`, `Reduction`, `ElementWise`, `Fallback`).

Each rule recognises a loop nest by its structure (`rewrites.schedule_rules.nest.analyze`) and
rewrites it into loops bound to GPU axes; the result keeps the loop IR's serial semantics (the
loop interpreter runs it and must find the same results), and `convert-loop-to-target-gpu` and
the `target-gpu-*` passes turn it into a kernel. The rules build IR with `ir_builder.IRBuilder`.
Rules, tried in order on each top-level nest of a function:

- `mma-gemm` (a GEMM as below whose factors are f16 or bf16 loads widened to an f32
  accumulator, on a target with a warp-level intrinsic for them: PTX `mma.sync` m16n8k16 from
  sm_80): blocks of warps, each warp computing 16x8 fragments with `mma.sync` from A and B
  tiles in shared memory (fragments loaded by `ldmatrix`) into f32 accumulators in registers,
  written to an output tile in shared memory for the epilogues (`MmaGemmBuilder`); the tiles
  are filled by a `cp.async` pipeline of `pipeline_depth` stages where the factors' rows allow
  16-byte copies (`mma_pipeline`).
- `gemm` (matmul, batched matmul, conv2d and any reduction `C += A * B` whose two loads split the
  spatial axes into an M side and an N side): block tiling into shared memory and thread tiling
  in registers. A 16x16-thread block computes a BM x BN tile of the output (BM, BN up to 128),
  each thread a TM x TN sub-tile held in a `loop.alloc local` (registers; halved while the grid
  has fewer than two blocks per multiprocessor); for each BK-slice of
  the reduction the block first copies the A and B tiles into shared memory (each thread a few
  elements, coalesced along the reduction axis for A and along N for B; out-of-range elements
  are zeros), then every thread accumulates its sub-tile from shared memory, reading B's row as
  a vector (`vectorized`). The init, update and epilogue blocks then run once per output
  element, on the accumulated value.
- `tree-reduction` (a reduction whose reduction extent is large compared with its outputs, or a
  reduction to one value): one block per output; each of T threads reduces a strided slice into
  a register, the partial results meet in shared memory and are combined in log2(T) steps (a
  tree), and thread 0 runs the init, the update with the total and the epilogues.
- `thread-per-output` / `elementwise`: the spatial loops are fused into one loop, split into a
  grid-stride loop around `blockIdx.x` and `threadIdx.x` (256 threads; the grid is capped, and
  the outer serial loop strides over the rest); reduction loops stay serial in each thread.
- `single`: anything else (a statement outside loops, a nest of unknown shape) runs in one
  thread, so that every nest can be launched.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    ForOp,
    LoadOp,
    MatrixLoadOp,
    StoreOp,
    YieldOp,
    intrinsic_element_type,
)
from dlc.rewrites.ir_builder import IRBuilder, wrap_in_bound_loops
from dlc.rewrites.schedule import ScheduleError, fuse, split, vectorize
from dlc.rewrites.schedule.common import index_constant, is_pure
from dlc.rewrites.schedule_rules.nest import (
    Elementwise,
    Reduction,
    analyze,
    bare_reduction,
)
from dlc.target import GpuTarget
from dlc.target.intrinsics import ELEMENT_TYPES, Intrinsic
from xdsl.dialects import arith, func
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue


@dataclass(frozen=True)
class GpuScheduleConfig:
    """What the GPU rules need to know about the target, and their knobs.

    Attributes:
        threads: threads per block of elementwise, per-output and tree-reduction kernels.
        max_blocks: the most blocks of a grid-stride kernel (more work strides in a loop).
        shared_memory_bytes: shared memory one block may use (bounds the GEMM tiles).
        tree_min_extent: the smallest reduction extent reduced by a tree of threads.
        tile_threads: the threads of a GEMM block along M and N.
        max_thread_tile: the largest per-thread GEMM sub-tile along M and along N.
        block_k: the reduction slice a GEMM block stages in shared memory per step.
        min_gemm_extent: M and N must both reach this for the GEMM rule.
        warp_size: threads that run in lock step; a tree reduction uses at least one warp.
        min_gemm_blocks: a GEMM's thread tiles shrink (halving the larger) while its grid has
            fewer blocks than this and a thread computes more than one output: two per
            multiprocessor, so that a conv2d with few output channels or pixels (ResNet's
            7x7x512 layers: 8 blocks of 128x32) still fills the device. On an H200, ResNet-18
            went from 7.13 to 1.89 ms (PyTorch eager on cuDNN: 1.3-2.0 ms), its compile from
            26 to 5 s; GEMM 4096^3 keeps its 8x8 tiles (30.6 TFLOP/s).
        features: the target's architecture features (`sm_80`, ...): the `mma-gemm` rule
            needs those of a warp-level intrinsic (`dlc.target.intrinsics`).
        pipeline_depth: the K tiles of an `mma-gemm` in flight: from 2, the A and B tiles are
            copied by `cp.async` (`sm_80`) into that many shared-memory stages, tile k + depth
            - 1 loading while tile k is computed (where the factors are rows of global
            buffers that 16-byte copies can read); 1: copies through registers.
    """

    threads: int = 256
    max_blocks: int = 4096
    shared_memory_bytes: int = 48 * 1024
    tree_min_extent: int = 128
    tile_threads: tuple[int, int] = (16, 16)
    max_thread_tile: int = 8
    block_k: int = 8
    min_gemm_extent: int = 16
    warp_size: int = 32
    min_gemm_blocks: int = 0
    features: frozenset[str] = frozenset()
    pipeline_depth: int = 2

    @classmethod
    def for_target(cls, target: GpuTarget, threads: int = 0) -> GpuScheduleConfig:
        """The configuration for a target description (`dlc.target.GpuTarget`)."""
        chosen = min(threads or 256, target.max_threads_per_block, target.max_block_dims[0])
        tile = 16 if target.max_threads_per_block >= 256 else 8
        return cls(
            threads=chosen,
            max_blocks=target.multiprocessors * 32,
            shared_memory_bytes=target.shared_memory_bytes,
            tile_threads=(tile, tile),
            warp_size=target.warp_size,
            min_gemm_blocks=2 * target.multiprocessors,
            features=target.features,
        )


# ----------------------------------------------------------------------------------------------
# Entry points
# ----------------------------------------------------------------------------------------------


def schedule_function(function: func.FuncOp, config: GpuScheduleConfig) -> list[str]:
    """Schedule every top-level nest of `function`; returns the rule applied to each."""
    names = _schedule_local_runs(function, config)
    return names + [
        schedule_nest(root, config)
        for root in list(function.body.block.ops)
        if isinstance(root, ForOp | BlockOp)
        and not any(isinstance(op, ForOp) and op.kind.data == "bound" for op in root.walk())
    ]


def _schedule_local_runs(function: func.FuncOp, config: GpuScheduleConfig) -> list[str]:
    """Statements of the function body that share a `loop.alloc local` (a reduction to one
    value accumulating in a register: init, reduction loops, epilogues) must run in one kernel:
    schedule each such run as a tree reduction, or else as one single-thread nest."""
    names = []
    for alloc in [op for op in function.body.block.ops
                  if isinstance(op, AllocOp) and op.scope.data == "local"]:
        run = _local_run(alloc)
        reduction = _run_as_reduction(run, alloc)
        if reduction is not None and schedule_tree_reduction(reduction, config):
            names.append("tree-reduction")
            continue
        wrap_in_bound_loops(run, [("single", "threadIdx.x")], *_zero_one(alloc))
        names.append("single")
    return names


def _local_run(alloc: AllocOp) -> list[Operation]:
    """The statements from `alloc` to the last one using its buffer (its dealloc)."""
    block = alloc.parent_block()
    assert block is not None
    last = _position(alloc)
    for use in alloc.result.uses:
        user: Operation | None = use.operation
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user is not None:
            last = max(last, _position(user))
    run: list[Operation] = []
    op: Operation | None = alloc
    while op is not None and _position(op) <= last:
        run.append(op)
        op = op.next_op
    return run


def _position(op: Operation) -> int:
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)


def _run_as_reduction(run: list[Operation], alloc: AllocOp) -> Reduction | None:
    """`[alloc, init, reduction nest, epilogue blocks..., dealloc]` as a `Reduction`."""
    from dlc.dialects.loop.ops import DeallocOp

    body = [op for op in run[1:] if not is_pure(op)]
    dealloc = body.pop() if body and isinstance(body[-1], DeallocOp) else None
    if len(body) < 2 or not isinstance(body[0], BlockOp) or not isinstance(body[1], ForOp):
        return None
    init, root, epilogues = body[0], body[1], body[2:]
    if list(init.writes) != [alloc.result] or not all(isinstance(e, BlockOp) for e in epilogues):
        return None
    bare = bare_reduction(root)
    if bare is None or bare.home is not alloc.result:
        return None
    return Reduction([], alloc, init, bare.reduction, bare.update,
                     [e for e in epilogues if isinstance(e, BlockOp)], dealloc, alloc.result)


def schedule_nest(root: ForOp | BlockOp, config: GpuScheduleConfig) -> str:
    """Schedule one nest with the first rule that applies; returns the rule's name ("bound" for
    a nest that already has GPU bindings, which is left as it is)."""
    if any(isinstance(op, ForOp) and op.kind.data == "bound" for op in root.walk()):
        return "bound"
    if isinstance(root, BlockOp):
        single_thread(root)
        return "single"
    nest = analyze(root)
    if isinstance(nest, Reduction):
        if schedule_mma_gemm(nest, config):
            return "mma-gemm"
        if schedule_gemm(nest, config):
            return "gemm"
        if _tree_worthy(nest, config) and schedule_tree_reduction(nest, config):
            return "tree-reduction"
        bind_spatial(nest.spatial, config)
        return "thread-per-output"
    if isinstance(nest, Elementwise):
        bind_spatial(nest.spatial, config)
        return "elementwise"
    bare = bare_reduction(root)
    if bare is not None and schedule_tree_reduction(bare, config):
        return "tree-reduction"
    single_thread(root)
    return "single"


def single_thread(op: Operation) -> ForOp:
    """Wrap `op` in a trip-1 loop bound to threadIdx.x (a one-thread kernel)."""
    return wrap_in_bound_loops([op], [("single", "threadIdx.x")], *_zero_one(op))


def _zero_one(anchor: Operation) -> tuple[SSAValue, SSAValue]:
    """The index constants 0 and 1 before the nest root of `anchor`."""
    return index_constant(0, anchor), index_constant(1, anchor)


def bind_spatial(loops: Sequence[ForOp], config: GpuScheduleConfig) -> None:
    """Fuse a spatial band and map it onto a grid-stride loop of blocks of threads."""
    loop = _fuse_band(loops)
    trip = loop.trip_count()
    assert trip is not None
    if trip <= config.threads:
        bind_spatial_loop(loop, "threadIdx.x")
        return
    blocks = min(-(-trip // config.threads), config.max_blocks)
    _, block_loop, thread_loop = split(loop, [blocks, config.threads])
    bind_spatial_loop(block_loop, "blockIdx.x")
    bind_spatial_loop(thread_loop, "threadIdx.x")


def bind_spatial_loop(loop: ForOp, thread: str) -> None:
    """Bind a loop of a nest's spatial band (or a piece of one made by fuse and split) to a GPU
    axis. The rules only bind such loops: every block of the nest uses the axis as a spatial
    one, so the iterations write disjoint elements. (The `bind` primitive checks that from the
    store indices, which after `fuse` go through `divui`/`remui` it does not analyse.)"""
    from dlc.rewrites.schedule.common import axis_iteration_kinds, require_kind
    from xdsl.dialects.builtin import StringAttr

    require_kind(loop, ("serial",), "bind")
    if "reduction" in axis_iteration_kinds(loop):
        raise ScheduleError("cannot bind: expected a spatial axis, found a reduction axis", loop)
    loop.properties["kind"] = StringAttr("bound")
    loop.properties["thread"] = StringAttr(thread)


def _fuse_band(loops: Sequence[ForOp]) -> ForOp:
    """Fuse a perfectly nested band into one loop, innermost pair first (the index arithmetic
    a fusion adds then stays inside the loop being fused next)."""
    loop = loops[-1]
    for outer in reversed(loops[:-1]):
        loop = fuse(outer, loop)
    return loop


# ----------------------------------------------------------------------------------------------
# Cloning a nest's computation into the scheduled one
# ----------------------------------------------------------------------------------------------


class Cloner:
    """Clones ops of an old nest into a new place, mapping the old induction variables to new
    values and cloning the pure ops (index arithmetic, constants) they depend on."""

    def __init__(self, old_root: Operation, mapping: dict[SSAValue, SSAValue], at: IRBuilder):
        self.old_root = old_root
        self.mapping = dict(mapping)
        self.at = at

    def value(self, value: SSAValue) -> SSAValue:
        if value in self.mapping:
            return self.mapping[value]
        owner = value.owner
        if isinstance(owner, Block):
            holder = owner.parent_op()
            if holder is not None and (holder is self.old_root or
                                       self.old_root.is_ancestor(holder)):
                raise ScheduleError(
                    "cannot clone: a value depends on a loop variable with no new value", holder
                )
            return value
        if not (owner is self.old_root or self.old_root.is_ancestor(owner)):
            return value
        if not is_pure(owner):
            raise ScheduleError(f"cannot clone: expected pure ops, found '{owner.name}'", owner)
        clone = owner.clone(value_mapper={v: self.value(v) for v in owner.operands})
        self.at.insert(clone)
        for old, new in zip(owner.results, clone.results, strict=True):
            self.mapping[old] = new
        return self.mapping[value]

    def op(self, op: Operation) -> Operation:
        """A clone of `op` (with its regions) appended where the cloner inserts."""
        external: dict[SSAValue, SSAValue] = {}
        for nested in op.walk():
            for operand in nested.operands:
                if _defined_inside(operand, op) or operand in external:
                    continue
                external[operand] = self.value(operand)
        clone = op.clone(value_mapper=dict(external))
        self.at.insert(clone)
        for old, new in zip(op.results, clone.results, strict=True):
            self.mapping[old] = new
        return clone


def _defined_inside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    if isinstance(owner, Block):
        holder = owner.parent_op()
        return holder is not None and (holder is op or op.is_ancestor(holder))
    return owner is op or op.is_ancestor(owner)


# ----------------------------------------------------------------------------------------------
# Reductions: what the update computes
# ----------------------------------------------------------------------------------------------

COMBINERS: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.MulfOp, arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp,
    arith.MinnumfOp, arith.AddiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp, arith.MaxUIOp,
    arith.MinUIOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp,
)
"""Associative and commutative ops an update may accumulate with (so a tree may reorder it)."""


def identity(combiner: Operation, element: Attribute) -> Attribute | None:
    """The identity element of a combiner for `element` (the start of a partial result)."""
    if isinstance(element, AnyFloat):
        values: dict[type[Operation], float] = {
            arith.AddfOp: 0.0, arith.MulfOp: 1.0, arith.MaximumfOp: -math.inf,
            arith.MaxnumfOp: -math.inf, arith.MinimumfOp: math.inf, arith.MinnumfOp: math.inf,
        }
        value = values.get(type(combiner))
        return None if value is None else FloatAttr(value, element)
    if isinstance(element, IntegerType):
        width = element.width.data
        signed_min, signed_max = -(2 ** (width - 1)), 2 ** (width - 1) - 1
        ints: dict[type[Operation], int] = {
            arith.AddiOp: 0, arith.OrIOp: 0, arith.XOrIOp: 0, arith.MaxUIOp: 0, arith.MuliOp: 1,
            arith.AndIOp: -1, arith.MinUIOp: -1, arith.MaxSIOp: signed_min,
            arith.MinSIOp: signed_max,
        }
        number = ints.get(type(combiner))
        if number is None:
            return None
        return IntegerAttr(number, element) if width > 1 else IntegerAttr(number & 1, element)
    return None


@dataclass
class Update:
    """An update block `home[I] = combine(home[I], x)` taken apart.

    Attributes:
        block: the update block.
        load: the load of the accumulator `home[I]`.
        combine: the combining op.
        x_index: which operand of `combine` is the new value `x`.
        slice: the ops of the block that compute `x` (in order).
        element: the element type of the accumulator.
        identity: the combiner's identity for the element type.
    """

    block: BlockOp
    load: LoadOp
    combine: Operation
    x_index: int
    slice: list[Operation]
    element: Attribute
    identity: Attribute

    @property
    def x(self) -> SSAValue:
        return self.combine.operands[self.x_index]


def match_update(update: BlockOp, home: SSAValue, reduction: Sequence[ForOp]) -> Update | None:
    """The update's parts, or None if it is not one load, one combine and one store of `home`
    with the reduction loops used only to compute `x`."""
    ops = [op for op in update.body.block.ops if not isinstance(op, YieldOp)]
    stores = [op for op in ops if isinstance(op, StoreOp)]
    loads = [op for op in ops if isinstance(op, LoadOp) and op.memref is home]
    if len(stores) != 1 or stores[0].memref is not home or len(loads) != 1:
        return None
    store, load = stores[0], loads[0]
    combine = store.value.owner
    if not isinstance(combine, COMBINERS) or list(store.indices) != list(load.indices):
        return None
    operands = list(combine.operands)
    if operands.count(load.result) != 1:
        return None
    x_index = 1 - operands.index(load.result)
    x = operands[x_index]
    slice_ops = _backward_slice(x, update)
    if load in slice_ops or any(isinstance(op, StoreOp) or op.regions for op in slice_ops):
        return None
    ivs = {loop.induction_var for loop in reduction}
    rest = [op for op in update.walk() if op not in slice_ops and op is not update]
    if any(operand in ivs for op in rest for operand in op.operands):
        return None
    element = load.result.type
    unit = identity(combine, element)
    if unit is None:
        return None
    return Update(update, load, combine, x_index, slice_ops, element, unit)


def _backward_slice(value: SSAValue, scope: Operation) -> list[Operation]:
    """The ops inside `scope` that `value` depends on, in program order."""
    found: set[Operation] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        owner = current.owner
        if not isinstance(owner, Operation) or owner in found or not scope.is_ancestor(owner):
            continue
        found.add(owner)
        pending.extend(owner.operands)
    return [op for op in scope.walk() if op in found]


def _unit_extents(loops: Sequence[ForOp]) -> list[int] | None:
    extents = []
    for loop in loops:
        bounds = loop.constant_bounds()
        if bounds is None or bounds[0] != 0 or bounds[2] != 1:
            return None
        extents.append(bounds[1])
    return extents


def _combine(update: Update, acc: SSAValue, value: SSAValue, at: IRBuilder) -> SSAValue:
    """A new op of the update's combiner kind on (acc, value), in the original operand order."""
    operands = [acc, value] if update.x_index == 1 else [value, acc]
    op = type(update.combine).create(
        operands=operands,
        result_types=[update.element],
        properties=dict(update.combine.properties),
        attributes=dict(update.combine.attributes),
    )
    return at.value(op)


def _replace_x(update: Update, new_x: Callable[[IRBuilder], SSAValue]) -> None:
    """Make the update combine the accumulator with `new_x` (built before the combine) instead of
    `x`, dropping the ops that computed `x`."""
    at = IRBuilder.before(update.combine, anchor=update.block)
    value = new_x(at)
    update.combine.operands[update.x_index] = value
    for op in reversed(update.slice):
        if all(not result.uses for result in op.results):
            op.detach()
            op.erase()
    _refresh_buffers(update.block)
    update.block.properties["reduction_axes"] = _names([])


def _names(names: Sequence[str]) -> Attribute:
    from xdsl.dialects.builtin import ArrayAttr, StringAttr

    return ArrayAttr([StringAttr(name) for name in names])


def _refresh_buffers(block: BlockOp) -> None:
    from dlc.rewrites.schedule.common import set_block_buffers

    writes = [b for b in block.writes if any(
        isinstance(op, StoreOp) and op.memref is b for op in block.walk())]
    for op in block.walk():
        if isinstance(op, StoreOp) and not _defined_inside(op.memref, block) \
                and op.memref not in writes:
            writes.append(op.memref)
    reads: list[SSAValue] = []
    for op in block.walk():
        if isinstance(op, LoadOp | MatrixLoadOp) and not _defined_inside(op.memref, block) \
                and op.memref not in reads and op.memref not in writes:
            reads.append(op.memref)
    set_block_buffers(block, reads, writes)


# ----------------------------------------------------------------------------------------------
# Tree reduction
# ----------------------------------------------------------------------------------------------


def _tree_worthy(nest: Reduction, config: GpuScheduleConfig) -> bool:
    reduction = _unit_extents(nest.reduction)
    spatial = _unit_extents(nest.spatial)
    if reduction is None or spatial is None:
        return False
    extent, outputs = math.prod(reduction), math.prod(spatial)
    return extent >= config.tree_min_extent and (outputs <= config.max_blocks or
                                                 extent >= 8 * config.threads)


def schedule_tree_reduction(nest: Reduction, config: GpuScheduleConfig) -> bool:
    """One block per output, a tree of threads over the reduction (see the module doc)."""
    extents = _unit_extents(nest.reduction)
    update = match_update(nest.update, nest.home, nest.reduction)
    if extents is None or update is None or _unit_extents(nest.spatial) is None:
        return False
    reduction_root = nest.reduction[0]
    if nest.spatial:
        spatial = _fuse_band(nest.spatial)
        trip = spatial.trip_count()
        assert trip is not None
        if trip > config.max_blocks:
            spatial = split(spatial, [config.max_blocks])[1]
        bind_spatial_loop(spatial, "blockIdx.x")
    else:  # one block: the partial results and the tree must share one kernel
        wrap_in_bound_loops([reduction_root], [("single_block", "blockIdx.x")],
                            *_zero_one(reduction_root))
    extent = math.prod(extents)
    threads = min(config.threads, max(config.warp_size, 1 << max(0, (extent - 1).bit_length())))
    at = IRBuilder.before(reduction_root, anchor=reduction_root)
    name = update.block.block_name.data
    shared = at.value(AllocOp(MemRefType(update.element, [threads]), "shared"), f"{name}_red")
    _partial_sums(nest, update, extents, threads, shared, at)
    _tree_steps(update, threads, shared, at)
    _final(nest, update, shared, at)
    return True


def _partial_sums(
    nest: Reduction, update: Update, extents: list[int], threads: int, shared: SSAValue,
    at: IRBuilder,
) -> None:
    name = update.block.block_name.data
    thread_loop, inside = at.thread_loop(threads, f"{name}.tx", "threadIdx.x")
    t = thread_loop.induction_var
    partial = inside.value(AllocOp(MemRefType(update.element, [1]), "local"), "partial")
    zero = inside.const(0)

    def init(b: IRBuilder) -> None:
        unit = b.value(arith.ConstantOp(update.identity, update.element))
        b.insert(StoreOp(unit, partial, [zero]))

    inside.block(f"{name}.rf_init", init)
    strided, body = inside.loop(t, math.prod(extents), f"{name}.rf", step=threads)
    ivs = body.decompose(strided.induction_var, extents)

    def accumulate(b: IRBuilder) -> None:
        mapping = {loop.induction_var: iv for loop, iv in zip(nest.reduction, ivs, strict=True)}
        cloner = Cloner(nest.reduction[0], mapping, b)
        for op in update.slice:
            cloner.op(op)
        acc = b.value(LoadOp(partial, [zero]))
        b.insert(StoreOp(_combine(update, acc, cloner.value(update.x), b), partial, [zero]))

    body.block(name + ".rf", accumulate)

    def store(b: IRBuilder) -> None:
        b.insert(StoreOp(b.value(LoadOp(partial, [zero])), shared, [t]))

    inside.block(f"{name}.rf_store", store)


def _tree_steps(update: Update, threads: int, shared: SSAValue, at: IRBuilder) -> None:
    name = update.block.block_name.data
    half = threads // 2
    while half >= 1:
        loop, inside = at.thread_loop(half, f"{name}.tree{half}", "threadIdx.x")
        t, offset = loop.induction_var, half

        def step(b: IRBuilder, t: SSAValue = t, offset: int = offset) -> None:
            mine = b.value(LoadOp(shared, [t]))
            other = b.value(LoadOp(shared, [b.add(t, offset)]))
            b.insert(StoreOp(_combine(update, mine, other, b), shared, [t]))

        inside.block(f"{name}.tree", step)
        half //= 2


def _final(nest: Reduction, update: Update, shared: SSAValue, at: IRBuilder) -> None:
    _, inside = at.thread_loop(1, f"{update.block.block_name.data}.final", "threadIdx.x")
    moved: list[Operation] = [
        op for op in (nest.alloc, nest.init) if op is not None
    ]
    reduction_root = nest.reduction[0]
    update.block.detach()
    moved.append(update.block)
    moved += list(nest.epilogues)
    if nest.dealloc is not None:
        moved.append(nest.dealloc)
    for op in moved:
        if op.parent is not None:
            op.detach()
        inside.insert(op)
    _replace_x(update, lambda b: b.value(LoadOp(shared, [b.const(0)])))
    reduction_root.detach()
    reduction_root.erase()


# ----------------------------------------------------------------------------------------------
# GEMM: block tiling in shared memory, thread tiling in registers
# ----------------------------------------------------------------------------------------------


@dataclass
class GemmShape:
    """A reduction `C += A * B` seen as a (batched) GEMM.

    Attributes:
        update: the update taken apart; `x` is `mulf(a_load, b_load)`.
        a_load, b_load: the loads of the two factors.
        m_loops, n_loops, batch_loops: the spatial loops only A depends on, only B depends on,
            and the others.
        m, n, k, batch: the extents (products of the loops' trip counts).
        widened: whether the factors are loads widened by `arith.extf` (an f16 or bf16 GEMM
            accumulating in f32), not loads of the accumulator's type.
    """

    update: Update
    a_load: LoadOp
    b_load: LoadOp
    m_loops: list[ForOp]
    n_loops: list[ForOp]
    batch_loops: list[ForOp]
    m: int
    n: int
    k: int
    batch: int
    widened: bool = False


def match_gemm(nest: Reduction) -> GemmShape | None:
    """The GEMM view of a reduction nest, or None."""
    update = match_update(nest.update, nest.home, nest.reduction)
    spatial_extents = _unit_extents(nest.spatial)
    reduction_extents = _unit_extents(nest.reduction)
    if update is None or spatial_extents is None or reduction_extents is None:
        return None
    product = update.x.owner
    if not isinstance(product, arith.MulfOp) or not isinstance(update.combine, arith.AddfOp):
        return None
    factors = [operand.owner for operand in product.operands]
    widened = [isinstance(factor, arith.ExtFOp) for factor in factors]
    loads = [factor.input.owner if isinstance(factor, arith.ExtFOp) else factor
             for factor in factors]
    if not all(isinstance(load, LoadOp) for load in loads) or loads[0] is loads[1]:
        return None
    if any(widened) and not all(widened):
        return None
    a_load, b_load = loads  # type: ignore[misc]
    others = [op for op in update.slice if isinstance(op, LoadOp) and op not in loads]
    if others or any(not is_pure(op) for op in update.slice if op not in loads):
        return None
    spatial_ivs = [loop.induction_var for loop in nest.spatial]
    a_uses = _depends(a_load, update, spatial_ivs)
    b_uses = _depends(b_load, update, spatial_ivs)
    m_loops = [lp for lp, a, b in zip(nest.spatial, a_uses, b_uses, strict=True) if a and not b]
    n_loops = [lp for lp, a, b in zip(nest.spatial, a_uses, b_uses, strict=True) if b and not a]
    if not m_loops or not n_loops:
        return None
    batch_loops = [lp for lp in nest.spatial if lp not in m_loops and lp not in n_loops]
    return GemmShape(
        update, a_load, b_load, m_loops, n_loops, batch_loops,  # type: ignore[arg-type]
        math.prod(map(_trip, m_loops)), math.prod(map(_trip, n_loops)),
        math.prod(reduction_extents), math.prod(map(_trip, batch_loops)), all(widened),
    )


def _trip(loop: ForOp) -> int:
    trip = loop.trip_count()
    assert trip is not None
    return trip


def _depends(load: LoadOp, update: Update, ivs: list[BlockArgument]) -> list[bool]:
    """For each induction variable, whether the load's indices depend on it (through pure ops
    anywhere in the nest)."""
    from dlc.rewrites.schedule.common import depends_on

    return [any(depends_on(index, {iv}) for index in load.indices) for iv in ivs]


@dataclass(frozen=True)
class GemmTiles:
    """Tile sizes: a block computes bm x bn outputs with ty x tx threads of tm x tn each."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int
    ty: int
    tx: int


def gemm_tiles(shape: GemmShape, config: GpuScheduleConfig, element_bytes: int) -> GemmTiles | None:
    """The largest tiles that the problem fills and shared memory holds, or None."""
    if min(shape.m, shape.n) < config.min_gemm_extent:
        return None
    ty, tx = config.tile_threads

    def per_thread(extent: int, threads: int) -> int:
        size = 1
        while size * 2 <= config.max_thread_tile and threads * size * 2 <= extent:
            size *= 2
        return size

    tm, tn = per_thread(shape.m, ty), per_thread(shape.n, tx)

    def blocks(tm: int, tn: int) -> int:
        return shape.batch * -(-shape.m // (ty * tm)) * -(-shape.n // (tx * tn))

    while blocks(tm, tn) < config.min_gemm_blocks and max(tm, tn) > 1:
        if tm >= tn:
            tm //= 2
        else:
            tn //= 2
    bm, bn, bk = ty * tm, tx * tn, config.block_k
    if (bm * bk) % (ty * tx) or (bn * bk) % (ty * tx):
        bk = max(bk, (ty * tx) // math.gcd(bm, bn))
    if (bm * bk) % (ty * tx) or (bn * bk) % (ty * tx):
        return None
    if (bm + bn) * bk * element_bytes > config.shared_memory_bytes:
        return None
    return GemmTiles(bm, bn, bk, tm, tn, ty, tx)


def schedule_gemm(nest: Reduction, config: GpuScheduleConfig) -> bool:
    """Tile a GEMM-like reduction through shared memory and registers (see the module doc)."""
    shape = match_gemm(nest)
    if shape is None or shape.widened:
        return False
    element = shape.update.element
    if not isinstance(element, AnyFloat):
        return False
    tiles = gemm_tiles(shape, config, max(1, element.bitwidth // 8))
    if tiles is None:
        return False
    GemmBuilder(nest, shape, tiles).build()
    return True


class GemmBuilder:
    """Builds the tiled GEMM nest in place of the original one."""

    def __init__(self, nest: Reduction, shape: GemmShape, tiles: GemmTiles) -> None:
        self.nest = nest
        self.shape = shape
        self.t = tiles
        self.root = nest.spatial[0]
        self.name = shape.update.block.block_name.data
        self.element = shape.update.element

    def _grid(self, bm: int, bn: int) -> IRBuilder:
        """The block loops (batch, M / bm, N / bn) in place of the nest; sets `batch_map`,
        `m0`, `n0`; returns a builder of their body."""
        root, shape = self.root, self.shape
        top = IRBuilder.before(root, anchor=root)
        batch_ivs: list[SSAValue] = []
        at = top
        batch_loop: ForOp | None = None
        if shape.batch > 1:
            batch_loop, at = top.loop(0, shape.batch, f"{self.name}.batch", "bound", "blockIdx.z")
        by_loop, at = at.loop(0, -(-shape.m // bm), f"{self.name}.by", "bound", "blockIdx.y")
        bx_loop, at = at.loop(0, -(-shape.n // bn), f"{self.name}.bx", "bound", "blockIdx.x")
        batch_extents = [_trip(lp) for lp in shape.batch_loops]
        if batch_loop is not None:
            batch_ivs = at.decompose(batch_loop.induction_var, batch_extents)
        else:
            batch_ivs = [at.const(0) for _ in shape.batch_loops]
        self.batch_map = dict(zip([lp.induction_var for lp in shape.batch_loops], batch_ivs,
                                  strict=True))
        self.m0 = at.mul(by_loop.induction_var, bm)
        self.n0 = at.mul(bx_loop.induction_var, bn)
        return at

    def build(self) -> None:
        root, shape, t = self.root, self.shape, self.t
        at = self._grid(t.bm, t.bn)
        a_tile = at.value(AllocOp(MemRefType(self.element, [t.bk, t.bm]), "shared"), "a_tile")
        b_tile = at.value(AllocOp(MemRefType(self.element, [t.bk, t.bn]), "shared"), "b_tile")
        acc = at.value(AllocOp(MemRefType(self.element, [t.ty, t.tx, t.tm, t.tn]), "local"),
                       "acc")
        self._init_acc(at, acc)
        k_loop, inner = at.loop(0, -(-shape.k // t.bk), f"{self.name}.ko")
        k0 = inner.mul(k_loop.induction_var, t.bk)
        self._copy(inner, k0, a_tile, is_a=True)
        self._copy(inner, k0, b_tile, is_a=False)
        self._accumulate(inner, acc, a_tile, b_tile)
        self._epilogue(at, acc)
        root.detach()
        root.erase()

    def _threads(self, at: IRBuilder, name: str) -> tuple[SSAValue, SSAValue, IRBuilder]:
        ty_loop, inner = at.thread_loop(self.t.ty, f"{self.name}.{name}.ty", "threadIdx.y")
        tx_loop, inner = inner.thread_loop(self.t.tx, f"{self.name}.{name}.tx", "threadIdx.x")
        return ty_loop.induction_var, tx_loop.induction_var, inner

    def _init_acc(self, at: IRBuilder, acc: SSAValue) -> None:
        ty, tx, inner = self._threads(at, "init")
        i_loop, inner = inner.loop(0, self.t.tm, f"{self.name}.ti", "unrolled")
        j_loop, inner = inner.loop(0, self.t.tn, f"{self.name}.tj", "unrolled")

        def zero(b: IRBuilder) -> None:
            value = b.value(arith.ConstantOp(FloatAttr(0.0, self.element), self.element))
            b.insert(StoreOp(value, acc, [ty, tx, i_loop.induction_var, j_loop.induction_var]))

        inner.block(f"{self.name}.acc_init", zero)

    def _copy(self, at: IRBuilder, k0: SSAValue, tile: SSAValue, is_a: bool) -> None:
        """Each thread copies (tile size / threads) elements of the A (or B) tile into shared
        memory; elements past M, N or K are zeros."""
        t = self.t
        width = t.bm if is_a else t.bn
        count = t.bk * width // (t.ty * t.tx)
        which = "a" if is_a else "b"
        ty, tx, inner = self._threads(at, f"load_{which}")
        e_loop, inner = inner.loop(0, count, f"{self.name}.load_{which}")

        def copy(b: IRBuilder) -> None:
            linear = b.add(b.mul(e_loop.induction_var, t.ty * t.tx),
                           b.add(b.mul(ty, t.tx), tx))
            if is_a:  # k fastest: coalesced along the reduction axis of A
                row, kk = b.div(linear, t.bk), b.rem(linear, t.bk)
            else:  # n fastest: coalesced along N
                kk, row = b.div(linear, t.bn), b.rem(linear, t.bn)
            value = self._factor(b, is_a, b.add(self.m0 if is_a else self.n0, row), b.add(k0, kk))
            b.insert(StoreOp(value, tile, [kk, row]))

        inner.block(f"{self.name}.load_{which}", copy)

    def _factor(self, b: IRBuilder, is_a: bool, outer: SSAValue, k: SSAValue) -> SSAValue:
        """The element of A at (m, k) = (`outer`, `k`) (of B at (k, n) when not `is_a`), as the
        nest loads it; zero past M (N) or K."""
        shape = self.shape
        limit, loops = (shape.m, shape.m_loops) if is_a else (shape.n, shape.n_loops)
        inside = b.value(arith.AndIOp(
            b.value(arith.CmpiOp(outer, b.const(limit), "ult")),
            b.value(arith.CmpiOp(k, b.const(shape.k), "ult"))))
        outer_c = b.value(arith.MinUIOp(outer, b.const(limit - 1)))
        k_c = b.value(arith.MinUIOp(k, b.const(shape.k - 1)))
        load = shape.a_load if is_a else shape.b_load
        value = b.value(LoadOp(load.memref, self._factor_indices(b, is_a, outer_c, k_c)))
        element = value.type
        zero = b.value(arith.ConstantOp(FloatAttr(0.0, element), element))  # type: ignore[arg-type]
        return b.value(arith.SelectOp(inside, value, zero))

    def _factor_indices(self, b: IRBuilder, is_a: bool, outer: SSAValue, k: SSAValue
                        ) -> list[SSAValue]:
        """The indices at which the nest loads A at (m, k) = (`outer`, `k`) (B at (k, n) when
        not `is_a`), both in range."""
        shape = self.shape
        loops = shape.m_loops if is_a else shape.n_loops
        mapping = dict(self.batch_map)
        mapping.update(zip([lp.induction_var for lp in loops],
                           b.decompose(outer, [_trip(lp) for lp in loops]), strict=True))
        mapping.update(zip([lp.induction_var for lp in self.nest.reduction],
                           b.decompose(k, [_trip(lp) for lp in self.nest.reduction]),
                           strict=True))
        load = shape.a_load if is_a else shape.b_load
        cloner = Cloner(self.root, mapping, b)
        return [cloner.value(index) for index in load.indices]

    def _accumulate(self, at: IRBuilder, acc: SSAValue, a_tile: SSAValue, b_tile: SSAValue) -> None:
        t = self.t
        ty, tx, inner = self._threads(at, "mma")
        k_loop, inner = inner.loop(0, t.bk, f"{self.name}.ki")
        i_loop, inner = inner.loop(0, t.tm, f"{self.name}.mi", "unrolled")
        j_loop, inner = inner.loop(0, t.tn, f"{self.name}.ni")
        kk, i, j = k_loop.induction_var, i_loop.induction_var, j_loop.induction_var
        a_first = self.shape.update.x.owner.operands[0].owner is self.shape.a_load  # type: ignore[union-attr]

        def mma(b: IRBuilder) -> None:
            a = b.value(LoadOp(a_tile, [kk, b.add(b.mul(ty, t.tm), i)]))
            bv = b.value(LoadOp(b_tile, [kk, b.add(b.mul(tx, t.tn), j)]))
            current = b.value(LoadOp(acc, [ty, tx, i, j]))
            # acc + a * b, contracted (one rounding): the update's mulf and addf as one fma
            fused = math_dialect.FmaOp(a, bv, current) if a_first else math_dialect.FmaOp(
                bv, a, current)
            b.insert(StoreOp(b.value(fused), acc, [ty, tx, i, j]))

        inner.block(f"{self.name}.mma", mma)
        if t.tn in (2, 4, 8, 16):
            try:
                vectorize(j_loop)
            except ScheduleError:
                j_loop.properties["kind"] = _string("unrolled")
        else:
            j_loop.properties["kind"] = _string("unrolled")

    def _epilogue(self, at: IRBuilder, acc: SSAValue) -> None:
        """Per output element of the thread's sub-tile (inside M and N): the original init,
        the update with the accumulated value, and the epilogues."""
        t = self.t
        ty, tx, inner = self._threads(at, "store")
        # Constant trip counts (unrolled: the accumulator stays in registers); a trip-0/1 loop
        # guards the elements past M or N when the tiles do not divide them.
        i_loop, inner = inner.loop(0, t.tm, f"{self.name}.si", "unrolled")
        j_loop, inner = inner.loop(0, t.tn, f"{self.name}.sj", "unrolled")
        i, j = i_loop.induction_var, j_loop.induction_var
        m = inner.add(inner.add(self.m0, inner.mul(ty, t.tm)), i)
        n = inner.add(inner.add(self.n0, inner.mul(tx, t.tn)), j)
        self._write_back(inner, m, n, t.bm, t.bn,
                         lambda b: b.value(LoadOp(acc, [ty, tx, i, j])))

    def _write_back(self, inner: IRBuilder, m: SSAValue, n: SSAValue, bm: int, bn: int,
                    x: Callable[[IRBuilder], SSAValue]) -> None:
        """At output element (m, n) of a `bm` x `bn` block tile: a trip-0/1 loop guarding the
        elements past M or N when the tiles do not divide them, then the original init, the
        update combining the accumulated value `x` and the epilogues, cloned at (m, n)."""
        shape, nest = self.shape, self.nest
        if shape.m % bm or shape.n % bn:
            inside = inner.value(arith.AndIOp(
                inner.value(arith.CmpiOp(m, inner.const(shape.m), "ult")),
                inner.value(arith.CmpiOp(n, inner.const(shape.n), "ult"))))
            trip = inner.value(arith.SelectOp(inside, inner.const(1), inner.const(0)))
            _, inner = inner.loop(0, trip, f"{self.name}.in_bounds")
        mapping = dict(self.batch_map)
        mapping.update(zip([lp.induction_var for lp in shape.m_loops],
                           inner.decompose(m, [_trip(lp) for lp in shape.m_loops]), strict=True))
        mapping.update(zip([lp.induction_var for lp in shape.n_loops],
                           inner.decompose(n, [_trip(lp) for lp in shape.n_loops]), strict=True))
        cloner = Cloner(self.root, mapping, inner)
        statements: list[Operation] = [op for op in (nest.alloc, nest.init) if op is not None]
        statements += [shape.update.block, *nest.epilogues]
        if nest.dealloc is not None:
            statements.append(nest.dealloc)
        for op in statements:
            if op is shape.update.block:
                self._final_update(cloner, x)
            else:
                cloner.op(op)

    def _final_update(self, cloner: Cloner, x: Callable[[IRBuilder], SSAValue]) -> Operation:
        """A clone of the update block combining the accumulator with `x` (the accumulated
        sum of the products) instead of one product."""
        update = self.shape.update
        ivs = {lp.induction_var for lp in self.nest.reduction}
        for op in update.slice:  # the reduction's variables are gone: x comes from the tile
            for operand in op.operands:
                if operand in ivs:
                    cloner.mapping[operand] = cloner.at.const(0)
        clone = cloner.op(update.block)
        assert isinstance(clone, BlockOp)
        new = match_update(clone, cloner.value(self.nest.home), [])
        assert new is not None, "a clone of a matched update matches"
        _replace_x(new, x)
        return clone


# ----------------------------------------------------------------------------------------------
# GEMM on tensor cores: warp tiles of PTX mma.sync fragments
# ----------------------------------------------------------------------------------------------

MMA_WARP_FRAGMENTS = (2, 4)
"""The mma fragments (16 x 8 each) a warp computes along M and N at most: a 32 x 32 warp
tile."""

MMA_WARPS = (2, 2)
"""The warps of an mma block along M and N at most (128 threads: a 64 x 64 block tile)."""


@dataclass(frozen=True)
class MmaTiles:
    """An mma GEMM block: wy x wx warps, each computing fm x fn fragments of the intrinsic's
    m x n tile, the reduction staged bk at a time (a multiple of the intrinsic's k)."""

    wy: int
    wx: int
    fm: int
    fn: int
    bk: int
    m: int
    n: int
    k: int
    stages: int = 1
    """Shared-memory stages of the A and B tiles (1: no pipeline)."""
    contiguous: tuple[str, str] = ("k", "k")
    """Per factor (A, B), the axis along the rows of its tile: "k" ([rows][k]) or "outer"
    ([k][rows]: M for A, N for B), the one contiguous in the global buffer it is copied from
    (a pipelined tile; the others are [rows][k])."""

    @property
    def bm(self) -> int:
        return self.wy * self.fm * self.m

    @property
    def bn(self) -> int:
        return self.wx * self.fn * self.n

    @property
    def threads(self) -> int:
        return self.wy * self.wx * 32

    @property
    def row(self) -> int:
        """The row length (elements) of the A and B tiles in shared memory: bk, padded to an
        odd number of 16-byte units (`MatrixLoad.ROWS` 16-bit elements) so that the 8 rows one
        ldmatrix phase reads (16 bytes each) fall on distinct shared memory banks: rows 16 * odd
        bytes apart cover every 16-byte slot of the banks' 128-byte cycle once (32 or 64 bytes
        apart, 4 or 2 rows would share a slot: a 4- or 2-way bank conflict)."""

        return padded_row(self.bk)

    def tile_shape(self, is_a: bool) -> list[int]:
        """The shape of the A or B tile in shared memory: [stages][rows][k] or [stages][k]
        [rows] (rows padded, `padded_row`); without a pipeline [rows][k]."""
        rows = self.bm if is_a else self.bn
        if self.stages == 1:
            return [rows, self.row]
        if self.contiguous[0 if is_a else 1] == "k":
            return [self.stages, rows, self.row]
        return [self.stages, self.bk, padded_row(rows)]


def padded_row(length: int) -> int:
    """`length` 16-bit elements padded to an odd number of 16-byte units (see `MmaTiles.row`)."""
    from dlc.target.intrinsics import MatrixLoad

    units = -(-length // MatrixLoad.ROWS)
    return units * MatrixLoad.ROWS + (0 if units % 2 else MatrixLoad.ROWS)


def mma_intrinsic(shape: GemmShape, config: GpuScheduleConfig) -> Intrinsic | None:
    """The warp-level intrinsic of the library a GEMM can run on with this target (its factor
    types, its f32 accumulator, the target's features), or None."""
    from dlc.target.intrinsics import INTRINSICS

    if not shape.widened or not isinstance(shape.update.element, Float32Type):
        return None
    factor = shape.a_load.result.type
    for entry in INTRINSICS.values():
        if not entry.warp_level or entry.missing_features(config.features):
            continue
        acc, a, b = entry.operands
        if acc.element != "f32" or a.element != b.element:
            continue
        if intrinsic_element_type(ELEMENT_TYPES[a.element]) == factor:
            return entry
    return None


def mma_tiles(shape: GemmShape, entry: Intrinsic, config: GpuScheduleConfig) -> MmaTiles | None:
    """The largest block tile the problem fills (warps and fragments halved while a block
    would cover more than the problem, or the grid has too few blocks), or None when M or N is
    below one fragment or shared memory cannot hold the tiles."""
    extents = entry.extents
    em, en, ek = extents["i"], extents["j"], extents["k"]
    if shape.m < em or shape.n < en:
        return None

    def fit(parts: list[int], extent: int, unit: int) -> None:
        while parts[0] * parts[1] * unit > extent and parts[0] * parts[1] > 1:
            parts[1 if parts[1] > 1 else 0] //= 2

    rows, cols = [MMA_WARPS[0], MMA_WARP_FRAGMENTS[0]], [MMA_WARPS[1], MMA_WARP_FRAGMENTS[1]]
    fit(rows, shape.m, em)
    fit(cols, shape.n, en)

    def blocks() -> int:
        return shape.batch * -(-shape.m // (rows[0] * rows[1] * em)) * \
            -(-shape.n // (cols[0] * cols[1] * en))

    while blocks() < config.min_gemm_blocks and rows[1] * cols[1] > 1:
        if rows[1] >= cols[1]:
            rows[1] //= 2
        else:
            cols[1] //= 2
    bk = 2 * ek if shape.k >= 2 * ek else ek
    tiles = MmaTiles(rows[0], cols[0], rows[1], cols[1], bk, em, en, ek)
    element_bytes = 2
    if (tiles.bm * bk) % tiles.threads or (tiles.bn * bk) % tiles.threads or \
            (tiles.bm * tiles.bn) % tiles.threads:
        return None
    shared = (tiles.bm + tiles.bn) * tiles.row * element_bytes + tiles.bm * tiles.bn * 4
    if shared > config.shared_memory_bytes:
        return None
    return tiles


def schedule_mma_gemm(nest: Reduction, config: GpuScheduleConfig) -> bool:
    """Run an f16 (bf16) GEMM accumulating in f32 on tensor cores: warps of `mma.sync` (see
    `MmaGemmBuilder`), where the target has the intrinsic."""
    shape = match_gemm(nest)
    if shape is None:
        return False
    entry = mma_intrinsic(shape, config)
    if entry is None:
        return False
    tiles = mma_tiles(shape, entry, config)
    if tiles is None:
        return False
    tiles = mma_pipeline(nest, shape, tiles, config)
    MmaGemmBuilder(nest, shape, tiles, entry, config.features).build()
    return True


def mma_pipeline(nest: Reduction, shape: GemmShape, tiles: MmaTiles, config: GpuScheduleConfig
                 ) -> MmaTiles:
    """The tiles with `config.pipeline_depth` stages of `cp.async` copies where both factors
    allow 16-byte copies (`async_copy_axis`) and the stages fit in shared memory; else the
    tiles as they are (no pipeline)."""
    from dlc.dialects.loop.ops import ASYNC_COPY_BYTES

    depth = config.pipeline_depth
    if depth < 2 or "sm_80" not in config.features:
        return tiles
    width = ASYNC_COPY_BYTES // 2
    axes = (async_copy_axis(nest, shape, True, width), async_copy_axis(nest, shape, False, width))
    if axes[0] is None or axes[1] is None:
        return tiles
    pipelined = dataclasses.replace(tiles, stages=depth, contiguous=(axes[0], axes[1]))
    elements = sum(math.prod(pipelined.tile_shape(is_a)) for is_a in (True, False))
    if elements * 2 + tiles.bm * tiles.bn * 4 > config.shared_memory_bytes:
        return tiles
    return pipelined


def async_copy_axis(nest: Reduction, shape: GemmShape, is_a: bool, width: int) -> str | None:
    """"k" or "outer" where the factor's load reads a global buffer's last dimension along the
    reduction (K) or along M (N for B), `width` elements at a time in bounds and 16-byte
    aligned (that dimension and the extent along it multiples of `width`, the axis one loop
    indexing the last dimension alone); else None."""
    from dlc.rewrites.gpu_common import buffer_scope
    from dlc.rewrites.schedule.common import depends_on

    load = shape.a_load if is_a else shape.b_load
    memref_type = load.memref.type
    if buffer_scope(load.memref) != "global" or not isinstance(memref_type, MemRefType) or \
            memref_type.get_shape()[-1] % width:
        return None
    candidates = (("k", nest.reduction, shape.k),
                  ("outer", shape.m_loops if is_a else shape.n_loops, shape.m if is_a else shape.n))
    for axis, loops, extent in candidates:
        if len(loops) != 1 or extent % width:
            continue
        iv = loops[0].induction_var
        if load.indices[-1] is iv and not any(depends_on(index, {iv})
                                              for index in load.indices[:-1]):
            return axis
    return None


class MmaGemmBuilder(GemmBuilder):
    """Builds a GEMM of warp-level `mma.sync` tiles in place of the nest.

    A block of wy x wx warps (threadIdx.y: the warp, threadIdx.x: its lane) computes a
    bm x bn tile of the output. Each lane keeps its accumulator fragments in registers
    (`acc_fragments`, a local buffer [warp][lane][fm][fn][element], zeroed first, one slice per
    thread after `target-gpu-compact-private-buffers`). For each bk-slice of the reduction all
    threads copy A (bm x bk, row-major) and B (bn x bk: B transposed, so that both are read
    along k) into shared memory (rows padded, `MmaTiles.row`), elements past M, N or K being
    zeros; then each warp accumulates its fm x fn fragments: a 16 x 8 x 16 nest
    `c[i, j] += extf(a[i, k]) * extf(b[j, k])` on the warp's part of the output tile, which
    `tensorize` replaces by the lanes' fragment loads, one `mma.sync` and the fragment
    stores; the accumulator's accesses then go to the lane's registers, and the factors'
    fragments come from registers too, loaded before the fm x fn nests of each k step by one
    `ldmatrix` per fragment (`loop.matrix_load`, `_load_fragments`). At the end the lanes
    write their fragments into the output tile in shared memory (`c_tile`, at the positions
    of the fragment layout), and the init, update and epilogue blocks run once per output
    element of the tile, on the accumulated value.
    """

    def __init__(self, nest: Reduction, shape: GemmShape, tiles: MmaTiles, entry: Intrinsic,
                 features: frozenset[str]) -> None:
        self.nest = nest
        self.shape = shape
        self.mt = tiles
        self.entry = entry
        self.features = features
        self.root = nest.spatial[0]
        self.name = shape.update.block.block_name.data
        self.element = shape.update.element
        self.factor = shape.a_load.result.type

    def build(self) -> None:
        t = self.mt
        at = self._grid(t.bm, t.bn)
        a_tile = at.value(AllocOp(MemRefType(self.factor, t.tile_shape(True)), "shared"),
                          "a_tile")
        b_tile = at.value(AllocOp(MemRefType(self.factor, t.tile_shape(False)), "shared"),
                          "b_tile")
        c_tile = at.value(AllocOp(MemRefType(self.element, [t.bm, t.bn]), "shared"), "c_tile")
        fragment = self.entry.acc.fragment
        assert fragment is not None
        fragments = at.value(AllocOp(MemRefType(
            self.element, [t.wy * t.wx, 32, t.fm, t.fn, fragment.elements]), "local"),
            "acc_fragments")
        self.factor_fragments = [
            at.value(AllocOp(MemRefType(self.factor, [t.wy * t.wx, 32, count, operand.fragment
                                                      .elements]), "local"), f"{name}_fragments")
            for operand, count, name in ((self.entry.operands[1], t.fm, "a"),
                                         (self.entry.operands[2], t.fn, "b"))
            if operand.fragment is not None]

        def zero(b: IRBuilder, index: list[SSAValue], where: dict[str, SSAValue]) -> None:
            value = b.value(arith.ConstantOp(FloatAttr(0.0, self.element), self.element))
            b.insert(StoreOp(value, fragments, index))

        def write_out(b: IRBuilder, index: list[SSAValue], where: dict[str, SSAValue]) -> None:
            b.insert(StoreOp(b.value(LoadOp(fragments, index)), c_tile,
                             [where["i"], where["j"]]))

        self._each_fragment(at, "acc_init", zero, positions=False)
        tiles = -(-self.shape.k // t.bk)
        if t.stages == 1:
            k_loop, inner = at.loop(0, tiles, f"{self.name}.ko")
            k0 = inner.mul(k_loop.induction_var, t.bk)
            self._stage(inner, k0, a_tile, is_a=True)
            self._stage(inner, k0, b_tile, is_a=False)
            self._warps(inner, a_tile, b_tile, c_tile, fragments, None)
        else:
            self._pipeline(at, tiles, a_tile, b_tile, c_tile, fragments)
        self._each_fragment(at, "acc_out", write_out)
        self._mma_epilogue(at, c_tile)
        self.root.detach()
        self.root.erase()

    def _threads(self, at: IRBuilder, name: str) -> tuple[SSAValue, SSAValue, IRBuilder]:
        warp_loop, inner = at.thread_loop(self.mt.wy * self.mt.wx, f"{self.name}.{name}.warp",
                                          "threadIdx.y")
        lane_loop, inner = inner.thread_loop(32, f"{self.name}.{name}.lane", "threadIdx.x")
        return warp_loop.induction_var, lane_loop.induction_var, inner

    def _warp_origin(self, b: IRBuilder, warp: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The row and column of a warp's part of the block tile."""
        t = self.mt
        return b.mul(b.div(warp, t.wx), t.fm * t.m), b.mul(b.rem(warp, t.wx), t.fn * t.n)

    def _each_fragment(self, at: IRBuilder, name: str, body: Callable[
            [IRBuilder, list[SSAValue], dict[str, SSAValue]], None],
            positions: bool = True) -> None:
        """A block `name` run by every lane for each element of each of its accumulator
        fragments: `body(builder, index in acc_fragments, {"i": row, "j": column} in the
        block tile)`, the position from the fragment layout (empty without `positions`)."""
        t = self.mt
        fragment = self.entry.acc.fragment
        assert fragment is not None
        warp, lane, inner = self._threads(at, name)
        fm_loop, inner = inner.loop(0, t.fm, f"{self.name}.{name}.fm", "unrolled")
        fn_loop, inner = inner.loop(0, t.fn, f"{self.name}.{name}.fn", "unrolled")
        fm, fn = fm_loop.induction_var, fn_loop.induction_var

        def build(b: IRBuilder) -> None:
            if not positions:
                for element in range(fragment.elements):
                    body(b, [warp, lane, fm, fn, b.const(element)], {})
                return
            row0, col0 = self._warp_origin(b, warp)
            origin = {"i": b.add(row0, b.mul(fm, t.m)), "j": b.add(col0, b.mul(fn, t.n))}
            group, thread = b.div(lane, 4), b.mul(b.rem(lane, 4), fragment.thread_scale)
            for element, (group_offset, thread_offset) in enumerate(fragment.offsets):
                where = {fragment.group_axis: b.add(group, group_offset),
                         fragment.thread_axis: b.add(thread, thread_offset)}
                where = {axis: b.value(arith.AddiOp(origin[axis], value))
                         for axis, value in where.items()}
                body(b, [warp, lane, fm, fn, b.const(element)], where)

        inner.block(f"{self.name}.{name}", build)

    def _stage(self, at: IRBuilder, k0: SSAValue, tile: SSAValue, is_a: bool) -> None:
        """All threads copy the A (bm x bk) or B (bn x bk) slice into shared memory: A read
        along k, B along N (coalesced in row-major inputs)."""
        t = self.mt
        width = t.bm if is_a else t.bn
        which = "a" if is_a else "b"
        warp, lane, inner = self._threads(at, f"load_{which}")
        e_loop, inner = inner.loop(0, width * t.bk // t.threads, f"{self.name}.load_{which}")

        def copy(b: IRBuilder) -> None:
            linear = b.add(b.mul(e_loop.induction_var, t.threads), b.add(b.mul(warp, 32), lane))
            if is_a:
                row, kk = b.div(linear, t.bk), b.rem(linear, t.bk)
            else:
                kk, row = b.div(linear, t.bn), b.rem(linear, t.bn)
            value = self._factor(b, is_a, b.add(self.m0 if is_a else self.n0, row), b.add(k0, kk))
            b.insert(StoreOp(value, tile, [row, kk]))

        inner.block(f"{self.name}.load_{which}", copy)

    def _pipeline(self, at: IRBuilder, tiles: int, a_tile: SSAValue, b_tile: SSAValue,
                  c_tile: SSAValue, fragments: SSAValue) -> None:
        """The K tiles through `stages` shared-memory stages: the first stages - 1 tiles'
        copies started (`cp.async`, one group each), then per tile k the copies of tile
        k + stages - 1 into its stage (zeros past K), a commit, a wait leaving stages - 1
        groups pending (tile k has landed), and the warps' mma on tile k's stage; all copies
        finished at the end. `target-gpu-insert-barriers` puts a barrier before the warps
        (after the wait) and before the next copies (the stage they overwrite was read)."""
        from dlc.dialects.loop.ops import AsyncCommitOp, AsyncWaitOp

        stages = self.mt.stages
        for tile in range(stages - 1):
            self._copy(at, at.const(tile), at.const(tile), a_tile, is_a=True)
            self._copy(at, at.const(tile), at.const(tile), b_tile, is_a=False)
            at.insert(AsyncCommitOp())
        k_loop, inner = at.loop(0, tiles, f"{self.name}.ko")
        ko = k_loop.induction_var
        ahead = inner.add(ko, stages - 1)
        stage = inner.rem(ahead, stages)
        self._copy(inner, ahead, stage, a_tile, is_a=True)
        self._copy(inner, ahead, stage, b_tile, is_a=False)
        inner.insert(AsyncCommitOp())
        inner.insert(AsyncWaitOp(stages - 1))
        self._warps(inner, a_tile, b_tile, c_tile, fragments, inner.rem(ko, stages))
        at.insert(AsyncWaitOp(0))

    def _copy(self, at: IRBuilder, tile: SSAValue, stage: SSAValue, buffer: SSAValue,
              is_a: bool) -> None:
        """All threads start the 16-byte copies (`loop.async_copy`) of K tile `tile` of A
        (bm x bk) or B (bn x bk) into stage `stage` of its shared buffer, along the axis
        contiguous in global memory; chunks past M, N or K read nothing (zeros)."""
        from dlc.dialects.loop.ops import ASYNC_COPY_BYTES, AsyncCopyOp

        t, shape = self.mt, self.shape
        width = ASYNC_COPY_BYTES // 2
        which = "a" if is_a else "b"
        rows, limit = (t.bm, shape.m) if is_a else (t.bn, shape.n)
        along_k = t.contiguous[0 if is_a else 1] == "k"
        per_line = (t.bk if along_k else rows) // width
        chunks = rows * t.bk // width
        warp, lane, inner = self._threads(at, f"copy_{which}")
        e_loop, inner = inner.loop(0, -(-chunks // t.threads), f"{self.name}.copy_{which}")
        linear = inner.add(inner.mul(e_loop.induction_var, t.threads),
                           inner.add(inner.mul(warp, 32), lane))
        if chunks % t.threads:  # the threads past the last chunk copy nothing
            trip = inner.value(arith.SelectOp(
                inner.value(arith.CmpiOp(linear, inner.const(chunks), "ult")),
                inner.const(1), inner.const(0)))
            _, inner = inner.loop(0, trip, f"{self.name}.copy_{which}.chunk")

        def copy(b: IRBuilder) -> None:
            line, along = b.div(linear, per_line), b.mul(b.rem(linear, per_line), width)
            row, kk = (line, along) if along_k else (along, line)
            outer = b.add(self.m0 if is_a else self.n0, row)
            k = b.add(b.mul(tile, t.bk), kk)
            inside = b.value(arith.AndIOp(
                b.value(arith.CmpiOp(outer, b.const(limit), "ult")),
                b.value(arith.CmpiOp(k, b.const(shape.k), "ult"))))
            valid = b.value(arith.SelectOp(inside, b.const(width), b.const(0)))
            source = self._factor_indices(
                b, is_a, b.value(arith.MinUIOp(outer, b.const(limit - 1))),
                b.value(arith.MinUIOp(k, b.const(shape.k - 1))))
            load = shape.a_load if is_a else shape.b_load
            b.insert(AsyncCopyOp(load.memref, source, buffer,
                                 self._tile_index(is_a, stage, row, kk), valid))

        inner.block(f"{self.name}.copy_{which}", copy)

    def _tile_index(self, is_a: bool, stage: SSAValue | None, row: SSAValue, kk: SSAValue
                    ) -> list[SSAValue]:
        """The index of element (row, k) of the A (B) tile, in stage `stage` (None: no
        pipeline), by the tile's layout (`MmaTiles.tile_shape`)."""
        if stage is None:
            return [row, kk]
        if self.mt.contiguous[0 if is_a else 1] == "k":
            return [stage, row, kk]
        return [stage, kk, row]

    def _warps(self, at: IRBuilder, a_tile: SSAValue, b_tile: SSAValue, c_tile: SSAValue,
               fragments: SSAValue, stage: SSAValue | None) -> None:
        """Each warp accumulates its fragments: the 16 x 8 x 16 nests, tensorized; the
        accumulator's fragments then come from and go to the lane's registers."""
        from dlc.rewrites.schedule import tensorize

        t = self.mt
        warp_loop, inner = at.thread_loop(t.wy * t.wx, f"{self.name}.mma.warp", "threadIdx.y")
        warp = warp_loop.induction_var
        row0, col0 = self._warp_origin(inner, warp)
        ks_loop, inner = inner.loop(0, t.bk // t.k, f"{self.name}.ks", "unrolled")
        kk0 = inner.mul(ks_loop.induction_var, t.k)
        for is_a in (True, False):
            self._load_fragments(inner, warp, row0 if is_a else col0, kk0,
                                 a_tile if is_a else b_tile, stage, is_a)
        fm_loop, inner = inner.loop(0, t.fm, f"{self.name}.fm", "unrolled")
        fn_loop, inner = inner.loop(0, t.fn, f"{self.name}.fn", "unrolled")
        i_loop, inner = inner.loop(0, t.m, f"{self.name}.i")
        j_loop, inner = inner.loop(0, t.n, f"{self.name}.j")
        k_loop, inner = inner.loop(0, t.k, f"{self.name}.k")
        a_first = self.shape.update.x.owner.operands[0].owner.input.owner \
            is self.shape.a_load  # type: ignore[union-attr]

        def mma(b: IRBuilder) -> None:
            row = b.add(b.add(row0, b.mul(fm_loop.induction_var, t.m)), i_loop.induction_var)
            col = b.add(b.add(col0, b.mul(fn_loop.induction_var, t.n)), j_loop.induction_var)
            kk = b.add(b.mul(ks_loop.induction_var, t.k), k_loop.induction_var)
            a = b.value(arith.ExtFOp(b.value(LoadOp(
                a_tile, self._tile_index(True, stage, row, kk))), self.element))
            bv = b.value(arith.ExtFOp(b.value(LoadOp(
                b_tile, self._tile_index(False, stage, col, kk))), self.element))
            product = arith.MulfOp(a, bv) if a_first else arith.MulfOp(bv, a)
            current = b.value(LoadOp(c_tile, [row, col]))
            b.insert(StoreOp(b.value(arith.AddfOp(current, b.value(product))), c_tile,
                             [row, col]))

        inner.block(f"{self.name}.mma", mma)
        block = tensorize(i_loop, self.entry.name, self.features, matrix_loads=True)
        lane_loop = block.parent_op()
        assert isinstance(lane_loop, ForOp)
        lane = lane_loop.induction_var
        for buffer, tile, f in ((self.factor_fragments[0], a_tile, fm_loop.induction_var),
                                (self.factor_fragments[1], b_tile, fn_loop.induction_var)):
            matrix_load = next(op for op in block.walk()
                               if isinstance(op, MatrixLoadOp) and op.memref is tile)
            at_load = IRBuilder.before(matrix_load, anchor=block)
            loaded = at_load.value(LoadOp(buffer, [warp, lane, f, at_load.const(0)],
                                          matrix_load.result.type))
            matrix_load.result.replace_all_uses_with(loaded)
            matrix_load.detach()
            matrix_load.erase()
        self._to_registers(block, c_tile, fragments, [warp, lane, fm_loop.induction_var,
                                                      fn_loop.induction_var])

    def _load_fragments(self, at: IRBuilder, warp: SSAValue, origin: SSAValue, kk0: SSAValue,
                        tile: SSAValue, stage: SSAValue | None, is_a: bool) -> None:
        """Each lane of the warp loads its fragments of A (of B) for one k step, fragment f
        of fm (fn) into `factor_fragments[..][warp][lane][f]`, one `ldmatrix` each, by the
        tiling of the intrinsic's fragment layout over the tile (rows along the tile's
        contiguous axis): once per k step, not once per (A, B) fragment pair."""
        from dlc.rewrites.schedule.tensorize import matrix_row_address
        from dlc.target.intrinsics import matrix_tiling

        t = self.mt
        operand = self.entry.operands[1 if is_a else 2]
        fragment = operand.fragment
        assert fragment is not None
        outer_axis = "i" if is_a else "j"
        along_k = t.stages == 1 or t.contiguous[0 if is_a else 1] == "k"
        tiling = matrix_tiling(fragment, "k" if along_k else outer_axis)
        assert tiling is not None, "16-bit m16n8k16 fragments are ldmatrix tiles"
        which = "a" if is_a else "b"
        count, extent = (t.fm, t.m) if is_a else (t.fn, t.n)
        f_loop, inner = at.loop(0, count, f"{self.name}.{which}_fragment.f", "unrolled")
        lane_loop, inner = inner.thread_loop(32, f"{self.name}.{which}_fragment.lane",
                                             "threadIdx.x")
        f, lane = f_loop.induction_var, lane_loop.induction_var

        def load(b: IRBuilder) -> None:
            where = matrix_row_address(b, lane, tiling)
            row = b.add(b.add(origin, b.mul(f, extent)), where[outer_axis])
            kk = b.add(kk0, where["k"])
            value = b.value(MatrixLoadOp(tiling.load.name, tile,
                                         self._tile_index(is_a, stage, row, kk)))
            b.insert(StoreOp(value, self.factor_fragments[0 if is_a else 1],
                             [warp, lane, f, b.const(0)]))

        inner.block(f"{self.name}.{which}_fragment", load)

    def _to_registers(self, block: BlockOp, c_tile: SSAValue, fragments: SSAValue,
                      lane_index: list[SSAValue]) -> None:
        """Make the tensorized block read and write the lane's accumulator fragment in
        `fragments` (element e at `lane_index + [e]`) instead of the output tile: its loads of
        the tile are the fragment's elements in order, and so are its stores."""
        fragment = self.entry.acc.fragment
        assert fragment is not None
        for access_type in (LoadOp, StoreOp):
            accesses = [op for op in block.body.block.ops
                        if isinstance(op, access_type) and op.memref is c_tile]
            assert len(accesses) == fragment.elements
            for element, access in enumerate(accesses):
                at = IRBuilder.before(access, anchor=block)
                index = [*lane_index, at.const(element)]
                if isinstance(access, LoadOp):
                    new = at.value(LoadOp(fragments, index, access.result.type))
                    access.result.replace_all_uses_with(new)
                else:
                    at.insert(StoreOp(access.value, fragments, index))
                access.detach()
                access.erase()
        for op in reversed(list(block.body.block.ops)):
            if is_pure(op) and not op.regions and op.results and \
                    not any(r.uses for r in op.results):
                op.detach()
                op.erase()
        _refresh_buffers(block)

    def _mma_epilogue(self, at: IRBuilder, c_tile: SSAValue) -> None:
        """Per output element of the block tile inside M and N: the original init, the update
        with the accumulated value, and the epilogues."""
        t = self.mt
        warp, lane, inner = self._threads(at, "store")
        e_loop, inner = inner.loop(0, t.bm * t.bn // t.threads, f"{self.name}.store")
        linear = inner.add(inner.mul(e_loop.induction_var, t.threads),
                           inner.add(inner.mul(warp, 32), lane))
        r, c = inner.div(linear, t.bn), inner.rem(linear, t.bn)
        m, n = inner.add(self.m0, r), inner.add(self.n0, c)
        self._write_back(inner, m, n, t.bm, t.bn, lambda b: b.value(LoadOp(c_tile, [r, c])))


def _string(text: str) -> Attribute:
    from xdsl.dialects.builtin import StringAttr

    return StringAttr(text)
