"""The `tensor_expr` dialect: tensors defined by index expressions; TVM's Tensor Expression level.

Each operator of a fused group is one `tensor_expr.compute`: a result shape, optional reduction
extents with a combiner (sum, max, min, prod) and an init, and a body over the index variables that
reads other tensors with `tensor_expr.read` and yields one scalar. This is where an operator is
defined (TVM's TOPI); schedules act later, on the `loop` level that convert-tensor-expr-to-loop
produces, by the compute's name and tag. `tensor_expr.scan` (TVM's te.scan) runs a group of
computes once per time step, carrying states: the recurrent ops' time loop.
"""

from dlc.dialects.tensor_expr.ops import COMBINERS, ComputeBody, ComputeOp, ReadOp, YieldOp
from dlc.dialects.tensor_expr.scan import ScanOp, ScanYieldOp
from xdsl.ir import Dialect

__all__ = [
    "COMBINERS", "ComputeBody", "ComputeOp", "ReadOp", "ScanOp", "ScanYieldOp", "TensorExpr",
    "YieldOp",
]

TensorExpr = Dialect(
    "tensor_expr",
    [
        # computes
        ComputeOp,
        # body
        ReadOp,
        YieldOp,
        # sequential loops over time (scan.py)
        ScanOp,
        ScanYieldOp,
    ],
    [],
)
"""The `tensor_expr` dialect: compute definitions over tensors (TVM's te.compute)."""
