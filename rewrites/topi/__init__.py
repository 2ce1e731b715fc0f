"""dlc's TOPI: one compute definition per graph op, written with `tensor_expr.compute`.

Counterpart: Apache TVM's TOPI (topi/python/tvm/topi). Definitions live in small modules by
family (custom (user-defined ops), dynamic (data-dependent sizes), elementwise, nn, pool,
quant, recurrent, reduce, resize, sort, tensor, transform, winograd) and register themselves
for their op classes with `@compute_definition`; `lookup_definition(op_type)` finds the one for
an op. Importing this package loads every module, so the registry is complete.
"""

from dlc.rewrites.topi import (
    custom,
    dynamic,
    elementwise,
    nn,
    pool,
    quant,
    recurrent,
    reduce,
    resize,
    sort,
    tensor,
    transform,
    winograd,
)
from dlc.rewrites.topi.registry import (
    Definition,
    compute_definition,
    defined_op_types,
    lookup_definition,
)

__all__ = [
    "Definition",
    "compute_definition",
    "custom",
    "defined_op_types",
    "dynamic",
    "elementwise",
    "lookup_definition",
    "nn",
    "pool",
    "quant",
    "recurrent",
    "reduce",
    "resize",
    "sort",
    "tensor",
    "transform",
    "winograd",
]

