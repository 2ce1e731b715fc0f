"""Default CPU schedule of a concatenation: the nest is split into one part per input, each
vectorized like an elementwise nest, all inside one parallel loop.

Counterpart: TVM's `LoopPartition` pass (a loop is split where a condition in its body changes
value, so that each part runs without it), and ONNX Runtime's Concat, one copy per input.

TOPI's concat (`rewrites.topi.transform.concat`) reads every input at a clamped index and picks
one with a chain of `select(i < offset_j, ...)`: each element loads from all the inputs, and the
clamped (`minui`) indices keep the nest from vectorizing. When the block of an elementwise nest
compares one spatial induction variable with constants (`arith.cmpi ult/slt %i, C`), the nest
is cloned once per range between those points, the loop of `%i` restricted to it:

    loop.for %i = 0 to 56 { x = select(%i < 28, A[min(%i, 27)], B[min(%i - 28, 27)]) }
 -> loop.for %i = 0 to 28 { x = A[%i] }
    loop.for %i = 28 to 56 { x = B[%i - 28] }

In each part every such comparison has one value: the `select`s it decides take their operand,
the `minui` clamps that cannot bind go, the loads nothing uses any more go, and the part is
scheduled by the elementwise rule (innermost axis vectorized). With threads, the parts are
siblings inside one parallel loop: the outermost other loop with two iterations or more, moved
above the split loop (NCHW along the channels: the rows' loop), so that a concat of many inputs
(DenseNet's, up to 64) is one parallel region; without such a loop each part is parallel on its
own, as an elementwise nest:

    loop.for %c = 0 to 96 { loop.for %h = 0 to 7 { ... } }
 -> loop.for %h = 0 to 7 parallel { loop.for %c = 0 to 64 { A } loop.for %c = 0 to 32 { B } }

That shared loop is inside the split one there (an NCHW concat along the channels, batch 1:
DenseNet's), and moved out it gives each thread rows of every channel: runs of one row (7 or 14
values, a vector with idle lanes), cache lines split between the threads. When the parts'
sizes have a common divisor, the parts are sliced instead (`schedule_sliced`): one parallel loop
over slices of the split axis, slice `s` of each part its `s`-th run of channels, whose planes
merge into one contiguous run each. DenseNet-121's 58 concat(+BN+ReLU) kernels: 7.5 -> 2.4 ms
(2 threads; the block-3 kernels on 14x14 planes ran at 7 GB/s).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from dlc.dialects.loop.ops import BlockOp, ForOp, LoadOp, YieldOp
from dlc.rewrites.schedule import ScheduleError, parallel, reorder
from dlc.rewrites.schedule.common import (
    constant_value,
    index_constant,
    is_defined_outside,
    is_pure,
    refresh_reads,
    rename_axis,
    replace_uses,
    same_value,
    value_name,
)
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.elementwise import schedule_elementwise
from dlc.rewrites.schedule_rules.nest import Elementwise, analyze
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

LESS_THAN = {"slt": 2, "ult": 6}
"""`arith.cmpi` predicates (their integer codes) of the comparisons a nest is split at."""

MAX_PARTS = 64
"""The most parts a nest is split into (a concat of at most this many inputs)."""

PartRule = Callable[[ForOp, CpuConfig], object]
"""How a part of a split nest is scheduled: the elementwise rule here, the rule of runtime
extents for a nest over runtime sizes."""


def _comparison(op: Operation, loops: dict[SSAValue, ForOp]) -> tuple[ForOp, int] | None:
    """The loop and the constant of `op` if it is `cmpi ult/slt %iv, C` on a loop of `loops`."""
    if not isinstance(op, arith.CmpiOp) or op.predicate.value.data not in LESS_THAN.values():
        return None
    loop = loops.get(op.lhs)
    bound = constant_value(op.rhs)
    return None if loop is None or bound is None else (loop, bound)


def split_points(nest: Elementwise) -> tuple[ForOp, list[int]] | None:
    """The spatial loop whose induction variable the nest's blocks compare with constants, and
    the constants strictly inside its range, sorted; None unless there is exactly one such loop
    (constant bounds, step 1) and at most `MAX_PARTS` parts."""
    loops = {loop.induction_var: loop for loop in nest.spatial}
    found: dict[ForOp, set[int]] = {}
    for block in nest.blocks:
        for op in block.walk():
            compared = _comparison(op, loops)
            if compared is not None:
                found.setdefault(compared[0], set()).add(compared[1])
    if len(found) != 1:
        return None
    ((loop, bounds),) = found.items()
    lb, ub, step = (constant_value(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step != 1 or lb < 0:  # from 0 up, ult and slt agree
        return None
    points = sorted(b for b in bounds if lb < b < ub)
    if not points or len(points) + 1 > MAX_PARTS:
        return None
    return loop, points


def _value_range(value: SSAValue, known: dict[SSAValue, tuple[int, int]]) -> tuple[int, int] | None:
    """The least and greatest value of `value` given the ranges `known` of some values: for
    those, constants, and a known value plus or minus a constant; None for anything else."""
    if value in known:
        return known[value]
    constant = constant_value(value)
    if constant is not None:
        return constant, constant
    owner = value.owner
    if isinstance(owner, arith.AddiOp | arith.SubiOp) and owner.lhs in known:
        offset = constant_value(owner.rhs)
        if offset is None:
            return None
        offset = offset if isinstance(owner, arith.AddiOp) else -offset
        low, high = known[owner.lhs]
        return low + offset, high + offset
    return None


def _shifted_iv(block: BlockOp, iv: SSAValue, low: int, slice_iv: SSAValue | None = None,
                size: int = 1) -> tuple[SSAValue, SSAValue]:
    """Inside `block`, `iv + low` in place of `iv` (whose loop now starts at 0, as the
    schedule rules expect), or with a slice's variable `(iv + slice * size) + low` (the
    constant added last, so that `simplify_part` folds the part's `- low`). Returns the
    replacement and `iv + slice * size` (`iv` itself without a slice); no op is added for a
    term that is 0."""
    ops: list[Operation] = []
    within = iv
    reader: Operation | None = None  # the op that reads `iv`, which keeps it
    if slice_iv is not None:
        start = slice_iv
        if size != 1:
            scale = arith.ConstantOp(IntegerAttr(size, IndexType()))
            product = arith.MuliOp(slice_iv, scale.result)
            ops += [scale, product]
            start = product.result
        added = arith.AddiOp(iv, start)
        ops.append(added)
        within, reader = added.result, added
    shifted = within
    if low:
        offset = arith.ConstantOp(IntegerAttr(low, IndexType()))
        total = arith.AddiOp(within, offset.result)
        ops += [offset, total]
        shifted, reader = total.result, reader or total
    if reader is None:
        return iv, iv
    body = block.body.block
    head = body.first_op
    assert head is not None
    body.insert_ops_before(ops, head)
    replace_uses(iv, shifted, keep=lambda user: user is reader or not block.is_ancestor(user))
    return shifted, within


def simplify_part(root: Operation, iv: SSAValue, known: dict[SSAValue, tuple[int, int]]) -> None:
    """Folds, in `root`, what the value ranges `known` (the least and greatest value of `iv`
    among them) decide: comparisons of `iv` with constants, the selects on them, clamps that
    cannot bind, `(x + c) - c`."""
    low, high = known[iv][0], known[iv][1] + 1
    for op in list(root.walk()):
        if isinstance(op, arith.CmpiOp) and op.lhs is iv:
            bound = constant_value(op.rhs)
            if bound is None or op.predicate.value.data not in LESS_THAN.values():
                continue
            if high <= bound or low >= bound:
                decided = arith.ConstantOp(IntegerAttr(int(high <= bound), i1))
                Rewriter.replace_op(op, decided)
        elif isinstance(op, arith.SelectOp):
            condition = op.cond.owner
            if isinstance(condition, arith.ConstantOp) and isinstance(condition.value, IntegerAttr):
                chosen = op.lhs if condition.value.value.data else op.rhs
                op.result.replace_all_uses_with(chosen)
                Rewriter.erase_op(op)
        elif isinstance(op, arith.MinUIOp):
            span = _value_range(op.lhs, known)
            limit = constant_value(op.rhs)
            if span is not None and limit is not None and 0 <= span[0] and span[1] <= limit:
                op.result.replace_all_uses_with(op.lhs)
                Rewriter.erase_op(op)
        elif isinstance(op, arith.SubiOp) and isinstance(op.lhs.owner, arith.AddiOp):
            added = op.lhs.owner
            if constant_value(added.rhs) is not None and constant_value(
                    added.rhs) == constant_value(op.rhs):
                op.result.replace_all_uses_with(added.lhs)
                Rewriter.erase_op(op)


def _erase_unused(root: Operation) -> None:
    """Removes the pure ops and loads that nothing uses; refreshes the blocks' reads."""
    for op in reversed(list(root.walk())):
        removable = is_pure(op) or isinstance(op, LoadOp)  # a load only reads
        if removable and op.results and all(not r.uses for r in op.results):
            Rewriter.erase_op(op)
    for block in [op for op in root.walk() if isinstance(op, BlockOp)]:
        refresh_reads(block)


def shared_loop(nest: Elementwise, split: ForOp) -> ForOp | None:
    """The loop the parts share, run in parallel around them all: the outermost spatial loop
    other than `split` and the innermost one with at least two iterations; None if there is
    none (then each part gets its own parallel loop)."""
    for loop in nest.spatial[:-1]:
        trip = loop.trip_count()
        if loop is not split and trip is not None and trip >= 2:
            return loop
    return None


MAX_SLICES_PER_THREAD = 4
"""Slices of its channels a part of a sliced concat (`slices`) is cut into per thread, at most:
the threads take the slices one at a time, and more slices than threads balance a thread that
the system slowed."""


def slices(nest: Elementwise, split: ForOp, edges: list[int], config: CpuConfig) -> int:
    """How many slices each part's range of `split` is cut into when the parts run as slices
    (`schedule_sliced`), or 0 where they do not: with threads, when no loop around `split` has
    two iterations and the loop the parts would share is inside it (the rows of an NCHW concat
    along the channels, which `schedule_concat` would move out, so that each thread copies rows
    of every channel: short runs, lines shared between the threads), and the parts' sizes have
    a common divisor of at least 2 (`common_slices`)."""
    if not config.parallel or split is nest.spatial[-1]:
        return 0
    at = nest.spatial.index(split)
    if any((loop.trip_count() or 0) >= 2 for loop in nest.spatial[:at]):
        return 0
    shared = shared_loop(nest, split)
    if shared is None or nest.spatial.index(shared) < at:
        return 0
    return common_slices(edges, config)


def common_slices(edges: list[int], config: CpuConfig) -> int:
    """The most slices dividing every part between `edges`, up to `MAX_SLICES_PER_THREAD` per
    thread (0 threads: 2 assumed); 0 where the parts have no common divisor of at least 2."""
    common = 0
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        common = math.gcd(common, high - low)
    most = MAX_SLICES_PER_THREAD * max(config.threads, 2)
    return max((d for d in range(2, min(common, most) + 1) if common % d == 0), default=0)


def _schedule_elementwise_part(part: ForOp, config: CpuConfig) -> None:
    """A part of a split nest scheduled as an elementwise nest (the static rules)."""
    part_nest = analyze(part)
    if isinstance(part_nest, Elementwise):
        schedule_elementwise(part_nest, config)


def schedule_sliced(nest: Elementwise, split: ForOp, edges: list[int], count: int,
                    config: CpuConfig,
                    schedule_part: PartRule = _schedule_elementwise_part) -> None:
    """The parts inside one parallel loop over `count` slices: slice `s` of each part runs
    over its `s`-th run of `size / count` values of `split`, and the loops inside `split`
    (whole rows of every buffer: a plane) merge into one contiguous run, vectorized:

        loop.for %c = 0 to 64 { loop.for %h = 0 to 14 { loop.for %w = 0 to 14 { ... } } }
     -> loop.for %s = 0 to 8 parallel {
          loop.for %c = 0 to 4 { loop.for %p = 0 to 196 vectorized { A[s * 4 + c, p] } }
          loop.for %c = 0 to 4 { loop.for %p = 0 to 196 vectorized { B[.., s * 4 + c + 32] } } }

    The parts write disjoint ranges of `split`'s axis, and each slice its own run in each.
    Each part is scheduled, on one thread, by `schedule_part` (the elementwise rule)."""
    root = nest.spatial[0]
    parent = root.parent_block()
    assert parent is not None
    axis = split.axis.data
    outer_axis, inner_axis = f"{axis}.s", f"{axis}.c"
    zero, one = index_constant(0, root), index_constant(1, root)
    sliced = ForOp(zero, index_constant(count, root), one, Block([YieldOp()],
                   arg_types=[IndexType()]), outer_axis)
    sliced.induction_var.name_hint = value_name(outer_axis)
    parent.insert_op_before(sliced, root)
    position = [op for op in root.walk() if isinstance(op, ForOp)].index(split)
    part_config = replace(config, threads=1)
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        size = (high - low) // count
        part = root.clone()
        sliced.body.block.insert_op_before(part, sliced.body.block.last_op)
        part_loop = [op for op in part.walk() if isinstance(op, ForOp)][position]
        part_loop.operands[1] = index_constant(size, part)
        part_loop.properties["axis"] = StringAttr(inner_axis)
        for block in [op for op in part.walk() if isinstance(op, BlockOp)]:
            iv = part_loop.induction_var
            shifted, within = _shifted_iv(block, iv, low, sliced.induction_var, size)
            simplify_part(block, shifted, {iv: (0, size - 1), within: (0, high - low - 1),
                                           shifted: (low, high - 1)})
        rename_axis(part, axis, [outer_axis, inner_axis])
        _erase_unused(part)
        schedule_part(part, part_config)
    Rewriter.erase_op(root)
    try:
        parallel(sliced)
    except ScheduleError:
        pass


def split_nest(root: ForOp, loop: ForOp, edges: list[int]) -> list[ForOp]:
    """Replaces the nest at `root` by one copy per range between `edges` of `loop` (a loop of
    the nest, from 0), each with that loop over its range from 0, its induction variable
    shifted in the blocks and what the range decides folded (`simplify_part`); returns the
    copies, in order."""
    position = [op for op in root.walk() if isinstance(op, ForOp)].index(loop)
    parent = root.parent_block()
    assert parent is not None
    parts: list[ForOp] = []
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        part = root.clone()
        parent.insert_op_before(part, root)
        part_loop = [op for op in part.walk() if isinstance(op, ForOp)][position]
        part_loop.operands[1] = index_constant(high - low, part)
        for block in [op for op in part.walk() if isinstance(op, BlockOp)]:
            iv = part_loop.induction_var
            shifted, _ = _shifted_iv(block, iv, low)
            simplify_part(block, shifted, {iv: (0, high - low - 1), shifted: (low, high - 1)})
        _erase_unused(part)
        parts.append(part)
    Rewriter.erase_op(root)
    return parts


def schedule_concat(nest: Elementwise, config: CpuConfig) -> bool:
    """Split the nest at the points where its blocks' comparisons of one induction variable
    with constants change value, then schedule each part as an elementwise nest; returns False,
    changing nothing, when there are no such points.

    With threads, when another loop than the split one (and the innermost) has two iterations
    or more, that loop is moved above the split loop and runs in parallel around all the parts,
    which are its body's siblings: one parallel region for the whole concat, not one per input
    (a DenseNet concat has up to 64 inputs; a region each cost compile time, outlined functions,
    and a fork and join per input at run time)."""
    found = split_points(nest)
    if found is None:
        return False
    loop, points = found
    lb, ub = constant_value(loop.lb), constant_value(loop.ub)
    assert lb == 0 and ub is not None, "analyze() takes unit loops only"
    edges = [lb, *points, ub]
    count = slices(nest, loop, edges, config)
    if count:
        schedule_sliced(nest, loop, edges, count, config)
        return True
    shared = shared_loop(nest, loop) if config.parallel else None
    if shared is not None and nest.spatial.index(shared) > nest.spatial.index(loop):
        try:
            reorder([shared, loop])
        except ScheduleError:
            shared = None
    root = loop if shared is not None else nest.spatial[0]
    part_config = replace(config, threads=1) if shared is not None else config
    for part in split_nest(root, loop, edges):
        _schedule_elementwise_part(part, part_config)
    if shared is not None:
        try:
            parallel(shared)
        except ScheduleError:
            pass
    return True


RuntimePart = tuple[SSAValue | None, SSAValue]
"""A part of a nest split at runtime offsets: where it starts (None: at 0) and its size, both
values computed before the nest."""


def runtime_split_points(nest: Elementwise) -> tuple[ForOp, list[RuntimePart]] | None:
    """The spatial loop whose induction variable the nest's blocks compare with values
    computed before the nest (a concat along a runtime axis, its pieces at runtime offsets:
    `select(%i < %off, A[min(%i, %a - 1)], B[min(%i - %off, %b - 1)])`), and its parts in
    order; None unless there is exactly one such loop, from 0 by 1, whose bound is a chain
    of sums `((a + b) + c)` through the compared offsets (each the previous one plus a part's
    size: the offsets in order, whatever the sizes), at most `MAX_PARTS` parts."""
    root = nest.spatial[0]
    loops = {loop.induction_var: loop for loop in nest.spatial}
    found: dict[ForOp, list[SSAValue]] = {}
    for block in nest.blocks:
        for op in block.walk():
            if isinstance(op, arith.CmpiOp) and op.predicate.value.data in LESS_THAN.values() \
                    and op.lhs in loops and constant_value(op.rhs) is None \
                    and is_defined_outside(op.rhs, root):
                bounds = found.setdefault(loops[op.lhs], [])
                if not any(same_value(op.rhs, bound) for bound in bounds):
                    bounds.append(op.rhs)
    if len(found) != 1:
        return None
    ((loop, bounds),) = found.items()
    if constant_value(loop.lb) != 0 or constant_value(loop.step) != 1 or \
            len(bounds) + 1 > MAX_PARTS:
        return None
    parts: list[RuntimePart] = []
    end, remaining = loop.ub, list(bounds)
    while remaining:
        owner = end.owner
        if not isinstance(owner, arith.AddiOp):
            return None
        previous = next(((bound, size) for start, size in ((owner.lhs, owner.rhs),
                                                            (owner.rhs, owner.lhs))
                         for bound in remaining if same_value(bound, start)), None)
        if previous is None:
            return None
        remaining.remove(previous[0])
        parts.append(previous)
        end = previous[0]
    parts.append((None, end))
    return loop, parts[::-1]


def split_nest_at_runtime(root: ForOp, loop: ForOp, parts: list[RuntimePart]) -> list[ForOp]:
    """Replaces the nest at `root` by one copy per part of `loop` (`runtime_split_points`),
    each with that loop from 0 to the part's size, its induction variable shifted by the
    part's start in the blocks, and what the part decides folded: the comparisons with the
    offsets, the selects on them, `(i + off) - off`, and `min(i, size - 1)` clamps of the
    part's own index; returns the copies, in order."""
    position = [op for op in root.walk() if isinstance(op, ForOp)].index(loop)
    parent = root.parent_block()
    assert parent is not None
    starts = [start for start, _ in parts]
    copies: list[ForOp] = []
    for index, (start, size) in enumerate(parts):
        part = root.clone()
        parent.insert_op_before(part, root)
        part_loop = [op for op in part.walk() if isinstance(op, ForOp)][position]
        part_loop.operands[1] = size
        iv = part_loop.induction_var
        for block in [op for op in part.walk() if isinstance(op, BlockOp)]:
            shifted = iv
            if start is not None:
                added = arith.AddiOp(iv, start)
                head = block.body.block.first_op
                assert head is not None
                block.body.block.insert_op_before(added, head)
                shifted = added.result
                replace_uses(iv, shifted, keep=lambda user, added=added, block=block:
                             user is added or not block.is_ancestor(user))
            _fold_runtime_part(block, iv, shifted, index, starts, size)
        _erase_unused(part)
        copies.append(part)
    Rewriter.erase_op(root)
    return copies


def _fold_runtime_part(block: BlockOp, iv: SSAValue, shifted: SSAValue, index: int,
                       starts: list[SSAValue | None], size: SSAValue) -> None:
    """`split_nest_at_runtime`'s folds in `block`, of part `index` (`shifted` = `iv` + its
    start; `iv` runs from 0 to `size`)."""
    for op in list(block.walk()):
        if isinstance(op, arith.CmpiOp) and op.lhs is shifted and \
                op.predicate.value.data in LESS_THAN.values():
            at = next((k for k, start in enumerate(starts)
                       if start is not None and same_value(start, op.rhs)), None)
            if at is not None:  # iv < start_k: every index of an earlier part, none later
                Rewriter.replace_op(op, arith.ConstantOp(IntegerAttr(int(index < at), i1)))
        elif isinstance(op, arith.SelectOp):
            condition = op.cond.owner
            if isinstance(condition, arith.ConstantOp) and isinstance(condition.value,
                                                                      IntegerAttr):
                op.result.replace_all_uses_with(op.lhs if condition.value.value.data else op.rhs)
                Rewriter.erase_op(op)
        elif isinstance(op, arith.SubiOp) and op.lhs is shifted and shifted is not iv \
                and same_value(op.rhs, shifted.owner.operands[1]):  # type: ignore[union-attr]
            op.result.replace_all_uses_with(iv)
            Rewriter.erase_op(op)
        elif isinstance(op, arith.MinUIOp) and op.lhs is iv and \
                isinstance(limit := op.rhs.owner, arith.SubiOp) and \
                constant_value(limit.rhs) == 1 and same_value(limit.lhs, size):
            op.result.replace_all_uses_with(iv)  # iv < size: the clamp never binds
            Rewriter.erase_op(op)

