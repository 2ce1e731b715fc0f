"""The `-t llvm` target: llvm-dialect IR -> LLVM IR text for a CPU (mlir-translate
--mlir-to-llvmir).

Printing only: the module must already be in the llvm dialect (`convert-loop-to-llvm`). The text
carries the `target triple` and `target datalayout` of the module's target (its `dlc.target`,
which `convert-loop-to-llvm` sets; else `dlc.target.DEFAULT_CPU_TARGET`), and every defined
function carries its `"target-cpu"`, `"prefer-vector-width"` and, where `-mattr` changes the
CPU's features, `"target-features"`, so that LLVM uses the vector units the target has. It never
asks the host. It parses and verifies in llvmlite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

import llvmlite.ir as ir
import numpy as np
from dlc.dialects.contracts import (
    BUFFER_RELEASE,
    BUFFER_TAKE,
    ROWS_BUFFER_RELEASE,
    ROWS_BUFFER_TAKE,
    UNROLL_FULL_ATTR,
)
from dlc.dialects.target_attr import op_target
from dlc.target import DEFAULT_CPU_TARGET, CpuTarget, parse_cpu_target
from xdsl.backend.llvm.convert import convert_module
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target


def module_cpu_target(module: ModuleOp) -> CpuTarget:
    """The CPU target an llvm-dialect module was lowered for: its `dlc.target` (which
    `convert-loop-to-llvm` sets), else `dlc.target.DEFAULT_CPU_TARGET`."""
    return op_target(module, parse_cpu_target, DEFAULT_CPU_TARGET)


def _check_llvm_dialect(module: ModuleOp) -> None:
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp | llvm.GlobalOp):
            raise DiagnosticException(
                f"'{op.name}' op expected only llvm.func and llvm.mlir.global at the top level "
                "of a module printed as LLVM IR (run convert-loop-to-llvm first)"
            )


def emit_llvm_ir(module: ModuleOp) -> str:
    """The LLVM IR text of an llvm-dialect `module`, for the target it was lowered for
    (`module_cpu_target`)."""
    target = module_cpu_target(module)
    _check_llvm_dialect(module)
    # Dense initializers are printed here as raw bytes; xDSL's translation would build one
    # llvmlite constant per element (seconds per million weights), so it does not see them.
    dense = {
        op: op.properties.pop("value")
        for op in module.ops
        if isinstance(op, llvm.GlobalOp) and isinstance(op.value, DenseIntOrFPElementsAttr)
    }
    try:
        ir_module = convert_module(
            module, fallback_target_triple=target.triple, data_layout=target.data_layout
        )
    except NotImplementedError as e:
        raise DiagnosticException(f"cannot print the module as LLVM IR: {e}") from None
    finally:
        for op, value in dense.items():
            op.properties["value"] = value

    define_buffer_cache(ir_module)
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            _finish_global(op, ir_module.get_global(op.sym_name.data))
        elif isinstance(op, llvm.FuncOp):
            _annotate_loops(op, ir_module)
    attributes = [
        f'"target-cpu"="{target.cpu}"',
        f'"prefer-vector-width"="{target.vector_bits}"',
    ]
    if target.mattr:
        attributes.append(f'"target-features"="{target.llvm_features}"')
    for function in ir_module.functions:
        if function.is_declaration:
            continue
        for attribute in attributes:
            # llvmlite only accepts enum attributes by name; string attributes go in as text.
            set.add(function.attributes, attribute)
    text = str(ir_module)
    return text if text.endswith("\n") else text + "\n"


def define_buffer_cache(ir_module: ir.Module) -> None:
    """Defines `dlc_buffer_take` and `dlc_buffer_release` (internal: each module has its own)
    where `ir_module` declares them (`rewrites.llvm_lowering.memref.cached_heap_allocate`): the
    llvm dialect has no atomic instructions, so their bodies are written here, in LLVM IR.

        ptr take(ptr slot, i64 align, i64 size):
            cached = atomicrmw xchg slot, 0 acquire
            return cached ? cached : aligned_alloc(align, size)
        void release(ptr slot, ptr buffer):
            (_, stored) = cmpxchg slot, 0, buffer acq_rel monotonic
            if (!stored) free(buffer)
    """
    take = ir_module.globals.get(BUFFER_TAKE)
    release = ir_module.globals.get(BUFFER_RELEASE)
    if isinstance(take, ir.Function) and take.is_declaration:
        slot, alignment, size = take.args
        index = alignment.type
        take.linkage = "internal"
        builder = ir.IRBuilder(take.append_basic_block("entry"))
        cached = builder.atomic_rmw("xchg", slot, ir.Constant(index, 0), "acquire")
        hit = builder.icmp_unsigned("!=", cached, ir.Constant(index, 0))
        with builder.if_then(hit, likely=True):
            builder.ret(builder.inttoptr(cached, take.return_value.type))
        builder.ret(builder.call(ir_module.get_global("aligned_alloc"), [alignment, size]))
    if isinstance(release, ir.Function) and release.is_declaration:
        slot, buffer = release.args
        release.linkage = "internal"
        builder = ir.IRBuilder(release.append_basic_block("entry"))
        index = ir.IntType(64)
        take_type = ir_module.globals.get(BUFFER_TAKE)
        if isinstance(take_type, ir.Function):
            index = take_type.args[1].type
        value = builder.ptrtoint(buffer, index)
        exchanged = builder.cmpxchg(slot, ir.Constant(index, 0), value, "acq_rel", "monotonic")
        stored = builder.extract_value(exchanged, 1)
        with builder.if_then(builder.not_(stored), likely=False):
            builder.call(ir_module.get_global("free"), [buffer])
        builder.ret_void()
    _define_rows_buffer_cache(ir_module)


def _define_rows_buffer_cache(ir_module: ir.Module) -> None:
    """Defines `dlc_rows_buffer_take` and `dlc_rows_buffer_release` where `ir_module` declares
    them (buffers of runtime size; `ROWS_BUFFER_TAKE`): a buffer is `align` bytes into its
    allocation, its capacity stored in the 8 bytes before it.

        ptr take(ptr slot, i64 align, i64 size):
            cached = atomicrmw xchg slot, 0 acquire
            if cached:
                if load(cached - 8) >= size: return cached
                free(cached - align)
            base = aligned_alloc(align, round_up(align + size, align))
            store size, base + align - 8
            return base + align
        void release(ptr slot, ptr buffer, i64 align):
            (_, stored) = cmpxchg slot, 0, buffer acq_rel monotonic
            if (!stored) free(buffer - align)
    """
    take = ir_module.globals.get(ROWS_BUFFER_TAKE)
    release = ir_module.globals.get(ROWS_BUFFER_RELEASE)
    byte = ir.IntType(8)
    if isinstance(take, ir.Function) and take.is_declaration:
        slot, alignment, size = take.args
        index = alignment.type
        take.linkage = "internal"
        builder = ir.IRBuilder(take.append_basic_block("entry"))
        free = ir_module.get_global("free")
        cached = builder.atomic_rmw("xchg", slot, ir.Constant(index, 0), "acquire")
        hit = builder.icmp_unsigned("!=", cached, ir.Constant(index, 0))
        with builder.if_then(hit, likely=True):
            pointer = builder.inttoptr(cached, take.return_value.type)
            header = builder.gep(pointer, [ir.Constant(index, -8)], source_etype=byte)
            capacity = builder.load(header, typ=index, align=8)
            with builder.if_then(builder.icmp_unsigned(">=", capacity, size), likely=True):
                builder.ret(pointer)
            base = builder.gep(pointer, [builder.neg(alignment)], source_etype=byte)
            builder.call(free, [base])
        padded = builder.add(builder.add(size, alignment), builder.sub(alignment,
                                                                       ir.Constant(index, 1)))
        rounded = builder.and_(padded, builder.neg(alignment))
        base = builder.call(ir_module.get_global("aligned_alloc"), [alignment, rounded])
        pointer = builder.gep(base, [alignment], source_etype=byte)
        header = builder.gep(pointer, [ir.Constant(index, -8)], source_etype=byte)
        builder.store(size, header, align=8)
        builder.ret(pointer)
    if isinstance(release, ir.Function) and release.is_declaration:
        slot, buffer, alignment = release.args
        index = alignment.type
        release.linkage = "internal"
        builder = ir.IRBuilder(release.append_basic_block("entry"))
        value = builder.ptrtoint(buffer, index)
        exchanged = builder.cmpxchg(slot, ir.Constant(index, 0), value, "acq_rel", "monotonic")
        stored = builder.extract_value(exchanged, 1)
        with builder.if_then(builder.not_(stored), likely=False):
            base = builder.gep(buffer, [builder.neg(alignment)], source_etype=byte)
            builder.call(ir_module.get_global("free"), [base])
        builder.ret_void()


def _finish_global(op: llvm.GlobalOp, variable: ir.GlobalValue) -> None:
    """Fix what the xDSL translation leaves for a global with an initializer: the default
    linkage is spelled by omission, alignment is kept, and dense data goes in as raw bytes (one
    string literal instead of a constant per element)."""
    assert isinstance(variable, ir.GlobalVariable)
    if variable.linkage == "external" and op.value is not None:
        variable.linkage = ""
    if op.alignment is not None:
        variable.align = op.alignment.value.data
    if isinstance(op.value, DenseIntOrFPElementsAttr):
        raw = bytes(op.value.data.data)
        byte_array = ir.ArrayType(ir.IntType(8), len(raw))
        variable.value_type = byte_array
        variable.initializer = ir.FormattedConstant(byte_array, f'c"{llvm_string_literal(raw)}"')


class _LoopID(ir.values.MDValue):
    """A loop's `!llvm.loop` node: `distinct !{!self, <properties>...}` (LLVM reads a loop's
    properties only from a node whose first operand is the node itself, which llvmlite's
    `add_metadata` cannot build)."""

    def descr(self, buf: list[str]) -> None:
        operands = ", ".join([self.get_reference(), *(o.get_reference() for o in self.operands)])
        buf += (f"distinct !{{ {operands} }}", "\n")


def _annotate_loops(op: llvm.FuncOp, ir_module: ir.Module) -> None:
    """Attaches `!llvm.loop` metadata asking for a full unroll to the back edges that carry
    `UNROLL_FULL_ATTR` (the translation makes one LLVM block per block, in order)."""
    marked = [
        index for index, block in enumerate(op.body.blocks)
        if block.last_op is not None and UNROLL_FULL_ATTR in block.last_op.attributes
    ]
    if not marked:
        return
    function = ir_module.get_global(op.sym_name.data)
    assert isinstance(function, ir.Function)
    full = ir_module.add_metadata([ir.MetaDataString(ir_module, "llvm.loop.unroll.full")])
    for index in marked:
        loop_id = _LoopID(ir_module, [full], name=str(len(ir_module.metadata)))
        function.blocks[index].terminator.set_metadata("llvm.loop", loop_id)


_ESCAPES = np.array(
    [chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\{b:02X}" for b in range(256)],
    dtype=object,
)
"""Each byte as it appears in an LLVM string literal: printable ASCII as is, else `\\XX`."""


def llvm_string_literal(data: bytes) -> str:
    """The body of LLVM's `c"..."` literal for `data` (vectorized: weights run to megabytes)."""
    return "".join(_ESCAPES[np.frombuffer(data, dtype=np.uint8)])


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """`-t llvm`: print an llvm-dialect module as LLVM IR text for its target CPU."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_llvm_ir(module))
