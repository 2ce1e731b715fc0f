"""The `loop-default-schedule` pass: schedules every loop nest with the default CPU rules.

Counterpart: TVM's `dlight` default schedules (`ApplyDefaultSchedule` with rules per block
structure) and the TOPI x86 schedules a build uses when no tuning log has a record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

from dlc.dialects.contracts import SCAN_ANNOTATION, SCHEDULED_ATTR
from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, YieldOp
from dlc.rewrites.loop_fold_constant_nests import fixed_call_sites
from dlc.rewrites.pass_target import cpu_target_for
from dlc.rewrites.schedule.common import ScheduleError, base_buffer, is_pure
from dlc.rewrites.schedule.loop_kind import parallel
from dlc.rewrites.schedule.rows import block_rows, inner_nest, row_buffers
from dlc.rewrites.schedule_rules import CpuConfig, schedule_nest
from dlc.rewrites.schedule_rules.runtime_extents import (
    has_runtime_extents,
    schedule_runtime_extents,
)
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class LoopDefaultSchedulePass(ModulePass):
    """Apply the default CPU schedule to every loop nest that has none.

    *Input invariant*: loop-level IR as `convert-tensor-expr-to-loop` makes it (one nest per
    compute: perfectly nested spatial loops around blocks, or around an init block, reduction
    loops and an update block, with fused epilogue blocks). Nests of another shape, nests with
    any loop that is not serial (already scheduled) and functions marked `dlc.scheduled` are
    left as they are. The time loop of a scan (annotated `dlc.scan`) stays serial and each nest
    in its body is scheduled as a function's nest is, on one thread unless the nest runs at
    least `STEP_PARALLEL_MIN_ITERATIONS` block iterations per step (a step of a batch-1
    recurrence is a few microseconds of work, where a parallel region per nest and step costs
    more than it saves; a batch-16 LSTM's recurrence GEMM is tens); then the buffers its
    schedules made
    whose filling nests read only what the time loop never writes (a recurrence GEMM's packed
    weight) are allocated and filled once, before the time loop, and freed after it, where
    loop-fold-constant-nests can fold them. A nest over a runtime number of rows (its
    outermost loop bounded by a size argument, `dlc.dim_args`, its induction variable only the
    leading index of the buffers it reads and writes) is cut first (`schedule.rows.
    block_rows`): where one row uses each element it reads beside its rows fewer than
    `ROW_REUSE_MIN` times (a GEMM's weight), into whole blocks of `RUNTIME_ROW_BLOCK` rows and
    one nest of exactly the rows left, else row by row; each part takes views of its rows
    (`loop.rows`) and holds a nest of static shape, scheduled as below; the loop over whole
    blocks (or rows) runs on the threads instead of its nest when a block is less than
    `ROWS_PARALLEL_MIN_ITERATIONS` block iterations; the packs the schedules make go before
    the parts, as for a scan. A nest over runtime extents that `block_rows` does not take
    (rows read out of order, or any runtime extent inside: an image of runtime height and
    width) gets the rule of `schedule_rules.runtime_extents`: tiles of vectors along its
    contiguous innermost spatial loop and peeled tails down to one output, inside a reduction's
    loops with a block of a reused axis (a conv's channels) unrolled beside them, and a
    parallel outer loop.

    *Output IR*: each nest rewritten by the first rule of `rewrites.schedule_rules.RULES` that
    applies: a reduction whose innermost spatial axis is contiguous becomes a register-blocked
    micro-kernel (`loop.alloc local` tile, `unrolled` rows, `vectorized` columns, reduction
    loops innermost but one; GEMM's B packed into `[ceil(N/NR)][K][NR]` panels first); a
    conv2d whose input is strided along `ow` gets that kernel over (ow rows, output-channel
    columns), its weight packed into `[ceil(OC/NR)][IC][KH][KW][NR]` panels first, as does a
    conv2d whose rows fill few vector lanes when that saves more than its transposed epilogue
    costs (a 3x3 conv), and a depthwise conv on such rows (7x7 and 14x14/2 planes) when the
    packed plane fits the L2, its input plane packed channel-last first (blocks transposed in
    registers by the vectorizer); a 1x1 conv for which it does not (few input channels) has
    its plane's rows merged into one contiguous loop (collapsed views) for the first kernel,
    when a row is not a whole number of vectors or is a single vector (too narrow for a
    two-vector tile); a
    copy whose innermost write axis is not its innermost read axis (a transpose that moves the
    last axis) gets both axes split by the lanes, the write axis's inner loop `vectorized`
    around the read axis's inner loop of `lanes` iterations (blocks the vectorizer transposes
    in registers; a read axis that is not a whole number of vectors merged with the axis
    before it in both buffers first, through collapsed views); an
    elementwise nest gets its innermost loop `vectorized` (its two innermost loops merged first
    when they walk whole rows that are not a whole number of vectors, the buffers read and
    written through `memref.collapse_shape` views made before the nest); a float sum whose
    innermost reduction axis is contiguous and at least two vectors long (blocks of up to
    `lanes * fma_units * fma_latency`; also a whole-tensor sum, with no spatial loop; a pool
    window's whole rows merged into one axis and one-iteration loops and unit axes after the
    reduced one dropped first, the same way) accumulates in a `loop.alloc local` tile of
    vector partial sums combined pairwise (error growing like n/B, not n); the outermost loop
    with at least two iterations becomes `parallel` when more than one thread is used.

    *Invariants*: results are unchanged (same blocks, cloned at the points they compute; only
    the order of independent iterations and the floating-point contraction of mul+add change);
    block names are kept (new blocks: `<name>.pack`, `<name>.write`, `<name>.partials`,
    `<name>.combine`).

    Options:
        target: the CPU to schedule for, a target string (`llvm -mcpu=znver3 -num-cores=2`);
            empty: the module's `dlc.target`, else `dlc.target.DEFAULT_CPU_TARGET`.
        threads: threads parallel loops will run on (0: the target's; 1: no parallel loop).
        vector_bits: vector register width (0: the target's).
        max_accumulators: vector registers a micro-kernel tile may use (0: three quarters of
            the target's, 24 with AVX-512 and 12 with AVX2).
        max_rows: the most rows of a micro-kernel tile (0: the target's: 8, and up to the
            L1's ways at a 4 KiB stride for a GEMM over a weight packed at compile time,
            `CpuConfig.max_gemm_rows`).
        pack: pack GEMM-like operands (B) into panels.
        pack_rows: also pack GEMM's A into row panels.
        l2_bytes: per-core L2 size for grouping GEMM's B panels and for looping over a large
            conv2d weight's panels outermost (0: the target's).
    """

    name: ClassVar[str] = "loop-default-schedule"

    target: str = ""
    threads: int = 0
    vector_bits: int = 0
    max_accumulators: int = 0
    max_rows: int = 0
    pack: bool = True
    pack_rows: bool = False
    l2_bytes: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = CpuConfig.for_target(
            cpu_target_for(self.name, self.target, op), threads=self.threads,
            vector_bits=self.vector_bits, max_accumulators=self.max_accumulators,
            max_rows=self.max_rows, pack=self.pack, pack_rows=self.pack_rows,
            l2_bytes=self.l2_bytes,
        )
        with fixed_call_sites(op):  # schedules add and remove no calls
            for function in op.walk():
                if isinstance(function, func.FuncOp) and function.body.blocks \
                        and SCHEDULED_ATTR not in function.attributes:
                    _schedule_function(function, config)


def _schedule_function(function: func.FuncOp, config: CpuConfig) -> None:
    """The default schedule of each top-level nest of `function`."""
    for root in list(function.body.block.ops):
        if not isinstance(root, ForOp):
            continue
        if root.trip_count() is None and root.body.block.args[0].uses.get_length() \
                and not has_runtime_extents(root, inside=True) \
                and _schedule_runtime_rows(root, config):
            continue
        if has_runtime_extents(root):
            schedule_runtime_extents(root, config)
        elif is_scan_loop(root):
            serial = replace(config, threads=1)
            for inner in list(root.body.block.ops):
                if isinstance(inner, ForOp):
                    large = block_iterations(inner) >= STEP_PARALLEL_MIN_ITERATIONS
                    schedule_nest(inner, config if large else serial)
            hoist_invariant_packs(root)
        else:
            schedule_nest(root, config)


RUNTIME_ROW_BLOCK = 8
"""The rows of the static blocks a nest over a runtime number of rows is cut into
(`block_rows`) when a block of rows reuses what one row reads once: the rows of a register tile
(`CpuConfig.max_rows`' default), so that a GEMM over runtime rows keeps its micro-kernel whole
and reads each weight panel once per block. The rows left after the whole blocks (1 to 7) run
as one nest of exactly that many rows (`exact`), so that a call reads the weights once per block
and once for the rest, as the static compile of its row count reads them about as often (a
binary split of the rest into 4, 2 and 1 rows read a 784x512 weight up to three times more:
3 rows 1.66x the static compile, 7 rows 1.41x)."""

ROW_REUSE_MIN = 8
"""A nest whose one row uses each element it reads beside the rows (its weights) at least this
many times on average (a conv over one image of a batch: its whole plane) runs row by row: a
block of rows would add no reuse a row does not already have."""

ROWS_PARALLEL_MIN_ITERATIONS = 1 << 16
"""Block iterations from which the nest of one block of rows runs on threads (as a nest of
static shape is scheduled); below it the loop over the blocks runs them on threads instead (a
parallel region per block of an elementwise op over short rows would cost more than its work)."""


def _schedule_runtime_rows(root: ForOp, config: CpuConfig) -> bool:
    """A nest over a runtime number of rows: blocks of `RUNTIME_ROW_BLOCK` static rows and a
    nest of the rows left where a block reuses data (else row by row), each nest scheduled as
    one of static shape, the packed weights its schedule makes filled once before the loops
    over the rows (`hoist_invariant_packs`, for `loop-fold-constant-nests` to fold); left as it
    is when its accesses are not row by row (`row_buffers`, then False; else True)."""
    try:
        buffers = row_buffers(root)
    except ScheduleError:
        return False
    block = RUNTIME_ROW_BLOCK if _row_reuse(root, buffers) < ROW_REUSE_MIN else 1
    sizes = tuple(range(block, 0, -1))
    writes_rows_only = all(set(block.writes) <= set(buffers)
                           for block in root.walk() if isinstance(block, BlockOp))
    serial = replace(config, threads=1)
    for position, part in enumerate(block_rows(root, sizes, exact=True)):
        nest = inner_nest(part)
        many = position == 0  # the loop over whole blocks (or rows): any number of them
        if many and config.threads > 1 and writes_rows_only \
                and block_iterations(nest) < ROWS_PARALLEL_MIN_ITERATIONS:
            schedule_nest(nest, serial)
            parallel(part)
        else:
            schedule_nest(nest, config)
        hoist_invariant_packs(part)
    return True


def _row_reuse(root: ForOp, row_buffers: list[SSAValue]) -> float:
    """How many times one row of the nest uses each element it reads beside the rows, on
    average (its block iterations over those elements; infinite when it reads none)."""
    others = {value for block in root.walk() if isinstance(block, BlockOp)
              for value in block.reads if value not in row_buffers}
    elements = sum(math.prod(value.type.get_shape()) for value in others
                   if isinstance(value.type, MemRefType) and value.type.has_static_shape())
    return block_iterations(root) / elements if elements else math.inf


def hoist_invariant_packs(loop: ForOp) -> None:
    """Moves out of `loop` each `loop.alloc` of its body with the nests that fill it, when
    those nests read only buffers the loop does not write (directly or through a view) and
    use no value defined in the loop outside themselves; its `loop.dealloc` moves after the
    loop. The pure ops of the body that use nothing defined in the loop (a view of a
    constant weight, `memref.collapse_shape`) move out first, so that a fill reading through
    them is invariant."""
    body = loop.body.block
    for op in list(body.ops):
        if is_pure(op) and not isinstance(op, YieldOp) and not any(
                loop.is_ancestor(_defining_op(operand)) for operand in op.operands):
            op.detach()
            loop.parent_block().insert_op_before(op, loop)  # type: ignore[union-attr]
    written = {base_buffer(value) for op in loop.walk() if isinstance(op, BlockOp)
               for value in op.writes}
    for alloc in [op for op in body.ops if isinstance(op, AllocOp)]:
        buffer = alloc.result
        fills = [op for op in body.ops if isinstance(op, ForOp)
                 and any(buffer in b.writes for b in op.walk() if isinstance(b, BlockOp))]
        frees = [use.operation for use in buffer.uses if isinstance(use.operation, DeallocOp)]
        if not fills or len(frees) != 1 or frees[0].parent_block() is not body:
            continue
        if not all(_invariant_fill(fill, buffer, written - {buffer}, loop) for fill in fills):
            continue
        for op in (alloc, *fills):
            op.detach()
            loop.parent_block().insert_op_before(op, loop)  # type: ignore[union-attr]
        frees[0].detach()
        loop.parent_block().insert_op_after(frees[0], loop)  # type: ignore[union-attr]


def _invariant_fill(fill: ForOp, buffer: SSAValue, written: set[SSAValue], loop: ForOp) -> bool:
    blocks = [op for op in fill.walk() if isinstance(op, BlockOp)]
    if any(set(b.writes) != {buffer} or written.intersection(map(base_buffer, b.reads))
           for b in blocks):
        return False
    inside = {v for op in fill.walk() for v in op.results}
    inside |= {a for op in fill.walk() for r in op.regions for blk in r.blocks for a in blk.args}
    return all(
        operand in inside or operand is buffer or not loop.is_ancestor(_defining_op(operand))
        for op in fill.walk() for operand in op.operands
    )


def _defining_op(value: SSAValue) -> Operation:
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        assert parent is not None
        return parent
    return owner


STEP_PARALLEL_MIN_ITERATIONS = 1 << 20
"""The block iterations from which a nest in a scan's time loop runs on threads: about 8 us of
one core's vector FMAs, several times what a parallel region of dlc's pool costs to start and
join. Measured (2 threads, `benchmarks/ops.py --filter lstm`): the batch-16 LSTM's recurrence
GEMM (16x256x1024, 4M iterations) on threads took the layer from 0.35x to 1.12-1.18x ORT's speed;
the batch-1 layers' (256K) stay serial."""


def block_iterations(root: ForOp) -> int:
    """How many times the `loop.block`s of the nest at `root` run in all (loops with runtime
    bounds counted once)."""
    total = 0
    for block in root.walk():
        if not isinstance(block, BlockOp):
            continue
        count, parent = 1, block.parent_op()
        while isinstance(parent, ForOp):
            count *= parent.trip_count() or 1
            if parent is root:
                break
            parent = parent.parent_op()
        total += count
    return total


def is_scan_loop(loop: ForOp) -> bool:
    """Whether `loop` is a scan's time loop (its body a sequence of nests run once per step)."""
    return loop.annotations is not None and SCAN_ANNOTATION in loop.annotations.data
