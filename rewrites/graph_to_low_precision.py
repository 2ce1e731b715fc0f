"""graph-to-low-precision: run the compute-heavy ops of a graph in bf16 or f16, the rest in f32.

Counterpart: TVM's `relay.transform.ToMixedPrecision` (its ALWAYS / FOLLOW / NEVER op lists,
fp32 accumulation in the GEMMs, casts inserted between the regions) and ONNX Runtime's
`float16.convert_float_to_float16` with its op block list. The op lists are data
(`LOW_PRECISION_OPS`, `FOLLOW_OPS`, `KEEP_FP32_OPS`); the last is the default of the pass's
`keep-fp32` option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.ops import ConstantOp
from dlc.dialects.graph.ops_tensor import CastOp
from dlc.dialects.graph.utils import build_constant, constant_array, recreate
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType, bf16, f16, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

LOW_PRECISION_OPS: tuple[str, ...] = (
    "graph.conv2d", "graph.conv_transpose2d", "graph.matmul",
)
"""Compute-heavy ops (TVM's ALWAYS list): their float operands are cast to the low-precision
type and they compute in it, accumulating in f32 (`rewrites.topi.common.accumulator_type`);
Gemm, dense and batch matmul are `graph.matmul` here."""

FOLLOW_OPS: tuple[str, ...] = (
    "graph.add", "graph.sub", "graph.mul", "graph.max", "graph.min", "graph.relu",
    "graph.clip", "graph.neg", "graph.abs", "graph.max_pool2d", "graph.reshape",
    "graph.transpose", "graph.flatten", "graph.concat", "graph.slice", "graph.pad",
    "graph.broadcast_to", "graph.gather", "graph.where", "graph.resize", "graph.div",
    "graph.sigmoid", "graph.tanh", "graph.sqrt", "graph.reciprocal", "graph.exp", "graph.log",
    "graph.erf", "graph.pow", "graph.softmax", "graph.reduce", "graph.avg_pool2d",
    "graph.global_avg_pool2d", "graph.batch_norm",
)
"""Ops that can run in either precision (TVM's FOLLOW list): in low precision when every float
operand already is (constants count as such: their cast is folded), else in f32."""

KEEP_FP32_OPS: tuple[str, ...] = (
    "graph.softmax", "graph.reduce", "graph.batch_norm", "graph.exp", "graph.log",
    "graph.erf", "graph.pow", "graph.div", "graph.sqrt", "graph.reciprocal", "graph.sigmoid",
    "graph.tanh", "graph.avg_pool2d", "graph.global_avg_pool2d",
)
"""Numerically sensitive ops kept in f32 by default (TVM's NEVER list): exponentials and
logarithms, normalizations (softmax; layer norm is reduce, sub, pow, div, sqrt), reductions
(sums and means lose too much in 8 significand bits), divisions. Any op on neither list stays
in f32 too."""

_TYPES: dict[str, Attribute] = {"bf16": bf16, "f16": f16}


def _float_tensor(value: SSAValue) -> TensorType | None:
    type_ = value.type
    if isinstance(type_, TensorType) and isinstance(
        type_.get_element_type(), Float32Type
    ):
        return type_
    return None


@dataclass(frozen=True)
class GraphToLowPrecisionPass(ModulePass):
    """Convert compute-heavy graph ops to bf16 or f16 with f32 accumulation (mixed precision).

    *Input invariant*: graph-level functions (`func.func` over `graph` ops, before fusion);
    the ops to convert compute in f32.

    *Output IR*: each op of `LOW_PRECISION_OPS` (conv2d, conv_transpose2d, matmul) takes and
    returns tensors of `type`, except an output layer (a result that reaches only the
    function's results, through follow ops: a classifier's Gemm), which stays f32 since its
    rounded result would only be widened again (logits a bf16 step apart would tie); an op
    of `FOLLOW_OPS` whose float operands are all of `type` or constants (add, relu,
    max_pool2d, reshape, ...) runs in `type` too; every other op, those
    named in `keep-fp32` included, sees f32 operands. A `graph.cast` is inserted wherever a
    value crosses between the two precisions; a cast of a `graph.constant` is folded into a
    new constant of `type` (the weights are stored in low precision, rounded to nearest even).
    The function signatures do not change: f32 arguments are cast on entry, results cast back
    to f32 before `func.return`.

    *Invariants*: f64 and integer tensors are untouched; low-precision GEMMs and convs
    accumulate in f32 and round once (the graph dialect's semantics of an f16/bf16 op), so
    results differ from f32 only by the roundings of operands and results.

    Options:
        type: the low-precision type, `bf16` (default) or `f16`.
        keep_fp32: names of ops (`graph.softmax` or `softmax`) that stay in f32; default
            `KEEP_FP32_OPS`. Naming an op of `LOW_PRECISION_OPS` keeps it in f32 as well.
    """

    name: ClassVar[str] = "graph-to-low-precision"

    type: str = "bf16"
    keep_fp32: tuple[str, ...] = field(default=KEEP_FP32_OPS)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        low = _TYPES.get(self.type)
        if low is None:
            raise PassFailedException(
                f"{self.name}: expected type bf16 or f16, found '{self.type}'"
            )
        keep = {name if name.startswith("graph.") else f"graph.{name}" for name in self.keep_fp32}
        known = set(LOW_PRECISION_OPS) | set(FOLLOW_OPS) | set(KEEP_FP32_OPS)
        unknown = sorted(keep - known)
        if unknown:
            raise PassFailedException(
                f"{self.name}: keep-fp32 names unknown ops {', '.join(unknown)} (expected ops "
                f"of {', '.join(sorted(known))})"
            )
        converter = _Converter(low, frozenset(keep))
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                converter.run(function)
        for constant in [o for o in op.walk() if isinstance(o, ConstantOp)]:
            if not constant.result.uses:  # a weight now stored in low precision
                constant.detach()
                constant.erase()


class _Converter:
    """One walk over a function's ops in order, choosing each op's precision."""

    def __init__(self, low: Attribute, keep: frozenset[str]) -> None:
        self.low = low
        self.keep = keep
        self.rewriter = Rewriter()
        self.casts: dict[tuple[SSAValue, Attribute], SSAValue] = {}

    def run(self, function: func.FuncOp) -> None:
        self.casts.clear()
        for op in list(function.body.blocks[0].ops):
            name = op.name
            if isinstance(op, ConstantOp | CastOp):
                continue
            if isinstance(op, func.ReturnOp):
                self._cast_operands(op, f32, only_low=True)
            elif name in LOW_PRECISION_OPS and name not in self.keep and not all(
                self._feeds_only_results(r) for r in op.results
            ):
                self._to_low(op)
            elif name in FOLLOW_OPS and name not in self.keep and self._follows_low(op):
                self._to_low(op)
            else:
                self._cast_operands(op, f32, only_low=True)

    def _feeds_only_results(self, value: SSAValue) -> bool:
        """Whether `value` reaches only the function's results, through follow ops: then it is
        an output layer, whose low-precision result would only be rounded and widened again."""
        for use in value.uses:
            user = use.operation
            if isinstance(user, func.ReturnOp):
                continue
            if user.name not in FOLLOW_OPS or user.name in self.keep:
                return False
            if not all(self._feeds_only_results(r) for r in user.results):
                return False
        return True

    def _is_low(self, value: SSAValue) -> bool:
        type_ = value.type
        return isinstance(type_, TensorType) and type_.get_element_type() == self.low

    def _follows_low(self, op: Operation) -> bool:
        """Whether every float operand is low precision or constant, and one is not constant."""
        seen_low = False
        for operand in op.operands:
            if self._is_low(operand) and not isinstance(operand.owner, ConstantOp):
                seen_low = True
            elif _float_tensor(operand) is not None and not isinstance(operand.owner, ConstantOp):
                return False
        return seen_low

    def _to_low(self, op: Operation) -> None:
        operands = [
            self._cast(operand, self.low) if _float_tensor(operand) is not None else operand
            for operand in op.operands
        ]
        result_types = [
            TensorType(self.low, r.type.get_shape()) if _float_tensor(r) is not None else r.type
            for r in op.results
        ]
        if not any(_float_tensor(r) is not None for r in op.results):
            # An op with no float result (a comparison): only its operands change.
            result_types = [r.type for r in op.results]
        new_op = recreate(op, operands, result_types)
        new_op.location = op.location
        self.rewriter.replace_op(op, new_op)

    def _cast_operands(self, op: Operation, target: Attribute, only_low: bool) -> None:
        for index, operand in enumerate(op.operands):
            if only_low and not self._is_low(operand):
                continue
            op.operands[index] = self._cast(operand, target)

    def _cast(self, value: SSAValue, element: Attribute) -> SSAValue:
        """`value` as `element`: a folded constant, a reused cast, or a new `graph.cast`
        placed right after its definition."""
        type_ = value.type
        assert isinstance(type_, TensorType)
        if type_.get_element_type() == element:
            return value
        if (cached := self.casts.get((value, element))) is not None:
            return cached
        array = constant_array(value)
        new_op: Operation
        if array is not None:
            new_op = build_constant(array.astype(to_numpy_dtype(element)))
        else:
            new_op = CastOp(value, element)
        owner = value.owner
        point = (
            InsertPoint.after(owner) if isinstance(owner, Operation)
            else InsertPoint.at_start(owner)  # a block argument
        )
        self.rewriter.insert_op(new_op, point)
        result = new_op.results[0]
        self.casts[(value, element)] = result
        return result
