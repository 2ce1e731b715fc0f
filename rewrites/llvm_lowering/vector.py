"""`vector` -> `llvm` for 1-D vectors (MLIR's VectorToLLVM, the part dlc's CPU code uses), and
the vectorizer of `loop.for ... kind vectorized` (TVM's `VectorizeLoop`, MLIR's SuperVectorize).

Broadcasts become insertelement + shufflevector, `vector.bitcast` `llvm.bitcast`, `vector.fma`
the `llvm.fma` intrinsic,
reductions the `llvm.vector.reduce.*` intrinsics (float add/mul in order, as LLVM's intrinsics
without `reassoc` specify), loads and stores of N contiguous elements plain `llvm.load`/
`llvm.store`, `vector.maskedload`/`vector.maskedstore` the `llvm.masked.load`/`store`
intrinsics, and extract/insert at static positions and `vector.shuffle` lane shuffles.

`vectorize_loop` widens the body of a vectorized loop with constant bounds into these vector
ops (see `LoopVectorizer`): W lanes per vector (the target's vector bits over the widest element
type), straight-line vectors or a loop over vectors plus one narrower remainder vector; a loop
of runtime trip count with a constant bound on it (a split's partial tile) into masked vectors
(`vectorize_masked`).
`annotate_vector_alignment` proves the alignment of vector accesses (buffers from `loop.alloc`
are `alloc_alignment`-aligned; offsets from constants, loop steps and index arithmetic).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    IntrinsicOp,
    LoadOp,
    StoreOp,
    YieldOp,
)
from dlc.rewrites.llvm_lowering.bounds import BOUNDS_SITE_ATTR, bounds_checks
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    extract_lane,
    int_constant,
    intrinsic_suffix,
    is_float,
    lowered,
    lowered_operands,
    lowering_error,
    ops_append,
    replace_with_lowered,
    splat,
)
from dlc.rewrites.llvm_lowering.memref import element_address, memref_type_of
from dlc.rewrites.schedule.common import depends_on
from dlc.target.intrinsics import VPDPWSSD
from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    VectorType,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

REDUCTIONS: dict[str, tuple[str, str | None]] = {
    "add": ("llvm.vector.reduce.add", "llvm.vector.reduce.fadd"),
    "mul": ("llvm.vector.reduce.mul", "llvm.vector.reduce.fmul"),
    "and": ("llvm.vector.reduce.and", None),
    "or": ("llvm.vector.reduce.or", None),
    "xor": ("llvm.vector.reduce.xor", None),
    "minsi": ("llvm.vector.reduce.smin", None),
    "maxsi": ("llvm.vector.reduce.smax", None),
    "minui": ("llvm.vector.reduce.umin", None),
    "maxui": ("llvm.vector.reduce.umax", None),
    "minnumf": ("", "llvm.vector.reduce.fmin"),
    "maxnumf": ("", "llvm.vector.reduce.fmax"),
    "minimumf": ("", "llvm.vector.reduce.fminimum"),
    "maximumf": ("", "llvm.vector.reduce.fmaximum"),
}
"""vector.reduction kind -> (integer intrinsic, float intrinsic); "" or None: not defined."""

COMBINERS: dict[str, tuple[type[Operation] | str, type[Operation] | str | None]] = {
    "add": (llvm.AddOp, llvm.FAddOp),
    "mul": (llvm.MulOp, llvm.FMulOp),
    "and": (llvm.AndOp, None),
    "or": (llvm.OrOp, None),
    "xor": (llvm.XOrOp, None),
    "minsi": ("llvm.smin", None),
    "maxsi": ("llvm.smax", None),
    "minui": ("llvm.umin", None),
    "maxui": ("llvm.umax", None),
    "minnumf": ("", "llvm.minnum"),
    "maxnumf": ("", "llvm.maxnum"),
    "minimumf": ("", "llvm.minimum"),
    "maximumf": ("", "llvm.maximum"),
}
"""How a reduction's accumulator combines with the reduced value: an llvm op or an intrinsic."""


def _vector_type(op: Operation, value: SSAValue) -> VectorType:
    type_ = value.type
    if not isinstance(type_, VectorType) or type_.get_num_dims() != 1:
        raise lowering_error(op, f"expected a 1-D vector, found {type_}")
    return type_


@dataclass
class BroadcastLowering(RewritePattern):
    """`vector.broadcast` of a scalar -> insertelement + zero-mask shufflevector."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter) -> None:
        result_type = self.lowering.convert_type(_vector_type(op, op.vector))
        assert isinstance(result_type, VectorType)
        if isinstance(op.source.type, VectorType):
            raise lowering_error(op, f"expected a scalar source, found {op.source.type}")
        source = lowered(op.source, self.lowering, rewriter)
        ops = splat(source, result_type)
        replace_with_lowered(op, ops, ops[-1].results, rewriter)


@dataclass
class BitcastLowering(RewritePattern):
    """`vector.bitcast` (the same bits as another vector type) -> `llvm.bitcast`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BitcastOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.source, self.lowering, rewriter)
        cast = llvm.BitcastOp(source, self.lowering.convert_type(op.result.type))
        replace_with_lowered(op, [cast], cast.results, rewriter)


@dataclass
class FMALowering(RewritePattern):
    """`vector.fma` -> `llvm.intr.fma`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.FMAOp, rewriter: PatternRewriter) -> None:
        a, b, c = lowered_operands(op, self.lowering, rewriter)
        fma = llvm.FMAOp(a, b, c)
        replace_with_lowered(op, [fma], fma.results, rewriter)


@dataclass
class ReductionLowering(RewritePattern):
    """`vector.reduction` -> `llvm.vector.reduce.*`, then combined with the accumulator."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ReductionOp, rewriter: PatternRewriter) -> None:
        vector_type = self.lowering.convert_type(_vector_type(op, op.vector))
        assert isinstance(vector_type, VectorType)
        kind = op.kind.data.value
        floating = is_float(vector_type)
        name = REDUCTIONS[kind][1 if floating else 0]
        if not name:
            raise lowering_error(op, f"expected a reduction kind defined for {vector_type}")
        source = lowered(op.vector, self.lowering, rewriter)
        accumulator = lowered(op.acc, self.lowering, rewriter) if op.acc is not None else None
        element = vector_type.element_type
        ops: list[Operation] = []
        suffix = intrinsic_suffix(vector_type)
        if kind in ("add", "mul") and floating:
            if accumulator is None:
                neutral = -0.0 if kind == "add" else 1.0
                neutral_op = llvm.ConstantOp(FloatAttr(neutral, element), element)
                accumulator = ops_append(ops, neutral_op)
            ops.append(call_intrinsic(f"{name}.{suffix}", [accumulator, source], element))
            replace_with_lowered(op, ops, ops[-1].results, rewriter)
            return
        reduced = ops_append(ops, call_intrinsic(f"{name}.{suffix}", [source], element))
        if accumulator is not None:
            combiner = COMBINERS[kind][1 if floating else 0]
            assert combiner
            if isinstance(combiner, str):
                ops.append(
                    call_intrinsic(
                        f"{combiner}.{intrinsic_suffix(element)}", [accumulator, reduced], element
                    )
                )
            else:
                ops.append(combiner(accumulator, reduced))
        replace_with_lowered(op, ops, ops[-1].results, rewriter)


def _access_address(
    op: vector.LoadOp | vector.StoreOp | vector.MaskedLoadOp | vector.MaskedStoreOp,
    lowering: LLVMLowering, rewriter: PatternRewriter,
) -> tuple[MemRefType, list[SSAValue], list[Operation], SSAValue]:
    """The memref type, the lowered indices, and the ops computing the address of the first
    element a vector access touches, with that address."""
    memref_type = memref_type_of(op.base, op)
    base = lowered(op.base, lowering, rewriter)
    indices = [lowered(i, lowering, rewriter) for i in op.indices]
    ops, address = element_address(base, memref_type, indices, lowering, op)
    return memref_type, indices, ops, address


@dataclass
class LoadStoreLowering(RewritePattern):
    """`vector.load` / `vector.store` -> `llvm.load` / `llvm.store` of contiguous elements."""

    lowering: LLVMLowering

    op_types: ClassVar[tuple[type[Operation], ...]] = (vector.LoadOp, vector.StoreOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, vector.LoadOp | vector.StoreOp):
            return
        memref_type, indices, ops, address = _access_address(op, self.lowering, rewriter)
        moved = op.result.type if isinstance(op, vector.LoadOp) else op.vector.type
        ops = [*bounds_checks(op, memref_type, indices, moved, self.lowering), *ops]
        alignment = self.lowering.size_in_bytes(memref_type.get_element_type())
        if isinstance(op, vector.LoadOp):
            result_type = self.lowering.convert_type(_vector_type(op, op.result))
            load = llvm.LoadOp(address, result_type, alignment)
            replace_with_lowered(op, [*ops, load], load.results, rewriter)
            return
        _vector_type(op, op.vector)
        value = lowered(op.vector, self.lowering, rewriter)
        rewriter.replace(op, [*ops, llvm.StoreOp(value, address, alignment)], [])


@dataclass
class MaskedLoadStoreLowering(RewritePattern):
    """`vector.maskedload` / `vector.maskedstore` -> the `llvm.masked.load` /
    `llvm.masked.store` intrinsics at the first element's address (MLIR's VectorToLLVM): a lane
    whose mask bit is off is neither read nor written (a load's takes the pass-through value),
    so the vector may pass the buffer's end. The alignment is the op's `alignment` attribute,
    else the element's size. Not bounds-checked (`check-bounds`): which lanes are read is only
    known at run time."""

    lowering: LLVMLowering

    op_types: ClassVar[tuple[type[Operation], ...]] = (vector.MaskedLoadOp, vector.MaskedStoreOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, vector.MaskedLoadOp | vector.MaskedStoreOp):
            return
        memref_type, _, ops, address = _access_address(op, self.lowering, rewriter)
        attr = op.attributes.get(ALIGNMENT_ATTR)
        alignment = attr.value.data if isinstance(attr, IntegerAttr) else \
            self.lowering.size_in_bytes(memref_type.get_element_type()) or 1
        align = int_constant(alignment, i32)
        mask = lowered(op.mask, self.lowering, rewriter)
        if isinstance(op, vector.MaskedLoadOp):
            result_type = self.lowering.convert_type(_vector_type(op, op.result))
            passthru = lowered(op.pass_thru, self.lowering, rewriter)
            call = call_intrinsic(f"llvm.masked.load.{intrinsic_suffix(result_type)}.p0",
                                  [address, align.result, mask, passthru], result_type)
            replace_with_lowered(op, [*ops, align, call], call.results, rewriter)
            return
        value_type = self.lowering.convert_type(_vector_type(op, op.value_to_store))
        value = lowered(op.value_to_store, self.lowering, rewriter)
        call = call_intrinsic(f"llvm.masked.store.{intrinsic_suffix(value_type)}.p0",
                              [value, address, align.result, mask], None)
        rewriter.replace(op, [*ops, align, call], [])


def _static_lane(op: vector.ExtractOp | vector.InsertOp, vector_type: VectorType) -> int:
    positions = op.static_position.get_values()
    if op.dynamic_position or len(positions) != 1:
        raise lowering_error(op, f"expected one static position, found {list(positions)}")
    lane = positions[0]
    if not 0 <= lane < vector_type.element_count():
        raise lowering_error(op, f"expected a position within {vector_type}, found {lane}")
    return lane


@dataclass
class ExtractInsertLowering(RewritePattern):
    """`vector.extract` / `vector.insert` of one lane at a static position of a 1-D vector."""

    lowering: LLVMLowering

    op_types: ClassVar[tuple[type[Operation], ...]] = (vector.ExtractOp, vector.InsertOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, vector.ExtractOp):
            vector_type = _vector_type(op, op.vector)
            lane = _static_lane(op, vector_type)
            source = lowered(op.vector, self.lowering, rewriter)
            ops = extract_lane(source, lane)
            replace_with_lowered(op, ops, ops[-1].results, rewriter)
        elif isinstance(op, vector.InsertOp):
            vector_type = _vector_type(op, op.dest)
            lane = _static_lane(op, vector_type)
            if isinstance(op.source.type, VectorType):
                raise lowering_error(op, f"expected a scalar source, found {op.source.type}")
            source = lowered(op.source, self.lowering, rewriter)
            dest = lowered(op.dest, self.lowering, rewriter)
            position = int_constant(lane, i32)
            insert = llvm.InsertElementOp(dest, source, position)
            replace_with_lowered(op, [position, insert], insert.results, rewriter)


@dataclass
class ShuffleLowering(RewritePattern):
    """`vector.shuffle` of two 1-D vectors -> `llvm.shufflevector` (the same lanes)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ShuffleOp, rewriter: PatternRewriter) -> None:
        result_type = _vector_type(op, op.result)
        for value in (op.v1, op.v2):
            if len(_vector_type(op, value).get_shape()) != 1:
                raise lowering_error(op, f"expected 1-D vectors, found {value.type}")
        v1, v2 = lowered_operands(op, self.lowering, rewriter)
        mask = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
        shuffle = llvm.ShuffleVectorOp(v1, v2, mask, self.lowering.convert_type(result_type))
        replace_with_lowered(op, [shuffle], shuffle.results, rewriter)


def vector_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower the 1-D `vector` ops dlc's CPU code uses."""
    return [
        BroadcastLowering(lowering),
        BitcastLowering(lowering),
        FMALowering(lowering),
        ReductionLowering(lowering),
        LoadStoreLowering(lowering),
        MaskedLoadStoreLowering(lowering),
        ExtractInsertLowering(lowering),
        ShuffleLowering(lowering),
    ]



# ----------------------------------------------------------------------------------------------
# Vectorized loops: `loop.for ... kind vectorized` -> straight-line vector code
# ----------------------------------------------------------------------------------------------


class Unvectorizable(Exception):
    """The body of a vectorized loop holds something this vectorizer does not widen (the loop is
    then lowered as a serial loop, which is always correct)."""


@dataclass(frozen=True)
class Uniform:
    """A value that is the same in every lane: the scalar itself."""

    value: SSAValue


@dataclass(frozen=True)
class Affine:
    """An `index` value that is `base + lane * stride` in lane `lane` (`base` is uniform and a
    known multiple of `align`)."""

    base: SSAValue
    stride: int
    align: int = 1


@dataclass(frozen=True)
class Repeated:
    """An `index` value that is `base + lane // factor` in lane `lane` (`base` is uniform): a
    contiguous index divided by a constant that divides its first lane's (a nearest
    upsampling's `o floordiv 2`), each element repeated `factor` times."""

    base: SSAValue
    factor: int


@dataclass(frozen=True)
class Varying:
    """A value that differs between lanes: a `vector<W x T>` holding lane `l` at position `l`."""

    value: SSAValue


@dataclass(frozen=True)
class Private:
    """A `loop.alloc local` made inside the vectorized loop: one copy per lane, kept as one
    buffer with an extra innermost dimension of W lanes (so lane-invariant accesses to it are
    contiguous vector accesses)."""

    buffer: SSAValue


Lanes = Uniform | Affine | Repeated | Varying | Private
"""What one scalar value of the loop body is across the W lanes of a vector iteration."""


@dataclass(frozen=True)
class Mask:
    """The lanes of a masked vector that run: the first `active` (an `index`, 0 or less in a
    vector past the loop's end), and their `vector<W x i1>`."""

    active: SSAValue
    value: SSAValue


def known_multiple(value: SSAValue, depth: int = 0) -> int:
    """A positive integer that `value` (an `index`) is known to be a multiple of (1 if none);
    0 is reported as a large power of two."""

    if depth > 16:
        return 1
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        constant = abs(owner.value.value.data)
        return constant if constant else 1 << 20
    if isinstance(owner, arith.SubiOp) and isinstance(owner.rhs.owner, arith.RemUIOp) and \
            owner.rhs.owner.lhs is owner.lhs:  # x - x % c: the whole tiles of a peeled loop
        divisor = known_constant(owner.rhs.owner.rhs)
        if divisor:
            return abs(divisor)
    if isinstance(owner, arith.AddiOp | arith.SubiOp):
        return math.gcd(known_multiple(owner.lhs, depth + 1), known_multiple(owner.rhs, depth + 1))
    if isinstance(owner, arith.MuliOp):
        return known_multiple(owner.lhs, depth + 1) * known_multiple(owner.rhs, depth + 1)
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, ForOp) and value is loop.induction_var:
            lb, step = loop.lb, loop.step
            return math.gcd(known_multiple(lb, depth + 1), known_multiple(step, depth + 1))
    return 1


def access_alignment(
    memref: SSAValue, indices: Sequence[SSAValue], access_bytes: int, lowering: LLVMLowering
) -> int:
    """The byte alignment provable for an access of `access_bytes` at `memref[indices]`.

    A buffer made by `loop.alloc` is aligned to the lowering's `alloc_alignment`; any other
    buffer only to its element size. The element offset's known multiple (from constants, loop
    steps and index arithmetic) then bounds the alignment of the address.
    """

    memref_type = memref.type
    assert isinstance(memref_type, MemRefType)
    element_bytes = lowering.size_in_bytes(memref_type.get_element_type()) or 1
    if not isinstance(memref.owner, AllocOp):
        return element_bytes
    shape = memref_type.get_shape()
    strides = [math.prod(shape[dim + 1:]) for dim in range(len(shape))]
    multiple = 0
    for index, stride in zip(indices, strides, strict=True):
        multiple = math.gcd(multiple, known_multiple(index) * stride)
    offset_bytes = (multiple or 1 << 20) * element_bytes
    alignment = math.gcd(offset_bytes, lowering.alloc_alignment)
    while alignment > access_bytes or access_bytes % alignment:
        alignment //= 2
    return max(alignment, element_bytes)


ALIGNMENT_ATTR = "alignment"
"""The discardable attribute of a `loop.load`/`loop.store` giving its provable byte alignment."""


def annotate_vector_alignment(root: Operation, lowering: LLVMLowering) -> None:
    """Give every vector `loop.load`/`loop.store` under `root` without an `alignment` attribute
    the alignment `access_alignment` proves (run before the loops are lowered, while loop
    bounds and index arithmetic are still visible)."""
    for op in root.walk():
        if not isinstance(op, LoadOp | StoreOp) or ALIGNMENT_ATTR in op.attributes:
            continue
        value_type = op.result.type if isinstance(op, LoadOp) else op.value.type
        if not isinstance(value_type, VectorType):
            continue
        size = lowering.size_in_bytes(value_type) or 1
        alignment = access_alignment(op.memref, list(op.indices), size, lowering)
        op.attributes[ALIGNMENT_ATTR] = IntegerAttr(alignment, i64)


OPERAND_MULTIPLES_ATTR = "dlc.operand_multiples"
"""On an `arith.addi`/`arith.subi` of `index`s inside a vectorized loop: a known multiple of
each operand (`known_multiple`; 1 for one the loop defines), recorded by
`annotate_operand_multiples` while the loops around are still `loop.for`s."""


def annotate_operand_multiples(root: Operation) -> None:
    """Record on the index additions inside each vectorized loop under `root` what their
    operands defined outside it are known multiples of (`OPERAND_MULTIPLES_ATTR`): once the
    loops around are lowered, a tile loop's induction variable is a bare block argument, and
    `LoopVectorizer` could no longer see that `tile + lane` starts at a multiple of the tile's
    step - which a nearest upsampling's `(tile + lane) / 2` needs to read one narrower vector
    and repeat its lanes by a shuffle rather than gather 16 scalars (the runtime rows of the
    YOLO-style detector's upsample, tiled by 16: 2.6x its static compile gathering)."""
    for loop in root.walk():
        if not isinstance(loop, ForOp) or loop.kind.data != "vectorized":
            continue
        for op in loop.body.walk():
            if not isinstance(op, arith.AddiOp | arith.SubiOp) or \
                    not isinstance(op.result.type, IndexType):
                continue
            multiples = [known_multiple(value) if _defined_outside(value, loop) else 1
                         for value in op.operands]
            if max(multiples) > 1:
                op.attributes[OPERAND_MULTIPLES_ATTR] = DenseArrayBase.from_list(i64, multiples)


def _defined_outside(value: SSAValue, loop: ForOp) -> bool:
    """Whether `value` is defined outside `loop` (not by an op in it, nor by its blocks)."""
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    return op is not None and not loop.is_ancestor(op)


LANE_PRIVATE_ATTR = "dlc.lane_private"
"""On a `loop.alloc local`: its lanes past a masked loop's trip count are never read for a
result (`annotate_lane_private`)."""


def annotate_lane_private(root: Operation) -> None:
    """Mark with `dlc.lane_private` each `loop.alloc local` (a tile's accumulators) whose every
    load and store is in a vectorized loop from 0 to one runtime upper bound (the same SSA
    value for all: a split's partial tile, `minui(16, n - i)`) bounded by the buffer's static
    last dim, indexed last by that loop's induction variable: element `l` is then only ever
    touched by iteration `l` of loops of one trip count, so the masked vectors
    (`vectorize_masked`) may leave garbage in its lanes past the trip count (no lane reads
    another's) and store to it without blending in the old values - the accumulator chain of
    a masked tile without an extra select (a max-pool's window: 15% of its time)."""
    for alloc in root.walk():
        if not isinstance(alloc, AllocOp) or alloc.scope.data != "local":
            continue
        shape = alloc.result.type.get_shape()  # type: ignore[union-attr]
        if not shape or shape[-1] == DYNAMIC_INDEX:
            continue
        bound: SSAValue | None = None
        private = True
        for use in alloc.result.uses:
            user = use.operation
            if isinstance(user, BlockOp | DeallocOp):
                continue
            loop = user.parent_op()
            while loop is not None and not isinstance(loop, ForOp):
                loop = loop.parent_op()
            if not isinstance(user, LoadOp | StoreOp) or user.memref is not alloc.result or \
                    not isinstance(loop, ForOp) or loop.kind.data != "vectorized" or \
                    loop.trip_count() is not None or loop.trip_bound() != shape[-1] or \
                    known_constant(loop.lb) != 0 or user.indices[-1] is not loop.induction_var \
                    or (bound is not None and loop.ub is not bound):
                private = False
                break
            bound = loop.ub
        if private and bound is not None:
            alloc.attributes[LANE_PRIVATE_ATTR] = UnitAttr()


def integer_range(value: SSAValue, depth: int = 0) -> tuple[int, int] | None:
    """Bounds (lowest, highest) of a scalar integer `value` that its definition proves: an
    extension of a narrower integer, a constant, or a sum or difference of such; else None."""
    if depth > 8:
        return None
    owner = value.owner
    if isinstance(owner, arith.ExtSIOp | arith.ExtUIOp):
        source = owner.input.type
        if not isinstance(source, IntegerType):
            return None
        bits = source.width.data
        if isinstance(owner, arith.ExtSIOp):
            return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return 0, (1 << bits) - 1
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        constant = owner.value.value.data
        return constant, constant
    if isinstance(owner, arith.AddiOp | arith.SubiOp):
        lhs = integer_range(owner.lhs, depth + 1)
        rhs = integer_range(owner.rhs, depth + 1)
        if lhs is None or rhs is None:
            return None
        if isinstance(owner, arith.AddiOp):
            return lhs[0] + rhs[0], lhs[1] + rhs[1]
        return lhs[0] - rhs[1], lhs[1] - rhs[0]
    return None


def _fits_16_bits(bounds: tuple[int, int] | None) -> bool:
    return bounds is not None and -(1 << 15) <= bounds[0] and bounds[1] < (1 << 15)


class LoopVectorizer:
    """Widens the body of one `loop.for` of kind `vectorized` into vector operations.

    Each scalar value of the body becomes `Uniform`, `Affine` (index arithmetic that moves by a
    constant stride per lane), `Repeated` (a contiguous index divided by a constant that divides
    its first lane's and the width) or `Varying` (a vector). Loads and stores whose last index is
    affine with stride 1 and whose other indices are uniform become vector loads and stores
    (`loop.load ... -> vector<W x T>`); loads whose last index moves by 2-4 elements per lane
    are read as contiguous vectors and shuffled (`emit_strided_load`); loads whose last index is
    `Repeated` read the `width / factor` elements as one narrower vector and repeat each lane
    by a shuffle (`emit_repeated_load`); loads at uniform indices
    stay scalar and are broadcast where a vector needs them; an inner loop of W iterations that
    only copies `dst[..., k, l] = src[..., l, k]` is a W x W transpose in registers
    (`widen_transposed_copy`); other accesses are gathered or scattered lane by lane. A
    `arith.mulf` whose only user is an `arith.addf` is contracted into `vector.fma`; an i32
    `arith.muli` of factors that fit in 16 bits (`integer_range`: extensions of bytes, zero
    points subtracted) whose only user is an `arith.addi` becomes one `vpdpwssd` per 16 lanes
    on a target with `avx512vnni` (`pair_dot`: an int8 depthwise conv's multiply-accumulate,
    one instruction instead of `vpmulld`'s two and an add). Nested
    `loop.block`s are inlined; nested loops with uniform bounds keep running, with a widened
    body; a `loop.alloc local` inside becomes one buffer with a trailing dimension of W lanes.
    """

    def __init__(self, loop: ForOp, lowering: LLVMLowering) -> None:
        self.loop = loop
        self.lowering = lowering
        self.frames: list[tuple[Block, dict[tuple[SSAValue, int], SSAValue]]] = []
        self.constants: dict[int, SSAValue] = {}
        self.prologue = Block()
        self.fusable: dict[SSAValue, arith.MulfOp | arith.MuliOp] = {}
        self.pair_dots: dict[SSAValue, arith.MulfOp | arith.MuliOp] = {}
        """Widened i32 products of 16-bit factors that an add accumulates (`pair_dot`)."""
        self.site: Attribute | None = None
        """The `dlc.bounds_site` of the access being widened, copied onto what it becomes."""
        self.mask: Mask | None = None
        """In a loop of runtime trip count, the lanes of the vector being widened that run."""

    # -- emission ------------------------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue | None:
        if isinstance(op, LoadOp | StoreOp) and self.site is not None:
            op.attributes[BOUNDS_SITE_ATTR] = self.site
        self.frames[-1][0].add_op(op)
        return op.results[0] if op.results else None

    def emit_value(self, op: Operation) -> SSAValue:
        value = self.emit(op)
        assert value is not None
        return value

    def index(self, value: int) -> SSAValue:
        constant = self.constants.get(value)
        if constant is None:
            op = arith.ConstantOp(IntegerAttr(value, IndexType()))
            self.prologue.add_op(op)
            constant = self.constants[value] = op.result
        return constant

    def add(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        if known_constant(rhs) == 0:
            return lhs
        if known_constant(lhs) == 0:
            return rhs
        return self.emit_value(arith.AddiOp(lhs, rhs))

    def mul(self, lhs: SSAValue, factor: int) -> SSAValue:
        if factor == 1:
            return lhs
        return self.emit_value(arith.MuliOp(lhs, self.index(factor)))

    def broadcast(self, value: SSAValue, width: int) -> SSAValue:
        key = (value, width)
        for _, cache in reversed(self.frames):
            if key in cache:
                return cache[key]
        result = self.emit_value(vector.BroadcastOp(value, VectorType(value.type, [width])))
        self.frames[-1][1][key] = result
        return result

    def as_vector(self, lanes: Lanes, width: int) -> SSAValue:
        """The lanes as one vector value."""
        if isinstance(lanes, Varying):
            return lanes.value
        if isinstance(lanes, Uniform):
            return self.broadcast(lanes.value, width)
        if isinstance(lanes, Affine | Repeated):
            offsets = [lane * lanes.stride if isinstance(lanes, Affine) else lane // lanes.factor
                       for lane in range(width)]
            base = self.broadcast(lanes.base, width)
            steps = arith.ConstantOp(
                DenseIntOrFPElementsAttr.from_list(VectorType(IndexType(), [width]), offsets)
            )
            self.prologue.add_op(steps)
            return self.emit_value(arith.AddiOp(base, steps.result))
        raise Unvectorizable("a per-lane buffer used as a value")

    def lane_scalar(self, lanes: Lanes, lane: int) -> SSAValue:
        """The scalar value of one lane."""
        if isinstance(lanes, Uniform):
            return lanes.value
        if isinstance(lanes, Affine):
            return self.add(lanes.base, self.index(lane * lanes.stride))
        if isinstance(lanes, Repeated):
            return self.add(lanes.base, self.index(lane // lanes.factor))
        if isinstance(lanes, Varying):
            vector_type = lanes.value.type
            assert isinstance(vector_type, VectorType)
            return self.emit_value(
                vector.ExtractOp(lanes.value, [lane], vector_type.element_type)
            )
        raise Unvectorizable("a per-lane buffer used as a value")

    def lane_mask(self, active: SSAValue, width: int) -> SSAValue:
        """`vector<width x i1>` whose lane `l` is on when `l < active` (signed: none when
        `active` is 0 or less)."""
        count = self.emit_value(arith.IndexCastOp(active, i32))
        iota = arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(VectorType(i32, [width]), list(range(width)))
        )
        self.prologue.add_op(iota)
        scalar = arith.CmpiOp(iota.result, self.broadcast(count, width), "slt")
        compare = arith.CmpiOp.create(operands=scalar.operands,
                                      result_types=[VectorType(IntegerType(1), [width])],
                                      properties=dict(scalar.properties))
        scalar.erase()
        return self.emit_value(compare)

    def access_mask(self, memref: SSAValue, indices: list[SSAValue], width: int,
                    store: bool) -> SSAValue | None:
        """The mask a contiguous access of `width` lanes at `memref[indices]` takes in a masked
        vector: the lanes that run, unless every lane's element lies inside the buffer's static
        last dimension (the first lane's index a known constant: a tile's accumulator), where
        a load reads every lane and a store blends (`emit_vector_store`) - for a store only into
        a `loop.alloc local` made inside the loops around (a thread's own scratch). None
        outside a masked vector or for such in-bounds accesses."""
        if self.mask is None:
            return None
        memref_type = memref.type
        assert isinstance(memref_type, MemRefType)
        shape = memref_type.get_shape()
        first = known_constant(indices[-1]) if indices else None
        inside = bool(shape) and shape[-1] != DYNAMIC_INDEX and first is not None and \
            0 <= first and first + width <= shape[-1]
        if inside and (not store or self._own_scratch(memref)):
            return None
        if self.lowering.storage_type(memref_type.get_element_type()) != \
                self.lowering.convert_type(memref_type.get_element_type()):
            raise Unvectorizable(f"a masked access to {memref_type}")
        return self.mask.value

    def _own_scratch(self, memref: SSAValue) -> bool:
        """Whether `memref` is a `loop.alloc local` with no parallel loop between it and the
        vectorized loop (each thread has its own)."""
        alloc = memref.owner
        if not isinstance(alloc, AllocOp) or alloc.scope.data != "local":
            return False
        parent = self.loop.parent_op()
        while parent is not None and parent is not alloc.parent_op():
            if isinstance(parent, ForOp) and parent.kind.data == "parallel":
                return False
            parent = parent.parent_op()
        return parent is not None

    def require_unmasked(self, what: str) -> None:
        """Lane-by-lane accesses are not masked: a masked vector with one fails."""
        if self.mask is not None:
            raise Unvectorizable(f"{what} in a vector of runtime lanes")

    # -- driver --------------------------------------------------------------------------------

    def widen_chunk(
        self, body_ops: Sequence[Operation], base: SSAValue, width: int, target: Block,
        align: int = 1,
    ) -> None:
        """Emit into `target` the body for lanes `base + l * step`, `l < width`, `base` a known
        multiple of `align`."""
        step = known_constant(self.loop.step)
        assert step is not None
        env: dict[SSAValue, Lanes] = {self.loop.induction_var: Affine(base, step, align)}
        self.frames.append((target, {}))
        self.widen_ops(body_ops, env, width)
        self.frames.pop()

    def widen_ops(
        self, ops: Iterable[Operation], env: dict[SSAValue, Lanes], width: int
    ) -> None:
        for op in ops:
            self.widen_op(op, env, width)

    def lanes_of(self, value: SSAValue, env: dict[SSAValue, Lanes]) -> Lanes:
        return env.get(value, Uniform(value))

    def widen_op(self, op: Operation, env: dict[SSAValue, Lanes], width: int) -> None:

        if isinstance(op, YieldOp):
            return
        if isinstance(op, BlockOp):
            self.widen_ops(op.body.block.ops, env, width)
            return
        if isinstance(op, ForOp):
            self.widen_loop(op, env, width)
            return
        if isinstance(op, LoadOp | StoreOp):
            self.site = op.attributes.get(BOUNDS_SITE_ATTR)
            if isinstance(op, LoadOp):
                self.widen_load(op, env, width)
            else:
                self.widen_store(op, env, width)
            self.site = None
            return
        if isinstance(op, AllocOp):
            self.widen_alloc(op, env, width)
            return
        if isinstance(op, DeallocOp):
            lanes = self.lanes_of(op.memref, env)
            buffer = lanes.buffer if isinstance(lanes, Private) else op.memref
            if not isinstance(lanes, Private | Uniform):
                raise Unvectorizable("dealloc of a varying buffer")
            self.emit(DeallocOp(buffer))
            return
        if op.regions or op.successors or not (is_side_effect_free(op)
                                               or _divides_by_nonzero_constant(op)):
            raise Unvectorizable(f"'{op.name}' in the body")
        self.widen_pure(op, env, width)

    def widen_loop(self, op: ForOp, env: dict[SSAValue, Lanes], width: int) -> None:
        if self.mask is None and self.widen_transposed_copy(op, env, width):
            return
        bounds = [self.lanes_of(value, env) for value in op.operands]
        if not all(isinstance(bound, Uniform) for bound in bounds):
            raise Unvectorizable(f'loop "{op.axis.data}" with bounds that differ between lanes')
        kind = "serial" if op.kind.data == "vectorized" else op.kind.data
        lb, ub, step = (bound.value for bound in bounds)  # type: ignore[union-attr]
        block = Block(arg_types=[IndexType()])
        block.args[0].name_hint = op.induction_var.name_hint
        inner_env = dict(env)
        inner_env[op.induction_var] = Uniform(block.args[0])
        self.frames.append((block, {}))
        self.widen_ops(op.body.block.ops, inner_env, width)
        self.frames.pop()
        block.add_op(YieldOp())
        self.emit(ForOp(lb, ub, step, block, op.axis, kind, op.thread, op.annotations))

    def widen_transposed_copy(self, op: ForOp, env: dict[SSAValue, Lanes], width: int) -> bool:
        """Widen `op`, an inner loop `kk` of `width` iterations (a power of two) whose body only
        copies `dst[..., ll] = src[..., kk]` (one load, one store of the loaded value, index
        arithmetic) where the lanes `ll` pick the rows of `src` and `kk` walks its last index
        by one, and `dst`'s last index is contiguous in the lanes: a transpose of a
        `width` x `width` block (a channel-last pack). It becomes `width` contiguous row loads
        (one per lane), a `log2(width)`-stage shuffle network (`transpose_rows`) and `width`
        contiguous stores, where widening lane by lane would read `width`^2 scalars. Returns
        False, emitting no access (at most index arithmetic nothing uses), when `op` is not
        such a copy."""
        if width < 2 or width & (width - 1) or op.constant_bounds() != (0, width, 1):
            return False
        copy = _copy_walking_by_one(op)
        if copy is None:
            return False
        load, store, pure = copy
        kk = op.induction_var
        memref_lanes = [self.lanes_of(buffer, env) for buffer in (load.memref, store.memref)]
        if not all(isinstance(lanes, Uniform) for lanes in memref_lanes):
            return False

        def indices_at(access: LoadOp | StoreOp, step: int) -> list[Lanes]:
            point = dict(env)
            point[kk] = Uniform(self.index(step))
            for nested in pure:
                self.widen_pure(nested, point, width)
            return [self.lanes_of(index, point) for index in access.indices]

        vector_type = VectorType(load.result.type, [width])
        first = indices_at(load, 0)  # each lane's row starts at its own scalar index: a
        # linearized buffer's (runtime strides) lanes differ in the last index too
        targets = [indices_at(store, step) for step in range(width)]
        contiguous = [self._contiguous(indices) for indices in targets]
        if any(indices is None for indices in contiguous):
            return False
        self.site = load.attributes.get(BOUNDS_SITE_ATTR)
        rows = [
            self.emit_vector_load(load.memref, [self.lane_scalar(index, lane) for index in first],
                                  vector_type)
            for lane in range(width)
        ]
        self.site = store.attributes.get(BOUNDS_SITE_ATTR)
        for indices, column in zip(contiguous, self.transpose_rows(rows, vector_type),
                                   strict=True):
            assert indices is not None
            self.emit_vector_store(column, store.memref, indices)
        self.site = None
        return True

    def transpose_rows(self, rows: list[SSAValue], vector_type: VectorType) -> list[SSAValue]:
        """The columns of the square matrix whose rows are `rows` (a power of two of them): one
        stage per bit `d` of the position swaps that bit between the row and the lane index,
        two two-source shuffles per pair of rows `j`, `j | d` (W log2 W shuffles in all)."""
        width = len(rows)
        rows = list(rows)
        d = 1
        while d < width:
            for low in range(width):
                if low & d:
                    continue
                high = low | d
                # lane i of the new low row: i's bit d clear -> low[i], set -> high[i ^ d];
                # of the new high row: clear -> low[i | d], set -> high[i].
                low_mask = [i if not i & d else width + (i ^ d) for i in range(width)]
                high_mask = [i | d if not i & d else width + i for i in range(width)]
                low_row = self.shuffle(rows[low], rows[high], low_mask, vector_type)
                rows[high] = self.shuffle(rows[low], rows[high], high_mask, vector_type)
                rows[low] = low_row
            d *= 2
        return rows

    def widen_alloc(self, op: Operation, env: dict[SSAValue, Lanes], width: int) -> None:

        assert isinstance(op, AllocOp)
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        if op.scope.data != "local":
            raise Unvectorizable("a non-local allocation in the body")
        widened = MemRefType(memref_type.get_element_type(), [*memref_type.get_shape(), width])
        new_op = AllocOp(widened, "local")
        self.emit(new_op)
        env[op.result] = Private(new_op.result)

    def _private_indices(self, indices: list[Lanes]) -> list[SSAValue] | None:
        if all(isinstance(index, Uniform) for index in indices):
            return [index.value for index in indices]  # type: ignore[union-attr]
        return None

    def widen_load(self, op: Operation, env: dict[SSAValue, Lanes], width: int) -> None:

        assert isinstance(op, LoadOp)
        if isinstance(op.result.type, VectorType):
            raise Unvectorizable("a vector load in the body")
        element = op.result.type
        memref = self.lanes_of(op.memref, env)
        indices = [self.lanes_of(index, env) for index in op.indices]
        vector_type = VectorType(element, [width])
        if isinstance(memref, Private):
            uniform = self._private_indices(indices)
            if uniform is not None:
                env[op.results[0]] = Varying(
                    self.emit_vector_load(memref.buffer, [*uniform, self.index(0)], vector_type)
                )
                return
            self.require_unmasked("a gather from a per-lane buffer")
            lanes = [
                self.emit_value(LoadOp(memref.buffer, [
                    *[self.lane_scalar(index, lane) for index in indices], self.index(lane)
                ]))
                for lane in range(width)
            ]
            env[op.results[0]] = Varying(self.build_vector(lanes, vector_type))
            return
        if not isinstance(memref, Uniform):
            raise Unvectorizable("a load from a varying buffer")
        if all(isinstance(index, Uniform) for index in indices):
            scalar = self.emit_value(
                LoadOp(memref.value, [index.value for index in indices])  # type: ignore[union-attr]
            )
            env[op.results[0]] = Uniform(scalar)
            return
        contiguous = self._contiguous(indices)
        if contiguous is not None:
            mask = self.access_mask(memref.value, contiguous, width, store=False)
            env[op.results[0]] = Varying(
                self.emit_vector_load(memref.value, contiguous, vector_type, mask)
            )
            return
        repeated = self._repeated(indices, width)
        if repeated is not None:
            outer, base, factor = repeated
            env[op.results[0]] = Varying(
                self.emit_repeated_load(memref.value, outer, base, factor, vector_type)
            )
            return
        strided = self._strided(indices)
        if strided is not None and width > 1:
            outer, base, stride = strided
            env[op.results[0]] = Varying(
                self.emit_strided_load(memref.value, outer, base, stride, vector_type)
            )
            return
        self.require_unmasked("a gather")
        lanes = [
            self.emit_value(
                LoadOp(memref.value, [self.lane_scalar(index, lane) for index in indices])
            )
            for lane in range(width)
        ]
        env[op.results[0]] = Varying(self.build_vector(lanes, vector_type))

    def _contiguous(self, indices: list[Lanes]) -> list[SSAValue] | None:
        """The indices of lane 0 if the access is contiguous in the lanes, else None."""
        if not indices:
            return None
        *outer, last = indices
        if not all(isinstance(index, Uniform) for index in outer):
            return None
        if not isinstance(last, Affine) or last.stride != 1:
            return None
        return [*(index.value for index in outer), last.base]  # type: ignore[union-attr]

    def _strided(self, indices: list[Lanes]) -> tuple[list[SSAValue], SSAValue, int] | None:
        """(outer indices, lane 0's last index, stride) of an access whose last index moves by
        2..`MAX_SHUFFLED_STRIDE` elements per lane and whose other indices are uniform."""
        if not indices:
            return None
        *outer, last = indices
        if not all(isinstance(index, Uniform) for index in outer):
            return None
        if not isinstance(last, Affine) or not 2 <= last.stride <= MAX_SHUFFLED_STRIDE:
            return None
        return [index.value for index in outer], last.base, last.stride  # type: ignore[union-attr]

    def _repeated(self, indices: list[Lanes], width: int
                  ) -> tuple[list[SSAValue], SSAValue, int] | None:
        """(outer indices, lane 0's last index, factor) of an access whose last index is
        `Repeated` over whole groups of lanes and whose other indices are uniform."""
        if not indices:
            return None
        *outer, last = indices
        if not all(isinstance(index, Uniform) for index in outer):
            return None
        if not isinstance(last, Repeated) or width % last.factor or width == last.factor:
            return None
        return [index.value for index in outer], last.base, last.factor  # type: ignore[union-attr]

    def emit_repeated_load(
        self, memref: SSAValue, outer: list[SSAValue], base: SSAValue, factor: int,
        vector_type: VectorType,
    ) -> SSAValue:
        """Lanes `base + l // factor` of a row: the `width / factor` elements they read, as one
        narrower vector load, each repeated `factor` times by one shuffle (a nearest 2x
        upsampling's row: 8 elements loaded, `vpermps` to 16 lanes)."""
        width = vector_type.get_shape()[0]
        narrow = VectorType(vector_type.element_type, [width // factor])
        mask = self.access_mask(memref, [*outer, base], width // factor, store=False)
        if mask is not None:  # the elements of the lanes that run: ceil(active / factor)
            assert self.mask is not None
            rounded = self.add(self.mask.active, self.index(factor - 1))
            elements = self.emit_value(arith.DivSIOp(rounded, self.index(factor)))
            mask = self.lane_mask(elements, width // factor)
        part = self.emit_vector_load(memref, [*outer, base], narrow, mask)
        mask = [lane // factor for lane in range(width)]
        return self.emit_value(vector.ShuffleOp(
            part, part, DenseArrayBase.from_list(i64, mask), result_type=vector_type
        ))

    def emit_strided_load(
        self, memref: SSAValue, outer: list[SSAValue], base: SSAValue, stride: int,
        vector_type: VectorType,
    ) -> SSAValue:
        """Lanes `base + l * stride` of a row: the elements from the first lane's to the last
        lane's, read by `stride` contiguous vector loads that stay inside that span (the last
        one ends at the last lane's element: nothing outside what the scalar loads read), then
        picked by `stride - 1` two-source shuffles (LLVM's interleaved-access form: one
        `vpermt2ps` each on AVX-512) instead of a load and an insert per lane."""
        width = vector_type.get_shape()[0]
        span = stride * (width - 1) + 1
        offsets = [min(j * width, span - width) for j in range(-(-span // width))]
        parts = [
            self.emit_vector_load(memref, [*outer, self.add(base, self.index(offset))],
                                  vector_type, self.strided_part_mask(stride, offset, width))
            for offset in offsets
        ]
        sources: list[tuple[int, int]] = []  # (part, position in it) of each lane
        for lane in range(width):
            element = lane * stride
            part = next(j for j, o in enumerate(offsets) if o <= element < o + width)
            sources.append((part, element - offsets[part]))
        # Fold the parts in order: after merging part j, every lane taken from parts <= j holds
        # its element; the other lanes hold placeholders that later shuffles overwrite.
        first = [p + width if j == 1 else p if j == 0 else 0 for j, p in sources]
        result = self.shuffle(parts[0], parts[1], first, vector_type)
        for j in range(2, len(parts)):
            mask = [p + width if k == j else lane for lane, (k, p) in enumerate(sources)]
            result = self.shuffle(result, parts[j], mask, vector_type)
        return result

    def strided_part_mask(self, stride: int, offset: int, width: int) -> SSAValue | None:
        """In a masked vector, the mask of a strided load's part read from `offset` elements
        after the first lane's: its elements up to the last running lane's,
        `stride * (active - 1)`."""
        if self.mask is None:
            return None
        span = self.emit_value(arith.MuliOp(self.mask.active, self.index(stride)))
        limit = self.emit_value(arith.SubiOp(span, self.index(stride - 1 + offset)))
        return self.lane_mask(limit, width)

    def shuffle(self, v1: SSAValue, v2: SSAValue, mask: list[int], vector_type: VectorType
                ) -> SSAValue:
        return self.emit_value(vector.ShuffleOp(
            v1, v2, DenseArrayBase.from_list(i64, mask), result_type=vector_type
        ))

    def emit_vector_load(
        self, memref: SSAValue, indices: list[SSAValue], vector_type: VectorType,
        mask: SSAValue | None = None,
    ) -> SSAValue:
        """A vector load; with `mask`, a `vector.maskedload` whose lanes off read nothing
        (zero)."""
        if mask is None:
            load: Operation = LoadOp(memref, indices, vector_type)
        else:
            zero = 0.0 if is_float(vector_type.element_type) else 0
            passthru = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(vector_type, [zero]))
            self.prologue.add_op(passthru)
            load = vector.MaskedLoadOp(memref, indices, mask, passthru.result, vector_type)
        self._set_alignment(load, memref, indices, vector_type)
        return self.emit_value(load)

    def _set_alignment(
        self, op: Operation, memref: SSAValue, indices: list[SSAValue], vector_type: VectorType
    ) -> None:
        size = self.lowering.size_in_bytes(vector_type) or 1
        alignment = access_alignment(memref, indices, size, self.lowering)
        op.attributes[ALIGNMENT_ATTR] = IntegerAttr(alignment, i64)

    def build_vector(self, lanes: list[SSAValue], vector_type: VectorType) -> SSAValue:
        result = self.emit_value(vector.BroadcastOp(lanes[0], vector_type))
        for lane, scalar in enumerate(lanes[1:], start=1):
            result = self.emit_value(vector.InsertOp(scalar, result, [lane], vector_type))
        return result

    def widen_store(self, op: Operation, env: dict[SSAValue, Lanes], width: int) -> None:

        assert isinstance(op, StoreOp)
        if isinstance(op.value.type, VectorType):
            raise Unvectorizable("a vector store in the body")
        value = self.lanes_of(op.value, env)
        memref = self.lanes_of(op.memref, env)
        indices = [self.lanes_of(index, env) for index in op.indices]
        if isinstance(memref, Private):
            uniform = self._private_indices(indices)
            if uniform is not None:
                vector_value = self.as_vector(value, width)
                self.emit_vector_store(vector_value, memref.buffer, [*uniform, self.index(0)])
                return
            self.require_unmasked("a scatter into a per-lane buffer")
            for lane in range(width):
                lane_indices = [self.lane_scalar(index, lane) for index in indices]
                self.emit(StoreOp(self.lane_scalar(value, lane), memref.buffer,
                                  [*lane_indices, self.index(lane)]))
            return
        if not isinstance(memref, Uniform):
            raise Unvectorizable("a store into a varying buffer")
        if all(isinstance(index, Uniform) for index in indices):
            if not isinstance(value, Uniform):
                # Every lane writes the same element: a reduction across lanes, which the
                # lanes' lock-step would get wrong.
                raise Unvectorizable("a store of a varying value to a lane-invariant element")
            self.emit(StoreOp(value.value, memref.value,
                              [index.value for index in indices]))  # type: ignore[union-attr]
            return
        contiguous = self._contiguous(indices)
        if contiguous is not None:
            self.emit_vector_store(self.as_vector(value, width), memref.value, contiguous,
                                   masked=self.mask is not None)
            return
        self.require_unmasked("a scatter")
        for lane in range(width):
            lane_indices = [self.lane_scalar(index, lane) for index in indices]
            self.emit(StoreOp(self.lane_scalar(value, lane), memref.value, lane_indices))

    def emit_vector_store(
        self, value: SSAValue, memref: SSAValue, indices: list[SSAValue], masked: bool = False
    ) -> None:
        """A vector store; `masked` (in a masked vector): a `vector.maskedstore` of the lanes
        that run, or, where `access_mask` finds every lane inside a thread's own scratch, the
        lanes off keeping the elements' old values (a load and a select: plain accesses, which
        let LLVM keep a tile's accumulators in registers) - all lanes stored where the buffer
        is `dlc.lane_private` (`annotate_lane_private`)."""
        vector_type = value.type
        assert isinstance(vector_type, VectorType)
        width = vector_type.get_shape()[0]
        mask = self.access_mask(memref, indices, width, store=True) if masked else None
        if mask is not None:
            store: Operation = vector.MaskedStoreOp(memref, indices, mask, value)
        else:
            owner = memref.owner
            lane_private = isinstance(owner, AllocOp) and LANE_PRIVATE_ATTR in owner.attributes
            if masked and not lane_private:
                assert self.mask is not None
                old = self.emit_vector_load(memref, indices, vector_type)
                value = self.emit_value(arith.SelectOp(self.mask.value, value, old))
            store = StoreOp(value, memref, indices)
        self._set_alignment(store, memref, indices, vector_type)
        self.emit(store)

    def widen_pure(self, op: Operation, env: dict[SSAValue, Lanes], width: int) -> None:
        operands = [self.lanes_of(value, env) for value in op.operands]
        if any(isinstance(operand, Private) for operand in operands):
            raise Unvectorizable(f"a per-lane buffer used by '{op.name}'")
        if all(isinstance(operand, Uniform) for operand in operands):
            clone = op.clone(
                value_mapper={v: o.value for v, o in zip(op.operands, operands, strict=True)
                              if isinstance(o, Uniform)}
            )
            self.emit(clone)
            for old, new in zip(op.results, clone.results, strict=True):
                env[old] = Uniform(new)
            return
        affine = self._affine(op, operands)
        if affine is not None:
            env[op.results[0]] = affine
            return
        repeated = self._repeated_index(op, operands, width) or self._shifted_repeated(op, operands)
        if repeated is not None:
            env[op.results[0]] = repeated
            return
        for value in (*op.operands, *op.results):
            if isinstance(value.type, VectorType | MemRefType):
                raise Unvectorizable(f"'{op.name}' on {value.type}")
        if isinstance(op, arith.AddfOp | arith.AddiOp) and self.contract(op, operands, env, width):
            return
        new_operands = [self.as_vector(operand, width) for operand in operands]
        result_types = [VectorType(result.type, [width]) for result in op.results]
        new_op = type(op).create(
            operands=new_operands,
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        self.emit(new_op)
        for old, new in zip(op.results, new_op.results, strict=True):
            env[old] = Varying(new)
        if isinstance(op, arith.MulfOp) and op.result.has_one_use():
            user = next(iter(op.result.uses)).operation
            if isinstance(user, arith.AddfOp):
                self.fusable[new_op.results[0]] = new_op  # type: ignore[assignment]
        if isinstance(op, arith.MuliOp) and self.pairs_in_16_bits(op, width):
            self.pair_dots[new_op.results[0]] = new_op  # type: ignore[assignment]

    def contract(self, op: arith.AddfOp | arith.AddiOp, operands: list[Lanes],
                 env: dict[SSAValue, Lanes], width: int) -> bool:
        """Widens an add of a product widened before into one fused operation: `vector.fma`
        for floats, `vpdpwssd` (`pair_dot`) for i32 products of 16-bit factors; returns
        whether it did."""
        products = self.fusable if isinstance(op, arith.AddfOp) else self.pair_dots
        for mul_side, other in ((0, 1), (1, 0)):
            product = operands[mul_side]
            if not isinstance(product, Varying) or product.value not in products:
                continue
            mul = products.pop(product.value)
            addend = self.as_vector(operands[other], width)
            mul.detach()
            if isinstance(op, arith.AddfOp):
                fused = self.emit_value(vector.FMAOp(mul.lhs, mul.rhs, addend))
            else:
                fused = self.pair_dot(addend, mul.lhs, mul.rhs)
            mul.erase()
            env[op.results[0]] = Varying(fused)
            return True
        return False

    def pairs_in_16_bits(self, op: arith.MuliOp, width: int) -> bool:
        """Whether `op` (scalar) is an i32 product of factors that fit in 16 bits whose only
        user is an `arith.addi`, widened to the lanes of `vpdpwssd` on a target that has it."""
        if op.result.type != i32 or width != VPDPWSSD.extents["j"]:
            return False
        if VPDPWSSD.missing_features(self.lowering.features):
            return False
        if not op.result.has_one_use():
            return False
        if not isinstance(next(iter(op.result.uses)).operation, arith.AddiOp):
            return False
        return all(_fits_16_bits(integer_range(factor)) for factor in (op.lhs, op.rhs))

    def pair_dot(self, accumulator: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """`accumulator + lhs * rhs` over i32 lanes whose factors fit in 16 bits, as one
        `vpdpwssd`: a lane of `lhs` is the pair (its value, its sign bits), the same lane of
        `rhs` with the high half cleared is (its value, 0), so the lane's pair dot is the
        product (no `vpmulld`, two uops, nor `vpmaddwd` and an add)."""
        width = VPDPWSSD.extents["j"]
        pairs = VectorType(i16, [2 * width])
        low_half = self.broadcast(self.emit_value(arith.ConstantOp(IntegerAttr(0xFFFF, i32))),
                                  width)
        cleared = self.emit_value(arith.AndIOp(rhs, low_half))
        return self.emit_value(IntrinsicOp(
            VPDPWSSD.name, accumulator, self.emit_value(vector.BitcastOp(lhs, pairs)),
            self.emit_value(vector.BitcastOp(cleared, pairs))))

    def _affine(self, op: Operation, operands: list[Lanes]) -> Affine | None:
        """The lanes of index arithmetic that stays affine in the lane, or None."""
        if not isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp):
            return None
        if not isinstance(op.result.type, IndexType):
            return None
        lhs, rhs = operands
        if not all(isinstance(x, Uniform | Affine) for x in operands):
            return None
        if isinstance(op, arith.MuliOp):
            for scaled, factor in ((lhs, rhs), (rhs, lhs)):
                if isinstance(scaled, Affine) and isinstance(factor, Uniform):
                    constant = known_constant(factor.value)
                    if constant is not None:
                        base = self.emit_value(arith.MuliOp(scaled.base, factor.value))
                        return Affine(base, scaled.stride * constant, scaled.align * abs(constant))
            return None
        l_base, l_stride = (lhs.base, lhs.stride) if isinstance(lhs, Affine) else (lhs.value, 0)  # type: ignore[union-attr]
        r_base, r_stride = (rhs.base, rhs.stride) if isinstance(rhs, Affine) else (rhs.value, 0)  # type: ignore[union-attr]
        hint = op.attributes.get(OPERAND_MULTIPLES_ATTR)
        known = hint.get_values() if isinstance(hint, DenseArrayBase) else (1, 1)
        align = math.gcd(_alignment(lhs, int(known[0])), _alignment(rhs, int(known[1])))
        if isinstance(op, arith.AddiOp):
            return Affine(self.add(l_base, r_base), l_stride + r_stride, align)
        base = self.emit_value(arith.SubiOp(l_base, r_base))
        return Affine(base, l_stride - r_stride, align)

    def _repeated_index(self, op: Operation, operands: list[Lanes], width: int
                        ) -> Repeated | None:
        """`x floordiv k` of a contiguous index `x` whose first lane is a known multiple of the
        constant `k` (k dividing the width): lanes `x0 / k + l // k`, or None."""
        if not isinstance(op, arith.DivUIOp | arith.DivSIOp | arith.FloorDivSIOp):
            return None
        lhs, rhs = operands
        if not isinstance(lhs, Affine) or lhs.stride != 1 or not isinstance(rhs, Uniform):
            return None
        factor = known_constant(rhs.value)
        if factor is None or factor < 2 or width % factor or lhs.align % factor:
            return None
        base = self.emit_value(type(op)(lhs.base, rhs.value))
        return Repeated(base, factor)

    def _shifted_repeated(self, op: Operation, operands: list[Lanes]) -> Repeated | None:
        """A `Repeated` index plus or minus a uniform one (a row offset added to an upsampled
        column, the flat index of a buffer of runtime strides), or None."""
        if not isinstance(op, arith.AddiOp | arith.SubiOp):
            return None
        lhs, rhs = operands
        if isinstance(lhs, Repeated) and isinstance(rhs, Uniform):
            return Repeated(self.emit_value(type(op)(lhs.base, rhs.value)), lhs.factor)
        if isinstance(op, arith.AddiOp) and isinstance(lhs, Uniform) and \
                isinstance(rhs, Repeated):
            return Repeated(self.emit_value(arith.AddiOp(lhs.value, rhs.base)), rhs.factor)
        return None


ALIGNED = 1 << 30
"""The alignment of the index 0 (a multiple of every alignment that matters)."""


def _alignment(lanes: Lanes, known: int = 1) -> int:
    """A number the first lane of an index is known to be a multiple of: a constant's, or
    `known` for another uniform value (`OPERAND_MULTIPLES_ATTR`)."""
    if isinstance(lanes, Affine):
        return lanes.align
    if isinstance(lanes, Uniform):
        constant = known_constant(lanes.value)
        if constant is not None:
            return abs(constant) or ALIGNED
        return known
    return 1


def _divides_by_nonzero_constant(op: Operation) -> bool:
    """`arith.extsi` (which xDSL 0.75 declares no memory effects for, so `is_side_effect_free`
    says no: a signed zero point in an epilogue left it serial), or an integer division or
    remainder by a non-zero constant (a delinearized index): pure."""
    if isinstance(op, arith.ExtSIOp):
        return True
    if not isinstance(op, arith.DivUIOp | arith.RemUIOp | arith.DivSIOp | arith.RemSIOp):
        return False
    divisor = known_constant(op.rhs)
    return divisor is not None and divisor != 0


def _copy_walking_by_one(loop: ForOp) -> tuple[LoadOp, StoreOp, list[Operation]] | None:
    """(the load, the store, the index arithmetic) of `loop`'s body when it only copies one
    scalar from one buffer to another (looking through `loop.block`s), the load's last index
    walking by one with the loop and its other indices not moving; else None."""
    body: list[Operation] = []
    pending = list(loop.body.block.ops)
    while pending:
        nested = pending.pop(0)
        if isinstance(nested, BlockOp):
            pending = [*nested.body.block.ops, *pending]
        elif not isinstance(nested, YieldOp):
            body.append(nested)
    loads = [nested for nested in body if isinstance(nested, LoadOp)]
    stores = [nested for nested in body if isinstance(nested, StoreOp)]
    if len(loads) != 1 or len(stores) != 1:
        return None
    load, store = loads[0], stores[0]
    if store.value is not load.result or load.memref is store.memref:
        return None
    if isinstance(load.result.type, VectorType) or not load.indices:
        return None
    pure = [nested for nested in body if nested is not load and nested is not store]
    if any(nested.regions or not is_side_effect_free(nested) or not all(
            isinstance(result.type, IndexType) for result in nested.results) for nested in pure):
        return None
    iv = loop.induction_var
    *outer, last = load.indices
    if any(depends_on(index, {iv}) for index in outer) or not _walks_by_one(last, iv):
        return None
    return load, store, pure


def _walks_by_one(value: SSAValue, iv: SSAValue) -> bool:
    """Whether `value` is `iv` or `x + iv` (either order) with `x` independent of `iv`."""
    if value is iv:
        return True
    owner = value.owner
    if not isinstance(owner, arith.AddiOp):
        return False
    for term, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
        if _walks_by_one(term, iv) and not depends_on(other, {iv}):
            return True
    return False


def known_constant(value: SSAValue) -> int | None:
    """The integer an `arith.constant` of index or integer type defines, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def vector_lanes(loop: ForOp, lowering: LLVMLowering) -> int:
    """Lanes per vector for `loop`'s body: the target's vector bits over the widest element
    accessed in memory (f32 on AVX-512: 16)."""

    widest = 1
    for op in loop.walk():
        if isinstance(op, LoadOp | StoreOp):
            memref_type = op.memref.type
            assert isinstance(memref_type, MemRefType)
            size = lowering.size_in_bytes(memref_type.get_element_type()) or 1
            widest = max(widest, size)
    return max(1, lowering.vector_bits // 8 // widest)


MAX_SHUFFLED_STRIDE = 4
"""A load whose last index moves by 2..this many elements per lane (a stride-2 pooling window,
a strided slice) is read as that many contiguous vectors and shuffled together; a larger stride
is gathered lane by lane."""

MAX_STRAIGHT_CHUNKS = 4
"""A vectorized loop of at most this many full vectors becomes straight-line code; a longer
one becomes a loop over vectors (plus one narrower vector for the remainder)."""


def vectorize_loop(op: ForOp, lowering: LLVMLowering, rewriter: PatternRewriter) -> bool:
    """Replace `op` (a vectorized `loop.for` with constant bounds, or a bound on its trip
    count: `vectorize_masked`) by vector code.

    Returns False, leaving `op` untouched, when neither holds or its body holds something
    `LoopVectorizer` does not widen.
    """

    bounds = op.constant_bounds()
    trip = op.trip_count()
    if bounds is None:
        return vectorize_masked(op, lowering, rewriter)
    if trip is None or trip == 0:
        return False
    lb, _, step = bounds
    lanes = min(trip, vector_lanes(op, lowering))
    full, remainder = divmod(trip, lanes)
    vectorizer = LoopVectorizer(op, lowering)
    body = [nested for nested in op.body.block.ops]
    out = Block()
    vectorizer.frames.append((out, {}))
    try:
        if full <= MAX_STRAIGHT_CHUNKS:
            for chunk in range(full):
                start = lb + chunk * lanes * step
                vectorizer.widen_chunk(body, vectorizer.index(start), lanes, out,
                                       abs(start) or ALIGNED)
        else:
            inner = Block(arg_types=[IndexType()])
            vectorizer.frames.append((inner, {}))
            scaled = vectorizer.mul(inner.args[0], lanes * step)
            base = vectorizer.add(scaled, vectorizer.index(lb))
            vectorizer.frames.pop()
            vectorizer.widen_chunk(body, base, lanes, inner, math.gcd(lanes * step, lb))
            inner.add_op(YieldOp())
            out.add_op(ForOp(vectorizer.index(0), vectorizer.index(full), vectorizer.index(1),
                             inner, f"{op.axis.data}.vec"))
        if remainder:
            start = lb + full * lanes * step
            vectorizer.widen_chunk(body, vectorizer.index(start), remainder, out,
                                   abs(start) or ALIGNED)
    except Unvectorizable:
        for block in (out, vectorizer.prologue):
            _erase_ops(block)
        return False
    rewriter.inline_block(vectorizer.prologue, InsertPoint.before(op))
    rewriter.inline_block(out, InsertPoint.before(op))
    rewriter.erase(op)
    return True


def vectorize_masked(op: ForOp, lowering: LLVMLowering, rewriter: PatternRewriter) -> bool:
    """Replace `op`, a vectorized loop of step 1 whose trip count is a runtime value of at
    most `ForOp.trip_bound()` (a split's partial tile, `0 to minui(16, ub - i)`), by masked
    vector code (MLIR's vector masking of dynamic shapes, LLVM's tail folding): vectors of W
    lanes up to the bound (at most `MAX_STRAIGHT_CHUNKS`), each running its first `active`
    lanes, where `active` is the trip count less the lanes before it (`LoopVectorizer.mask`:
    contiguous loads and stores masked, strided and repeated loads masked to the elements of
    the lanes that run; accesses inside a buffer's static extent read or blend every lane),
    all in a loop from `lb` to `ub` stepping by the bound, which runs once, or not at all when
    the trip count is 0. Every vector runs, those without lanes to run too (their accesses
    masked off): a branch per vector would sit in the loops around (a reduction's), where a
    tile of 4 vectors with each vector after the first under its own branch made RegNet-Y-400MF
    11-15% slower. Returns False, leaving `op` untouched, when there is no such bound or the
    body holds what the vectorizer does not mask (a gather or a scatter)."""

    bound = op.trip_bound()
    lb = known_constant(op.lb)
    if bound is None or bound == 0 or lb is None or known_constant(op.step) != 1:
        return False
    lanes = min(bound, vector_lanes(op, lowering))
    chunks = -(-bound // lanes)
    if chunks > MAX_STRAIGHT_CHUNKS:
        return False
    vectorizer = LoopVectorizer(op, lowering)
    body = [nested for nested in op.body.block.ops]
    once = Block(arg_types=[IndexType()])
    before = Block()  # the trip count and the masks: invariant in the loops around
    vectorizer.frames.append((before, {}))
    try:
        trip = vectorizer.emit_value(arith.SubiOp(op.ub, op.lb))
        for chunk in range(chunks):
            start = lb + chunk * lanes
            active = trip if not chunk else vectorizer.emit_value(
                arith.SubiOp(trip, vectorizer.index(chunk * lanes)))
            vectorizer.mask = Mask(active, vectorizer.lane_mask(active, lanes))
            vectorizer.widen_chunk(body, vectorizer.index(start), lanes, once,
                                   abs(start) or ALIGNED)
    except Unvectorizable:
        for block in (once, before, vectorizer.prologue):
            _erase_ops(block)
        return False
    once.add_op(YieldOp())
    loop = ForOp(op.lb, op.ub, vectorizer.index(bound), once, f"{op.axis.data}.masked")
    rewriter.inline_block(vectorizer.prologue, InsertPoint.before(op))
    rewriter.inline_block(before, InsertPoint.before(op))
    rewriter.insert(loop, InsertPoint.before(op))
    rewriter.erase(op)
    return True


def _erase_ops(block: Block) -> None:
    for nested in reversed(list(block.ops)):
        nested.detach()
        nested.erase(safe_erase=False)

