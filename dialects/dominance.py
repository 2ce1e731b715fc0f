"""SSA dominance of a parsed module: every operand is defined before the op that uses it (MLIR's
verifier checks this for SSACFG regions; xDSL's does not), so that `%a = graph.add %x, %a` is
an error instead of a read of memory no op wrote."""

from __future__ import annotations

from xdsl.ir import Block, Operation
from xdsl.irdl.dominance import DominanceInfo
from xdsl.utils.exceptions import VerifyException


def verify_dominance(root: Operation) -> None:
    """Raises `VerifyException` naming the first op (in walk order) with an operand that is not
    defined before it: later in the same block, by itself, or in a block that does not
    dominate the use."""
    positions: dict[Block, dict[Operation, int]] = {}
    dominance: dict[int, DominanceInfo] = {}
    for op in root.walk():
        for index, operand in enumerate(op.operands):
            definer = operand.owner
            if not isinstance(definer, Operation):
                continue
            if not _defined_before(definer, op, positions, dominance):
                name = f"%{operand.name_hint}" if operand.name_hint else "a value"
                raise VerifyException(
                    f"'{op.name}' op operand #{index} ({name}) is used before it is defined"
                )


def _defined_before(
    definer: Operation, user: Operation, positions: dict[Block, dict[Operation, int]],
    dominance: dict[int, DominanceInfo],
) -> bool:
    block = definer.parent_block()
    if block is None:
        return False
    ancestor: Operation | None = user
    while ancestor is not None and ancestor.parent_block() is not block:
        parent = ancestor.parent_block()
        if parent is not None and parent.parent is block.parent and block.parent is not None:
            region = block.parent
            info = dominance.setdefault(id(region), DominanceInfo(region))
            return info.strictly_dominates(block, parent)
        ancestor = ancestor.parent_op()
    if ancestor is None:
        return False
    order = positions.get(block)
    if order is None:
        order = positions[block] = {op: i for i, op in enumerate(block.ops)}
    return order[definer] < order[ancestor]
