"""`dlc quantize` / `dlc.quantize`: calibration methods, calibration-data checks (before any
work), the QDQ model it writes (run by ONNX Runtime and by dlc), --keep-float and the report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dlc
from dlc.quantization import (
    QuantizationError,
    entropy_range,
    entropy_threshold,
    fold_batch_norms,
    load_calibration,
    percentile_range,
    uint8_params,
)

REPO = Path(__file__).resolve().parent.parent


def _convnet(seed: int = 0) -> onnx.ModelProto:
    """conv-bn-relu, conv-relu, pool, flatten, gemm: 10 logits."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []

    def weight(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", weight("w1", rng.normal(size=(8, 3, 3, 3)) * 0.3)],
                         ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("BatchNormalization",
                         ["c1", weight("g", rng.uniform(0.5, 1, 8)), weight("be", rng.normal(
                             size=8) * 0.1), weight("mu", rng.normal(size=8) * 0.1),
                          weight("var", rng.uniform(0.5, 1.5, 8))], ["n1"], name="bn1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", weight("w2", rng.normal(size=(16, 8, 3, 3)) * 0.2),
                                  weight("b2", rng.normal(size=16) * 0.1)],
                         ["c2"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", weight("wf", rng.normal(size=(10, 16)) * 0.5),
                                  weight("bf", rng.normal(size=10) * 0.1)], ["y"], transB=1,
                         name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _calibration(count: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.normal(size=(count, 1, 3, 12, 12)).astype(np.float32)}


# ---------------------------------------------------------------------------------------------
# Calibration methods and parameters
# ---------------------------------------------------------------------------------------------


def test_uint8_params_hold_zero_and_the_range() -> None:
    scale, zero_point = uint8_params(-1.0, 3.0)
    assert scale == np.float32(4 / 255) and zero_point == 64
    scale, zero_point = uint8_params(0.5, 2.0)  # widened to hold 0
    assert scale == np.float32(2 / 255) and zero_point == 0
    assert uint8_params(0.0, 0.0) == (np.float32(1.0), np.uint8(0))


def test_percentile_clips_outliers() -> None:
    values = np.concatenate([np.linspace(-1, 1, 100000), [50.0, -50.0]])
    low, high = percentile_range(values, 99.9)
    assert -1.0 <= low < -0.99 and 0.99 < high <= 1.0


def test_entropy_clips_a_long_tail_but_keeps_a_uniform_range() -> None:
    rng = np.random.default_rng(0)
    heavy = rng.standard_t(3, size=200000)  # a long tail: clipped well inside the maximum
    low, high = entropy_range(heavy)
    assert low == -high and 5 < high < 0.5 * np.abs(heavy).max()
    uniform = rng.uniform(0, 1, 100000)  # nothing to gain by clipping
    assert entropy_threshold(uniform, quantized_bins=255) > 0.95
    low, high = entropy_range(np.maximum(heavy, 0))  # ReLU's zeros do not count
    assert low == 0 and 5 < high < 0.5 * heavy.max()


def test_fold_batch_norms_keeps_the_function() -> None:
    ort = pytest.importorskip("onnxruntime")
    model = _convnet()
    folded = fold_batch_norms(model)
    assert "BatchNormalization" not in [n.op_type for n in folded.graph.node]
    x = _calibration(1, 3)["x"][0]
    outputs = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
               .run(None, {"x": x})[0] for m in (model, folded)]
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# Calibration data: checked against the model's inputs, naming the input
# ---------------------------------------------------------------------------------------------


def test_calibration_forms(tmp_path: Path) -> None:
    model = _convnet()
    stacked = _calibration(5, 0)
    assert len(load_calibration(stacked, model)) == 5
    assert len(load_calibration({"x": stacked["x"][0]}, model)) == 1
    np.savez(tmp_path / "a.npz", **stacked)
    np.savez(tmp_path / "b.npz", x=stacked["x"][0])
    assert len(load_calibration(tmp_path / "a.npz", model)) == 5
    assert len(load_calibration(tmp_path, model)) == 6


@pytest.mark.parametrize(("data", "message"), [
    ({"x": np.zeros((4, 3, 12, 12), np.float32)},
     r"input 'x' expected shape \[1, 3, 12, 12\] \(one sample\) or \[N, 1, 3, 12, 12\]"),
    ({"image": np.zeros((1, 3, 12, 12), np.float32)}, r"'image' is not an input of the model"),
    ({}, r"no data for model input 'x'"),
])
def test_bad_calibration_data_names_the_input(data: dict[str, np.ndarray], message: str) -> None:
    with pytest.raises(QuantizationError, match=message):
        dlc.quantize(_convnet(), data)


def test_unknown_keep_float_node_and_method() -> None:
    with pytest.raises(QuantizationError, match="no node named 'conv9'"):
        dlc.quantize(_convnet(), _calibration(2, 0), keep_float=["conv9"])
    with pytest.raises(QuantizationError, match="calibration method"):
        dlc.quantize(_convnet(), _calibration(2, 0), method="mse")


# ---------------------------------------------------------------------------------------------
# The quantized model
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["minmax", "percentile", "entropy"])
def test_quantized_model_runs_in_ort_and_dlc(tmp_path: Path, method: str) -> None:
    """A standard QDQ model (Q/DQ on x, r1, r2, f and y): ORT runs it, dlc (integer kernels)
    agrees with ORT within one output step, and it stays close to the float model; the report
    lists every quantized layer, worst first."""
    ort = pytest.importorskip("onnxruntime")
    model = _convnet()
    result = dlc.quantize(model, _calibration(16, 0), tmp_path / "q.onnx", method=method)
    saved = onnx.load(tmp_path / "q.onnx")
    onnx.checker.check_model(saved)
    types = [n.op_type for n in saved.graph.node]
    assert types.count("QuantizeLinear") == 5 and "BatchNormalization" not in types
    assert [e.node for e in result.layers] and sorted(e.node for e in result.layers) == [
        "conv1", "conv2", "fc"]
    errors = [e.relative_error for e in result.layers]
    assert errors == sorted(errors, reverse=True) and max(errors) < 0.1
    assert "conv1" in result.report() and "rel. error" in result.report()
    session = ort.InferenceSession(str(tmp_path / "q.onnx"), providers=["CPUExecutionProvider"])
    float_session = ort.InferenceSession(model.SerializeToString(),
                                         providers=["CPUExecutionProvider"])
    executable = dlc.compile(saved, cache=False)
    step = float(uint8_params(*result.ranges["y"])[0])
    for sample in load_calibration(_calibration(4, 7), model):
        got = executable.run(sample)["y"]
        (expected,) = session.run(["y"], sample)
        assert np.abs(got - expected).max() <= step * 1.001
        (reference,) = float_session.run(["y"], sample)
        assert np.abs(got - reference).max() < 0.1 * np.abs(reference).max() + 4 * step


def test_keep_float_and_per_tensor() -> None:
    result = dlc.quantize(_convnet(), _calibration(4, 0), keep_float=["conv2"],
                          per_channel=False, report=False, runner="onnxruntime")
    nodes = {n.name: n for n in result.model.graph.node}
    assert nodes["conv2"].input[1] == "w2"  # float weight
    assert nodes["conv1"].input[1].endswith("_dequantized")
    scales = {t.name: numpy_helper.to_array(t) for t in result.model.graph.initializer}
    assert all(scales[n.input[1]].ndim == 0 for n in result.model.graph.node
               if n.op_type == "DequantizeLinear")


def test_cli(tmp_path: Path) -> None:
    onnx.save(_convnet(), tmp_path / "m.onnx")
    np.savez(tmp_path / "bad.npz", x=np.zeros((2, 3, 12, 12), np.float32))
    command = [sys.executable, str(REPO / "tools" / "dlc"), "quantize", str(tmp_path / "m.onnx")]
    bad = subprocess.run([*command, "--calibration", str(tmp_path / "bad.npz"), "-o",
                          str(tmp_path / "q.onnx")], capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "input 'x' expected shape" in bad.stderr and not (tmp_path / "q.onnx").exists()
    np.savez(tmp_path / "cal.npz", **_calibration(4, 0))
    good = subprocess.run([*command, "--calibration", str(tmp_path / "cal.npz"), "-o",
                           str(tmp_path / "q.onnx"), "--method", "percentile", "--runner",
                           "onnxruntime"], capture_output=True, text=True, cwd=REPO)
    assert good.returncode == 0, good.stderr
    assert "rel. error" in good.stdout and (tmp_path / "q.onnx").exists()
    plain = subprocess.run([*command, "--calibration", str(tmp_path / "cal.npz"), "-o",
                            str(tmp_path / "q0.onnx"), "--method", "percentile", "--runner",
                            "onnxruntime", "--no-bias-correction", "--no-report"],
                           capture_output=True, text=True, cwd=REPO)
    assert plain.returncode == 0, plain.stderr

    def biases(model: onnx.ModelProto) -> dict[str, np.ndarray]:
        return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer
                if t.data_type == TensorProto.INT32}

    expected = biases(dlc.quantize(_convnet(), _calibration(4, 0), method="percentile",
                                   runner="onnxruntime", report=False,
                                   bias_correction=False).model)
    got, corrected = biases(onnx.load(tmp_path / "q0.onnx")), biases(onnx.load(tmp_path /
                                                                             "q.onnx"))
    assert got.keys() == expected.keys() == corrected.keys()
    assert all(np.array_equal(got[k], expected[k]) for k in got)
    assert any(not np.array_equal(got[k], corrected[k]) for k in got)


# ---------------------------------------------------------------------------------------------
# Bias correction and residual quantization points
# ---------------------------------------------------------------------------------------------


def _conv2d(x: np.ndarray, w: np.ndarray, stride: int, pad: int, groups: int) -> np.ndarray:
    """Direct NCHW conv (no bias), float64."""
    n, c, h, width = x.shape
    o, per_group, k, _ = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // stride + 1, (width + 2 * pad - k) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for oc in range(o):
        g = oc // (o // groups)
        for i in range(oh):
            for j in range(ow):
                window = x[:, g * per_group:(g + 1) * per_group, i * stride:i * stride + k,
                           j * stride:j * stride + k]
                out[:, oc, i, j] = np.einsum("nckl,ckl->n", window, w[oc])
    return out


def test_bias_correction_is_the_mean_output_error_of_the_int8_weights() -> None:
    """The correction equals the mean over samples and output positions of conv(x, w - wq),
    computed directly: the padding's zeros (a ReLU output's mean is far from 0) and groups
    included."""
    from dlc.quantization import _bias_correction, _channel_mean, _Layer

    rng = np.random.default_rng(3)
    w = rng.normal(size=(6, 2, 3, 3))
    dequantized = w + rng.uniform(-0.01, 0.01, w.shape)
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2],
                            group=2)
    layer = _Layer(node, 0, "x", "w", 0, None, "y")
    samples = [np.maximum(rng.normal(size=(1, 4, 7, 7)) + 0.5, 0) for _ in range(5)]
    expected = np.mean([_conv2d(x, w - dequantized, 2, 1, 2).mean(axis=(0, 2, 3))
                        for x in samples], axis=0)
    got = _bias_correction(layer, w, dequantized, _channel_mean(samples, layer), (4, 4))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    # Without the padding's zeros (the per-channel mean at every tap) it is another value.
    flat = _bias_correction(layer, w, dequantized, _channel_mean(samples, layer)[:, :1, :1])
    assert not np.allclose(flat, expected, rtol=1e-3)


def test_bias_correction_removes_the_mean_error_of_each_layer() -> None:
    """On the calibration data, the mean error per output channel of each quantized conv
    (before its ReLU) shrinks with bias correction; a conv without a bias gets one."""
    ort = pytest.importorskip("onnxruntime")
    from dlc.quantization import _with_outputs

    model = _convnet(4)
    model.graph.node[3].input.pop()  # conv2 without its bias
    calibration = _calibration(16, 5)
    results = {flag: dlc.quantize(model, calibration, runner="onnxruntime", report=False,
                                  bias_correction=flag) for flag in (False, True)}
    conv2 = next(n for n in results[True].model.graph.node if n.name == "conv2")
    assert len(conv2.input) == 3

    def run(m: onnx.ModelProto) -> np.ndarray:
        session = ort.InferenceSession(_with_outputs(m, ["c2"]).SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        return np.stack([session.run(["c2"], {"x": x})[0] for x in calibration["x"]])

    float_c2 = run(fold_batch_norms(model))
    bias_error = {flag: np.abs((run(r.model) - float_c2).mean(axis=(0, 1, 3, 4))).mean()
                  for flag, r in results.items()}
    assert bias_error[True] < 0.5 * bias_error[False], bias_error


def test_residual_add_is_quantized_once_after_the_relu() -> None:
    """conv -> Add(shortcut) -> Relu: one QuantizeLinear, on the Relu's output, not on the
    conv's."""
    rng = np.random.default_rng(6)
    inits = [numpy_helper.from_array(rng.normal(size=(4, 4, 3, 3)).astype(np.float32), "w")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Add", ["c", "x"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result = dlc.quantize(model, {"x": rng.normal(size=(4, 1, 4, 6, 6)).astype(np.float32)},
                          runner="onnxruntime", report=False)
    quantized = [n.input[0] for n in result.model.graph.node if n.op_type == "QuantizeLinear"]
    assert sorted(quantized) == ["x", "y_float"], quantized
    # dlc runs it (the conv reads int8, its float output joins the shortcut) as ORT does.
    ort = pytest.importorskip("onnxruntime")
    x = rng.normal(size=(1, 4, 6, 6)).astype(np.float32)
    got = dlc.compile(result.model, cache=False).run({"x": x})["y"]
    expected = ort.InferenceSession(result.model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    step = result.ranges["y"][1] / 255
    assert np.abs(got - expected).max() <= step * 1.001
