"""The native batch loop of an entry function with a dynamic batch (`dlc.batch_rows`).

`graph-batch-rows` compiles a model with a dynamic batch as an entry for one row (`@main`) and
one for blocks of k rows (`@main__rows<k>`). `@main__batch(i64 n, ptr...)`, added next to
them, runs a batch of `n` rows: the block entry on each whole block of k rows, then the row
entry on the rows left, each call with its rows of the batched buffers (the row's byte size
times the row number added to the base pointer) and the other buffers whole. It is the entry a
C caller of an exported library calls with N, and the one the Python runtime calls once per
call.
"""

from __future__ import annotations

import math

import numpy as np
from dlc.dialects.contracts import BATCH_ENTRY_ATTR
from dlc.rewrites.llvm_lowering.common import int_constant
from dlc.runtime.metadata import BATCH_BLOCK_SUFFIX, BATCH_ENTRY_SUFFIX, FunctionSignature
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, UnitAttr, i8, i64
from xdsl.ir import Block, Region, SSAValue


def _row_bytes(shape: tuple[int, ...], dtype: str) -> int:
    itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
    return math.prod(shape[1:]) * itemsize


def _calls(block: Block, callee: str, row: SSAValue, arguments: list[SSAValue],
           steps: list[int]) -> None:
    """Appends to `block` the call of `callee` on the rows from `row` on."""
    pointers = []
    for argument, step in zip(arguments, steps, strict=True):
        if not step:
            pointers.append(argument)
            continue
        size = int_constant(step, i64)
        offset = llvm.MulOp(row, size.result)
        address = llvm.GEPOp(argument, [llvm.GEP_USE_SSA_VAL], i8, ssa_indices=[offset.res],
                             inbounds=True)
        block.add_ops([size, offset, address])
        pointers.append(address.result)
    block.add_op(llvm.CallOp(callee, *pointers))


def _compare(lhs: SSAValue, rhs: SSAValue, predicate: llvm.ICmpPredicateFlag) -> llvm.ICmpOp:
    return llvm.ICmpOp(lhs, rhs, IntegerAttr(predicate.to_int(), 64))


def batch_entry(signature: FunctionSignature, block_rows: int | None) -> llvm.FuncOp:
    """`@<entry>__batch(i64 n, ptr...)` for the entry `signature` with batched arguments, with
    the block entry `<entry>__rows<block_rows>` when there is one."""
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
        head.add_ops([k, end, fits, llvm.CondBrOp(fits.res, body, [head.args[0]], rows_head,
                                                   [head.args[0]])])
        _calls(body, f"{signature.name}{BATCH_BLOCK_SUFFIX}{block_rows}", body.args[0],
               arguments, steps)
        k2 = int_constant(block_rows, i64)
        after = llvm.AddOp(body.args[0], k2.result)
        body.add_ops([k2, after, llvm.BrOp(head, after.res)])
        blocks += [head, body]
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


def batch_entries(signatures: list[FunctionSignature]) -> list[llvm.FuncOp]:
    """The batch entry of each row entry among `signatures` (those with batched arguments
    that are not the block entry of another)."""
    names = {s.name for s in signatures}
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
        functions.append(batch_entry(signature, max(blocks) if blocks else None))
    return functions
