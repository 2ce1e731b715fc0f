"""`vector` -> `llvm` for 1-D vectors (MLIR's VectorToLLVM, the part dlc's CPU code uses).

Broadcasts become insertelement + shufflevector, `vector.fma` the `llvm.fma` intrinsic,
reductions the `llvm.vector.reduce.*` intrinsics (float add/mul in order, as LLVM's intrinsics
without `reassoc` specify), loads and stores of N contiguous elements plain `llvm.load`/
`llvm.store`, and extract/insert at static positions lane shuffles.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from rewrites.llvm_lowering.common import (
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
from rewrites.llvm_lowering.memref import element_address, memref_type_of

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


@dataclass
class LoadStoreLowering(RewritePattern):
    """`vector.load` / `vector.store` -> `llvm.load` / `llvm.store` of contiguous elements."""

    lowering: LLVMLowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, vector.LoadOp | vector.StoreOp):
            return
        memref_type = memref_type_of(op.base, op)
        base = lowered(op.base, self.lowering, rewriter)
        indices = [lowered(i, self.lowering, rewriter) for i in op.indices]
        ops, address = element_address(base, memref_type, indices, self.lowering, op)
        alignment = self.lowering.size_in_bytes(memref_type.get_element_type())
        if isinstance(op, vector.LoadOp):
            result_type = self.lowering.convert_type(_vector_type(op, op.result))
            load = llvm.LoadOp(address, result_type, alignment)
            replace_with_lowered(op, [*ops, load], load.results, rewriter)
            return
        _vector_type(op, op.vector)
        value = lowered(op.vector, self.lowering, rewriter)
        rewriter.replace(op, [*ops, llvm.StoreOp(value, address, alignment)], [])


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
            position = int_constant(lane, IntegerType(32))
            insert = llvm.InsertElementOp(dest, source, position)
            replace_with_lowered(op, [position, insert], insert.results, rewriter)


def vector_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower the 1-D `vector` ops dlc's CPU code uses."""
    return [
        BroadcastLowering(lowering),
        FMALowering(lowering),
        ReductionLowering(lowering),
        LoadStoreLowering(lowering),
        ExtractInsertLowering(lowering),
    ]

