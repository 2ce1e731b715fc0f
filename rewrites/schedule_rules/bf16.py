"""Default CPU schedule of a bf16 GEMM on a target with AVX-512 BF16: `vdpbf16ps` micro-kernels.

Counterpart: oneDNN's bf16 brgemm (`vdpbf16ps` with B re-laid out as pairs of k, "VNNI-2"
format), TVM's x86 `dense` schedules tensorized with `dot_16x1x16_uint8_int8_int32` (here its
bf16 analogue).

The nest is `graph.matmul`'s on bf16 operands (precision="bf16"): `acc = 0; acc +=
extf(A[i, k]) * extf(B[k, j])` into an f32 accumulator, followed by the epilogues that read it
(the round to bf16, a fused bias or activation). Emitted, before the nest it replaces:

    Bp = pack B into [G][K/2][NP][32] bf16 (16 columns x 2 k per 32 values, zero padded; a
         constant B is packed at compile time by loop-fold-constant-nests)
    [Ap = A in [M][K/2 * 2], zero padded: only for an odd K]
    for g in column groups of NP panels (parallel) {       // NR = 16 NP columns
      for row blocks of MR rows (and a tail block of M mod MR rows) {
        tile = loop.alloc local [MR][NR] f32, zeroed
        for k2 { for r (unrolled MR) { for p (unrolled NP) {
          for j.i (16) { for k.i (2) { tile[r, 16p + j.i] += a[i, 2k2 + k.i] * Bp[..] } }
                                          // -> transform.loop.tensorize "x86.avx512.vdpbf16ps"
        } } }
        for r (unrolled) { for c (vectorized, the group's valid columns) {
          the epilogues on tile[r, c] } }
      } }

`vdpbf16ps` adds each pair of products to the lane in one rounding and flushes denormal inputs
and outputs, so results may differ from the scalar nest's in the last bits (and for values
below 2^-126). The zero padding adds exact zeros (a NaN or infinity in A times a padded zero of
B lands only in columns past N, which nothing reads). Leading spatial loops of one iteration
(a `[1, M, K] x [K, N]` MatMul) are matched; batched GEMMs (a batch over 1, or B batched too) and
convs are not.
The tile shape is the VNNI rule's (`vnni.tile_shape`): 6 x 4 panels on AVX-512. The rule applies
only when the target has `avx512bf16` (`CpuConfig.features`); elsewhere the generic reduction
rule schedules the f32-accumulating nest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.schedule.common import depends_on
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import Reduction
from dlc.rewrites.schedule_rules.vnni import (
    LANES,
    GemmBuilder,
    _epilogues_fit,
    _home_indices,
    replace_by_tensorized_gemm,
    tile_shape,
)
from dlc.target.intrinsics import VDPBF16PS
from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, FloatAttr, MemRefType, bf16, f32
from xdsl.ir import Operation, SSAValue

PAIR = 2
"""bf16 values each lane reduces per vdpbf16ps (its `k` extent)."""
PANEL = LANES * PAIR
"""bf16 values of B one vdpbf16ps reads: 16 columns x 2 rows."""


@dataclass
class Bf16Gemm:
    """What the rule reads of a matched bf16 GEMM nest (the fields `GemmBuilder` reads)."""

    nest: Reduction
    i: SSAValue
    j: SSAValue
    k: SSAValue
    a: SSAValue
    b: SSAValue
    m: int
    n: int
    depth: int
    local: bool
    """Whether the sum goes to a local accumulator (`nest.alloc`) that the epilogues read,
    rather than to the output at `[i, j]`."""
    lead: tuple[SSAValue, ...] = ()
    """Leading spatial loops of one iteration (the batch of 1 of a `[1, M, K] x [K, N]`
    MatMul), whose induction variables index A and the output first."""


def match_bf16_gemm(nest: Reduction) -> Bf16Gemm | None:
    """The bf16 GEMM the nest computes (module docstring), or None."""
    if len(nest.spatial) < 2 or len(nest.reduction) != 1 or nest.init is None:
        return None
    loops = (*nest.spatial, nest.reduction[0])
    if any((bounds := loop.constant_bounds()) is None or bounds[0] != 0 or bounds[2] != 1
           for loop in loops):
        return None  # the schedule counts every index from 0 by 1
    if any(loop.trip_count() != 1 for loop in nest.spatial[:-2]):
        return None
    lead = tuple(loop.induction_var for loop in nest.spatial[:-2])
    i, j = (loop.induction_var for loop in nest.spatial[-2:])
    k = nest.reduction[0].induction_var
    extents = [loop.trip_count() for loop in (*nest.spatial[-2:], nest.reduction[0])]
    if any(extent is None for extent in extents):
        return None
    m, n, depth = extents
    local = nest.alloc is not None
    stores = [op for op in nest.update.body.block.ops if isinstance(op, StoreOp)]
    if len(stores) != 1 or stores[0].memref is not nest.home:
        return None
    store = stores[0]
    if not _home_fits(store, lead, i, j, k, local) or store.value.type != f32:
        return None
    if not _zero_init(nest.init, store) or not _epilogues_fit(nest, store, i, j, k):
        return None
    mul = _product(store)
    if mul is None:
        return None
    roles: dict[str, SSAValue] = {}
    for value in (mul.lhs, mul.rhs):
        ext = value.owner
        if not isinstance(ext, arith.ExtFOp):
            return None
        load = ext.input.owner
        if not isinstance(load, LoadOp) or not isinstance(load.result.type, BFloat16Type):
            return None
        if list(load.indices) == [*lead, i, k]:
            roles["a"] = load.memref
        elif list(load.indices) == [k, j]:
            roles["b"] = load.memref
    if set(roles) != {"a", "b"}:
        return None
    return Bf16Gemm(nest, i, j, k, roles["a"], roles["b"], m, n, depth,  # type: ignore[arg-type]
                    local, lead)


def _home_fits(store: StoreOp, lead: tuple[SSAValue, ...], i: SSAValue, j: SSAValue,
               k: SSAValue, local: bool) -> bool:
    """The output at `[lead..., i, j]`, or (a local accumulator) indices no loop moves."""
    if not local:
        return list(store.indices) == [*lead, i, j]
    return _home_indices(store, i, j, k, local) and not any(
        depends_on(index, set(lead)) for index in store.indices)


def _product(store: StoreOp) -> arith.MulfOp | None:
    """The product `p` of an update `home[x] = home[x] + p`."""
    add = store.value.owner
    if not isinstance(add, arith.AddfOp):
        return None
    for acc, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if (isinstance(acc.owner, LoadOp) and acc.owner.memref is store.memref
                and list(acc.owner.indices) == list(store.indices)
                and isinstance(other.owner, arith.MulfOp)):
            return other.owner
    return None


def _zero_init(init: BlockOp, update: StoreOp) -> bool:
    stores = [op for op in init.body.block.ops if isinstance(op, StoreOp)]
    if (len(stores) != 1 or stores[0].memref is not update.memref
            or list(stores[0].indices) != list(update.indices)):
        return False
    value = stores[0].value.owner
    return (isinstance(value, arith.ConstantOp) and isinstance(value.value, FloatAttr)
            and value.value.value.data == 0.0)


def schedule_bf16_gemm(nest: Reduction, config: CpuConfig) -> bool:
    """Replace a bf16 GEMM nest by its vdpbf16ps schedule (module docstring); False, changing
    nothing, when the target lacks avx512bf16 or the nest is not a bf16 GEMM."""
    if VDPBF16PS.missing_features(config.features):
        return False
    gemm = match_bf16_gemm(nest)
    if gemm is None:
        return False
    return replace_by_tensorized_gemm(nest, _Bf16Builder(gemm, config), VDPBF16PS.name, config)


class _Bf16Builder(GemmBuilder):
    """The VNNI builder's loops and epilogues with bf16 pairs instead of byte quads, and no
    zero points (so no row or column sums)."""

    def __init__(self, gemm: Bf16Gemm, config: CpuConfig) -> None:
        super().__init__(gemm, config)  # type: ignore[arg-type]
        self.mr, self.np = tile_shape(gemm, config)  # type: ignore[arg-type]
        self.k2 = -(-gemm.depth // PAIR)
        self.groups = -(-gemm.n // (LANES * self.np))
        self.lead_zeros = [self.const(0) for _ in gemm.lead]

    def tail(self, i: SSAValue, j: SSAValue, value: SSAValue, ops: list[Operation]
             ) -> list[SSAValue]:
        """`GemmBuilder.tail` at output point (0.., i, j): the leading loops' single
        iteration."""
        gemm = self.gemm
        if not gemm.lead:
            return super().tail(i, j, value, ops)
        nest = gemm.nest
        if not gemm.local:
            ops.append(StoreOp(value, nest.home, [*self.lead_zeros, i, j]))
        writes = [] if gemm.local else [nest.home]
        mapping: dict[SSAValue, SSAValue] = {gemm.i: i, gemm.j: j}
        mapping.update(zip(gemm.lead, self.lead_zeros, strict=True))
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

    def build(self) -> list[Operation]:
        gemm = self.gemm
        ops: list[Operation] = []
        packed_b = self.pack_bf16_b(ops)
        a = self.pack_bf16_a(ops) if gemm.depth % PAIR else gemm.a
        ops += self.bf16_kernels(a, packed_b)
        for buffer in [packed_b, *([a] if a is not gemm.a else [])]:
            ops.append(DeallocOp(buffer))
        return ops

    def bf16_dot(self, acc: SSAValue,
                 acc_index: Callable[[SSAValue, list[Operation]], list[SSAValue]],
                 a: SSAValue, a_index: Callable[[SSAValue, list[Operation]], list[SSAValue]],
                 b: SSAValue,
                 b_index: Callable[[SSAValue, SSAValue, list[Operation]], list[SSAValue]],
                 body: list[Operation]) -> None:
        """`for j.i (16) { for k.i (2) { acc[..j.i] += f32(a[..k.i]) * f32(b[..j.i, k.i]) }
        }`, recorded for tensorizing."""

        def lane(ji: SSAValue, lane_ops: list[Operation]) -> None:
            def depth(ki: SSAValue, inner: list[Operation]) -> None:
                ops: list[Operation] = []
                acc_at = acc_index(ji, ops)
                a_load = LoadOp(a, a_index(ki, ops))
                a_ext = arith.ExtFOp(a_load, f32)
                b_load = LoadOp(b, b_index(ji, ki, ops))
                b_ext = arith.ExtFOp(b_load, f32)
                product = arith.MulfOp(a_ext, b_ext)
                old = LoadOp(acc, acc_at)
                summed = arith.AddfOp(old, product)
                ops += [a_load, a_ext, b_load, b_ext, product, old, summed,
                        StoreOp(summed, acc, acc_at)]
                inner.append(BlockOp(self.name, [a, b], [acc], ops, ["j.i"], ["k.i"]))

            lane_ops.append(self.loop(0, PAIR, "k.i", "serial", depth))

        loop = self.loop(0, LANES, "j.i", "serial", lane)
        self.dots.append(loop)
        body.append(loop)

    def guarded_bf16(self, buffer: SSAValue, indices: list[SSAValue], bounds: list[int],
                     ops: list[Operation], prefix: list[SSAValue] | None = None) -> SSAValue:
        """`buffer[*prefix, *indices]` where every index is below its bound, else 0; the load
        reads a clamped index, so it never leaves the buffer."""
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
        load = LoadOp(buffer, [*(prefix or []), *clamped])
        zero = arith.ConstantOp(FloatAttr(0.0, bf16))
        assert inside is not None
        selected = arith.SelectOp(inside, load, zero)
        ops += [load, zero, selected]
        return selected.result

    def pack_bf16_b(self, ops: list[Operation]) -> SSAValue:
        """`Bp[g, k2, p, 2 l + d] = B[2 k2 + d, 16 (NP g + p) + l]`, zero outside B. Loads are
        guarded only when B does not fill the panels."""
        gemm = self.gemm
        alloc = AllocOp(MemRefType(bf16, [self.groups, self.k2, self.np, PANEL]), "global")
        alloc.result.name_hint = f"{gemm.b.name_hint or 'B'}_bf16x2"
        ops.append(alloc)
        packed = alloc.result
        guarded = gemm.n % (LANES * self.np) != 0 or gemm.depth % PAIR != 0

        def copy(g: SSAValue, k2: SSAValue, p: SSAValue, lane: SSAValue, step: SSAValue,
                 body: list[Operation]) -> None:
            inner: list[Operation] = []
            column = self.affine(inner, (g, LANES * self.np), (p, LANES), (lane, 1))
            row = self.affine(inner, (k2, PAIR), (step, 1))
            if guarded:
                value = self.guarded_bf16(gemm.b, [row, column], [gemm.depth, gemm.n], inner)
            else:
                load = LoadOp(gemm.b, [row, column])
                inner.append(load)
                value = load.result
            at = self.affine(inner, (lane, PAIR), (step, 1))
            inner.append(StoreOp(value, packed, [g, k2, p, at]))
            body.append(BlockOp(f"{self.name}.pack_b", [gemm.b], [packed], inner,
                                ["g", "k2", "p", "l", "d"]))

        def panel(g: SSAValue, k2: SSAValue, p: SSAValue, body: list[Operation]) -> None:
            body.append(self.loop(0, LANES, "l", "serial", lambda lane, inner: inner.append(
                self.loop(0, PAIR, "d", "unrolled",
                          lambda step, o: copy(g, k2, p, lane, step, o)))))

        ops.append(self.loop(0, self.groups, "g", "serial", lambda g, body: body.append(
            self.loop(0, self.k2, "k2", "serial", lambda k2, inner: inner.append(
                self.loop(0, self.np, "p", "serial", lambda p, o: panel(g, k2, p, o)))))))
        return packed

    def pack_bf16_a(self, ops: list[Operation]) -> SSAValue:
        """`Ap[i, k] = A[i, k]`, zero past K (a whole number of pairs)."""
        gemm = self.gemm
        alloc = AllocOp(MemRefType(bf16, [gemm.m, self.k2 * PAIR]), "global")
        alloc.result.name_hint = f"{gemm.a.name_hint or 'A'}_even"
        ops.append(alloc)
        packed = alloc.result

        def copy(i: SSAValue, k: SSAValue, body: list[Operation]) -> None:
            inner: list[Operation] = []
            value = self.guarded_bf16(gemm.a, [i, k], [gemm.m, gemm.depth], inner,
                                      self.lead_zeros)
            inner.append(StoreOp(value, packed, [i, k]))
            body.append(BlockOp(f"{self.name}.pack_a", [gemm.a], [packed], inner, ["i", "k"]))

        ops.append(self.loop(0, gemm.m, "i", "serial", lambda i, body: body.append(
            self.loop(0, self.k2 * PAIR, "k", "serial", lambda k, inner: copy(i, k, inner)))))
        return packed

    def bf16_kernels(self, a: SSAValue, packed_b: SSAValue) -> list[Operation]:
        """The column groups (parallel), each over its row blocks."""
        gemm = self.gemm
        width = LANES * self.np
        full_groups, tail_columns = divmod(gemm.n, width)
        ops: list[Operation] = []

        def group(g: SSAValue, columns: int, body: list[Operation]) -> None:
            full_rows, tail_rows = divmod(gemm.m, self.mr)
            if full_rows:
                rows_loop = self.loop(0, full_rows, "i.o", "serial", lambda io, inner: inner.extend(
                    self.bf16_micro(a, packed_b, io, self.mr, g, columns)))
                body.append(rows_loop)
                if full_groups < 2:
                    self.parallel_loops.append(rows_loop)
            if tail_rows:
                body.extend(self.bf16_micro(a, packed_b, self.const(full_rows), tail_rows, g,
                                            columns))

        if full_groups:
            groups = self.loop(0, full_groups, "j.o", "serial",
                               lambda g, body: group(g, width, body))
            ops.append(groups)
            if full_groups >= 2:
                self.parallel_loops.append(groups)
        if tail_columns:
            group(self.const(full_groups), tail_columns, ops)
        return ops

    def bf16_micro(self, a: SSAValue, packed_b: SSAValue, row_block: SSAValue, rows: int,
                   g: SSAValue, columns: int) -> list[Operation]:
        """One MR x NR f32 tile: rows `row_block * MR + r` (r < rows), panels `g * NP + p`;
        the epilogue writes its `columns` valid columns."""
        width = LANES * self.np
        tile_alloc = AllocOp(MemRefType(f32, [rows, width]), "local")
        tile_alloc.result.name_hint = "tile"
        tile = tile_alloc.result
        ops: list[Operation] = [tile_alloc]

        def row_of(r: SSAValue, o: list[Operation]) -> SSAValue:
            return self.affine(o, (row_block, self.mr), (r, 1))

        def init(r: SSAValue, body: list[Operation]) -> None:
            def lane(c: SSAValue, inner: list[Operation]) -> None:
                zero = arith.ConstantOp(FloatAttr(0.0, f32))
                inner.append(BlockOp(f"{self.name}.init", [], [tile],
                                     [zero, StoreOp(zero, tile, [r, c])], ["r", "c"]))

            body.append(self.loop(0, width, "c", "vectorized", lane))

        ops.append(self.loop(0, rows, "r", "unrolled", init))

        def update(k2: SSAValue, body: list[Operation]) -> None:
            def row(r: SSAValue, row_body: list[Operation]) -> None:
                def panel(p: SSAValue, panel_body: list[Operation]) -> None:
                    self.bf16_dot(
                        tile, lambda ji, o: [r, self.affine(o, (p, LANES), (ji, 1))],
                        a, lambda ki, o: [*(self.lead_zeros if a is self.gemm.a else []),
                                          row_of(r, o), self.affine(o, (k2, PAIR), (ki, 1))],
                        packed_b, lambda ji, ki, o: [
                            g, k2, p, self.affine(o, (ji, PAIR), (ki, 1))],
                        panel_body)

                row_body.append(self.loop(0, self.np, "p", "unrolled", panel))

            body.append(self.loop(0, rows, "r", "unrolled", row))

        ops.append(self.loop(0, self.k2, "k2", "serial", update))

        def epilogue(r: SSAValue, body: list[Operation]) -> None:
            def lane(c: SSAValue, inner: list[Operation]) -> None:
                o: list[Operation] = []
                i = row_of(r, o)
                j = self.affine(o, (g, width), (c, 1))
                value = LoadOp(tile, [r, c])
                o.append(value)
                writes = self.tail(i, j, value.result, o)
                reads = [tile]
                for op in o:
                    if isinstance(op, LoadOp) and op.memref not in reads:
                        reads.append(op.memref)
                inner.append(BlockOp(f"{self.name}.write", reads, writes, o, ["r", "c"]))

            body.append(self.loop(0, columns, "c", "vectorized", lane))

        ops.append(self.loop(0, rows, "r", "unrolled", epilogue))
        ops.append(DeallocOp(tile))
        return ops

