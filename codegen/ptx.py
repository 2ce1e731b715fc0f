"""The `-t ptx` target: NVVM-lowered kernels -> PTX assembly through LLVM's NVPTX backend
(TVM's `codegen_nvptx`, MLIR's `gpu-module-to-binary` with the PTX format).

Printing only: the kernels must already be llvm-dialect functions (`target-gpu-lower-to-nvvm`).
Each `target_gpu.module` is translated to LLVM IR for `nvptx64-nvidia-cuda` (kernels get the
`ptx_kernel` calling convention), optimized at O3 for the chosen architecture, and printed as one
PTX module (`-t ptx{arch=sm_90}`; default: the architecture each `target_gpu.module` was lowered
for, its `dlc.target`, else sm_80). The PTX assembles with `ptxas -arch=<arch>`.
Host functions are not printed: the CUDA runtime (`runtime.cuda`) runs them.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import IO

from dlc.dialects.contracts import NVVM_KERNEL_ATTR, TARGET_ATTR
from dlc.dialects.target_attr import op_target
from dlc.dialects.target_gpu.ops import ModuleOp as GpuModuleOp
from dlc.target import (
    DEFAULT_CUDA_ARCH,
    DEFAULT_GPU_TARGET,
    NVPTX_TRIPLE,
    TargetError,
    cuda_target,
    parse_gpu_target,
)
from xdsl.backend.llvm.convert import convert_module
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

_llvm_lock = threading.Lock()


@functools.cache
def _initialize_nvptx() -> None:
    import llvmlite.binding as binding

    binding.initialize_all_targets()
    binding.initialize_all_asmprinters()


def nvptx_machine(arch: str, opt_level: int = 3):  # noqa: ANN201 - llvmlite TargetMachine
    """An LLVM TargetMachine for `nvptx64-nvidia-cuda` and the architecture `arch` (sm_80, ...)."""
    import llvmlite.binding as binding

    _initialize_nvptx()
    return binding.Target.from_triple(NVPTX_TRIPLE).create_target_machine(
        cpu=arch, features="", opt=opt_level
    )


def gpu_module_llvm_ir(gpu_module: GpuModuleOp) -> str:
    """The LLVM IR text of one lowered `target_gpu.module` (kernels are `ptx_kernel`s)."""
    inner = ModuleOp([])
    for op in gpu_module.body.block.ops:
        if not isinstance(op, llvm.FuncOp | llvm.GlobalOp):
            raise DiagnosticException(
                f"'{op.name}' op expected only llvm.func and llvm.mlir.global in a "
                f"target_gpu.module printed as PTX (run target-gpu-lower-to-nvvm first)"
            )
        inner.body.block.add_op(op.clone())
    try:
        ir_module = convert_module(inner, fallback_target_triple=NVPTX_TRIPLE)
    except NotImplementedError as e:
        raise DiagnosticException(f"cannot translate the kernels to LLVM IR: {e}") from None
    for op in gpu_module.body.block.ops:
        if isinstance(op, llvm.GlobalOp) and op.alignment is not None:
            ir_module.get_global(op.sym_name.data).align = op.alignment.value.data
    kernels = {
        op.sym_name.data for op in gpu_module.body.block.ops
        if isinstance(op, llvm.FuncOp) and NVVM_KERNEL_ATTR in op.attributes
    }
    for function in ir_module.functions:
        if function.name in kernels:
            function.calling_convention = "ptx_kernel"
    text = str(ir_module)
    return text if text.endswith("\n") else text + "\n"


def llvm_ir_to_ptx(llvm_ir: str, arch: str = DEFAULT_CUDA_ARCH, opt_level: int = 3) -> str:
    """PTX assembly of NVPTX LLVM IR, optimized at `opt_level`."""
    import llvmlite.binding as binding

    try:
        cuda_target(arch)
    except TargetError as e:
        raise DiagnosticException(str(e)) from None
    machine = nvptx_machine(arch, opt_level)
    with _llvm_lock:
        try:
            module = binding.parse_assembly(llvm_ir)
            module.verify()
        except RuntimeError as e:
            raise DiagnosticException(f"LLVM rejected the kernels' IR: {e}") from None
        module.triple = NVPTX_TRIPLE
        module.data_layout = str(machine.target_data)
        if opt_level > 0:
            options = binding.create_pipeline_tuning_options(speed_level=opt_level)
            builder = binding.create_pass_builder(machine, options)
            builder.getModulePassManager().run(module, builder)
        return machine.emit_assembly(module)


def kernels_arch(gpu_module: GpuModuleOp) -> str:
    """The CUDA architecture a lowered `target_gpu.module` is for: its `dlc.target`
    (`target-gpu-lower-to-nvvm` records it), else the default (sm_80)."""
    target = op_target(gpu_module, parse_gpu_target, DEFAULT_GPU_TARGET)
    if not target.is_cuda:
        raise DiagnosticException(
            f"'target_gpu.module' op expected {TARGET_ATTR} to name a CUDA target, found "
            f"'{target}'"
        )
    return target.arch


def emit_ptx(module: ModuleOp, arch: str = "", opt_level: int = 3) -> str:
    """The PTX of every `target_gpu.module` of `module` (one PTX module each, concatenated),
    for `arch` (default: each module's own, `kernels_arch`)."""
    gpu_modules = [op for op in module.ops if isinstance(op, GpuModuleOp)]
    if not gpu_modules:
        raise DiagnosticException(
            "expected a target_gpu.module of lowered kernels (run convert-loop-to-target-gpu "
            "and target-gpu-lower-to-nvvm first), found none"
        )
    texts = [llvm_ir_to_ptx(gpu_module_llvm_ir(m), arch or kernels_arch(m), opt_level)
             for m in gpu_modules]
    return "\n".join(texts)


@dataclass(frozen=True)
class PTXTarget(Target):
    """`-t ptx{arch=sm_80}`: print the module's kernels as PTX for an NVIDIA architecture
    (default: the one each `target_gpu.module` was lowered for)."""

    name = "ptx"

    arch: str = ""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_ptx(module, self.arch))
