"""What the default schedule rules see of a loop nest: its spatial band and, for a reduction,
the init, the reduction band, the update and the fused epilogues.

Counterpart: TVM dlight's `normalize_prim_func` / `BlockInfo` (a block's iteration kinds, its
loops, its reads and writes), for the nests `convert-tensor-expr-to-loop` produces.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.schedule.common import constant_value, depends_on, inner_loop, is_pure
from xdsl.dialects.arith import AddiOp, ConstantOp, MuliOp, SubiOp
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue


def spatial_band(root: ForOp) -> list[ForOp]:
    """The perfectly nested loops from `root` down (each body: pure ops and the next loop)."""
    band = [root]
    while (nested := inner_loop(band[-1])) is not None:
        band.append(nested)
    return band


def is_unit_loop(loop: ForOp) -> bool:
    """Whether the loop runs `[0, n)` with step 1 and constant bounds."""
    bounds = loop.constant_bounds()
    return bounds is not None and bounds[0] == 0 and bounds[2] == 1


def _by_one(loop: ForOp) -> bool:
    """Whether the loop runs with step 1 (its bounds maybe runtime values)."""
    return constant_value(loop.step) == 1


def body_of(loop: ForOp) -> list[Operation]:
    """The ops of a loop's body without its terminator."""
    return [op for op in loop.body.block.ops if not isinstance(op, YieldOp)]


def extent(loop: ForOp) -> int:
    """The trip count of a unit loop."""
    trip = loop.trip_count()
    assert trip is not None
    return trip


@dataclass
class Elementwise:
    """A nest of spatial loops around blocks without reductions (an injective compute, maybe
    several fused)."""

    spatial: list[ForOp]
    blocks: list[BlockOp]


@dataclass
class Reduction:
    """A reduction nest: spatial loops, then (at each point) an optional local accumulator, the
    init block, the reduction loops around the update block, and the fused epilogue blocks."""

    spatial: list[ForOp]
    alloc: AllocOp | None
    init: BlockOp
    reduction: list[ForOp]
    update: BlockOp
    epilogues: list[BlockOp]
    dealloc: DeallocOp | None
    home: SSAValue
    """The buffer the reduction accumulates into (the local accumulator or an output)."""


def analyze(root: Operation, static_spatial: bool = True, runtime_reduction: bool = False
            ) -> Elementwise | Reduction | None:
    """The structure of the nest rooted at `root`, or None if it is neither shape (or already
    scheduled: a loop that is not serial). `static_spatial=False` also takes spatial loops of
    runtime bounds (step 1), `runtime_reduction` reduction loops of runtime bounds (a global
    pool over a runtime plane)."""
    if not isinstance(root, ForOp):
        return None
    if any(isinstance(op, ForOp) and op.kind.data != "serial" for op in root.walk()):
        return None
    spatial = spatial_band(root)
    unit = is_unit_loop if static_spatial else _by_one
    if not all(unit(loop) for loop in spatial):
        return None
    ops = [op for op in body_of(spatial[-1]) if not is_pure(op)]
    if ops and all(isinstance(op, BlockOp) for op in ops):
        blocks = [op for op in ops if isinstance(op, BlockOp)]
        if any(block.reduction_axes.data for block in blocks):
            return None
        return Elementwise(spatial, blocks)
    return _reduction(spatial, ops, runtime_reduction)


def _reduction(spatial: list[ForOp], ops: list[Operation], runtime_reduction: bool = False
               ) -> Reduction | None:
    alloc = ops.pop(0) if ops and isinstance(ops[0], AllocOp) else None
    dealloc = ops.pop() if ops and isinstance(ops[-1], DeallocOp) else None
    if len(ops) < 2 or not isinstance(ops[0], BlockOp) or not isinstance(ops[1], ForOp):
        return None
    init, first = ops[0], ops[1]
    epilogues = ops[2:]
    if not all(isinstance(op, BlockOp) for op in epilogues):
        return None
    reduction = spatial_band(first)
    if not all(loop.constant_bounds() is not None or (runtime_reduction and _by_one(loop))
               for loop in reduction):
        return None
    inner = [op for op in body_of(reduction[-1]) if not is_pure(op)]
    if len(inner) != 1 or not isinstance(inner[0], BlockOp):
        return None
    update = inner[0]
    if not update.reduction_axes.data or len(init.writes) != 1 or len(update.writes) != 1:
        return None
    home = init.writes[0]
    if update.writes[0] is not home:
        return None
    if alloc is not None and (alloc.result is not home or alloc.scope.data != "local"):
        return None
    if dealloc is not None and (alloc is None or dealloc.memref is not alloc.result):
        return None
    return Reduction(spatial, alloc, init, reduction, update,
                     [op for op in epilogues if isinstance(op, BlockOp)], dealloc, home)


def bare_reduction(root: ForOp) -> Reduction | None:
    """A nest of reduction loops around one update block (a reduction to a single value whose
    init is a separate statement), seen as a `Reduction` without spatial loops or init."""
    band = spatial_band(root)
    ops = [op for op in body_of(band[-1]) if not is_pure(op)]
    if len(ops) != 1 or not isinstance(ops[0], BlockOp) or len(ops[0].writes) != 1:
        return None
    update = ops[0]
    axes = {axis.data for axis in update.reduction_axes}
    if not all(loop.axis.data in axes for loop in band):
        return None
    return Reduction([], None, None, band, update, [], None, update.writes[0])  # type: ignore[arg-type]


def accesses_in(ops: list[Operation]) -> list[LoadOp | StoreOp]:
    """The loads and stores nested in `ops`."""
    return [
        nested for op in ops for nested in op.walk() if isinstance(nested, LoadOp | StoreOp)
    ]


def is_lane_index(index: SSAValue, iv: SSAValue) -> bool:
    """Whether `index` is `iv` or `iv + x` with `x` independent of `iv` (contiguous in iv)."""
    if index is iv:
        return True
    owner = index.owner
    if isinstance(owner, AddiOp):
        for lane, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if lane is iv and not depends_on(other, {iv}):
                return True
    return False


def lane_stride(index: SSAValue, iv: SSAValue) -> int | None:
    """The constant `s` if `index` is `iv * s + x` with `x` independent of `iv` (built from
    `arith.addi`, `arith.subi` of an `iv`-free value and `arith.muli` by a constant), else None."""
    if index is iv:
        return 1
    owner = index.owner
    if isinstance(owner, AddiOp | SubiOp):
        varying = [v for v in (owner.lhs, owner.rhs) if depends_on(v, {iv})]
        if len(varying) != 1 or (isinstance(owner, SubiOp) and varying[0] is owner.rhs):
            return None
        return lane_stride(varying[0], iv)
    if isinstance(owner, MuliOp):
        for varying, factor in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            factor_owner = factor.owner
            if isinstance(factor_owner, ConstantOp) and isinstance(factor_owner.value,
                                                                   IntegerAttr):
                stride = lane_stride(varying, iv)
                return None if stride is None else stride * factor_owner.value.value.data
    return None


def contiguous_in(
    accesses: list[LoadOp | StoreOp], iv: SSAValue, home: SSAValue | None, max_stride: int = 1
) -> bool:
    """Whether every access that depends on `iv` does so only through its last index, as a lane
    index (so that vectorizing `iv` gives contiguous vector accesses); with `max_stride` > 1,
    loads may also move by up to that many elements per lane (the vectorizer reads them as
    contiguous vectors and shuffles them)."""
    for access in accesses:
        if access.memref is home:
            continue
        indices = list(access.indices)
        if not any(depends_on(index, {iv}) for index in indices):
            continue
        if any(depends_on(index, {iv}) for index in indices[:-1]):
            return False
        if is_lane_index(indices[-1], iv):
            continue
        stride = lane_stride(indices[-1], iv) if isinstance(access, LoadOp) else None
        if stride is None or not 1 <= stride <= max_stride:
            return False
    return True
