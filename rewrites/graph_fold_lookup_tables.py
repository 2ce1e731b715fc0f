"""graph-fold-lookup-tables: an elementwise function of one 8-bit tensor becomes a table of its
256 values (`graph.lookup`).

What TFLite does for int8 activations (its lookup-table kernels for tanh, logistic and GELU)
and ONNX Runtime's QLinearLookup: where a chain of elementwise ops depends on a single int8 or
uint8 tensor (and on scalar constants), its result takes at most 256 values, which the graph
interpreter computes at compile time. A quantized transformer's requantized GELU (after its
integer matmul: dequantize, divide, erf, quantize, dequantize, add, quantize, dequantize,
multiply, quantize... a dozen ops, an erf polynomial among them) becomes one load per element
from a 256-entry table that stays in the L1.

The rule follows the data, not op names: any op the interpreter runs whose fusion kind is
elementwise or broadcast, whose result has the source's shape, and whose other operands are
constants of one element joins a chain; a value of the chain used outside it is replaced by a
lookup when the ops computing it from the source cost more than a lookup (`LOOKUP_COST`, in
`op_cost`'s units). The values are the interpreter's, so the folded chain computes what the
graph means (the erf exactly, not its polynomial).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from dlc.dialects.graph.attrs import FusionKind, fusion_kind, to_numpy_dtype
from dlc.dialects.graph.interpreter import IMPLEMENTATIONS, run_op
from dlc.dialects.graph.ops import (
    ConstantOp,
    DivOp,
    ErfOp,
    ExpOp,
    LogOp,
    PowOp,
    SigmoidOp,
    SqrtOp,
    TanhOp,
)
from dlc.dialects.graph.ops_quant import (
    I8,
    TABLE_ENTRIES,
    UI8,
    DequantizeOp,
    LookupOp,
    QuantizeOp,
    quantized_range,
)
from dlc.dialects.graph.utils import shape_of
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Pure
from xdsl.transforms.dead_code_elimination import region_dce

TRANSCENDENTAL_COST = 16
"""Vector instructions of a transcendental function's polynomial (erf, exp, tanh, sigmoid,
log; pow) per vector of results, about."""

OP_COSTS: dict[type[Operation], int] = {
    ErfOp: TRANSCENDENTAL_COST, ExpOp: TRANSCENDENTAL_COST, TanhOp: TRANSCENDENTAL_COST,
    SigmoidOp: TRANSCENDENTAL_COST, LogOp: TRANSCENDENTAL_COST, PowOp: 2 * TRANSCENDENTAL_COST,
    QuantizeOp: 6, DequantizeOp: 4, DivOp: 4, SqrtOp: 4,
}
"""Vector instructions per vector of results of the ops that take more than one (a quantize:
divide, clamp twice, round, convert; a dequantize: extend, subtract, convert, multiply)."""

LOOKUP_COST = 24
"""What a table lookup costs per vector of results, in `op_cost`'s units: the loads of the
lanes, one by one, and putting them together (a chain that costs less stays as it is: a
requantization, dequantize then quantize, costs 10)."""


def op_cost(op: Operation) -> int:
    """Vector instructions per vector of `op`'s results, about (1 for a plain arithmetic op)."""
    return OP_COSTS.get(type(op), 1)


def _scalar_constant(value: SSAValue) -> bool:
    owner = value.owner
    return isinstance(owner, ConstantOp) and owner.result.type.element_count() == 1


def _joins(op: Operation, shape: tuple[int, ...]) -> bool:
    """Whether `op` may be part of a chain over a source of `shape`: an elementwise (or
    broadcast) graph op with one result of that shape that the interpreter runs."""
    return (
        op.dialect_name() == "graph" and type(op) in IMPLEMENTATIONS and op.has_trait(Pure)
        and not op.regions and len(op.results) == 1
        and isinstance(op.results[0].type, TensorType) and shape_of(op.results[0]) == shape
        and fusion_kind(op) <= FusionKind.BROADCAST and not isinstance(op, LookupOp)
    )


@dataclass
class _Chain:
    """The ops computed from `source` alone (and scalar constants), in block order."""

    source: SSAValue
    ops: list[Operation]

    @staticmethod
    def grow(source: SSAValue, order: dict[Operation, int]) -> _Chain:
        """The chain of `source`, among the ops of its block (`order`: their positions)."""
        shape = shape_of(source)
        members: set[SSAValue] = {source}
        ops: list[Operation] = []
        candidates = {use.operation for use in source.uses if use.operation in order}
        while candidates:
            op = min(candidates, key=order.__getitem__)
            candidates.discard(op)
            if op in ops or not _joins(op, shape):
                continue
            if all(v in members or _scalar_constant(v) for v in op.operands):
                members.add(op.results[0])
                ops.append(op)
                candidates |= {use.operation for use in op.results[0].uses
                               if use.operation in order}
        return _Chain(source, ops)

    def outputs(self) -> list[Operation]:
        """The chain's ops whose result something outside the chain uses."""
        inside = set(self.ops)
        return [op for op in self.ops
                if any(use.operation not in inside for use in op.results[0].uses)]

    def slice(self, op: Operation) -> list[Operation]:
        """The chain's ops that `op`'s result depends on, `op` included, in block order."""
        inside = set(self.ops)
        needed, stack = {op}, [op]
        while stack:
            for operand in stack.pop().operands:
                owner = operand.owner
                if owner in inside and owner not in needed:
                    needed.add(owner)
                    stack.append(owner)
        return [each for each in self.ops if each in needed]

    def table(self, ops: list[Operation]) -> np.ndarray | None:
        """The last of `ops` evaluated at each value of the source (None when the interpreter
        fails on one of them)."""
        element = self.source.type.get_element_type()
        lowest, highest = quantized_range(element)  # type: ignore[misc]
        rank = len(shape_of(self.source))
        inputs = np.arange(lowest, highest + 1).astype(to_numpy_dtype(element))
        values: dict[SSAValue, np.ndarray] = {
            self.source: inputs.reshape((1,) * (rank - 1) + (TABLE_ENTRIES,))}
        for op in ops:
            operands = [values.get(v) if v in values else v.owner.to_array()  # type: ignore[union-attr]
                        for v in op.operands]
            try:
                (result,) = run_op(op, operands)  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001 - a chain the interpreter cannot run stays
                return None
            expected = to_numpy_dtype(op.results[0].type.get_element_type())
            if result.dtype != expected or result.size != TABLE_ENTRIES:
                return None
            values[op.results[0]] = result
        return values[ops[-1].results[0]].reshape(TABLE_ENTRIES)


def fold_chains(source: SSAValue, order: dict[Operation, int]) -> int:
    """Replace the values computed from `source` (an 8-bit integer tensor) alone, where they
    cost more than a lookup, by lookups in tables of their values; `order` holds the positions
    of the ops of its block (ops added since are not taken into chains). Returns how many."""
    chain = _Chain.grow(source, order)
    folded = 0
    for output in chain.outputs():
        ops = chain.slice(output)
        if sum(op_cost(op) for op in ops) <= LOOKUP_COST:
            continue
        values = chain.table(ops)
        if values is None:
            continue
        table = ConstantOp.from_array(values)
        table.result.name_hint = "table"
        lookup = LookupOp(source, table)
        lookup.result.name_hint = output.results[0].name_hint
        Rewriter.insert_op([table, lookup], InsertPoint.after(output))
        for use in list(output.results[0].uses):
            if use.operation is not lookup:
                use.operation.operands[use.index] = lookup.result
        folded += 1
    return folded


def _sources(block: Block) -> list[SSAValue]:
    """The 8-bit integer tensors of `block` that are not constants (a constant's chains fold
    into constants anyway)."""
    values = [*block.args] + [result for op in block.ops if not isinstance(op, ConstantOp)
                              for result in op.results]
    return [v for v in values if isinstance(v.type, TensorType)
            and v.type.get_element_type() in (I8, UI8)]


@dataclass(frozen=True)
class GraphFoldLookupTablesPass(ModulePass):
    """Replace elementwise chains over one int8/uint8 tensor by table lookups (`graph.lookup`).

    *Input invariant*: graph-level IR (after `graph-fold-qdq`: the chains are the float ops
    between a quantized op and the next quantize).

    *Output IR*: each value computed from one 8-bit tensor alone by ops the interpreter runs
    (elementwise or broadcast, with scalar constants), used outside its chain, and costing more
    than a lookup, is `graph.lookup %source, %table` with a 256-entry `graph.constant` table;
    the chain's ops left without users are erased.

    *Invariants*: the lookups' values are the interpreter's values of the chains they replace,
    bit for bit; values of other shapes, and chains over other element types, are left alone.
    """

    name: ClassVar[str] = "graph-fold-lookup-tables"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for region in [r for nested in op.walk() for r in nested.regions]:
            folded = 0
            for block in region.blocks:
                order = {op: index for index, op in enumerate(block.ops)}
                folded += sum(fold_chains(source, order) for source in _sources(block))
            if folded:
                region_dce(region)
