"""The `target-gpu-vectorize` pass: `vectorized` loops of kernels -> vector loads, stores and
arithmetic (`loop.load ... -> vector<4xf32>`, OpenCL's `vload4`, PTX's `ld.v4`).

Counterpart: TVM's `VectorizeLoop` on device code (a ramp of lanes becomes one vector access).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import AllocOp, BlockOp, ForOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.gpu_common import kernels_of
from dlc.rewrites.ir_builder import IRBuilder
from xdsl.context import Context
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, VectorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import is_side_effect_free

VECTOR_WIDTHS = (2, 4, 8, 16)
"""Trip counts of `vectorized` loops that become vector operations (OpenCL's vector widths)."""


@dataclass(frozen=True)
class TargetGpuVectorizePass(ModulePass):
    """Turn the `vectorized` loops of kernels into vector operations where their shape allows.

    *Input invariant*: `target_gpu.kernel`s (loops of kind `vectorized` anywhere in them).

    *Output IR*: a `vectorized` loop with constant bounds, step 1 and 2, 4, 8 or 16 iterations
    whose body (entering `loop.block`s) has no region and no allocation, uses the lane index
    only as the last index of loads and stores (or through `arith.addi`), and stores no
    lane-varying value to one element is replaced by its body with the lane index at the
    lower bound: loads and stores indexed by the lane become vector loads and stores of that
    many lanes, the pure ops on loaded values become the same ops on vectors, and scalars
    they meet are broadcast (`vector.broadcast`). Other `vectorized` loops stay loops (they
    run serially).

    *Invariants*: results are unchanged (lane `i` computes what iteration `i` computed); host
    functions are not touched.

    Options: none.
    """

    name: ClassVar[str] = "target-gpu-vectorize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels_of(op):
            for loop in [o for o in kernel.walk() if isinstance(o, ForOp)]:
                if loop.kind.data == "vectorized":
                    materialize_vector_loop(loop)


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
    base = IRBuilder.before(loop).value(arith.ConstantOp(IntegerAttr(lb, IndexType())))
    loop.induction_var.replace_all_uses_with(base)
    widened: dict[SSAValue, SSAValue] = {}

    def vector_of(value: SSAValue, at: IRBuilder, element: Attribute) -> SSAValue:
        if value in widened:
            return widened[value]
        return at.value(vector.BroadcastOp(value, VectorType(element, [width])))

    for op in list(_body_ops(loop)):
        if op not in vector_ops:
            continue
        at = IRBuilder.before(op)
        if isinstance(op, LoadOp):
            load = LoadOp(op.memref, list(op.indices), VectorType(op.result.type, [width]))
            widened[op.result] = at.value(load)
        elif isinstance(op, StoreOp):
            memref_type = op.memref.type
            assert isinstance(memref_type, MemRefType)
            value = vector_of(op.value, at, memref_type.get_element_type())
            at.insert(StoreOp(value, op.memref, list(op.indices)))
        else:
            operands = [
                vector_of(v, at, v.type) if not isinstance(v.type, VectorType) else v
                for v in op.operands
            ]
            widened[op.results[0]] = at.value(type(op).create(
                operands=operands,
                result_types=[VectorType(op.results[0].type, [width])],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            ))
    for op in reversed(list(_body_ops(loop))):
        if op in vector_ops:
            Rewriter.erase_op(op, safe_erase=False)
    body = [op for op in loop.body.block.ops if not isinstance(op, YieldOp)]
    for op in body:
        op.detach()
    IRBuilder.before(loop).insert(body)
    Rewriter.erase_op(loop)
