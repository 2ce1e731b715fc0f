"""The `-t llvm` target: llvm-dialect IR -> LLVM IR text for the host CPU (mlir-translate
--mlir-to-llvmir).

Printing only: the module must already be in the llvm dialect (`convert-loop-to-llvm`). The text
carries the host's `target triple` and `target datalayout`, and every defined function carries
`"target-cpu"`, `"target-features"` and `"prefer-vector-width"` of the host, so that LLVM uses
the vector units the machine has (AVX-512 here). It parses and verifies in llvmlite.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import IO

import llvmlite.ir as ir
import numpy as np
from dlc.dialects.contracts import UNROLL_FULL_ATTR
from xdsl.backend.llvm.convert import convert_module
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target


@dataclass(frozen=True)
class HostTarget:
    """What LLVM needs to know about the machine code is generated for.

    Attributes:
        triple: the target triple (`x86_64-unknown-linux-gnu`).
        data_layout: the target's data layout string.
        cpu: the CPU name (`znver4`, `skylake-avx512`, ...).
        features: the CPU features, LLVM style (`+avx512f,+fma,...`).
        vector_width: the widest vector register in bits (512 with AVX-512, 256 with AVX, else
            128), given to LLVM as `prefer-vector-width`.
        vector_registers: how many vector registers the ISA has (32 with AVX-512, else 16).
    """

    triple: str
    data_layout: str
    cpu: str
    features: str
    vector_width: int
    vector_registers: int


def _vector_width(features: str) -> int:
    enabled = set(features.split(","))
    if "+avx512f" in enabled:
        return 512
    if "+avx" in enabled:
        return 256
    return 128


def vector_registers(vector_width: int) -> int:
    """The vector registers of an x86 ISA whose widest vectors are `vector_width` bits: 32 with
    AVX-512, 16 with AVX/AVX2 and SSE."""
    return 32 if vector_width >= 512 else 16


@functools.cache
def host_target() -> HostTarget:
    """The host CPU, as llvmlite sees it (computed once per process)."""
    import llvmlite.binding as binding

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    triple = binding.get_process_triple()
    cpu = binding.get_host_cpu_name()
    features = binding.get_host_cpu_features().flatten()
    machine = binding.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features
    )
    width = _vector_width(features)
    return HostTarget(
        triple, str(machine.target_data), cpu, features, width, vector_registers(width)
    )


def _check_llvm_dialect(module: ModuleOp) -> None:
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp | llvm.GlobalOp):
            raise DiagnosticException(
                f"'{op.name}' op expected only llvm.func and llvm.mlir.global at the top level "
                "of a module printed as LLVM IR (run convert-loop-to-llvm first)"
            )


def emit_llvm_ir(module: ModuleOp, target: HostTarget | None = None) -> str:
    """The LLVM IR text of an llvm-dialect `module`, for `target` (default: the host)."""
    target = target or host_target()
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

    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            _finish_global(op, ir_module.get_global(op.sym_name.data))
        elif isinstance(op, llvm.FuncOp):
            _annotate_loops(op, ir_module)
    attributes = (
        f'"target-cpu"="{target.cpu}"',
        f'"target-features"="{target.features}"',
        f'"prefer-vector-width"="{target.vector_width}"',
    )
    for function in ir_module.functions:
        if function.is_declaration:
            continue
        for attribute in attributes:
            # llvmlite only accepts enum attributes by name; string attributes go in as text.
            set.add(function.attributes, attribute)
    text = str(ir_module)
    return text if text.endswith("\n") else text + "\n"


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
    """`-t llvm`: print an llvm-dialect module as LLVM IR text for the host CPU."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_llvm_ir(module))
