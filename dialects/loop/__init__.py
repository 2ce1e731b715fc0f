"""The `loop` dialect: buffers, named loop nests and blocks; TVM's TensorIR level.

Buffers are builtin `memref<...>` values with static shapes, indexed row-major, or with a dynamic
leading dim (a runtime number of rows: row-major strides never use it). Functions at this
level are `func.func @f(%in0: memref<..>, ..., %out0: memref<..>)` returning nothing, in
destination-passing style: the lowering from `tensor_expr` (convert-tensor-expr-to-loop) marks each
with the discardable attribute `dlc.num_outputs = N : i64`, meaning that the last N arguments are
the outputs the function writes and the others are inputs it only reads; a function whose memrefs
have dynamic dims takes their sizes as trailing `index` arguments (`dlc.dim_args = K : i64`,
`dim_args` pairs them with the dims).

A loop nest is `loop.for` ops (each with an axis name and a kind: serial, parallel, vectorized,
unrolled, or bound to a GPU axis) around a `loop.block` that names one compute statement and
declares the buffers it reads and writes; inside it, `loop.load`/`loop.store` (scalar or vector)
and upstream `arith`/`math` ops. `loop.alloc` makes intermediate buffers with a storage scope
(global, local, shared), sized by operands for dynamic dims; `loop.rows` views consecutive rows
of a buffer as a buffer of static rows. GPU-only: `loop.intrinsic` (tensor intrinsics, warp-level
`mma.sync`), `loop.matrix_load` (`ldmatrix`) and `loop.async_copy`/`async_commit`/`async_wait`
(`cp.async`).
"""

from dlc.dialects.loop.ops import (
    ALLOC_SCOPES,
    LOOP_KINDS,
    THREAD_AXES,
    AllocatesResult,
    AllocOp,
    AsyncCommitOp,
    AsyncCopyOp,
    AsyncWaitOp,
    BlockOp,
    DeallocOp,
    ForOp,
    IntrinsicOp,
    LoadOp,
    MatrixLoadOp,
    PrefetchOp,
    RowsOp,
    StoreOp,
    YieldOp,
    dim_args,
)
from xdsl.ir import Dialect

__all__ = [
    "dim_args",
    "ALLOC_SCOPES",
    "LOOP_KINDS",
    "THREAD_AXES",
    "AllocatesResult",
    "AllocOp",
    "AsyncCommitOp",
    "AsyncCopyOp",
    "AsyncWaitOp",
    "BlockOp",
    "DeallocOp",
    "ForOp",
    "IntrinsicOp",
    "LoadOp",
    "Loop",
    "MatrixLoadOp",
    "PrefetchOp",
    "RowsOp",
    "StoreOp",
    "YieldOp",
]

Loop = Dialect(
    "loop",
    [
        # loops and blocks
        ForOp,
        BlockOp,
        YieldOp,
        # memory access
        LoadOp,
        StoreOp,
        PrefetchOp,
        MatrixLoadOp,
        AsyncCopyOp,
        AsyncCommitOp,
        AsyncWaitOp,
        # tensor intrinsics
        IntrinsicOp,
        # buffers
        AllocOp,
        DeallocOp,
        RowsOp,
    ],
    [],
)
"""The `loop` dialect: loop nests over buffers (TVM's TensorIR)."""
