"""`graph-conv-subsample`: a conv axis with one tap, no padding and a stride reads a sliced
input with stride 1; results kept (the graph interpreter before and after the pass, on random
geometries, both layouts) and compiled (a ResNet-style 1x1 stride-2 conv against ONNX's
reference evaluator)."""

from __future__ import annotations

import numpy as np
from dlc.dialects import make_context
from dlc.dialects.graph.ops import Conv2DOp
from dlc.dialects.graph.ops_tensor import SliceOp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.parser import Parser

import dlc
from tests.test_graph_passes import check_pass, graph_ops


def conv_module(c: int, o: int, h: int, w: int, kh: int, kw: int, strides: tuple[int, int],
                pads: tuple[int, int, int, int], groups: int, nhwc: bool) -> str:
    top, left, bottom, right = pads
    oh = (h + top + bottom - kh) // strides[0] + 1
    ow = (w + left + right - kw) // strides[1] + 1
    if nhwc:
        x_t, w_t = f"tensor<1x{h}x{w}x{c}xf32>", f"tensor<{kh}x{kw}x{c // groups}x{o}xf32>"
        y_t, layouts = f"tensor<1x{oh}x{ow}x{o}xf32>", ', layout = "NHWC", kernel_layout = "HWIO"'
    else:
        x_t, w_t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{o}x{c // groups}x{kh}x{kw}xf32>"
        y_t, layouts = f"tensor<1x{o}x{oh}x{ow}xf32>", ""
    return f"""func.func @main(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>) -> {y_t} {{
  %r = graph.conv2d %x, %w, %b {{strides = array<i64: {strides[0]}, {strides[1]}>,
      padding = array<i64: {top}, {left}, {bottom}, {right}>, groups = {groups} : i64{layouts}}}
      : ({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}
  func.return %r : {y_t}
}}"""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.sampled_from([1, 2]), c=st.integers(1, 3), o=st.integers(1, 3),
       h=st.integers(1, 9), w=st.integers(1, 9), kh=st.sampled_from([1, 1, 2, 3]),
       kw=st.sampled_from([1, 1, 3]), sh=st.integers(1, 3), sw=st.integers(1, 3),
       pads=st.tuples(*[st.sampled_from([0, 0, 1])] * 4), nhwc=st.booleans())
def test_the_pass_keeps_results(groups: int, c: int, o: int, h: int, w: int, kh: int, kw: int,
                                sh: int, sw: int, pads: tuple[int, int, int, int],
                                nhwc: bool) -> None:
    top, left, bottom, right = pads
    if h + top + bottom < kh or w + left + right < kw:
        return
    text = conv_module(c * groups, o * groups, h, w, kh, kw, (sh, sw), pads, groups, nhwc)
    module = Parser(make_context(), text).parse_module()
    check_pass(module, "graph-conv-subsample")
    sliced = (kh == 1 and sh > 1 and not top + bottom) or (kw == 1 and sw > 1 and not left + right)
    assert len(graph_ops(module, SliceOp)) == int(sliced)
    (conv,) = graph_ops(module, Conv2DOp)
    assert isinstance(conv, Conv2DOp)
    assert conv.strides_tuple() == ((1 if kh == 1 and not top + bottom else sh),
                                    (1 if kw == 1 and not left + right else sw))


def test_compiled_downsampling_conv_matches_onnx() -> None:
    """ResNet's shortcut: a 1x1 stride-2 conv with bias, then ReLU, compiled (the slice and the
    stride-1 conv) against ONNX's reference evaluator."""
    rng = np.random.default_rng(5)
    weight = (rng.standard_normal((24, 16, 1, 1)) * 0.2).astype(np.float32)
    bias = rng.standard_normal(24).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1], strides=[2, 2]),
         helper.make_node("Relu", ["c"], ["y"])],
        "downsample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 14, 13])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 7, 7])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, 16, 14, 13)).astype(np.float32)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    actual = np.asarray(dlc.compile(model, threads=2, cache=False)(x))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
