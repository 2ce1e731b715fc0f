#!/usr/bin/env python3
"""Write one of the test models of tests/onnx/models.py (or a broken variant) as a .onnx file.

    make_model.py NAME OUT.onnx
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
from onnx import helper

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests.onnx.models import conv_block, model, shape_chain, tensor  # noqa: E402


def unsupported() -> onnx.ModelProto:
    nodes = [helper.make_node("Hardmax", ["x"], ["a"], name="hardmax1"),
             helper.make_node("Relu", ["a"], ["b"], name="relu1"),
             helper.make_node("Det", ["b"], ["y"], name="det1")]
    return model(nodes, [tensor("x", [3, 3])], [tensor("y", [])])


def old_opset() -> onnx.ModelProto:
    proto = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [2])],
                  [tensor("y", [2])])
    proto.opset_import[0].version = 6
    return proto


def maxpool_indices() -> onnx.ModelProto:
    return model([helper.make_node("MaxPool", ["x"], ["y", "i"], name="pool",
                                   kernel_shape=[2, 2], strides=[2, 2])],
                 [tensor("x", [1, 2, 4, 4])],
                 [tensor("y", [1, 2, 2, 2]), tensor("i", [1, 2, 2, 2], onnx.TensorProto.INT64)])


def loop_window() -> onnx.ModelProto:
    """A Loop of 5 windows x[:, i + 2 : i + 4] (the trip count an initializer)."""
    import numpy as np
    from onnx import numpy_helper

    from tests.onnx.test_onnx_control_flow import sliding_window_model

    proto = sliding_window_model(2, 2)
    trip = [i for i in proto.graph.input if i.name == "n"]
    proto.graph.input.remove(trip[0])
    proto.graph.initializer.append(numpy_helper.from_array(np.array(5, np.int64), "n"))
    return proto


MODELS = {
    "conv_block": conv_block,
    "conv_block_dynamic": lambda: conv_block(batch="N"),
    "shape_chain": shape_chain,
    "unsupported": unsupported,
    "old_opset": old_opset,
    "maxpool_indices": maxpool_indices,
    "loop_window": loop_window,
}


def main() -> None:
    name, out = sys.argv[1], sys.argv[2]
    if name == "truncated":
        with open(out, "wb") as f:
            f.write(conv_block().SerializeToString()[:300])
        return
    onnx.save(MODELS[name](), out)


if __name__ == "__main__":
    main()
