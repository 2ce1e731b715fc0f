"""Bounds checks for loads and stores (`convert-loop-to-llvm{check-bounds=true}`).

Counterpart: AddressSanitizer's inline checks, TVM's `instrument_bound_checkers`. Three steps:

1. Before any rewrite, `annotate_access_sites` tags every `loop`, `memref` and `vector` load
   and store with `dlc.bounds_site`: which buffer it touches (`buffer A (arg 0) in @kernel`), so
   that the report can name it after the buffer became a bare pointer and the loop was
   outlined or vectorized (the vectorizer copies the tag onto the accesses it makes).
2. Each load and store lowering calls `bounds_checks`: per dimension, `icmp ult index, size`
   (unsigned: a negative index fails too; a vector of N lanes along the last dimension checks
   `index ult size - N + 1`), each followed by a placeholder `llvm.call @dlc.bounds_check(ok,
   index, size)` carrying its message. An index that is a constant inside its dimension is not
   checked.
3. After the lowering, `expand_bounds_checks` splits the block at each placeholder into
   `llvm.cond_br ok, ^continue, ^report`, where `^report` writes the message (an internal
   global string) with `dprintf(2, message, index, size)` (unbuffered: nothing is lost to
   `abort`; libc only, so it works in the JIT and in an exported library alike) and calls
   `abort()`. The report is inline, not a helper function: kernels are compiled as separate
   units and linked, and the llvm dialect's function linkage does not reach LLVM IR.

Without the option nothing is tagged or emitted: the code is the same as before. With it,
LLVM deletes every check it proves redundant (affine indices over static shapes, which is most
of them), so the checks that remain are those of data-dependent indices (Gather, Resize).

The kernel and buffer names are the IR's: a model's kernels are `@dlc_kernel_<hash>` (`dlc
profile` maps them to ONNX nodes) and the compile cache and `loop-dedup-functions` identify
kernels by structure, not SSA names, so a buffer's name can be the one it had in the first
model compiled with that kernel; its argument number is always exact.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.loop.ops import RowsOp
from dlc.rewrites.llvm_lowering.common import LLVMLowering, constant_int_value, int_constant
from xdsl.dialects import func, llvm, memref, vector
from xdsl.dialects.builtin import (
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

BOUNDS_SITE_ATTR = "dlc.bounds_site"
"""On a load or store: `buffer <name> (arg N|local|global) in @<kernel>`."""

CHECK_CALLEE = "dlc.bounds_check"
"""The placeholder callee that `expand_bounds_checks` turns into a branch to the report."""

MESSAGE_ATTR = "dlc.bounds_message"
"""On a placeholder: the `dprintf` format of its report (`%lld` index, `%lld` size)."""

_VIEW_OPS = (
    memref.CastOp, memref.SubviewOp, memref.ExpandShapeOp, memref.CollapseShapeOp,
    memref.ReinterpretCastOp, RowsOp,
)


def _access_memref(op: Operation) -> SSAValue | None:
    from dlc.dialects.loop.ops import LoadOp, StoreOp

    if isinstance(op, LoadOp | StoreOp | memref.LoadOp | memref.StoreOp):
        return op.memref
    if isinstance(op, vector.LoadOp | vector.StoreOp):
        return op.base
    return None


def _buffer_name(value: SSAValue) -> str:
    """`A (arg 0)`, `tmp (local)`, `@w (global)`: the buffer `value` is (a view of)."""
    while isinstance(value.owner, _VIEW_OPS):
        value = value.owner.operands[0]
    if isinstance(value, BlockArgument):
        parent = value.block.parent_op()
        name = value.name_hint or f"arg{value.index}"
        if isinstance(parent, func.FuncOp) and value.block is parent.body.blocks[0]:
            return f"{name} (arg {value.index})"
        return name
    owner = value.owner
    if isinstance(owner, memref.GetGlobalOp):
        return f"@{owner.name_.root_reference.data} (global)"
    return f"{value.name_hint or 'tmp'} (local)"


def annotate_access_sites(module: ModuleOp) -> None:
    """Tags every load and store of `module` with `dlc.bounds_site` (see the module doc)."""
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        kernel = function.sym_name.data
        for op in function.walk():
            buffer = _access_memref(op)
            if buffer is not None and BOUNDS_SITE_ATTR not in op.attributes:
                site = f"buffer {_buffer_name(buffer)} in @{kernel}"
                op.attributes[BOUNDS_SITE_ATTR] = StringAttr(site)


def bounds_checks(
    op: Operation,
    memref_type: MemRefType,
    indices: Sequence[SSAValue],
    value_type: Attribute,
    lowering: LLVMLowering,
) -> list[Operation]:
    """The checks of the access `op` of `memref_type[indices]` (lowered indices) moving a
    `value_type` (a vector: its lanes run along the last dimension): nothing unless
    `lowering.check_bounds`."""
    if not lowering.check_bounds:
        return []
    kind = "store" if "store" in op.name else "load"
    lanes = value_type.get_shape()[0] if isinstance(value_type, VectorType) else 1
    site = op.attributes.get(BOUNDS_SITE_ATTR)
    where = site.data if isinstance(site, StringAttr) else "a buffer"
    shape = memref_type.get_shape()
    ops: list[Operation] = []
    for dim, (index, size) in enumerate(zip(indices, shape, strict=True)):
        width = lanes if dim == len(shape) - 1 else 1
        limit = size - width + 1
        constant = constant_int_value(index)
        if constant is not None and 0 <= constant < limit:
            continue
        what = f"{kind} of {width} lanes" if width > 1 else kind
        last = f" + {width - 1}" if width > 1 else ""
        context = f"{where}".replace("%", "%%")
        layout = f"{memref_type}".replace("%", "%%")
        message = (
            f"dlc: out-of-bounds {what} of {context}: index %lld{last} not in [0, %lld) "
            f"(dimension {dim} of {layout})\n"
        )
        bound = int_constant(max(limit, 0), lowering.index_type)
        ok = llvm.ICmpOp(
            index, bound.result, IntegerAttr(llvm.ICmpPredicateFlag.ULT.to_int(), 64)
        )
        reported = bound if width == 1 else int_constant(size, lowering.index_type)
        check = llvm.CallOp(CHECK_CALLEE, ok.res, index, reported.result)
        check.attributes[MESSAGE_ATTR] = StringAttr(message)
        ops += [bound, ok, *([reported] if reported is not bound else []), check]
    return ops


def expand_bounds_checks(module: ModuleOp) -> None:
    """Turns each placeholder check of the lowered `module` into a conditional branch to a
    block that reports the violation and aborts (see the module doc)."""
    checks = [
        op for op in module.walk()
        if isinstance(op, llvm.CallOp) and op.callee is not None
        and op.callee.string_value() == CHECK_CALLEE
    ]
    if not checks:
        return
    messages: dict[str, str] = {}
    for check in checks:
        text = check.attributes[MESSAGE_ATTR]
        assert isinstance(text, StringAttr)
        symbol = messages.setdefault(text.data, f"dlc_oob_message_{len(messages)}")
        block = check.parent_block()
        assert block is not None and block.parent is not None
        ok, index, size = check.args
        rest = check.next_op
        assert rest is not None, "a placeholder check is never a block's terminator"
        continuation = block.split_before(rest)
        address = llvm.AddressOfOp(symbol, llvm.LLVMPointerType())
        stderr = int_constant(2, i32)
        report = Block([
            address,
            stderr,
            llvm.CallOp(
                "dprintf", stderr.result, address.result, index, size, return_type=i32,
                variadic_args=2,
            ),
            llvm.CallOp("abort"),
            llvm.UnreachableOp(),
        ])
        block.parent.add_block(report)
        check.detach()
        check.erase()
        block.add_op(llvm.CondBrOp(ok, continuation, [], report, []))
    body = module.body.block
    for text, symbol in messages.items():
        data = text + "\0"
        body.add_op(llvm.GlobalOp(
            llvm.LLVMArrayType(len(data.encode()), IntegerType(8)), symbol, "internal",
            constant=True, value=StringAttr(data),
        ))
    _declare_libc(module)


def _declare_libc(module: ModuleOp) -> None:
    """Declares `int dprintf(int, const char *, ...)` and `void abort(void)` unless they are."""
    body = module.body.block
    declared = {op.sym_name.data for op in body.ops if isinstance(op, llvm.FuncOp)}
    if "dprintf" not in declared:
        body.add_op(llvm.FuncOp(
            "dprintf",
            llvm.LLVMFunctionType([i32, llvm.LLVMPointerType()], i32, is_variadic=True),
            linkage=llvm.LinkageAttr("external"),
        ))
    if "abort" not in declared:
        body.add_op(llvm.FuncOp(
            "abort", llvm.LLVMFunctionType([], llvm.LLVMVoidType()),
            linkage=llvm.LinkageAttr("external"),
        ))
