"""What one call of a model's entry costs, in the units both choices about a dynamic batch use:
which block entries `graph-batch-rows` compiles (`tails`) and which calls the native batch
loop makes for the rows of a call (`llvm_lowering.batch`).

A call costs its arithmetic, counted in vector instructions, or the reading of its weights,
whichever is more (a roofline per kernel). Weights that fit a core's L2 together cost nothing:
consecutive calls find them there.
"""

from __future__ import annotations

WEIGHT_BYTE_COST = 0.5
"""What reading one byte of a constant (a weight) costs a kernel call, in the vector
instructions it could issue meanwhile. A calibration, on a Sapphire Rapids guest (one thread,
`benchmarks/dynamic_batch.py`): an MLP 784-512-512-10 (2.7 MB of weights) ran one row in 0.10
ms and a block of 8 rows in 0.13 ms, ResNet-18 on 64x64 images (45 MB) 4.3 ms and 20.1 ms
(4.7x, not 8x: its late convs, on 4x4 and 2x2 planes, do little work for their weights at one
row). With 0.5 the estimates are 1.0x and 6.4x, so a tail of 2 or more rows of the MLP runs
as a padded block (0.13 ms for 3 rows instead of 0.30) and of ResNet-18 only a tail of 7 (20
ms instead of 30); at 0.2 ResNet-18 would never pad, at 1.0 it would from 5 rows (4.4x: right,
but with no margin)."""


def weight_cost(constant_bytes: int, cache_bytes: int) -> float:
    """What reading `constant_bytes` of weights costs one call (`WEIGHT_BYTE_COST` a byte), or
    nothing when they fit `cache_bytes` (a core's L2)."""
    return WEIGHT_BYTE_COST * constant_bytes if constant_bytes > cache_bytes else 0.0


PARALLEL_REGION_COST = 58_000.0
"""What starting and joining one parallel loop costs a call, in the vector instructions its
threads could issue meanwhile: a calibration, on a 2-vCPU AVX-512 guest (2 threads,
`benchmarks/dynamic_batch.py --model transformer`): a small transformer block's row entry (15
kernels, 15 parallel loops, 925K vector instructions) ran in 0.083 ms and its block of 8 rows
(21 parallel loops, 7.5M) in 0.40, 4.8x rather than 8x: 2.7 us a parallel loop (waking the
other thread, waiting for it) at 21.5G instructions a second. Without it, 7 rows ran one at a
time in 0.55 ms rather than as a padded block of 8 in 0.40."""


TAIL_TOLERANCE = 1.25
"""How much more than a block of its own size the rows left after the whole blocks may cost
(the cheapest plan through the blocks there are: whole blocks, padded to a larger one, row by
row): `graph-batch-rows` adds the blocks that keep every tail within it, where a call's fixed
costs (its parallel loops) make rows one at a time dear."""


def tail_cost(rows: int, work: float, fixed: float) -> float:
    """What a block of `rows` rows costs by a graph-level estimate: its rows' arithmetic
    (`work` each) and the fixed costs of one call (`fixed`: starting its parallel loops)."""
    return rows * work + fixed
