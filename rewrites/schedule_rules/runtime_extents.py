"""Default CPU schedule of a nest over runtime extents that `block_rows` does not take (an image
of runtime height and width, a row of runtime length): tiles of vectors along the contiguous
axis and a masked last tile, a register tile with a reused axis, and a parallel outer axis.

Counterpart: TVM's default schedules of a symbolic extent (split by the vector width, the tail
peeled or guarded), IREE's peeling of dynamic dims before vectorization, MLIR's vector masking
of a partial tile.

The static rules reason about static extents (register tiles, packs, vector widths per row);
here the nest keeps its runtime loops and gets what needs no extent:
- its innermost spatial loop, when every access that moves with it does so along its last
  index (the outputs' rows), becomes vectors: split into whole tiles of `lanes` iterations
  (up to `TILE_VECTORS` vectors in a reduction; `split_peeled`) and the iterations left, in
  one more tile of that width whose loop runs to `minui(width, n - i)` (`split`'s partial
  tile), which the code generator vectorizes with masks (`vectorize_masked`: loads and stores
  past the row masked, only the vectors with lanes to run computed), when its extent is a
  runtime value; vectorized as it is when static. In a
  reduction nest (a pool's window, a conv's taps and channels) each vector loop goes inside
  the reduction loops (the init distributed before them, `decompose_reduction`; fused
  epilogues after them, each into its own vector loop; a local accumulator of one element
  widened to the tile), so that each update combines a tile of neighbouring outputs at once;
  a static spatial loop over which the update re-reads one operand while another moves (a
  conv's output channels: the input is the same for each) is blocked by `REUSE_BLOCK` and
  unrolled beside the vector loop (a register tile of channels x vectors, each input vector
  feeding every channel's accumulator);
- a reduction over a runtime row with a long static reduction (`MIN_CHANNEL_STEPS`: a conv's
  input channels x taps) and output channels in whole vectors, at least
  `MIN_CHANNEL_VECTORS` of them, is vectorized over the channels instead (`_channel_kernel`,
  the static rules' channel kernel): its weight packed so that a step's channels are one
  vector, its row in unrolled tiles of `CHANNEL_TILE_ROWS` outputs
  (each step broadcasting one input per output into the tile's accumulators), its epilogue
  transposed; a row of any length then fills the lanes (a row kernel fills 7 of 16 on a
  7-wide row): 3x3 convs over runtime planes 2.0-6.1x -> 1.7-1.85x their static compiles,
  which run them as Winograd convs (`graph-winograd-conv` now rewrites those over runtime
  planes too, their products this kernel); a grouped conv, whose input moves with the output
  channels only through their group (`x[n, (c // G) * C/groups + rc, ...]`), takes it with
  vectors of a group's channels (or of a power of two dividing G, `MIN_GROUP_LANES` at least:
  RegNet's groups of 8 as half an AVX-512 vector), the group taken at the vector's first
  channel (one input broadcast to its lanes): RegNet-Y-400MF's grouped convs 2.2-6.1x ->
  0.6-1.9x their static compiles;
- a reduction whose innermost loop is static and contiguous in every access that moves
  with it, inside a runtime row (a channels-last image's channels: the NHWC convs, depthwise
  and pointwise, of a MobileNet's blocks over runtime planes) is vectorized over those
  channels (`_channels_last_kernel`): chunks of up to `CHANNEL_CHUNK_VECTORS` vectors (one
  where the input moves with the channels too, the chunks then inside each tile's loop over
  the row so that its input stays in L1), the row in unrolled tiles of `CHANNEL_TILE_ROWS`
  outputs with unrolled inits and epilogues (accumulators in registers), a weight read
  along the channels packed into a panel per chunk (`_chunk_panels`), a window's padded
  columns partitioned out of the row's interior (`_partition_guards` over the taps' range),
  the chunks or the rows in parallel (`_parallel_channels_last`); channels-last planes merge
  like channels-first ones (`_merge_plane`, any two adjacent dims); channels that no chunk
  divides (ShuffleNet's 116, MobileNetV3's 72) are split into nests at the last whole vector
  or chunk, each its own kernel (`_peel_channels`: 116 as 64, 48 and 4);
- an elementwise nest over a runtime plane computing, per element, a transcendental of values
  that vary with its channels only (a squeeze-excite gate fused into its product with the
  feature map) computes it once per channel, before the plane (`_hoist_channel_values`);
- a reduction that accumulates into its output (no fused epilogue: a conv without bias, a
  pool) first gets a local accumulator of one element and an epilogue storing it
  (`_accumulate_locally`, TVM's `cache_write`), so that its tile of accumulators stays in
  registers; loads may move up to `MAX_LOAD_STRIDE` elements per lane along the vector axis
  (a stride-2 conv's input row, read as shuffled contiguous vectors);
- an elementwise nest whose reads are checked against runtime sizes (a pad: `cmpi ult` and
  `minui` of `%i + k` against a size) is split where the checks change
  (`_partition_guards`, TVM's LoopPartition): its interior, checks and clamps removed, is
  vectorized as above, the iterations before and after keep them;
- the outermost spatial loop with a static count of at least two iterations (the channels)
  becomes `parallel`, else the outermost of runtime extent (a runtime loop of one iteration
  runs without a team).

Every step keeps the nest's meaning, so a step that does not apply (a primitive's
`ScheduleError`) leaves a correct, less optimized nest.
"""

from __future__ import annotations

from dlc.dialects.contracts import DIM_SIZES_ATTR, NUM_OUTPUTS_ATTR, SIZE_CHECKS_ATTR
from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    LoadOp,
    PrefetchOp,
    StoreOp,
    YieldOp,
    dim_args,
)
from dlc.dialects.memref_layout import is_identity_layout
from dlc.rewrites.loop_linearize_runtime_strides import buffer_sizes
from dlc.rewrites.output_sizes import checked_sizes, index_arith_expr
from dlc.rewrites.schedule import (
    ScheduleError,
    decompose_reduction,
    pack,
    parallel,
    reorder,
    vectorize,
)
from dlc.rewrites.schedule.common import (
    IndexBuilder,
    body_ops,
    constant_value,
    depends_on,
    index_constant,
    is_defined_outside,
    is_pure,
    move_ops_into,
    new_loop,
    rename_axis,
    replace_buffer,
    replace_uses,
    set_block_buffers,
    value_name,
)
from dlc.rewrites.schedule.pack import check_pack
from dlc.rewrites.schedule.split import split, split_peeled
from dlc.rewrites.schedule_rules.concat import (
    common_slices,
    runtime_split_points,
    schedule_sliced,
    split_nest,
    split_nest_at_runtime,
    split_points,
)
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import (
    Elementwise,
    Reduction,
    accesses_in,
    analyze,
    body_of,
    contiguous_in,
    is_lane_index,
    lane_stride,
    spatial_band,
)
from dlc.rewrites.schedule_rules.partial_sums import (
    free_zero_signs,
    merged_accesses,
    split_runtime_sum,
)
from dlc.rewrites.schedule_rules.reduction import unrolled_reductions
from dlc.rewrites.schedule_rules.transpose import permuting_copy
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.rewriter import InsertPoint, Rewriter

TILE_VECTORS = 4
"""The most vectors of outputs along the vector axis a reduction over runtime extents computes
at once (independent accumulator chains, each FMA's latency hidden behind the others'; fewer
where the tile's accumulators, times the unrolled reused axis, would pass the target's
`max_accumulators` registers), before single vectors over the outputs left."""


ULT_PREDICATE = 6
"""`arith.cmpi`'s predicate `ult` (the bounds check of a guarded read)."""

MAX_LOAD_STRIDE = 4
"""The most elements per lane a load along the vector axis may move (a stride-2 conv reads its
input row every other element): the vectorizer reads it as contiguous vectors and shuffles."""

STRIDED_TILE_VECTORS = 2
"""The vectors of outputs a register tile spans where its reads along the row are strided and
shared by `max_rows` reused rows (8 output channels x 2 vectors, the static rules' strided row
kernel): wider tiles hold more shuffled input parts than the registers left."""

REUSE_BLOCK = 4
"""Iterations of a spatial loop of reused reads (a conv's output channels) unrolled beside the
vector loop: each vector of the input read once feeds that many accumulators."""

ROW_BLOCK = 4
"""Output rows of runtime count unrolled beside the vector loop where no static loop has
reused reads (a pool, a depthwise conv): that many independent accumulator chains for a tile
of one vector (a 40-wide row: tiles of 16), which alone waits on each max or add."""


MIN_CHANNEL_STEPS = 64
"""The fewest reduction steps per output (a conv's input channels x taps) for which a
reduction over a runtime row is vectorized over its output channels (`_channel_kernel`): its
transposed epilogue costs about one vector instruction per output beside the steps' FMAs."""

MIN_CHANNEL_VECTORS = 2
"""The fewest vectors of output channels a channel kernel takes: with one, a long row's row
kernel (a block of 4 channels x 4 vectors of outputs) reads half the operands per FMA (four
input vectors and four weights for 16 FMAs, against a weight vector and 12 broadcasts for
12) and has blocks of channels to run in parallel. The YOLO-style detector (convs of 16 and
32 channels over 40-320-wide rows), against its static compiles at 1x320, 4x320, 1x640,
4x640 (2 threads): 2.08, 1.88, 1.85, 1.80 with the channel kernel from one vector, 1.63,
1.70, 1.18, 1.12 from two."""

MIN_GROUP_LANES = 8
"""The narrowest vector a channel kernel of a grouped conv takes: a group's channels, when a
group has fewer than a vector's lanes (RegNet's groups of 8 channels, 8 of AVX-512's 16 f32
lanes: a 256-bit FMA per step and output), as the static rules' kernel does."""

MIN_PLANE_CHANNEL_STEPS = 256
"""A merged plane (a 1x1 conv's runtime H * W, a row the row kernel's vectors fill) takes the
channel kernel only with this many reduction steps. Measured, 1x1 convs over runtime planes
against their static compiles, channel / row kernel: 1024 -> 256 at 14x14 1.04 / 1.29,
256 -> 64 at 56x56 0.82 / 1.27, 960 -> 160 at 7x7 1.15 / 1.70, but 64 -> 64 at 56x56 1.31 /
1.20."""

CHANNEL_TILE_ROWS = (12, 8, 4, 2, 1)
"""The outputs of a runtime row a channel kernel's tile spans (unrolled, each a vector of
accumulators over the channels), then narrower tiles over the outputs left: a 14-wide row is
a tile of 12 and one of 2, a 7-wide one tiles of 4, 2 and 1."""

CHANNEL_CHUNK_VECTORS = 4
"""The most vectors of channels a channels-last kernel's tile spans (`_channels_last_kernel`):
with `CHANNEL_TILE_ROWS` rows, a 1x1 conv's tile is 6 rows x 4 vectors, a GEMM's register
tile, each step's 4 weight vectors shared by 6 outputs."""

EDGE_TILE_ROWS = 4
"""The widest tile over the columns a window's padding partitions off a channels-last row
(the first and last `pad` columns, whose taps read bounds-checked): a 5x5 window's two
columns on each side run as one tile of two."""

MIN_CHUNK_LANES = 4
"""Channels that are not whole vectors (24 of 16 lanes) take a channels-last kernel in one
chunk when they are a multiple of this (a vector and a half: a full and a half-width FMA
per row and step)."""

MIN_CHUNKS_PER_THREAD = 4
"""A channels-last kernel runs its chunks of channels in parallel (one team) when each thread
gets this many, or when they divide evenly; else its rows, a team per chunk (five chunks on
two threads would leave one thread idle a fifth of the time)."""

MIN_TRANSPOSE_LANES = 4
"""The narrowest square tile a transposing copy over runtime extents is transposed in
(`_transposed_copy`): 4 x 4 floats, a quarter of an AVX-512 register per row."""

TRANSPOSED_EPILOGUE_KIND = "serial"
"""The kind of a channel kernel's epilogue loop over its channels (the static rules'
`TRANSPOSED_KIND`: serial, each iteration storing one channel's outputs of the tile as one
vector)."""


def has_runtime_extents(root: ForOp, inside: bool = False) -> bool:
    """Whether a loop of the nest at `root` (`inside`: other than `root`) runs a number of
    times only known at run time."""
    return any(isinstance(op, ForOp) and op.trip_count() is None
               and not (inside and op is root) for op in root.walk())


def schedule_runtime_extents(root: ForOp, config: CpuConfig) -> bool:
    """Vectorize and parallelize the nest at `root` (module docs); returns whether it
    recognised the nest."""
    nest = _analyze_root(root)
    if nest is None:
        return _runtime_reduction(root, config)
    if _split(nest, root, config):
        return True
    plane = _merge_plane(nest.spatial)
    if plane:
        merged = analyze(root, static_spatial=False)
        assert merged is not None, "a merge keeps the nest's shape"
        nest = merged
    inner = nest.spatial[-1]
    if isinstance(nest, Elementwise) and _schedule_hoisted(nest, config):
        return True
    stores = [op for op in accesses_in(body_ops(inner)) if isinstance(op, StoreOp)]
    spatial = list(nest.spatial)
    if stores and isinstance(nest, Elementwise) and not _vectorizable(inner):
        lanes = config.lanes(stores[0].value.type)
        tiles = _transposed_copy(nest, lanes)
        if tiles is not None:
            if config.parallel:
                try:
                    parallel(tiles)  # the plane's tiles: a batch is often one image
                except ScheduleError:
                    pass
            return True
        inner = _partition_guards(inner) or inner  # a pad's interior, without its checks
    if stores and isinstance(nest, Reduction) and not _vectorizable(inner) and \
            _guarded_window(nest, spatial, config):
        if config.parallel:
            _parallel_outer(spatial, config)
        return True
    if stores and _vectorizable(inner):
        lanes = config.lanes(stores[0].value.type)
        if isinstance(nest, Elementwise):
            _vectorize_elementwise(inner, lanes, config)
        elif _reduction_kernel(nest, spatial, lanes, config, plane):
            return True
    if config.parallel:
        _parallel_outer(spatial, config)
    return True


def _analyze_root(root: ForOp, runtime_reduction: bool = False) -> Elementwise | Reduction | None:
    """The nest at `root` (`analyze`, its spatial loops of any extent), a max or min
    reduction's combining op marked `nsz` (`free_zero_signs`, as `schedule_nest` does before
    its rules: without it, a max pool's every step lowers to `llvm.maximum`, six instructions
    for one `maxps`; the YOLO-style SPPF pools ran at 2.4x their static compile)."""
    nest = analyze(root, static_spatial=False, runtime_reduction=runtime_reduction)
    if isinstance(nest, Reduction):
        free_zero_signs(nest)
    return nest


def _split(nest: Elementwise | Reduction, root: ForOp, config: CpuConfig) -> bool:
    """The nest split into nests each scheduled on its own: a concat's pieces
    (`_split_concat`), channels no chunk divides (`_peel_channels`); returns whether it was."""
    if isinstance(nest, Elementwise) and _split_concat(nest, config):
        return True
    tail = _peel_channels(nest, config)
    if tail is None:
        return False
    schedule_runtime_extents(tail, config)  # the first part maybe peeled again
    schedule_runtime_extents(root, config)
    return True


def _split_concat(nest: Elementwise, config: CpuConfig) -> bool:
    """An elementwise nest whose blocks compare a static loop's induction variable with
    constants (a concat along the channels, its pieces picked by `select`s) split where the
    comparisons change (the static concat rule's `split_points`), each part scheduled by this
    rule (its plane merged and vectorized); with threads and parts of a common size divisor,
    as slices inside one parallel loop (`schedule_sliced`: one region, not one per piece). A
    loop compared with runtime offsets (a concat along a runtime axis: a detector's heads
    joined along their flattened planes) is split at them (`runtime_split_points`), each part
    reading its piece alone. Returns whether it split."""
    found = split_points(nest)
    if found is None:
        at_runtime = runtime_split_points(nest)
        if at_runtime is None:
            return False
        for part in split_nest_at_runtime(nest.spatial[0], *at_runtime):
            schedule_runtime_extents(part, config)
        return True
    loop, points = found
    ub = loop.trip_count()
    assert ub is not None, "split points need a static loop"
    edges = [0, *points, ub]
    count = common_slices(edges, config) \
        if config.parallel and loop is not nest.spatial[-1] else 0
    if count:
        schedule_sliced(nest, loop, edges, count, config, schedule_runtime_extents)
        return True
    for part in split_nest(nest.spatial[0], loop, edges):
        schedule_runtime_extents(part, config)
    return True


def _guarded_window(nest: Reduction, spatial: list[ForOp], config: CpuConfig) -> bool:
    """A reduction over a runtime row whose window reads are bounds-checked (a pool reading
    its padding inlined, `pools_over_runtime_extents`): the rows split where their checks
    change, then the columns of every row, those whose windows read padding rows too
    (`_partition_guards`); the columns where no window reads a padding column, a row kernel of
    vectors (the rows' checks, the same for every column, kept in the padding rows), the
    columns before and after as they are (a few per row); returns whether it split. (With
    the padding rows left scalar, a 5x5 pool over 80x80 ran 10% of its outputs, 4 of 80 rows,
    one at a time and with two checks per tap.)"""
    row = spatial[-1]
    stores = [op for op in accesses_in(body_ops(row)) if isinstance(op, StoreOp)]
    if not stores:
        return False
    rows = spatial[-2] if len(spatial) > 1 else None
    inner_rows = _partition_guards(rows) if rows is not None else None
    row_loops = [row]
    if inner_rows is not None:  # the rows before, those whose windows read no padding row, after
        after = inner_rows.next_op
        assert isinstance(rows, ForOp) and isinstance(after, ForOp)
        row_loops = [next(op for op in body_of(part) if isinstance(op, ForOp))
                     for part in (inner_rows, rows, after)]
    lanes = config.lanes(stores[0].value.type)
    split = inner_rows is not None
    for columns in row_loops:
        interior = _partition_guards(columns)
        if interior is None:
            continue
        split = True
        piece = analyze(interior, static_spatial=False)
        if isinstance(piece, Reduction) and _vectorizable(interior):
            _vectorize_reduction(_accumulate_locally(piece), interior, lanes * TILE_VECTORS,
                                 lanes)
    return split


def _reduction_kernel(nest: Reduction, spatial: list[ForOp], lanes: int, config: CpuConfig,
                      plane: bool) -> bool:
    """A reduction over a runtime row whose innermost loop is contiguous: the channels-last
    kernel, the channel kernel (both parallel here: returns True), else the row kernel (a
    register tile of a reused axis and vectors of the row; its caller parallelizes it)."""
    nest = _accumulate_locally(nest)
    chunks = _channels_last_kernel(nest, spatial, lanes, config)
    if chunks is not None:
        if config.parallel:
            _parallel_channels_last(spatial, chunks, config)
        return True
    if _channel_kernel(nest, spatial, lanes, config, plane):
        if config.parallel:
            _parallel_outer(spatial, config)
        return True
    strided = _strided_reads(nest, spatial[-1])
    channels = _block_reused_axis(nest, spatial, config, strided)
    rest_rows = None
    if channels is None and (blocked := _block_rows(spatial)) is not None:
        channels, rest_rows = blocked
    rows = 1 if channels is None else channels.trip_count() or 1
    widest = STRIDED_TILE_VECTORS if strided and rows >= config.max_rows else TILE_VECTORS
    vectors = max(1, min(widest, config.max_accumulators // rows))
    _vectorize_reduction(nest, spatial[-1], lanes * vectors, lanes, channels)
    if rest_rows is not None and isinstance(
            left := analyze(rest_rows, static_spatial=False), Reduction):
        _vectorize_reduction(left, left.spatial[-1], lanes * TILE_VECTORS, lanes, None)
    return False


def _block_rows(spatial: list[ForOp]) -> tuple[ForOp, ForOp] | None:
    """The loop of runtime count around the vector axis's loop (an image's rows) split into
    blocks of `ROW_BLOCK` rows and the rows left (`split_peeled`), the block's loop moved
    innermost of the spatial band (unrolled beside the vector loop, as `_block_reused_axis`
    does with channels); `spatial` is updated in place. Returns (the block's loop, the loop of
    the rows left), or None where there is no such loop (or the block's loop cannot move: the
    rows are then split but not tiled, the rows left unscheduled, all correct)."""
    if len(spatial) < 2:
        return None
    rows, row = spatial[-2], spatial[-1]
    if rows.trip_count() is not None or body_of(rows) != [row] or \
            constant_value(rows.step) != 1:
        return None
    outer, inner, rest = split_peeled(rows, ROW_BLOCK)
    try:
        reorder([outer, row, inner])
    except ScheduleError:  # the blocks stay around the row, run as they are (rows of one)
        spatial[-2:] = [outer, inner, row]
        return None
    spatial[-2:] = [outer, row]
    return inner, rest


def _hoist_channel_values(nest: Elementwise) -> tuple[ForOp, ForOp] | None:
    """Values of an elementwise block over a runtime plane that vary with its static
    innermost loop `c` (the channels) but not with the plane (a squeeze-excite block's
    gate, `sigmoid(fc2[n, c])`, fused into its product with the feature map) and cost a
    transcendental (`math` ops) are computed once per channel, before the plane's loops, into
    a local buffer of `C` elements (a block over `c` of its own), which the block then reads:
    one `exp` per channel instead of one per pixel (TVM's `compute_at` of the gate at the
    batch). Returns (the loop over the channels computing them, the loop nest over the plane
    that reads them), None where there is nothing to hoist (nothing changed)."""
    spatial = nest.spatial
    if len(spatial) < 3 or len(nest.blocks) != 1 or spatial[-1].trip_count() is None:
        return None
    plane = [loop for loop in spatial[1:-1] if loop.trip_count() is None]
    if not plane or body_of(spatial[-1]) != [nest.blocks[0]] or not nest.blocks[0].writes:
        return None
    block, channel = nest.blocks[0], spatial[-1]
    varying = {loop.induction_var for loop in plane}
    ops = [op for op in block.body.block.ops if not isinstance(op, YieldOp)]
    invariant: set[Operation] = set()
    for op in ops:  # in order: operands first
        if not is_pure(op) and not isinstance(op, LoadOp):
            continue
        inside = [o.owner for o in op.operands if isinstance(o.owner, Operation)
                  and o.owner.parent_op() is block]
        if all(owner in invariant for owner in inside) and not any(
                depends_on(o, varying) for o in op.operands if o.owner not in inside):
            invariant.add(op)
    costly = [op for op in invariant if op.dialect_name() == "math"]
    frontier = [op for op in ops if op in invariant and op.results and any(
        use.operation not in invariant for use in op.results[0].uses)]
    written = block.writes[0].type
    if not costly or len(frontier) != 1 or not isinstance(written, MemRefType) or \
            frontier[0].results[0].type != written.get_element_type():
        return None
    value = frontier[0].results[0]
    parent = spatial[0].body.block
    first = plane[0]
    while first.parent_op() is not spatial[0]:
        first = first.parent_op()  # type: ignore[assignment]
    local = AllocOp(MemRefType(value.type, [channel.trip_count()]), "local", [])
    local.result.name_hint = "per_channel"
    loop = new_loop(channel.lb, channel.ub, channel.step, channel.axis.data, like=channel)
    mapper: dict[SSAValue, SSAValue] = {channel.induction_var: loop.induction_var}
    body = Block()
    needed = [op for op in ops if op in invariant and depends_before(op, frontier[0], invariant)]
    clones = [op.clone(value_mapper=mapper) for op in needed]
    body.add_ops(clones)
    body.add_op(StoreOp(mapper[value], local.result, [loop.induction_var]))
    reads = list(dict.fromkeys(op.memref for op in clones if isinstance(op, LoadOp)))
    compute = BlockOp(f"{block.block_name.data}.per_channel", reads, [local.result], body,
                      spatial_axes=[loop.axis.data])
    move_ops_into([compute], loop)
    parent.insert_op_before(local, first)
    parent.insert_op_before(loop, first)
    parent.insert_op_after(DeallocOp(local.result), first)
    read = LoadOp(local.result, [channel.induction_var])
    block.body.block.insert_op_before(read, frontier[0])
    value.replace_all_uses_with(read.result)
    for op in reversed(ops):
        if op in invariant and not any(result.uses for result in op.results):
            op.detach()
            op.erase()
    used = {op.memref for op in block.walk() if isinstance(op, LoadOp)}
    set_block_buffers(block, [b for b in block.reads if b in used] + [local.result],
                      list(block.writes))
    return loop, first


def _schedule_hoisted(nest: Elementwise, config: CpuConfig) -> bool:
    """The per-channel values of `nest` hoisted (`_hoist_channel_values`), their loop
    vectorized, the nest over the plane scheduled as one of its own, its plane in parallel;
    False where there is nothing to hoist (nothing changed)."""
    hoisted = _hoist_channel_values(nest)
    if hoisted is None:
        return False
    per_channel, plane_nest = hoisted
    try:
        vectorize(per_channel)
    except ScheduleError:
        pass
    schedule_runtime_extents(plane_nest, config)
    if config.parallel and not any(op.kind.data == "parallel" for op in plane_nest.walk()
                                   if isinstance(op, ForOp)):
        try:
            parallel(plane_nest)  # the plane, not the batch (often one image)
        except ScheduleError:
            pass
    return True


def depends_before(op: Operation, target: Operation, among: set[Operation]) -> bool:
    """Whether `op` is `target` or one of the ops of `among` that `target` uses, directly or
    through others."""
    pending, seen = [target], set()
    while pending:
        current = pending.pop()
        if current is op:
            return True
        if current in seen:
            continue
        seen.add(current)
        pending += [o.owner for o in current.operands
                    if isinstance(o.owner, Operation) and o.owner in among]
    return False


def _runtime_reduction(root: ForOp, config: CpuConfig) -> bool:
    """A reduction over loops of runtime extent (a global pool over a runtime plane), which
    only the channels-last kernel takes: its channels vectorized in chunks, the chunks in
    parallel (the static rules would run it as a row kernel over its reduction); returns
    whether it did (nothing changed otherwise)."""
    nest = _analyze_root(root, runtime_reduction=True)
    if not isinstance(nest, Reduction):
        return False
    spatial = list(nest.spatial)
    stores = [op for op in accesses_in(body_ops(spatial[-1])) if isinstance(op, StoreOp)]
    if not stores:
        return False
    lanes = config.lanes(stores[0].value.type)
    if nest.alloc is None and _vectorizable(spatial[-1]) and _channels_fit(nest, spatial, lanes):
        nest = _accumulate_locally(nest, runtime_reduction=True)  # a matmul into its output
        spatial = list(nest.spatial)
    chunks = _channels_last_kernel(nest, spatial, lanes, config) \
        if _vectorizable(spatial[-1]) else None
    if chunks is None:
        return _plane_sum(nest, spatial, config)
    if config.parallel:
        _parallel_channels_last(spatial, chunks, config)
    return True


def _channels_fit(nest: Reduction, spatial: list[ForOp], lanes: int) -> bool:
    """Whether `_channels_last_kernel` takes the shape of `nest` (a static innermost spatial
    loop in whole chunks inside a runtime row) but for its accumulator: attention's `p @ v`
    over a runtime sequence (64 channels of a head for each of the sequence's rows, reduced
    over the runtime sequence) accumulating into its output."""
    if len(spatial) < 2:
        return False
    inner, row = spatial[-1], spatial[-2]
    trip = inner.trip_count()
    return trip is not None and row.trip_count() is None and _channel_chunk(
        trip, lanes, _shares_input(nest, inner, row)) is not None


def _plane_sum(nest: Reduction, spatial: list[ForOp], config: CpuConfig) -> bool:
    """A sum over a runtime plane read contiguously (an NCHW global average pool): its two
    reduction loops merged into one over the plane's points (`_merge_plane`), that loop in
    vector partial sums (`split_runtime_sum`), the outer spatial loops parallel; returns
    whether it applied (the merge may have, with nothing else)."""
    reduction = list(nest.reduction)
    _merge_plane(reduction)
    if not split_runtime_sum(reduction[-1], nest.update, nest.home, config):
        return False
    if config.parallel:
        _parallel_outer(spatial, config)
    return True


def _transposed_copy(nest: Elementwise, lanes: int) -> ForOp | None:
    """A transposing copy (`out[..., i, j] = x[..., j, i]`, the static rule's pattern; one
    block, its store indexed by the loops in order, its load by a permutation of them whose
    last index is the loop `i` just outside the innermost `j`, of static extent: a
    channels-last region's input edge over a runtime plane) tiled on both loops, each tile a
    transpose in registers (`j.1` vectorized outside `i.1`,
    `LoopVectorizer.widen_transposed_copy`): a static loop split (its extent a multiple of
    the tile: `lanes`, or half or a quarter of it down to `MIN_TRANSPOSE_LANES`, 8 channels
    in 8 x 8 tiles), a runtime `i` in whole tiles and a rest, where the copy runs as it is (a
    runtime `j`, the region's output edge, would leave a rest inside each tile of `i`: not
    taken). Returns the loop over the tiles of `i`, None where it does not apply (nothing
    changed)."""
    copy = permuting_copy(nest)
    if copy is None:
        return None
    load, _ = copy
    loops = nest.spatial
    if load.indices[-1] is not loops[-2].induction_var or loops[-1].trip_count() is None or \
            any(constant_value(loop.step) != 1 for loop in loops[-2:]):
        return None
    trips = [loop.trip_count() for loop in loops[-2:] if loop.trip_count() is not None]
    lanes = next((w for w in (lanes, lanes // 2, lanes // 4)
                  if w >= MIN_TRANSPOSE_LANES and not any(trip % w for trip in trips)), 0)
    if not lanes:
        return None
    read, inner = loops[-2], loops[-1]
    try:
        if read.trip_count() is None:
            read_outer, read_tile, _ = split_peeled(read, lanes)
        else:
            read_outer, read_tile = split(read, [lanes])
    except ScheduleError:
        return None
    try:  # a step refused leaves a correct copy, tiled or not
        inner_outer, inner_tile = split(inner, [lanes])
        reorder([read_outer, inner_outer, inner_tile, read_tile])
        inner_tile.properties["kind"] = StringAttr("vectorized")
    except ScheduleError:
        pass
    return read_outer


def _merge_plane(spatial: list[ForOp]) -> bool:
    """Merges two adjacent spatial loops over a plane of runtime size, the two innermost or,
    where the innermost is static (a channels-last image's channels), the two outside it,
    into one loop over `H * W` points when every access that moves with them indexes two
    adjacent dims of its buffer by them (each maybe plus a value that is always 0) and those
    dims are, at run time, the loops' extents (traced to the function's input sizes and the
    outputs' shape functions): the accesses then go through a `memref.collapse_shape` of those
    dims at the merged index, which `loop-linearize-runtime-strides` folds into the flat
    index. A row of a 7x7 plane, 7 outputs in tiles of 4, 2 and 1, becomes one run of 49 (the
    static rules' `merge_rows`). Returns whether it merged."""
    loops = _plane_loops(spatial)
    if loops is None:
        return False
    outer, inner, function = loops
    rows = _plane_accesses(outer, inner, function)
    if rows is None:
        return False
    buffers = {access.memref for access, _ in rows}
    root = spatial[0]
    parent = root.parent_block()
    assert parent is not None
    views: dict[SSAValue, SSAValue] = {}
    for buffer in buffers:
        view = _collapse_pair(buffer, next(axis for access, axis in rows
                                           if access.memref is buffer))
        parent.insert_op_before(view, root)
        views[buffer] = view.result
    count = arith.MuliOp(outer.ub, inner.ub)
    parent.insert_op_before(count, root)
    fused_iv = outer.induction_var
    moved = body_ops(inner)
    for op in moved:
        op.detach()
    inner.detach()
    outer.operands = (outer.lb, count.result, outer.step)
    row = arith.DivUIOp(fused_iv, inner.ub)
    column = arith.RemUIOp(fused_iv, inner.ub)
    body = outer.body.block
    body.insert_op_before(row, body.first_op)  # type: ignore[arg-type]
    body.insert_op_after(column, row)
    for use in list(fused_iv.uses):
        if use.operation not in (row, column):
            use.operation.operands[use.index] = row.result
    inner.induction_var.replace_all_uses_with(column.result)
    inner.erase()
    move_ops_into(moved, outer)
    axis = f"{outer.axis.data}.{inner.axis.data}.fused"
    rename_axis(outer, inner.axis.data, [])
    rename_axis(outer, outer.axis.data, [axis])
    outer.properties["axis"] = StringAttr(axis)
    fused_iv.name_hint = value_name(axis)
    for access, position in rows:
        indices = list(access.indices)
        indices[position:position + 2] = [fused_iv]
        if isinstance(access, StoreOp):
            access.operands = (access.value, views[access.memref], *indices)
        else:
            access.operands = (views[access.memref], *indices)
    for block in [op for op in outer.walk() if isinstance(op, BlockOp)]:
        set_block_buffers(block, [views.get(b, b) for b in block.reads],
                          [views.get(b, b) for b in block.writes])
    for op in reversed(list(outer.walk())):
        if op is not outer and is_pure(op) and op.results and not any(
                result.uses for result in op.results):
            op.detach()
            op.erase()
    spatial[spatial.index(outer):spatial.index(inner) + 1] = [outer]
    return True


def _plane_loops(spatial: list[ForOp]) -> tuple[ForOp, ForOp, func.FuncOp] | None:
    """The two loops `_merge_plane` would merge, the inner of runtime extent and the only op
    of the outer's body, and their function; None where there are none."""
    if len(spatial) < 2:
        return None
    outer, inner = spatial[-2], spatial[-1]
    if inner.trip_count() is not None and len(spatial) > 2:
        outer, inner = spatial[-3], spatial[-2]
    if body_of(outer) != [inner] or inner.trip_count() is not None:
        return None
    function = outer.parent_op()
    while function is not None and not isinstance(function, func.FuncOp):
        function = function.parent_op()
    return None if function is None else (outer, inner, function)


def _plane_accesses(outer: ForOp, inner: ForOp, function: func.FuncOp
                    ) -> list[tuple[LoadOp | StoreOp, int]] | None:
    """The accesses that move with `outer` and `inner` and the axis where they index two
    adjacent dims of their buffer by them, when all do over a plane of the loops' extents,
    each buffer at one axis, and no buffer is also accessed otherwise; else None."""
    scanned = merged_accesses(
        accesses_in(body_ops(inner)), outer, inner,
        lambda access, axis: _is_plane_of(access.memref, axis, outer, inner, function))
    if scanned is None:
        return None
    rows, others = scanned
    axes = {access.memref: axis for access, axis in rows}
    if not rows or set(axes) & others or len({(access.memref, axis) for access, axis in rows}
                                             ) != len(axes):
        return None
    return rows


def _collapse_pair(buffer: SSAValue, axis: int) -> memref.CollapseShapeOp:
    """A (not yet inserted) `memref.collapse_shape` of `buffer`'s dims `axis` and `axis + 1`
    into one."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    shape = list(buffer_type.get_shape())
    pair = shape[axis:axis + 2]
    merged = pair[0] * pair[1] if min(pair) >= 0 else DYNAMIC_INDEX
    groups = [[d] for d in range(axis)] + [[axis, axis + 1]] + [
        [d] for d in range(axis + 2, len(shape))]
    view = memref.CollapseShapeOp(
        operands=[buffer],
        result_types=[MemRefType(buffer_type.get_element_type(),
                                 [*shape[:axis], merged, *shape[axis + 2:]])],
        properties={"reassociation": ArrayAttr(
            ArrayAttr(IntegerAttr(d, i64) for d in group) for group in groups)},
    )
    view.result.name_hint = f"{buffer.name_hint or 'buffer'}_plane"
    return view


def _is_plane_of(buffer: SSAValue, axis: int, outer: ForOp, inner: ForOp,
                 function: func.FuncOp) -> bool:
    """Whether `buffer` (an argument or allocation of `function`, row-major) has, as its dims
    `axis` and `axis + 1`, sizes equal at run time to the extents of `outer` and `inner`
    (from 0)."""
    buffer_type = buffer.type
    if not isinstance(buffer_type, MemRefType) or not is_identity_layout(buffer_type) or (
            not isinstance(buffer.owner, AllocOp) and not (
                isinstance(buffer, BlockArgument) and buffer.block is function.body.block)):
        return False
    if constant_value(outer.lb) != 0 or constant_value(inner.lb) != 0:
        return False
    sizes = buffer_sizes(buffer, function)
    return all(_size_expr(function, size) is not None and
               _size_expr(function, size) == _size_expr(function, bound)
               for size, bound in zip(sizes[axis:axis + 2], (outer.ub, inner.ub), strict=True))


def _size_expr(function: func.FuncOp, size: SSAValue | int) -> AffineExpr | None:
    """`size` (a value of `function`'s loop-level IR) in terms of its inputs' sizes: an input's
    size argument is its symbol, an output's its shape function (`dlc.dim_sizes`), `arith` on
    `index` as in `output_sizes`."""
    if isinstance(size, int):
        return AffineExpr.constant(size)
    args = function.body.block.args
    dims = dim_args(function)
    first = len(args) - len(dims)
    outputs = function.attributes.get(NUM_OUTPUTS_ATTR)
    if not isinstance(outputs, IntegerAttr):
        return None
    num_inputs = first - outputs.value.data

    def size_argument(value: SSAValue) -> AffineExpr | None:
        if not (isinstance(value, BlockArgument) and value.block is function.body.block
                and value.index >= first):
            return None
        argument, dim = dims[value.index - first]
        if argument < num_inputs:
            return AffineExpr.symbol([d for d in dims if d[0] < num_inputs].index((argument, dim)))
        attrs = function.arg_attrs.data[argument] if function.arg_attrs else None
        size_map = attrs.data.get(DIM_SIZES_ATTR) if attrs is not None else None
        if not isinstance(size_map, AffineMapAttr):
            return None
        dynamic = [d for a, d in dims if a == argument]
        return size_map.data.results[dynamic.index(dim)]

    expr = index_arith_expr(size, size_argument)
    if expr is None:
        return None
    return expr.replace_dims_and_symbols([], checked_sizes(
        function.attributes.get(SIZE_CHECKS_ATTR), len([d for d in dims if d[0] < num_inputs])))


def _offset(value: SSAValue, iv: SSAValue) -> int | None:
    """`k` where `value` is `iv + k` (`arith.addi` / `arith.subi` of constants), else None."""
    if value is iv:
        return 0
    owner = value.owner
    if isinstance(owner, arith.AddiOp | arith.SubiOp):
        constant = constant_value(owner.rhs)
        inner = _offset(owner.lhs, iv) if constant is not None else None
        if inner is not None and constant is not None:
            return inner + constant if isinstance(owner, arith.AddiOp) else inner - constant
        if isinstance(owner, arith.AddiOp) and (constant := constant_value(owner.lhs)) is not None:
            inner = _offset(owner.rhs, iv)
            return None if inner is None else inner + constant
    return None


def _index_range(value: SSAValue, iv: SSAValue, loop: ForOp
                 ) -> tuple[int, int, int] | None:
    """(`s`, `lo`, `hi`) where `value` is `s * iv + t` (`s` = 0: no `iv`) and `t`, a sum of
    constants and induction variables of static loops inside `loop` (a conv's taps), takes
    values in `[lo, hi]`; None for any other form (`arith.addi`, `arith.subi` of a term
    without `iv`, `arith.muli` of `iv` by a positive constant)."""
    if value is iv:
        return 1, 0, 0
    constant = constant_value(value)
    if constant is not None:
        return 0, constant, constant
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        if isinstance(owner, ForOp) and owner is not loop and loop.is_ancestor(owner):
            lb, trip = constant_value(owner.lb), owner.trip_count()
            if lb is not None and trip and constant_value(owner.step) == 1:
                return 0, lb, lb + trip - 1
        return None
    op = value.owner
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        left, right = _index_range(op.lhs, iv, loop), _index_range(op.rhs, iv, loop)
        if left is None or right is None:
            return None
        if isinstance(op, arith.AddiOp) and not (left[0] and right[0]):
            return left[0] + right[0], left[1] + right[1], left[2] + right[2]
        if isinstance(op, arith.SubiOp) and not right[0]:
            return left[0], left[1] - right[2], left[2] - right[1]
        return None
    if isinstance(op, arith.MuliOp):
        factor = constant_value(op.rhs)
        scaled = _index_range(op.lhs, iv, loop)
        if factor is not None and factor > 0 and scaled is not None and scaled[1:] == (0, 0):
            return scaled[0] * factor, 0, 0
    return None


def _partition_guards(loop: ForOp) -> ForOp | None:
    """Splits `loop` (step 1) where its body's bounds checks change (TVM's LoopPartition): a
    read guarded against its tensor's runtime size (`cmpi ult, %a, %n` with `%a` = `s * %i +
    t`, `t` a constant or a sum with taps, the induction variables of static loops inside
    `loop`; the index clamped by `minui %a, %n - 1`: a pad's input, a padded conv's window)
    runs its interior iterations, where every check holds for every tap, in a loop of their
    own with the checks and clamps removed and the lane index an `addi` (what the vectorizer
    takes); the iterations before and after keep the checks. Returns the interior loop, or
    None where the body has no such check."""
    iv = loop.induction_var
    guards: list[tuple[Operation, tuple[int, int, int], SSAValue]] = []
    clamps: list[tuple[Operation, SSAValue]] = []
    for op in loop.walk():
        if isinstance(op, arith.CmpiOp) and op.predicate.value.data == ULT_PREDICATE and \
                (span := _index_range(op.lhs, iv, loop)) is not None and span[0] > 0 and \
                is_defined_outside(op.rhs, loop):
            guards.append((op, span, op.rhs))
    checked = {(op.lhs, bound) for op, _, bound in guards}  # type: ignore[attr-defined]
    for op in loop.walk():
        if isinstance(op, arith.MinUIOp):
            last = op.rhs.owner  # `minui %a, %n - 1` of an `%a` checked against `%n`
            if isinstance(last, arith.SubiOp) and (op.lhs, last.lhs) in checked and \
                    constant_value(last.rhs) == 1:
                clamps.append((op, op.lhs))
    if not guards or constant_value(loop.step) != 1:
        return None
    block = loop.parent_block()
    assert block is not None
    builder = IndexBuilder(loop, block, loop)
    start = max(-(lo // scale) for _, (scale, lo, _), _ in guards)  # s * i + lo >= 0
    first = builder.insert(arith.MinSIOp(
        builder.insert(arith.MaxSIOp(loop.lb, index_constant(max(start, 0), loop))), loop.ub))
    stop: SSAValue = loop.ub
    for _, (scale, _, hi), bound in guards:  # s * i + hi < n: i < ceil((n - hi) / s)
        extra = scale - 1 - hi
        end = bound if extra == 0 else builder.insert(
            arith.SubiOp(bound, index_constant(-extra, loop)) if extra < 0 else
            arith.AddiOp(bound, index_constant(extra, loop)))
        if scale > 1:  # a negative numerator leaves an end of at most 0, below `first`
            end = builder.insert(arith.DivSIOp(end, index_constant(scale, loop)))
        stop = builder.insert(arith.MinSIOp(stop, end))
    second = builder.insert(arith.MaxSIOp(stop, first))
    interior, after = loop.clone(), loop.clone()
    interior.operands = (first, second, *interior.operands[2:])
    after.operands = (second, *after.operands[1:])
    loop.operands = (loop.lb, first, *loop.operands[2:])
    block.insert_op_after(interior, loop)
    block.insert_op_after(after, interior)
    mapped = dict(zip(loop.walk(), interior.walk(), strict=True))
    true = arith.ConstantOp(IntegerAttr(1, 1))
    interior.body.block.insert_op_before(true, interior.body.block.first_op)
    for op, _, _ in guards:
        clone = mapped[op]
        clone.results[0].replace_all_uses_with(true.result)
        clone.detach()
        clone.erase()
    for op, index in clamps:
        clone = mapped[op]
        clone.results[0].replace_all_uses_with(mapped[index.owner].results[0] if index is not iv
                                    else interior.induction_var)
        clone.detach()
        clone.erase()
    for op in list(interior.walk()):  # `%i - c` as `%i + (-c)`: a lane index
        if isinstance(op, arith.SubiOp) and (c := constant_value(op.rhs)) is not None and \
                _offset(op.lhs, interior.induction_var) is not None:
            negated = index_constant(-c, interior)
            added = arith.AddiOp(op.lhs, negated)
            op.parent_block().insert_op_before(added, op)  # type: ignore[union-attr]
            op.results[0].replace_all_uses_with(added.result)
            op.detach()
            op.erase()
    return interior


def _accumulate_locally(nest: Reduction, runtime_reduction: bool = False) -> Reduction:
    """A reduction that accumulates into its output (no fused epilogue) made to accumulate
    into a local of one element, stored into the output by an epilogue block after the
    reduction loops (TVM's `cache_write` into registers): the vector loops then widen it into
    a tile of accumulators that stay in registers, instead of a load and a store of the output
    for every update. `nest` as it is when it has a local accumulator already, or when its
    output is not stored at one point per iteration of the spatial loops."""
    if nest.alloc is not None:
        return nest
    stores = [op for op in nest.init.walk() if isinstance(op, StoreOp) and op.memref is nest.home]
    home_type = nest.home.type
    if len(stores) != 1 or not isinstance(home_type, MemRefType):
        return nest
    indices = list(stores[0].indices)
    for op in nest.update.walk():
        if isinstance(op, LoadOp | StoreOp) and op.memref is nest.home and \
                list(op.indices) != indices:
            return nest
    body = nest.init.parent_block()
    assert body is not None
    zero = index_constant(0, nest.init)
    alloc = AllocOp(MemRefType(home_type.get_element_type(), [1]), "local", [])
    alloc.result.name_hint = "acc"
    body.insert_op_before(alloc, nest.init)
    local = alloc.result
    for block in (nest.init, nest.update):
        for op in block.walk():
            if isinstance(op, LoadOp | StoreOp) and op.memref is nest.home:
                kept = [local if operand is nest.home else operand
                        for operand in op.operands[:len(op.operands) - len(indices)]]
                op.operands = (*kept, zero)
        replace_buffer(block, nest.home, local)
    copy_body = Block()
    value = LoadOp(local, [zero])
    copy_body.add_ops([value, StoreOp(value.result, nest.home, indices)])
    write = BlockOp(f"{nest.update.block_name.data}.local_write", [local], [nest.home],
                    copy_body, spatial_axes=[a.data for a in nest.update.spatial_axes.data])
    last = nest.reduction[0] if nest.reduction else nest.update
    body.insert_op_after(write, last)
    body.insert_op_after(DeallocOp(local), write)
    analyzed = analyze(nest.spatial[0], static_spatial=False,
                       runtime_reduction=runtime_reduction)
    return analyzed if isinstance(analyzed, Reduction) else nest


def _reduction_steps(nest: Reduction) -> int | None:
    """The static number of update steps per output (the product of the reduction loops'
    trip counts), None when one of them is a runtime extent."""
    steps = 1
    for loop in nest.reduction:
        trip = loop.trip_count()
        if trip is None:
            return None
        steps *= trip
    return steps


def _output_channels(nest: Reduction, spatial: list[ForOp], lanes: int
                     ) -> tuple[ForOp, LoadOp, int, int, list[arith.DivUIOp]] | None:
    """(the loop, the load, its index, the vector width, the group divisions) of a static
    spatial loop `c` outside the runtime row whose iterations are multiples of the vector
    width, along which exactly one load of the update moves, by `c` itself in one of its
    indices and not along its last index (a conv's OIHW weight along its output channels), the
    other loads not at all (the input, the same for every output channel) or only through
    `c // G` (`arith.divui`, one constant G: a grouped conv's input `x[n, (c // G) * C/groups +
    rc, ...]`, the same for the channels of a group). The vector width is `lanes`, or the
    widest power of two dividing G where that is fewer (`MIN_GROUP_LANES` at least), so that
    a vector's channels share one group; None where there is none."""
    loads = [op for op in nest.update.walk()
             if isinstance(op, LoadOp) and op.memref is not nest.home]
    for loop in spatial[:-1]:
        trip = loop.trip_count()
        if trip is None:
            continue
        iv = loop.induction_var
        groups = [op for op in nest.update.walk()
                  if isinstance(op, arith.DivUIOp) and op.lhs is iv]
        divisors = {constant_value(op.rhs) for op in groups}
        width = lanes
        if groups:
            (group, *others) = divisors
            if others or group is None or group <= 0:
                continue
            while width > group or group % width:
                width //= 2
            if width < MIN_GROUP_LANES:
                continue
        if trip % width:
            continue
        through = frozenset(op.result for op in groups)
        moving = [load for load in loads
                  if any(depends_on(i, {iv}, through) for i in load.indices)]
        if len(moving) != 1 or not isinstance(moving[0].memref.type, MemRefType):
            continue
        load = moving[0]
        indices = list(load.indices)
        dims = [d for d, index in enumerate(indices) if depends_on(index, {iv}, through)]
        if len(dims) == 1 and indices[dims[0]] is iv and dims[0] != len(indices) - 1 and \
                load.memref in nest.update.reads:
            return loop, load, dims[0], width, groups
    return None


def _channel_candidate(nest: Reduction, spatial: list[ForOp], lanes: int
                       ) -> tuple[ForOp, LoadOp, int, int, list[arith.DivUIOp]] | None:
    """`_output_channels` of a reduction over a runtime row with `MIN_CHANNEL_STEPS` steps,
    at least `MIN_CHANNEL_VECTORS` vectors of them: what `_channel_kernel` takes."""
    steps = _reduction_steps(nest)
    if spatial[-1].trip_count() is not None or steps is None or steps < MIN_CHANNEL_STEPS:
        return None
    found = _output_channels(nest, spatial, lanes)
    if found is None or (found[0].trip_count() or 0) < MIN_CHANNEL_VECTORS * found[3]:
        return None
    return found


def _channel_kernel(nest: Reduction, spatial: list[ForOp], lanes: int, config: CpuConfig,
                    plane: bool = False) -> bool:
    """A reduction over a runtime row of outputs (an image row of runtime width) with a long
    static reduction (`MIN_CHANNEL_STEPS`) and output channels in multiples of `lanes`
    (`_output_channels`, at least `MIN_CHANNEL_VECTORS` vectors) vectorized over those
    channels instead of the row (the static rules'
    channel kernel, `plan_channel_kernel`): the weight packed `[C / lanes]...[lanes]` so that
    the lanes of a step are one contiguous vector (`pack`; a constant weight is packed at
    compile time, `loop-fold-constant-nests`), the row split into tiles of
    `CHANNEL_TILE_ROWS[0]` outputs unrolled and narrower tiles over the outputs left, so that
    each reduction step loads one weight vector and broadcasts one input per row of the tile
    into the tile's accumulators, whatever the row's length (a row kernel fills its lanes only
    with rows of whole vectors: a 7-wide row fills 7 of 16). The epilogue runs transposed,
    serial over the channels and vectorized over the tile's outputs, which are contiguous in
    the output. It needs `MIN_CHANNEL_VECTORS` vectors of channels, and a merged plane
    (`plane`: a 1x1 conv's H * W points, a long row whose vectors the row kernel fills)
    `MIN_PLANE_CHANNEL_STEPS` steps. Returns whether it applied (nothing changed
    otherwise)."""
    row = spatial[-1]
    found = _channel_candidate(nest, spatial, lanes)
    if found is None or nest.alloc is None or (
            plane and (_reduction_steps(nest) or 0) < MIN_PLANE_CHANNEL_STEPS):
        return False
    channels, weight, dim, lanes, groups = found
    operand = list(nest.update.reads).index(weight.memref)
    tiles = [0] * len(weight.indices)
    tiles[dim] = lanes
    root = spatial[0]
    try:
        check_pack(nest.update, operand, tiles, None)  # before anything changes
        outer, vector = split(channels, [lanes])  # two vectors at least
        for group in groups:  # the vector's channels share the group of its first
            group.operands = (outer.induction_var, group.rhs)
        band = [outer if loop is channels else loop for loop in spatial]
        reorder([*band, vector])
    except ScheduleError:
        spatial[:] = spatial_band(root)
        return False
    pack(nest.update, operand, tiles)
    spatial[:] = band
    rows = max(1, min(CHANNEL_TILE_ROWS[0], config.max_accumulators))
    widths = [w for w in CHANNEL_TILE_ROWS if w <= rows]
    _row_tiles(nest, row, vector, widths, transposed=True)
    return True


def _channels_last_kernel(nest: Reduction, spatial: list[ForOp], lanes: int,
                          config: CpuConfig) -> ForOp | None:
    """A reduction whose innermost spatial loop is static and contiguous in every access that
    moves with it (the channels of a channels-last image: NHWC convs, depthwise or not, and
    pools), inside a runtime row (the image's width) or a row of one output (a global pool
    over a runtime plane, a squeeze-excite block's 1x1 convs under a runtime batch): the
    channels split into chunks of whole vectors (`CHANNEL_CHUNK_VECTORS` at most, the widest
    that divides them; else all of them, a multiple of `MIN_CHUNK_LANES`), the chunk loop
    moved outside the row, the row in unrolled tiles of `CHANNEL_TILE_ROWS` outputs (as many
    as the target's accumulators allow) and narrower tiles over the outputs left: each
    reduction step loads what moves with the channels once per tile (a weight vector shared
    by the tile's outputs) and, per output, an input vector or a broadcast element. The
    epilogues store whole vectors, the channels being contiguous in the output. Returns the
    loop over the chunks (the channels' loop when they are one chunk), None where it does
    not apply (nothing changed)."""
    if len(spatial) < 2:
        return None
    inner, row = spatial[-1], spatial[-2]
    trip = inner.trip_count()
    if trip is None or row.trip_count() not in (None, 1) or nest.alloc is None:
        return None
    shared = _shares_input(nest, inner, row)
    chunk = _channel_chunk(trip, lanes, shared)
    if chunk is None:
        return None
    root = spatial[0]
    vector = chunks = inner
    if shared and trip != chunk:
        panels = _chunk_panels(nest, inner, chunk)
        try:
            chunks, vector = split(inner, [chunk])
            reorder([*spatial[:-2], chunks, row, vector])
        except ScheduleError:
            spatial[:] = spatial_band(root)
            return None
        spatial[:] = [*spatial[:-2], chunks, row, vector]
        if panels is not None:
            pack(nest.update, *panels)
    inside = None if shared or trip == chunk else chunk
    vectors = -(-chunk // lanes)
    rows = max(1, min(CHANNEL_TILE_ROWS[0], config.max_accumulators // vectors))
    widths = [rows, *(w for w in CHANNEL_TILE_ROWS if w < rows)]  # 6 rows x 4 vectors
    interior = _partition_guards(row)
    if interior is None:
        _row_tiles(nest, row, vector, widths, inside)
        return chunks
    after = interior.next_op
    assert isinstance(after, ForOp), "a partition makes three loops"
    edges = [w for w in widths if w <= EDGE_TILE_ROWS]  # the padded columns: a few
    for piece, piece_widths in ((row, edges), (interior, widths), (after, edges)):
        left = analyze(piece, static_spatial=False)
        if isinstance(left, Reduction) and len(left.spatial) > 1:
            _row_tiles(left, piece, left.spatial[-1], piece_widths, inside)
    return chunks


def _shares_input(nest: Reduction, inner: ForOp, row: ForOp) -> bool:
    """Whether no read of the update moves with both the channels `inner` and the `row` (a
    1x1 conv's input, broadcast along the channels; not a depthwise conv's)."""
    loads = [op for op in nest.update.walk()
             if isinstance(op, LoadOp) and op.memref is not nest.home]
    ivs = {inner.induction_var}, {row.induction_var}
    return not any(depends_on(i, ivs[0]) for load in loads for i in load.indices
                   if any(depends_on(j, ivs[1]) for j in load.indices))


def _channel_chunk(trip: int, lanes: int, shared: bool) -> int | None:
    """The channels a channels-last kernel's chunk spans: the most whole vectors dividing
    `trip` (`CHANNEL_CHUNK_VECTORS` at most where the input is `shared`, else one), or all of
    them when fewer and a multiple of `MIN_CHUNK_LANES` (24: a vector and a half); None for
    any other count."""
    most = CHANNEL_CHUNK_VECTORS if shared else 1
    chunk = next((lanes * v for v in range(most, 0, -1) if trip % (lanes * v) == 0), None)
    if chunk is None and trip <= most * lanes and trip % MIN_CHUNK_LANES == 0:
        chunk = trip
    return chunk


def _peel_channels(nest: Elementwise | Reduction, config: CpuConfig) -> ForOp | None:
    """Splits a channels-last reduction over a runtime row whose channels no chunk divides, or
    only chunks of one vector where the input is shared (ShuffleNet's 116, 232, 464 channels;
    MobileNetV2's 144 take chunks of 3 vectors), in two nests at the last multiple of a
    vector (116: 112 and the 4 left) or else of the widest chunk (464: 448 and 16), the
    second a copy over the channels after that point (its channel loop from 0, each access at
    the channel plus the point): each then takes whole chunks (`_channels_last_kernel`),
    where the one nest would have none (116) or chunks of one vector (464). Returns the copy
    (inserted after the nest), None where nothing was split."""
    if not isinstance(nest, Reduction) or len(nest.spatial) < 2 or nest.alloc is None:
        return None
    inner, row = nest.spatial[-1], nest.spatial[-2]
    trip = inner.trip_count()
    if trip is None or row.trip_count() not in (None, 1) or not _vectorizable(inner) or \
            constant_value(inner.lb) is None or constant_value(inner.step) != 1:
        return None
    stores = [op for op in accesses_in(body_ops(inner)) if isinstance(op, StoreOp)]
    if not stores:
        return None
    lanes = config.lanes(stores[0].value.type)
    shared = _shares_input(nest, inner, row)
    widest = (CHANNEL_CHUNK_VECTORS if shared else 1) * lanes
    chunk = _channel_chunk(trip, lanes, shared)
    if chunk is not None and (chunk == trip or chunk > lanes or not shared):
        return None  # whole chunks (of one vector where the input moves with the channels)
    point = trip - trip % lanes if trip % lanes else trip - trip % widest
    if chunk is None and trip % MIN_CHUNK_LANES or not 0 < point < trip:
        return None
    root = nest.spatial[0]
    copy = root.clone()
    ops, copied = list(root.walk()), list(copy.walk())
    peeled = copied[ops.index(inner)]
    assert isinstance(peeled, ForOp)
    start = constant_value(inner.lb)
    assert start is not None
    Rewriter.insert_op(copy, InsertPoint.after(root))
    # the copy's loop from 0 (as the rules expect) over the channels left, each at iv + point
    iv = peeled.induction_var
    shifted = arith.AddiOp(iv, index_constant(point, root))
    body = peeled.body.block
    assert body.first_op is not None
    body.insert_op_before(shifted, body.first_op)
    replace_uses(iv, shifted.result, keep=lambda user: user is shifted)
    peeled.operands = (peeled.lb, index_constant(start + trip - point, root), peeled.step)
    inner.operands = (inner.lb, index_constant(start + point, root), inner.step)
    return copy


def _chunk_panels(nest: Reduction, inner: ForOp, chunk: int
                  ) -> tuple[int, list[int], list[int]] | None:
    """(operand, tiles, permutation) packing the one read that moves with the channels `inner`
    (along its last index only: a channels-last conv's HWIO weight) into a panel per chunk of
    channels, `[O / chunk][H][W][I][chunk]`, so that a chunk's steps read consecutive vectors
    (unpacked, each step's chunk is a slice of a row of all the channels: a 1x1 conv of 192
    channels reads 256 of every 768 bytes); None where there is no such read or `pack` does
    not apply (checked before anything changes)."""
    iv = inner.induction_var
    moving = [op for op in nest.update.walk() if isinstance(op, LoadOp)
              and op.memref is not nest.home and any(depends_on(i, {iv}) for i in op.indices)]
    if len(moving) != 1 or moving[0].memref not in nest.update.reads:
        return None
    indices = list(moving[0].indices)
    if indices[-1] is not iv or any(depends_on(i, {iv}) for i in indices[:-1]):
        return None
    rank = len(indices)
    operand = list(nest.update.reads).index(moving[0].memref)
    tiles, perm = [0] * (rank - 1) + [chunk], [rank - 1, *range(rank - 1)]
    try:
        check_pack(nest.update, operand, tiles, perm)
    except ScheduleError:
        return None
    return operand, tiles, perm


def _row_tiles(nest: Reduction, row: ForOp, vector: ForOp, widths: list[int],
               chunk: int | None = None, transposed: bool = False) -> None:
    """Tiles of `widths[0]` outputs of the runtime `row` (unrolled) x the static `vector` loop
    inside it (vectorized), their accumulators local; then tiles of each narrower width over
    the outputs left. Each epilogue runs in the same order, vectorized over `vector` and
    unrolled over the tile's outputs, as the init (`_channels_last_kernel`: the channels
    contiguous in the output), or, `transposed`, serial over `vector` and vectorized over the
    tile's outputs (`_channel_kernel`: the row contiguous in the output). `chunk`: `vector`
    is first split into chunks of that many iterations, run inside each tile's loop over the
    row, around the tile."""
    rest = None
    try:
        tile_rows, rest = _vector_loop(row, widths[0])
        if chunk is not None:
            chunks, vector = split(vector, [chunk])
            reorder([chunks, tile_rows, vector])
        tile = [tile_rows, vector]
        _widen_accumulator(nest, tile)
        for epilogue in nest.epilogues:
            moved = _distribute(epilogue, vector)
            if transposed:
                copy = _distribute(moved, tile_rows)
                reorder([moved, copy])
                moved.properties["kind"] = StringAttr(TRANSPOSED_EPILOGUE_KIND)
                copy.properties["kind"] = StringAttr("vectorized")
            else:
                vectorize(moved, strided_loads=True)
                _distribute(moved, tile_rows).properties["kind"] = StringAttr("unrolled")
        _nest_tile(nest, tile, tile_rows)
        init_rows = nest.init.parent_op()
        init_rows = init_rows.parent_op() if init_rows is not None else None
        if not transposed and isinstance(init_rows, ForOp) and \
                init_rows.trip_count() is not None:
            init_rows.properties["kind"] = StringAttr("unrolled")  # registers, not a memset
    except ScheduleError:
        pass
    _vectorize_init(nest)
    if widths[1:] and rest is not None:
        left = analyze(rest, static_spatial=False)
        if isinstance(left, Reduction) and len(left.spatial) > 1:
            _row_tiles(left, rest, left.spatial[-1], widths[1:], chunk, transposed)


def _nest_tile(nest: Reduction, tile: list[ForOp], unrolled: ForOp | None,
               strided_loads: bool = False) -> None:
    """The register tile `tile` (its last loop the vector loop, `unrolled` the loop beside it)
    moved inside the reduction loops: the init distributed before them, the vector loop
    vectorized, `unrolled` unrolled, and the innermost reduction loops of up to
    `MAX_UNROLLED_REDUCTION` steps unrolled around the tile (`unrolled_reductions`, the static
    kernel's: a 3x3 window's taps, a 5x5 pool's row)."""
    decompose_reduction(nest.update, tile[0])
    reorder([*nest.reduction, *tile])
    vectorize(tile[-1], strided_loads=strided_loads)
    if unrolled is not None:
        unrolled.properties["kind"] = StringAttr("unrolled")
    for loop in unrolled_reductions(nest):
        loop.properties["kind"] = StringAttr("unrolled")


def _vectorize_init(nest: Reduction) -> None:
    """The loop around a scheduled tile's init (its innermost copy, `decompose_reduction`'s)
    vectorized where its extent is static."""
    init_loop = nest.init.parent_op()
    if isinstance(init_loop, ForOp) and init_loop.trip_bound() is not None:
        try:
            vectorize(init_loop)
        except ScheduleError:
            pass


def _strided_reads(nest: Reduction, row: ForOp) -> bool:
    """Whether the update reads along `row` with a stride (a strided conv's input row, which
    the vectorizer reads as contiguous parts and shuffles)."""
    iv = row.induction_var
    return any(isinstance(op, LoadOp) and op.memref is not nest.home and op.indices
               and depends_on(op.indices[-1], {iv})
               and lane_stride(op.indices[-1], iv) not in (None, 1)
               for op in nest.update.walk())


def _block_reused_axis(nest: Reduction, spatial: list[ForOp], config: CpuConfig,
                       strided: bool = False) -> ForOp | None:
    """A static spatial loop (outside the vector axis) over which the update re-reads the
    same elements of one operand while another moves with it (a conv's input across output
    channels, its weight along them), split by `REUSE_BLOCK` (or 2; by the target's
    `max_rows` first where the update's reads are `strided`, a strided conv's input row, whose
    shuffles the block's rows then share, with `STRIDED_TILE_VECTORS` vectors, as the static
    rules' row kernel does), its inner loop moved innermost of the spatial band (to be
    unrolled inside the reduction loops: each vector read feeds that many accumulators);
    `spatial` is updated in place. None where there is none."""
    loads = [op for op in nest.update.walk()
             if isinstance(op, LoadOp) and op.memref is not nest.home]
    factors = (config.max_rows, REUSE_BLOCK, 2) if strided else (REUSE_BLOCK, 2)
    for loop in reversed(spatial[:-1]):
        trip = loop.trip_count()
        factor = next((f for f in factors if trip is not None and trip % f == 0), None)
        moving = [any(depends_on(index, {loop.induction_var}) for index in load.indices)
                  for load in loads]
        if factor is None or not any(moving) or all(moving):
            continue
        root = spatial[0]
        try:
            inner = loop
            if trip == factor:
                spatial.remove(loop)
            else:
                outer, inner = split(loop, [factor])
                spatial[spatial.index(loop)] = outer
            reorder([*spatial, inner])
            return inner
        except ScheduleError:
            spatial[:] = spatial_band(root)
            return None
    return None


def _vectorizable(loop: ForOp) -> bool:
    """Whether every access moving with `loop` moves along its last index, one element per
    iteration (a load up to `MAX_LOAD_STRIDE`: a strided conv's input; or one element per
    `k` iterations, its index the lane index divided by a constant `k`: a nearest upsampling's
    row), and the induction variable feeds only such indices (through `arith.addi`,
    `arith.muli` by a constant, or that division)."""
    iv = loop.induction_var
    accesses = accesses_in(body_ops(loop))
    moving = [access for access in accesses
              if not (isinstance(access, LoadOp) and _repeated_read(access, iv))]
    if not contiguous_in(moving, iv, None, MAX_LOAD_STRIDE):
        return False
    return all(isinstance(use.operation, LoadOp | StoreOp | PrefetchOp | arith.AddiOp
                          | arith.MuliOp) or _divides_lanes(use.operation, iv)
               for use in iv.uses)


def _divides_lanes(op: Operation, iv: SSAValue) -> bool:
    """Whether `op` is an `arith.divui` of a lane index of `iv` by a positive constant."""
    return isinstance(op, arith.DivUIOp) and is_lane_index(op.lhs, iv) and \
        (constant_value(op.rhs) or 0) > 0


def _repeated_read(load: LoadOp, iv: SSAValue) -> bool:
    """Whether `load` reads along its last index one element per `k` iterations of `iv` (the
    index `(iv + x) / k`, `_divides_lanes`), its other indices not moving with `iv`."""
    if not load.indices:  # a 0-d buffer's one element
        return False
    *outer, last = load.indices
    return _divides_lanes(last.owner, iv) if isinstance(last.owner, Operation) and \
        not any(depends_on(index, {iv}) for index in outer) else False


def _vector_loop(loop: ForOp, lanes: int) -> tuple[ForOp, ForOp | None]:
    """(the loop to vectorize, the rest peeled off it): `loop` itself when its extent is
    static, else the inner loop of whole tiles of `lanes` iterations and the loop of the
    iterations left."""
    if loop.trip_count() is not None:
        return loop, None
    _, inner, rest = split_peeled(loop, lanes)
    if lanes == 1:  # tiles of one iteration leave none
        rest.detach()
        rest.erase()
        return inner, None
    return inner, rest


def _masked_tiles(loop: ForOp, lanes: int) -> ForOp:
    """`loop` split into tiles of `lanes` iterations, the last one partial (`split`'s guarded
    form: the inner loop runs to `minui(lanes, ub - i)`, which the vectorizer masks); returns
    the inner loop."""
    return split(loop, [lanes])[1]


def _vectorize_elementwise(loop: ForOp, lanes: int, config: CpuConfig) -> None:
    """Whole vectors of `lanes` iterations, then, over the iterations left (a runtime extent),
    one masked vector (`_masked_tiles`); a static extent is vectorized as it is."""
    trip = loop.trip_count()
    if trip is not None and trip < config.min_vector_extent:
        return
    try:
        vector, rest = _vector_loop(loop, lanes)
        vectorize(vector, strided_loads=True)
        if rest is not None:
            vectorize(_masked_tiles(rest, lanes), strided_loads=True)
    except ScheduleError:
        return


def _vectorize_reduction(nest: Reduction, loop: ForOp, width: int, lanes: int,
                         channels: ForOp | None = None, masked: bool = False) -> None:
    """The vector loop over outputs moved inside the reduction loops: a local accumulator of
    one element widened to one per lane (and per iteration of `channels`, a loop of reused
    reads inside `loop`, unrolled beside the vector loop), the epilogues and the init
    distributed into loops of their own, the update's vector loop moved innermost. Tiles of
    `width` outputs first (several vectors: independent accumulator chains, a window's sum
    being a chain of dependent adds), then the outputs left (fewer than `width`) in tiles of
    one vector, the last one's lanes past the row masked (`masked`: this call makes those, from
    `_masked_tiles`): no output is left to the unscheduled nest. (Masked tiles of two vectors,
    both always computed, gave a row block of 4 rows 8 accumulator chains, not 4, but computed
    a third more lanes over a 40-wide rest: the YOLO-style SPPF pools, bound by their max's
    instructions rather than its latency, 17% slower.) A step a primitive refuses (its
    `ScheduleError` raised before it changes anything) leaves the nest correct, with the steps
    before it."""
    rest = None
    try:
        if masked:
            vector = _masked_tiles(loop, lanes)
        else:
            vector, rest = _vector_loop(loop, width)
        tile = [vector]
        if channels is not None:
            reorder([channels, vector])
            tile = [channels, vector]
        _widen_accumulator(nest, tile)
        for epilogue in nest.epilogues:
            moved = _distribute(epilogue, vector)
            vectorize(moved, strided_loads=True)
            if channels is not None:
                _distribute(moved, channels)
        _nest_tile(nest, tile, channels, strided_loads=True)
    except ScheduleError:
        pass
    _vectorize_init(nest)
    if rest is not None:
        left = analyze(rest, static_spatial=False)
        if isinstance(left, Reduction):
            inner = left.spatial[1] if len(left.spatial) > 1 else None
            _vectorize_reduction(left, rest, width, lanes, inner, masked=True)


def _widen_accumulator(nest: Reduction, loops: list[ForOp]) -> None:
    """A local accumulator of one element made inside `loops` (a reduction with fused
    epilogues) becomes one of an element per iteration of them, made around them."""
    alloc = nest.alloc
    if alloc is None:
        return
    old = alloc.result
    old_type = old.type
    assert isinstance(old_type, MemRefType)
    trips = [loop.trip_bound() for loop in loops]
    if old_type.get_shape() != (1,) or None in trips:
        raise ScheduleError(f"cannot widen the accumulator {old_type}", loops[0])
    parent = loops[0].parent_block()
    assert parent is not None
    widened = AllocOp(MemRefType(old_type.get_element_type(), trips), "local", [])
    widened.result.name_hint = old.name_hint
    parent.insert_op_before(widened, loops[0])
    parent.insert_op_after(DeallocOp(widened.result), loops[0])
    indices = tuple(loop.induction_var for loop in loops)
    for use in list(old.uses):
        user = use.operation
        if isinstance(user, LoadOp | StoreOp):
            kept = [widened.result if operand is old else operand
                    for operand in user.operands[:len(user.operands) - 1]]
            user.operands = (*kept, *indices)
        elif isinstance(user, BlockOp):
            replace_buffer(user, old, widened.result)
        elif isinstance(user, DeallocOp):
            user.detach()
            user.erase()
    alloc.detach()
    alloc.erase()


def _distribute(block: Operation, loop: ForOp) -> ForOp:
    """Moves `block` (an epilogue block, or a loop of it), in `loop`'s body, into a copy of
    `loop` right after it (loop fission: legal for an epilogue, which reads at each point only
    what the iterations before made), with copies of the index arithmetic of the body it uses;
    returns the copy."""
    arithmetic = [op for op in body_ops(loop)
                  if op is not block and not op.regions and is_pure(op)]
    copied = {result for op in arithmetic for result in op.results}
    for op in block.walk():
        for operand in op.operands:
            owner = operand.owner
            if (isinstance(owner, Operation) and loop.is_ancestor(owner)
                    and not block.is_ancestor(owner) and operand not in copied):
                raise ScheduleError("cannot distribute: the epilogue uses a value of the "
                                    "loop's body that is not index arithmetic", loop)
    copy = new_loop(loop.lb, loop.ub, loop.step, loop.axis.data, like=loop)
    mapper: dict[SSAValue, SSAValue] = {loop.induction_var: copy.induction_var}
    clones = [op.clone(value_mapper=mapper) for op in arithmetic]
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_op_after(copy, loop)
    move_ops_into([*clones, block], copy)
    for op in block.walk():
        op.operands = tuple(mapper.get(operand, operand) for operand in op.operands)
    for clone in reversed(clones):
        if not any(result.uses for result in clone.results):
            clone.detach()
            clone.erase()
    return copy


def _shares_evenly(chunks: int, config: CpuConfig) -> bool:
    """Whether `chunks` chunks of channels share among the threads evenly enough to run in
    parallel (`_parallel_channels_last`); all the cores (`threads` 0) count as two."""
    threads = max(config.threads, 2)
    return chunks >= 2 and (chunks % threads == 0 or chunks >= MIN_CHUNKS_PER_THREAD * threads)


def _parallel_channels_last(spatial: list[ForOp], chunks: ForOp, config: CpuConfig) -> None:
    """A channels-last kernel's parallel loop: its chunks of channels where they outnumber the
    threads enough to share them evenly (a multiple of the threads, or `MIN_CHUNKS_PER_THREAD`
    each: one team for the whole nest, each thread keeping its chunks' weights) and nothing
    but a batch is outside them (a merged plane), else the outermost loop of its image's rows
    (`_parallel_outer`)."""
    count = chunks.trip_count() or 0
    before = spatial[:spatial.index(chunks)] if chunks in spatial else spatial
    outermost = all(loop.trip_count() == 1 or (loop is spatial[0] and loop.trip_count() is None)
                    for loop in before)
    if outermost and chunks is not spatial[-1] and _shares_evenly(count, config):
        try:
            parallel(chunks)
            return
        except ScheduleError:
            pass
    _parallel_outer(spatial, config, rows_first=True)


def _parallel_outer(spatial: list[ForOp], config: CpuConfig, rows_first: bool = False
                    ) -> None:
    """The outermost spatial loop with a static count of at least two iterations becomes
    parallel (a batch, often of one image, comes before the channels), else the outermost of
    runtime extent, but the rows of an image rather than its leading batch where both are
    outside the innermost loop (a conv of 16 output channels vectorized over them: one block
    of channels), when the `parallel` primitive finds it legal. The innermost loop is not a
    candidate where an image's rows are outside it (a channels-last transpose's channels: a
    team per pixel); a static loop whose count the threads do not share evenly
    (`_shares_evenly`: an RGB image's 3 channels on 2 threads, one idle a third of the time)
    yields to the rows; `rows_first`: the rows before any static loop (a channels-last
    kernel's chunks of channels, inside the rows)."""
    runtime = [loop for loop in spatial if loop.trip_count() is None]
    outer = [loop for loop in runtime if loop is not spatial[-1]]
    if len(outer) > 1 and outer[0] is spatial[0]:
        runtime = outer[1:]  # a leading runtime loop is a batch, often of one image
    rows = [loop for loop in outer if loop is not spatial[0]]
    static = [loop for loop in (spatial[:-1] if rows else spatial)
              if (loop.trip_count() or 0) >= 2]
    if rows and static and not _shares_evenly(static[0].trip_count() or 0, config):
        static = []
    for loop in ((runtime or static) if rows_first else (static or runtime))[:1]:
        try:
            parallel(loop)
        except ScheduleError:
            pass
