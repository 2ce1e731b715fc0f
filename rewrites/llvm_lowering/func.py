"""`func` -> `llvm` with the bare-pointer calling convention (MLIR's FuncToLLVM,
`use-bare-ptr-memref-call-conv`).

A `func.func` becomes an `llvm.func` whose memref arguments are `!llvm.ptr`s and whose index
arguments are i64; it returns nothing or one value. Public functions get external linkage,
private ones internal. Entry functions (those carrying `dlc.num_outputs`) may declare their
pointer arguments `noalias`: the runtime passes freshly allocated outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    convert_block_arguments,
    lowered_operands,
    lowering_error,
    replace_with_lowered,
)
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, UnitAttr
from xdsl.ir import Attribute, Region
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern


def lowered_function_type(
    op: func.FuncOp, lowering: LLVMLowering
) -> llvm.LLVMFunctionType:
    """The `llvm.func` type of `op`'s signature."""
    inputs = [lowering.convert_type(t) for t in op.function_type.inputs]
    outputs = op.function_type.outputs.data
    if len(outputs) > 1:
        raise lowering_error(
            op, f"expected at most one result in @{op.sym_name.data}, found {len(outputs)}"
        )
    result: Attribute = lowering.convert_type(outputs[0]) if outputs else llvm.LLVMVoidType()
    return llvm.LLVMFunctionType(inputs, result)


@dataclass
class FuncLowering(RewritePattern):
    """`func.func` -> `llvm.func`; every block argument of the body gets its lowered type."""

    lowering: LLVMLowering
    noalias_entry_arguments: bool = True

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        function_type = lowered_function_type(op, self.lowering)
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        linkage = "internal" if private and op.body.blocks else "external"
        properties: dict[str, Attribute | None] = {}
        inputs = op.function_type.inputs.data
        if self.noalias_entry_arguments and NUM_OUTPUTS_ATTR in op.attributes:
            properties["arg_attrs"] = ArrayAttr(
                DictionaryAttr({"llvm.noalias": UnitAttr()} if isinstance(t, MemRefType) else {})
                for t in inputs
            )
        body = Region()
        op.body.move_blocks(body)
        for block in body.blocks:
            convert_block_arguments(block.args, self.lowering, rewriter)
        extra = {k: v for k, v in op.attributes.items() if k != "sym_visibility"}
        new_op = llvm.FuncOp(
            op.sym_name,
            function_type,
            linkage=llvm.LinkageAttr(linkage),
            body=body,
            other_props=properties,
            extra_attrs=extra,
        )
        rewriter.replace(op, [new_op], [])


@dataclass
class ReturnLowering(RewritePattern):
    """`func.return` -> `llvm.return`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        values = lowered_operands(op, self.lowering, rewriter)
        rewriter.replace(op, [llvm.ReturnOp(values[0] if values else None)], [])


@dataclass
class CallLowering(RewritePattern):
    """`func.call` -> `llvm.call`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        if len(op.res) > 1:
            raise lowering_error(op, f"expected at most one result, found {len(op.res)}")
        args = lowered_operands(op, self.lowering, rewriter)
        result_type = self.lowering.convert_type(op.res[0].type) if op.res else None
        call = llvm.CallOp(op.callee, *args, return_type=result_type)
        replace_with_lowered(op, [call], call.results, rewriter)


def func_to_llvm_patterns(
    lowering: LLVMLowering, noalias_entry_arguments: bool = True
) -> list[RewritePattern]:
    """The patterns that lower `func.func`, `func.call` and `func.return`."""
    return [
        FuncLowering(lowering, noalias_entry_arguments),
        ReturnLowering(lowering),
        CallLowering(lowering),
    ]
