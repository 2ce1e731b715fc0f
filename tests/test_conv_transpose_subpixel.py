"""`graph-conv-transpose-to-subpixel`: transposed convs as sub-pixel convs, checked against ONNX
Runtime's ConvTranspose on random geometries (strides, kernels, pads, output padding, groups,
1-D), at the graph level (the graph interpreter after the pass) and compiled by the `cpu`
pipeline."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects.graph.interpreter import run_module
from dlc.dialects.graph.ops import Conv2DOp
from dlc.dialects.graph.ops_tensor import ConvTranspose2DOp
from dlc.frontends.onnx.importer import import_onnx
from dlc.rewrites.graph_conv_transpose_to_subpixel import plan_axis, subpixel_weight
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlc
from tests.test_graph_passes import apply

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

def examples(count: int) -> settings:
    return settings(max_examples=count, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def geometries(draw: st.DrawFn) -> dict[str, object]:
    """A valid ConvTranspose: 1-D or 2-D, pads below the kernel, output padding below the
    stride, groups dividing both channel counts."""
    rank = draw(st.sampled_from([1, 2, 2]))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    spatial = [draw(st.integers(1, 6)) for _ in range(rank)]
    kernel = [draw(st.integers(1, 5)) for _ in range(rank)]
    strides = [draw(st.integers(1, 3)) for _ in range(rank)]
    pads = [draw(st.integers(0, k - 1)) for k in kernel] + [draw(st.integers(0, k - 1))
                                                              for k in kernel]
    output_padding = [draw(st.integers(0, s - 1)) for s in strides]
    for axis in range(rank):
        full = strides[axis] * (spatial[axis] - 1) + kernel[axis] + output_padding[axis]
        if full - pads[axis] - pads[rank + axis] < 1:
            pads[rank + axis] = 0
            pads[axis] = min(pads[axis], full - 1)
    return {
        "rank": rank, "groups": groups, "spatial": spatial, "kernel": kernel,
        "strides": strides, "pads": pads, "output_padding": output_padding,
        "channels": groups * draw(st.integers(1, 3)), "outs": groups * draw(st.integers(1, 3)),
        "bias": draw(st.booleans()), "seed": draw(st.integers(0, 1 << 16)),
    }


def conv_transpose_model(g: dict) -> tuple[object, np.ndarray]:
    """The one-node ONNX model of geometry `g` (random weight and bias as initializers) and a
    random input."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(g["seed"])
    x = rng.standard_normal((1, g["channels"], *g["spatial"])).astype(np.float32)
    weight = rng.standard_normal(
        (g["channels"], g["outs"] // g["groups"], *g["kernel"])).astype(np.float32)
    initializers = [numpy_helper.from_array(weight, "w")]
    inputs = ["x", "w"]
    if g["bias"]:
        initializers.append(numpy_helper.from_array(
            rng.standard_normal(g["outs"]).astype(np.float32), "b"))
        inputs.append("b")
    node = helper.make_node(
        "ConvTranspose", inputs, ["y"], strides=g["strides"], pads=g["pads"],
        output_padding=g["output_padding"], group=g["groups"], kernel_shape=g["kernel"])
    graph = helper.make_graph(
        [node], "conv_transpose",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True), x


def onnx_runtime(model: object, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(),  # type: ignore[attr-defined]
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.shape == expected.shape
    scale = max(float(np.abs(expected).max()), 1.0)
    assert float(np.abs(actual - expected).max()) <= 1e-5 * scale


@examples(60)
@given(geometries())
def test_the_pass_keeps_onnx_runtimes_results(g: dict) -> None:
    model, x = conv_transpose_model(g)
    module = import_onnx(model)
    apply(module, "graph-fold-constants,graph-conv-transpose-to-subpixel")
    assert not any(isinstance(op, ConvTranspose2DOp) for op in module.walk())
    assert [op.strides_tuple() for op in module.walk() if isinstance(op, Conv2DOp)] == [(1, 1)]
    (actual,) = run_module(module, [x])
    assert_close(actual, onnx_runtime(model, x))


@examples(8)
@given(geometries())
def test_the_cpu_pipeline_compiles_transposed_convs_as_onnx_runtime_computes_them(
    g: dict,
) -> None:
    model, x = conv_transpose_model(g)
    actual = dlc.compile(model, threads=2, cache=False)(x)
    assert_close(np.asarray(actual), onnx_runtime(model, x))


def test_the_plan_covers_the_output_with_nonnegative_padding() -> None:
    # DCGAN's kernel 4, stride 2, pads 1: two taps per phase, 16 -> 32 rows.
    plan = plan_axis(16, 4, 2, 1, 32)
    assert plan is not None
    assert (plan.taps, plan.pad_begin, plan.pad_end, plan.rows, plan.crop) == (2, 1, 1, 17, 1)
    assert plan.rows * plan.stride >= plan.crop + 32
    # A crop deeper than the kernel would need a negative padding: not rewritten.
    assert plan_axis(4, 2, 2, 3, 2) is None


def test_subpixel_weight_phases() -> None:
    weight = np.arange(2 * 1 * 3 * 3, dtype=np.float32).reshape(2, 1, 3, 3)
    phases = subpixel_weight(weight, 1, (2, 2), (2, 2))
    assert phases.shape == (4, 2, 2, 2)
    # Phase (0, 0) takes taps 0 and 2 of each axis, flipped: w'[t] = w[2 * (1 - t)].
    np.testing.assert_array_equal(phases[0, 0], weight[0, 0][[2, 0]][:, [2, 0]])
    # Phase (1, 1) takes tap 1 only, in the last slot; the 4th (past the kernel) is zero.
    np.testing.assert_array_equal(phases[3, 1], [[0, 0], [0, weight[1, 0, 1, 1]]])
