"""Finding payload ops for a schedule: blocks by name, the loops around a block, a loop by axis.

Counterpart: TVM's `Schedule.get_block(name)`, `Schedule.get_loops(block)`.
"""

from __future__ import annotations

from dlc.dialects.loop.ops import BlockOp, ForOp
from dlc.rewrites.schedule.common import ScheduleError, enclosing_loops, nested_blocks
from xdsl.ir import Operation


def match_blocks(root: Operation, name: str) -> list[BlockOp]:
    """The `loop.block`s named `name` inside `root`, in program order (at least one)."""
    blocks = [block for block in nested_blocks(root) if block.block_name.data == name]
    if not blocks:
        raise ScheduleError(
            f'expected a loop.block named "{name}" in the payload, found none', root
        )
    return blocks


def get_loops(block: BlockOp) -> list[ForOp]:
    """The loops around `block` in its nest, outermost first."""
    return enclosing_loops(block)


def match_loop(block: BlockOp, axis: str) -> ForOp:
    """The loop around `block` whose axis is `axis` (the innermost one if several are)."""
    loops = [loop for loop in enclosing_loops(block) if loop.axis.data == axis]
    if not loops:
        found = ", ".join(f'"{loop.axis.data}"' for loop in enclosing_loops(block)) or "none"
        raise ScheduleError(
            f'expected a loop with axis "{axis}" around block "{block.block_name.data}", '
            f"found axes {found}",
            block,
        )
    return loops[-1]
