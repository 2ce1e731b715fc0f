"""dlc's IR builder: xDSL's `Builder` (MLIR's `OpBuilder`) with folding index arithmetic and the
`loop` constructors that the GPU rewrites (schedule rules, kernel passes) build IR with.

An `IRBuilder` inserts at an insertion point (before an op, or at the end of a block before its
terminator). Index constants are not inserted there but come from one place per builder: a
callable given as `constants` (a kernel's entry, say), else the nest root of `anchor` (reused
from, or inserted before it: `schedule.common.index_constant`), else the insertion point.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dlc.dialects.loop.ops import AsyncCopyOp, BlockOp, ForOp, LoadOp, MatrixLoadOp, StoreOp
from dlc.rewrites.schedule.common import index_constant, value_name
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator


@dataclass(eq=False)
class IRBuilder(Builder):
    """A `Builder` whose index arithmetic folds the trivial cases (`x + 0`, `x * 1`, ...).

    Attributes:
        anchor: index constants go before the nest root of this op (when `constants` is None).
        constants: where index constants come from, by value (e.g. a cache at a kernel's entry).
    """

    anchor: Operation | None = field(default=None, kw_only=True)
    constants: Callable[[int], SSAValue] | None = field(default=None, kw_only=True)

    @classmethod
    def before(
        cls,
        op: Operation,
        *,
        anchor: Operation | None = None,
        constants: Callable[[int], SSAValue] | None = None,
    ) -> IRBuilder:
        """A builder inserting before `op`."""
        return cls(InsertPoint.before(op), anchor=anchor, constants=constants)

    @classmethod
    def at_end(
        cls,
        block: Block,
        *,
        anchor: Operation | None = None,
        constants: Callable[[int], SSAValue] | None = None,
    ) -> IRBuilder:
        """A builder appending to `block`, before its terminator if it has one."""
        last = block.last_op
        if last is not None and last.has_trait(IsTerminator):
            return cls(InsertPoint.before(last), anchor=anchor, constants=constants)
        return cls(InsertPoint.at_end(block), anchor=anchor, constants=constants)

    def value(self, op: Operation, name: str | None = None) -> SSAValue:
        """Insert `op` and return its (single) result, named `name` if given."""
        self.insert(op)
        if name is not None:
            op.results[0].name_hint = name
        return op.results[0]

    def const(self, value: int) -> SSAValue:
        """An `index` constant (see the module doc for where it is)."""
        if self.constants is not None:
            return self.constants(value)
        if self.anchor is not None:
            return index_constant(value, self.anchor)
        return self.value(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        if isinstance(b, int):
            if b == 0:
                return a
            b = self.const(b)
        return self.value(arith.AddiOp(a, b))

    def mul(self, a: SSAValue, b: int) -> SSAValue:
        if b == 1:
            return a
        if b == 0:
            return self.const(0)
        return self.value(arith.MuliOp(a, self.const(b)))

    def div(self, a: SSAValue, b: int) -> SSAValue:
        return a if b == 1 else self.value(arith.DivUIOp(a, self.const(b)))

    def rem(self, a: SSAValue, b: int) -> SSAValue:
        return self.const(0) if b == 1 else self.value(arith.RemUIOp(a, self.const(b)))

    def decompose(self, linear: SSAValue, extents: Sequence[int]) -> list[SSAValue]:
        """The row-major coordinates of `linear` in a box of `extents`."""
        values = []
        for position, size in enumerate(extents):
            inner = math.prod(extents[position + 1:])
            values.append(self.rem(self.div(linear, inner), size) if position else
                          self.div(linear, inner))
        return values

    def loop(
        self,
        lb: SSAValue | int,
        ub: SSAValue | int,
        axis: str,
        kind: str = "serial",
        thread: str | None = None,
        step: int = 1,
    ) -> tuple[ForOp, IRBuilder]:
        """A new `loop.for` here, and a builder of its body (anchored at the loop)."""
        lb_value = self.const(lb) if isinstance(lb, int) else lb
        ub_value = self.const(ub) if isinstance(ub, int) else ub
        step_value = self.const(step)
        loop = ForOp(lb_value, ub_value, step_value, Block(arg_types=[IndexType()]), axis,
                     kind, thread)
        loop.induction_var.name_hint = value_name(axis)
        self.insert(loop)
        return loop, IRBuilder.at_end(loop.body.block, anchor=loop, constants=self.constants)

    def thread_loop(self, extent: int, axis: str, thread: str) -> tuple[ForOp, IRBuilder]:
        """A loop of `extent` iterations bound to GPU axis `thread` (`threadIdx.x`, ...)."""
        return self.loop(0, extent, axis, "bound", thread)

    def block(
        self, name: str, build: Callable[[IRBuilder], None], spatial: Sequence[str] = ()
    ) -> BlockOp:
        """A `loop.block` whose body `build` fills; its reads and writes are what it accesses."""
        body = Block()
        build(IRBuilder.at_end(body, anchor=self.anchor, constants=self.constants))
        reads: list[SSAValue] = []
        writes: list[SSAValue] = []
        for op in body.walk():
            written = op.dest if isinstance(op, AsyncCopyOp) else \
                op.memref if isinstance(op, StoreOp) else None
            if written is not None and written not in writes:
                writes.append(written)
        for op in body.walk():
            read = op.source if isinstance(op, AsyncCopyOp) else \
                op.memref if isinstance(op, LoadOp | MatrixLoadOp) else None
            if read is not None and read not in reads and read not in writes:
                reads.append(read)
        block = BlockOp(name, reads, writes, body, spatial)
        self.insert(block)
        return block


def wrap_in_bound_loops(
    ops: Sequence[Operation], axes: Sequence[tuple[str, str]], zero: SSAValue, one: SSAValue
) -> ForOp:
    """Move `ops` (consecutive, in one block) into nested trip-1 loops (`zero` to `one` step
    `one`) bound to `axes` ((axis name, GPU axis) pairs, innermost first), in their place: they
    then run on thread (or block) 0 of each of those axes."""
    assert ops and axes
    block = ops[0].parent_block()
    assert block is not None
    after = ops[-1].next_op
    for op in ops:
        op.detach()
    inner: list[Operation] = list(ops)
    for axis, thread in axes:
        inner = [ForOp(zero, one, one, inner, axis, "bound", thread)]
    Rewriter.insert_op(inner[0], InsertPoint(block, after))
    loop = inner[0]
    assert isinstance(loop, ForOp)
    return loop
