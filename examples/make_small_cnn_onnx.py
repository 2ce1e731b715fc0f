"""Writes examples/small_cnn.onnx: a small CNN built with onnx.helper, seeded random weights.

    conv 3x3 (3->16) + BatchNormalization + Relu
    conv 3x3 (16->32) + BatchNormalization + Relu -> MaxPool 2x2
    conv 3x3 (32->64) + BatchNormalization + Relu -> MaxPool 2x2
    conv 3x3 (64->64) + Relu, + the block's input (residual Add)
    GlobalAveragePool -> Flatten -> Gemm (64->10) -> Softmax

Input `image` (1, 3, 32, 32), output `probabilities` (1, 10); about 250 KB of weights.
Run: python3 examples/make_small_cnn_onnx.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def build_small_cnn(seed: int = 0) -> onnx.ModelProto:
    """The example network, its weights drawn from `seed`."""
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    weights: list[onnx.TensorProto] = []

    def weight(name: str, array: np.ndarray) -> str:
        weights.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attributes: object) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attributes))
        return name

    def conv(x: str, cin: int, cout: int, name: str, batch_norm: bool) -> str:
        w = weight(f"{name}.weight",
                   rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9)))
        inputs = [x, w] if batch_norm else [x, w, weight(f"{name}.bias",
                                                         rng.standard_normal(cout) * 0.05)]
        y = node("Conv", inputs, name, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        if batch_norm:
            y = node("BatchNormalization", [
                y,
                weight(f"{name}.bn.scale", rng.uniform(0.5, 1.5, cout)),
                weight(f"{name}.bn.bias", rng.standard_normal(cout) * 0.1),
                weight(f"{name}.bn.mean", rng.standard_normal(cout) * 0.1),
                weight(f"{name}.bn.var", rng.uniform(0.5, 1.5, cout)),
            ], f"{name}.bn", epsilon=1e-5)
        return node("Relu", [y], f"{name}.relu")

    y = conv("image", 3, 16, "conv1", batch_norm=True)
    y = conv(y, 16, 32, "conv2", batch_norm=True)
    y = node("MaxPool", [y], "pool1", kernel_shape=[2, 2], strides=[2, 2])
    y = conv(y, 32, 64, "conv3", batch_norm=True)
    block = node("MaxPool", [y], "pool2", kernel_shape=[2, 2], strides=[2, 2])
    y = conv(block, 64, 64, "conv4", batch_norm=False)
    y = node("Add", [y, block], "residual")
    y = node("GlobalAveragePool", [y], "avgpool")
    y = node("Flatten", [y], "flatten", axis=1)
    y = node("Gemm", [y, weight("fc.weight", rng.standard_normal((10, 64)) * 0.2),
                      weight("fc.bias", rng.standard_normal(10) * 0.05)], "fc", transB=1)
    nodes.append(helper.make_node("Softmax", [y], ["probabilities"], name="softmax", axis=1))
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="dlc examples/make_small_cnn_onnx.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    path = Path(__file__).with_name("small_cnn.onnx")
    onnx.save(build_small_cnn(), path)
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
