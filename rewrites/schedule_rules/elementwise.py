"""Default CPU schedule of an elementwise (injective) nest: vectorize the innermost contiguous
axis, run the outermost axis in parallel.

Counterpart: TVM's `schedule_injective` for x86 (fuse, split by the vector width, vectorize,
parallel), dlight's fallback rule.

Schedule: the two innermost spatial loops merge into one when they walk whole rows of every
buffer they touch and a row is not a whole number of vectors (`merge_rows`: a 7x7 plane is one
run of 49 elements, three full vectors and one element, instead of seven 7-lane ones); then the
innermost spatial loop becomes `vectorized` when the `vectorize` primitive finds it legal
(every access contiguous or invariant in it) and it has at least `min_vector_extent`
iterations; the code generator splits it into 16-lane vectors plus one narrower remainder. The
outermost loop with at least two iterations becomes `parallel` (when more than one thread).
"""

from __future__ import annotations

from dlc.dialects.loop.ops import LoadOp, StoreOp
from dlc.rewrites.schedule import ScheduleError, fuse, vectorize
from dlc.rewrites.schedule.common import depends_on, is_pure, set_block_buffers
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import Elementwise, accesses_in, body_of, extent
from dlc.rewrites.schedule_rules.partial_sums import defined_outside, tail_view
from dlc.rewrites.schedule_rules.reduction import mark_parallel
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import SSAValue


def merge_rows(nest: Elementwise, lanes: int) -> bool:
    """Merges the two innermost spatial loops (`fuse`) when rows of `lanes`-wide vectors would
    leave a remainder in every row, and every load and store that depends on either indexes the
    last two axes of its buffer by the two induction variables themselves (in order, the row
    whole) and by nothing else; those accesses then go through a `memref.collapse_shape` of
    the two axes (made before the nest) at the merged index. Returns whether it merged;
    `nest.spatial` follows."""
    if len(nest.spatial) < 2:
        return False
    outer, inner = nest.spatial[-2], nest.spatial[-1]
    if body_of(outer) != [inner] or extent(inner) % lanes == 0:
        return False
    ivs = {outer.induction_var, inner.induction_var}
    root = nest.spatial[0]
    rows: list[LoadOp | StoreOp] = []
    others: set[SSAValue] = set()
    for access in accesses_in(list(nest.blocks)):
        indices = list(access.indices)
        if not any(depends_on(index, ivs) for index in indices):
            others.add(access.memref)
            continue
        buffer_type = access.memref.type
        if (
            len(indices) < 2 or indices[-2] is not outer.induction_var
            or indices[-1] is not inner.induction_var
            or any(depends_on(index, ivs) for index in indices[:-2])
            or not isinstance(buffer_type, MemRefType)
            or not isinstance(buffer_type.layout, NoneAttr)
            or buffer_type.get_shape()[-1] != extent(inner)
            or not defined_outside(access.memref, root)
        ):
            return False
        rows.append(access)
    buffers = {access.memref for access in rows}
    if not rows or buffers & others:
        return False
    views = {buffer: tail_view(buffer, 2, root) for buffer in buffers}
    merged = fuse(outer, inner)
    for access in rows:
        leading = list(access.indices)[:-2]
        if isinstance(access, StoreOp):
            access.operands = (access.value, views[access.memref], *leading,
                               merged.induction_var)
        else:
            access.operands = (views[access.memref], *leading, merged.induction_var)
    for op in reversed(body_of(merged)):
        if is_pure(op) and not any(result.uses for result in op.results):
            op.detach()
            op.erase()  # the row and column the merged index no longer needs
    for block in nest.blocks:
        set_block_buffers(block, [views.get(b, b) for b in block.reads],
                          [views.get(b, b) for b in block.writes])
    nest.spatial.pop()
    return True


def schedule_elementwise(nest: Elementwise, config: CpuConfig) -> bool:
    """Vectorize and parallelize an elementwise nest; returns whether anything changed."""
    stores = [op for op in accesses_in(list(nest.blocks)) if isinstance(op, StoreOp)]
    element = stores[0].value.type if stores else None
    changed = element is not None and merge_rows(nest, config.lanes(element))
    inner = nest.spatial[-1]
    if extent(inner) >= config.min_vector_extent:
        try:
            vectorize(inner)
            changed = True
        except ScheduleError:
            pass
    if config.parallel:
        outer = [loop for loop in nest.spatial if loop.kind.data == "serial"]
        if outer:
            before = outer[0].kind.data
            mark_parallel([outer[0]])
            changed = changed or any(loop.kind.data == "parallel" for loop in outer) or (
                before != outer[0].kind.data
            )
    return changed
