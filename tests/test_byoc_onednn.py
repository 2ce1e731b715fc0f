"""BYOC offload to oneDNN (`dlc.compile(model, byoc="onednn")`): convs (with a fused relu
post-op), pools and matmuls of a convnet run as oneDNN primitives, the rest as dlc's kernels;
the whole matches ONNX Runtime within 1e-4. Skipped, with the reason, without oneDNN (the
`onednn` extra), a C compiler or onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.driver.byoc import available_reason
from test_byoc_cblas import convnet
from xdsl.parser import Parser

import dlc

REASON = available_reason("onednn")
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"{REASON}")


def test_convnet_with_onednn_matches_onnxruntime(tmp_path) -> None:
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(11)
    model = convnet(rng)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    compiled = dlc.compile(model, byoc="onednn", cache=False)
    assert len(compiled.native.compiled.externs) >= 2
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(compiled(x * 2), session.run(None, {"x": x * 2})[0],
                               rtol=1e-4, atol=1e-4)  # the primitives are reused
    exported = compiled.export(tmp_path / "convnet.so")
    np.testing.assert_allclose(dlc.load(exported)(x), expected, rtol=1e-4, atol=1e-4)


def test_region_source_fuses_relu_as_post_op() -> None:
    from dlc.driver.byoc_onednn import onednn_region_source

    text = """
    func.func private @onednn_region_0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                                       %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
      %c = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
      %r = graph.relu %c : tensor<1x4x8x8xf32>
      %p = graph.max_pool2d %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
      func.return %p : tensor<1x4x4x4xf32>
    }"""
    function = next(iter(Parser(make_context(), text).parse_module().ops))
    source = onednn_region_source(function)
    assert source.count("dnnl_primitive_create") == 1  # the helper; two primitives use it
    assert "dlc_attr(1)" in source  # conv + relu post-op
    assert "dnnl_eltwise_forward_primitive_desc_create(&pd" not in source
    assert "dnnl_pooling_max" in source
    assert "static dnnl_primitive_t onednn_region_0_p1;" in source
    assert "onednn_region_0_p2" not in source


def test_dlc_compile_byoc_onednn_command(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    import onnx

    rng = np.random.default_rng(12)
    model = convnet(rng)
    path = tmp_path / "convnet.onnx"
    onnx.save(model, path)
    tool = Path(__file__).resolve().parent.parent / "tools" / "dlc"
    output = tmp_path / "convnet.so"
    result = subprocess.run(
        [sys.executable, str(tool), "compile", str(path), "--byoc", "onednn", "--no-cache",
         "-o", str(output)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    reference = dlc.compile(model, cache=False)
    np.testing.assert_allclose(dlc.load(output)(x), reference(x), rtol=1e-4, atol=1e-4)
