"""The native batch loop of an entry function with a dynamic batch (`dlc.batch_rows`).

`graph-batch-rows` compiles a model with a dynamic batch as an entry for one row (`@main`) and
one for blocks of k rows (`@main__rows<k>`). `@main__batch(i64 n, ptr...)`, added next to
them, runs a batch of `n` rows: the block entry on each whole block of k rows, then the r rows
left either one at a time through the row entry or, when the block entry costs less than r
calls of the row entry (`padded_tail_rows`: a model that reads its weights more than it
computes, as an MLP's matrix-vector products at one row), as one padded block: their rows of
the batched inputs copied into a scratch block of k rows (the last row repeated into the
others, so that no row computes on values the caller did not give), the block entry run on it,
and its first r rows of each batched output copied back. Each call gets its rows of the
batched buffers (the row's byte size times the row number added to the base pointer) and the
other buffers whole. It is the entry a C caller of an exported library calls with N, and the
one the Python runtime calls once per call.
"""

from __future__ import annotations

import math

import numpy as np
from dlc.dialects.contracts import BATCH_ENTRY_ATTR
from dlc.dialects.loop.ops import BlockOp, ForOp, IntrinsicOp
from dlc.rewrites.llvm_lowering.common import int_constant, is_declared
from dlc.rewrites.loop_plan_memory import buffer_bytes
from dlc.runtime.metadata import BATCH_BLOCK_SUFFIX, BATCH_ENTRY_SUFFIX, FunctionSignature
from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, UnitAttr, i8, i64
from xdsl.ir import Block, Region, SSAValue

WEIGHT_BYTE_COST = 0.5
"""What reading one byte of a constant (a weight) costs a kernel call, in the vector
instructions it could issue meanwhile (`entry_cost`). A calibration, on this Sapphire Rapids
guest (one thread, `benchmarks/dynamic_batch.py`): an MLP 784-512-512-10 (2.7 MB of weights)
ran one row in 0.10 ms and a block of 8 rows in 0.13 ms, ResNet-18 on 64x64 images (45 MB)
4.3 ms and 20.1 ms (4.7x, not 8x: its late convs, on 4x4 and 2x2 planes, do little work for
their weights at one row). With 0.5 the estimates are 1.0x and 6.4x, so a tail of 2 or more
rows of the MLP runs as a padded block (0.13 ms for 3 rows instead of 0.30) and of ResNet-18
only a tail of 7 (20 ms instead of 30); at 0.2 ResNet-18 would never pad, at 1.0 it would
from 5 rows (4.4x: right, but with no margin)."""

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
    instructions or `WEIGHT_BYTE_COST` per byte of the constants it reads
    (memref.get_global), whichever is more (a roofline per kernel), and the entry's
    arguments a byte each (reading and writing them). Constants that fit `cache_bytes` (a
    core's L2) together cost nothing: consecutive calls find them in the cache (a small
    transformer's 0.5 MB: its row calls are compute-bound, 6.5 of them to a block of 8)."""
    functions = {
        op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
    }
    calls: list[tuple[func.FuncOp, dict[str, int]]] = []
    for op in entry.walk():
        if not isinstance(op, func.CallOp):
            continue
        callee = functions.get(op.callee.string_value())
        if callee is None:
            continue
        reads = [a.owner for a in op.arguments if isinstance(a.owner, memref.GetGlobalOp)]
        reads += [o for o in callee.walk() if isinstance(o, memref.GetGlobalOp)]
        calls.append((callee, {read.name_.root_reference.data: _bytes(read.memref.type)
                               for read in reads}))
    everything: dict[str, int] = {}
    for _, constants in calls:
        everything.update(constants)
    byte_cost = WEIGHT_BYTE_COST if sum(everything.values()) > cache_bytes else 0.0
    cost = _work(entry, lanes) + sum(_bytes(arg.type) for arg in entry.args)
    for callee, constants in calls:
        cost += max(_work(callee, lanes), byte_cost * sum(constants.values()))
    return cost


def padded_tail_rows(row_cost: float, block_cost: float, block_rows: int) -> int | None:
    """The fewest rows left after the whole blocks that run as one padded block of
    `block_rows` rather than one row at a time: the least r whose r row calls cost more than
    the block call (None when no r below `block_rows` does)."""
    if row_cost <= 0:
        return None
    rows = math.floor(block_cost / row_cost) + 1
    return rows if rows < block_rows else None


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


def batch_entry(signature: FunctionSignature, block_rows: int | None,
                pad_from: int | None = None) -> llvm.FuncOp:
    """`@<entry>__batch(i64 n, ptr...)` for the entry `signature` with batched arguments, with
    the block entry `<entry>__rows<block_rows>` when there is one; with `pad_from`, a tail of
    at least that many rows runs as one padded block (`padded_tail_rows`; the module must
    declare `declare_scratch_functions`')."""
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
        after_blocks = rows_head
        if pad_from is not None:
            after_blocks = Block(arg_types=[i64])
            padded = _padded_tail(signature, block_rows, n, arguments, steps, done, rows_head)
            left = llvm.SubOp(n, after_blocks.args[0])
            least = int_constant(pad_from, i64)
            pads = _compare(left.res, least.result, llvm.ICmpPredicateFlag.UGE)
            after_blocks.add_ops([left, least, pads, llvm.CondBrOp(
                pads.res, padded[0], [after_blocks.args[0]], rows_head, [after_blocks.args[0]])])
        head.add_ops([k, end, fits, llvm.CondBrOp(fits.res, body, [head.args[0]], after_blocks,
                                                   [head.args[0]])])
        _calls(body, f"{signature.name}{BATCH_BLOCK_SUFFIX}{block_rows}", body.args[0],
               arguments, steps)
        k2 = int_constant(block_rows, i64)
        after = llvm.AddOp(body.args[0], k2.result)
        body.add_ops([k2, after, llvm.BrOp(head, after.res)])
        blocks += [head, body]
        if pad_from is not None:
            blocks += [after_blocks, *padded]
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


def batch_entries(signatures: list[FunctionSignature], costs: dict[str, float] | None = None
                  ) -> list[llvm.FuncOp]:
    """The batch entry of each row entry among `signatures` (those with batched arguments
    that are not the block entry of another); `costs` (`entry_cost` of each entry, taken
    before lowering) decides which tails run as a padded block (`padded_tail_rows`)."""
    names = {s.name for s in signatures}
    costs = costs or {}
    functions = []
    for signature in signatures:
        if not any(a.batch for a in signature.arguments):
            continue
        base, _, rows = signature.name.rpartition(BATCH_BLOCK_SUFFIX)
        if base in names and rows.isdigit():
            continue  # a block entry
        prefix = f"{signature.name}{BATCH_BLOCK_SUFFIX}"
        blocks = [int(name.removeprefix(prefix)) for name in names
                  if name.startswith(prefix) and name.removeprefix(prefix).isdigit()]
        block = max(blocks) if blocks else None
        pad_from = None
        if block is not None and signature.name in costs:
            pad_from = padded_tail_rows(costs[signature.name],
                                        costs.get(f"{prefix}{block}", math.inf), block)
        functions.append(batch_entry(signature, block, pad_from))
    return functions


def has_padded_tail(entry: llvm.FuncOp) -> bool:
    """Whether the batch entry `entry` runs a tail as a padded block (calls `memcpy`)."""
    return any(isinstance(op, llvm.CallOp) and op.callee.string_value() == "memcpy"
               for op in entry.walk())
