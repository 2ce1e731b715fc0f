"""graph-fold-constants: evaluate constant subgraphs at compile time (Relay's FoldConstant).

Each graph op whose operands are all `graph.constant`s is run with the graph interpreter's NumPy
implementation of it and replaced by a constant holding the result, in one forward sweep (so a
chain of such ops folds completely: shape computations, weights transposed, reshaped or cast).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import (
    ConstantOp,
    FlattenOp,
    FusedOp,
    ReshapeOp,
    TransposeOp,
    YieldOp,
)
from dlc.dialects.graph.ops_tensor import BroadcastToOp
from dlc.dialects.graph.utils import (
    build_constant,
    constant_array,
    evaluate_op,
    num_elements,
    shape_of,
    splat_constant,
    splat_element,
)
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure
from xdsl.utils.exceptions import PassFailedException

DEFAULT_SIZE_LIMIT = 1 << 27
"""Largest folded constant, in elements (128 Mi, 512 MiB of f32: above VGG-19's largest weight,
102.8 Mi elements, so that transposed weights of the usual models fold)."""

SMALL_RESULT = 1024
"""A fold whose result has at most this many elements may grow the module (shape chains)."""


def _foldable(op: Operation) -> bool:
    """Whether `op` is a Pure graph op, other than a constant, whose operands are constants."""
    if op.dialect_name() != "graph" or isinstance(op, ConstantOp | FusedOp | YieldOp):
        return False
    if not op.has_trait(Pure) or op.regions or not op.results or not op.operands:
        return False
    return all(isinstance(operand.owner, ConstantOp) for operand in op.operands)


_DATA_MOVEMENT: tuple[type[Operation], ...] = (TransposeOp, ReshapeOp, FlattenOp, BroadcastToOp)
"""Ops that only move elements: of a splat, they make the same splat (folded without expanding)."""


def _stored_elements(constant: ConstantOp) -> int:
    """How many elements `constant` stores (a splat stores one)."""
    if splat_element(constant.result) is not None:
        return 1
    return num_elements(constant.result)


def _freed_elements(op: Operation) -> int:
    """Stored elements of the operand constants that only `op` uses (they go away with it)."""
    freed = 0
    seen: set[int] = set()
    for operand in op.operands:
        owner = operand.owner
        if id(owner) in seen or not isinstance(owner, ConstantOp):
            continue
        seen.add(id(owner))
        if all(use.operation is op for use in operand.uses):
            freed += _stored_elements(owner)
    return freed


def _evaluate(op: Operation) -> list[ConstantOp] | None:
    """The constants holding `op`'s results, computed by the interpreter's implementation."""
    if isinstance(op, _DATA_MOVEMENT):
        element = splat_element(op.operands[0])
        if element is not None:
            return [splat_constant(element, shape_of(op.results[0]))]
    arrays = [constant_array(operand) for operand in op.operands]
    known = [array for array in arrays if array is not None]
    if len(known) != len(arrays):
        return None
    results = evaluate_op(op, known)
    return None if results is None else [build_constant(result) for result in results]


def fold_op(op: Operation, size_limit: int = DEFAULT_SIZE_LIMIT) -> list[ConstantOp] | None:
    """The constants that replace `op`'s results, or None when `op` must not be folded.

    `op` is folded when all its operands are constants, the interpreter can run it, no result
    has more than `size_limit` elements, and the module does not grow: the results together
    store no more elements than the operand constants that die with `op` (a splat stores one),
    or at most `SMALL_RESULT`.
    """
    if not _foldable(op):
        return None
    if max(num_elements(result) for result in op.results) > size_limit:
        return None
    constants = _evaluate(op)
    if constants is None:
        return None
    stored = sum(_stored_elements(constant) for constant in constants)
    if stored > max(_freed_elements(op), SMALL_RESULT):
        return None
    return constants


@dataclass(frozen=True)
class GraphFoldConstantsPass(ModulePass):
    """Evaluate graph ops whose operands are all constants and replace them by constants.

    *Input invariant*: any module; graph ops the interpreter has no implementation for, and
    non-graph ops, are left alone (they are never folded, their constant operands stay).

    *Output IR*: each foldable op (a Pure graph op other than `graph.constant`, `graph.fused`
    and `graph.yield`, whose operands are all `graph.constant`s) becomes a `graph.constant`
    holding the interpreter's result (a splat result is stored as one element); operand
    constants left without users are erased. Chains fold completely in one sweep.

    *Invariants*: the folded values are bit for bit what the interpreter computes at run time
    (same NumPy implementation, same dtype). No constant with more than `size-limit` elements
    is created, and the module never grows by more than `SMALL_RESULT` (1024) elements per
    fold: a larger result must be a splat or replace at least as many elements of operand
    constants that die with the fold.

    Options:
        size-limit: the largest constant a fold may create, in elements (default 1 << 27).
    """

    name: ClassVar[str] = "graph-fold-constants"

    size_limit: int = DEFAULT_SIZE_LIMIT

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.size_limit < 0:
            raise PassFailedException(
                f"graph-fold-constants: expected a non-negative size-limit, found "
                f"{self.size_limit}"
            )
        for candidate in list(op.walk()):
            if candidate.parent is None:  # erased by an earlier fold
                continue
            constants = fold_op(candidate, self.size_limit)
            if constants is None:
                continue
            operands = [operand.owner for operand in candidate.operands]
            for constant, result in zip(constants, candidate.results, strict=True):
                constant.result.name_hint = result.name_hint
            Rewriter.replace_op(candidate, constants, [c.result for c in constants])
            for owner in operands:
                if isinstance(owner, ConstantOp) and owner.parent is not None:
                    if not any(result.uses for result in owner.results):
                        Rewriter.erase_op(owner)
