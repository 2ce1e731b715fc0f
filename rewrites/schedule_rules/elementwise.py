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

from dlc.dialects.loop.ops import StoreOp
from dlc.rewrites.schedule import ScheduleError, vectorize
from dlc.rewrites.schedule_rules.config import CpuConfig
from dlc.rewrites.schedule_rules.nest import Elementwise, accesses_in, extent
from dlc.rewrites.schedule_rules.partial_sums import merge_rows
from dlc.rewrites.schedule_rules.reduction import mark_parallel


def schedule_elementwise(nest: Elementwise, config: CpuConfig) -> bool:
    """Vectorize and parallelize an elementwise nest; returns whether anything changed."""
    stores = [op for op in accesses_in(list(nest.blocks)) if isinstance(op, StoreOp)]
    element = stores[0].value.type if stores else None
    changed = element is not None and merge_rows(
        nest.spatial, nest.blocks, config.lanes(element))
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
