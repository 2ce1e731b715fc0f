"""The pass `convert-memref-view-to-llvm`: `memref.view` -> a byte-offset `llvm.getelementptr`.

Counterpart: the `memref.view` pattern of MLIR's FinalizeMemRefToLLVM (bare-pointer convention).
A partial conversion in the MLIR manner: the view's operands and result cross into the llvm
dialect through `builtin.unrealized_conversion_cast`s, which `convert-loop-to-llvm` cancels
(`reconcile-unrealized-casts`) once it has lowered the ops around them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import IntegerType, MemRefType, ModuleOp, UnrealizedConversionCastOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


@dataclass
class ViewToPointerOffset(RewritePattern):
    """`%v = memref.view %buffer[%shift][] : memref<Nxi8> to memref<...xT>` ->
    `%p = llvm.getelementptr inbounds %buffer_ptr[%shift_i64] : (!llvm.ptr, iK) -> !llvm.ptr, i8`
    with casts from the operands' types and back to the view's type."""

    index_bitwidth: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ViewOp, rewriter: PatternRewriter) -> None:
        result_type = op.result.type
        assert isinstance(result_type, MemRefType)
        pointer = UnrealizedConversionCastOp.get([op.source], [llvm.LLVMPointerType()])
        shift = UnrealizedConversionCastOp.get([op.byte_shift], [IntegerType(self.index_bitwidth)])
        address = llvm.GEPOp(
            pointer.results[0],
            [llvm.GEP_USE_SSA_VAL],
            IntegerType(8),
            ssa_indices=[shift.results[0]],
            inbounds=True,
        )
        back = UnrealizedConversionCastOp.get([address.result], [result_type])
        back.results[0].name_hint = op.result.name_hint
        rewriter.replace(op, [pointer, shift, address, back])


@dataclass(frozen=True)
class ConvertMemrefViewToLLVMPass(ModulePass):
    """Lower every `memref.view` to pointer arithmetic in the llvm dialect.

    *Input invariant*: `memref.view`s of a 1-D `i8` buffer with a byte shift and a result of
    any shape (what `loop-plan-memory` makes: static, runtime rows, runtime sizes), anywhere in
    the module.

    *Output IR*: each view is `llvm.getelementptr inbounds %p[%shift] : (!llvm.ptr, i64) ->
    !llvm.ptr, i8` on the buffer's pointer, between `builtin.unrealized_conversion_cast`s from
    the buffer (memref -> !llvm.ptr) and the shift (index -> i64) and back to the view's memref
    type. Run `convert-loop-to-llvm` next: its lowering of the buffer and of the views' users
    cancels the casts.

    *Invariants*: no `memref.view` remains; the view's elements are at the same addresses (the
    buffer's pointer plus the shift in bytes, then row-major; the sizes, which `memref.view`'s
    verifier checks against the dynamic dims, do not enter the address).

    Options:
        index_bitwidth: the width of the integer `index` lowers to (the host's pointer width).
    """

    name: ClassVar[str] = "convert-memref-view-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            ViewToPointerOffset(self.index_bitwidth), apply_recursively=False
        ).rewrite_module(op)
