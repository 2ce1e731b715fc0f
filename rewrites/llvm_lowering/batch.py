"""The native batch loop of an entry function with a dynamic batch (`dlc.batch_rows`).

`graph-batch-rows` compiles a model with a dynamic batch as an entry for one row (`@main`) and
entries for blocks of k rows (`@main__rows<k>`: a block of 8, and for a model that reads its
weights more than it computes, blocks of 4 and 2). `@main__batch(i64 n, ptr...)`, added next
to them, runs a batch of `n` rows: the largest block entry on each whole block, then the r
rows left by their plan (`tail_plans`, from the entries' estimated costs, `entry_cost`): the
cheapest sequence of whole entries (an MLP's 6 rows as blocks of 4 and 2, a conv net's 3 rows
one at a time), possibly ending with one padded block (the MLP's 3 rows as a block of 4, which
costs about one row: its time goes to reading the weights). A padded block copies its rows of
the batched inputs into a scratch block (the last row repeated into the others, so that no row
computes on values the caller did not give), runs the block entry on it, and copies its rows
of each batched output back. Each call gets its rows of the batched buffers (the row's byte
size times the row number added to the base pointer) and the other buffers whole. It is the
entry a C caller of an exported library calls with N, and the one the Python runtime calls
once per call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from dlc.dialects.contracts import (
    BATCH_COST_ATTR,
    BATCH_ENTRY_ATTR,
    BATCH_ROWS_ATTR,
    NUM_OUTPUTS_ATTR,
)
from dlc.dialects.loop.ops import BlockOp, ForOp, IntrinsicOp
from dlc.rewrites.batch_cost import PARALLEL_REGION_COST, weight_cost
from dlc.rewrites.llvm_lowering.common import int_constant, is_declared
from dlc.rewrites.loop_plan_memory import buffer_bytes
from dlc.runtime.metadata import (
    BATCH_BLOCK_SUFFIX,
    BATCH_ENTRY_SUFFIX,
    FunctionSignature,
    is_block_entry,
)
from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f64,
    i8,
    i64,
)
from xdsl.ir import Block, Region, SSAValue

SCRATCH_ALIGNMENT = 64
"""The alignment of each batched argument's block in a padded tail's scratch buffer."""


def _row_bytes(shape: tuple[int, ...], dtype: str) -> int:
    itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
    return math.prod(shape[1:]) * itemsize


def _offset(block: Block, base: SSAValue, offset: SSAValue | int) -> SSAValue:
    """`base` plus `offset` bytes (ops appended to `block`)."""
    if isinstance(offset, int):
        constant = int_constant(offset, i64)
        block.add_op(constant)
        offset = constant.result
    address = llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], i8, ssa_indices=[offset], inbounds=True)
    block.add_op(address)
    return address.result


def _row_at(block: Block, base: SSAValue, row: SSAValue, step: int
            ) -> tuple[SSAValue, SSAValue]:
    """The address of row `row` of `base`, whose rows take `step` bytes, and `step` as an i64
    value (ops appended to `block`)."""
    size = int_constant(step, i64)
    offset = llvm.MulOp(row, size.result)
    block.add_ops([size, offset])
    return _offset(block, base, offset.res), size.result


def _calls(block: Block, callee: str, row: SSAValue, arguments: list[SSAValue],
           steps: list[int]) -> None:
    """Appends to `block` the call of `callee` on the rows from `row` on."""
    pointers = [_row_at(block, argument, row, step)[0] if step else argument
                for argument, step in zip(arguments, steps, strict=True)]
    block.add_op(llvm.CallOp(callee, *pointers))


def _compare(lhs: SSAValue, rhs: SSAValue, predicate: llvm.ICmpPredicateFlag) -> llvm.ICmpOp:
    return llvm.ICmpOp(lhs, rhs, IntegerAttr(predicate.to_int(), 64))


def _block_work(block: BlockOp) -> int:
    """The arithmetic instructions one execution of `block` runs (a tensor intrinsic is
    one)."""
    return sum(
        1 for op in block.body.walk()
        if isinstance(op, IntrinsicOp)
        or (op.dialect_name() == "arith" and not isinstance(op, arith.ConstantOp))
    )


def _work(function: func.FuncOp, lanes: int) -> float:
    """The arithmetic instructions of `function`'s loop blocks, each times its loops' trip
    counts, a vectorized loop's counted in vectors of `lanes` (a 4-wide row costs a vector
    as a 16-wide one does)."""
    work = 0.0
    for op in function.walk():
        if not isinstance(op, BlockOp):
            continue
        trips = 1
        parent = op.parent_op()
        while parent is not None and parent is not function:
            if isinstance(parent, ForOp):
                trip = parent.trip_count() or 1
                trips *= -(-trip // lanes) if parent.kind.data == "vectorized" else trip
            parent = parent.parent_op()
        work += trips * _block_work(op)
    return work


def _bytes(type_: object) -> int:
    """A buffer's bytes (0 for anything else, a dynamic shape included)."""
    if not isinstance(type_, MemRefType):
        return 0
    return buffer_bytes(type_) or 0


def entry_cost(module: ModuleOp, entry: func.FuncOp, lanes: int, cache_bytes: int = 0
               ) -> float:
    """An estimate of the time one call of `entry` (a loop-level entry function) takes, in
    arithmetic instructions on vectors of `lanes` (`_work`): each kernel it calls costs its
    instructions or what reading the constants it reads (memref.get_global) costs
    (`batch_cost.weight_cost`), whichever is more (a roofline per kernel), plus
    `PARALLEL_REGION_COST` for each of its parallel loops, and the entry's arguments a byte
    each (reading and writing them). Constants that fit `cache_bytes` (a
    core's L2) together cost nothing: consecutive calls find them in the cache (a small
    transformer's 0.5 MB: its row calls are compute-bound, 6.5 of them to a block of 8)."""
    calls = [(callee, constants) for callee, constants in _calls_reading(module, entry)
             if callee is not None]
    everything: dict[str, int] = {}
    for _, constants in calls:
        everything.update(constants)
    streams = weight_cost(sum(everything.values()), cache_bytes) > 0
    cost = _work(entry, lanes) + sum(_bytes(arg.type) for arg in entry.args)
    for callee, constants in calls:
        reading = weight_cost(sum(constants.values()), 0) if streams else 0.0
        regions = sum(1 for op in callee.walk()
                      if isinstance(op, ForOp) and op.kind.data == "parallel")
        cost += max(_work(callee, lanes), reading) + PARALLEL_REGION_COST * regions
    return cost


def batched_entries(module: ModuleOp) -> list[func.FuncOp]:
    """The loop-level entry functions of `module` with batched arguments (`dlc.batch_rows`),
    row and block entries alike."""
    return [
        function for function in module.ops
        if isinstance(function, func.FuncOp) and NUM_OUTPUTS_ATTR in function.attributes
        and function.sym_visibility != StringAttr("private") and function.arg_attrs is not None
        and any(BATCH_ROWS_ATTR in attrs.data for attrs in function.arg_attrs.data)
    ]


def annotate_batch_costs(module: ModuleOp, lanes: int, cache_bytes: int) -> None:
    """Sets `dlc.batch_cost` on each batched entry of `module` (its `entry_cost`), for a
    driver about to compile the kernels apart: `convert-loop-to-llvm` then plans the batch's
    calls from the costs the kernels' bodies gave, not from their declarations."""
    for function in batched_entries(module):
        function.attributes[BATCH_COST_ATTR] = FloatAttr(
            entry_cost(module, function, lanes, cache_bytes), f64)


def batch_costs(module: ModuleOp, lanes: int, cache_bytes: int) -> dict[str, float]:
    """The cost of one call of each batched entry of `module`: its `dlc.batch_cost` (taken
    off the function), else its `entry_cost`."""
    costs = {}
    for function in batched_entries(module):
        attr = function.attributes.pop(BATCH_COST_ATTR, None)
        costs[function.sym_name.data] = (
            attr.value.data if isinstance(attr, FloatAttr)
            else entry_cost(module, function, lanes, cache_bytes))
    return costs


@dataclass(frozen=True)
class TailCall:
    """One call of a batch's rows left after its whole blocks: the entry of `rows` rows (1:
    the row entry) on as many rows; or, the last call of a tail, on fewer rows left: `padded`,
    the rows copied into a scratch block; `shifted`, the last `rows` rows of the batch, whose
    first ones the calls before computed (a block's rows are independent: computing them
    again writes their values again), with no copy."""

    rows: int
    padded: bool = False
    shifted: bool = False


def tail_plans(costs: Mapping[int, float], block_rows: int, padding_cost: float = 0.0,
               shifted: bool = False) -> list[tuple[TailCall, ...]]:
    """The cheapest calls for each count of rows left after the whole blocks of `block_rows`
    (0 to `block_rows` - 1), given what a call of each entry costs (`costs`, by rows; 1 the
    row entry) and what padding a row of a block costs (`padding_cost`: its copies). Whole
    entries first, largest first, then at most one padded block, or with `shifted` (a tail
    after at least one whole block, so that every entry's rows fit before the batch's end)
    one shifted block; ties go to fewer calls (so with costs proportional to the rows: the
    largest entries that fit, and no padding)."""
    best: list[tuple[float, tuple[TailCall, ...]]] = [(0.0, ())]
    for left in range(1, block_rows):
        options = []
        for rows, cost in sorted(costs.items(), reverse=True):
            if rows <= left:
                rest, calls = best[left - rows]
                options.append((cost + rest, (TailCall(rows), *calls)))
            elif shifted:
                options.append((cost, (TailCall(rows, shifted=True),)))
            elif rows > 1:
                options.append((cost + padding_cost * rows, (TailCall(rows, padded=True),)))
        best.append(min(options, key=lambda option: (option[0], len(option[1]))))
    return [calls for _, calls in best]


def _declare(module: ModuleOp, name: str, function_type: llvm.LLVMFunctionType) -> None:
    """Declare the libc function `name` in `module` unless it is."""
    if not is_declared(module, name):
        module.body.block.add_op(
            llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external")))


def declare_scratch_functions(module: ModuleOp) -> None:
    """The libc functions a padded tail calls: aligned_alloc, memcpy, free."""
    ptr = llvm.LLVMPointerType()
    _declare(module, "aligned_alloc", llvm.LLVMFunctionType([i64, i64], ptr))
    _declare(module, "memcpy", llvm.LLVMFunctionType([ptr, ptr, i64], ptr))
    _declare(module, "free", llvm.LLVMFunctionType([ptr], llvm.LLVMVoidType()))


def _copy(block: Block, destination: SSAValue, source: SSAValue, size: SSAValue) -> None:
    block.add_op(llvm.CallOp("memcpy", destination, source, size,
                             return_type=llvm.LLVMPointerType()))


def _padded_tail(signature: FunctionSignature, block_rows: int, n: SSAValue,
                 arguments: list[SSAValue], steps: list[int], done: Block, rows_head: Block
                 ) -> list[Block]:
    """The blocks running the rows from their first one's argument to `n` (fewer than
    `block_rows`) as one padded block, ending by branching to `done`; where the scratch
    buffer cannot be allocated, to `rows_head` instead (the rows one at a time)."""
    entry = Block(arg_types=[i64])
    first = entry.args[0]
    rows = llvm.SubOp(n, first)
    entry.add_op(rows)
    offsets, total = [], 0
    for step in steps:
        offsets.append(total)
        total += -(-step * block_rows // SCRATCH_ALIGNMENT) * SCRATCH_ALIGNMENT if step else 0
    alignment, size = int_constant(SCRATCH_ALIGNMENT, i64), int_constant(total, i64)
    scratch = llvm.CallOp("aligned_alloc", alignment, size, return_type=llvm.LLVMPointerType())
    address, null = llvm.PtrToIntOp(scratch.results[0], i64), int_constant(0, i64)
    failed = _compare(address.output, null.result, llvm.ICmpPredicateFlag.EQ)
    copy_in = Block()
    entry.add_ops([alignment, size, scratch, address, null, failed,
                   llvm.CondBrOp(failed.res, rows_head, [first], copy_in, [])])
    buffer = scratch.results[0]
    block_of_entry, entry = entry, copy_in
    first_output = len(arguments) - signature.num_outputs
    pointers: list[SSAValue] = []
    sources: list[tuple[SSAValue, int]] = []  # (scratch block, row bytes) of each input
    for index, (argument, step, offset) in enumerate(zip(arguments, steps, offsets, strict=True)):
        if not step:
            pointers.append(argument)
            continue
        caller, row_size = _row_at(entry, argument, first, step)
        local = _offset(entry, buffer, offset)
        pointers.append(local)
        if index < first_output:
            length = llvm.MulOp(rows.res, row_size)
            entry.add_op(length)
            _copy(entry, local, caller, length.res)
            sources.append((local, step))
    # Rows rows .. block_rows - 1 of each batched input repeat its last row.
    fill_head, fill_body, run = Block(arg_types=[i64]), Block(arg_types=[i64]), Block()
    entry.add_op(llvm.BrOp(fill_head, rows.res))
    limit = int_constant(block_rows, i64)
    more = _compare(fill_head.args[0], limit.result, llvm.ICmpPredicateFlag.ULT)
    fill_head.add_ops([limit, more, llvm.CondBrOp(more.res, fill_body, [fill_head.args[0]],
                                                   run, [])])
    one = int_constant(1, i64)
    fill_body.add_op(one)
    last = llvm.SubOp(rows.res, one.result)
    fill_body.add_op(last)
    for local, step in sources:
        target, row_size = _row_at(fill_body, local, fill_body.args[0], step)
        _copy(fill_body, target, _row_at(fill_body, local, last.res, step)[0], row_size)
    following = llvm.AddOp(fill_body.args[0], one.result)
    fill_body.add_ops([following, llvm.BrOp(fill_head, following.res)])
    run.add_op(llvm.CallOp(f"{signature.name}{BATCH_BLOCK_SUFFIX}{block_rows}", *pointers))
    for index in range(first_output, len(arguments)):
        if not steps[index]:
            continue
        target, row_size = _row_at(run, arguments[index], first, steps[index])
        length = llvm.MulOp(rows.res, row_size)
        run.add_op(length)
        _copy(run, target, pointers[index], length.res)
    run.add_ops([llvm.CallOp("free", buffer), llvm.BrOp(done)])
    return [block_of_entry, copy_in, fill_head, fill_body, run]


def _entry_name(signature: FunctionSignature, rows: int) -> str:
    return signature.name if rows == 1 else f"{signature.name}{BATCH_BLOCK_SUFFIX}{rows}"


def batch_entry(signature: FunctionSignature, block_rows: int | None,
                plans: Sequence[tuple[TailCall, ...]] = (),
                after_blocks: Sequence[tuple[TailCall, ...]] = ()) -> llvm.FuncOp:
    """`@<entry>__batch(i64 n, ptr...)` for the entry `signature` with batched arguments, with
    the block entry `<entry>__rows<block_rows>` when there is one. `plans[r]` (`tail_plans`)
    are the calls that run r rows left of a batch smaller than a block, `after_blocks[r]`
    those after one or more whole blocks; without one, the rows run one at a time through
    the row entry (as they do when a padded block's scratch cannot be allocated; the module
    must then declare `declare_scratch_functions`')."""
    pointer = llvm.LLVMPointerType()
    steps = [_row_bytes(a.shape, a.dtype) if a.batch else 0 for a in signature.arguments]
    entry = Block(arg_types=[i64] + [pointer] * len(steps))
    n, *arguments = entry.args
    zero = int_constant(0, i64)
    entry.add_op(zero)
    rows_head = Block(arg_types=[i64])
    rows_body = Block(arg_types=[i64])
    done = Block([llvm.ReturnOp()])
    blocks = [entry]
    if block_rows is not None:
        head, body = Block(arg_types=[i64]), Block(arg_types=[i64])
        entry.add_op(llvm.BrOp(head, zero.result))
        k = int_constant(block_rows, i64)
        end = llvm.AddOp(head.args[0], k.result)
        fits = _compare(end.res, n, llvm.ICmpPredicateFlag.ULE)
        tails = _Tails(signature, n, arguments, steps, rows_head, done)
        first = tails.after(plans, after_blocks)
        head.add_ops([k, end, fits, llvm.CondBrOp(fits.res, body, [head.args[0]], first,
                                                   [head.args[0]])])
        _calls(body, _entry_name(signature, block_rows), body.args[0], arguments, steps)
        k2 = int_constant(block_rows, i64)
        after = llvm.AddOp(body.args[0], k2.result)
        body.add_ops([k2, after, llvm.BrOp(head, after.res)])
        blocks += [head, body, *tails.blocks]
    else:
        entry.add_op(llvm.BrOp(rows_head, zero.result))
    more = _compare(rows_head.args[0], n, llvm.ICmpPredicateFlag.ULT)
    rows_head.add_ops([more, llvm.CondBrOp(more.res, rows_body, [rows_head.args[0]], done, [])])
    _calls(rows_body, signature.name, rows_body.args[0], arguments, steps)
    one = int_constant(1, i64)
    following = llvm.AddOp(rows_body.args[0], one.result)
    rows_body.add_ops([one, following, llvm.BrOp(rows_head, following.res)])
    blocks += [rows_head, rows_body, done]
    n.name_hint = "n"
    return llvm.FuncOp(
        f"{signature.name}{BATCH_ENTRY_SUFFIX}",
        llvm.LLVMFunctionType([i64] + [pointer] * len(steps), llvm.LLVMVoidType()),
        linkage=llvm.LinkageAttr("external"),
        body=Region(blocks),
        extra_attrs={BATCH_ENTRY_ATTR: UnitAttr()},
    )


@dataclass
class _Tails:
    """Builds the blocks that run the rows left after the whole blocks (`blocks`, in order)."""

    signature: FunctionSignature
    n: SSAValue
    arguments: list[SSAValue]
    steps: list[int]
    rows_head: Block
    done: Block

    def __post_init__(self) -> None:
        self.blocks: list[Block] = []
        self.padded: dict[int, list[Block]] = {}

    def after(self, plans: Sequence[tuple[TailCall, ...]],
              after_blocks: Sequence[tuple[TailCall, ...]]) -> Block:
        """The block (taking the first row left) that runs the rest by `plans` when no whole
        block ran (the first row is 0), else by `after_blocks`."""
        alone = self.chain(plans)
        later = alone if list(after_blocks) == list(plans) else self.chain(after_blocks)
        if alone is later:
            return alone
        start = Block(arg_types=[i64])
        zero = int_constant(0, i64)
        none_ran = _compare(start.args[0], zero.result, llvm.ICmpPredicateFlag.EQ)
        start.add_ops([zero, none_ran, llvm.CondBrOp(none_ran.res, alone, [start.args[0]],
                                                      later, [start.args[0]])])
        self.blocks.insert(0, start)
        for blocks in self.padded.values():
            self.blocks += blocks
        self.padded.clear()
        return start

    def chain(self, plans: Sequence[tuple[TailCall, ...]]) -> Block:
        """A block branching on the count of rows left to the calls of its plan; a count
        whose plan is rows one at a time (or that has none) to `rows_head`, which is returned
        when every plan is."""
        planned = [(left, calls) for left, calls in enumerate(plans)
                   if left and any(call.rows > 1 for call in calls)]
        if not planned:
            return self.rows_head
        start = Block(arg_types=[i64])
        remaining = llvm.SubOp(self.n, start.args[0])
        start.add_op(remaining)
        self.blocks.append(start)
        test = start
        for left, calls in planned:
            run, otherwise = Block(arg_types=[i64]), Block(arg_types=[i64])
            count = int_constant(left, i64)
            equal = _compare(remaining.res, count.result, llvm.ICmpPredicateFlag.EQ)
            test.add_ops([count, equal, llvm.CondBrOp(equal.res, run, [test.args[0]],
                                                       otherwise, [test.args[0]])])
            self.calls(run, calls)
            self.blocks += [run, otherwise]
            test = otherwise
        test.add_op(llvm.BrOp(self.rows_head, test.args[0]))
        return start

    def calls(self, run: Block, calls: tuple[TailCall, ...]) -> None:
        """Appends to `run` (whose argument is the first row left) the calls of a plan."""
        row = run.args[0]
        for call in calls:
            name = _entry_name(self.signature, call.rows)
            if call.padded:
                if call.rows not in self.padded:
                    self.padded[call.rows] = _padded_tail(
                        self.signature, call.rows, self.n, self.arguments, self.steps,
                        self.done, self.rows_head)
                run.add_op(llvm.BrOp(self.padded[call.rows][0], row))
                return
            if call.shifted:
                rows = int_constant(call.rows, i64)
                last = llvm.SubOp(self.n, rows.result)
                run.add_ops([rows, last])
                _calls(run, name, last.res, self.arguments, self.steps)
                break
            _calls(run, name, row, self.arguments, self.steps)
            rows = int_constant(call.rows, i64)
            following = llvm.AddOp(row, rows.result)
            run.add_ops([rows, following])
            row = following.res
        run.add_op(llvm.BrOp(self.done))


def _calls_reading(module: ModuleOp, entry: func.FuncOp
                   ) -> list[tuple[func.FuncOp | None, dict[str, int]]]:
    """Each call `entry` makes: its callee (None when `module` does not define it) and the
    constant globals it reads (passed as arguments, or read in the callee's body), with their
    bytes."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    calls: list[tuple[func.FuncOp | None, dict[str, int]]] = []
    for op in entry.walk():
        if not isinstance(op, func.CallOp):
            continue
        callee = functions.get(op.callee.string_value())
        reads = [a.owner for a in op.arguments if isinstance(a.owner, memref.GetGlobalOp)]
        reads += [o for o in callee.walk() if isinstance(o, memref.GetGlobalOp)] if callee else []
        calls.append((callee, {read.name_.root_reference.data: _bytes(read.memref.type)
                               for read in reads}))
    return calls


def entry_constants(module: ModuleOp, entry: func.FuncOp) -> dict[str, int]:
    """The constant globals `entry` and the kernels it calls read, with their bytes."""
    constants: dict[str, int] = {}
    for _, read in _calls_reading(module, entry):
        constants.update(read)
    return constants


def batch_plans(costs: Mapping[int, float], constants: Mapping[int, Mapping[str, int]],
                cache_bytes: int, padding_cost: float = 0.0
                ) -> tuple[list[tuple[TailCall, ...]], list[tuple[TailCall, ...]]]:
    """The tail plans (`tail_plans`) of a batch entry whose entries, by rows (1: the row
    entry, the largest: the block entry of the whole blocks), cost `costs` and read
    `constants` (`entry_constants`): for a batch smaller than a block, padded; after whole
    blocks, shifted, each entry that reads constants the block entry does not also costing
    reading those again (`weight_cost`) when together they exceed `cache_bytes`: each call
    evicts the other's from the L2 (an MLP's 9 rows as a block of 8 and a row, whose weights
    are packed for one row: 0.10 ms, against 0.08 for two blocks of 8)."""
    block = max(costs)
    blocks_read = constants.get(block, {})
    after = {}
    for rows, cost in costs.items():
        read = constants.get(rows, {})
        together = sum({**blocks_read, **read}.values())
        others = sum(size for name, size in read.items() if name not in blocks_read)
        after[rows] = cost + (weight_cost(others, 0) if weight_cost(together, cache_bytes)
                              else 0.0)
    return (tail_plans(costs, block, padding_cost),
            tail_plans(after, block, shifted=True))


def batch_entries(signatures: list[FunctionSignature], costs: dict[str, float] | None = None,
                  constants: dict[str, dict[str, int]] | None = None, cache_bytes: int = 0
                  ) -> list[llvm.FuncOp]:
    """The batch entry of each row entry among `signatures` (those with batched arguments
    of one row, `ArgumentSpec.batch` without `dim_args`, that are not the block entry of
    another), its largest block entry run on the whole
    blocks; `costs` (`entry_cost` of each entry, taken before lowering) plan the rows left
    (`batch_plans`, with `constants`, `entry_constants` of each, and the L2's `cache_bytes`;
    without the cost of every entry, whole entries only, largest first)."""
    names = {s.name for s in signatures}
    costs, constants = costs or {}, constants or {}
    functions = []
    for signature in signatures:
        if not any(a.batch for a in signature.arguments) or signature.dim_args:
            continue  # no batch, or runtime rows (the entry takes the batch's size itself)
        if is_block_entry(signature.name, names):
            continue
        prefix = f"{signature.name}{BATCH_BLOCK_SUFFIX}"
        sizes = [1] + sorted(int(name.removeprefix(prefix)) for name in names
                             if name.startswith(prefix) and name.removeprefix(prefix).isdigit())
        if len(sizes) == 1:
            functions.append(batch_entry(signature, None))
            continue
        block = sizes[-1]
        entry_costs = {rows: costs.get(_entry_name(signature, rows)) for rows in sizes}
        if None in entry_costs.values():
            linear = tail_plans({rows: float(rows) for rows in sizes}, block)
            functions.append(batch_entry(signature, block, linear, linear))
            continue
        padding = sum(_row_bytes(a.shape, a.dtype) for a in signature.arguments if a.batch)
        read = {rows: constants.get(_entry_name(signature, rows), {}) for rows in sizes}
        plans, after = batch_plans(entry_costs, read, cache_bytes,  # type: ignore[arg-type]
                                   padding)
        functions.append(batch_entry(signature, block, plans, after))
    return functions


def has_padded_tail(entry: llvm.FuncOp) -> bool:
    """Whether the batch entry `entry` runs a tail as a padded block (calls `memcpy`)."""
    return any(isinstance(op, llvm.CallOp) and op.callee.string_value() == "memcpy"
               for op in entry.walk())
