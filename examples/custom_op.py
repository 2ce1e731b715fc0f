"""A user-defined ONNX op compiled by dlc: `Swish` (x * sigmoid(beta * x)) in domain com.example.

Registers the op with its shape function, NumPy reference and tensor-expression compute, builds
a small ONNX model Relu -> Swish -> Add, compiles it (the Swish is fused with its neighbours)
and checks the result against the NumPy reference. Run from a checkout:

    python3 examples/custom_op.py
"""

from __future__ import annotations

import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dlc  # noqa: E402
from dlc.custom_op import register_op  # noqa: E402


def swish_reference(x: np.ndarray, beta: float = 1.0) -> np.ndarray:
    """The op's semantics in NumPy (the graph interpreter and --check-semantics run this)."""
    return x / (1 + np.exp(-beta * x))


def swish_compute(te, x, beta: float = 1.0):  # noqa: ANN001 - te builder and input tensor
    """The op as a tensor expression: one elementwise compute."""
    return te.compute(x.shape, lambda i: x[i] * te.sigmoid(x[i] * beta))


register_op(
    "Swish", domain="com.example", opset=1,
    shape=lambda x, beta=1.0: (x.shape, x.dtype),
    reference=swish_reference, compute=swish_compute,
    fusion="elementwise", attributes={"beta": 1.0},
)

graph = helper.make_graph(
    [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Swish", ["a"], ["b"], domain="com.example", beta=0.5),
        helper.make_node("Add", ["b", "x"], ["y"]),
    ],
    "swish_example",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])],
)
model = helper.make_model(
    graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
)

compiled = dlc.compile(model)
x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
expected = swish_reference(np.maximum(x, 0), 0.5) + x
error = float(np.abs(compiled(x) - expected).max())
print(f"Swish custom op: max abs error vs NumPy {error:.2e}")
assert error < 1e-5, error
