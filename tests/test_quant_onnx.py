"""ONNX Runtime's quantized models (QDQ and operator formats, static and dynamic, and the
com.microsoft ops of its quantizers) through dlc.compile, against ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dlc

ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")


def _float_model(kind: str, seed: int = 0) -> onnx.ModelProto:
    """A conv net (conv-relu-conv(stride 2)-relu-pool-gemm) or an MLP block with a residual."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []

    def weight(name: str, shape: tuple[int, ...], scale: float = 0.2) -> str:
        inits.append(numpy_helper.from_array((rng.normal(size=shape) * scale)
                                             .astype(np.float32), name))
        return name

    if kind == "convnet":
        nodes = [
            helper.make_node("Conv", ["x", weight("w1", (8, 3, 3, 3)), weight("b1", (8,))],
                             ["c1"], pads=[1, 1, 1, 1], name="conv1"),
            helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
            helper.make_node("Conv", ["r1", weight("w2", (16, 8, 3, 3)), weight("b2", (16,))],
                             ["c2"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv2"),
            helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
            helper.make_node("GlobalAveragePool", ["r2"], ["p"], name="pool"),
            helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
            helper.make_node("Gemm", ["f", weight("wf", (10, 16)), weight("bf", (10,))], ["y"],
                             transB=1, name="fc"),
        ]
        shapes = ([1, 3, 12, 12], [1, 10])
    else:
        nodes = [
            helper.make_node("MatMul", ["x", weight("w1", (32, 64))], ["m1"], name="fc1"),
            helper.make_node("Add", ["m1", weight("b1", (64,))], ["a1"], name="bias1"),
            helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
            helper.make_node("MatMul", ["r1", weight("w2", (64, 32))], ["m2"], name="fc2"),
            helper.make_node("Add", ["m2", weight("b2", (32,))], ["a2"], name="bias2"),
            helper.make_node("Add", ["a2", "x"], ["y"], name="residual"),
        ]
        shapes = ([2, 8, 32], [2, 8, 32])
    graph = helper.make_graph(nodes, kind, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                          shapes[0])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shapes[1])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class _Reader:
    def __init__(self, samples: list[dict[str, np.ndarray]]) -> None:
        self.samples = iter(samples)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.samples, None)


def _samples(model: onnx.ModelProto, count: int, seed: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return [{"x": rng.normal(size=shape).astype(np.float32)} for _ in range(count)]


def _quantized(tmp_path: Path, kind: str, mode: str) -> onnx.ModelProto:
    model = _float_model(kind)
    source, target = tmp_path / f"{kind}.onnx", tmp_path / f"{kind}.{mode}.onnx"
    onnx.save(model, source)
    if mode == "dynamic":
        quantization.quantize_dynamic(str(source), str(target))
    else:
        quantization.quantize_static(
            str(source), str(target), _Reader(_samples(model, 16, 1)),
            quant_format=quantization.QuantFormat.QDQ if mode == "qdq"
            else quantization.QuantFormat.QOperator,
            per_channel=mode == "qdq")
    return onnx.load(target)


def _step(model: onnx.ModelProto) -> float | None:
    arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == model.graph.output[0].name:
            return float(arrays[node.input[1]].reshape(-1)[0])
    return None


@pytest.mark.parametrize(("kind", "mode"), [
    ("convnet", "qdq"), ("convnet", "qoperator"), ("convnet", "dynamic"), ("mlp", "qdq"),
    ("mlp", "qoperator"),
    ("mlp", "dynamic"),
])
def test_ort_quantized_model_matches_ort(tmp_path: Path, kind: str, mode: str) -> None:
    """Outputs within one quantization step of ORT's int8 run (QDQ / operator format); the
    dynamic models' float outputs within float rounding."""
    model = _quantized(tmp_path, kind, mode)
    executable = dlc.compile(model, cache=False)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    step = _step(model)
    for sample in _samples(model, 4, 2):
        got = executable.run(sample)["y"]
        (expected,) = session.run(["y"], sample)
        if step is None:
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        else:
            assert np.abs(got - expected).max() <= step * 1.001


def test_qdq_convs_and_gemm_become_integer_ops(tmp_path: Path) -> None:
    """graph-fold-qdq turns each QDQ conv and the Gemm into integer ops (no float conv left)."""
    from dlc.frontends.onnx.importer import import_onnx
    from dlc.pipelines import parse_pipeline
    from xdsl.context import Context

    module = import_onnx(_quantized(tmp_path, "convnet", "qdq"))
    for each in parse_pipeline("graph-fold-qdq,graph-fold-constants,dce"):
        each.apply(Context(), module)
    names = [op.name for op in module.walk()]
    assert names.count("graph.conv2d_integer") == 2
    assert names.count("graph.matmul_integer") == 1
    assert "graph.conv2d" not in names and "graph.matmul" not in names


def _pool_model() -> onnx.ModelProto:
    """conv -> relu -> max pool (3x3, pad 1, stride 2: ResNet's stem) -> conv, float."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array((rng.normal(size=shape) * 0.3).astype(np.float32), name)
             for name, shape in (("w1", (8, 3, 3, 3)), ("b1", (8,)), ("w2", (4, 8, 3, 3)),
                                 ("b2", (4,)))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2], name="pool"),
        helper.make_node("Conv", ["p", "w2", "b2"], ["y"], pads=[1, 1, 1, 1], name="conv2"),
    ]
    graph = helper.make_graph(
        nodes, "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 11, 11])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_qdq_max_pool_runs_on_int8_and_matches_ort(tmp_path: Path) -> None:
    """ORT's `quantize_static` puts DQ -> MaxPool -> Q with one scale around the pool, and ORT
    runs it on int8; graph-fold-qdq does too (an int8 max_pool2d, no float pool left, its
    padding the int8 minimum). The folded module agrees with the graph interpreter's run of
    the unfolded one and with ORT's int8 run to one quantization step."""
    from dlc.dialects.graph.interpreter import run_module
    from dlc.frontends.onnx.importer import import_onnx
    from dlc.pipelines import parse_pipeline
    from xdsl.context import Context

    model = _pool_model()
    source, target = tmp_path / "pool.onnx", tmp_path / "pool.qdq.onnx"
    onnx.save(model, source)
    quantization.quantize_static(str(source), str(target), _Reader(_samples(model, 8, 1)),
                                 quant_format=quantization.QuantFormat.QDQ,
                                 activation_type=quantization.QuantType.QInt8)
    quantized = onnx.load(target)
    folded = import_onnx(quantized)
    for each in parse_pipeline("graph-fold-qdq,graph-fold-constants,dce"):
        each.apply(Context(), folded)
    pools = [op for op in folded.walk() if op.name == "graph.max_pool2d"]
    assert [str(p.result.type) for p in pools] == ["tensor<1x8x6x6xi8>"]
    executable = dlc.compile(quantized, cache=False)
    session = ort.InferenceSession(quantized.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    step = _step(quantized)
    assert step is not None
    for sample in _samples(model, 3, 2):
        # Negative inputs make relu's zeros (-128 when the zero point is the minimum) meet the
        # padding: a padded -inf -> float max -> quantize or an int8 -128 pad both lose.
        got = executable.run(sample)["y"]
        (interpreted,) = run_module(folded, [sample["x"]])
        (unfolded,) = run_module(import_onnx(quantized), [sample["x"]])
        (expected,) = session.run(["y"], sample)
        assert np.abs(got - interpreted).max() <= step * 1.001
        assert np.abs(interpreted - unfolded).max() <= step * 1.001
        assert np.abs(got - expected).max() <= step * 1.001


def _single(node: onnx.NodeProto, inputs: list[tuple[str, int, list[int]]],
            outputs: list[tuple[str, int, list[int]]], inits: dict[str, np.ndarray],
            domain_version: int | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "single", [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    opsets = [helper.make_opsetid("", 19)]
    if domain_version is not None:
        opsets.append(helper.make_opsetid("com.microsoft", domain_version))
    return helper.make_model(graph, opset_imports=opsets)


def _run_both(model: onnx.ModelProto, feed: dict[str, np.ndarray]
              ) -> list[tuple[np.ndarray, np.ndarray]]:
    executable = dlc.compile(model, cache=False)
    got = executable.run(feed)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in model.graph.output]
    return list(zip([got[n] for n in names], session.run(names, feed), strict=True))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_integer_max_pool_matches_ort(dtype: type) -> None:
    """An ONNX MaxPool on an int8 / uint8 tensor (no QDQ around it; ORT runs it as is): the
    padding must lose to the type's minimum, which the first row holds."""
    from dlc.dialects.graph.interpreter import run_module
    from dlc.frontends.onnx.importer import import_onnx

    onnx_type = TensorProto.INT8 if dtype == np.int8 else TensorProto.UINT8
    model = _single(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                     pads=[1, 1, 1, 1], strides=[2, 2]),
                    [("x", onnx_type, [1, 3, 9, 9])], [("y", onnx_type, [1, 3, 5, 5])], {})
    info = np.iinfo(dtype)
    x = np.random.default_rng(0).integers(info.min, info.max, (1, 3, 9, 9)).astype(dtype)
    x[:, :, :2, :] = info.min
    ((got, expected),) = _run_both(model, {"x": x})
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(run_module(import_onnx(model), [x])[0], expected)


def test_dynamic_quantize_linear_matches_ort() -> None:
    x = np.random.default_rng(0).normal(size=(3, 7)).astype(np.float32) * 3
    model = _single(helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
                    [("x", TensorProto.FLOAT, [3, 7])],
                    [("y", TensorProto.UINT8, [3, 7]), ("s", TensorProto.FLOAT, []),
                     ("z", TensorProto.UINT8, [])], {})
    for got, expected in _run_both(model, {"x": x}):
        np.testing.assert_array_equal(got, expected)


def test_qlinear_matmul_per_column_matches_ort() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (4, 6)).astype(np.uint8)
    inits = {"as": np.array(0.02, np.float32), "az": np.array(120, np.uint8),
             "b": rng.integers(-128, 128, (6, 5)).astype(np.int8),
             "bs": np.array(0.01, np.float32), "bz": np.array(0, np.int8),
             "ys": np.array(0.05, np.float32), "yz": np.array(128, np.uint8)}
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                            ["y"])
    model = _single(node, [("a", TensorProto.UINT8, [4, 6])], [("y", TensorProto.UINT8, [4, 5])],
                    inits)
    for got, expected in _run_both(model, {"a": a}):
        assert np.abs(got.astype(int) - expected.astype(int)).max() <= 1


def test_com_microsoft_matmul_integer_to_float_and_dynamic_quantize_matmul() -> None:
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 8)).astype(np.float32)
    inits = {"b": rng.integers(-128, 128, (8, 4)).astype(np.int8),
             "bs": np.array(0.01, np.float32), "bz": np.array(3, np.int8),
             "bias": rng.normal(size=4).astype(np.float32)}
    node = helper.make_node("DynamicQuantizeMatMul", ["a", "b", "bs", "bz", "bias"], ["y"],
                            domain="com.microsoft")
    model = _single(node, [("a", TensorProto.FLOAT, [3, 8])], [("y", TensorProto.FLOAT, [3, 4])],
                    inits, domain_version=1)
    for got, expected in _run_both(model, {"a": a}):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    aq = rng.integers(0, 256, (3, 8)).astype(np.uint8)
    inits = {"b": inits["b"], "as": np.array(0.02, np.float32), "bs": np.array(0.01, np.float32),
             "az": np.array(100, np.uint8), "bz": np.array(3, np.int8), "bias": inits["bias"]}
    node = helper.make_node("MatMulIntegerToFloat", ["a", "b", "as", "bs", "az", "bz", "bias"],
                            ["y"], domain="com.microsoft")
    model = _single(node, [("a", TensorProto.UINT8, [3, 8])], [("y", TensorProto.FLOAT, [3, 4])],
                    inits, domain_version=1)
    for got, expected in _run_both(model, {"a": aq}):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("kind", "mode"), [("convnet", "qdq"), ("convnet", "qoperator"),
                                            ("mlp", "qdq"), ("mlp", "qoperator")])
def test_a_quantized_model_compiles_once_for_a_dynamic_batch(tmp_path: Path, kind: str,
                                                             mode: str) -> None:
    """Static quantization is per row (QuantizeLinear, DequantizeLinear, QLinearConv,
    QLinearMatMul and their integer ops keep the batch): with a dynamic batch the model compiles
    once, and each row of a call gives what the static model gives on that row alone."""
    model = _quantized(tmp_path, kind, mode)
    row = _samples(model, 1, 3)[0]["x"][:1]
    for value in (model.graph.input[0], model.graph.output[0]):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    static = dlc.compile(model, cache=False, input_shapes={"x": row.shape})
    executable = dlc.compile(model, dynamic_batch=True, cache=False)
    assert executable.batch_symbol == "N"
    for rows in (1, 3):
        x = np.concatenate([row + 0.1 * i for i in range(rows)])
        got = executable(x)
        for i in range(rows):
            np.testing.assert_array_equal(got[i:i + 1], static(x[i:i + 1]))  # batch 1
