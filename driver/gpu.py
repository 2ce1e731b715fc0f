"""Compile a lowered GPU module into what a GPU runtime loads: the kernels' source (PTX or OpenCL
C) and the plain-data host plan that launches them (`runtime.gpu_host.GpuProgram`).

Counterpart: TVM's `relay.build` for a GPU target (the device module's code plus the graph
executor's JSON). The module must have been lowered by the target's pipeline (`gpu-ptx`,
`gpu-opencl`): host functions of `arith.constant`s, `loop.alloc global`/`loop.dealloc`,
`memref.get_global`, `func.call`, `target_gpu.launch` and `func.return`, around the kernels.
`host_plan` walks the host functions once; the runtimes (`runtime.opencl`, `runtime.cuda`) then
need no compiler to run the program.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from dlc.dialects.arith_numpy import numpy_dtype
from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
from dlc.dialects.graph.ops import elements_to_array
from dlc.dialects.loop.ops import AllocOp, DeallocOp
from dlc.dialects.target_gpu.ops import LaunchOp
from dlc.runtime.gpu_host import (
    Alloc,
    Call,
    Free,
    GpuExecutable,
    GpuProgram,
    HostFunction,
    HostPlan,
    Launch,
    LaunchArgument,
    Scalar,
    Step,
    Weight,
)
from dlc.runtime.metadata import FunctionSignature
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

GPU_TARGETS: tuple[str, ...] = ("opencl", "cuda")
"""The targets `compile_for_device` builds for: OpenCL C (pyopencl), PTX (the CUDA driver)."""


def compile_for_device(
    module: ModuleOp,
    target: str,
    entry: str | None = None,
    *,
    arch: str | None = None,
    device: Any | None = None,
) -> GpuExecutable:
    """Emit the kernels of a lowered module, plan its host functions, and load the program on
    the target's runtime; the executable's `export` writes it as a GPU library.

    Args:
        module: a module lowered by the target's pipeline (`gpu-opencl`, `gpu-ptx`).
        target: `opencl` or `cuda`.
        entry: the entry function when the module has several.
        arch: the CUDA architecture of the PTX (default: the device's).
        device: the OpenCL device, or the CUDA device number (default: the first).

    Raises:
        DiagnosticException: the module cannot be printed or planned (the message names the op).
        ExecutableError: the runtime is missing or the device refuses the program.
    """
    from dlc.driver.gpu_library import export_gpu_library

    if target == "cuda":
        from dlc.runtime.cuda import device_arch, load_program, require_cuda

        number = 0 if device is None else int(device)
        require_cuda()
        program = gpu_program(module, target, arch or device_arch(number))
        executable = load_program(program, entry, number)
    else:
        from dlc.runtime.opencl import load_program as load_opencl

        program = gpu_program(module, target)
        executable = load_opencl(program, entry, device)
    executable.exporter = lambda path, c_prefix=None, c_header=None: export_gpu_library(
        program, path, c_prefix, c_header)
    return executable


def gpu_program(module: ModuleOp, target: str, arch: str | None = None) -> GpuProgram:
    """The kernels' source for `target` and the host plan of a lowered module."""
    return GpuProgram(target, kernel_source(module, target, arch), host_plan(module))


def kernel_source(module: ModuleOp, target: str, arch: str | None = None) -> str:
    """The kernels of a lowered module as OpenCL C (`opencl`) or PTX (`cuda`) for `arch`
    (default: the architecture each kernel module was lowered for)."""
    if target == "opencl":
        from dlc.codegen.opencl import emit_opencl

        return emit_opencl(module)
    if target == "cuda":
        from dlc.codegen.ptx import emit_ptx

        return emit_ptx(module, arch or "")
    raise DiagnosticException(
        f"expected a GPU target among {', '.join(GPU_TARGETS)}, found '{target}'"
    )


def host_plan(module: ModuleOp) -> HostPlan:
    """The host functions of a lowered module as steps, the constant arrays they read, and the
    signatures of its entry functions."""
    from dlc.rewrites.convert_loop_to_llvm import entry_signature
    from dlc.rewrites.llvm_lowering.common import LLVMLowering

    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    globals_ = {op.sym_name.data: op for op in module.ops if isinstance(op, memref.GlobalOp)}
    constants: dict[str, np.ndarray] = {}
    planned = {f.sym_name.data: _FunctionPlanner(f, globals_, constants).plan() for f in functions}
    signatures: dict[str, FunctionSignature] = {
        f.sym_name.data: entry_signature(f, LLVMLowering())
        for f in functions
        if NUM_OUTPUTS_ATTR in f.attributes and f.sym_visibility != StringAttr("private")
    }
    return HostPlan(planned, constants, signatures)


def nbytes(memref_type: MemRefType) -> int:
    """The size in bytes of a row-major memref."""
    count = int(np.prod(memref_type.get_shape(), dtype=np.int64))
    return count * numpy_dtype(memref_type.get_element_type()).itemsize


class _FunctionPlanner:
    """Translates one host function into steps over slots (its arguments first)."""

    def __init__(
        self,
        function: func.FuncOp,
        globals_: dict[str, memref.GlobalOp],
        constants: dict[str, np.ndarray],
    ) -> None:
        self.function = function
        self.globals = globals_
        self.constants = constants
        self.slots: dict[SSAValue, int] = {a: i for i, a in enumerate(function.body.block.args)}
        self.scalars: dict[SSAValue, int | float] = {}
        self.steps: list[Step] = []

    def plan(self) -> HostFunction:
        for op in self.function.body.block.ops:
            self._plan(op)
        return HostFunction(self.function.sym_name.data, len(self.function.body.block.args),
                            tuple(self.steps))

    def _plan(self, op: Operation) -> None:  # noqa: C901 - one case per host op
        if isinstance(op, arith.ConstantOp):
            if not isinstance(op.value, IntegerAttr | FloatAttr):
                raise _error(op, f"of {op.result.type} is not supported on the host")
            self.scalars[op.result] = op.value.value.data
        elif isinstance(op, AllocOp):
            assert isinstance(op.result.type, MemRefType)
            self.steps.append(Alloc(self._new_slot(op.result), nbytes(op.result.type)))
        elif isinstance(op, DeallocOp):
            self.steps.append(Free(self._slot(op.memref)))
        elif isinstance(op, memref.GetGlobalOp):
            name = self._constant(op)
            self.steps.append(Weight(self._new_slot(op.memref), name))
        elif isinstance(op, LaunchOp):
            self.steps.append(self._launch(op))
        elif isinstance(op, func.CallOp):
            if op.results:
                raise _error(op, "with results is not supported on the host")
            self.steps.append(Call(op.callee.string_value(),
                                   tuple(self._slot(a) for a in op.arguments)))
        elif isinstance(op, func.ReturnOp):
            if op.arguments:
                raise _error(op, "with values is not supported on the host")
        else:
            raise _error(
                op,
                "is not supported in a host function of a GPU module (expected constants, "
                "loop.alloc/dealloc, memref.get_global, func.call, target_gpu.launch; were all "
                "loop nests outlined by convert-loop-to-target-gpu?)",
            )

    def _new_slot(self, value: SSAValue) -> int:
        self.slots[value] = len(self.slots)
        return self.slots[value]

    def _slot(self, value: SSAValue) -> int:
        """The slot of `value`; a constant gets one (a `Scalar` step) where first needed."""
        if value not in self.slots:
            self.steps.append(Scalar(self._new_slot(value), self.scalars[value]))
        return self.slots[value]

    def _constant(self, op: memref.GetGlobalOp) -> str:
        name = op.name_.string_value()
        global_op = self.globals.get(name)
        if global_op is None or not isinstance(global_op.initial_value, DenseIntOrFPElementsAttr):
            raise _error(op, f"expected an initialized memref.global @{name}, found none")
        if name not in self.constants:
            self.constants[name] = np.ascontiguousarray(
                elements_to_array(global_op.initial_value, global_op.name))
        return name

    def _launch(self, op: LaunchOp) -> Launch:
        reference = op.kernel
        nested = reference.nested_references.data
        kernel = nested[-1].data if nested else reference.root_reference.data
        sizes = []
        for value in (*op.grid, *op.block):
            size = self.scalars.get(value)
            if not isinstance(size, int):
                raise _error(op, "expected constant grid and block sizes, found one that is not")
            sizes.append(size)
        arguments = tuple(
            LaunchArgument(self._slot(a), None if isinstance(a.type, MemRefType)
                           else numpy_dtype(a.type).name)
            for a in op.args
        )
        return Launch(kernel, (sizes[0], sizes[1], sizes[2]), (sizes[3], sizes[4], sizes[5]),
                      arguments)


def _error(op: Operation, message: str) -> DiagnosticException:
    return DiagnosticException(f"'{op.name}' op {message}")
