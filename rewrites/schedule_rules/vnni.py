"""Default CPU schedule of an int8 GEMM on a target with AVX-512 VNNI: `vpdpbusd` micro-kernels.

Counterpart: TVM's x86 `dense_vnni` / `conv2d_NCHWc_int8` schedules (weights packed as
`[N/16][K/4][16][4]` int8, the inner 16x4 block tensorized into `dot_16x1x16_uint8_int8_int32`),
oneDNN's u8s8s32 GEMM with its compensation terms.

The nest is `graph.matmul_integer`'s (rewrites/topi/quant.py): `C[i, j] = sum_k (ext(A[i, k]) -
za) * (ext(B[k, j]) - zb[j])`, A and B bytes (u8 or s8: `extui` or `extsi`), the zero points any
values that do not depend on `k` (za not on `i` nor `j`, zb not on `i`); the sum goes to the
output, or to a local accumulator that fused epilogue blocks read (a requantize tail: cast,
scale, round, clamp, quantize), which the write-back then runs on each sum. `vpdpbusd` multiplies
u8 by s8, so the operands are shifted into those types where they are not (`a' = a + 128` for
s8 A, `b' = b - 128` for u8 B: a flip of the sign bit), which shifts the zero points the same
way (`za' = za + 128`, `zb' = zb - 128`), and the product is expanded exactly (i32 arithmetic
wraps the same way on both sides):

    C[i, j] = dot(a'_i, b'_j) - zb'_j * (rowsum(a'_i) - K * za') - za' * colsum(b'_j)

Emitted, before the nest it replaces:

    Bp = pack B into [G][K/4][NP][64] (16 columns x 4 k per 64 bytes, zero padded; a constant
         B is packed at compile time by loop-fold-constant-nests)
    [Ap = A as u8 in [M][K/4 * 4], zero padded: only for s8 A or K not a multiple of 4]
    colsum[j] = vpdpbusd(1, Bp) per panel; rowsum[i] = vpdpbusd(a'_i, 1)    (tensorized too;
                                     no rowsum where zb' is 0: an s8 B whose zero points are 0;
                                     no colsum where za' is 0: a u8 A whose zero point is 0;
                                     a constant B's colsum a scalar nest folded at compile time)
    for g in column groups of NP panels (parallel) {       // NR = 16 NP columns
      for row blocks of MR rows (and a tail block of M mod MR rows) {
                      // or the row blocks outermost (`rows_outermost`: on one thread when
                      // B fits half the L2; with threads, parallel, when better balanced or
                      // A is the larger operand); or the groups in chunks (parallel), each
                      // chunk's row blocks over its groups (`groups_per_chunk`)
        tile = loop.alloc local [MR][NR] i32, zeroed
        for k4 { for r (unrolled MR) { for p (unrolled NP) {
          for j.i (16) { for k.i (4) { tile[r, 16p + j.i] += a'[i, 4k4 + k.i] * Bp[..] } }
                                          // -> transform.loop.tensorize "x86.avx512.vpdpbusd"
        } } }
        for r (unrolled) { for c (vectorized, the group's valid columns) {
          C[i, j] = tile[r, c] - zb'_j * (rowsum[i] - K za') - za' colsum[j]
          [or the fused epilogues on that value] } }
      } }

An int8 conv is matched as an implicit GEMM (`match_int8_gemm`): the nest's spatial loops
split into those that move only A (the rows) and those that move only B (the columns), the
reduction loops are the depth, each a row-major linearization of its loops. Such an operand is
packed through its own load (recomputed at the loops of `pack_implicit_a` / `pack_implicit_b`:
for an NCHW conv with a constant weight, the weight into the panels at compile time and the
input's im2col into rows; an A that is already row-major [M, K], an NHWC 1x1 conv's input, is
read through a `memref.collapse_shape` instead: `_reads_rows`), and the write-back stores at the
delinearized output point. The
depth loop that walks A's last index alone (an NHWC conv's input channels) is linearized
innermost, and A's packing copies it in vectors.
Batched GEMMs and depthwise convs (a loop moving both operands) are not matched (they keep the
generic int32 schedule).
MR x NP (x16 lanes) is 6 x 4 (24 of AVX-512's 32 registers hold the tile: `max_accumulators`),
8 x 2 or 8 x 1 for narrower matrices. The rule applies only when the target has `avx512vnni`
(`CpuConfig.features`); elsewhere the generic reduction rule schedules the i32 nest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.loop_fold_constant_nests import constant_argument_values, is_constant_argument
from dlc.rewrites.schedule import ScheduleError, parallel, tensorize
from dlc.rewrites.schedule.common import depends_on, index_constant, value_name
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import Reduction
from dlc.rewrites.schedule_rules.partial_sums import (
    always_zero,
    collapse_axes,
    defined_outside,
    indexes_by,
)
from dlc.target.intrinsics import VPDPBUSD
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    i8,
    i32,
)
from xdsl.ir import Block, Operation, SSAValue

LANES = 16
"""i32 lanes of one vpdpbusd (its `j` extent)."""
DEPTH = 4
"""Bytes each lane reduces per vpdpbusd (its `k` extent)."""
PANEL = LANES * DEPTH
"""Bytes of B one vpdpbusd reads: 16 columns x 4 rows."""
UNROLL_PACK = 16
"""A packing nest's inner loops of up to this many iterations together (a conv's kernel rows
and columns) are unrolled: a loop of 3 byte copies spent more on its control than on the
copies (a 64x56x56 3x3 conv: 2.35 ms, 1.27 ms with the columns unrolled)."""
ROWS_BALANCE_SLACK = 1.125
"""How much worse the threads' balance may be when they split the row blocks of a GEMM whose A
is larger than its packed B (each thread then reads its own part of A rather than all of it)."""
ROWSUM_ROWS = 8
"""Rows whose sums are computed together: 8 independent vpdpbusd chains instead of one, which
waits the instruction's 5-cycle latency at every step (the row sums of a 1024^3 GEMM took 8% of
its time one row at a time, perf annotate)."""


Loop = tuple[SSAValue, int]
"""A loop of the matched nest: its induction variable and its trip count."""


@dataclass
class Int8Gemm:
    """What the rule reads of a matched int8 GEMM nest.

    The GEMM's rows, columns and depth are each a list of the nest's loops (`rows`, `cols`,
    `depths`, in nest order; a dense GEMM has one of each): row `i` is the point of `rows` whose
    row-major linear index is `i`, and so on. An implicit GEMM (a conv: rows the output
    channels, columns the output pixels, depth (input channel, kernel row, kernel column))
    reads its operands through the original loads, which the packing nests recompute."""

    nest: Reduction
    i: SSAValue | None
    j: SSAValue | None
    k: SSAValue | None
    """The row, column and depth loops' induction variables of a dense GEMM (else None)."""
    a: SSAValue
    b: SSAValue
    a_signed: bool
    b_signed: bool
    za: SSAValue | None
    zb: SSAValue | None
    m: int
    n: int
    depth: int
    local: bool
    """Whether the sum goes to a local accumulator (`nest.alloc`) that the epilogues read,
    rather than to the output at `[i, j]`."""
    a_load: LoadOp | None = None
    b_load: LoadOp | None = None
    rows: tuple[Loop, ...] = ()
    cols: tuple[Loop, ...] = ()
    depths: tuple[Loop, ...] = ()
    units: tuple[SSAValue, ...] = ()
    """Induction variables of loops of one iteration (0 everywhere)."""
    outputs: tuple[SSAValue, ...] = ()
    """The spatial loops' induction variables in nest order (the output's indices)."""
    plain_a: bool = True
    """Whether A is read as `A[i, k]` (else through `a_load`: packed by `pack_implicit`)."""
    plain_b: bool = True
    """Whether B is read as `B[k, j]`."""
    row_view: bool = False
    """Whether an implicit A is a row-major matrix already (`_reads_rows`: an NHWC 1x1 conv's
    input, its pixels the rows and its channels the depth): the kernels then read it through a
    `memref.collapse_shape` to [M, K] instead of a copy."""


def _accumulator_store(nest: Reduction, spatial: list[SSAValue], reduction: list[SSAValue]
                       ) -> StoreOp | None:
    """The update's one i32 store into the nest's accumulator (at the spatial indices, or
    anywhere fixed in a local accumulator), zero-initialized and with epilogues that fit, or
    None."""
    stores = [op for op in nest.update.body.block.ops if isinstance(op, StoreOp)]
    if len(stores) != 1 or stores[0].memref is not nest.home:
        return None
    store = stores[0]
    if store.value.type != i32:
        return None
    if nest.alloc is not None:
        if any(depends_on(index, {*spatial, *reduction}) for index in store.indices):
            return None
    elif list(store.indices) != spatial:
        return None
    if not _zero_init(nest.init, store) or not _epilogues_fit_over(nest, store, set(reduction)):
        return None
    return store


def match_int8_gemm(nest: Reduction) -> Int8Gemm | None:
    """The int8 GEMM the nest computes (module docstring), or None.

    The factor that moves with the innermost (non-unit) spatial loop is B (its columns are
    the output's contiguous axis), the other A, unless only the other is a constant weight
    (`is_constant_argument`): then that one is B, whose panel packing (a byte interleave, and
    for an implicit operand index division) loop-fold-constant-nests does at compile time,
    and the run-time operand is A, copied into plain rows (an NCHW conv's im2col, the cheap
    way round), at the price of a strided write-back. Measured on 1-thread requantized NCHW
    convs, input in panels / in rows: 16 -> 96 1x1 at 112^2 1.27 / 1.04 ms, 96 -> 24 1x1 at
    56^2 0.51 / 0.32 ms, 128 -> 256 1x1 at 28^2 0.35 / 0.30 ms, 64 -> 64 3x3 at 56^2 0.33 /
    0.33 ms (and 2.6 / 1.3 ms before the packing's short loops were unrolled). Each spatial
    loop of more than one iteration
    must move exactly one factor (a loop moving both, a batch or a depthwise channel, is not
    a GEMM)."""
    if not nest.reduction or nest.init is None:
        return None
    loops = (*nest.spatial, *nest.reduction)
    if any((bounds := loop.constant_bounds()) is None or bounds[0] != 0 or bounds[2] != 1
           for loop in loops):
        return None  # the schedule counts every index from 0 by 1
    extent = {loop.induction_var: loop.trip_count() for loop in loops}
    if any(count is None or count < 1 for count in extent.values()):
        return None
    spatial = [loop.induction_var for loop in nest.spatial]
    reduction = [loop.induction_var for loop in nest.reduction]
    units = tuple(iv for iv in (*spatial, *reduction) if extent[iv] == 1)
    live = [iv for iv in spatial if iv not in units]
    local = nest.alloc is not None
    store = _accumulator_store(nest, spatial, reduction)
    if store is None:
        return None
    mul = _product(store)
    if mul is None:
        return None
    factors = [_factor(mul.lhs), _factor(mul.rhs)]
    if factors[0] is None or factors[1] is None:
        return None
    moved = [{iv for iv in live if any(depends_on(index, {iv}) for index in factor[0].indices)}
             for factor in factors]  # type: ignore[index]
    if moved[0] & moved[1] or moved[0] | moved[1] != set(live):
        return None
    b_at = 0 if live and live[-1] in moved[0] else 1
    if (is_constant_argument(factors[1 - b_at][0].memref)  # type: ignore[index]
            and not is_constant_argument(factors[b_at][0].memref)):  # type: ignore[index]
        b_at = 1 - b_at  # the constant operand's panels are packed once, at compile time
    (a_load, a_signed, za), (b_load, b_signed, zb) = factors[1 - b_at], factors[b_at]  # type: ignore[misc]
    rows = tuple((iv, extent[iv]) for iv in live if iv in moved[1 - b_at])
    cols = tuple((iv, extent[iv]) for iv in live if iv in moved[b_at])
    depths = _contiguous_last(tuple((iv, extent[iv]) for iv in reduction if iv not in units),
                              a_load)
    row_ivs, col_ivs = {iv for iv, _ in rows}, {iv for iv, _ in cols}
    if za is not None and depends_on(za, {*col_ivs, *reduction}):
        return None
    if zb is not None and depends_on(zb, {*row_ivs, *reduction}):
        return None
    m, n, depth = (_product_of(group) for group in (rows, cols, depths))
    i, j, k = (group[0][0] if len(group) == 1 else None for group in (rows, cols, depths))
    plain_a = i is not None and k is not None and list(a_load.indices) == [i, k]
    plain_b = j is not None and k is not None and list(b_load.indices) == [k, j]
    row_view = not plain_a and _reads_rows(a_load, rows, depths, nest)
    return Int8Gemm(nest, i, j, k, a_load.memref, b_load.memref, a_signed, b_signed, za, zb,
                    m, n, depth, local, a_load, b_load, rows, cols, depths, units,
                    tuple(spatial), plain_a, plain_b, row_view)


def _reads_rows(load: LoadOp, rows: tuple[Loop, ...], depths: tuple[Loop, ...],
                nest: Reduction) -> bool:
    """Whether `load` reads a buffer (identity layout, made before the nest) whose last axis is
    the one depth loop's index and whose axes before it are the row loops' indices, in order
    and each over the whole axis, after leading axes of size 1 read at 0 (an index plus a
    one-iteration loop's index, `%i1 + %r1` of a 1x1 kernel, counts: `indexes_by`): the buffer
    is then the row-major [M, K] matrix A itself (an NHWC 1x1 conv's input, stride 1,
    unpadded)."""
    buffer_type = load.memref.type
    if (len(depths) != 1 or not rows or not isinstance(buffer_type, MemRefType)
            or not isinstance(buffer_type.layout, NoneAttr)
            or not defined_outside(load.memref, nest.spatial[0])):
        return False
    shape = buffer_type.get_shape()
    indices = list(load.indices)
    expected = [*rows, depths[0]]
    lead = len(indices) - len(expected)
    if lead < 0:
        return False
    if any(shape[p] != 1 or not always_zero(indices[p]) for p in range(lead)):
        return False
    return all(indexes_by(indices[lead + p], iv) and shape[lead + p] == count
               for p, (iv, count) in enumerate(expected))


def _moves_only_last_index(load: LoadOp, iv: SSAValue) -> bool:
    """Whether `iv` moves the last index of `load` and no other (a contiguous walk)."""
    *outer, last = load.indices
    return depends_on(last, {iv}) and not any(depends_on(index, {iv}) for index in outer)


def _contiguous_last(depths: tuple[Loop, ...], a_load: LoadOp) -> tuple[Loop, ...]:
    """The depth loops with the one that walks A's last index (an NHWC conv's input channels,
    outside the kernel window's loops in the nest) moved innermost: A's rows are then packed
    in whole vectors of bytes. Any order of the depth is exact, as long as both operands' packings
    (which linearize `depths`) agree."""
    walking = [loop for loop in depths if _moves_only_last_index(a_load, loop[0])]
    if len(depths) < 2 or not walking or walking[0] is depths[-1]:
        return depths
    return (*(loop for loop in depths if loop is not walking[0]), walking[0])


def _product_of(loops: tuple[Loop, ...]) -> int:
    total = 1
    for _, count in loops:
        total *= count
    return total


def _product(store: StoreOp) -> arith.MuliOp | None:
    """The product `p` of an update `home[x] = home[x] + p`."""
    add = store.value.owner
    if not isinstance(add, arith.AddiOp):
        return None
    for acc, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if (isinstance(acc.owner, LoadOp) and acc.owner.memref is store.memref
                and list(acc.owner.indices) == list(store.indices)
                and isinstance(other.owner, arith.MuliOp)):
            return other.owner
    return None


def _home_indices(store: StoreOp, i: SSAValue, j: SSAValue, k: SSAValue, local: bool) -> bool:
    """The output at `[i, j]`, or (a local accumulator) indices that no loop moves."""
    if not local:
        return list(store.indices) == [i, j]
    return not any(depends_on(index, {i, j, k}) for index in store.indices)


def _epilogues_fit(nest: Reduction, store: StoreOp, i: SSAValue, j: SSAValue,
                   k: SSAValue) -> bool:
    """Whether every epilogue reads the sum only where the update stores it, writes neither
    the sum nor a GEMM operand, and moves with `i` and `j` only (an elementwise tail: cast,
    requantize)."""
    return _epilogues_fit_over(nest, store, {k})


def _epilogues_fit_over(nest: Reduction, store: StoreOp, reduction: set[SSAValue]) -> bool:
    """`_epilogues_fit` with the reduction loops' induction variables `reduction`."""
    k = reduction
    for block in nest.epilogues:
        for op in block.walk():
            if isinstance(op, StoreOp) and op.memref is nest.home:
                return False
            if (isinstance(op, LoadOp) and op.memref is nest.home
                    and list(op.indices) != list(store.indices)):
                return False
            if isinstance(op, LoadOp | StoreOp) and any(
                    depends_on(index, k) for index in op.indices):
                return False
            if op.regions and op is not block:
                return False
    return True


def _zero_init(init: BlockOp, update: StoreOp) -> bool:
    stores = [op for op in init.body.block.ops if isinstance(op, StoreOp)]
    if (len(stores) != 1 or stores[0].memref is not update.memref
            or list(stores[0].indices) != list(update.indices)):
        return False
    value = stores[0].value.owner
    return (isinstance(value, arith.ConstantOp) and isinstance(value.value, IntegerAttr)
            and value.value.value.data == 0)


def _factor(value: SSAValue) -> tuple[LoadOp, bool, SSAValue | None] | None:
    """(load of a byte, whether it is signed, the zero point subtracted or None) of
    `ext(load)` or `ext(load) - zero_point`."""
    zero: SSAValue | None = None
    owner = value.owner
    if isinstance(owner, arith.SubiOp):
        value, zero = owner.lhs, owner.rhs
        owner = value.owner
    if not isinstance(owner, arith.ExtUIOp | arith.ExtSIOp):
        return None
    load = owner.input.owner
    if not isinstance(load, LoadOp) or load.result.type != i8:
        return None
    return load, isinstance(owner, arith.ExtSIOp), zero


def tile_shape(gemm: Int8Gemm, config: CpuConfig) -> tuple[int, int]:
    """(MR rows, NP panels of 16 columns) of the micro-kernel."""
    panels = -(-gemm.n // LANES)
    np_ = min(4, panels)
    mr = max(1, min(config.max_rows, config.max_accumulators // np_, gemm.m))
    return mr, np_


def schedule_vnni_gemm(nest: Reduction, config: CpuConfig) -> bool:
    """Replace an int8 GEMM nest by its VNNI schedule (module docstring); False, changing
    nothing, when the target lacks avx512vnni or the nest is not an int8 GEMM."""
    if VPDPBUSD.missing_features(config.features):
        return False
    gemm = match_int8_gemm(nest)
    if gemm is None:
        return False
    return replace_by_tensorized_gemm(nest, GemmBuilder(gemm, config), VPDPBUSD.name, config)


def replace_by_tensorized_gemm(nest: Reduction, builder: GemmBuilder, intrinsic: str,
                               config: CpuConfig) -> bool:
    """Replace `nest` by the loops `builder` makes, tensorize its dot loops with `intrinsic`
    and parallelize its parallel loops (where `config` says so); True. The one tail of the
    tensorized GEMM rules (vnni-int8-gemm, avx512bf16-gemm)."""
    root = nest.spatial[0]
    ops = builder.build()
    parent = root.parent_block()
    assert parent is not None
    for op in ops:
        parent.insert_op_before(op, root)
    root.detach()
    root.erase()
    for loop in builder.dots:
        tensorize(loop, intrinsic, config.features)
    if config.parallel:
        for loop in builder.parallel_loops:
            try:
                parallel(loop)
            except ScheduleError:
                continue
    return True


Body = Callable[[SSAValue, list[Operation]], None]



def _flipped(value: SSAValue, flip: bool, ops: list[Operation]) -> SSAValue:
    """`value` (an i8) with its sign bit flipped if `flip` (u8 <-> s8 shifted by 128), the ops
    appended to `ops`."""
    if not flip:
        return value
    sign = arith.ConstantOp(IntegerAttr(-128, i8))
    flipped = arith.XOrIOp(value, sign)
    ops += [sign, flipped]
    return flipped.result

class GemmBuilder:
    """Emits the schedule before the original nest (module docstring); the bf16 GEMM rule
    (schedule_rules/bf16.py) reuses its loop, index and epilogue builders."""

    def __init__(self, gemm: Int8Gemm, config: CpuConfig) -> None:
        self.gemm = gemm
        self.config = config
        self.anchor = gemm.nest.spatial[0]
        self.name = gemm.nest.update.block_name.data
        self.mr, self.np = tile_shape(gemm, config)
        self.k4 = -(-gemm.depth // DEPTH)
        self.groups = -(-gemm.n // (LANES * self.np))
        self.dots: list[ForOp] = []
        self.parallel_loops: list[ForOp] = []
        self.ones: dict[int, SSAValue] = {}
        self.scaled_colsum = False
        """Whether the column sums hold za' * colsum (`folded_colsum`)."""

    def zb_vanishes(self) -> bool:
        """Whether zb' is 0 at every column (an s8 B without zero point or with zeros, as
        symmetric int8 weights have): then the row sums' term vanishes and they are not
        computed (their vpdpbusd(a', 1) cost as much as one more panel of B)."""
        gemm = self.gemm
        return gemm.b_signed and (gemm.zb is None or _is_zero(gemm.zb))

    def za_constant(self) -> int | None:
        """za' (the shifted A's zero point) when it is known at compile time: no zero point, a
        constant, or a per-tensor zero point read from a constant argument."""
        gemm = self.gemm
        za = 0 if gemm.za is None else _constant_int(gemm.za)
        if za is None:
            return None
        return za + 128 if gemm.a_signed else za

    def za_vanishes(self) -> bool:
        """Whether za' is 0 (a u8 A without zero point or with zero points of 0): then the
        column sums' term vanishes and they are not computed."""
        gemm = self.gemm
        return not gemm.a_signed and (gemm.za is None or _is_zero(gemm.za))

    # -- small builders ------------------------------------------------------------------------

    def const(self, value: int) -> SSAValue:
        return index_constant(value, self.anchor)

    def loop(self, lb: int | SSAValue, ub: int, axis: str, kind: str, body: Body) -> ForOp:
        block = Block(arg_types=[IndexType()])
        block.args[0].name_hint = value_name(axis)
        ops: list[Operation] = []
        body(block.args[0], ops)
        block.add_ops([*ops, YieldOp()])
        lb_value = self.const(lb) if isinstance(lb, int) else lb
        return ForOp(lb_value, self.const(ub), self.const(1), block, axis, kind)

    def affine(self, ops: list[Operation], *terms: tuple[SSAValue, int] | int) -> SSAValue:
        """`sum(value * factor) + constant` as index arithmetic appended to `ops`."""
        total: SSAValue | None = None
        offset = 0
        for term in terms:
            if isinstance(term, int):
                offset += term
                continue
            value, factor = term
            if factor != 1:
                product = arith.MuliOp(value, self.const(factor))
                ops.append(product)
                value = product.result
            if total is None:
                total = value
            else:
                summed = arith.AddiOp(total, value)
                ops.append(summed)
                total = summed.result
        if total is None:
            return self.const(offset)
        if offset:
            summed = arith.AddiOp(total, self.const(offset))
            ops.append(summed)
            total = summed.result
        return total

    def i32(self, value: int, ops: list[Operation]) -> SSAValue:
        constant = arith.ConstantOp(IntegerAttr(value, i32))
        ops.append(constant)
        return constant.result

    def dot(self, acc: SSAValue, acc_index: Callable[[SSAValue, list[Operation]], list[SSAValue]],
            a: SSAValue, a_index: Callable[[SSAValue, list[Operation]], list[SSAValue]],
            b: SSAValue, b_index: Callable[[SSAValue, SSAValue, list[Operation]],
                                           list[SSAValue]],
            name: str, body: list[Operation]) -> None:
        """`for j.i (16) { for k.i (4) { acc[..j.i] += u8(a[..k.i]) * s8(b[..j.i, k.i]) } }`,
        recorded for tensorizing."""

        def lane(ji: SSAValue, lane_ops: list[Operation]) -> None:
            def depth(ki: SSAValue, inner: list[Operation]) -> None:
                ops: list[Operation] = []
                acc_at = acc_index(ji, ops)
                a_load = LoadOp(a, a_index(ki, ops))
                a_ext = arith.ExtUIOp(a_load, i32)
                b_load = LoadOp(b, b_index(ji, ki, ops))
                b_ext = arith.ExtSIOp(b_load, i32)
                product = arith.MuliOp(a_ext, b_ext)
                old = LoadOp(acc, acc_at)
                summed = arith.AddiOp(old, product)
                ops += [a_load, a_ext, b_load, b_ext, product, old, summed,
                        StoreOp(summed, acc, acc_at)]
                inner.append(BlockOp(name, [a, b], [acc], ops, ["j.i"], ["k.i"]))

            lane_ops.append(self.loop(0, DEPTH, "k.i", "serial", depth))

        loop = self.loop(0, LANES, "j.i", "serial", lane)
        self.dots.append(loop)
        body.append(loop)

    def fill(self, buffer: SSAValue, value: int, name: str) -> list[Operation]:
        """A nest storing `value` into every element of a 1-D or 2-D buffer (innermost
        vectorized)."""
        memref_type = buffer.type
        assert isinstance(memref_type, MemRefType)
        shape = memref_type.get_shape()
        element = memref_type.get_element_type()

        def store(indices: list[SSAValue], ops: list[Operation]) -> None:
            constant = arith.ConstantOp(IntegerAttr(value, element))  # type: ignore[arg-type]
            ops.append(BlockOp(name, [], [buffer],
                               [constant, StoreOp(constant, buffer, indices)]))

        if len(shape) == 1:
            return [self.loop(0, shape[0], "c", "vectorized", lambda c, ops: store([c], ops))]
        return [self.loop(0, shape[0], "r", "serial", lambda r, ops: ops.append(
            self.loop(0, shape[1], "c", "vectorized", lambda c, inner: store([r, c], inner))))]

    def ones_buffer(self, size: int, ops: list[Operation]) -> SSAValue:
        """A local buffer of `size` bytes of 1 (the other operand of a row or column sum)."""
        alloc = AllocOp(MemRefType(i8, [size]), "local")
        alloc.result.name_hint = f"ones{size}"
        ops.append(alloc)
        ops += self.fill(alloc.result, 1, f"{self.name}.ones")
        return alloc.result

    # -- the zero points, as values at a point of the output -----------------------------------

    def clone_value(self, value: SSAValue, mapping: dict[SSAValue, SSAValue],
                    ops: list[Operation]) -> SSAValue:
        """`value` (computed in the original nest) recomputed with `mapping` for its ivs."""
        if value in mapping:
            return mapping[value]
        owner = value.owner
        root = self.gemm.nest.spatial[0]
        if isinstance(owner, Block):
            holder = owner.parent_op()
            assert holder is None or not root.is_ancestor(holder), "the nest's ivs are mapped"
            return value
        if not root.is_ancestor(owner):
            return value
        operands = [self.clone_value(operand, mapping, ops) for operand in owner.operands]
        clone = owner.clone()
        for index, operand in enumerate(operands):
            clone.operands[index] = operand
        ops.append(clone)
        for old, new in zip(owner.results, clone.results, strict=True):
            mapping[old] = new
        return mapping[value]

    def point(self, i: SSAValue, j: SSAValue, ops: list[Operation]
              ) -> dict[SSAValue, SSAValue]:
        """The original nest's spatial induction variables at GEMM point (row i, column j)
        (of a dense GEMM of another rule, which has no loop lists: its `i` and `j`)."""
        gemm = self.gemm
        if not isinstance(gemm, Int8Gemm):
            return {gemm.i: i, gemm.j: j}
        mapping = {iv: self.const(0) for iv in gemm.units}
        mapping.update(self.delinearize(i, gemm.rows, ops))
        mapping.update(self.delinearize(j, gemm.cols, ops))
        return mapping

    def delinearize(self, linear: SSAValue, loops: tuple[Loop, ...], ops: list[Operation]
                    ) -> dict[SSAValue, SSAValue]:
        """The induction variables of `loops` at their row-major linear index `linear`."""
        mapping: dict[SSAValue, SSAValue] = {}
        rest = linear
        for position, (iv, count) in enumerate(reversed(loops)):
            if position == len(loops) - 1:
                mapping[iv] = rest
                break
            remainder = arith.RemUIOp(rest, self.const(count))
            quotient = arith.DivUIOp(rest, self.const(count))
            ops += [remainder, quotient]
            mapping[iv] = remainder.result
            rest = quotient.result
        return mapping

    def zero_points(self, i: SSAValue, j: SSAValue, ops: list[Operation]
                    ) -> tuple[SSAValue, SSAValue]:
        """(za', zb'_j) at output column `j`, as i32: the zero points of the shifted
        operands (0 where there is none)."""
        gemm = self.gemm
        mapping = self.point(i, j, ops)
        za = self.i32(0, ops) if gemm.za is None else self.clone_value(gemm.za, mapping, ops)
        zb = self.i32(0, ops) if gemm.zb is None else self.clone_value(gemm.zb, mapping, ops)
        if gemm.a_signed:
            shifted = arith.AddiOp(za, self.i32(128, ops))
            ops.append(shifted)
            za = shifted.result
        if not gemm.b_signed:
            shifted = arith.SubiOp(zb, self.i32(128, ops))
            ops.append(shifted)
            zb = shifted.result
        return za, zb

    def tail(self, i: SSAValue, j: SSAValue, value: SSAValue, ops: list[Operation]
             ) -> list[SSAValue]:
        """Stores the sum at output point (i, j): into the output, or (a local accumulator)
        through copies of the fused epilogues, which read `value` for the sum. Returns the
        buffers written."""
        gemm = self.gemm
        nest = gemm.nest
        mapping = self.point(i, j, ops)
        if not gemm.local:
            outputs = gemm.outputs if isinstance(gemm, Int8Gemm) else (gemm.i, gemm.j)
            ops.append(StoreOp(value, nest.home, [mapping[iv] for iv in outputs]))
        writes = [] if gemm.local else [nest.home]
        for block in nest.epilogues:
            for op in block.body.block.ops:
                if isinstance(op, YieldOp):
                    continue
                if isinstance(op, LoadOp) and op.memref is nest.home:
                    mapping[op.result] = value
                    continue
                for operand in op.operands:
                    if operand not in mapping:
                        self.clone_value(operand, mapping, ops)
                ops.append(op.clone(value_mapper=mapping))
            writes += [buffer for buffer in block.writes if buffer not in writes]
        return writes

    # -- the schedule --------------------------------------------------------------------------

    def build(self) -> list[Operation]:
        gemm = self.gemm
        ops: list[Operation] = []
        packed_b = self.pack_b(ops) if gemm.plain_b else self.pack_implicit_b(ops)
        rows = gemm.a
        if gemm.row_view:
            a_type = gemm.a.type
            assert isinstance(a_type, MemRefType), "_reads_rows admits memrefs only"
            view = collapse_axes(gemm.a, 0, len(a_type.get_shape()) - 1)
            view.result.name_hint = f"{gemm.a.name_hint or 'A'}_rows"
            ops.append(view)
            rows = view.result
        if not gemm.plain_a and not gemm.row_view:
            a = self.pack_implicit_a(ops)
        elif gemm.a_signed or gemm.depth % DEPTH:
            a = self.pack_a(rows, ops)
        else:
            a = rows
        colsum = None if self.za_vanishes() else self.colsum(packed_b, ops)
        rowsum = None if self.zb_vanishes() else self.rowsum(a, ops)
        ops += self.kernels(a, packed_b, rowsum, colsum)
        for buffer in [packed_b, *([colsum] if colsum is not None else []),
                       *([rowsum] if rowsum is not None else []),
                       *([a] if a is not rows else [])]:
            ops.append(DeallocOp(buffer))
        return ops

    def pack_b(self, ops: list[Operation]) -> SSAValue:
        """`Bp[g, k4, p, 4 l + d] = b'[4 k4 + d, 16 (NP g + p) + l]`, zero outside B: a
        reduction step of a column group reads its NP panels' 64 bytes one after the other.
        Loads are guarded (clamped and selected) only when B does not fill the panels."""
        gemm = self.gemm
        alloc = AllocOp(MemRefType(i8, [self.groups, self.k4, self.np, PANEL]), "global")
        alloc.result.name_hint = f"{gemm.b.name_hint or 'B'}_vnni"
        ops.append(alloc)
        packed = alloc.result
        guarded = gemm.n % (LANES * self.np) != 0 or gemm.depth % DEPTH != 0

        def copy(g: SSAValue, k4: SSAValue, p: SSAValue, lane: SSAValue, step: SSAValue,
                 body: list[Operation]) -> None:
            inner: list[Operation] = []
            column = self.affine(inner, (g, LANES * self.np), (p, LANES), (lane, 1))
            row = self.affine(inner, (k4, DEPTH), (step, 1))
            if guarded:
                value = self.guarded_load(gemm.b, [row, column], [gemm.depth, gemm.n],
                                          not gemm.b_signed, inner)
            else:
                value = self.load_byte(gemm.b, [row, column], not gemm.b_signed, inner)
            at = self.affine(inner, (lane, DEPTH), (step, 1))
            inner.append(StoreOp(value, packed, [g, k4, p, at]))
            body.append(BlockOp(f"{self.name}.pack_b", [gemm.b], [packed], inner,
                                ["g", "k4", "p", "l", "d"]))

        def panel(g: SSAValue, k4: SSAValue, p: SSAValue, body: list[Operation]) -> None:
            body.append(self.loop(0, LANES, "l", "serial", lambda lane, inner: inner.append(
                self.loop(0, DEPTH, "d", "unrolled",
                          lambda step, o: copy(g, k4, p, lane, step, o)))))

        ops.append(self.loop(0, self.groups, "g", "serial", lambda g, body: body.append(
            self.loop(0, self.k4, "k4", "serial", lambda k4, inner: inner.append(
                self.loop(0, self.np, "p", "serial", lambda p, o: panel(g, k4, p, o)))))))
        return packed

    def nest_over(self, loops: tuple[Loop, ...], axis: str, kind: str,
                  body: Callable[[dict[SSAValue, SSAValue], list[Operation]], None],
                  vector_innermost: bool = False) -> list[Operation]:
        """Loops over `loops` (new induction variables, same trip counts, in order; outermost
        of kind `kind`, inner ones of at most UNROLL_PACK iterations together unrolled, and
        with `vector_innermost` an innermost one of more vectorized); `body` gets the mapping
        of the originals to the new ones."""
        if not loops:
            ops: list[Operation] = []
            body({}, ops)
            return ops

        def level(depth: int, mapping: dict[SSAValue, SSAValue]) -> Body:
            def build(iv: SSAValue, ops: list[Operation]) -> None:
                inner = {**mapping, loops[depth][0]: iv}
                if depth + 1 == len(loops):
                    body(inner, ops)
                else:
                    count = loops[depth + 1][1]
                    inner_count = _product_of(loops[depth + 1:])
                    kind = "unrolled" if inner_count <= UNROLL_PACK else "serial"
                    if vector_innermost and depth + 2 == len(loops) and kind == "serial":
                        kind = "vectorized"
                    ops.append(self.loop(0, count, f"{axis}{depth + 1}", kind,
                                         level(depth + 1, inner)))
            return build

        return [self.loop(0, loops[0][1], f"{axis}0", kind, level(0, {}))]

    def linear(self, mapping: dict[SSAValue, SSAValue], loops: tuple[Loop, ...],
               ops: list[Operation]) -> SSAValue:
        """The row-major linear index of the point `mapping` of `loops`."""
        terms: list[tuple[SSAValue, int]] = []
        stride = 1
        for iv, count in reversed(loops):
            terms.append((mapping[iv], stride))
            stride *= count
        return self.affine(ops, *reversed(terms))

    def implicit_byte(self, load: LoadOp | None, mapping: dict[SSAValue, SSAValue], flip: bool,
                      ops: list[Operation]) -> SSAValue:
        """The factor's load (its indices recomputed from `mapping`), sign bit flipped if
        `flip`."""
        assert load is not None
        full = {iv: self.const(0) for iv in self.gemm.units}
        full.update(mapping)
        return _flipped(self.clone_value(load.result, full, ops), flip, ops)

    def fill_all(self, buffer: SSAValue, name: str) -> list[Operation]:
        """A nest storing 0 into every element of `buffer` (any rank)."""
        memref_type = buffer.type
        assert isinstance(memref_type, MemRefType)
        shape = memref_type.get_shape()
        loops = tuple((None, count) for count in shape)

        def store(mapping: dict[SSAValue, SSAValue], ops: list[Operation]) -> None:
            zero = arith.ConstantOp(IntegerAttr(0, memref_type.get_element_type()))
            indices = [mapping[position] for position in range(len(shape))]  # type: ignore[index]
            ops.append(BlockOp(name, [], [buffer], [zero, StoreOp(zero, buffer, indices)]))

        def level(depth: int, mapping: dict) -> Body:  # type: ignore[type-arg]
            def build(iv: SSAValue, ops: list[Operation]) -> None:
                inner = {**mapping, depth: iv}
                if depth + 1 == len(loops):
                    store(inner, ops)
                else:
                    kind = "vectorized" if depth + 2 == len(loops) else "serial"
                    ops.append(self.loop(0, loops[depth + 1][1], "z", kind,
                                         level(depth + 1, inner)))
            return build

        kind = "vectorized" if len(loops) == 1 else "serial"
        return [self.loop(0, loops[0][1], "z", kind, level(0, {}))]

    def pack_implicit_a(self, ops: list[Operation]) -> SSAValue:
        """`Ap[i, k] = a'(i, k)` of an implicit A (a conv's weight: `w[o, c, kh, kw]` at row
        o and depth (c, kh, kw)), zero past K: the loops of the original nest, rows then
        depth, so that the reads follow A's own order (a constant A is packed at compile
        time)."""
        gemm = self.gemm
        alloc = AllocOp(MemRefType(i8, [gemm.m, self.k4 * DEPTH]), "global")
        alloc.result.name_hint = f"{gemm.a.name_hint or 'A'}_u8"
        ops.append(alloc)
        packed = alloc.result
        if gemm.depth % DEPTH:
            ops += self.fill_all(packed, f"{self.name}.pack_a_zero")

        def copy(mapping: dict[SSAValue, SSAValue], body: list[Operation]) -> None:
            inner: list[Operation] = []
            value = self.implicit_byte(gemm.a_load, mapping, gemm.a_signed, inner)
            i = self.linear(mapping, gemm.rows, inner)
            k = self.linear(mapping, gemm.depths, inner)
            inner.append(StoreOp(value, packed, [i, k]))
            body.append(BlockOp(f"{self.name}.pack_a", _reads(inner), [packed], inner))

        nest = self.nest_over((*gemm.rows, *gemm.depths), "a", "serial", copy,
                              self.contiguous_depth(gemm.a_load))
        ops += nest
        if (nest and isinstance(nest[0], ForOp) and (gemm.rows or gemm.depths)[0][1] > 1
                and not is_constant_argument(gemm.a)):
            self.parallel_loops.append(nest[0])  # a run-time im2col: split among the threads
        return packed

    def contiguous_depth(self, load: LoadOp | None) -> bool:
        """Whether the innermost depth loop moves only the last index of the operand's load
        (an NHWC input's channels): its packing then copies whole vectors of bytes."""
        if load is None or not self.gemm.depths:
            return False
        return _moves_only_last_index(load, self.gemm.depths[-1][0])

    def pack_implicit_b(self, ops: list[Operation]) -> SSAValue:
        """`Bp` (pack_b's layout) of an implicit B (a conv's input: `x[n, c, oh s + kh d, ow
        s + kw d]` at depth (c, kh, kw) and column (n, oh, ow)), zero outside B: the loops of
        the original nest, depth then columns, so that the innermost loop reads a row of the
        input (im2col fused into the packing); the outermost is parallel."""
        gemm = self.gemm
        width = LANES * self.np
        alloc = AllocOp(MemRefType(i8, [self.groups, self.k4, self.np, PANEL]), "global")
        alloc.result.name_hint = f"{gemm.b.name_hint or 'B'}_vnni"
        ops.append(alloc)
        packed = alloc.result
        if gemm.n % width or gemm.depth % DEPTH:
            ops += self.fill_all(packed, f"{self.name}.pack_b_zero")

        def copy(mapping: dict[SSAValue, SSAValue], body: list[Operation]) -> None:
            inner: list[Operation] = []
            value = self.implicit_byte(gemm.b_load, mapping, not gemm.b_signed, inner)
            k = self.linear(mapping, gemm.depths, inner)
            j = self.linear(mapping, gemm.cols, inner)
            parts = [arith.DivUIOp(j, self.const(width)), arith.DivUIOp(k, self.const(DEPTH)),
                     arith.RemUIOp(j, self.const(width)), arith.RemUIOp(k, self.const(DEPTH))]
            inner += parts
            panel = arith.DivUIOp(parts[2], self.const(LANES))
            lane = arith.RemUIOp(parts[2], self.const(LANES))
            inner += [panel, lane]
            at = self.affine(inner, (lane.result, DEPTH), (parts[3].result, 1))
            inner.append(StoreOp(value, packed, [parts[0].result, parts[1].result,
                                                 panel.result, at]))
            body.append(BlockOp(f"{self.name}.pack_b", _reads(inner), [packed], inner))

        nest = self.nest_over((*gemm.depths, *gemm.cols), "b", "serial", copy)
        ops += nest
        if nest and isinstance(nest[0], ForOp) and gemm.depths and gemm.depths[0][1] > 1:
            self.parallel_loops.append(nest[0])
        return packed

    def load_byte(self, buffer: SSAValue, indices: list[SSAValue], flip: bool,
                  ops: list[Operation]) -> SSAValue:
        """`buffer[indices]`, its sign bit flipped if `flip` (u8 <-> s8 shifted by 128)."""
        load = LoadOp(buffer, indices)
        ops.append(load)
        return _flipped(load.result, flip, ops)

    def guarded_load(self, buffer: SSAValue, indices: list[SSAValue], bounds: list[int],
                     flip: bool, ops: list[Operation]) -> SSAValue:
        """`buffer[indices]` (sign bit flipped if `flip`) where every index is below its bound,
        else 0; the load reads a clamped index, so it never leaves the buffer."""
        inside: SSAValue | None = None
        clamped: list[SSAValue] = []
        for index, bound in zip(indices, bounds, strict=True):
            test = arith.CmpiOp(index, self.const(bound), "ult")
            low = arith.MinUIOp(index, self.const(bound - 1))
            ops += [test, low]
            clamped.append(low.result)
            if inside is None:
                inside = test.result
            else:
                both = arith.AndIOp(inside, test)
                ops.append(both)
                inside = both.result
        value = self.load_byte(buffer, clamped, flip, ops)
        zero = arith.ConstantOp(IntegerAttr(0, i8))
        assert inside is not None
        selected = arith.SelectOp(inside, value, zero)
        ops += [zero, selected]
        return selected.result

    def pack_a(self, rows: SSAValue, ops: list[Operation]) -> SSAValue:
        """`Ap[i, k] = a'[i, k]` of A's rows (`rows`: A, or its row view), zero past K (a whole
        number of 4-byte blocks)."""
        gemm = self.gemm
        alloc = AllocOp(MemRefType(i8, [gemm.m, self.k4 * DEPTH]), "global")
        alloc.result.name_hint = f"{gemm.a.name_hint or 'A'}_u8"
        ops.append(alloc)
        packed = alloc.result

        def copy(i: SSAValue, k: SSAValue, body: list[Operation]) -> None:
            inner: list[Operation] = []
            value = self.guarded_load(rows, [i, k], [gemm.m, gemm.depth], gemm.a_signed, inner)
            inner.append(StoreOp(value, packed, [i, k]))
            body.append(BlockOp(f"{self.name}.pack_a", [rows], [packed], inner, ["i", "k"]))

        ops.append(self.loop(0, gemm.m, "i", "serial", lambda i, body: body.append(
            self.loop(0, self.k4 * DEPTH, "k", "serial", lambda k, inner: copy(i, k, inner)))))
        return packed

    def colsum(self, packed_b: SSAValue, ops: list[Operation]) -> SSAValue:
        """`colsum[j] = sum_k b'[k, j]`: for a constant B, one scalar nest over the packed
        panels that loop-fold-constant-nests evaluates at compile time (its whole-nest
        evaluator adds the sums up); else vpdpbusd(ones, Bp) per panel, at run time (one
        dependent chain per panel: at run time on a constant weight it took 13% of a 960 ->
        160 1x1 conv at 7x7)."""
        panels = self.groups * self.np
        alloc = AllocOp(MemRefType(i32, [panels * LANES]), "global")
        alloc.result.name_hint = "colsum"
        ops.append(alloc)
        colsum = alloc.result
        if is_constant_argument(self.gemm.b):
            ops.append(self.folded_colsum(packed_b, colsum, panels, self.za_constant()))
            return colsum
        ops += self.fill(colsum, 0, f"{self.name}.colsum_init")
        ones = self.ones_buffer(DEPTH, ops)

        def step(g: SSAValue, p: SSAValue, k4: SSAValue, body: list[Operation]) -> None:
            self.dot(
                colsum, lambda ji, o: [self.affine(o, (g, LANES * self.np), (p, LANES), (ji, 1))],
                ones, lambda ki, o: [ki],
                packed_b, lambda ji, ki, o: [g, k4, p, self.affine(o, (ji, DEPTH), (ki, 1))],
                f"{self.name}.colsum", body)

        ops.append(self.loop(0, self.groups, "g", "serial", lambda g, body: body.append(
            self.loop(0, self.np, "p", "serial", lambda p, inner: inner.append(
                self.loop(0, self.k4, "k4", "serial", lambda k4, o: step(g, p, k4, o)))))))
        return colsum

    def folded_colsum(self, packed_b: SSAValue, colsum: SSAValue, panels: int,
                      factor: int | None) -> ForOp:
        """`for j { colsum[j] = 0; for k4, d { colsum[j] += ext(Bp[.., k4, .., 4 l + d]) } }`
        over the packed panels (`colsum`'s scalar form); with a constant za' (`factor`), each
        term times za', so that the epilogue subtracts `colsum[j]` without a multiply (a
        `vpmulld`, or a shift for the 128 of a signed A, per 16 outputs)."""
        self.scaled_colsum = factor is not None

        def column(j: SSAValue, body: list[Operation]) -> None:
            zero = arith.ConstantOp(IntegerAttr(0, i32))
            body.append(BlockOp(f"{self.name}.colsum_init", [], [colsum],
                                [zero, StoreOp(zero, colsum, [j])]))

            def step(k4: SSAValue, d: SSAValue, inner: list[Operation]) -> None:
                o: list[Operation] = []
                panel = arith.DivUIOp(j, self.const(LANES))
                lane = arith.RemUIOp(j, self.const(LANES))
                g = arith.DivUIOp(panel, self.const(self.np))
                p = arith.RemUIOp(panel, self.const(self.np))
                o += [panel, lane, g, p]
                at = self.affine(o, (lane.result, DEPTH), (d, 1))
                byte = LoadOp(packed_b, [g.result, k4, p.result, at])
                wide = arith.ExtSIOp(byte, i32)
                o += [byte, wide]
                term = wide.result
                if factor is not None:
                    scaled = arith.MuliOp(term, self.i32(factor, o))
                    o.append(scaled)
                    term = scaled.result
                old = LoadOp(colsum, [j])
                summed = arith.AddiOp(old, term)
                o += [old, summed, StoreOp(summed, colsum, [j])]
                inner.append(BlockOp(f"{self.name}.colsum", [packed_b, colsum], [colsum], o))

            body.append(self.loop(0, self.k4, "k4", "serial", lambda k4, inner: inner.append(
                self.loop(0, DEPTH, "d", "serial", lambda d, o: step(k4, d, o)))))

        return self.loop(0, panels * LANES, "j", "serial", column)

    def rowsum(self, a: SSAValue, ops: list[Operation]) -> SSAValue:
        """`rowsum[i, l] = sum_k a'[i, k]` (every lane l the same), as vpdpbusd(a', ones)."""
        gemm = self.gemm
        alloc = AllocOp(MemRefType(i32, [gemm.m, LANES]), "global")
        alloc.result.name_hint = "rowsum"
        ops.append(alloc)
        rowsum = alloc.result
        ops += self.fill(rowsum, 0, f"{self.name}.rowsum_init")
        ones = self.ones_buffer(PANEL, ops)

        def rows(block: SSAValue, count: int, k4: SSAValue, body: list[Operation]) -> None:
            def row(r: SSAValue, inner: list[Operation]) -> None:
                def at(o: list[Operation]) -> SSAValue:
                    return self.affine(o, (block, ROWSUM_ROWS), (r, 1))

                self.dot(
                    rowsum, lambda ji, o: [at(o), ji],
                    a, lambda ki, o: [at(o), self.affine(o, (k4, DEPTH), (ki, 1))],
                    ones, lambda ji, ki, o: [self.affine(o, (ji, DEPTH), (ki, 1))],
                    f"{self.name}.rowsum", inner)

            body.append(self.loop(0, count, "r", "unrolled", row))

        # Blocks of rows, so that the sums of different rows (independent vpdpbusd chains)
        # interleave: one row at a time waits the instruction's latency at every step.
        full, tail = divmod(gemm.m, ROWSUM_ROWS)
        if full:
            blocks = self.loop(0, full, "i.o", "serial", lambda io, body: body.append(
                self.loop(0, self.k4, "k4", "serial",
                          lambda k4, inner: rows(io, ROWSUM_ROWS, k4, inner))))
            ops.append(blocks)
            self.parallel_loops.append(blocks)
        if tail:
            ops.append(self.loop(0, self.k4, "k4", "serial",
                                 lambda k4, inner: rows(self.const(full), tail, k4, inner)))
        return rowsum

    def kernels(self, a: SSAValue, packed_b: SSAValue, rowsum: SSAValue | None,
                colsum: SSAValue | None
                ) -> list[Operation]:
        """The row blocks (parallel) each over the column groups when that balances the
        threads better and B's panels fit half the L2 (`rows_outermost`); else chunks of
        column groups (parallel), each chunk's row blocks over its groups
        (`groups_per_chunk`), or, where no chunking fits, the column groups (parallel), each
        over its row blocks."""
        gemm = self.gemm
        width = LANES * self.np
        full_groups, tail_columns = divmod(gemm.n, width)
        full_rows, tail_rows = divmod(gemm.m, self.mr)
        ops: list[Operation] = []

        def tiles(row_block: SSAValue, rows: int, g: SSAValue, columns: int) -> list[Operation]:
            return self.micro(a, packed_b, rowsum, colsum, row_block, rows, g, columns)

        def columns_of(row_block: SSAValue, rows: int, body: list[Operation],
                       parallel: bool) -> None:
            """Every column group of one row block."""
            if full_groups:
                groups = self.loop(0, full_groups, "j.o", "serial", lambda g, inner: inner.extend(
                    tiles(row_block, rows, g, width)))
                body.append(groups)
                if parallel and full_groups >= 2:
                    self.parallel_loops.append(groups)
            if tail_columns:
                body.extend(tiles(row_block, rows, self.const(full_groups), tail_columns))

        if self.rows_outermost(full_rows, tail_rows, full_groups, tail_columns):
            blocks = self.loop(0, full_rows, "i.o", "serial",
                               lambda io, body: columns_of(io, self.mr, body, False))
            ops.append(blocks)
            self.parallel_loops.append(blocks)
            if tail_rows:
                columns_of(self.const(full_rows), tail_rows, ops, True)
            return ops

        def group(g: SSAValue, columns: int, body: list[Operation]) -> None:
            if full_rows:
                rows_loop = self.loop(0, full_rows, "i.o", "serial", lambda io, inner: inner.extend(
                    tiles(io, self.mr, g, columns)))
                body.append(rows_loop)
                if full_groups < 2:
                    self.parallel_loops.append(rows_loop)
            if tail_rows:
                body.extend(tiles(self.const(full_rows), tail_rows, g, columns))

        if full_groups:
            per = self.groups_per_chunk(full_groups) if full_rows >= 2 else 1
            ops.append(self.chunks(tiles, per, full_groups // per, full_rows, tail_rows))
        if tail_columns:
            group(self.const(full_groups), tail_columns, ops)
        return ops

    def rows_outermost(self, full_rows: int, tail_rows: int, full_groups: int,
                       tail_columns: int) -> bool:
        """Whether the threads split the row blocks rather than the column groups: when the
        whole packed B fits half the L2 (each thread streams all of it) and the threads' share
        of the work, the serial tails included, is smaller that way. The column groups left
        the threads idle on a conv whose output channels are one group and a tail (16 -> 96
        at 112x112: one thread took the 64 columns' row blocks in one parallel region, the
        tail's in another) or two groups and a tail (960 -> 160 at 7x7: the tail serial).
        On one thread, whenever B fits: a row block of A then stays in L1 while B's panels
        stream from L2, where the column groups outermost stream both (a group's panels
        outgrow L1 at a depth over 192): a 1024^3 GEMM ran 74-79% of the int8 peak (best of
        30) that way, 85-86% rows outermost."""
        config = self.config
        if full_rows < 2:
            return False
        packed_bytes = self.groups * self.k4 * self.np * PANEL
        if config.l2_bytes and packed_bytes > config.l2_bytes // 2:
            return False
        if not config.parallel:
            return full_groups >= 2
        if full_groups < 2:
            return True  # the same split, in one parallel region rather than one per group
        threads = max(config.threads, 2)
        by_rows = (-(-full_rows // threads) * self.mr + tail_rows) * self.gemm.n
        by_columns = ((-(-full_groups // threads) * LANES * self.np + tail_columns)
                      * self.gemm.m)
        if self.gemm.m * self.k4 * DEPTH > packed_bytes:
            # Split by columns, every thread reads all of A, the larger operand (a conv's
            # im2col rows, which the threads packed by rows): ResNet-18's int8 128 -> 128 3x3
            # conv at 28x28 scaled 1.23x from 1 to 2 threads that way.
            return by_rows <= by_columns * ROWS_BALANCE_SLACK
        return by_rows < by_columns

    def chunks(self, tiles: Callable[[SSAValue, int, SSAValue, int], list[Operation]],
               per: int, count: int, full_rows: int, tail_rows: int) -> ForOp:
        """`count` chunks of `per` whole column groups (parallel when there are two, else
        the row blocks), each chunk's row blocks over its groups (a chunk of one group: its
        row blocks)."""
        width = LANES * self.np

        def chunk(t: SSAValue, body: list[Operation]) -> None:
            def block(row_block: SSAValue, rows: int, inner: list[Operation]) -> None:
                if per == 1:
                    inner.extend(tiles(row_block, rows, t, width))
                    return

                def column_group(gi: SSAValue, group_body: list[Operation]) -> None:
                    g = self.affine(group_body, (t, per), (gi, 1))
                    group_body.extend(tiles(row_block, rows, g, width))
                inner.append(self.loop(0, per, "j.i", "serial", column_group))

            if full_rows:
                blocks = self.loop(0, full_rows, "i.o", "serial",
                                   lambda io, inner: block(io, self.mr, inner))
                body.append(blocks)
                if count < 2:
                    self.parallel_loops.append(blocks)
            if tail_rows:
                block(self.const(full_rows), tail_rows, body)

        loop = self.loop(0, count, "j.o", "serial", chunk)
        if count >= 2:
            self.parallel_loops.append(loop)
        return loop

    def groups_per_chunk(self, full_groups: int) -> int:
        """Column groups a chunk takes when the column groups are the outer loop: the row
        blocks then run over a chunk's groups, so that a block of A, loaded into L1 by the
        first group, serves the others (one group at a time, both operands streamed from L2:
        a 1024^3 GEMM on 2 threads ran 67% of the int8 peak that way, best of 30, and 78-79%
        in chunks of 4 or 8 groups). The chunks divide the groups evenly, are at least twice
        as many as the threads (dynamic balance), and each one's panels fit half the L2; 1 (a
        group at a time) where no such chunking exists."""
        config = self.config
        if full_groups < 2:
            return 1
        threads = max(config.threads, 2) if config.parallel else 1
        chunk_bytes = self.k4 * self.np * PANEL
        budget = config.l2_bytes // 2 if config.l2_bytes else None
        for chunks in range(min(2 * threads, full_groups) if threads > 1 else 1,
                            full_groups + 1):
            per = full_groups // chunks
            if full_groups % chunks == 0 and (budget is None or per * chunk_bytes <= budget):
                return per
        return 1

    def micro(self, a: SSAValue, packed_b: SSAValue, rowsum: SSAValue | None,
              colsum: SSAValue | None,
              row_block: SSAValue, rows: int, g: SSAValue, columns: int) -> list[Operation]:
        """One MR x NR tile: rows `row_block * MR + r` (r < rows), panels `g * NP + p`; the
        epilogue writes its `columns` valid columns."""
        gemm = self.gemm
        width = LANES * self.np
        tile_alloc = AllocOp(MemRefType(i32, [rows, width]), "local")
        tile_alloc.result.name_hint = "tile"
        tile = tile_alloc.result
        ops: list[Operation] = [tile_alloc]

        def row_of(r: SSAValue, o: list[Operation]) -> SSAValue:
            return self.affine(o, (row_block, self.mr), (r, 1))

        def init(r: SSAValue, body: list[Operation]) -> None:
            def lane(c: SSAValue, inner: list[Operation]) -> None:
                zero = arith.ConstantOp(IntegerAttr(0, i32))
                inner.append(BlockOp(f"{self.name}.init", [], [tile],
                                     [zero, StoreOp(zero, tile, [r, c])], ["r", "c"]))

            body.append(self.loop(0, width, "c", "vectorized", lane))

        ops.append(self.loop(0, rows, "r", "unrolled", init))

        def update(k4: SSAValue, body: list[Operation]) -> None:
            def row(r: SSAValue, row_body: list[Operation]) -> None:
                def panel(p: SSAValue, panel_body: list[Operation]) -> None:
                    self.dot(
                        tile, lambda ji, o: [r, self.affine(o, (p, LANES), (ji, 1))],
                        a, lambda ki, o: [row_of(r, o), self.affine(o, (k4, DEPTH), (ki, 1))],
                        packed_b, lambda ji, ki, o: [
                            g, k4, p, self.affine(o, (ji, DEPTH), (ki, 1))],
                        self.name, panel_body)

                row_body.append(self.loop(0, self.np, "p", "unrolled", panel))

            body.append(self.loop(0, rows, "r", "unrolled", row))

        ops.append(self.loop(0, self.k4, "k4", "serial", update))

        def epilogue(r: SSAValue, body: list[Operation]) -> None:
            def lane(c: SSAValue, inner: list[Operation]) -> None:
                o: list[Operation] = []
                i = row_of(r, o)
                j = self.affine(o, (g, width), (c, 1))
                za, zb = self.zero_points(i, j, o)
                dot = LoadOp(tile, [r, c])
                o.append(dot)
                partial = dot.result
                if rowsum is not None:
                    sum_a = LoadOp(rowsum, [i, self.const(0)])
                    depth_za = arith.MuliOp(za, self.i32(gemm.depth, o))
                    row_term = arith.SubiOp(sum_a, depth_za)
                    row_comp = arith.MuliOp(zb, row_term)
                    minus_row = arith.SubiOp(partial, row_comp)
                    o += [sum_a, depth_za, row_term, row_comp, minus_row]
                    partial = minus_row.result
                if colsum is not None:
                    sum_b = LoadOp(colsum, [j])
                    o.append(sum_b)
                    col_comp = sum_b.result
                    if not self.scaled_colsum:
                        product = arith.MuliOp(za, sum_b)
                        o.append(product)
                        col_comp = product.result
                    minus_col = arith.SubiOp(partial, col_comp)
                    o.append(minus_col)
                    partial = minus_col.result
                writes = self.tail(i, j, partial, o)
                reads = [tile]
                for op in o:
                    if isinstance(op, LoadOp) and op.memref not in reads:
                        reads.append(op.memref)
                inner.append(BlockOp(f"{self.name}.write", reads, writes, o, ["r", "c"]))

            body.append(self.loop(0, columns, "c", "vectorized", lane))

        ops.append(self.loop(0, rows, "r", "unrolled", epilogue))
        ops.append(DeallocOp(tile))
        return ops


def _constant_int(value: SSAValue) -> int | None:
    """The integer `value` is wherever it is computed, when known at compile time: a constant,
    the extension of one, or a load from a constant argument whose elements are all equal (a
    per-tensor zero point), read in the signedness its extension gives it."""
    owner = value.owner
    if isinstance(owner, arith.ExtSIOp | arith.ExtUIOp):
        inner = _constant_int(owner.input)
        width = owner.input.type.bitwidth if isinstance(owner.input.type, IntegerType) else 0
        if inner is None or not width:
            return None
        inner %= 1 << width
        if isinstance(owner, arith.ExtSIOp) and inner >= 1 << (width - 1):
            inner -= 1 << width
        return inner
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data if isinstance(owner.value, IntegerAttr) else None
    if isinstance(owner, LoadOp):
        values = constant_argument_values(owner.memref)
        if values is None or not values.size or (values != values.flat[0]).any():
            return None
        return int(values.flat[0])
    return None


def _is_zero(value: SSAValue) -> bool:
    """Whether `value` is 0 wherever it is computed: a constant 0, or the extension of a load
    from a constant argument whose elements are all 0 (a per-channel zero point)."""
    owner = value.owner
    if isinstance(owner, arith.ExtSIOp | arith.ExtUIOp):
        return _is_zero(owner.input)
    if isinstance(owner, arith.ConstantOp):
        return isinstance(owner.value, IntegerAttr) and owner.value.value.data == 0
    if isinstance(owner, LoadOp):
        values = constant_argument_values(owner.memref)
        return values is not None and not values.any()
    return False


def _reads(ops: list[Operation]) -> list[SSAValue]:
    """The buffers `ops` load from, in order of first load."""
    reads: list[SSAValue] = []
    for op in ops:
        if isinstance(op, LoadOp) and op.memref not in reads:
            reads.append(op.memref)
    return reads
