"""The default CPU schedule rules that `loop-default-schedule` applies, TVM dlight style: each
rule recognises a nest by its structure and rewrites it with the schedule primitives or a
composite of them.

Before any rule, a max or min reduction's combining `maximumf`/`minimumf` is marked `nsz` (the
sign of a zero it returns is as free as the reduction's order; `free_zero_signs`), so that it
lowers to a NaN test and one `maxps`/`minps`. Rules, tried in order on each loop nest of a
function:
- `vnni-int8-gemm` (rewrites/schedule_rules/vnni.py): an int8 GEMM (graph.matmul_integer's
  nest) on a target with avx512vnni: B packed into `[N/16][K/4][64]` panels, `vpdpbusd`
  micro-kernels made with `tensorize`, zero points and signedness as exact compensation terms;
- `avx512bf16-gemm` (rewrites/schedule_rules/bf16.py): a bf16 GEMM (graph.matmul's nest under
  precision="bf16": f32 sums of extended bf16 products) on a target with avx512bf16: B packed
  into `[N/16][K/2][32]` panels, `vdpbf16ps` micro-kernels made with `tensorize`;
- `reduction` (rewrites/schedule_rules/reduction.py): GEMM/dense, conv2d, depthwise conv,
  pools and reductions whose innermost spatial axis is contiguous: a register-blocked
  micro-kernel (B packed into panels for GEMM), parallel outer loop; a conv2d whose innermost
  axis is strided (stride > 1), or whose rows fill few lanes over a long reduction (a 3x3
  conv): the same kernel vectorized over output channels, the OIHW weight packed into
  `[OC/NR][IC][KH][KW][NR]` panels (a depthwise conv's input plane too, channel-last into
  `[C/NR][IH][IW][NR]`, when a wide window on a narrow row pays for that scalar pack); a 1x1
  conv over a short reduction, or whose rows are one vector: its plane's rows merged into one
  contiguous run first;
- `pad` (rewrites/schedule_rules/pad.py): TOPI's "pad" compute as a vectorized fill and a
  vectorized interior copy;
- `concat` (rewrites/schedule_rules/concat.py): an elementwise nest whose block compares an
  induction variable with constants (TOPI's concat) split at those points, one part per input,
  each vectorized as elementwise, all inside one shared parallel loop;
- `transposed-copy` (rewrites/schedule_rules/transpose.py): a copy whose innermost write axis
  is not its innermost read axis (a Transpose that moves the last axis): both axes tiled by
  the lanes, each lanes x lanes block transposed in registers by the vectorizer; the two axes
  before a short read axis merged first where both buffers allow (56 x 56 as 196 x 16);
- `elementwise` (rewrites/schedule_rules/elementwise.py): vectorize the innermost axis,
  parallel outer axis;
- `partial-sums` (rewrites/schedule_rules/partial_sums.py): a float sum (or max, or min)
  whose innermost reduction axis is contiguous and at least two vectors long (a row reduction
  such as softmax's or layer norm's, or a whole-tensor sum without spatial loops): vector
  partial sums over blocks of up to `lanes * max(8, fma_units * fma_latency)`, combined pairwise,
  so that the rounding error grows like n/B instead of n (TVM's rfactor, NumPy's pairwise
  sum); the outer axis runs in parallel;
- otherwise (a reduction whose innermost spatial axis is strided: a row reduction such as
  softmax's, layer norm's or a reduce over the last axis): the update's combining op may
  reassociate (`fastmath<reassoc>`), so that LLVM vectorizes the reduction loop into partial
  results combined at the end (what TVM's rfactor + vectorize builds), and the outer axis runs
  in parallel.

A nest with a loop of runtime extent (other than runtime rows that `block_rows` cuts into static
blocks first) takes none of these: `loop-default-schedule` gives it the rule of
`rewrites/schedule_rules/runtime_extents.py` (tiles of vectors and peeled tails along the
contiguous axis, inside the reduction loops with a reused axis unrolled beside them, parallel
outer loop).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dlc.dialects.loop.ops import ForOp
from dlc.rewrites.schedule_rules.bf16 import schedule_bf16_gemm
from dlc.rewrites.schedule_rules.concat import schedule_concat
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.elementwise import schedule_elementwise
from dlc.rewrites.schedule_rules.nest import Elementwise, Reduction, analyze, bare_reduction
from dlc.rewrites.schedule_rules.pad import schedule_pad
from dlc.rewrites.schedule_rules.partial_sums import (
    collapse_rows,
    drop_unit_reductions,
    drop_unit_tails,
    free_zero_signs,
    split_sum,
)
from dlc.rewrites.schedule_rules.reduction import (
    allow_reassociation,
    mark_parallel,
    schedule_reduction,
)
from dlc.rewrites.schedule_rules.transpose import schedule_transposed_copy
from dlc.rewrites.schedule_rules.vnni import schedule_vnni_gemm
from xdsl.ir import Operation

__all__ = ["RULES", "CpuConfig", "Rule", "schedule_nest"]


@dataclass(frozen=True)
class Rule:
    """A named default-schedule rule: `apply(nest, config)` returns whether it scheduled it."""

    name: str
    kind: type
    apply: Callable[[Elementwise | Reduction, CpuConfig], bool]


def _row_reduction(nest: Elementwise | Reduction, config: CpuConfig) -> bool:
    """The fallback for a reduction (module docstring); returns whether it changed anything."""
    assert isinstance(nest, Reduction)
    changed = allow_reassociation(nest)
    if config.parallel and nest.spatial:  # a reduction to a scalar has no spatial loop
        mark_parallel([nest.spatial[0]])
        changed = changed or any(loop.kind.data == "parallel" for loop in nest.spatial)
    return changed


def _partial_sums(nest: Elementwise | Reduction, config: CpuConfig) -> bool:
    """A long float sum in partial sums (module docstring), after its innermost reduction loops
    of one iteration are dropped (`drop_unit_reductions`), unit axes after the innermost one's
    collapsed into it (`drop_unit_tails`) and its two innermost ones merged where they walk
    whole rows (`collapse_rows`); returns whether it applied."""
    assert isinstance(nest, Reduction)
    changed = drop_unit_reductions(nest)
    changed = drop_unit_tails(nest) or changed
    merged = collapse_rows(nest)
    innermost = merged if merged is not None else nest.reduction[-1]
    if not split_sum(innermost, nest.update, nest.home, config):
        if merged is None and not changed:
            return False
        _row_reduction(nest, config)  # reshaped but short: LLVM vectorizes the inner loop
        return True
    if config.parallel and nest.spatial:
        mark_parallel([nest.spatial[0]])
    return True


RULES: tuple[Rule, ...] = (
    Rule("vnni-int8-gemm", Reduction, schedule_vnni_gemm),  # type: ignore[arg-type]
    Rule("avx512bf16-gemm", Reduction, schedule_bf16_gemm),  # type: ignore[arg-type]
    Rule("reduction", Reduction, schedule_reduction),  # type: ignore[arg-type]
    Rule("pad", Elementwise, schedule_pad),  # type: ignore[arg-type]
    Rule("concat", Elementwise, schedule_concat),  # type: ignore[arg-type]
    Rule("transposed-copy", Elementwise, schedule_transposed_copy),  # type: ignore[arg-type]
    Rule("elementwise", Elementwise, schedule_elementwise),  # type: ignore[arg-type]
    Rule("partial-sums", Reduction, _partial_sums),
    Rule("parallel", Reduction, _row_reduction),
)
"""The rules in the order they are tried."""


def schedule_nest(root: Operation, config: CpuConfig) -> str | None:
    """Schedule the nest rooted at `root` with the first rule that applies; returns its name."""
    nest = analyze(root)
    if nest is None:
        bare = bare_reduction(root) if isinstance(root, ForOp) else None
        if bare is not None and _partial_sums(bare, config):
            return "partial-sums"
        return None
    if isinstance(nest, Reduction):
        free_zero_signs(nest)
    for rule in RULES:
        if isinstance(nest, rule.kind) and rule.apply(nest, config):
            return rule.name
    return None
