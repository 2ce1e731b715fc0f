"""The custom op that tests/filecheck/dialects/graph/ops.mlir uses (`dlc-opt --custom-ops`)."""

import numpy as np

from dlc.custom_op import register_op

register_op(
    "Swish", domain="com.example",
    shape=lambda x, beta=1.0: (x.shape, x.dtype),
    reference=lambda x, beta=1.0: x / (1 + np.exp(-beta * x)),
    compute=lambda te, x, beta=1.0: te.compute(x.shape, lambda i: x[i] * te.sigmoid(x[i] * beta)),
    fusion="elementwise", attributes={"beta": 1.0},
)
