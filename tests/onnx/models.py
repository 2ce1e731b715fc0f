"""Small ONNX models built in memory for the frontend's tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Shape = Sequence[int | str]


def tensor(name: str, shape: Shape | None, elem_type: int = TensorProto.FLOAT
           ) -> onnx.ValueInfoProto:
    """A tensor value info (`shape` None: unknown rank)."""
    return helper.make_tensor_value_info(name, elem_type, None if shape is None else list(shape))


def model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
          outputs: Sequence[onnx.ValueInfoProto], initializers: dict[str, np.ndarray] | None = None,
          opset: int = 17) -> onnx.ModelProto:
    """A model over the default domain at `opset`."""
    graph = helper.make_graph(
        list(nodes), "test", list(inputs), list(outputs),
        initializer=[numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def conv_block(batch: int | str = 1) -> onnx.ModelProto:
    """x -> Conv(3x3, bias) -> Relu -> MaxPool -> Flatten -> Gemm(transB) -> Softmax."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten1"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["g"], name="fc1", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax1", axis=1),
    ]
    weights = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(4).astype(np.float32),
        "fc_w": rng.standard_normal((10, 64)).astype(np.float32),
        "fc_b": rng.standard_normal(10).astype(np.float32),
    }
    return model(nodes, [tensor("x", [batch, 3, 8, 8])], [tensor("y", [batch, 10])], weights)


def shape_chain() -> onnx.ModelProto:
    """x (2x3x4) reshaped to (2, 12) through Shape -> Gather -> Unsqueeze -> Concat."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    constants = {"zero": np.array(0, np.int64), "axes": np.array([0], np.int64),
                 "minus_one": np.array([-1], np.int64)}
    return model(nodes, [tensor("x", [2, 3, 4])], [tensor("y", [2, 12])], constants)
