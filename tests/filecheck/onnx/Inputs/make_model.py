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


MODELS = {
    "conv_block": conv_block,
    "conv_block_dynamic": lambda: conv_block(batch="N"),
    "shape_chain": shape_chain,
    "unsupported": unsupported,
    "old_opset": old_opset,
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
