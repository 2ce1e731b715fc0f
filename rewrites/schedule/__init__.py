"""dlc's schedule primitives on loop-level IR (TVM's `tir.Schedule`), one module per primitive.

Each primitive takes payload ops (`ForOp`, `BlockOp`), checks all its preconditions before
changing anything (raising `ScheduleError` with what was expected and found), then rewrites the
IR in place. The `transform.loop.*` ops (dialects/transform_loop) call them through the
`loop-interpret-transforms` pass; Python code (the autotuner, default schedules) may call them
directly.
"""

from dlc.rewrites.schedule.cache import cache_read, cache_write
from dlc.rewrites.schedule.common import ScheduleError
from dlc.rewrites.schedule.compute_at import compute_at, reverse_compute_at
from dlc.rewrites.schedule.compute_inline import compute_inline, compute_inline_refusal
from dlc.rewrites.schedule.decompose_reduction import decompose_reduction
from dlc.rewrites.schedule.fuse import fuse
from dlc.rewrites.schedule.loop_kind import bind, parallel, vectorize
from dlc.rewrites.schedule.match import get_loops, match_blocks, match_loop
from dlc.rewrites.schedule.pack import pack
from dlc.rewrites.schedule.reorder import reorder
from dlc.rewrites.schedule.rows import block_rows
from dlc.rewrites.schedule.split import split, split_peeled
from dlc.rewrites.schedule.tensorize import match_intrinsic, tensorize
from dlc.rewrites.schedule.tile import tile
from dlc.rewrites.schedule.unroll import unroll

__all__ = [
    "ScheduleError",
    "bind",
    "block_rows",
    "cache_read",
    "cache_write",
    "compute_at",
    "compute_inline",
    "compute_inline_refusal",
    "decompose_reduction",
    "fuse",
    "get_loops",
    "match_blocks",
    "match_intrinsic",
    "match_loop",
    "pack",
    "parallel",
    "reorder",
    "reverse_compute_at",
    "split",
    "split_peeled",
    "tensorize",
    "tile",
    "unroll",
    "vectorize",
]
