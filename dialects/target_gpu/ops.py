"""The `target_gpu` dialect's operations: GPU kernels, their launches, thread ids, shared memory.

Counterpart: MLIR's `gpu` dialect (gpu.module, gpu.func with gpu.kernel, gpu.launch_func,
gpu.thread_id, gpu.barrier) and TVM's device functions after `split_host_device`. Kernel bodies
are written with `loop` ops (for, load, store, alloc local), `arith`/`math`, and the ops below.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.loop.ops import AllocatesResult
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    i64,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

DIMENSIONS: tuple[str, ...] = ("x", "y", "z")
"""The dimensions of a grid or a thread block."""

SHARED_MEMORY_SPACE = IntegerAttr(3, i64)
"""The memref memory space of GPU shared memory (NVVM's address space 3; OpenCL's `__local`):
`memref<32x32xf32, 3>`. Memrefs without a memory space are global memory."""


def shared_memref_type(shape: Sequence[int], element_type: Attribute) -> MemRefType:
    """The type of a shared-memory buffer: `memref<shape x element_type, 3>`."""
    return MemRefType(element_type, shape, memory_space=SHARED_MEMORY_SPACE)


def is_shared_memref(memref_type: Attribute) -> bool:
    """Whether `memref_type` is a memref in GPU shared memory (memory space 3)."""
    if not isinstance(memref_type, MemRefType):
        return False
    space = memref_type.memory_space
    return isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE.value.data


def _is_kernel_argument_type(arg_type: Attribute) -> bool:
    scalar_types = (IndexType, IntegerType, BFloat16Type, Float16Type, Float32Type, Float64Type)
    return isinstance(arg_type, (MemRefType, *scalar_types))


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """A named container of kernels: the unit compiled for the device.

    Semantics: a symbol table (and a symbol) whose single block holds `target_gpu.kernel` ops
    (and anything else the device code needs); it is isolated from above and has no terminator.
    The `-t ptx` and `-t opencl` emitters print each module as one PTX module or one OpenCL
    program; launches name a kernel in it as `@module::@kernel`.

    Example:
        target_gpu.module @kernels {
          target_gpu.kernel @fill(%out: memref<64xf32>, %v: f32) {
            %t = target_gpu.thread_id "x"
            loop.store %v, %out[%t] : f32 -> memref<64xf32>
            target_gpu.return
          }
        }
    """

    name = "target_gpu.module"

    sym_name = prop_def(SymbolNameConstraint())
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable())

    assembly_format = "$sym_name attr-dict-with-keyword $body"

    def __init__(self, sym_name: str | StringAttr, body: Region | Sequence[Operation] = ()) -> None:
        if not isinstance(body, Region):
            body = Region(Block(body))
        name = sym_name if isinstance(sym_name, StringAttr) else StringAttr(sym_name)
        super().__init__(properties={"sym_name": name}, regions=[body])


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A GPU kernel: a function run by every thread of a grid of thread blocks.

    Semantics: `sym_name` names it (a symbol); `function_type` has memref and scalar (index,
    integer, float) inputs and no results: kernels communicate only by writing buffers. The body's
    entry block takes the arguments; each path ends with `target_gpu.return`. Each thread reads
    its coordinates with `target_gpu.thread_id`/`block_id` and the launch's sizes with
    `block_dim`/`grid_dim`. The body is isolated from above.

    Example:
        target_gpu.kernel @fill(%out: memref<64xf32>, %v: f32) {
          %t = target_gpu.thread_id "x"
          loop.store %v, %out[%t] : f32 -> memref<64xf32>
          target_gpu.return
        }
    """

    name = "target_gpu.kernel"

    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    body = region_def()

    traits = lazy_traits_def(lambda: (IsolatedFromAbove(), SymbolOpInterface()))

    def __init__(
        self,
        sym_name: str | StringAttr,
        function_type: FunctionType | Sequence[Attribute],
        body: Region | Block | None = None,
    ) -> None:
        if not isinstance(function_type, FunctionType):
            function_type = FunctionType.from_lists(list(function_type), [])
        if body is None:
            body = Block(arg_types=function_type.inputs)
        name = sym_name if isinstance(sym_name, StringAttr) else StringAttr(sym_name)
        super().__init__(
            properties={"sym_name": name, "function_type": function_type},
            regions=[body if isinstance(body, Region) else Region(body)],
        )

    @property
    def args(self) -> tuple[SSAValue, ...]:
        """The kernel's arguments (the entry block's arguments)."""
        return tuple(self.body.block.args)

    def verify_(self) -> None:
        function_type = self.function_type
        if function_type.outputs.data:
            raise VerifyException(
                f"'{self.name}' op expected no results in @{self.sym_name.data}, found "
                f"{len(function_type.outputs.data)}"
            )
        for index, arg_type in enumerate(function_type.inputs.data):
            if not _is_kernel_argument_type(arg_type):
                raise VerifyException(
                    f"'{self.name}' op expected argument {index} of @{self.sym_name.data} to be "
                    f"a memref or a scalar, found {arg_type}"
                )
        if not self.body.blocks:
            raise VerifyException(
                f"'{self.name}' op expected a body in @{self.sym_name.data}, found none"
            )
        block_types = tuple(arg.type for arg in self.body.block.args)
        if block_types != function_type.inputs.data:
            raise VerifyException(
                f"'{self.name}' op expected the entry block arguments of @{self.sym_name.data} "
                f"to have the function's input types, found ("
                + ", ".join(str(t) for t in block_types) + ")"
            )

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            reserved_attr_names=("sym_name", "function_type"),
        )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, inputs, outputs, region, extra_attributes, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        op = cls(name, FunctionType.from_lists(inputs, outputs), region)
        if extra_attributes is not None:
            op.attributes |= extra_attributes.data
        return op


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends the execution of a kernel's thread.

    Semantics: the terminator of a `target_gpu.kernel`'s blocks; no operands.

    Example:
        target_gpu.return
    """

    name = "target_gpu.return"

    traits = traits_def(IsTerminator(), HasParent(KernelOp), Pure())

    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Launches a kernel on a grid of thread blocks (host side).

    Semantics: runs the kernel named by `kernel` (a symbol reference, `@k` or `@module::@k`) once
    per thread of a `grid_x * grid_y * grid_z` grid of blocks of `block_x * block_y * block_z`
    threads (all `index` values; unused dimensions are 1), passing `args`, which must match the
    kernel's arguments in number and type. `dynamic_shared_memory` (optional, `index`) is the
    number of bytes of shared memory to reserve per block beyond the kernel's static
    `target_gpu.shared_alloc`s. The launch completes before the next op runs. When the symbol
    names a `target_gpu.kernel`, the arguments are checked against its type; the symbol must
    resolve.

    Example:
        target_gpu.launch @m::@k grid(%g, %o, %o) block(%b, %o, %o) args(%x : memref<8xf32>)
        target_gpu.launch @m::@e grid(%g, %o, %o) block(%b, %o, %o) args() dynamic_shared_memory %s
    """

    name = "target_gpu.launch"

    kernel = prop_def(SymbolRefAttr)

    grid_x = operand_def(IndexType)
    grid_y = operand_def(IndexType)
    grid_z = operand_def(IndexType)
    block_x = operand_def(IndexType)
    block_y = operand_def(IndexType)
    block_z = operand_def(IndexType)
    args = var_operand_def()
    dynamic_shared_memory = opt_operand_def(IndexType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$kernel `grid` `(` $grid_x `,` $grid_y `,` $grid_z `)` "
        "`block` `(` $block_x `,` $block_y `,` $block_z `)` "
        "`args` `(` ($args^ `:` type($args))? `)` "
        "(`dynamic_shared_memory` $dynamic_shared_memory^)? attr-dict"
    )

    def __init__(
        self,
        kernel: str | SymbolRefAttr,
        grid: Sequence[SSAValue | Operation],
        block: Sequence[SSAValue | Operation],
        args: Sequence[SSAValue | Operation] = (),
        dynamic_shared_memory: SSAValue | Operation | None = None,
    ) -> None:
        if len(grid) != 3 or len(block) != 3:
            raise ValueError(
                f"target_gpu.launch needs 3 grid and 3 block sizes, got {len(grid)} and "
                f"{len(block)}"
            )
        if isinstance(kernel, str):
            module, _, name = kernel.rpartition("::")
            kernel = SymbolRefAttr(module, [name]) if module else SymbolRefAttr(name)
        shared = [] if dynamic_shared_memory is None else [dynamic_shared_memory]
        super().__init__(operands=[*grid, *block, args, shared], properties={"kernel": kernel})

    @property
    def grid(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The grid size (in blocks) along x, y, z."""
        return self.grid_x, self.grid_y, self.grid_z

    @property
    def block(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The block size (in threads) along x, y, z."""
        return self.block_x, self.block_y, self.block_z

    def _kernel_text(self) -> str:
        return "::".join(
            ["@" + self.kernel.root_reference.data]
            + ["@" + ref.data for ref in self.kernel.nested_references.data]
        )

    def verify_(self) -> None:
        try:
            callee = SymbolTable.lookup_symbol(self, self.kernel)
        except ValueError:
            callee = None
        if callee is None:
            raise VerifyException(
                f"'{self.name}' op expected {self._kernel_text()} to name a kernel, found no "
                "such symbol"
            )
        if not isinstance(callee, KernelOp):
            return  # e.g. a kernel already lowered to llvm.func: the lowering checked it
        expected = callee.function_type.inputs.data
        if len(self.args) != len(expected):
            raise VerifyException(
                f"'{self.name}' op expected {len(expected)} arguments for "
                f"{self._kernel_text()}, found {len(self.args)}"
            )
        for index, (arg, arg_type) in enumerate(zip(self.args, expected, strict=True)):
            if arg.type != arg_type:
                raise VerifyException(
                    f"'{self.name}' op expected argument {index} of {self._kernel_text()} to "
                    f"have type {arg_type}, found {arg.type}"
                )


# ----------------------------------------------------------------------------------------------
# Thread and block coordinates
# ----------------------------------------------------------------------------------------------


class _DimensionOp(IRDLOperation):
    """The shape shared by thread_id, block_id, block_dim and grid_dim."""

    dimension = prop_def(StringAttr)
    result = result_def(IndexType())

    traits = traits_def(Pure())

    assembly_format = "$dimension attr-dict"

    def __init__(self, dimension: str | StringAttr) -> None:
        attr = dimension if isinstance(dimension, StringAttr) else StringAttr(dimension)
        super().__init__(properties={"dimension": attr}, result_types=[IndexType()])

    def verify_(self) -> None:
        if self.dimension.data not in DIMENSIONS:
            raise VerifyException(
                f"'{self.name}' op expected dimension to be one of x, y, z, found "
                f"'{self.dimension.data}'"
            )


@irdl_op_definition
class ThreadIdOp(_DimensionOp):
    """The index of the current thread within its block along one dimension.

    Semantics: `threadIdx.<dimension>` in CUDA, `get_local_id(0|1|2)` in OpenCL; an `index` in
    `[0, block_dim)`. Meaningful only inside a kernel.

    Example:
        %t = target_gpu.thread_id "x"
    """

    name = "target_gpu.thread_id"


@irdl_op_definition
class BlockIdOp(_DimensionOp):
    """The index of the current thread's block within the grid along one dimension.

    Semantics: `blockIdx.<dimension>` in CUDA, `get_group_id(0|1|2)` in OpenCL; an `index` in
    `[0, grid_dim)`. Meaningful only inside a kernel.

    Example:
        %b = target_gpu.block_id "y"
    """

    name = "target_gpu.block_id"


@irdl_op_definition
class BlockDimOp(_DimensionOp):
    """The number of threads in a block along one dimension.

    Semantics: `blockDim.<dimension>` in CUDA, `get_local_size(0|1|2)` in OpenCL: the launch's
    block size. Meaningful only inside a kernel.

    Example:
        %n = target_gpu.block_dim "z"
    """

    name = "target_gpu.block_dim"


@irdl_op_definition
class GridDimOp(_DimensionOp):
    """The number of blocks in the grid along one dimension.

    Semantics: `gridDim.<dimension>` in CUDA, `get_num_groups(0|1|2)` in OpenCL: the launch's
    grid size. Meaningful only inside a kernel.

    Example:
        %g = target_gpu.grid_dim "x"
    """

    name = "target_gpu.grid_dim"


# ----------------------------------------------------------------------------------------------
# Synchronisation and shared memory
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Waits until every thread of the block reaches this point.

    Semantics: `__syncthreads()` in CUDA, `barrier(CLK_LOCAL_MEM_FENCE)` in OpenCL: writes to
    shared memory before it are visible to every thread of the block after it. Every thread of
    the block must reach the same barrier (else undefined). It has unknown memory effects, so it
    is neither removed nor moved.

    Example:
        target_gpu.barrier
    """

    name = "target_gpu.barrier"

    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


@irdl_op_definition
class SharedAllocOp(IRDLOperation):
    """Allocates a buffer in GPU shared memory, one copy per thread block.

    Semantics: the result is a memref with a static shape in memory space 3
    (`memref<32x32xf32, 3>`, see `shared_memref_type`), uninitialised, live for the whole kernel
    and shared by the threads of a block. Its size is static; the launch's
    `dynamic_shared_memory` is separate.

    Example:
        %tile = target_gpu.shared_alloc : memref<32x32xf32, 3>
    """

    name = "target_gpu.shared_alloc"

    result = result_def(MemRefType)

    traits = traits_def(AllocatesResult())

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, memref_type: MemRefType) -> None:
        super().__init__(result_types=[memref_type])

    def verify_(self) -> None:
        memref_type = self.result.type
        assert isinstance(memref_type, MemRefType)
        if not is_shared_memref(memref_type):
            raise VerifyException(
                f"'{self.name}' op expected a memref in memory space 3 (shared), found "
                f"{memref_type}"
            )
        if any(dim < 0 for dim in memref_type.get_shape()):
            raise VerifyException(
                f"'{self.name}' op expected a static shape, found {memref_type}"
            )
