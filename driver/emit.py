"""Device code as text without running it (`dlc compile --emit`): a module lowered by the
target's pipeline, then printed by the target's emitter (`dlc.codegen`)."""

from __future__ import annotations

from dlc.dialects import make_context
from dlc.dialects.contracts import TARGET_ATTR
from dlc.pipelines import applicable, named_pipeline, run_pipeline, with_options
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.exceptions import DiagnosticException

DEVICE_CODE: dict[tuple[str, str], str] = {
    ("cuda", "ptx"): "gpu-ptx",
    ("cuda", "llvm"): "gpu-ptx",
    ("opencl", "opencl"): "gpu-opencl",
    ("llvm", "llvm"): "cpu",
}
"""(target, emit) pairs `emit_device_code` accepts, and the pipeline each lowers with."""


def emit_device_code(
    module: ModuleOp, target: str, emit: str, *, arch: str = "", lowered: bool = False,
    check_bounds: bool = False,
) -> str:
    """The device code of a module as text, without running anything (`dlc compile --emit`).

    Args:
        module: a module at any level (graph, tensor_expr, loop); not modified (a copy is
            lowered).
        target: `cuda` (NVIDIA GPUs), `opencl`, or `llvm` (a CPU: the module's `dlc.target`,
            which the caller sets, else `dlc.target.DEFAULT_CPU_TARGET`).
        emit: `ptx` (cuda), `opencl` (OpenCL C, opencl), or `llvm` (LLVM IR: the NVVM kernels
            for cuda, the host module for llvm).
        arch: the CUDA architecture of `ptx`/`llvm` for cuda (sm_80, sm_90; default: the
            module's `dlc.target`, else sm_80).
        lowered: the module is already lowered by the target's pipeline (print only).
        check_bounds: bounds-checked code (`convert-loop-to-llvm{check-bounds=true}`; CPU
            only).

    Raises:
        DiagnosticException: an unsupported (target, emit) pair, or a lowering error.
    """
    pipeline = DEVICE_CODE.get((target, emit))
    if pipeline is None:
        pairs = ", ".join(f"--target {t} --emit {e}" for t, e in DEVICE_CODE)
        raise DiagnosticException(
            f"expected one of {pairs}, found --target {target} --emit {emit}"
        )
    if check_bounds and target != "llvm":
        raise DiagnosticException(
            f"expected --target llvm or host with --check-bounds (bounds checks are CPU code), "
            f"found --target {target}"
        )
    copy = module.clone()
    if not lowered:
        if target == "cuda" and arch:
            copy.attributes[TARGET_ATTR] = StringAttr(f"cuda -arch={arch}")
        passes = applicable(copy, named_pipeline(pipeline))
        if check_bounds:
            passes = with_options(passes, check_bounds=True)
        run_pipeline(copy, passes, make_context())
    if emit == "ptx":
        from dlc.codegen.ptx import emit_ptx

        return emit_ptx(copy, arch)
    if emit == "opencl":
        from dlc.codegen.opencl import emit_opencl

        return emit_opencl(copy)
    if target == "cuda":
        from dlc.codegen.ptx import gpu_module_llvm_ir
        from dlc.dialects.target_gpu import ModuleOp as GpuModuleOp

        return "".join(gpu_module_llvm_ir(op) for op in copy.ops if isinstance(op, GpuModuleOp))
    from dlc.codegen.llvm import emit_llvm_ir

    return emit_llvm_ir(copy)

