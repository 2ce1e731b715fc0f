"""The `transform.loop` ops: schedule primitives as transform-dialect ops, and dlc's `transform`.

`TransformLoop` lists dlc's `transform.loop.*` ops. Op lookup goes by the text before the first
dot, so these ops are parsed through the dialect named `transform`: `transform_dialect()` is
xDSL's upstream transform dialect with dlc's ops added (and its `transform.param.constant`
replaced by one with MLIR's custom syntax); dlc-opt registers it under "transform".
"""

from dlc.dialects.transform_loop.ops import (
    ApplyRulesOp,
    BindOp,
    BlockRowsOp,
    CacheReadOp,
    CacheWriteOp,
    ComputeAtOp,
    ComputeInlineOp,
    DecomposeReductionOp,
    FuseOp,
    GetLoopsOp,
    MatchBlockOp,
    MatchLoopOp,
    PackOp,
    ParallelOp,
    ParamConstantOp,
    ReorderOp,
    ReverseComputeAtOp,
    SplitOp,
    SplitPeeledOp,
    TensorizeOp,
    TileOp,
    UnrollOp,
    VectorizeOp,
)
from xdsl.ir import Dialect

__all__ = [
    "ApplyRulesOp",
    "BindOp",
    "BlockRowsOp",
    "CacheReadOp",
    "CacheWriteOp",
    "ComputeAtOp",
    "ComputeInlineOp",
    "DecomposeReductionOp",
    "FuseOp",
    "GetLoopsOp",
    "MatchBlockOp",
    "MatchLoopOp",
    "PackOp",
    "ParallelOp",
    "ParamConstantOp",
    "ReorderOp",
    "ReverseComputeAtOp",
    "SplitOp",
    "SplitPeeledOp",
    "TensorizeOp",
    "TileOp",
    "TransformLoop",
    "UnrollOp",
    "VectorizeOp",
    "transform_dialect",
]

TransformLoop = Dialect(
    "transform.loop",
    [
        # matching
        MatchBlockOp,
        GetLoopsOp,
        MatchLoopOp,
        # loop structure
        SplitOp,
        SplitPeeledOp,
        BlockRowsOp,
        ReorderOp,
        TileOp,
        FuseOp,
        UnrollOp,
        # how a loop runs
        VectorizeOp,
        ParallelOp,
        BindOp,
        # blocks and buffers
        DecomposeReductionOp,
        ComputeInlineOp,
        CacheReadOp,
        CacheWriteOp,
        PackOp,
        ApplyRulesOp,
        ComputeAtOp,
        ReverseComputeAtOp,
        # tensor intrinsics
        TensorizeOp,
    ],
    [],
)
"""dlc's schedule primitives as `transform.loop.*` ops (registered through `transform`)."""


def transform_dialect() -> Dialect:
    """xDSL's `transform` dialect plus dlc's `transform.loop` ops, under the name "transform"."""
    from xdsl.dialects.transform import Transform

    upstream = [op for op in Transform.operations if op.name != ParamConstantOp.name]
    return Dialect(
        "transform",
        [*upstream, ParamConstantOp, *TransformLoop.operations],
        list(Transform.attributes),
    )
