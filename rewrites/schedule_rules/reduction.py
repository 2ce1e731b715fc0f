"""Default CPU schedule of a reduction nest (GEMM/dense, conv2d, depthwise conv, pools, reduce):
a register-blocked micro-kernel.

Counterpart: TVM's `dense_nopack`/`dense_pack` and `conv2d_NCHWc` x86 schedules, dlight's
GEMV/reduction rules, BLIS's macro-kernel around a register-blocked micro-kernel.

The schedule, for a nest `spatial loops { init; reduction loops { update }; epilogues }` whose
innermost spatial axis `c` is contiguous in every access that depends on it:

    [B packed into panels [ceil(C/NR)][K][NR], zero-padded; GEMM-like operands only]
    for the other spatial axes {
    [for c.g step G * NR {      // GEMM: groups of G panels that fit in half the L2, outside r.o]
    for r.o step MR { for c.o step NR {                       // the outermost: parallel
      %tile = loop.alloc local : memref<MR x NR x T>                       // register tile
      for r.i (unrolled MR) { for c.i (vectorized NR) { init -> tile } }
      for reduction loops {                                               // k: innermost but one
        for r.i (unrolled MR) { for c.i (vectorized NR) { update on tile } }
      }
      for r.i (unrolled MR) { for c.i (vectorized NR) { epilogues, tile -> output } }
    } [c tail: the same kernel with NR = C mod NR] } [r tail: MR = R mod MR] }

`r` (the row axis) is a spatial axis that the vector operands do not depend on (GEMM's `i`,
conv2d's output channel), so that each vector loaded at a reduction step is reused by MR rows
while the MR x NR/16 accumulators stay in registers: LLVM promotes the tile (an alloca accessed at
constant offsets once `r.i` is unrolled) to vector registers. With a 16-lane vector the kernel
is MR x NR with MR <= `max_rows` (`max_gemm_rows` for a GEMM over a weight packed at compile
time) and MR * ceil(NR / 16) <= `max_accumulators` (24 of AVX-512's 32 registers): 8x32 for
GEMM (12x32 where the L1 has 12 ways), 6x56 for a 56-wide conv2d row; with AVX2's 8 lanes and
12 of 16 registers, 6x16; the rows split into as few tiles as that allows, as even as they
can be (`balanced_rows`: 49 rows as 7 x 7, not 6 x 8 + 1). A GEMM-like vector operand (a 2-D buffer
read as `B[k, j]`) is first packed so that the kernel streams it contiguously; the innermost
reduction loops are unrolled up to `MAX_UNROLLED_REDUCTION` iterations (a 3x3 window).

A conv2d whose innermost axis `ow` is strided in its input (stride > 1: vectorizing `ow` would
shuffle its input, and gather beyond a stride of 4) gets the same kernel with `c` = the output
channels and `r` = `ow` (`plan_channel_kernel`) when that pays for its transposed epilogue over
the reduction (`_strided_channel_kernel_pays`: a 7x7/2 stem, a 3x3/2 conv of many channels; a
3x3/2 stem of 3 channels keeps the row kernel, its output rows vectorized):
its OIHW weight is packed into `[ceil(OC/NR)][IC][KH][KW][NR]` panels so that a reduction step
loads NR/16 weight vectors, broadcasts MR input scalars and issues MR * NR/16 FMAs; its
epilogue runs transposed, `for c.i (serial NR) { for r.i (vectorized MR) }`, so that it stores
MR contiguous outputs of one channel at a time (vectorized over channels it would scatter lane by
lane, H*W apart: 16x the stores, and 1.5x the whole model's compile time for ResNet-18).

A conv2d whose rows only partly fill the vector lanes (a 7-, 14- or 55-wide row) gets the
channel kernel too when its fuller lanes save more reduction work than its transposed epilogue
costs (`TRANSPOSED_EPILOGUE_COST`: a 3x3 conv's hundreds of reduction steps). Otherwise, when
the two innermost spatial loops walk whole rows of every buffer (a 1x1 conv with few input
channels: `x[n, c, oh, ow]`, `out[n, o, oh, ow]`), they merge into one loop over the plane
(`merge_rows`: collapsed views made before the nest), and the row kernel runs over
(output channels x plane x input channels), a GEMM with contiguous rows; when its input is
larger than half the L2, the loop over the plane's column blocks is outermost, so that each
block's input stays in cache for every block of output channels.

A channels-last 1x1 conv (`out[n, oh, ow, oc] += x[n, oh, ow, ic] * w[0, 0, ic, oc]`, what
the `cpu` pipeline makes of a depthwise region's pointwise convs) is a GEMM over the pixels:
its row axis merges with the other axis its vector operand does not read (`_merge_row_axes`,
`merge_axes`: `x[n, p, ic]`, `out[n, p, oc]`), so that a row block spans the plane rather than
one image row of 7 or 14, and its HWIO weight, unit leading axes read at 0, is seen as the 2-D B
`w'[ic, oc]` (`drop_unit_heads`) that the kernel packs into panels. One thread, EfficientNet-B0:
its head's 1x1 conv 320 -> 1280 on 7x7 took 1.9 ms in the model with row blocks of one image row
(0.70 ms in NCHW), 0.73 ms merged and packed; a 1x1 conv 192 -> 1152 on 7x7 alone 0.35 ms merged,
0.26 ms merged and packed.

A depthwise conv reads its input at the output channel too (`x[n, c, ih, iw]`): its channel
kernel first packs that input channel-last, `[n][ceil(C/NR)][IH][IW][NR]` (`plane_packing`), so
that a reduction step loads the NR channels at one input point as one vector next to the NR
weights. The pack walks the plane as one axis in blocks of one vector's points, which the
vectorizer transposes in registers (`PLANE_PACK_COST`); where the plane is a pad's, the pack
reads the unpadded input through it and zero-fills the packed border, and the pad nest goes
(`padded_plane`). The row kernel, whose rows share no
input vector there (each FMA loads its own; a strided row shuffles too: `row_input_cost`),
loses to it on rows that fill at most half a vector when the packed plane fits the L2: 3x3,
5x5 and 7x7 windows on 7x7 planes (5x5/2 on 14x14); 14-wide and wider rows keep the row
kernel.
A grouped conv with several input channels per group reads its input at the output channel's
group, `x[n, (oc // G) * C/groups + rc, ih, iw]`: when NR lanes divide G, a tile's channels share
one group, and the channel kernel reads that input at the tile's first channel, one value
broadcast to every lane as in an ungrouped conv (`channel_group`; ops.py's 3x3 conv in 8 groups
of 32 channels on 28x28: 0.57x -> 0.84x ORT on a loaded host, CPU time 1.23x).

A nest the channel kernel does not fit whose loads move by 2-4 elements per step of `c` (a
stride-2 pooling window over a padded input) gets the kernel above all the same: the vectorizer
reads such loads as contiguous vectors and shuffles them (ResNet-18's 3x3/2 max pool: 0.40 ->
0.23 ms, 2 threads, interleaved runs of exported libraries; it ran scalar before).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    LoadOp,
    PrefetchOp,
    StoreOp,
    YieldOp,
)
from dlc.rewrites.llvm_lowering.vector import MAX_SHUFFLED_STRIDE
from dlc.rewrites.loop_fold_constant_nests import is_constant_argument, is_runtime_argument
from dlc.rewrites.loop_plan_memory import buffer_bytes
from dlc.rewrites.schedule import ScheduleError, parallel
from dlc.rewrites.schedule.common import (
    base_buffer,
    constant_value,
    depends_on,
    index_constant,
    is_pure,
    value_name,
)
from dlc.rewrites.schedule_rules.config import CpuConfig, element_bytes
from dlc.rewrites.schedule_rules.nest import (
    Reduction,
    accesses_in,
    body_of,
    contiguous_in,
    extent,
    lane_stride,
)
from dlc.rewrites.schedule_rules.padded_plane import PaddedPlane, find_padded_plane
from dlc.rewrites.schedule_rules.partial_sums import (
    add_fast_math_flag,
    collapse_axes,
    combiners,
    drop_unit_heads,
    merge_axes,
    merge_rows,
)
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.dialects.llvm import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, SSAValue

MAX_UNROLLED_REDUCTION = 9
"""The innermost reduction loops are unrolled inside the kernel while the product of their trip
counts stays at most this (a 3x3 window): more would only grow the code."""

TRANSPOSED_KIND = "serial"
"""The kind of the transposed epilogue's loop over the tile's columns (the channel kernel's
output channels). Serial, not unrolled: each iteration reads one column of the tile (MR values a
row apart), and unrolled, LLVM would promote the whole tile to registers and build those columns
from the row vectors with ~450 shuffles per kernel, the costliest code to select in ResNet-18
(its cold compile 3.95 -> 3.26 s with this, LLVM's share 3.3 -> 2.1 s of CPU). With a runtime
column index the tile stays a stack buffer; LLVM still keeps it in registers across the
reduction loop (LICM promotes the loop-invariant tile accesses) and stores it once before the
epilogue. Same speed: ResNet-18 1.04x/1.02x ORT unrolled vs 0.99x/1.02x serial (two runs)."""

TRANSPOSED_EPILOGUE_COST = 0.75
"""What the channel kernel's transposed epilogue costs, in vector instructions per output, beyond
the row kernel's: it reads each column of the tile as MR values a row apart before it stores
them as one vector of MR contiguous outputs.

A conv2d whose rows fill vector lanes only partly (a 7-wide row fills 7 of 16 lanes, a 28-wide
one 28 of 32) is vectorized over its output channels instead when that saves more reduction
work than the epilogue costs (`channel_kernel_pays`): per `lanes` outputs the row kernel issues
`K / row_use` FMAs and the channel kernel `K / channel_use` plus `lanes *` this. Measured (best
of 9, interleaved, conv3x3+BN+ReLU, 2 threads): at 0.875 lane use the channel kernel is
1.14-1.17x faster (64x56x56, 128x28x28, 256x14x14), at 0.9375 1.03-1.21x (64x60x60, 128x30x30,
256x15x15); at 0.83 with 32 channels 0.94-0.97x. One thread, CPU time, AVX-512, with
K x (1/row_use - 1/channel_use) in brackets against the threshold `lanes *` this (12): the
channel kernel 1.2x faster on a Winograd 3x3 conv 32->32 at 14x14 [13.7], even on 16->16 [6.9];
the row kernel 2.4x faster on a direct 3x3 conv 8->32 at 28x28 [10.3].
A 1x1 conv's rows merge into one run over its plane first (`merge_rows`) when the row kernel
then pays: from 14x14 up the run fills its lanes, and the channel kernel stays for 7x7 planes,
its rows then the plane's points, tiled over the whole plane, its loop over the weight panels
outside them (`_worth_merging`)."""


PREFETCH_STEPS = 16
"""How many reduction steps ahead a channel kernel prefetches its operands (`loop.prefetch`):
at ~9 cycles a step of an 8x32 tile, ~150 cycles, an L2 miss's latency and more. Measured on a
1x1 conv 1024 -> 256 at 14x14 (2 threads, this Sapphire Rapids guest, the exported library
called from Python, ms, warm / after a 64 MB write): none 0.369 / 0.511, the weight lines 16
steps ahead 0.374 / 0.504 (32: 0.375 / 0.485), the input 0.350 / 0.451, both 0.337-0.341 /
0.437-0.440 (16 or 32 steps). ONNX Runtime: 0.388 / 0.457. The row kernel likewise: a 1x1
conv 256 -> 64 at 56x56 (its input rows read unpacked, 12.5 KB apart) 0.479 -> 0.421 / 0.714
-> 0.620; MatMul with a constant B, 2 threads, 128x256x1024 0.216 -> 0.204, 512^3 0.84-0.87 ->
0.80, 196x768x768 0.711 -> 0.686."""

CHANNEL_STEP_OVERHEAD = 1.2
"""What a reduction step of the channel kernel costs beyond its FMA issue cycles, in cycles
(`channel_tile`): its MR broadcasts and NR/16 weight loads, the loop's own instructions; so
that a tile of more rows, whose FMAs share one step's overhead, costs less per row. Fitted on
1x1 convs over merged planes (2 threads, this Sapphire Rapids guest, ms, MR x 32 tiles): 169
rows 5 -> 8 0.700 -> 0.647, 196 rows (1024 -> 256, 256 -> 1024 at 14x14) 7 -> 8 0.388 ->
0.364 and 0.394 -> 0.376, 784 rows (512 -> 128, 128 -> 512 at 28x28) 7 -> 8 0.436 -> 0.365
and 0.357 -> 0.325. Without it, tiles of 5 and 7 rows tied with 8 (the FMA cycles alone are
the same per row)."""


PLANE_PACK_COST = 0.4
"""What packing one element of a channel kernel's input plane channel-last costs, in vector
instructions per output beside `TRANSPOSED_EPILOGUE_COST`, times the packed elements per output
(`_plane_kernel_pays`). The pack (`_Builder.pack_channels_nest`) copies blocks of 16 points x 16
channels as 16 row loads, 64 shuffles and 16 stores (`LoopVectorizer.widen_transposed_copy`):
0.375 instructions per element.

A depthwise conv in NCHW reads its input at the output channel, so the channel kernel (full
lanes over channels where a 7-wide row fills 7 of 16) needs the padded input plane packed
`[ceil(C/NR)][IH][IW][NR]` first. Measured (1 thread, best of 15 interleaved, this Zen 5 host,
channel kernel / row kernel): 3x3 at 7x7 on 960 channels 0.76, 5x5 at 7x7 on 1152 0.48 (40
channels 0.85), 5x5/2 at 14x14 on 672 0.50; 3x3 at 14x14 on 576 1.71, 3x3/2 at 56x56 2.58,
3x3/2 at 112x112 1.85, 3x3 at 56x56 4.3, 7x7 at 56x56 1.70 (its packed plane exceeds the L2).
With the row kernel's input reads (`row_input_cost`) that places every one of them (0.31-0.51
would; with the earlier scalar pack, LLVM's gathers, 3x3 at 7x7 was 1.46 and 5x5/2 at 14x14
0.96-1.03)."""


@dataclass
class Packing:
    """A GEMM-like vector operand `B[k, j]` to pack into `[ceil(C/NR)][K][NR]` panels, or (with
    `channel_first`) a conv2d weight `W[oc, ic, kh, kw]` to pack into
    `[ceil(OC/NR)][IC][KH][KW][NR]` panels (`columns` is then OC)."""

    load: LoadOp
    buffer: SSAValue
    rows: int
    columns: int
    channel_first: bool = False
    prefix: int = 0
    """Leading indices of a channel-first weight before its output channel, each an outer
    spatial axis (the transform row `a` of a Winograd conv's `U[a, oc, ic, kw]`): each of
    their values has its own panels, `[A][ceil(OC/NR)][IC][KW][NR]`."""


@dataclass
class KernelPlan:
    """The shape of the micro-kernel: which spatial axes are rows and columns, and tile sizes."""

    row: int | None
    column: int
    lanes: int
    mr: int
    nr: int
    packing: Packing | None
    row_packing: Packing | None = None
    group: int = 1
    """Packed B panels per column group: the loop over groups is outside the loop over row
    blocks, so that a row block of A (in L1/L2) is reused by every panel of the group and the
    group's panels stay in L2 (BLIS's NC blocking). When B is larger than A and than a quarter
    of the L2 (where it matters that every thread would read all of it) and loops run
    parallel, at most a thread's share of the panels: the groups are then the parallel loop,
    each thread streaming its part of B rather than all of it for its rows (a 16 x 784 x 512
    GEMM, an MLP layer on 16 rows, 2 threads: 0.039 -> 0.035 ms; ViT's, BERT's and GPT's
    GEMMs at 128-197 rows within 2%)."""
    columns_first: bool = False
    """The loop over column blocks (packed panels) is outside the other spatial axes too: when
    the packed operand is larger than half the L2, each panel is loaded into L2 once and used
    for the whole output instead of once per output row (a conv2d with a large weight). An
    unpacked GEMM-like nest (only its row and column axes longer than 1: a 1x1 conv over a
    merged plane) whose vector operand, all columns, is larger than half the L2 loops over the
    column blocks outside its row blocks too: each row block would stream all of it again; so
    does one whose vector operand is larger than its broadcast operand when parallel (threads
    splitting the row blocks would each read all of the larger operand; splitting the column
    blocks, all of the smaller: MobileNetV2's 192 -> 32 projection at 28x28, 0.176 -> 0.102 ms
    with 2 threads, where 4 row blocks made 2 threads slower than 1).
    A channel kernel with a packed input plane (a depthwise conv) loops over its channel blocks
    outermost as well: only that block reads its panel of the plane, which then stays in L1 for
    all of the block's output rows (swept once per row, the whole packed plane came back from
    L2 each time: 5x5 at 7x7 on 1152 channels 0.059 -> 0.056 ms, 5x5/2 at 14x14 on 672
    0.068 -> 0.060, 3x3 at 7x7 on 960 0.035 -> 0.033), and the parallel loop has as many
    iterations as channel blocks (21-36 there) instead of 7 output rows."""
    rows_contiguous: bool = False
    """The output is contiguous along the rows, not the columns (the channel kernel): the
    epilogue is vectorized over rows, one column at a time."""
    rows_first: bool = False
    """The loop over row blocks is outside the loop over column blocks: a channel kernel whose
    only other spatial axes have one iteration (a 1x1 conv over its merged plane) and whose
    input, K x rows, is larger than its weight, K x channels. The outer loop is the parallel
    one: threads splitting the row blocks each read all of the smaller operand and their part
    of the larger, as `columns_first` decides for the row kernel; and each thread's pixels are
    the part of the plane the producer's pixel-split loop wrote on its core (the pool's home
    shards). SqueezeNet's squeeze convs on 13x13 (`dlc profile`, 2 threads): 384 -> 48
    0.079 -> 0.057 ms, 512 -> 64 0.106 -> 0.075 ms."""
    plane_packing: Packing | None = None
    """The channel kernel's input read at the output channel too (a depthwise conv's
    `X[n, c, ih, iw]`): packed channel-last into `[n][ceil(C/NR)][IH][IW][NR]` panels, so that
    the NR channels a reduction step reads at one input point are one contiguous vector."""
    channel_group: int = 0
    """G when the channel kernel's input is read at the output channel's group `oc // G` (a
    grouped conv's `X[n, (oc // G) * C/groups + rc, ih, iw]`): NR divides G, so the NR
    channels of a tile share one group, and the kernel reads the input at the tile's first
    channel's group, one value broadcast to every lane as in an ungrouped conv."""
    """GEMM's `A[i, k]` (the broadcast operand), packed into `[ceil(M/MR)][K][MR]` panels so that
    the MR values a reduction step broadcasts are contiguous (MR rows of a row-major A lie a
    whole row apart: the same cache set for a 4 KiB row)."""


def _zero_of(element: Attribute) -> arith.ConstantOp:
    """The zero that pads a packed panel: an integer for the int8/int32 GEMMs of quantized
    convs and matmuls, a float otherwise."""
    if isinstance(element, IntegerType):
        return arith.ConstantOp(IntegerAttr(0, element))
    return arith.ConstantOp(FloatAttr(0.0, element))  # type: ignore[arg-type]


def plan_kernel(nest: Reduction, config: CpuConfig) -> KernelPlan | None:
    """The kernel for `nest`, or None if its innermost spatial axis cannot be vectorized."""
    if _has_loose_ops(nest):
        return None
    column = len(nest.spatial) - 1
    c_loop = nest.spatial[column]
    columns = extent(c_loop)
    element = _element_type(nest.home)
    if element is None:
        return None
    lanes = config.lanes(element)
    blocks: list[Operation] = [nest.init, nest.update, *nest.epilogues]
    accesses = accesses_in(blocks)
    iv = c_loop.induction_var
    if not contiguous_in(accesses, iv, nest.home):
        decided, channel_plan = _strided_choice(nest, accesses, columns, lanes, config)
        if decided:
            return channel_plan
    if columns < config.min_vector_extent or _lane_use(columns, lanes) < 1:
        # Rows that leave lanes idle, or too short to vectorize at all (a 3x3 conv on
        # ResNet's last 2x2 or 1x1 planes: a scalar nest at 1 GFLOP/s): the channel kernel,
        # where it pays; for rows too short, only over at least a whole vector of channels
        # (fewer, as a squeeze-excite GEMV's 4, go to the reduction's partial sums).
        channel_plan = plan_channel_kernel(nest, config)
        if channel_plan is not None and (
            columns >= config.min_vector_extent
            or extent(nest.spatial[channel_plan.column]) >= lanes
        ) and _plane_kernel_pays(nest, channel_plan, columns, lanes, config):
            return channel_plan
    if columns < config.min_vector_extent or lanes < 2:
        return None
    vector_loads = [
        access for access in accesses
        if isinstance(access, LoadOp) and access.memref is not nest.home
        and access.indices and depends_on(access.indices[-1], {iv})
    ]
    row = _row_axis(nest, column, vector_loads)
    packing = _packing(nest, c_loop, vector_loads, lanes, config)
    if packing is not None:
        nr = min(2 * lanes, -(-columns // lanes) * lanes)
    elif columns <= 4 * lanes:
        nr = columns
    else:
        nr = 2 * lanes
    vectors = -(-nr // lanes)
    mr = 1
    if row is not None:
        rows = extent(nest.spatial[row])
        most = config.max_gemm_rows if packs_a_weight(packing, nest) else config.max_rows
        mr = balanced_rows(rows, max(1, min(most, config.max_accumulators // vectors)))
    latency_bound = mr * vectors < config.fma_units * config.fma_latency
    if latency_bound and columns > nr:
        # Few rows (a GEMV, a recurrent step at batch 1): widen the tile along the columns so
        # that enough independent accumulators hide the FMA latency.
        wide = min(config.max_accumulators // mr, config.fma_units * config.fma_latency,
                   -(-columns // lanes))
        nr = max(nr, wide * lanes)
    row_packing = (
        _row_packing(nest, row, column) if packing is not None and config.pack_rows else None
    )
    streamed = reduction_length(nest) * columns * element_bytes(element)
    broadcast = reduction_length(nest) * extent(nest.spatial[row]) * element_bytes(element) \
        if row is not None else 0
    group = 1
    if packing is not None:
        panel_bytes = packing.rows * nr * element_bytes(element)
        panels = -(-columns // nr)
        group = max(1, min(panels, config.l2_bytes // 2 // max(panel_bytes, 1)))
        if config.parallel and streamed > max(broadcast, config.l2_bytes // 4):
            group = min(group, -(-panels // max(config.threads, 2)))
    columns_first = (
        packing is None and row is not None and mr < extent(nest.spatial[row])
        and all(extent(loop) == 1 for d, loop in enumerate(nest.spatial) if d not in (row, column))
        and (streamed > config.l2_bytes // 2 or (config.parallel and streamed > broadcast))
    )
    return KernelPlan(row, column, lanes, mr, nr, packing, row_packing, group,
                      columns_first=columns_first)


def balanced_rows(rows: int, most: int) -> int:
    """MR for a row axis of `rows`: as few row tiles as tiles of at most `most` rows allow,
    as even as they can be (`ceil(rows / ceil(rows / most))`), so that the tail tile is not a
    sliver whose few accumulators leave the FMA units waiting on their latency while it
    streams the panels from L2 again (ConvNeXt's 49-token GEMMs took 12 + 12 + 12 + 12 + 1
    rows, now 10 + 10 + 10 + 10 + 9: 49x768x3072 0.94-0.99 -> 0.92 ms, 49x3072x768 0.85-0.89
    -> 0.84 ms, 2 threads). Row counts that `most` divides, or whose tail is already long,
    keep `min(rows, most)`."""
    most = max(1, min(rows, most))
    tiles = -(-rows // most)
    return -(-rows // tiles)


def unrolled_reductions(nest: Reduction) -> set[ForOp]:
    """The innermost reduction loops (never the outermost one: GEMM's k, conv2d's input
    channels) whose trip counts multiply to at most `MAX_UNROLLED_REDUCTION`: the micro-kernel
    unrolls them (a conv's window)."""
    unrolled: set[ForOp] = set()
    product = 1
    for loop in reversed(nest.reduction[1:]):
        trip = loop.trip_count() or 0
        if trip == 0 or product * trip > MAX_UNROLLED_REDUCTION:
            break
        product *= trip
        unrolled.add(loop)
    return unrolled


def packs_a_weight(packing: Packing | None, nest: Reduction) -> bool:
    """Whether `nest` is a GEMM over a weight packed at compile time: its vector operand a
    constant argument packed into panels, and its kernel unrolls no window. Such a kernel takes
    up to `max_gemm_rows` rows (each row tile streams the panels from L2 once)."""
    return packing is not None and is_constant_argument(packing.buffer) \
        and not unrolls_a_window(nest)


def unrolls_a_window(nest: Reduction) -> bool:
    """Whether the micro-kernel of `nest` unrolls more than one reduction step (a 3x3 conv's
    window; not a GEMM's or a 1x1 conv's one-iteration loops)."""
    return any((loop.trip_count() or 0) > 1 for loop in unrolled_reductions(nest))


def reduction_length(nest: Reduction) -> int:
    """The iterations of `nest`'s reduction loops at one output point (K)."""
    length = 1
    for loop in nest.reduction:
        length *= extent(loop)
    return length


def channel_kernel_pays(length: int, row_use: float, channel_use: float, lanes: int,
                        extra: float = 0.0, row_step: float = 1.0) -> bool:
    """Whether the channel kernel's fuller lanes (`channel_use` of them against the row
    kernel's `row_use`) save more FMAs over a reduction of `length` than its transposed
    epilogue costs (`TRANSPOSED_EPILOGUE_COST`) plus `extra` instructions per output, per
    `lanes` outputs; a reduction step of the row kernel costs `row_step` vector instructions
    (its FMA, plus the input reads no other row shares: `row_input_cost`), one of the channel
    kernel's 1."""
    saved = length * (row_step / row_use - 1 / channel_use)
    return saved > lanes * (TRANSPOSED_EPILOGUE_COST + extra)


def _plane_kernel_pays(nest: Reduction, channel_plan: KernelPlan, columns: int, lanes: int,
                       config: CpuConfig) -> bool:
    """Whether the channel kernel `channel_plan` beats the row kernel over `columns`-wide rows
    (`channel_kernel_pays`), counting its input plane's channel-last pack as `PLANE_PACK_COST`
    per packed element and the row kernel's own reads of that input (`row_input_cost`). It
    never pays on rows that fill more than half a vector (one thread, CPU time, this Zen 5
    host, channel / row kernel: 5x5 on 14x14 planes, 480 and 672 channels, 0.77 with a bias
    epilogue but 1.02-1.03 with EfficientNet's SiLU, which the transposed epilogue runs on
    14 lanes a channel; on 28x28 planes, 72 and 120 channels, 1.27 and 1.62, the row kernel
    keeping two vectors a row in flight; 7-wide rows with SiLU 0.61 (5x5, 5x5/2) and 0.83
    (3x3)), nor with a packed plane larger than the L2: the pack runs before the kernel,
    which would read it back from the L3 (a 7x7 window on 96 x 56x56: 1.5 MB, 1.7x slower)."""
    extra, row_step = 0.0, 1.0
    outputs = 1
    for d, loop in enumerate(nest.spatial):
        if d != channel_plan.column:
            outputs *= extent(loop)
    outputs = max(outputs, 1)  # an empty batch: nothing to amortize over, nothing to divide by
    weight = channel_plan.packing
    if weight is not None and is_runtime_argument(base_buffer(weight.buffer)):
        # The operand packed channel-first is an input of each call (a channels-last 1x1
        # conv's activation, `x[n, p, ic]`, vectorized over the pixels `p`): packed on every
        # call, not folded. Counted, the row kernel wins on a 24-channel projection over 56x56
        # (3136 x 144 x 24: 41 -> 76 GFLOP/s, one thread; ORT 72). The operand is a view of
        # the argument where the rows merged (`x[n, p, ic]` collapsed from `x[n, h, w, ic]`):
        # its base buffer is what the check asks about.
        # Per output: the pack's elements over every output, channels included (a conv's
        # runtime weight, 3x3 64->64 on 28x28, costs 0.3 instructions an output, not 19).
        # An operand each of whose elements feeds one output (a reduction over the rows of an
        # input, as a layer norm's mean) is not reused: its pack is a transposed copy of the
        # input for nothing, where the reduction's partial sums read it contiguously.
        all_outputs = outputs * extent(nest.spatial[channel_plan.column])
        if weight.rows * weight.columns >= all_outputs * reduction_length(nest):
            return False
        extra += weight.rows * weight.columns / max(all_outputs, 1) * PLANE_PACK_COST
    packing = channel_plan.plane_packing
    if packing is not None and 2 * columns > lanes:
        return False
    if packing is not None:
        element = _element_type(packing.buffer)
        memref_type = packing.buffer.type
        assert isinstance(memref_type, MemRefType) and element is not None
        channels = -(-packing.columns // channel_plan.nr) * channel_plan.nr
        packed_bytes = channels * packing.rows * element_bytes(element)
        for size in memref_type.get_shape()[:packing.prefix]:
            packed_bytes *= size
        if config.l2_bytes and packed_bytes > config.l2_bytes:
            return False
        extra += packing.rows / outputs * PLANE_PACK_COST
        row_step = 1 + row_input_cost(packing.load, nest.spatial[-1].induction_var, lanes)
    return channel_kernel_pays(
        reduction_length(nest), _lane_use(columns, lanes),
        _lane_use(extent(nest.spatial[channel_plan.column]), lanes), lanes, extra, row_step)


def _strided_choice(nest: Reduction, accesses: list[LoadOp | StoreOp], columns: int,
                    lanes: int, config: CpuConfig) -> tuple[bool, KernelPlan | None]:
    """For a nest whose innermost axis is not contiguous in some access: (True, the plan) when
    the channel kernel (or nothing: None) is the answer, (False, None) when the row kernel
    over the shuffled accesses is worth planning (`_plane_kernel_pays`,
    `_strided_channel_kernel_pays`)."""
    iv = nest.spatial[-1].induction_var
    channel_plan = plan_channel_kernel(nest, config)
    shuffled = contiguous_in(accesses, iv, nest.home, MAX_SHUFFLED_STRIDE)
    if not shuffled:
        return True, channel_plan
    if channel_plan is None:
        return False, None  # a strided pooling window: the row kernel, shuffling its loads
    if channel_plan.plane_packing is not None:
        pays = _plane_kernel_pays(nest, channel_plan, columns, lanes, config)
    else:
        pays = _strided_channel_kernel_pays(nest, channel_plan, accesses, columns, lanes, config)
    return (True, channel_plan) if pays else (False, None)


def _strided_channel_kernel_pays(nest: Reduction, channel_plan: KernelPlan,
                                 accesses: list[LoadOp | StoreOp], columns: int, lanes: int,
                                 config: CpuConfig) -> bool:
    """Whether the channel kernel beats the row kernel on a conv whose rows read their input
    with a stride the vectorizer shuffles (a stride-2 conv's `x[.., ow * 2 + kw]`;
    `channel_kernel_pays`): a reduction step of the row kernel costs its FMA plus those reads
    (`row_input_cost`), which its rows share where the reads do not depend on them (a conv's
    output channels, up to `max_rows` of them with two vectors of columns; a pool's channels
    each read their own), against the channel kernel's transposed epilogue. Over a long
    reduction the reads cost more (ResNet-18's 7x7/2 stem, 3 -> 64, K = 147: 0.93 ms channel
    kernel, 1.05 ms row kernel, 2 threads); over a short one the epilogue does (the 3x3/2 stems
    of 3 input channels, K = 27: SqueezeNet's 3 -> 64 at 111 wide 0.367 -> 0.282 ms with the row
    kernel, MobileNetV2's 3 -> 32 at 112 wide 0.214 -> 0.172 ms; ORT 0.215 and 0.174)."""
    iv = nest.spatial[-1].induction_var
    strided = [
        access for access in accesses
        if isinstance(access, LoadOp) and access.memref is not nest.home and access.indices
        and depends_on(access.indices[-1], {iv}) and lane_stride(access.indices[-1], iv) != 1
    ]
    reads = sum(row_input_cost(load, iv, lanes) for load in strided)
    updates = [a for a in accesses_in([nest.update]) if isinstance(a, LoadOp)]

    def shares(loop: ForOp) -> bool:
        """Whether the rows of `loop` share the strided reads (a conv's output channels; not a
        pool's channels, each reading its own input)."""
        row_iv = loop.induction_var
        return extent(loop) > 1 and any(
            depends_on(i, {row_iv}) for load in updates for i in load.indices
        ) and not any(depends_on(i, {row_iv}) for load in strided for i in load.indices)

    shared = any(shares(loop) for loop in nest.spatial[:-1])
    rows = max(1, min(config.max_rows, config.max_accumulators // 2)) if shared else 1
    return channel_kernel_pays(
        reduction_length(nest), _lane_use(columns, lanes),
        _lane_use(extent(nest.spatial[channel_plan.column]), lanes), lanes,
        row_step=1 + reads / rows)


def row_input_cost(load: LoadOp, iv: SSAValue, lanes: int) -> float:
    """Vector instructions the row kernel (vectorized over `iv`) spends per reduction step
    reading `load`, an input that it reads at the output channel too (a depthwise conv's
    `x[n, c, oh + kh, ow * s + kw]`: no other row of the tile reads the same vector, so each
    FMA has its own): one load for a contiguous row (`s` = 1), `s` loads and `s - 1` shuffles
    for a stride the vectorizer shuffles (2..`MAX_SHUFFLED_STRIDE`), a load and an insert per
    lane otherwise (a gather)."""
    stride = lane_stride(load.indices[-1], iv) if load.indices else None
    if stride == 1:
        return 1.0
    if stride is not None and 2 <= stride <= MAX_SHUFFLED_STRIDE:
        return 2.0 * stride - 1
    return 2.0 * lanes


def _lane_use(extent_: int, lanes: int) -> float:
    """The share of vector lanes used when `extent_` values fill whole vectors of `lanes`."""
    return extent_ / (-(-extent_ // lanes) * lanes)


def plan_channel_kernel(nest: Reduction, config: CpuConfig) -> KernelPlan | None:
    """The kernel that vectorizes a conv2d over its output channels, for a nest whose innermost
    spatial axis is not contiguous (a strided conv2d reads its input at `ow * stride + kw`:
    vectorizing `ow` would gather).

    It applies when the update reads exactly one buffer `W[oc, r...]` at a spatial axis `oc` as
    its first index and reduction indices only (the OIHW weight), or `W[b..., oc, r...]` after
    outer spatial axes `b` (a Winograd conv's `U[a, oc, ic, kw]`), and no other buffer at `oc`.
    Columns are then `oc` (NR = 16 or 32 consecutive channels; `W` packed into
    `[ceil(OC/NR)][IC][KH][KW][NR]` panels, so the weights a reduction step reads are one
    contiguous vector), rows are the innermost spatial axis (`ow`: its input value is a scalar
    broadcast to every lane), and the output is stored lane by lane (a scatter H*W apart)."""
    if not config.pack:
        return None
    element = _element_type(nest.home)
    if element is None:
        return None
    lanes = config.lanes(element)
    spatial_ivs = {loop.induction_var for loop in nest.spatial}
    reduction_ivs = {loop.induction_var for loop in nest.reduction}
    loads = [a for a in accesses_in([nest.update])
             if isinstance(a, LoadOp) and a.memref is not nest.home]
    row = len(nest.spatial) - 1
    candidates = [
        (*found, load) for load in loads
        if (found := _channel_weight(nest, load, row, spatial_ivs, reduction_ivs)) is not None
    ]
    if len(candidates) != 1:
        return None
    column, prefix, load = candidates[0]
    c_iv = nest.spatial[column].induction_var
    if column == row or lanes < 2:
        return None
    channels = extent(nest.spatial[column])
    planes = [other for other in loads if other is not load
              and any(depends_on(index, {c_iv}) for index in other.indices)]
    group = _channel_group(nest, planes, c_iv) if planes else 0
    plane_packing = _plane_packing(nest, planes, c_iv, channels) if planes and not group else None
    if planes and plane_packing is None and not group:
        return None
    if group % lanes:
        return None
    if any(load.memref in block.writes for block in (nest.init, nest.update, *nest.epilogues)):
        return None
    if channels < config.min_vector_extent:
        return None
    memref_type = load.memref.type
    assert isinstance(memref_type, MemRefType)
    shape = memref_type.get_shape()
    if shape[prefix] != channels:
        return None
    rows = 1
    for size in shape[prefix + 1:]:
        rows *= size
    packing = Packing(load, load.memref, rows, channels, channel_first=True, prefix=prefix)
    mr, nr = channel_tile(extent(nest.spatial[row]), channels, lanes, config,
                          rows * element_bytes(element))
    if group and group % nr:
        mr, nr = channel_tile(extent(nest.spatial[row]), lanes, lanes, config,
                              rows * element_bytes(element))
    weight_bytes = channels * rows * element_bytes(element)
    columns_first = weight_bytes > config.l2_bytes // 2 or plane_packing is not None
    rows_first = not columns_first and extent(nest.spatial[row]) > channels and all(
        extent(loop) == 1 for d, loop in enumerate(nest.spatial) if d not in (row, column))
    return KernelPlan(row, column, lanes, mr, nr, packing, columns_first=columns_first,
                      rows_first=rows_first,
                      rows_contiguous=True, plane_packing=plane_packing, channel_group=group)


def _group_divisions(nest: Reduction, c_iv: SSAValue) -> dict[SSAValue, int]:
    """The `arith.divui %c, G` (G a constant) of the update block: the divisor of each."""
    return {
        op.result: divisor for op in nest.update.walk()
        if isinstance(op, arith.DivUIOp) and op.lhs is c_iv
        and (divisor := constant_value(op.rhs)) is not None and divisor > 0
    }


def _channel_group(nest: Reduction, loads: list[LoadOp], c_iv: SSAValue) -> int:
    """G when every index of `loads` depends on the output channel `c` only through `c // G`,
    one constant G for all (a grouped conv's input `X[n, (oc // G) * C/groups + rc, ...]`,
    from buffers no block writes); else 0."""
    divisions = _group_divisions(nest, c_iv)
    if len(set(divisions.values())) != 1:
        return 0
    through = frozenset(divisions)
    blocks = (nest.init, nest.update, *nest.epilogues)
    for load in loads:
        if any(depends_on(index, {c_iv}, through) for index in load.indices):
            return 0
        if any(load.memref in block.writes for block in blocks):
            return 0
    return next(iter(divisions.values()))


def _plane_packing(nest: Reduction, loads: list[LoadOp], c_iv: SSAValue, channels: int
                   ) -> Packing | None:
    """The packing of a channel kernel's input that the update reads at the output channel
    too (a depthwise conv's `X[n, c, ih, iw]`): exactly one such load, whose index at one
    position is the channel axis itself and whose other indices do not depend on it, from a
    buffer no block writes, with exactly `channels` channels."""
    if len(loads) != 1:
        return None
    load = loads[0]
    positions = [q for q, index in enumerate(load.indices) if depends_on(index, {c_iv})]
    if len(positions) != 1 or load.indices[positions[0]] is not c_iv:
        return None
    prefix = positions[0]
    memref_type = load.memref.type
    assert isinstance(memref_type, MemRefType)
    shape = memref_type.get_shape()
    if shape[prefix] != channels or prefix == len(shape) - 1:
        return None
    if any(load.memref in block.writes for block in (nest.init, nest.update, *nest.epilogues)):
        return None
    rows = 1
    for size in shape[prefix + 1:]:
        rows *= size
    return Packing(load, load.memref, rows, channels, channel_first=True, prefix=prefix)


def _channel_weight(
    nest: Reduction, load: LoadOp, row: int, spatial_ivs: set[SSAValue],
    reduction_ivs: set[SSAValue],
) -> tuple[int, int] | None:
    """(the output-channel axis, its index position) when `load` reads a weight
    `W[b..., oc, r...]`: outer spatial axes `b` other than `row`, a spatial axis `oc`, then
    indices that depend on no spatial axis and some on reduction axes (a depthwise conv's
    `W[c, 0, kh, kw]`)."""
    memref_type = load.memref.type
    if not isinstance(memref_type, MemRefType) or memref_type.get_num_dims() < 2:
        return None
    axes = {loop.induction_var: d for d, loop in enumerate(nest.spatial)}
    for prefix in range(len(load.indices) - 1):
        column = axes.get(load.indices[prefix])
        if column is None:
            return None
        rest = load.indices[prefix + 1:]
        if not any(depends_on(index, spatial_ivs) for index in rest):
            if any(depends_on(index, reduction_ivs) for index in rest):
                return column, prefix  # (the caller rejects column == row)
            return None
        if column == row:
            return None
    return None


def channel_tile(rows: int, channels: int, lanes: int, config: CpuConfig,
                 panel_bytes: int = 0) -> tuple[int, int]:
    """The channel kernel's tile (MR rows, NR channels) for a row axis of `rows`, the weight
    panel of one output channel taking `panel_bytes` (IC * KH * KW elements).

    When a two-vector panel would take more than a quarter of the L2 (re-read once per row
    tile, it would not stay there beside the input), the tile with the most accumulators among
    those whose MR divides `rows` and that use at least half of `max_accumulators`, NR one or
    two vectors (more vectors on a tie): with AVX2's 12 accumulators a 7-wide row of a 3x3 conv
    gets 7x8 (a 147 KiB panel) instead of 6x16 and a 1-row tail whose two accumulators ran 1/7
    of the work at a quarter of the rate (a 295 KiB panel). Otherwise, and when no such tile
    exists, NR is two vectors (one if the channels fit in one) and MR the row count up to the
    register budget that makes the fewest FMA cycles over the whole row with its tail tile, a
    tile of M rows taking `max(M * vectors / fma_units, fma_latency)` cycles per reduction step
    (fewer accumulators than the FMA units keep in flight leave them idle) plus
    `CHANNEL_STEP_OVERHEAD`; on a tie, the MR without a tail (one micro-kernel less to
    compile), then the larger. AVX-512's 24 accumulators keep 7x32 for 7, 14 and 28 rows and
    8x32 for 56 and for a merged plane's 169, 196 or 784.

    Measured on this AVX2 host (2 threads, interleaved, ms, 6+1 rows / one-vector tile / this):
    conv3x3 512x7x7 2.48 / 2.08 / 2.08, 256x14x14 2.26 / 1.88 / 1.88; 1x1 convs, whose panel is
    small and whose input streams once per panel, lose with one vector: 1024 -> 512 at 14x14
    3.18 / 3.94 / 2.73 (5 + 5 + 4 rows), 1x1/2 512 -> 1024 at 28x28 2.62 / 4.53 / 3.00."""
    vectors = min(2, -(-channels // lanes))
    if panel_bytes * vectors * lanes > config.l2_bytes // 4:
        best: tuple[int, int] | None = None
        for v in range(vectors, 0, -1):
            for mr in range(min(rows, config.max_rows, config.max_accumulators // v), 0, -1):
                if rows % mr or 2 * mr * v < config.max_accumulators:
                    continue
                if best is None or mr * v > best[0] * best[1]:
                    best = (mr, v)
        if best is not None:
            return best[0], best[1] * lanes
    most = max(1, min(rows, config.max_rows, config.max_accumulators // vectors))

    def cycles(m: int) -> float:
        return max(m * vectors / config.fma_units, config.fma_latency) + CHANNEL_STEP_OVERHEAD

    def cost(m: int) -> tuple[float, bool, int]:
        tail = rows % m
        total = (rows // m) * cycles(m) + (cycles(tail) if tail else 0.0)
        return total, tail != 0, -m

    return min(range(1, most + 1), key=cost), vectors * lanes


def _row_packing(nest: Reduction, row: int | None, column: int) -> Packing | None:
    """The GEMM `A[i, k]` operand of the update (read at the row index and a reduction index,
    not depending on the column), if there is exactly one."""
    if row is None:
        return None
    row_iv = nest.spatial[row].induction_var
    column_iv = nest.spatial[column].induction_var
    reduction_ivs = {loop.induction_var for loop in nest.reduction}
    loads = [
        access for access in accesses_in([nest.update])
        if isinstance(access, LoadOp) and access.memref is not nest.home
        and any(depends_on(index, {row_iv}) for index in access.indices)
    ]
    if len(loads) != 1:
        return None
    load = loads[0]
    memref_type = load.memref.type
    assert isinstance(memref_type, MemRefType)
    if memref_type.get_num_dims() != 2 or load.indices[0] is not row_iv:
        return None
    k = load.indices[1]
    if depends_on(k, {row_iv, column_iv}) or not depends_on(k, reduction_ivs):
        return None
    if any(load.memref in block.writes for block in (nest.init, nest.update, *nest.epilogues)):
        return None
    rows, columns = memref_type.get_shape()
    return Packing(load, load.memref, rows, columns)


def _has_loose_ops(nest: Reduction) -> bool:
    """Whether a band body holds index arithmetic that the blocks use (the kernel rebuilds the
    loops and clones only the blocks)."""
    for band in (nest.spatial, nest.reduction):
        for loop in band:
            if any(is_pure(op) for op in body_of(loop)):
                return True
    return False


def _element_type(buffer: SSAValue) -> object | None:
    memref_type = buffer.type
    if not isinstance(memref_type, MemRefType):
        return None
    return memref_type.get_element_type()


def _row_axis(nest: Reduction, column: int, vector_loads: list[LoadOp]) -> int | None:
    """The spatial axis to block rows over: one the update's vector operands do not depend on
    but some other operand does (so a vector is reused by every row), else the innermost other
    axis. Epilogue loads do not count: they run once per tile, not once per reduction step (a
    residual add reads the output layout, which depends on every axis)."""
    others = [d for d in range(len(nest.spatial)) if d != column and extent(nest.spatial[d]) > 1]
    if not others:
        return None
    loads = [a for a in accesses_in([nest.update]) if isinstance(a, LoadOp)]
    vector_loads = [load for load in vector_loads if load in loads]

    def reuses(d: int) -> bool:
        iv = nest.spatial[d].induction_var
        used = any(any(depends_on(i, {iv}) for i in load.indices) for load in loads)
        return used and not any(
            any(depends_on(i, {iv}) for i in load.indices) for load in vector_loads
        )

    reusing = [d for d in others if reuses(d)]
    if reusing:
        return max(reusing, key=lambda d: extent(nest.spatial[d]))
    return others[-1]


def _packing(
    nest: Reduction, c_loop: ForOp, vector_loads: list[LoadOp], lanes: int, config: CpuConfig
) -> Packing | None:
    """The GEMM `B[k, j]` operand of the update, if it should be packed into panels."""
    if not config.pack:
        return None
    iv = c_loop.induction_var
    columns = extent(c_loop)
    reduction_ivs = {loop.induction_var for loop in nest.reduction}
    candidates = [load for load in vector_loads if nest.update.is_ancestor(load)]
    if len(candidates) != 1 or columns < 2 * lanes:
        return None
    load = candidates[0]
    memref_type = load.memref.type
    assert isinstance(memref_type, MemRefType)
    if memref_type.get_num_dims() != 2 or memref_type.get_shape()[1] != columns:
        return None
    if load.indices[1] is not iv or not depends_on(load.indices[0], reduction_ivs):
        return None
    if any(load.memref in block.writes for block in (nest.init, nest.update, *nest.epilogues)):
        return None
    rows = memref_type.get_shape()[0]
    return Packing(load, load.memref, rows, columns)


# ----------------------------------------------------------------------------------------------
# Building the scheduled nest
# ----------------------------------------------------------------------------------------------


PointMap = dict[SSAValue, SSAValue]
"""Original induction variables -> their values at one point of the tile."""

Fill = Callable[[SSAValue, SSAValue, list[Operation]], None]
"""Emits (into the list) the body of the tile loops for row `ri` and column `ci`."""


class _Builder:
    """Emits the scheduled nest before the original one."""

    def __init__(self, nest: Reduction, plan: KernelPlan, config: CpuConfig) -> None:
        self.nest = nest
        self.plan = plan
        self.config = config
        self.anchor = nest.spatial[0]
        self.name = nest.update.block_name.data
        self.packed: SSAValue | None = None
        self.packed_rows: SSAValue | None = None
        self.packed_plane: SSAValue | None = None
        self.padded: PaddedPlane | None = None

    def const(self, value: int) -> SSAValue:
        return index_constant(value, self.anchor)

    def loop(
        self, lb: int | SSAValue, ub: int | SSAValue, step: int, axis: str, kind: str,
        body: Callable[[SSAValue, list[Operation]], None],
    ) -> ForOp:
        block = Block(arg_types=[IndexType()])
        block.args[0].name_hint = value_name(axis)
        ops: list[Operation] = []
        body(block.args[0], ops)
        block.add_ops([*ops, YieldOp()])
        lb_value = self.const(lb) if isinstance(lb, int) else lb
        ub_value = self.const(ub) if isinstance(ub, int) else ub
        return ForOp(lb_value, ub_value, self.const(step), block, axis, kind)

    # -- the nest ------------------------------------------------------------------------------

    def build(self) -> list[Operation]:
        ops: list[Operation] = []
        if self.plan.packing is not None and self.plan.packing.channel_first:
            pack_ops, self.packed = self.pack_channels_nest(self.plan.packing, "pack")
            ops += pack_ops
            if self.plan.plane_packing is not None:
                self.padded = self.padded_plane(self.plan.plane_packing)
                pack_ops, self.packed_plane = self.pack_channels_nest(
                    self.plan.plane_packing, "pack_plane", runtime=True, padded=self.padded)
                ops += pack_ops
        elif self.plan.packing is not None:
            ops += self.pack_nest(self.plan.packing)
        if self.plan.row_packing is not None:
            ops += self.pack_rows_nest(self.plan.row_packing)
        levels: list[str | int] = []
        for d in range(len(self.nest.spatial)):
            if d not in (self.plan.row, self.plan.column):
                levels.append(d)
        if self.plan.columns_first:
            levels = ["c", *levels, "r"]
        elif self.plan.rows_first:
            levels += ["r", "c"]
        elif self.plan.packing is not None:
            levels += ["C", "r", "c"] if self.plan.group > 1 else ["c", "r"]
        else:
            levels += ["r", "c"]
        columns = extent(self.nest.spatial[self.plan.column])
        nest_ops = self.level(levels, {}, self.const(0), self.plan.mr, self.const(0), columns)
        ops += nest_ops
        for packed in (self.packed, self.packed_rows, self.packed_plane):
            if packed is not None:
                ops.append(DeallocOp(packed))
        return ops

    def level(
        self, levels: list[str | int], ivs: dict[int, SSAValue],
        r_base: SSAValue, mr: int, c_base: SSAValue, c_width: int,
    ) -> list[Operation]:
        """The loops of `levels` (outermost first) around the kernels: an int is another
        spatial axis; "r" blocks the rows by MR; "C" groups the columns into L2-sized groups
        of panels; "c" blocks the columns `[c_base, c_base + c_width)` by NR. Each blocked level
        ends with a smaller tail when its extent is not a multiple of the block."""
        if not levels:
            return self.kernel(ivs, r_base, mr, c_base, c_width)
        head, rest = levels[0], levels[1:]
        spatial = self.nest.spatial
        if isinstance(head, int):
            loop = spatial[head]

            def inner(iv: SSAValue, ops: list[Operation]) -> None:
                ops += self.level(rest, {**ivs, head: iv}, r_base, mr, c_base, c_width)

            return [self.loop(0, extent(loop), 1, loop.axis.data, "serial", inner)]
        if head == "r":
            if self.plan.row is None:
                return self.level(rest, ivs, r_base, 1, c_base, c_width)
            total, tile = extent(spatial[self.plan.row]), self.plan.mr
            axis = f"{spatial[self.plan.row].axis.data}.o"
        else:
            total = c_width
            tile = self.plan.nr * (self.plan.group if head == "C" else 1)
            axis = f"{spatial[self.plan.column].axis.data}.{'g' if head == 'C' else 'o'}"
        main = total - total % tile
        ops: list[Operation] = []

        base = r_base if head == "r" else c_base

        def blocked(offset: SSAValue, body: list[Operation], width: int = tile) -> None:
            start = _add(base, offset, body)
            if head == "r":
                body += self.level(rest, ivs, start, width, c_base, c_width)
            else:
                body += self.level(rest, ivs, r_base, mr, start, width)

        # The loop runs over [0, main) and its blocks start at `base + iv`, so that the
        # indices of every block depend on the loop's own variable (what `parallel` checks).
        if main == tile:
            blocked(self.const(0), ops)
        elif main:
            ops.append(self.loop(0, main, tile, axis, "serial", blocked))
        if total % tile:
            blocked(self.const(main), ops, total % tile)
        return ops

    # -- the micro-kernel ----------------------------------------------------------------------

    def kernel(
        self, ivs: dict[int, SSAValue], r_base: SSAValue, mr: int, c_base: SSAValue, nr: int
    ) -> list[Operation]:
        nest, plan = self.nest, self.plan
        element = _element_type(nest.home)
        lanes = plan.lanes
        width = -(-nr // lanes) * lanes if plan.packing is not None else nr
        tile_alloc = AllocOp(MemRefType(element, [mr, width]), "local")  # type: ignore[arg-type]
        tile_alloc.result.name_hint = "tile"
        tile = tile_alloc.result
        r_axis = nest.spatial[plan.row].axis.data if plan.row is not None else "r"
        c_axis = nest.spatial[plan.column].axis.data
        ops: list[Operation] = [tile_alloc]

        def spatial_map(ri: SSAValue, ci: SSAValue, body: list[Operation]) -> PointMap:
            mapping: dict[SSAValue, SSAValue] = {}
            for d, loop in enumerate(nest.spatial):
                if d == plan.row:
                    mapping[loop.induction_var] = _add(r_base, ri, body)
                elif d == plan.column:
                    mapping[loop.induction_var] = _add(c_base, ci, body)
                else:
                    mapping[loop.induction_var] = ivs[d]
            return mapping

        def tile_nest(columns: int, fill: Fill, transposed: bool = False) -> ForOp:
            """MR rows (unrolled) x `columns` (vectorized) of the tile; `transposed`: a serial
            loop over the columns outside, the rows vectorized inside (see `TRANSPOSED_KIND`)."""
            rows, cols = (mr, f"{r_axis}.i"), (columns, f"{c_axis}.i")
            (outer, outer_axis), (inner, inner_axis) = (cols, rows) if transposed else (rows, cols)
            outer_kind = TRANSPOSED_KIND if transposed else "unrolled"

            def outer_body(o: SSAValue, body: list[Operation]) -> None:
                def inner_body(i: SSAValue, inner_ops: list[Operation]) -> None:
                    ri, ci = (i, o) if transposed else (o, i)
                    fill(ri, ci, inner_ops)

                body.append(self.loop(0, inner, 1, inner_axis, "vectorized", inner_body))

            return self.loop(0, outer, 1, outer_axis, outer_kind, outer_body)

        def init(ri: SSAValue, ci: SSAValue, body: list[Operation]) -> None:
            mapping = spatial_map(ri, ci, body)
            body.append(self.clone_block(nest.init, mapping, tile, ri, ci))

        ops.append(tile_nest(width, init))
        ops.append(
            self.reduction_nest(spatial_map, tile, mr, width, r_base, c_base, r_axis, c_axis)
        )

        def epilogue(ri: SSAValue, ci: SSAValue, body: list[Operation]) -> None:
            mapping = spatial_map(ri, ci, body)
            for block in nest.epilogues:
                body.append(self.clone_block(block, mapping, tile, ri, ci))
            if nest.alloc is None:
                body.append(self.write_back(mapping, tile, ri, ci))

        ops.append(tile_nest(nr, epilogue, transposed=plan.rows_contiguous))
        ops.append(DeallocOp(tile))
        return ops

    def reduction_nest(
        self, spatial_map: Callable[[SSAValue, SSAValue, list[Operation]], PointMap],
        tile: SSAValue, mr: int, width: int, r_base: SSAValue, c_base: SSAValue, r_axis: str,
        c_axis: str,
    ) -> ForOp:
        nest, plan = self.nest, self.plan
        reduction_ivs: dict[SSAValue, SSAValue] = {}
        unrolled = unrolled_reductions(self.nest)

        def update_nest(body: list[Operation]) -> None:
            row_panel = _div(r_base, plan.mr, self, body) if plan.row_packing else None

            def rows(ri: SSAValue, row_body: list[Operation]) -> None:
                if plan.packing is None:
                    def cols(ci: SSAValue, inner: list[Operation]) -> None:
                        mapping = {**spatial_map(ri, ci, inner), **reduction_ivs}
                        inner.append(self.clone_block(nest.update, mapping, tile, ri, ci))

                    row_body.append(
                        self.loop(0, width, 1, f"{c_axis}.i", "vectorized", cols)
                    )
                    return
                lanes = plan.lanes

                def panels(cv: SSAValue, panel_body: list[Operation]) -> None:
                    offset = _mul(cv, lanes, self, panel_body)
                    panel = _div(c_base, plan.nr, self, panel_body)

                    def lane_loop(cl: SSAValue, inner: list[Operation]) -> None:
                        ci = _add(offset, cl, inner)
                        mapping = {**spatial_map(ri, ci, inner), **reduction_ivs}
                        block = self.clone_block(nest.update, mapping, tile, ri, ci)
                        if plan.channel_group:
                            c_iv = nest.spatial[plan.column].induction_var
                            self.use_tile_group(block, mapping[c_iv], c_base)
                        self.use_packed(block, panel, ci)
                        if row_panel is not None:
                            self.use_packed_rows(block, row_panel, ri)
                        inner.append(block)

                    panel_body.append(
                        self.loop(0, lanes, 1, f"{c_axis}.l", "vectorized", lane_loop)
                    )

                row_body.append(self.loop(0, width // lanes, 1, f"{c_axis}.v", "unrolled", panels))

            body.append(self.loop(0, mr, 1, f"{r_axis}.i", "unrolled", rows))

        def band(depth: int, body: list[Operation]) -> None:
            if depth == len(nest.reduction):
                update_nest(body)
                return
            loop = nest.reduction[depth]
            bounds = loop.constant_bounds()
            assert bounds is not None
            kind = "unrolled" if loop in unrolled else "serial"

            def inner(iv: SSAValue, inner_body: list[Operation]) -> None:
                reduction_ivs[loop.induction_var] = iv
                if depth == 0 and self.prefetches(loop):
                    prefetch = self.prefetch_block(spatial_map, tile, width, c_base, loop, iv,
                                                   inner_body)
                    if prefetch is not None:
                        inner_body.append(prefetch)
                band(depth + 1, inner_body)

            body.append(self.loop(bounds[0], bounds[1], bounds[2], loop.axis.data, kind, inner))

        ops: list[Operation] = []
        band(0, ops)
        assert isinstance(ops[0], ForOp)
        return ops[0]

    def prefetches(self, loop: ForOp) -> bool:
        """Whether the kernel prefetches its operands `PREFETCH_STEPS` steps of the outermost
        reduction `loop` ahead: a row or channel kernel (not a depthwise one, whose packed
        plane stays in L1, nor a grouped one) whose reduction is long enough to run ahead of,
        and whose steps are each one point of the window (a GEMM, a 1x1 conv) or whose packed
        weight exceeds the L2 (`streams_its_weight`)."""
        plan = self.plan
        return (plan.plane_packing is None and not plan.channel_group
                and (not unrolls_a_window(self.nest) or self.streams_its_weight())
                and loop not in unrolled_reductions(self.nest)
                and (loop.trip_count() or 0) > 2 * PREFETCH_STEPS)

    def streams_its_weight(self) -> bool:
        """Whether the kernel's packed vector operand (a conv's weight) is larger than the
        L2: it cannot be there when the kernel starts, streams from the L3 or memory at
        every call, and each panel's first pass over the rows waits on it unless its lines
        are prefetched. A smaller one may stay in the L2 from the call or the layer before,
        and the prefetches of an unrolled window (a line per tap and vector, 18 a step for a
        3x3 window 32 channels wide) then only cost issue slots. Measured (2 threads, a
        2-vCPU AVX-512 guest with a 2 MB L2 and a 480 MB L3, ms, warm / after a 64 MB write,
        none -> the weight lines of every tap): 3x3 512 -> 512 at 7x7 (9.4 MB) 0.63 -> 0.63
        / 0.76-0.79 -> 0.71-0.72, 256 -> 256 at 14x14 (2.4 MB) 0.40 -> 0.38 / 0.52 -> 0.50,
        3x3/2 256 -> 512 at 14x14 (4.7 MB) 0.327 -> 0.329 / 0.465 -> 0.444; but 3x3/2 128 ->
        256 at 28x28 (1.2 MB) 0.305 -> 0.329 / 0.479 -> 0.487 and 64 -> 128 at 56x56 0.314
        -> 0.334 / 0.448 -> 0.466."""
        packing = self.plan.packing
        if packing is None or not isinstance(packing.buffer.type, MemRefType):
            return False
        size = buffer_bytes(packing.buffer.type)
        return size is not None and self.config.l2_bytes > 0 and size > self.config.l2_bytes

    def prefetch_block(
        self, spatial_map: Callable[[SSAValue, SSAValue, list[Operation]], PointMap],
        tile: SSAValue, width: int, c_base: SSAValue, loop: ForOp, iv: SSAValue,
        body: list[Operation],
    ) -> BlockOp | None:
        """`loop.prefetch` of what the update reads `PREFETCH_STEPS` steps of `loop` ahead (at
        the tile's first row, and for each vector of the tile's columns): the scalar the rows
        broadcast (a channel kernel's input, a row kernel's weight row), once, and the lines of
        the vector operand (packed weights, or a row kernel's input row); under an unrolled
        window, the vector operand's lines at every tap and not the input (its taps share
        lines, which stay in the L1 from one step to the next); the last steps' prefetches
        point past the buffers (harmless: a prefetch never faults, and no clamp costs a
        compare per step). Its index arithmetic is the update's own, cloned. None when the
        update reads nothing to prefetch (only what it broadcasts, in a tile of more than one
        vector's rows)."""
        nest, plan = self.nest, self.plan
        bounds = loop.constant_bounds()
        assert bounds is not None
        ahead = arith.AddiOp(iv, self.const(PREFETCH_STEPS * bounds[2]))
        body.append(ahead)
        steps: dict[SSAValue, SSAValue] = {
            other.induction_var: self.const((other.constant_bounds() or (0,))[0])
            for other in nest.reduction
        }
        steps[loop.induction_var] = ahead.result
        zero = self.const(0)
        panel = _div(c_base, plan.nr, self, body) if plan.packing is not None else None
        inner: list[Operation] = []
        reads: list[SSAValue] = []
        column_iv = nest.spatial[plan.column].induction_var
        unrolled = unrolled_reductions(nest)
        window = [w for w in nest.reduction if w in unrolled]
        taps = list(itertools.product(*(range(*(w.constant_bounds() or (0, 1, 1)))
                                        for w in window)))
        for tap, vector in itertools.product(taps, range(width // plan.lanes)):
            ci = self.const(vector * plan.lanes)
            at_tap = {w.induction_var: self.const(v) for w, v in zip(window, tap, strict=True)}
            mapping = {**spatial_map(zero, ci, inner), **steps, **at_tap}
            clone = self.clone_block(nest.update, mapping, tile, zero, ci)
            if panel is not None:
                self.use_packed(clone, panel, ci)
            dropped: list[Operation] = []
            for original, op in zip(list(nest.update.body.block.ops),
                                    list(clone.body.block.ops), strict=True):
                if isinstance(op, LoadOp):
                    dropped.append(op)
                    assert isinstance(original, LoadOp)
                    per_vector = any(depends_on(i, {column_iv}) for i in original.indices)
                    if op.memref is tile or (vector and not per_vector):
                        continue  # the broadcast scalar: once, with the first vector
                    if not per_vector and len(taps) > 1:
                        continue  # a window's input rows: the lines its taps share
                    inner.append(PrefetchOp(op.memref, list(op.indices)))
                    if op.memref not in reads:
                        reads.append(op.memref)
                elif op.results and is_pure(op) and all(
                        isinstance(r.type, IndexType) for r in op.results):
                    op.detach()
                    inner.append(op)
                else:
                    dropped.append(op)
            for op in reversed(dropped):  # users first: the loads' values die with them
                op.detach()
                op.erase()
            clone.erase()
        used = {operand for op in inner for operand in op.operands}
        for op in reversed(inner):  # index arithmetic only the dropped loads used
            if not isinstance(op, PrefetchOp) and not any(r in used for r in op.results):
                inner.remove(op)
                op.erase()
            else:
                used.update(op.operands)
        if not reads:
            return None
        return BlockOp(f"{self.name}.prefetch", reads, [], inner)

    def use_tile_group(self, block: BlockOp, channel: SSAValue, c_base: SSAValue) -> None:
        """A grouped conv's group of the lane's channel, `channel // G`, taken at the tile's
        first channel `c_base` instead: the same group for the NR channels of the tile (NR
        divides G and tiles start at multiples of NR), so the input it selects is one value
        for every lane (a broadcast), not a gather."""
        for op in block.walk():
            if (isinstance(op, arith.DivUIOp) and op.lhs is channel
                    and constant_value(op.rhs) == self.plan.channel_group):
                op.operands = (c_base, op.rhs)

    def clone_block(
        self, block: BlockOp, mapping: dict[SSAValue, SSAValue], tile: SSAValue,
        ri: SSAValue, ci: SSAValue,
    ) -> BlockOp:
        """A copy of `block` at the mapped point, accumulating into `tile[ri, ci]`."""
        clone = block.clone(value_mapper={**mapping, self.nest.home: tile})
        for op in clone.walk():
            if isinstance(op, LoadOp) and op.memref is tile:
                op.operands = (tile, ri, ci)
            elif isinstance(op, StoreOp) and op.memref is tile:
                op.operands = (op.value, tile, ri, ci)
        return clone

    def write_back(
        self, mapping: dict[SSAValue, SSAValue], tile: SSAValue, ri: SSAValue, ci: SSAValue
    ) -> BlockOp:
        """`home[point] = tile[ri, ci]` for a reduction accumulating straight into a buffer."""
        store = next(op for op in self.nest.init.walk() if isinstance(op, StoreOp))
        indices = [mapping.get(index, index) for index in store.indices]
        load = LoadOp(tile, [ri, ci])
        write = StoreOp(load, self.nest.home, indices)
        return BlockOp(f"{self.name}.write", [tile], [self.nest.home], [load, write],
                       self.nest.init.spatial_axes)

    # -- packing -------------------------------------------------------------------------------

    def pack_nest(self, packing: Packing) -> list[Operation]:
        """`Bp[p, k, l] = B[k, p * NR + l]` (zero past the last column), `Bp` allocated: one
        panel per column tile, so that a reduction step of the kernel reads NR contiguous
        values. The whole panels are copied row by row (`k` outermost): each row of `B` is read
        once, front to back, and the rows, not the (maybe few) panels, are what threads split."""
        lanes = self.plan.nr
        element = _element_type(packing.buffer)
        panels = -(-packing.columns // lanes)
        full = packing.columns // lanes
        packed_type = MemRefType(element, [panels, packing.rows, lanes])  # type: ignore[arg-type]
        alloc = AllocOp(packed_type, "global")
        alloc.result.name_hint = f"{packing.buffer.name_hint or 'B'}_packed"
        self.packed = alloc.result
        ops: list[Operation] = [alloc]
        source, packed = packing.buffer, alloc.result
        name = f"{self.name}.pack"

        def copy(p: SSAValue, k: SSAValue, l: SSAValue, body: list[Operation], guard: bool) -> None:
            inner: list[Operation] = []
            column = _add(_mul(p, lanes, self, inner), l, inner)
            if guard:
                limit = self.const(packing.columns)
                inside = arith.CmpiOp(column, limit, "ult")
                clamped = arith.MinUIOp(column, self.const(packing.columns - 1))
                load = LoadOp(source, [k, clamped.result])
                zero = _zero_of(element)
                value = arith.SelectOp(inside, load, zero)
                inner += [inside, clamped, load, zero, value]
                stored: SSAValue = value.result
            else:
                load = LoadOp(source, [k, column])
                inner.append(load)
                stored = load.result
            inner.append(StoreOp(stored, packed, [p, k, l]))
            body.append(BlockOp(name, [source], [packed], inner, ["p", "k", "l"]))

        def panel_rows(p: SSAValue, body: list[Operation], guard: bool) -> None:
            def row(k: SSAValue, row_body: list[Operation]) -> None:
                def lane(l: SSAValue, lane_body: list[Operation]) -> None:
                    copy(p, k, l, lane_body, guard)

                kind = "serial" if guard else "vectorized"
                row_body.append(self.loop(0, lanes, 1, "l", kind, lane))

            body.append(self.loop(0, packing.rows, 1, "k", "serial", row))

        if full:
            def rows_of_panels(k: SSAValue, body: list[Operation]) -> None:
                def panel(p: SSAValue, panel_body: list[Operation]) -> None:
                    def lane(l: SSAValue, lane_body: list[Operation]) -> None:
                        copy(p, k, l, lane_body, False)

                    panel_body.append(self.loop(0, lanes, 1, "l", "vectorized", lane))

                body.append(self.loop(0, full, 1, "p", "serial", panel))

            ops.append(self.loop(0, packing.rows, 1, "k", "serial", rows_of_panels))
        if panels > full:
            last: list[Operation] = []
            panel_rows(self.const(full), last, True)
            ops += last
        return ops

    def padded_plane(self, packing: Packing) -> PaddedPlane | None:
        """The pad a plane packing can read through (`find_padded_plane`): its panels whole
        (no tail past the last channel), the lanes dividing NR, the pad leaving the axes up
        to the channel's alone."""
        root = self.nest.spatial[0]
        parent = root.parent_block()
        if parent is None or packing.columns % self.plan.nr or self.plan.nr % self.plan.lanes:
            return None
        # Only the update may read the padded buffer: it alone is rewritten to read the panels.
        padded = find_padded_plane(list(parent.ops), packing.buffer, {self.nest.update})
        if padded is None or any(padded.before[:packing.prefix + 1]):
            return None
        return padded

    def drop_pad(self) -> None:
        """Erase the pad the plane packing read through (its nests, buffer and dealloc)."""
        if self.padded is None:
            return
        for op in [*self.padded.nests, self.padded.dealloc, self.padded.alloc]:
            if op is not None:
                op.detach()
                op.erase()

    def pack_channels_nest(self, packing: Packing, suffix: str, runtime: bool = False,
                           padded: PaddedPlane | None = None,
                           ) -> tuple[list[Operation], SSAValue]:
        """`Wp[b..., p, k..., l] = W[b..., p * NR + l, k...]` (zero past the last channel), `Wp`
        allocated (and returned after the nest's ops): one panel per NR output channels, so
        that a reduction step reads NR contiguous weights (or, for a plane packing, inputs).
        With `padded`, `W` is a zero-padded plane read through its pad: the pack copies the
        pad's source into the panels' interior and zero-fills their border."""
        nr = self.plan.nr
        element = _element_type(packing.buffer)
        memref_type = packing.buffer.type
        assert isinstance(memref_type, MemRefType)
        shape = list(memref_type.get_shape())
        outer, rest = shape[:packing.prefix], shape[packing.prefix + 1:]
        panels = -(-packing.columns // nr)
        full = packing.columns // nr
        packed_type = MemRefType(element, [*outer, panels, *rest, nr])  # type: ignore[arg-type]
        alloc = AllocOp(packed_type, "global")
        alloc.result.name_hint = f"{packing.buffer.name_hint or 'W'}_packed"
        source, packed = packing.buffer, alloc.result
        name = f"{self.name}.{suffix}"
        axes = [*(f"b{d}" for d in range(len(outer))), "p",
                *(f"k{d}" for d in range(len(rest))), "l"]

        def copy(bs: list[SSAValue], p: SSAValue, ks: list[SSAValue], l: SSAValue,
                 body: list[Operation], guard: bool) -> None:
            inner: list[Operation] = []
            channel = _add(_mul(p, nr, self, inner), l, inner)
            if guard:
                inside = arith.CmpiOp(channel, self.const(packing.columns), "ult")
                clamped = arith.MinUIOp(channel, self.const(packing.columns - 1))
                load = LoadOp(source, [*bs, clamped.result, *ks])
                zero = _zero_of(element)
                value = arith.SelectOp(inside, load, zero)
                inner += [inside, clamped, load, zero, value]
                stored: SSAValue = value.result
            else:
                load = LoadOp(source, [*bs, channel, *ks])
                inner.append(load)
                stored = load.result
            inner.append(StoreOp(stored, packed, [*bs, p, *ks, l]))
            body.append(BlockOp(name, [source], [packed], inner, axes))

        # A runtime pack (an input plane) copies a channel's lanes unrolled where it copies
        # point by point: scalar copies, which LLVM would otherwise vectorize into gathers
        # (slower: 0.094 -> 0.074 ms for a 5x5 depthwise conv on 1152 x 7x7, one thread).
        lane_kind = "unrolled" if runtime else "serial"

        def dims(bs: list[SSAValue], p: SSAValue, ks: list[SSAValue], body: list[Operation],
                 guard: bool) -> None:
            depth = len(ks)
            if depth == len(rest):
                body.append(self.loop(0, nr, 1, "l", lane_kind,
                                      lambda l, inner: copy(bs, p, ks, l, inner, guard)))
                return
            body.append(self.loop(0, rest[depth], 1, f"k{depth}", "serial",
                                  lambda k, inner: dims(bs, p, [*ks, k], inner, guard)))

        def panels_of(bs: list[SSAValue], body: list[Operation]) -> None:
            if len(bs) < len(outer):
                body.append(self.loop(0, outer[len(bs)], 1, f"b{len(bs)}", "serial",
                                      lambda b, inner: panels_of([*bs, b], inner)))
                return
            if full and views is not None and padded is not None:
                body.append(self.loop(0, full, 1, "p", "serial", lambda p, inner:
                                      self.pack_padded_plane(bs, p, inner, views, padded,
                                                             packing.prefix, name,
                                                             axes[:len(outer) + 1], lane_kind)))
            elif full and views is not None:
                body.append(self.loop(0, full, 1, "p", "serial", lambda p, inner:
                                      self.pack_plane_blocks(bs, p, inner, views, rest, name,
                                                             axes[:len(outer) + 1], lane_kind)))
            elif full:
                body.append(self.loop(0, full, 1, "p", "serial",
                                      lambda p, inner: dims(bs, p, [], inner, False)))
            if panels > full:
                dims(bs, self.const(full), [], body, True)

        ops: list[Operation] = [alloc]
        read = packing if padded is None else Packing(
            packing.load, padded.source, packing.rows, packing.columns, packing.channel_first,
            packing.prefix)
        views = self.pack_views(read, packed) if runtime else None
        # `padded_plane` asked for what `pack_views` needs (identity layout, lanes dividing NR)
        assert padded is None or views is not None
        if views is not None:
            ops += views[2]
        panels_of([], ops)
        return ops, packed

    def pack_plane_blocks(
        self, bs: list[SSAValue], p: SSAValue, body: list[Operation],
        views: tuple[SSAValue, SSAValue, list[Operation]], rest: list[int], name: str,
        outer_axes: list[str], lane_kind: str,
        place: Callable[[SSAValue, list[Operation]], SSAValue] | None = None,
    ) -> None:
        """Panel `p` of a plane packing, `rest` collapsed into one axis `k` (`views`: the
        source's and the packed buffer's `pack_views`): blocks of `lanes` points copied by a
        vectorized loop over the panel's channels around a loop over the block's points (the
        vectorizer transposes each lanes x lanes block in registers:
        `LoopVectorizer.widen_transposed_copy`), then the last points one by one."""
        nr, lanes = self.plan.nr, self.plan.lanes
        source_view, packed_view, _ = views
        plane = 1
        for size in rest:
            plane *= size
        main = plane - plane % lanes

        def point(k: SSAValue, l: SSAValue, inner: list[Operation]) -> None:
            block_ops: list[Operation] = []
            channel = _add(_mul(p, nr, self, block_ops), l, block_ops)
            target = place(k, block_ops) if place is not None else k
            load = LoadOp(source_view, [*bs, channel, k])
            block_ops += [load, StoreOp(load, packed_view, [*bs, p, target, l])]
            inner.append(BlockOp(name, [source_view], [packed_view], block_ops,
                                 [*outer_axes, "k", "l"]))

        def block_of(ko: SSAValue, block_body: list[Operation]) -> None:
            def lane(l: SSAValue, lane_body: list[Operation]) -> None:
                def step(kk: SSAValue, step_body: list[Operation]) -> None:
                    k = arith.AddiOp(ko, kk)
                    step_body.append(k)
                    point(k.result, l, step_body)

                lane_body.append(self.loop(0, lanes, 1, "kk", "serial", step))

            block_body.append(self.loop(0, nr, 1, "l", "vectorized", lane))

        def last(k: SSAValue, inner: list[Operation]) -> None:
            inner.append(self.loop(0, nr, 1, "l", lane_kind,
                                   lambda l, lane_ops: point(k, l, lane_ops)))

        if main:
            body.append(self.loop(0, main, lanes, "k.o", "serial", block_of))
        if plane > main:
            body.append(self.loop(main, plane, 1, "k", "serial", last))

    def pack_padded_plane(
        self, bs: list[SSAValue], p: SSAValue, body: list[Operation],
        views: tuple[SSAValue, SSAValue, list[Operation]], padded: PaddedPlane, prefix: int,
        name: str, outer_axes: list[str], lane_kind: str,
    ) -> None:
        """Panel `p` of a plane packing read through its pad: the border points of the padded
        plane zero-filled, a vector of NR lanes each, then the source plane's points copied
        as `pack_plane_blocks` copies them, each to its place inside the border."""
        # pad.py imports this module (`mark_parallel`): imported here, not at the top
        from dlc.rewrites.schedule_rules.pad import border_boxes

        nr = self.plan.nr
        source_type = padded.source.type
        assert isinstance(source_type, MemRefType)
        interior = list(source_type.get_shape())[prefix + 1:]
        plane_shape = padded.padded[prefix + 1:]
        before = padded.before[prefix + 1:]
        strides = [1] * len(plane_shape)
        for d in range(len(plane_shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * plane_shape[d + 1]
        packed_view = views[1]
        element = _element_type(packed_view)

        def fill_box(starts: list[int], extents: list[int], ks: list[SSAValue],
                     inner: list[Operation]) -> None:
            depth = len(ks)
            if depth < len(extents):
                inner.append(self.loop(0, extents[depth], 1, f"k{depth}", "serial",
                                       lambda k, box: fill_box(starts, extents, [*ks, k], box)))
                return
            point: list[Operation] = []
            flat = self.const(sum(start * stride for start, stride in zip(
                starts, strides, strict=True)))
            for k, stride in zip(ks, strides, strict=True):
                flat = _add(flat, _mul(k, stride, self, point), point)

            def lane(l: SSAValue, lane_ops: list[Operation]) -> None:
                zero = _zero_of(element)
                lane_ops.append(BlockOp(f"{name}.fill", [], [packed_view], [
                    zero, StoreOp(zero.result, packed_view, [*bs, p, flat, l])],
                    [*outer_axes, "k", "l"]))

            point.append(self.loop(0, nr, 1, "l", "vectorized", lane))
            inner += point

        for starts, extents in border_boxes(plane_shape, before, interior):
            fill_box(starts, extents, [], body)

        def place(k: SSAValue, ops: list[Operation]) -> SSAValue:
            """The padded plane's flat index of the source plane's flat point `k`."""
            flat = self.const(sum(b * stride for b, stride in zip(before, strides, strict=True)))
            rest = 1
            for d in range(len(interior) - 1, -1, -1):
                coordinate = _div(k, rest, self, ops) if rest > 1 else k
                if d:
                    remainder = arith.RemUIOp(coordinate, self.const(interior[d]))
                    ops.append(remainder)
                    coordinate = remainder.result
                flat = _add(flat, _mul(coordinate, strides[d], self, ops), ops)
                rest *= interior[d]
            return flat

        plane = 1
        for size in interior:
            plane *= size
        self.pack_plane_blocks(bs, p, body, views, [plane], name, outer_axes, lane_kind,
                               place=place)

    def pack_views(self, packing: Packing, packed: SSAValue
                   ) -> tuple[SSAValue, SSAValue, list[Operation]] | None:
        """Views of a plane packing's source `[b..., C, rest...]` and of its packed buffer
        `[b..., P, rest..., NR]` with `rest` collapsed into one axis (`collapse_axes`), and the
        ops that make them, when the source has the identity layout and `NR` is a multiple of
        the lanes; None otherwise (the pack then copies point by point)."""
        source_type = packing.buffer.type
        assert isinstance(source_type, MemRefType)
        count = source_type.get_num_dims() - packing.prefix - 1
        if not isinstance(source_type.layout, NoneAttr) or self.plan.nr % self.plan.lanes:
            return None
        if count == 1:
            return packing.buffer, packed, []
        first = packing.prefix + 1
        views = [collapse_axes(packing.buffer, first, count), collapse_axes(packed, first, count)]
        return views[0].result, views[1].result, list(views)

    def pack_rows_nest(self, packing: Packing) -> list[Operation]:
        """`Ap[p, k, r] = A[p * MR + r, k]` (zero past the last row), `Ap` allocated."""
        mr = self.plan.mr
        element = _element_type(packing.buffer)
        panels = -(-packing.rows // mr)
        packed_type = MemRefType(element, [panels, packing.columns, mr])  # type: ignore[arg-type]
        alloc = AllocOp(packed_type, "global")
        alloc.result.name_hint = f"{packing.buffer.name_hint or 'A'}_packed"
        self.packed_rows = alloc.result
        source, packed = packing.buffer, alloc.result
        guard = packing.rows % mr != 0
        name = f"{self.name}.pack_rows"

        def copy(p: SSAValue, k: SSAValue, r: SSAValue, body: list[Operation]) -> None:
            inner: list[Operation] = []
            row = _add(_mul(p, mr, self, inner), r, inner)
            if guard:
                inside = arith.CmpiOp(row, self.const(packing.rows), "ult")
                clamped = arith.MinUIOp(row, self.const(packing.rows - 1))
                load = LoadOp(source, [clamped.result, k])
                zero = _zero_of(element)
                value = arith.SelectOp(inside, load, zero)
                inner += [inside, clamped, load, zero, value]
                stored: SSAValue = value.result
            else:
                load = LoadOp(source, [row, k])
                inner.append(load)
                stored = load.result
            inner.append(StoreOp(stored, packed, [p, k, r]))
            body.append(BlockOp(name, [source], [packed], inner, ["p", "k", "r"]))

        def panel(p: SSAValue, body: list[Operation]) -> None:
            def column(k: SSAValue, column_body: list[Operation]) -> None:
                column_body.append(self.loop(0, mr, 1, "r", "serial",
                                             lambda r, inner: copy(p, k, r, inner)))

            body.append(self.loop(0, packing.columns, 1, "k", "serial", column))

        return [alloc, self.loop(0, panels, 1, "p", "serial", panel)]

    def use_packed_rows(self, block: BlockOp, panel: SSAValue, row: SSAValue) -> None:
        """Make the update's load of `A[i, k]` read `Ap[panel, k, row]`."""
        packing = self.plan.row_packing
        assert packing is not None and self.packed_rows is not None
        for op in block.walk():
            if isinstance(op, LoadOp) and op.memref is packing.buffer:
                op.operands = (self.packed_rows, panel, op.indices[1], row)
        reads = [self.packed_rows if value is packing.buffer else value for value in block.reads]
        from dlc.rewrites.schedule.common import set_block_buffers

        set_block_buffers(block, reads, list(block.writes))

    def use_packed(self, block: BlockOp, panel: SSAValue, lane: SSAValue) -> None:
        """Make the update's load of `B[k, j]` read `Bp[panel, k, lane]`."""
        assert self.plan.packing is not None and self.packed is not None
        replaced = {self.plan.packing.buffer: self.packed}
        for packing, packed in ((self.plan.packing, self.packed),
                                (self.plan.plane_packing, self.packed_plane)):
            if packing is None or packed is None:
                continue
            replaced[packing.buffer] = packed
            for op in block.walk():
                if not isinstance(op, LoadOp) or op.memref is not packing.buffer:
                    continue
                if packing.channel_first:
                    outer, rest = op.indices[:packing.prefix], op.indices[packing.prefix + 1:]
                    op.operands = (packed, *outer, panel, *rest, lane)
                else:
                    op.operands = (packed, panel, op.indices[0], lane)
        reads = [replaced.get(value, value) for value in block.reads]
        from dlc.rewrites.schedule.common import set_block_buffers

        set_block_buffers(block, reads, list(block.writes))


def _add(lhs: SSAValue, rhs: SSAValue, ops: list[Operation]) -> SSAValue:
    for value, other in ((lhs, rhs), (rhs, lhs)):
        constant = value.owner
        if isinstance(constant, arith.ConstantOp) and constant.value == IntegerAttr(0, IndexType()):
            return other
    op = arith.AddiOp(lhs, rhs)
    ops.append(op)
    return op.result


def _mul(value: SSAValue, factor: int, builder: _Builder, ops: list[Operation]) -> SSAValue:
    if factor == 1:
        return value
    op = arith.MuliOp(value, builder.const(factor))
    ops.append(op)
    return op.result


def _div(value: SSAValue, divisor: int, builder: _Builder, ops: list[Operation]) -> SSAValue:
    if divisor == 1:
        return value
    op = arith.DivUIOp(value, builder.const(divisor))
    ops.append(op)
    return op.result


def schedule_reduction(nest: Reduction, config: CpuConfig) -> bool:
    """Replace the reduction nest by its register-blocked kernel schedule (see the module's
    docstring); returns False, changing nothing, if the nest does not fit the kernel."""
    plan = plan_kernel(nest, config)
    if plan is None:
        return False
    if plan.packing is None and not plan.rows_contiguous and drop_unit_heads(nest):
        plan = plan_kernel(nest, config)  # a 2-D vector operand now: packed into panels
        assert plan is not None
    if _worth_merging(nest, plan, config) and merge_rows(
            nest.spatial, [nest.init, nest.update, *nest.epilogues], plan.lanes,
            fixed={nest.home}, row_vectors=2):
        plan = plan_kernel(nest, config)  # the merged rows are contiguous: a kernel fits
        assert plan is not None
    if _merge_row_axes(nest, plan):
        plan = plan_kernel(nest, config)  # more rows to block: the tile is planned again
        assert plan is not None
    builder = _Builder(nest, plan, config)
    root = nest.spatial[0]
    ops = builder.build()
    parent = root.parent_block()
    assert parent is not None
    for op in ops:
        parent.insert_op_before(op, root)
    root.detach()
    root.erase()
    builder.drop_pad()
    if config.parallel:
        mark_parallel([op for op in ops if isinstance(op, ForOp)])
    return True


def _merge_row_axes(nest: Reduction, plan: KernelPlan) -> bool:
    """Merges the kernel's row axis with a spatial axis next to it (around it, or inside it
    but not the column axis) when the update's vector operands depend on neither and every
    access walks the two as one run (`merge_axes`): a channels-last 1x1 conv, `out[n, oh, ow,
    oc] += x[n, oh, ow, ic] * w[ic, oc]`, becomes a GEMM over the plane's pixels, whose row
    blocks span the plane (MR rows of every column panel, not MR of one image row of 7 or 14)
    so that each panel of the weight is read once per row block of the whole plane, not once
    per image row."""
    if plan.row is None or plan.rows_contiguous:
        return False
    column_iv = nest.spatial[plan.column].induction_var
    vector_loads = [
        load for load in accesses_in([nest.update])
        if isinstance(load, LoadOp) and load.memref is not nest.home
        and any(depends_on(index, {column_iv}) for index in load.indices)
    ]

    def reused(axis: int) -> bool:
        iv = nest.spatial[axis].induction_var
        return extent(nest.spatial[axis]) > 1 and not any(
            depends_on(index, {iv}) for load in vector_loads for index in load.indices)

    blocks = [nest.init, nest.update, *nest.epilogues]
    for outer in (plan.row, plan.row - 1):
        if (0 <= outer and outer + 1 < len(nest.spatial) and plan.column not in (outer, outer + 1)
                and reused(outer) and reused(outer + 1)
                and merge_axes(nest.spatial, outer, blocks)):
            nest.home = nest.init.writes[0]  # the output's merged view, when it accumulates there
            return True
    return False


def _worth_merging(nest: Reduction, plan: KernelPlan, config: CpuConfig) -> bool:
    """Whether `nest`'s two innermost spatial axes are worth merging into one run
    (`merge_rows` decides whether they can): when the merged nest would get the row kernel,
    whose vectors then run over the plane; and when `plan` is a channel kernel: its rows are
    then the plane's points, in tiles of up to its register budget over the whole plane (8 of
    196, not 7 of each 14-wide row), and where its loop over the output rows was outside its
    loop over the weight panels (not `columns_first`), the panels' loop goes outside them all,
    each panel read once, not once per output row (ResNet-50's 1x1 convs on 14x14 planes, 2
    threads: 256 -> 1024 0.53 -> 0.42 ms, 1024 -> 256 0.55 -> 0.42 ms). With the panels
    outermost already the tiles alone gain: 1024 -> 512 at 14x14 (2 threads, ms, warm /
    after a 64 MB write) 0.527-0.548 -> 0.511 / 0.696-0.708 -> 0.673-0.691; 512 -> 1000 on
    13x13 and 512 -> 2048, 2048 -> 512 on 7x7 within 1%; ResNet-50 in the zoo 1.08-1.20 ->
    1.05-1.10x ORT (four runs each, alternated)."""
    if len(nest.spatial) < 2:
        return False
    if plan.rows_contiguous:
        return True
    merged = extent(nest.spatial[-2]) * extent(nest.spatial[-1])
    channel_plan = plan_channel_kernel(nest, config)
    return channel_plan is None or not _plane_kernel_pays(nest, channel_plan, merged,
                                                          plan.lanes, config)


def mark_parallel(roots: list[ForOp]) -> None:
    """Make the outermost loop with at least two iterations of each nest parallel (when the
    `parallel` primitive finds it legal), looking through single-iteration loops (into the
    first loop of their body)."""
    for root in roots:
        loop: ForOp | None = root
        while loop is not None:
            trip = loop.trip_count()
            if trip is not None and trip >= 2:
                try:
                    parallel(loop)
                except ScheduleError:
                    pass
                break
            inner = [op for op in body_of(loop) if isinstance(op, ForOp)]
            loop = inner[0] if inner else None


REASSOCIABLE = (arith.AddfOp, arith.MulfOp, arith.MaximumfOp, arith.MinimumfOp)
"""The float ops that combine a reduction's accumulator with a new value and may reassociate."""


def allow_reassociation(nest: Reduction) -> bool:
    """Marks the update's combining op (`acc' = acc op value`, stored into the accumulator)
    `fastmath<reassoc>` when it is a float add, mul, max or min: the reduction may then run in
    any order, as a vectorized or parallel one does (LLVM vectorizes such a loop into partial
    results combined at the end). Returns whether it marked one. Integer reductions need no
    flag."""
    marked = False
    for combine in combiners(nest):
        if isinstance(combine, REASSOCIABLE):
            marked = add_fast_math_flag(combine, FastMathFlag.REASSOC) or marked
    return marked
