"""Default CPU schedule of a long float sum (or max, or min): vector partial results over
blocks, combined pairwise.

Counterpart: TVM's `rfactor` + `vectorize` of a reduction axis (each lane of the factored axis
accumulates its own partial result), NumPy's pairwise summation (`pairwise_sum`), ONNX Runtime's
(Eigen's) blocked reductions.

A float sum accumulated in one register adds each value to an ever larger total: its rounding
error grows like n (a sum of `ones(2**25)` in f32 stops at 2**24). Accumulating the innermost
reduction axis in `B = lanes * accumulators` independent partial sums (the accumulators that keep
the target's adders busy, `fma_units * fma_latency` vectors, and at least `MIN_ACCUMULATORS`)
makes each partial add n/B values,
and combining the partials in a tree adds log2(B) more roundings: the error grows like n/B. The
partials are a register tile, as the register-blocked kernel's (rewrites/schedule_rules/
reduction.py), so that the loop also runs at the adders' throughput, not their latency.

The same loops serve a float max or min (softmax's row maximum, ReduceMax, a max pool over a
long window): their partials start at the first block's values, like a sum's, and change no
result, only the speed (one vector max per element instead of a chain of scalar ones).

For an innermost reduction loop `r` of extent N >= 2 L (U then at most N // L vectors, so that
B <= N) whose update is `home[p] = home[p] + x(r)`
(`arith.addf`, or `maximumf`/`maxnumf`/`minimumf`/`minnumf` in place of `+`; a float element
type), every access that depends on `r` contiguous in it:

    %part = loop.alloc local : memref<U x L x T>                   // U vectors of L lanes
    for r.v (unrolled U) { for r.l (vectorized L) {                            // <name>.partials
      part[v, l] = x(v * L + l) } }                                // the first block's values
    for r.o in [B, N - N mod B) step B {
      for r.v (unrolled U) { for r.l (vectorized L) {
        part[v, l] = part[v, l] + x(r.o * B + v * L + l) } }                    // the update
    }
    for r.t in [N - N mod B, N - N mod L) step L {                             // whole vectors
      for r.v (unrolled 1) { for r.l (vectorized L) { part[0, l] = part[0, l] + x(r.t + l) } }
    }
    for r.v (unrolled 1) { for r.l (vectorized N mod L) {            // the tail: one narrower
      part[0, l] = part[0, l] + x(N - N mod L + l) } }                         // vector
    for (h, k) in halvings(U): for r.v (unrolled h) { for r.l (vectorized L) {    // h = n/2,
      part[v, l] = part[v, l] + part[v + k, l] } }              // <name>.combine  k = n - h
    for (h, k) in halvings(L): for r.l (vectorized h; unrolled if h = 1) {  // h-lane vectors
      part[0, l] = part[0, l] + part[0, l + k] }
    home[p] = home[p] + part[0, 0]                                              // <name>.combine
    loop.dealloc %part

The loops around `r` (spatial or outer reduction loops) are unchanged; the rule is keyed on the
extent of the axis and the element type, not on the op the nest computes: a ReduceSum over the
last axis, a whole-tensor sum, softmax's sum of exponentials, layer norm's mean and variance.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp, YieldOp
from dlc.rewrites.schedule import fuse
from dlc.rewrites.schedule.common import (
    constant_value,
    depends_on,
    index_constant,
    is_pure,
    refresh_reads,
    rename_axis,
    set_block_buffers,
    value_name,
)
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import (
    Reduction,
    accesses_in,
    body_of,
    contiguous_in,
    extent,
    is_unit_loop,
)
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    i64,
)
from xdsl.dialects.llvm import FastMathFlag
from xdsl.ir import Block, Operation, SSAValue

PARTIALS_BLOCK = "partials"
COMBINE_BLOCK = "combine"
"""Suffixes of the names of the blocks this rule adds (`<update>.partials`, `<update>.combine`)."""


MIN_VECTORS = 2
"""The fewest whole vectors a reduction axis must hold for partial sums: a shorter one stays a
scalar loop. A shorter axis than `fma_units * fma_latency` vectors gets as many accumulators as
it has whole vectors (softmax's max and sum over 128-wide attention rows: 8 vectors of 16, where
the scalar loops of `llvm.maximum` and `fadd` took 9 cycles per element)."""


MIN_ACCUMULATORS = 8
"""The fewest vectors of partial sums a long axis gets, whatever the target's adders need: the
accuracy of a long sum must not depend on its FMA ports (a core with one, 4 cycles of latency,
would keep 4 vectors: a 2**24-element f32 sum then adds 2**18 values into each partial, 1.1e-6
off the exact sum in the test, against 0.4e-6 with 8)."""


def block_size(config: CpuConfig, element: object) -> tuple[int, int]:
    """(vectors U, lanes L) of the partial sums for `element`: L lanes of the target's vector,
    U = the accumulators that keep its adders busy (`fma_units * fma_latency`), at least
    `MIN_ACCUMULATORS`."""
    return max(MIN_ACCUMULATORS, config.fma_units * config.fma_latency), config.lanes(element)


def halvings(count: int) -> list[tuple[int, int]]:
    """The steps (folded, offset) that combine `count` partials into the first one: each step
    adds partial `v + offset` into partial `v` for `v < folded`, halving what is left and
    keeping the odd one (`offset = count - folded`), so any count works, not only powers of
    two."""
    steps: list[tuple[int, int]] = []
    while count > 1:
        folded = count // 2
        steps.append((folded, count - folded))
        count -= folded
    return steps


def split_sum(loop: ForOp, update: BlockOp, home: SSAValue, config: CpuConfig) -> bool:
    """Accumulate the innermost reduction `loop` (whose body is `update`, accumulating into
    `home`) in partial sums (module docstring); returns False, changing nothing, if it does not
    apply: not a float `addf` (or max, min) accumulation, not contiguous in the loop, or
    shorter than `MIN_VECTORS` vectors."""
    if body_of(loop) != [update] or not is_unit_loop(loop):
        return False
    accumulation = _accumulation(update, home)
    if accumulation is None:
        return False
    load, combiner = accumulation
    element = load.result.type
    if not isinstance(element, AnyFloat):
        return False
    iv = loop.induction_var
    accesses = accesses_in([update])
    if any(depends_on(index, {iv}) or update.is_ancestor(index.owner)  # type: ignore[arg-type]
           for index in load.indices):
        return False
    if not any(depends_on(index, {iv}) for a in accesses for index in a.indices):
        return False
    if not contiguous_in(accesses, iv, home):
        return False
    vectors, lanes = block_size(config, element)
    trip = loop.trip_count()
    assert trip is not None
    if lanes < 2 or trip < MIN_VECTORS * lanes:
        return False
    vectors = min(vectors, trip // lanes)
    _Splitter(loop, update, home, load, element, vectors, lanes, type(combiner)).build(trip)
    return True


def split_runtime_sum(loop: ForOp, update: BlockOp, home: SSAValue, config: CpuConfig
                      ) -> bool:
    """`split_sum` of an innermost reduction `loop` over `[0, n)`, `n` known only at run time
    (a global average pool over a runtime plane): a float sum only (its partials start at 0),
    blocks of `U x L` while they fit, then whole vectors, then single values
    (`_Splitter.build_runtime`); returns False, changing nothing, where it does not apply."""
    if body_of(loop) != [update] or loop.trip_count() is not None or \
            constant_value(loop.lb) != 0 or constant_value(loop.step) != 1:
        return False
    accumulation = _accumulation(update, home)
    if accumulation is None or not isinstance(accumulation[1], arith.AddfOp):
        return False
    load = accumulation[0]
    element = load.result.type
    iv = loop.induction_var
    accesses = accesses_in([update])
    if not isinstance(element, AnyFloat) or any(
            depends_on(index, {iv}) or update.is_ancestor(index.owner)  # type: ignore[arg-type]
            for index in load.indices) or not contiguous_in(accesses, iv, home):
        return False
    vectors, lanes = block_size(config, element)
    if lanes < 2:
        return False
    _Splitter(loop, update, home, load, element, vectors, lanes).build_runtime(loop.ub)
    return True


def tail_view(buffer: SSAValue, count: int, before: Operation) -> SSAValue:
    """A `memref.collapse_shape` of `buffer`'s last `count` axes into one, made before
    `before`."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    view = collapse_axes(buffer, len(buffer_type.get_shape()) - count, count)
    parent = before.parent_block()
    assert parent is not None
    parent.insert_op_before(view, before)
    return view.result


def collapse_axes(buffer: SSAValue, first: int, count: int) -> memref.CollapseShapeOp:
    """A (not yet inserted) `memref.collapse_shape` of `buffer`'s axes `first` to
    `first + count - 1` into one; the other axes stay."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    shape = list(buffer_type.get_shape())
    end = first + count
    groups = ([[axis] for axis in range(first)] + [list(range(first, end))]
              + [[axis] for axis in range(end, len(shape))])
    merged = 1
    for size in shape[first:end]:
        merged *= size
    return memref.CollapseShapeOp(
        operands=[buffer],
        result_types=[MemRefType(buffer_type.get_element_type(),
                                 [*shape[:first], merged, *shape[end:]])],
        properties={"reassociation": ArrayAttr(
            ArrayAttr(IntegerAttr(axis, i64) for axis in group) for group in groups)},
    )


def defined_outside(buffer: SSAValue, root: Operation) -> bool:
    owner = buffer.owner
    return not (isinstance(owner, Operation) and root.is_ancestor(owner))


def always_zero(index: SSAValue) -> bool:
    """Whether `index` is 0 at every point: a constant 0, the induction variable of a loop
    over [0, 1), or a sum of such."""
    if constant_value(index) == 0:
        return True
    owner = index.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        return isinstance(loop, ForOp) and loop.constant_bounds() == (0, 1, 1)
    if isinstance(owner, arith.AddiOp):
        return always_zero(owner.lhs) and always_zero(owner.rhs)
    return False


def drop_unit_tails(nest: Reduction) -> bool:
    """Makes the innermost reduction loop's axis the last of the buffers it reads when only
    axes of size 1, indexed at 0, follow it (a 1x1 conv on a 1x1 image reads `W[oc, ic, 0, 0]`
    and `x[0, ic, 0, 0]`): those loads read a `memref.collapse_shape` of the axis and the
    unit ones after it, at the loop's index, contiguous in it. Returns whether it changed any
    load."""
    if not nest.spatial:
        return False
    loop, root = nest.reduction[-1], nest.spatial[0]
    iv = loop.induction_var
    rewrites: list[tuple[LoadOp, int]] = []
    for access in accesses_in([nest.update]):
        indices = list(access.indices)
        if not any(depends_on(index, {iv}) for index in indices):
            continue
        buffer_type = access.memref.type
        if not isinstance(access, LoadOp) or access.memref is nest.home:
            return False
        positions = [p for p, index in enumerate(indices) if index is iv]
        if (len(positions) != 1 or not isinstance(buffer_type, MemRefType)
                or not isinstance(buffer_type.layout, NoneAttr)
                or not defined_outside(access.memref, root)):
            return False
        position = positions[0]
        shape = buffer_type.get_shape()
        trailing = indices[position + 1:]
        if any(depends_on(index, {iv}) for index in indices[:position]):
            return False
        if any(shape[position + 1 + k] != 1 or not always_zero(index)
               for k, index in enumerate(trailing)):
            return False
        if trailing:
            rewrites.append((access, position))
    if not rewrites:
        return False
    views: dict[tuple[SSAValue, int], SSAValue] = {}
    for load, position in rewrites:
        rank = len(load.indices)
        key = (load.memref, position)
        if key not in views:
            views[key] = tail_view(load.memref, rank - position, root)
        load.operands = (views[key], *list(load.indices)[:position + 1])
    refresh_reads(nest.update, views.values())
    return True


def drop_unit_heads(nest: Reduction) -> bool:
    """Makes the update's GEMM-like vector operand a 2-D buffer when only axes of size 1,
    indexed at 0, come before its last two (a channels-last 1x1 conv reads its HWIO weight
    `W[0, 0, ic, oc]`): the load reads a `memref.collapse_shape` of the leading axes with the
    row axis, `W'[ic, oc]`, at the same last two indices, so that the kernel can pack it into
    panels (`_packing` takes a `B[k, j]`). Only a load whose last index is the innermost
    spatial loop's induction variable and whose last but one depends on no spatial loop is
    changed. Returns whether it changed any load."""
    if not nest.spatial:
        return False
    root = nest.spatial[0]
    column_iv = nest.spatial[-1].induction_var
    spatial_ivs = {loop.induction_var for loop in nest.spatial}
    views: dict[SSAValue, SSAValue] = {}
    for access in accesses_in([nest.update]):
        indices = list(access.indices)
        buffer_type = access.memref.type
        if (not isinstance(access, LoadOp) or access.memref is nest.home or len(indices) < 3
                or indices[-1] is not column_iv or depends_on(indices[-2], spatial_ivs)
                or not isinstance(buffer_type, MemRefType)
                or not isinstance(buffer_type.layout, NoneAttr)
                or not defined_outside(access.memref, root)):
            continue
        shape = buffer_type.get_shape()
        if any(size != 1 or not always_zero(index)
               for size, index in zip(shape[:-2], indices[:-2], strict=True)):
            continue
        if access.memref not in views:
            view = collapse_axes(access.memref, 0, len(shape) - 1)
            parent = root.parent_block()
            assert parent is not None
            parent.insert_op_before(view, root)
            views[access.memref] = view.result
        access.operands = (views[access.memref], *indices[-2:])
    if views:
        refresh_reads(nest.update, views.values())
    return bool(views)


def drop_unit_reductions(nest: Reduction) -> bool:
    """Removes the reduction loops of one iteration that directly hold the update (a 1x1
    conv's kernel-window loops inside its loop over input channels), their induction variables
    replaced by 0, so that the loop over a long axis is the innermost; returns whether it
    removed any (`nest.reduction` follows)."""
    dropped = False
    while len(nest.reduction) > 1:
        loop = nest.reduction[-1]
        bounds = loop.constant_bounds()
        if bounds != (0, 1, 1) or body_of(loop) != [nest.update]:
            break
        loop.induction_var.replace_all_uses_with(index_constant(0, loop))
        nest.update.detach()
        block = loop.parent_block()
        assert block is not None
        block.insert_op_before(nest.update, loop)
        rename_axis(nest.update, loop.axis.data, [])
        loop.detach()
        loop.erase()
        nest.reduction.pop()
        dropped = True
    return dropped


def merge_rows(spatial: list[ForOp], blocks: Sequence[BlockOp], lanes: int,
               fixed: Collection[SSAValue] = (), row_vectors: int = 1) -> bool:
    """Merges the two innermost loops of the perfectly nested `spatial` band (`fuse`) when
    rows of `lanes`-wide vectors would leave a remainder in every row, or a row is shorter than
    `row_vectors` vectors (a kernel tile that wide would not fit one), and every load and store
    of `blocks` that depends on either indexes the last two axes of its buffer by the two
    induction variables (in order, the row whole; each maybe plus a value that is always 0, as
    a 1x1 conv reads `x[n, c, oh + kh, ow + kw]` with one-iteration window loops) and by
    nothing else; those accesses then go through a `memref.collapse_shape` of the two axes
    (made before the nest) at the merged index: a 7x7 plane is one run of 49 elements. Returns
    whether it merged; `spatial` follows. Nothing merges when one of those buffers is in
    `fixed` (a reduction's accumulator, which its kernel must find as it is)."""
    if len(spatial) < 2:
        return False
    inner = spatial[-1]
    if extent(inner) % lanes == 0 and extent(inner) >= row_vectors * lanes:
        return False
    return merge_axes(spatial, len(spatial) - 2, blocks, fixed, last_axes=True)


def merge_axes(spatial: list[ForOp], outer_at: int, blocks: Sequence[BlockOp],
               fixed: Collection[SSAValue] = (), last_axes: bool = False) -> bool:
    """Merges the loops `spatial[outer_at]` and the one directly and only inside it (`fuse`)
    when every load and store of `blocks` that depends on either indexes two adjacent axes of
    its buffer by the two induction variables (in order, the inner axis whole; each maybe plus
    a value that is always 0) and no other axis by them: those accesses then go through a
    `memref.collapse_shape` of the two axes (made before the nest) at the merged index. With
    `last_axes` the two axes must be the buffer's last (the merged loop is vectorized: its run
    must be contiguous); without, any two (a channels-last 1x1 conv's rows `x[n, oh, ow, c]`
    merge into one axis of output pixels, `x[n, p, c]`). Returns whether it merged; `spatial`
    follows. Nothing merges when one of those buffers is in `fixed`."""
    outer, inner = spatial[outer_at], spatial[outer_at + 1]
    if body_of(outer) != [inner]:
        return False
    root = spatial[0]

    def accept(access: LoadOp | StoreOp, axis: int) -> bool:
        buffer_type = access.memref.type
        return not (
            (last_axes and axis != len(access.indices) - 2)
            or not isinstance(buffer_type, MemRefType)
            or not isinstance(buffer_type.layout, NoneAttr)
            or buffer_type.get_shape()[axis + 1] != extent(inner)
            or not defined_outside(access.memref, root)
        )

    scanned = merged_accesses(accesses_in(list(blocks)), outer, inner, accept)
    if scanned is None:
        return False
    rows, others = scanned
    buffers = {access.memref for access, _ in rows}
    if not rows or buffers & others or buffers.intersection(fixed):
        return False
    if len({(access.memref, axis) for access, axis in rows}) != len(buffers):
        return False  # one buffer merged at two places
    views: dict[SSAValue, SSAValue] = {}
    for access, axis in rows:
        if access.memref not in views:
            view = collapse_axes(access.memref, axis, 2)
            parent = root.parent_block()
            assert parent is not None
            parent.insert_op_before(view, root)
            views[access.memref] = view.result
    merged = fuse(outer, inner)
    for access, axis in rows:
        indices = list(access.indices)
        indices[axis:axis + 2] = [merged.induction_var]
        if isinstance(access, StoreOp):
            access.operands = (access.value, views[access.memref], *indices)
        else:
            access.operands = (views[access.memref], *indices)
    _erase_unused_indices(blocks, merged)
    for block in blocks:
        set_block_buffers(block, [views.get(b, b) for b in block.reads],
                          [views.get(b, b) for b in block.writes])
    spatial[outer_at:outer_at + 2] = [merged]
    return True


def merged_accesses(
    accesses: Sequence[LoadOp | StoreOp], outer: ForOp, inner: ForOp,
    accept: Callable[[LoadOp | StoreOp, int], bool],
) -> tuple[list[tuple[LoadOp | StoreOp, int]], set[SSAValue]] | None:
    """The accesses of `accesses` that move with `outer` or `inner`, each with the axis where
    they index two adjacent axes of its buffer by the two (`merged_axis`), and the buffers of
    the others; None when one that moves does not, or `accept(access, axis)` refuses it."""
    ivs = {outer.induction_var, inner.induction_var}
    rows: list[tuple[LoadOp | StoreOp, int]] = []
    others: set[SSAValue] = set()
    for access in accesses:
        indices = list(access.indices)
        if not any(depends_on(index, ivs) for index in indices):
            others.add(access.memref)
            continue
        axis = merged_axis(access, indices, outer.induction_var, inner.induction_var)
        if axis is None or not accept(access, axis):
            return None
        rows.append((access, axis))
    return rows, others


def _erase_unused_indices(blocks: Sequence[BlockOp], merged: ForOp) -> None:
    """Erases the index arithmetic a merge left unused: in the blocks, the indices the merged
    one replaced (`oh + kh`); in the merged loop's body, the row and column it recovered."""
    for block in blocks:
        for op in reversed(list(block.walk())):
            if op is not block and is_pure(op) and op.results and not any(
                    result.uses for result in op.results):
                op.detach()
                op.erase()
    for op in reversed(body_of(merged)):
        if is_pure(op) and not any(result.uses for result in op.results):
            op.detach()
            op.erase()


def merged_axis(access: LoadOp | StoreOp, indices: list[SSAValue], outer_iv: SSAValue,
                 inner_iv: SSAValue) -> int | None:
    """The axis `k` of `access` indexed by `outer_iv` (`k`) and `inner_iv` (`k + 1`), each
    maybe plus a value that is always 0, when no other index depends on either; else None."""
    ivs = {outer_iv, inner_iv}
    for axis in range(len(indices) - 1):
        if indexes_by(indices[axis], outer_iv) and indexes_by(indices[axis + 1], inner_iv):
            rest = indices[:axis] + indices[axis + 2:]
            return None if any(depends_on(index, ivs) for index in rest) else axis
    return None


def indexes_by(index: SSAValue, iv: SSAValue) -> bool:
    """Whether `index` is `iv`, or `iv` plus a value that is always 0."""
    if index is iv:
        return True
    owner = index.owner
    return isinstance(owner, arith.AddiOp) and (
        (owner.lhs is iv and always_zero(owner.rhs))
        or (owner.rhs is iv and always_zero(owner.lhs))
    )


def collapse_rows(nest: Reduction) -> ForOp | None:
    """Merges the two innermost reduction loops into one when they walk whole rows of every
    buffer they read: each such load indexes its last two axes by the two loops' induction
    variables themselves (the outer one, then the inner one, whose extent is the last axis's)
    and nothing else by them. The loads then read a `memref.collapse_shape` of their buffer
    (the last two axes as one, made before the nest) at the merged loop's index, contiguous in
    it: a global average pool's 14x14 window becomes one reduction over 196 contiguous
    elements, long enough for vector partial sums. Returns the merged loop, or None, changing
    nothing, if the loops or the loads are not of that form."""
    if len(nest.reduction) < 2 or not nest.spatial:
        return None
    outer, inner = nest.reduction[-2], nest.reduction[-1]
    if body_of(outer) != [inner] or body_of(inner) != [nest.update]:
        return None
    if not is_unit_loop(outer) or not is_unit_loop(inner):
        return None
    row_ivs = {outer.induction_var, inner.induction_var}
    root = nest.spatial[0]
    rows: list[tuple[LoadOp, list[SSAValue]]] = []
    for access in accesses_in([nest.update]):
        indices = list(access.indices)
        if not any(depends_on(index, row_ivs) for index in indices):
            continue
        buffer_type = access.memref.type
        if (
            not isinstance(access, LoadOp) or access.memref is nest.home
            or len(indices) < 2 or indices[-2] is not outer.induction_var
            or indices[-1] is not inner.induction_var
            or any(depends_on(index, row_ivs) for index in indices[:-2])
            or not isinstance(buffer_type, MemRefType)
            or not isinstance(buffer_type.layout, NoneAttr)
            or buffer_type.get_shape()[-1] != extent(inner)
            or not defined_outside(access.memref, root)
        ):
            return None
        rows.append((access, indices[:-2]))
    if not rows:
        return None
    buffers = {load.memref for load, _ in rows}
    row_loads = {load for load, _ in rows}
    if any(isinstance(op, LoadOp) and op.memref in buffers and op not in row_loads
           for op in nest.update.walk()):
        return None  # the buffer is also read off the rows
    views = {buffer: tail_view(buffer, 2, root) for buffer in buffers}
    merged = fuse(outer, inner)
    for load, leading in rows:
        load.operands = (views[load.memref], *leading, merged.induction_var)
    refresh_reads(nest.update, views.values())
    for op in reversed(body_of(merged)):
        if op is not nest.update and is_pure(op) and not any(r.uses for r in op.results):
            op.detach()
            op.erase()
    return merged


COMBINERS: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.MaximumfOp, arith.MaxnumfOp, arith.MinimumfOp, arith.MinnumfOp,
)
"""The float combiners the rule splits. A sum's partials change the rounding (for the
better); a max's or min's change nothing: they are exact and associative (NaN propagates
through `maximumf` into whichever partial meets it). The partials start as the first block's
values, so no identity is needed."""


def add_fast_math_flag(op: Operation, flag: FastMathFlag) -> bool:
    """Adds `flag` to the float op's `fastmath` flags, keeping those it has; returns whether
    it was missing."""
    flags = op.properties.get("fastmath")
    present = list(flags.data) if isinstance(flags, arith.FastMathFlagsAttr) else []
    if flag in present:
        return False
    op.properties["fastmath"] = arith.FastMathFlagsAttr([*present, flag])
    return True


def free_zero_sign(op: Operation, accumulator: SSAValue | None = None) -> Operation:
    """Marks a `maximumf`/`minimumf` that accumulates a reduction `nsz` (returns `op`): a
    reduction's order is free, and so is the sign of a zero it returns (+0 or -0 when both
    are in the row; equal values). `convert-loop-to-llvm` then lowers it as a compare and
    select that keeps NaN (3 x86 instructions), not `llvm.maximum` (6: it orders +0 above
    -0), the instruction per vector of a softmax's row maximum and of a max pool's window.
    With `accumulator` (the buffer the op's result goes back to), a load of it is put second:
    the lowering's NaN test falls on the new value, off the chain through the accumulator (a
    blend and a max, 5 cycles a step on x86, not 8)."""
    if not isinstance(op, arith.MaximumfOp | arith.MinimumfOp):
        return op
    add_fast_math_flag(op, FastMathFlag.NO_SIGNED_ZEROS)
    lhs, rhs = op.operands
    if isinstance(lhs.owner, LoadOp) and accumulator is not None \
            and lhs.owner.memref is accumulator:
        op.operands = (rhs, lhs)
    return op


def combiners(nest: Reduction) -> list[Operation]:
    """The ops that combine the update's accumulator with a new value (`acc' = acc op
    value`, stored back into it)."""
    combiners = []
    for op in nest.update.walk():
        if not isinstance(op, StoreOp) or op.memref is not nest.home:
            continue
        combine = op.value.owner
        if isinstance(combine, Operation) and any(
            isinstance(value.owner, LoadOp) and value.owner.memref is nest.home
            for value in combine.operands
        ):
            combiners.append(combine)
    return combiners


def free_zero_signs(nest: Reduction) -> None:
    """Marks a max or min reduction's combining op `nsz` (`free_zero_sign`): whatever rule
    schedules it, the sign of a zero it returns is free (a max pool's window, a ReduceMax)."""
    for combine in combiners(nest):
        free_zero_sign(combine, nest.home)


def _accumulation(update: BlockOp, home: SSAValue) -> tuple[LoadOp, Operation] | None:
    """(the load of `home`, the combining op) when the update's only store to `home` stores
    `combine(load(home), x)` at the load's indices (`combine` one of `COMBINERS`), the load
    used by the combining op alone."""
    stores = [op for op in update.walk() if isinstance(op, StoreOp)]
    loads = [op for op in update.walk() if isinstance(op, LoadOp) and op.memref is home]
    if len(stores) != 1 or stores[0].memref is not home or len(loads) != 1:
        return None
    store, load = stores[0], loads[0]
    add = store.value.owner
    if type(add) not in COMBINERS or list(store.indices) != list(load.indices):
        return None
    if list(add.operands).count(load.result) != 1 or len(list(load.result.uses)) != 1:
        return None
    return load, add


class _Splitter:
    """Emits the partial-sum loops in place of the reduction loop."""

    def __init__(self, loop: ForOp, update: BlockOp, home: SSAValue, load: LoadOp,
                 element: AnyFloat, vectors: int, lanes: int,
                 combiner: type[Operation] = arith.AddfOp) -> None:
        self.loop = loop
        self.combiner = combiner
        self.update = update
        self.home = home
        self.home_indices = list(load.indices)
        self.element = element
        self.vectors = vectors
        self.lanes = lanes
        self.axis = loop.axis.data
        self.name = update.block_name.data
        self.part: SSAValue | None = None

    def const(self, value: int) -> SSAValue:
        return index_constant(value, self.loop)

    def for_(self, ub: int | SSAValue, step: int, axis: str, kind: str,
             body: Callable[[SSAValue, list[Operation]], None], lb: int | SSAValue = 0
             ) -> ForOp:
        block = Block(arg_types=[IndexType()])
        block.args[0].name_hint = value_name(axis)
        ops: list[Operation] = []
        body(block.args[0], ops)
        block.add_ops([*ops, YieldOp()])
        bounds = [bound if isinstance(bound, SSAValue) else self.const(bound) for bound in (lb, ub)]
        return ForOp(bounds[0], bounds[1], self.const(step), block, axis, kind)

    def build(self, trip: int) -> None:
        block = self.vectors * self.lanes
        full = trip - trip % block
        part_type = MemRefType(self.element, [self.vectors, self.lanes])
        alloc = AllocOp(part_type, "local")
        alloc.result.name_hint = "partial"
        self.part = alloc.result
        # The first block's values are the partials' first values (not combined into the
        # identity: x + 0 and max(x, -inf) are instructions LLVM keeps, 24 of 250 per
        # 128-wide softmax row); the blocks after it accumulate.
        first = self.tile(self.vectors, self.accumulate_at(self.const(0), first=True))
        ops: list[Operation] = [alloc, first]
        if full > block:
            ops.append(self.for_(full, block, f"{self.axis}.o", "serial", self.accumulate,
                                 lb=block))
        # The tail's whole vectors accumulate into the first row of partials (a scalar tail
        # of up to B - 1 values cost more than the blocks when the update is costly: softmax's
        # exp over 1000-wide rows ran 104 scalar exps a row, the blocks 56 vector ones).
        vector_full = trip - trip % self.lanes
        if vector_full > full:
            ops.append(self.for_(vector_full, self.lanes, f"{self.axis}.t", "serial",
                                 self.accumulate_one, lb=full))
        # The last N mod L values too, as one narrower vector into the first lanes of the
        # first partial (a scalar tail was a chain of scalar combines after the blocks: 8 of
        # `llvm.maximum` and 8 adds per 1000-wide softmax row, each through a lane extract).
        if vector_full < trip:
            ops.append(self.tile(1, self.accumulate_at(self.const(vector_full)),
                                 trip - vector_full))
        self.finish(ops)

    def finish(self, ops: list[Operation]) -> None:
        """`ops` (the partials' allocation and accumulation), then the folds of the partials
        into the first lane and its combine into `home`, in place of the reduction loop."""
        assert self.part is not None
        # Pairwise halving that keeps the odd one out: 14 partials (cortex-a72's 2 x 7) fold
        # as 7 + 7, then 3 into the last 4, then 2 + 2, then 1 + 1.
        for count, offset in halvings(self.vectors):
            ops.append(self.tile(count, self.fold_vectors(offset)))
        # The lanes fold as vectors of `count` lanes (one half of the vector onto the other: a
        # lane shuffle and one vector op per halving), not lane by lane: scalar folds of a
        # 16-lane max extracted each lane (and `llvm.maximum` on scalars moves each sign
        # through a general register), about 150 instructions per combine, where a softmax
        # over 128-wide rows combines twice per row.
        for count, offset in halvings(self.lanes):
            ops.append(self.for_(count, 1, f"{self.axis}.l",
                                 "vectorized" if count > 1 else "unrolled",
                                 self.fold_lanes(offset)))
        ops += [self.combine(), DeallocOp(self.part)]
        parent = self.loop.parent_block()
        assert parent is not None
        for op in ops:
            parent.insert_op_before(op, self.loop)
        self.loop.detach()
        self.loop.erase()

    def build_runtime(self, trip: SSAValue) -> None:
        """The partial sums of a loop over `[0, trip)`, `trip` a runtime value: the partials
        start at 0 (there may be no block), then the blocks, the whole vectors left into the
        first row of partials, the last values one at a time into its first lane (a vector
        narrower than L would need their count), and the folds and combine (`finish`)."""
        block = self.vectors * self.lanes
        part_type = MemRefType(self.element, [self.vectors, self.lanes])
        alloc = AllocOp(part_type, "local")
        alloc.result.name_hint = "partial"
        self.part = alloc.result
        sizes: list[Operation] = []
        ends: list[SSAValue] = []
        for size in (block, self.lanes):
            rest = arith.RemUIOp(trip, self.const(size))
            whole = arith.SubiOp(trip, rest.result)
            sizes += [rest, whole]
            ends.append(whole.result)
        full, vector_full = ends
        ops: list[Operation] = [*sizes, alloc, self.tile(self.vectors, self.zero_at),
                                self.for_(full, block, f"{self.axis}.o", "serial",
                                          self.accumulate),
                                self.for_(vector_full, self.lanes, f"{self.axis}.t", "serial",
                                          self.accumulate_one, lb=full),
                                self.for_(trip, 1, f"{self.axis}.s", "serial",
                                          lambda r, inner: inner.append(
                                              self.tile(1, self.accumulate_at(r), 1)),
                                          lb=vector_full)]
        self.finish(ops)

    def zero_at(self, v: SSAValue, l: SSAValue, ops: list[Operation]) -> None:
        """`part[v, l] = 0` (the block `<name>.partials`)."""
        assert self.part is not None
        zero = arith.ConstantOp(FloatAttr(0.0, self.element))
        store = StoreOp(zero.result, self.part, [v, l])
        ops.append(BlockOp(f"{self.name}.{PARTIALS_BLOCK}", [], [self.part], [zero, store],
                           self.update.spatial_axes))

    def tile(self, vectors: int, fill: Callable[[SSAValue, SSAValue, list[Operation]], None],
             lanes_: int = 0) -> ForOp:
        """`for r.v (unrolled vectors) { for r.l (vectorized L) { fill(v, l) } }` (`lanes_`
        lanes in place of L if given)."""
        def lanes(v: SSAValue, ops: list[Operation]) -> None:
            ops.append(self.for_(lanes_ or self.lanes, 1, f"{self.axis}.l", "vectorized",
                                 lambda l, inner: fill(v, l, inner)))

        return self.for_(vectors, 1, f"{self.axis}.v", "unrolled", lanes)

    def accumulate_one(self, ro: SSAValue, ops: list[Operation]) -> None:
        """The update at `r = r.t + l` into `part[0, l]` (one vector of the tail)."""
        self.accumulate(ro, ops, 1)

    def accumulate(self, ro: SSAValue, ops: list[Operation], vectors: int = 0) -> None:
        """The update at `r = r.o + v * L + l` into `part[v, l]` (`vectors` rows, default
        all)."""
        ops.append(self.tile(vectors or self.vectors, self.accumulate_at(ro)))

    def accumulate_at(self, ro: SSAValue, first: bool = False
                      ) -> Callable[[SSAValue, SSAValue, list[Operation]], None]:
        """`fill(v, l)` of the update at `r = ro + v * L + l` into `part[v, l]`; `first`: the
        value itself stored there (the block `<name>.partials`), not combined with it."""
        part = self.part
        assert part is not None

        def at(v: SSAValue, l: SSAValue, inner: list[Operation]) -> None:
            offset = arith.MuliOp(v, self.const(self.lanes))
            base = arith.AddiOp(ro, offset.result)
            index = arith.AddiOp(base.result, l)
            clone = self.update.clone(
                value_mapper={self.loop.induction_var: index.result, self.home: part})
            for op in clone.walk():
                if isinstance(op, LoadOp) and op.memref is part:
                    op.operands = (part, v, l)
                elif isinstance(op, StoreOp) and op.memref is part:
                    op.operands = (op.value, part, v, l)
                    free_zero_sign(op.value.owner, part)
            if first:
                self.store_value_itself(clone)
            inner += [offset, base, index, clone]

        return at

    def store_value_itself(self, clone: BlockOp) -> None:
        """Turn `clone`, an update of the partials (`part = combine(part, x)`), into
        `part = x`, named `<name>.partials`."""
        part = self.part
        store = next(op for op in clone.walk() if isinstance(op, StoreOp) and op.memref is part)
        combiner = store.value.owner
        assert isinstance(combiner, Operation)
        acc = next(op for op in combiner.operands
                   if isinstance(op.owner, LoadOp) and op.owner.memref is part)
        value = next(op for op in combiner.operands if op is not acc)
        store.operands = (value, *store.operands[1:])
        load = acc.owner
        combiner.detach()
        combiner.erase()
        assert isinstance(load, LoadOp)
        load.detach()
        load.erase()
        clone.properties["name"] = StringAttr(f"{self.name}.{PARTIALS_BLOCK}")
        set_block_buffers(clone, [b for b in clone.reads if b is not part], [part])

    def fold_vectors(self, offset: int) -> Callable[[SSAValue, SSAValue, list[Operation]], None]:
        """`part[v, l] += part[v + offset, l]`."""
        def fill(v: SSAValue, l: SSAValue, ops: list[Operation]) -> None:
            other = arith.AddiOp(v, self.const(offset))
            ops += [other, self.add_block([v, l], [other.result, l])]

        return fill

    def fold_lanes(self, offset: int) -> Callable[[SSAValue, list[Operation]], None]:
        """`part[0, l] += part[0, l + offset]`."""
        def fill(l: SSAValue, ops: list[Operation]) -> None:
            other = arith.AddiOp(l, self.const(offset))
            ops += [other, self.add_block([self.const(0), l], [self.const(0), other.result])]

        return fill

    def add_block(self, into: list[SSAValue], other: list[SSAValue]) -> BlockOp:
        """`part[into] = combine(part[into], part[other])`."""
        assert self.part is not None
        lhs = LoadOp(self.part, into)
        rhs = LoadOp(self.part, other)
        add = free_zero_sign(self.combiner(lhs, rhs))
        store = StoreOp(add.result, self.part, into)
        return BlockOp(f"{self.name}.{COMBINE_BLOCK}", [self.part], [self.part],
                       [lhs, rhs, add, store], self.update.spatial_axes)

    def combine(self) -> BlockOp:
        """`home[p] = combine(home[p], part[0, 0])`."""
        assert self.part is not None
        zero = self.const(0)
        total = LoadOp(self.part, [zero, zero])
        acc = LoadOp(self.home, self.home_indices)
        add = free_zero_sign(self.combiner(acc, total))
        store = StoreOp(add.result, self.home, self.home_indices)
        return BlockOp(f"{self.name}.{COMBINE_BLOCK}", [self.part, self.home], [self.home],
                       [total, acc, add, store], self.update.spatial_axes)
