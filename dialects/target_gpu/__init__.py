"""The `target_gpu` dialect: GPU kernels and their launches, printed later as PTX or OpenCL C.

Layout of a module at this level: host functions (`func.func`, destination-passing style as in
the `loop` dialect) call `target_gpu.launch @kernels::@k grid(...) block(...) args(...)`; the
kernels live in a `target_gpu.module @kernels { target_gpu.kernel @k(...) { ... } }`. A kernel
takes memrefs (global memory) and scalars, and its body uses `loop` ops (for, load, store, alloc
local), `arith`/`math`, thread and block coordinates (`thread_id`, `block_id`, `block_dim`,
`grid_dim`, each with a dimension "x", "y" or "z"), `barrier`, and `shared_alloc`. Shared memory
is the memref memory space 3 (`memref<32x32xf32, 3>`, NVVM's address space for shared memory,
OpenCL's `__local`); memrefs without a memory space are global memory.
"""

from dlc.dialects.target_gpu.ops import (
    DIMENSIONS,
    SHARED_MEMORY_SPACE,
    BarrierOp,
    BlockDimOp,
    BlockIdOp,
    GridDimOp,
    KernelOp,
    LaunchOp,
    ModuleOp,
    ReturnOp,
    SharedAllocOp,
    ThreadIdOp,
    is_shared_memref,
    shared_memref_type,
)
from xdsl.ir import Dialect

__all__ = [
    "DIMENSIONS",
    "SHARED_MEMORY_SPACE",
    "BarrierOp",
    "BlockDimOp",
    "BlockIdOp",
    "GridDimOp",
    "KernelOp",
    "LaunchOp",
    "ModuleOp",
    "ReturnOp",
    "SharedAllocOp",
    "TargetGpu",
    "ThreadIdOp",
    "is_shared_memref",
    "shared_memref_type",
]

TargetGpu = Dialect(
    "target_gpu",
    [
        # kernels
        ModuleOp,
        KernelOp,
        ReturnOp,
        LaunchOp,
        # thread and block coordinates
        ThreadIdOp,
        BlockIdOp,
        BlockDimOp,
        GridDimOp,
        # synchronisation and shared memory
        BarrierOp,
        SharedAllocOp,
    ],
    [],
)
"""The `target_gpu` dialect: kernels, launches, thread ids, barriers and shared memory."""
