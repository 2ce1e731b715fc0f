"""The pass `loop-plan-memory`: static memory planning of an entry function's intermediates.

Counterpart: TVM's Unified Static Memory Planner (USMP, algorithm `greedy_by_size`) run on the AOT
executor's `main`, and its older StorageRewrite; in MLIR, what a buffer-reuse pass does before
`memref.view`s into one arena.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.arith_numpy import ARITH_MATH_OPS
from dlc.dialects.contracts import CONCAT_AXIS_ATTR, NUM_OUTPUTS_ATTR, WORKSPACE_BYTES_ATTR
from dlc.dialects.loop import AllocOp, DeallocOp, dim_args
from dlc.rewrites.llvm_lowering.common import LLVMLowering
from dlc.runtime.metadata import WORKSPACE_ENTRY_SUFFIX
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException


def element_bytes(type_: Attribute, index_bitwidth: int = 64) -> int | None:
    """The storage size of one element of `type_` (as the llvm lowering lays it out), or None
    for types without one."""
    return LLVMLowering(index_bitwidth).size_in_bytes(type_)


def buffer_bytes(memref_type: MemRefType, index_bitwidth: int = 64) -> int | None:
    """The size in bytes of a row-major buffer of static shape, or None if it has none."""
    element = element_bytes(memref_type.get_element_type(), index_bitwidth)
    if element is None or not memref_type.has_static_shape():
        return None
    count = 1
    for size in memref_type.get_shape():
        count *= size
    return count * element


def align_up(value: int, alignment: int) -> int:
    """The smallest multiple of `alignment` not below `value`."""
    return (value + alignment - 1) // alignment * alignment


@dataclass(frozen=True)
class Lifetime:
    """One plannable buffer: its allocation, size, and the positions (in the function's body)
    of its allocation and of the last op that uses it, both inclusive."""

    alloc: AllocOp
    size: int
    start: int
    end: int

    def overlaps(self, other: Lifetime) -> bool:
        """Whether the two buffers are ever live at the same op."""
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class MemoryPlan:
    """Where each buffer lives in the workspace (byte offsets) and the workspace's size."""

    offsets: tuple[tuple[Lifetime, int], ...]
    peak_bytes: int

    @property
    def unplanned_bytes(self) -> int:
        """What the buffers would take if each had its own allocation."""
        return sum(lifetime.size for lifetime, _ in self.offsets)


def _top_level(op: Operation, body: Block) -> Operation:
    """The op of `body` that is or contains `op`."""
    while op.parent_block() is not body:
        parent = op.parent_op()
        assert parent is not None, "the op is nested in the body"
        op = parent
    return op


def _last_use(value: SSAValue, body: Block, position: dict[Operation, int]) -> int:
    """The position of the last op of `body` that uses `value` or a view made from it."""
    last = position[_top_level(value.owner, body)] if isinstance(value.owner, Operation) else 0
    pending = [value]
    while pending:
        current = pending.pop()
        for use in current.uses:
            user = use.operation
            last = max(last, position[_top_level(user, body)])
            pending.extend(r for r in user.results if isinstance(r.type, MemRefType))
    return last


def lifetimes(function: func.FuncOp, index_bitwidth: int = 64) -> list[Lifetime]:
    """The plannable buffers of `function`: `loop.alloc global` ops at the top level of its body
    with an identity layout and a known element size (not zero bytes)."""
    body = function.body.block
    position = {op: index for index, op in enumerate(body.ops)}
    found: list[Lifetime] = []
    for op in body.ops:
        if not isinstance(op, AllocOp) or op.scope.data != "global":
            continue
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        if not isinstance(memref_type.layout, NoneAttr):
            continue
        size = buffer_bytes(memref_type, index_bitwidth)
        if not size:
            continue
        found.append(Lifetime(op, size, position[op], _last_use(op.result, body, position)))
    return found


@dataclass(frozen=True)
class ConcatAlias:
    """A concatenation done in place: each piece is allocated inside the output buffer, at its
    byte offset there, and the concat kernel's call goes away."""

    call: func.CallOp
    output: AllocOp
    pieces: tuple[tuple[AllocOp, int], ...]


def _callee(call: func.CallOp) -> func.FuncOp | None:
    found = SymbolTable.lookup_symbol(call, call.callee)
    return found if isinstance(found, func.FuncOp) else None


def _writes_and_reads(value: SSAValue) -> tuple[list[func.CallOp], list[func.CallOp]] | None:
    """(the calls that take `value` as an output, those that take it as an input), or None
    when something else than a call of a destination-passing function or a `loop.dealloc`
    uses it (a view, a nested op: then it may be read or written anywhere)."""
    writes: list[func.CallOp] = []
    reads: list[func.CallOp] = []
    for use in value.uses:
        user = use.operation
        if isinstance(user, DeallocOp):
            continue
        callee = _callee(user) if isinstance(user, func.CallOp) else None
        outputs = callee.attributes.get(NUM_OUTPUTS_ATTR) if callee is not None else None
        if not isinstance(user, func.CallOp) or not isinstance(outputs, IntegerAttr):
            return None
        first_output = len(user.arguments) - outputs.value.data - len(dim_args(callee))
        (writes if use.index >= first_output else reads).append(user)
    return writes, reads


def _concat_candidates(function: func.FuncOp, buffers: Iterable[SSAValue]
                       ) -> Iterable[tuple[func.CallOp, int, list[SSAValue], SSAValue]]:
    """(call, axis, pieces, output) of each call of a concat kernel (`CONCAT_AXIS_ATTR`) in
    `function` whose output and pieces are `buffers`, distinct, the call the output's only
    writer and each piece written by exactly one call before it and otherwise only read (by
    calls: no views)."""
    allowed = set(buffers)
    body = function.body.block
    position = {op: index for index, op in enumerate(body.ops)}
    for call in body.ops:
        if not isinstance(call, func.CallOp) or (callee := _callee(call)) is None:
            continue
        axis = callee.attributes.get(CONCAT_AXIS_ATTR)
        outputs = callee.attributes.get(NUM_OUTPUTS_ATTR)
        if not isinstance(axis, IntegerAttr) or outputs != IntegerAttr(1, i64):
            continue
        *pieces, output = call.arguments[:len(call.arguments) - len(dim_args(callee))]
        values = [*pieces, output]
        if len(set(values)) != len(values) or any(value not in allowed for value in values):
            continue
        if (uses := _writes_and_reads(output)) is None or uses[0] != [call]:
            continue
        if all((uses := _writes_and_reads(piece)) is not None and len(uses[0]) == 1
               and position.get(uses[0][0], len(position)) < position[call] for piece in pieces):
            yield call, axis.value.data, pieces, output


def concat_aliases(function: func.FuncOp, buffers: Iterable[Lifetime],
                   alignment: int) -> list[ConcatAlias]:
    """The calls of concat kernels in `function` whose pieces can live in their output
    (`_concat_candidates` among the plannable `buffers`) where the output has no dims of size
    other than 1 before the axis (each piece is one contiguous run of it) and each piece starts
    at an `alignment`-multiple byte offset of the output (the kernels' vector accesses may
    assume it); a buffer is in one of them at most."""
    plannable = {lifetime.alloc.result: lifetime for lifetime in buffers}
    aliases: list[ConcatAlias] = []
    taken: set[SSAValue] = set()
    for call, axis, pieces, output in list(_concat_candidates(function, plannable)):
        output_type = output.type
        assert isinstance(output_type, MemRefType)
        if taken & {*pieces, output} or any(
                size != 1 for size in output_type.get_shape()[:axis]):
            continue
        offsets = [0]
        for piece in pieces:
            offsets.append(offsets[-1] + plannable[piece].size)
        if any(offset % alignment for offset in offsets[:-1]):
            continue
        taken.update([*pieces, output])
        placed = zip((plannable[piece].alloc for piece in pieces), offsets[:-1], strict=False)
        aliases.append(ConcatAlias(call, plannable[output].alloc, tuple(placed)))
    return aliases


def _merge_aliases(buffers: list[Lifetime], aliases: list[ConcatAlias]) -> list[Lifetime]:
    """`buffers` with each concat's pieces folded into its output: one buffer live from the
    first piece's allocation to the last use of any of them."""
    merged = {id(lifetime.alloc): lifetime for lifetime in buffers}
    for alias in aliases:
        parts = [merged.pop(id(piece)) for piece, _ in alias.pieces]
        whole = merged[id(alias.output)]
        merged[id(alias.output)] = Lifetime(
            whole.alloc, whole.size, min(whole.start, *(part.start for part in parts)),
            max(whole.end, *(part.end for part in parts)),
        )
    return list(merged.values())


def greedy_by_size(buffers: Iterable[Lifetime], alignment: int = 64) -> MemoryPlan:
    """Places the largest buffers first, each at the lowest aligned offset where it overlaps no
    buffer already placed that is live at the same time (USMP's `greedy_by_size`)."""
    placed: list[tuple[Lifetime, int]] = []
    peak = 0
    for buffer in sorted(buffers, key=lambda b: (-b.size, b.start)):
        conflicts = sorted(
            (offset, offset + other.size) for other, offset in placed if other.overlaps(buffer)
        )
        offset = 0
        for begin, end in conflicts:
            if offset + buffer.size <= begin:
                break
            offset = max(offset, align_up(end, alignment))
        placed.append((buffer, offset))
        peak = max(peak, offset + buffer.size)
    placed.sort(key=lambda entry: entry[0].start)
    return MemoryPlan(tuple(placed), align_up(peak, alignment))


def apply_plan(function: func.FuncOp, plan: MemoryPlan,
               aliases: Iterable[ConcatAlias] = ()) -> None:
    """Rewrites `function`: one `loop.alloc global` workspace of `plan.peak_bytes` bytes at the
    top of the body; each planned allocation becomes a `memref.view` at its offset, and its
    `loop.dealloc`s go away; so does each concat piece of `aliases`, at its output's offset
    plus its own."""
    body = function.body.block
    workspace = AllocOp(MemRefType(i8, [plan.peak_bytes]), "global")
    workspace.result.name_hint = "workspace"
    first = body.first_op
    assert first is not None, "a planned function has ops"
    Rewriter.insert_op(workspace, InsertPoint.before(first))
    offset_of = {id(lifetime.alloc): offset for lifetime, offset in plan.offsets}
    placements = [(lifetime.alloc, offset) for lifetime, offset in plan.offsets] + [
        (piece, offset_of[id(alias.output)] + offset)
        for alias in aliases for piece, offset in alias.pieces
    ]
    for alloc, offset in placements:
        for use in list(alloc.result.uses):
            if isinstance(use.operation, DeallocOp):
                Rewriter.erase_op(use.operation)
        shift = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        view = memref.ViewOp(workspace.result, shift.result, [], alloc.result.type)
        Rewriter.insert_op([shift, view], InsertPoint.before(alloc))
        alloc.result.replace_all_uses_with(view.result)
        view.result.name_hint = alloc.result.name_hint
        Rewriter.erase_op(alloc)
    function.attributes[WORKSPACE_BYTES_ATTR] = IntegerAttr(plan.peak_bytes, i64)


def is_entry_function(op: Operation) -> bool:
    """A public `func.func` with a body and `dlc.num_outputs` (what the runtime calls)."""
    return (
        isinstance(op, func.FuncOp)
        and bool(op.body.blocks)
        and NUM_OUTPUTS_ATTR in op.attributes
        and op.sym_visibility != StringAttr("private")
    )


def plan_function(
    function: func.FuncOp, alignment: int = 64, index_bitwidth: int = 64,
    concat_in_place: bool = False,
) -> MemoryPlan | None:
    """Plans and rewrites one function; None (and no change) if it has nothing to plan or was
    planned before. With `concat_in_place`, the pieces of the concatenations `concat_aliases`
    finds are placed inside their outputs and the concat calls are erased."""
    if WORKSPACE_BYTES_ATTR in function.attributes:
        return None
    buffers = lifetimes(function, index_bitwidth)
    if not buffers:
        return None
    aliases = concat_aliases(function, buffers, alignment) if concat_in_place else []
    if aliases:
        for alias in aliases:
            Rewriter.erase_op(alias.call)
        buffers = _merge_aliases(lifetimes(function, index_bitwidth), aliases)
    plan = greedy_by_size(buffers, alignment)
    apply_plan(function, plan, aliases)
    return plan


def row_lifetimes(function: func.FuncOp, index_bitwidth: int = 64
                  ) -> tuple[SSAValue, list[Lifetime]] | None:
    """The buffers of runtime rows of `function` (top-level `loop.alloc global` with an identity
    layout and one size, of their leading dim) that have the rows of the first one (the same
    size value), with the bytes of one row as their size; None when there are none."""
    body = function.body.block
    position = {op: index for index, op in enumerate(body.ops)}
    rows: SSAValue | None = None
    found: list[Lifetime] = []
    for op in body.ops:
        if not isinstance(op, AllocOp) or op.scope.data != "global" or len(op.sizes) != 1:
            continue
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        shape = memref_type.get_shape()
        if not isinstance(memref_type.layout, NoneAttr) or shape[0] >= 0:
            continue
        if rows is not None and op.sizes[0] is not rows:
            continue
        row = buffer_bytes(MemRefType(memref_type.get_element_type(), shape[1:]), index_bitwidth)
        if not row:
            continue
        rows = op.sizes[0]
        found.append(Lifetime(op, row, position[op], _last_use(op.result, body, position)))
    return (rows, found) if rows is not None else None


def plan_rows(function: func.FuncOp, alignment: int = 64, index_bitwidth: int = 64
              ) -> MemoryPlan | None:
    """Places the buffers of runtime rows of `function` (`row_lifetimes`) in one workspace of
    runtime size: planned per row (`greedy_by_size` on the bytes of one row), the workspace is
    the rows times the peak of one row, and each buffer the view at the rows times its offset
    (a plan scaled by the rows keeps every buffer apart and every offset aligned). Returns the
    plan per row, or None (and no change) when there is nothing to plan."""
    found = row_lifetimes(function, index_bitwidth)
    if found is None:
        return None
    rows, buffers = found
    plan = greedy_by_size(buffers, alignment)
    first = min((lifetime.alloc for lifetime in buffers), key=lambda op: op.parent_block()
                .get_operation_index(op))  # type: ignore[union-attr]
    peak = arith.ConstantOp(IntegerAttr(plan.peak_bytes, IndexType()))
    nbytes = arith.MuliOp(rows, peak.result)
    workspace = AllocOp(MemRefType(i8, [DYNAMIC_INDEX]), "global", [nbytes.result])
    workspace.result.name_hint = "rows_workspace"
    Rewriter.insert_op([peak, nbytes, workspace], InsertPoint.before(first))
    for lifetime, offset in plan.offsets:
        alloc = lifetime.alloc
        for use in list(alloc.result.uses):
            if isinstance(use.operation, DeallocOp):
                Rewriter.erase_op(use.operation)
        per_row = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        shift = arith.MuliOp(rows, per_row.result)
        view = memref.ViewOp(workspace.result, shift.result, [rows], alloc.result.type)
        Rewriter.insert_op([per_row, shift, view], InsertPoint.before(alloc))
        alloc.result.replace_all_uses_with(view.result)
        view.result.name_hint = alloc.result.name_hint
        Rewriter.erase_op(alloc)
    return plan


NOMINAL_SIZE = 512
"""The value every runtime size takes where buffers of runtime size are compared at compile time
(which of them share a slot, `runtime_slots`): the plan is right for every size, only how much
it saves depends on the sizes being like these."""


def _nominal_value(value: SSAValue, found: dict[SSAValue, int], ops: set[Operation]
                   ) -> int | None:
    """The value of the index `value` with every runtime size (an `index` argument of the
    function) at `NOMINAL_SIZE`, adding the ops computing it to `ops`; None where it depends on
    anything but arguments, constants and integer `arith` ops."""
    if value in found:
        return found[value]
    owner = value.owner
    result: int | None = None
    if isinstance(owner, Block):
        result = NOMINAL_SIZE if isinstance(value.type, IndexType) else None
    elif isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        result = owner.value.value.data
        ops.add(owner)
    elif owner.name in ARITH_MATH_OPS and len(owner.results) == 1 \
            and isinstance(owner.results[0].type, IndexType):
        operands = [_nominal_value(operand, found, ops) for operand in owner.operands]
        if all(operand is not None for operand in operands):
            result = int(ARITH_MATH_OPS[owner.name](owner, operands))
            ops.add(owner)
    if result is not None:
        found[value] = result
    return result


def runtime_lifetimes(function: func.FuncOp, index_bitwidth: int = 64
                      ) -> tuple[list[Lifetime], list[Operation]]:
    """The buffers of runtime size of `function` (top-level `loop.alloc global` with sizes and an
    identity layout) whose sizes are computed from the function's arguments by integer `arith`
    ops, each with its bytes at `NOMINAL_SIZE` as its size; and those ops, in body order."""
    body = function.body.block
    position = {op: index for index, op in enumerate(body.ops)}
    ops: set[Operation] = set()
    buffers: list[Lifetime] = []
    for op in body.ops:
        if not isinstance(op, AllocOp) or op.scope.data != "global" or not op.sizes:
            continue
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        element = element_bytes(memref_type.get_element_type(), index_bitwidth)
        if not isinstance(memref_type.layout, NoneAttr) or not element:
            continue
        computed: set[Operation] = set()
        found: dict[SSAValue, int] = {}
        sizes = [_nominal_value(size, found, computed) for size in op.sizes]
        if any(size is None for size in sizes) or any(
                value.owner is not body for value in found if isinstance(value.owner, Block)
        ) or any(computed_op.parent_block() is not body for computed_op in computed):
            continue
        ops |= computed
        count = element
        runtime = iter(sizes)
        for size in memref_type.get_shape():
            count *= next(runtime) if size < 0 else size  # type: ignore[operator]
        buffers.append(Lifetime(op, max(count, 1), position[op],
                                _last_use(op.result, body, position)))
    return buffers, sorted(ops, key=position.__getitem__)


def runtime_slots(buffers: Iterable[Lifetime]) -> list[list[Lifetime]]:
    """The buffers of runtime size grouped into slots of the workspace, no two buffers of a slot
    live at the same time: the largest first (by their nominal size), each into the free slot
    whose first (largest) buffer is the smallest, else a slot of its own. A slot is as large as
    its largest buffer at the call's sizes, so the plan fits whatever the sizes."""
    slots: list[list[Lifetime]] = []
    for buffer in sorted(buffers, key=lambda b: (-b.size, b.start)):
        free = [slot for slot in slots if not any(other.overlaps(buffer) for other in slot)]
        if free:
            min(free, key=lambda slot: slot[0].size).append(buffer)
        else:
            slots.append([buffer])
    return slots


def _runtime_bytes(alloc: AllocOp, alignment: int, index_bitwidth: int
                   ) -> tuple[list[Operation], SSAValue]:
    """Ops computing the bytes of the buffer `alloc` makes, rounded up to `alignment`."""
    memref_type = alloc.result.type
    assert isinstance(memref_type, MemRefType)
    static = element_bytes(memref_type.get_element_type(), index_bitwidth) or 1
    for size in memref_type.get_shape():
        static *= max(size, 1)
    ops: list[Operation] = []
    total: SSAValue = alloc.sizes[0]
    if static != 1:
        ops.append(factor := arith.ConstantOp(IntegerAttr(static, IndexType())))
        ops.append(arith.MuliOp(factor.result, total))
        total = ops[-1].results[0]
    for size in alloc.sizes[1:]:
        ops.append(arith.MuliOp(total, size))
        total = ops[-1].results[0]
    if static % alignment:
        below = arith.ConstantOp(IntegerAttr(alignment - 1, IndexType()))
        align = arith.ConstantOp(IntegerAttr(alignment, IndexType()))
        padded = arith.AddiOp(total, below.result)
        whole = arith.DivUIOp(padded.result, align.result)
        rounded = arith.MuliOp(whole.result, align.result)
        ops += [below, align, padded, whole, rounded]
        total = rounded.result
    return ops, total


@dataclass(frozen=True)
class RuntimeConcat:
    """A concatenation of buffers of runtime size done in place when the call's sizes allow
    it: its output has only 1s before the axis (`ones`, the runtime sizes there) and each piece
    would start at an aligned byte offset of it; then the pieces are views inside the output
    and the concat call is skipped, else each is a buffer of its own and the call copies."""

    call: func.CallOp
    output: AllocOp
    pieces: tuple[AllocOp, ...]
    ones: tuple[SSAValue, ...]


def runtime_concats(function: func.FuncOp, buffers: Iterable[Lifetime]) -> list[RuntimeConcat]:
    """The concats of `function` (`_concat_candidates`) whose output and pieces are buffers of
    runtime size of `buffers` and whose output's dims before the axis are 1 or runtime sizes,
    one of them at least; a buffer is in one of them at most."""
    allocs = {lifetime.alloc.result: lifetime.alloc for lifetime in buffers}
    found: list[RuntimeConcat] = []
    taken: set[SSAValue] = set()
    for call, axis, pieces, output in list(_concat_candidates(function, allocs)):
        output_alloc = allocs[output]
        output_type = output.type
        assert isinstance(output_type, MemRefType)
        shape = output_type.get_shape()
        if taken & {*pieces, output} or any(
                size not in (1, DYNAMIC_INDEX) for size in shape[:axis]):
            continue
        runtime = iter(output_alloc.sizes)
        dims = [next(runtime) if size == DYNAMIC_INDEX else None for size in shape]
        ones = tuple(size for size in dims[:axis] if size is not None)
        if not ones:  # then the static plan would have it, were the sizes static
            continue
        taken.update([*pieces, output])
        found.append(RuntimeConcat(call, output_alloc, tuple(allocs[p] for p in pieces), ones))
    return found


def _with_concat_lifetimes(buffers: list[Lifetime], concats: list[RuntimeConcat]
                           ) -> list[Lifetime]:
    """`buffers` with each concat's output live from its first piece's allocation to the last
    use of any piece (where the pieces are views inside it); the pieces keep their lifetimes,
    for the calls where they are not."""
    by_alloc = {id(lifetime.alloc): lifetime for lifetime in buffers}
    for concat in concats:
        parts = [by_alloc[id(piece)] for piece in concat.pieces]
        whole = by_alloc[id(concat.output)]
        by_alloc[id(concat.output)] = Lifetime(
            whole.alloc, whole.size, min(whole.start, *(part.start for part in parts)),
            max(whole.end, *(part.end for part in parts)))
    return list(by_alloc.values())


def _in_place_offsets(concat: RuntimeConcat, output_offset: SSAValue,
                      offsets: dict[AllocOp, SSAValue], alignment: int, index_bitwidth: int
                      ) -> tuple[list[Operation], SSAValue]:
    """Ops choosing, at the call's sizes, between the pieces of `concat` inside its output
    (every size of `ones` 1, every piece at an `alignment`-multiple byte offset of it) and in
    their own slots (`offsets`): each piece's entry of `offsets` becomes the choice; returns
    the ops and the condition (in place)."""
    one = arith.ConstantOp(IntegerAttr(1, IndexType()))
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    align = arith.ConstantOp(IntegerAttr(alignment, IndexType()))
    ops: list[Operation] = [one, zero, align]
    condition: SSAValue | None = None

    def both(value: SSAValue) -> None:
        nonlocal condition
        if condition is not None:
            ops.append(arith.AndIOp(condition, value))
            value = ops[-1].results[0]
        condition = value

    for size in concat.ones:
        ops.append(arith.CmpiOp(size, one.result, "eq"))
        both(ops[-1].results[0])
    within: SSAValue = zero.result
    inside: list[SSAValue] = []
    for piece in concat.pieces:
        if inside:
            ops.append(arith.RemUIOp(within, align.result))
            ops.append(arith.CmpiOp(ops[-1].results[0], zero.result, "eq"))
            both(ops[-1].results[0])
        ops.append(arith.AddiOp(output_offset, within))
        inside.append(ops[-1].results[0])
        computed, nbytes = _runtime_bytes(piece, 1, index_bitwidth)
        ops += computed
        ops.append(arith.AddiOp(within, nbytes))
        within = ops[-1].results[0]
    assert condition is not None, "a runtime concat has a runtime size before its axis"
    for piece, there in zip(concat.pieces, inside, strict=True):
        ops.append(arith.SelectOp(condition, there, offsets[piece]))
        offsets[piece] = ops[-1].results[0]
    return ops, condition


def _copy_unless(call: func.CallOp, condition: SSAValue) -> None:
    """Runs `call` only where `condition` is false (`scf.if`)."""
    true = arith.ConstantOp(IntegerAttr(1, i1))
    negated = arith.XOrIOp(condition, true.result)
    guard = scf.IfOp(negated.result, [], [scf.YieldOp()])
    Rewriter.insert_op([true, negated, guard], InsertPoint.before(call))
    call.detach()
    then = guard.true_region.block
    then.insert_op_before(call, then.first_op)  # type: ignore[arg-type]


def plan_runtime(function: func.FuncOp, alignment: int = 64, index_bitwidth: int = 64,
                 concat_in_place: bool = False) -> list[list[Lifetime]] | None:
    """Places the buffers of runtime size of `function` (`runtime_lifetimes`) in one workspace
    whose layout is computed at each call from the sizes: the slots of `runtime_slots` one after
    the other, each as large as its largest buffer at the call's sizes (`arith.maxui`), the
    workspace their sum; each buffer becomes the view at its slot's offset. The ops computing
    the sizes move before the first of the buffers, with the plan's. With `concat_in_place`, a
    concat of such buffers (`runtime_concats`) is done in place at the calls whose sizes make
    its pieces runs of its output (a batch of 1: `_in_place_offsets`), its call then skipped;
    its output lives from its first piece on. Returns the slots, or None (and no change) when
    there are not two buffers to plan."""
    buffers, size_ops = runtime_lifetimes(function, index_bitwidth)
    if len(buffers) < 2:
        return None
    body = function.body.block
    first = min((lifetime.alloc for lifetime in buffers), key=body.get_operation_index)
    start = body.get_operation_index(first)
    for op in size_ops:
        if body.get_operation_index(op) > start:
            op.detach()
            Rewriter.insert_op(op, InsertPoint.before(first))
    concats = runtime_concats(function, buffers) if concat_in_place else []
    slots = runtime_slots(_with_concat_lifetimes(buffers, concats))
    ops: list[Operation] = [zero := arith.ConstantOp(IntegerAttr(0, IndexType()))]
    offset: SSAValue = zero.result
    offsets: dict[AllocOp, SSAValue] = {}
    for slot in slots:
        largest: SSAValue | None = None
        for lifetime in slot:
            offsets[lifetime.alloc] = offset
            computed, nbytes = _runtime_bytes(lifetime.alloc, alignment, index_bitwidth)
            ops += computed
            if largest is not None:
                ops.append(arith.MaxUIOp(largest, nbytes))
                nbytes = ops[-1].results[0]
            largest = nbytes
        assert largest is not None
        ops.append(arith.AddiOp(offset, largest))
        offset = ops[-1].results[0]
    conditions: list[tuple[func.CallOp, SSAValue]] = []
    for concat in concats:
        chosen, condition = _in_place_offsets(concat, offsets[concat.output], offsets,
                                              alignment, index_bitwidth)
        ops += chosen
        conditions.append((concat.call, condition))
    workspace = AllocOp(MemRefType(i8, [DYNAMIC_INDEX]), "global", [offset])
    workspace.result.name_hint = "runtime_workspace"
    Rewriter.insert_op([*ops, workspace], InsertPoint.before(first))
    for lifetime in buffers:
        alloc = lifetime.alloc
        for use in list(alloc.result.uses):
            if isinstance(use.operation, DeallocOp):
                Rewriter.erase_op(use.operation)
        view = memref.ViewOp(workspace.result, offsets[alloc], list(alloc.sizes),
                             alloc.result.type)
        Rewriter.insert_op(view, InsertPoint.before(alloc))
        alloc.result.replace_all_uses_with(view.result)
        view.result.name_hint = alloc.result.name_hint
        Rewriter.erase_op(alloc)
    for call, condition in conditions:
        _copy_unless(call, condition)
    return slots


def planned_workspace(function: func.FuncOp) -> AllocOp | None:
    """The workspace allocation `apply_plan` put at the top of `function`, or None."""
    if WORKSPACE_BYTES_ATTR not in function.attributes or not function.body.blocks:
        return None
    first = function.body.block.first_op
    if not isinstance(first, AllocOp) or first.scope.data != "global":
        return None
    return first


def add_workspace_entry(function: func.FuncOp) -> func.FuncOp | None:
    """Gives a planned entry `@f` a twin `@f_with_workspace` (`WORKSPACE_ENTRY_SUFFIX`) that
    takes the workspace as one more, last argument (`memref<Nxi8>`) and does what `@f` did;
    `@f` then allocates the workspace, calls the twin and returns. The twin is public and not
    an entry function (no `dlc.num_outputs`): a caller that owns memory calls it (a shared
    library's `<prefix>_run_with_workspace`). Returns the twin, or None (and no change) when
    `function` has no planned workspace."""
    workspace = planned_workspace(function)
    if workspace is None:
        return None
    twin = function.clone()
    twin.sym_name = StringAttr(function.sym_name.data + WORKSPACE_ENTRY_SUFFIX)
    for name in (NUM_OUTPUTS_ATTR, WORKSPACE_BYTES_ATTR):
        twin.attributes.pop(name, None)
    workspace_type = workspace.result.type
    body = twin.body.block
    argument = body.insert_arg(workspace_type, len(body.args))
    argument.name_hint = "workspace"
    twin_alloc = body.first_op
    assert isinstance(twin_alloc, AllocOp), "a clone of the planned function"
    twin_alloc.result.replace_all_uses_with(argument)
    Rewriter.erase_op(twin_alloc)
    inputs = [*function.function_type.inputs.data, workspace_type]
    twin.function_type = FunctionType.from_lists(inputs, function.function_type.outputs.data)
    if twin.arg_attrs is not None:
        twin.arg_attrs = ArrayAttr([*twin.arg_attrs.data, DictionaryAttr({})])
    Rewriter.insert_op(twin, InsertPoint.after(function))

    block = function.body.block
    for op in reversed(list(block.ops)):
        if op is not workspace:
            op.detach()
            op.erase(safe_erase=False)
    call = func.CallOp(twin.sym_name.data, [*block.args, workspace.result], [])
    Rewriter.insert_op([call, func.ReturnOp()], InsertPoint.at_end(block))
    return twin


@dataclass(frozen=True)
class LoopPlanMemoryPass(ModulePass):
    """Places the intermediate buffers of entry functions in one workspace, reused by liveness.

    *Input invariant*: loop-level IR (after `convert-tensor-expr-to-loop`). The entry functions
    are the public `func.func`s with a body and `dlc.num_outputs`; their intermediates are
    `loop.alloc global` ops at the top level of the body (usually around `func.call`s of the
    kernels), optionally freed by `loop.dealloc`.

    *Output IR*: in each entry function, one `%workspace = loop.alloc global : memref<Nxi8>` at
    the top of the body; every plannable allocation (top level, scope global, identity layout,
    a known element size) becomes `memref.view %workspace[%offset][] : memref<Nxi8> to
    memref<...>` where it was, with an `arith.constant` byte offset, and its `loop.dealloc`s are
    removed (the workspace lives until the function returns). The function gets
    `dlc.workspace_bytes = N : i64`, and the module the largest N of its functions. A buffer
    lives from its allocation to the last top-level op that uses it or a view of it; buffers are
    placed largest first, each at the lowest aligned offset that overlaps no buffer placed before
    that is live at the same time (USMP's greedy_by_size); N is the peak, aligned.

    The buffers of runtime rows (`loop.alloc global sizes(%n)`, their leading dim dynamic, of
    the rows `%n` of the first one) get a workspace of their own, planned the same way per row:
    `%rows_workspace = loop.alloc global sizes(%bytes) : memref<?xi8>` with `%bytes = %n x
    (peak bytes of one row)` before the first of them, and each becomes `memref.view
    %rows_workspace[%n x offset][%n]` (`plan_rows`).

    The buffers of runtime size left (`loop.alloc global sizes(...)` whose sizes integer `arith`
    ops compute from the function's arguments: an image's height and width) share one workspace
    whose layout is computed at each call (`plan_runtime`): at compile time they are grouped into
    slots, no two buffers of a slot live at the same time (largest first, their sizes compared
    with every runtime size at `NOMINAL_SIZE`); at run time each slot is as large as its largest
    buffer at the call's sizes (`arith.maxui`), the slots follow one another, and the workspace,
    `%runtime_workspace = loop.alloc global sizes(%bytes) : memref<?xi8>` before the first of
    the buffers, is their sum; each buffer becomes `memref.view %runtime_workspace[%offset]
    [%sizes...]`, its deallocs gone. The plan is a closed form of the sizes, right for every
    one: a call computes it in a few integer ops (ONNX Runtime caches a plan per input shape
    instead), and the workspace is one allocation site (whose buffer `convert-loop-to-llvm`
    keeps between calls, taking a larger one when a call needs it).

    With `concat_in_place` (the default), a call of a concat kernel (`dlc.concat_axis`) whose
    pieces are runs of its output is not made: each piece becomes a view inside the output's
    bytes, and the output's buffer lives from the first piece's allocation on
    (`concat_aliases`: the output and the pieces planned buffers, only 1s before the axis, each
    piece written by one earlier call, read only by calls, at an aligned offset). Concat kernels
    no call is left to are erased. TensorRT and ONNX Runtime's memory planners do the same
    ("concat elimination"); in MLIR it is bufferization writing into `tensor.insert_slice`'s
    destination. A concat of buffers of runtime size whose output has runtime sizes before the
    axis (a runtime batch) is done in place at the calls where those are 1 and every piece
    starts at an aligned byte offset of the output: each piece's view is at `arith.select`
    of its offset inside the output's slot and its own slot, and the call runs under `scf.if`
    of the opposite (`runtime_concats`).

    With `workspace-argument`, each planned entry `@f` also gets a public twin
    `@f_with_workspace` that takes the workspace as its last argument, and `@f` becomes: allocate
    the workspace, call the twin, return (`add_workspace_entry`; the driver does this for every
    model, for the C API's `<prefix>_run_with_workspace`).

    *Invariants*: two buffers live at the same op never share a byte, so no kernel's output
    overlaps its inputs; every offset is a multiple of `alignment`; functions without plannable
    buffers, kernels (private functions), nested allocations and scopes local/shared are left
    as they are; a function already planned (with `dlc.workspace_bytes`) is not planned again.

    Options:
        alignment: byte alignment of every buffer in the workspace (a cache line, an AVX-512
            vector).
        index_bitwidth: the size of an `index` element, in bits (the target's pointer width).
        workspace_argument: give each planned entry function its twin that takes the
            workspace as an argument.
        concat_in_place: write the pieces of concatenations into their outputs (default on).
    """

    name: ClassVar[str] = "loop-plan-memory"

    alignment: int = 64
    index_bitwidth: int = 64
    workspace_argument: bool = False
    concat_in_place: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment <= 0 or self.alignment & (self.alignment - 1):
            raise PassFailedException(
                f"'{self.name}' expected an alignment that is a power of two, found "
                f"{self.alignment}"
            )
        peaks: list[int] = []
        for function in list(op.ops):
            if not is_entry_function(function):
                continue
            assert isinstance(function, func.FuncOp)
            plan = plan_function(
                function, self.alignment, self.index_bitwidth, self.concat_in_place
            )
            plan_rows(function, self.alignment, self.index_bitwidth)
            plan_runtime(function, self.alignment, self.index_bitwidth, self.concat_in_place)
            if plan is not None:
                peaks.append(plan.peak_bytes)
                if self.workspace_argument:
                    add_workspace_entry(function)
        if peaks:
            op.attributes[WORKSPACE_BYTES_ATTR] = IntegerAttr(max(peaks), i64)
        _erase_uncalled_concats(op)


def _erase_uncalled_concats(module: ModuleOp) -> None:
    """Erases the private concat kernels no call is left to (all done in place)."""
    called = {
        call.callee.root_reference.data for call in module.walk() if isinstance(call, func.CallOp)
    }
    for function in list(module.ops):
        if (
            isinstance(function, func.FuncOp) and CONCAT_AXIS_ATTR in function.attributes
            and function.sym_visibility == StringAttr("private")
            and function.sym_name.data not in called
        ):
            Rewriter.erase_op(function)
