"""BYOC offload to OpenBLAS (`dlc.compile(model, byoc="cblas")`): a convnet whose dense layers
run as cblas_sgemm calls of generated C code, the rest as dlc's kernels, matches ONNX Runtime
within 1e-4. Skipped, with the reason, without scipy-openblas32, a C compiler or onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from dlc.driver.byoc import available_reason, cblas_region_source
from onnx import TensorProto, helper, numpy_helper

import dlc

REASON = available_reason("cblas")
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"{REASON}")


def convnet(rng: np.random.Generator) -> onnx.ModelProto:
    """Conv-Relu-MaxPool-Flatten-Gemm-Relu-Gemm on 1x3x16x16."""
    weights = {
        "conv_w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
        "conv_b": rng.standard_normal(8).astype(np.float32) * 0.1,
        "fc1_w": rng.standard_normal((512, 64)).astype(np.float32) * 0.05,
        "fc1_b": rng.standard_normal(64).astype(np.float32) * 0.1,
        "fc2_w": rng.standard_normal((64, 10)).astype(np.float32) * 0.1,
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("MatMul", ["f", "fc1_w"], ["m1"]),
        helper.make_node("Add", ["m1", "fc1_b"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["h"]),
        helper.make_node("MatMul", ["h", "fc2_w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "convnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_convnet_with_cblas_matches_onnxruntime(tmp_path) -> None:
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(7)
    model = convnet(rng)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    compiled = dlc.compile(model, byoc="cblas", cache=False)
    externs = compiled.native.compiled.externs
    assert sorted(externs) == ["cblas_region_1", "cblas_region_3"]
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-4)
    exported = compiled.export(tmp_path / "convnet.so")
    np.testing.assert_allclose(dlc.load(exported)(x), expected, rtol=1e-4, atol=1e-4)


def test_region_source_calls_sgemm_per_matmul() -> None:
    from dlc.dialects import make_context
    from xdsl.parser import Parser

    text = """
    func.func private @cblas_region_0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>,
                                      %c: tensor<4x5xf32>) -> tensor<2x5xf32> {
      %ab = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %abc = graph.matmul %ab, %c : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
      func.return %abc : tensor<2x5xf32>
    }"""
    function = next(iter(Parser(make_context(), text).parse_module().ops))
    source = cblas_region_source(function)
    assert "float *t0 = (float *)malloc(sizeof(float) * 8);" in source
    calls = [line.strip() for line in source.splitlines() if "scipy_cblas_sgemm(101" in line]
    assert calls == [
        "scipy_cblas_sgemm(101, 111, 111, 2, 4, 3, 1.0f, in0, 3, in1, 4, 0.0f, t0, 4);",
        "scipy_cblas_sgemm(101, 111, 111, 2, 5, 4, 1.0f, t0, 4, in2, 5, 0.0f, out0, 5);",
    ]


def test_unknown_byoc_target_is_an_error() -> None:
    with pytest.raises(dlc.CompileError, match=r"unknown BYOC target 'mkl' \(known: cblas"):
        dlc.compile(convnet(np.random.default_rng(0)), byoc="mkl", cache=False)
