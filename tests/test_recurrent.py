"""LSTM, GRU and RNN end to end: ONNX import, the graph interpreter, the tensor_expr interpreter
and the compiled path (a time loop of scheduled GEMMs and fused gates), against ONNX's reference
evaluator where it implements the case (default activations, no clip, no sequence_lens) and
against ONNX Runtime where it does not; plus a small CRNN text recognizer (conv stack, reshape,
bidirectional LSTM, linear) against ONNX Runtime.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import onnx
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module as run_graph
from dlc.dialects.tensor_expr.interpreter import run_module as run_tensor_expr
from dlc.frontends.onnx.errors import OnnxImportError
from dlc.frontends.onnx.importer import import_onnx
from dlc.pipelines import parse_pipeline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.passes import PassPipeline

import dlc

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


@dataclass
class Recurrent:
    """One ONNX LSTM/GRU/RNN node as a model, with random inputs for its graph inputs."""

    op: str
    steps: int = 4
    batch: int = 2
    inputs: int = 3
    hidden: int = 5
    direction: str = "forward"
    layout: int = 0
    lens: list[int] | None = None
    bias: bool = True
    initial: bool = True
    peepholes: bool = True
    constant_weights: bool = False
    attrs: dict[str, object] = field(default_factory=dict[str, object])
    seed: int = 0

    def build(self) -> tuple[onnx.ModelProto, list[np.ndarray]]:
        rng = np.random.default_rng(self.seed)
        d = 2 if self.direction == "bidirectional" else 1
        g, h, n, t = GATES[self.op], self.hidden, self.batch, self.steps
        batch_major = self.layout == 1
        x_shape = [n, t, self.inputs] if batch_major else [t, n, self.inputs]
        state_shape = [n, d, h] if batch_major else [d, n, h]
        arrays: dict[str, np.ndarray] = {
            "X": rng.standard_normal(x_shape).astype(np.float32),
            "W": (rng.standard_normal([d, g * h, self.inputs]) * 0.5).astype(np.float32),
            "R": (rng.standard_normal([d, g * h, h]) * 0.5).astype(np.float32),
        }
        names = ["X", "W", "R", "", "", ""]
        if self.bias:
            arrays["B"] = (rng.standard_normal([d, 2 * g * h]) * 0.3).astype(np.float32)
            names[3] = "B"
        if self.lens is not None:
            arrays["sequence_lens"] = np.array(self.lens, np.int32)
            names[4] = "sequence_lens"
        if self.initial:
            arrays["initial_h"] = rng.standard_normal(state_shape).astype(np.float32)
            names[5] = "initial_h"
        outputs = {"Y": [n, t, d, h] if batch_major else [t, d, n, h], "Y_h": state_shape}
        if self.op == "LSTM":
            names += ["", ""]
            if self.initial:
                arrays["initial_c"] = rng.standard_normal(state_shape).astype(np.float32)
                names[6] = "initial_c"
            if self.peepholes:
                arrays["P"] = (rng.standard_normal([d, 3 * h]) * 0.3).astype(np.float32)
                names[7] = "P"
            outputs["Y_c"] = state_shape
        while names and names[-1] == "":
            names.pop()
        attrs = dict(self.attrs, hidden_size=h, direction=self.direction)
        if self.layout:
            attrs["layout"] = self.layout
        node = helper.make_node(self.op, names, list(outputs), **attrs)
        weights = {"W", "R", "B", "P"} if self.constant_weights else set()
        graph = helper.make_graph(
            [node], "recurrent",
            [helper.make_tensor_value_info(
                k, TensorProto.INT32 if k == "sequence_lens" else TensorProto.FLOAT,
                list(v.shape)) for k, v in arrays.items() if k not in weights],
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in outputs.items()],
            [numpy_helper.from_array(v, k) for k, v in arrays.items() if k in weights],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model, [v for k, v in arrays.items() if k not in weights]


def _reference(model: onnx.ModelProto, feeds: list[np.ndarray]) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    names = [i.name for i in model.graph.input]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(ReferenceEvaluator(model).run(None, dict(zip(names, feeds, strict=True))))


def _onnxruntime(model: onnx.ModelProto, feeds: list[np.ndarray]) -> list[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [i.name for i in model.graph.input]
    return list(session.run(None, dict(zip(names, feeds, strict=True))))


def _compiled(model: onnx.ModelProto, feeds: list[np.ndarray]) -> list[np.ndarray]:
    got = dlc.compile(model, cache=False, threads=1)(*feeds)
    return [got] if isinstance(got, np.ndarray) else list(got)


def _close(got: list[np.ndarray], expected: list[np.ndarray], what: str) -> None:
    assert len(got) == len(expected), what
    for index, (a, b) in enumerate(zip(got, expected, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"{what}: output {index}")


# ---------------------------------------------------------------------------------------------
# Against ONNX's reference evaluator, through the compiled path
# ---------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(["LSTM", "GRU", "RNN"]),
       direction=st.sampled_from(["forward", "reverse", "bidirectional"]),
       layout=st.sampled_from([0, 1]), steps=st.integers(1, 5), batch=st.integers(1, 3),
       hidden=st.integers(1, 6), optional=st.booleans(), linear_before_reset=st.booleans(),
       seed=st.integers(0, 2**16))
def test_compiled_matches_the_reference_evaluator(
    op: str, direction: str, layout: int, steps: int, batch: int, hidden: int, optional: bool,
    linear_before_reset: bool, seed: int,
) -> None:
    attrs: dict[str, object] = {}
    if op == "GRU":
        attrs["linear_before_reset"] = int(linear_before_reset)
    case = Recurrent(op, steps=steps, batch=batch, hidden=hidden, direction=direction,
                     layout=layout, bias=optional, initial=optional, peepholes=optional,
                     attrs=attrs, seed=seed)
    model, feeds = case.build()
    expected = _reference(model, feeds)
    _close(_compiled(model, feeds), expected, f"compiled {case}")
    _close(run_graph(import_onnx(model), feeds), expected, f"interpreter {case}")


# ---------------------------------------------------------------------------------------------
# What the reference evaluator leaves out: activations, clip, sequence_lens, input_forget
# ---------------------------------------------------------------------------------------------

FEATURES: list[tuple[str, dict[str, object]]] = [
    ("LSTM", {"attrs": {"clip": 0.3}}),
    ("GRU", {"attrs": {"clip": 0.3}}),
    ("RNN", {"attrs": {"clip": 0.3}}),
    ("LSTM", {"attrs": {"input_forget": 1}}),
    ("LSTM", {"direction": "bidirectional", "lens": [4, 2]}),
    ("LSTM", {"direction": "reverse", "lens": [3, 1]}),
    ("GRU", {"direction": "bidirectional", "lens": [1, 4], "attrs": {"linear_before_reset": 1}}),
    ("RNN", {"direction": "reverse", "lens": [2, 4]}),
    ("RNN", {"attrs": {"activations": ["LeakyRelu"], "activation_alpha": [0.3]}}),
    ("RNN", {"attrs": {"activations": ["Affine"], "activation_alpha": [0.5],
                       "activation_beta": [0.2]}}),
    ("RNN", {"attrs": {"activations": ["ScaledTanh"], "activation_alpha": [1.5],
                       "activation_beta": [0.7]}}),
    ("RNN", {"attrs": {"activations": ["Elu"], "activation_alpha": [0.8]}}),
    ("RNN", {"attrs": {"activations": ["ThresholdedRelu"], "activation_alpha": [0.1]}}),
    ("RNN", {"direction": "bidirectional", "attrs": {"activations": ["Softsign", "Softplus"]}}),
    ("GRU", {"attrs": {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.3],
                       "activation_beta": [0.4]}}),
    ("LSTM", {"direction": "bidirectional", "attrs": {
        "activations": ["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Elu", "Relu"],
        "activation_alpha": [0.25, 0.9], "activation_beta": [0.45]}}),
]


@pytest.mark.parametrize("op, options", FEATURES,
                         ids=[f"{op}-{i}" for i, (op, _) in enumerate(FEATURES)])
def test_features_match_onnxruntime(op: str, options: dict[str, object]) -> None:
    model, feeds = Recurrent(op, **options).build()  # type: ignore[arg-type]
    expected = _onnxruntime(model, feeds)
    _close(run_graph(import_onnx(model), feeds), expected, "interpreter")
    _close(_compiled(model, feeds), expected, "compiled")


def test_tensor_expr_level_matches_the_graph_interpreter() -> None:
    """The scan-based definitions, run by the tensor_expr interpreter (sequence_lens, reverse,
    both GRU variants), give the graph interpreter's values."""
    for op, options in [("LSTM", {"direction": "bidirectional", "lens": [4, 2]}),
                        ("GRU", {"direction": "reverse", "lens": [3, 1]}),
                        ("GRU", {"attrs": {"linear_before_reset": 1}}), ("RNN", {})]:
        model, feeds = Recurrent(op, **options).build()  # type: ignore[arg-type]
        module = import_onnx(model)
        expected = run_graph(module, feeds)
        PassPipeline(parse_pipeline("convert-graph-to-tensor-expr,tensor-expr-inline")).apply(
            make_context(), module)
        _close(run_tensor_expr(module, feeds), expected, f"{op} {options}")


def test_constant_weights_fold_and_match() -> None:
    """With weights as initializers the transposed and packed weights are folded into
    constants; results are unchanged."""
    case = Recurrent("LSTM", steps=6, batch=3, inputs=20, hidden=24, direction="bidirectional",
                     constant_weights=True)
    model, feeds = case.build()
    _close(_compiled(model, feeds), _reference(model, feeds), "compiled")


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_large_batch_steps_on_two_threads_match(op: str) -> None:
    """A batch-16 layer's recurrence GEMM is large enough to run on threads inside the time
    loop (`loop_default_schedule.STEP_PARALLEL_MIN_ITERATIONS`); two threads give the
    reference's results."""
    case = Recurrent(op, steps=4, batch=16, inputs=64, hidden=256, constant_weights=True)
    model, feeds = case.build()
    got = dlc.compile(model, cache=False, threads=2)(*feeds)
    expected = _reference(model, feeds)[0]
    # 320-term dot products summed in another order: absolute error ~1e-5 on O(1) values.
    np.testing.assert_allclose(got if isinstance(got, np.ndarray) else got[0], expected,
                               rtol=1e-4, atol=1e-4, err_msg=f"{op} on two threads")


def test_sequence_lens_outputs() -> None:
    """Past a batch entry's length y is zero and y_h is the state at its last valid step (for
    the reverse direction, the state after step 0)."""
    model, feeds = Recurrent("GRU", steps=5, batch=3, direction="bidirectional",
                             lens=[5, 2, 0]).build()
    y, y_h = _compiled(model, feeds)
    assert np.all(y[2:, :, 1] == 0) and np.all(y[:, :, 2] == 0)
    np.testing.assert_allclose(y_h[0, 1], y[1, 0, 1], rtol=1e-6)
    np.testing.assert_allclose(y_h[1, 1], y[0, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(y_h[:, 2], feeds[-1][:, 2], rtol=1e-6)  # length 0: initial_h


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("attrs, message", [
    ({"direction": "sideways"}, "expected direction to be one of forward, reverse, "
                                "bidirectional, found 'sideways'"),
    ({"activations": ["Gelu"]}, "expected activations among relu, tanh"),
    ({"activations": ["Tanh", "Tanh"]}, "expected 1 activations, found 2"),
    ({"hidden_size": 7}, "expected hidden_size 7 to match R's last dim 5"),
])
def test_bad_attributes_are_import_errors(attrs: dict[str, object], message: str) -> None:
    model, _ = Recurrent("RNN").build()
    node = model.graph.node[0]
    del node.attribute[:]
    node.attribute.extend(helper.make_attribute(k, v) for k, v in
                          {"hidden_size": 5, **attrs}.items())
    with pytest.raises(OnnxImportError, match="RNN") as info:
        import_onnx(model)
    assert message in str(info.value)


# ---------------------------------------------------------------------------------------------
# A CRNN text recognizer
# ---------------------------------------------------------------------------------------------


def crnn(width: int = 64, height: int = 16, classes: int = 11, hidden: int = 32,
         seed: int = 0) -> onnx.ModelProto:
    """conv3x3+relu, maxpool 2x2, conv3x3+relu, maxpool (2, 1) over a 1xHxW image, then the
    columns as a sequence (reshape, transpose to T x N x C), a bidirectional LSTM, and a linear
    layer over the concatenated directions: logits T x N x classes (CRNN, Shi et al. 2015)."""
    rng = np.random.default_rng(seed)

    def weight(name: str, shape: list[int], scale: float) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                       name)

    c1, c2 = 8, 16
    h_out, t = height // 4, width // 2
    features = c2 * h_out
    nodes = [
        helper.make_node("Conv", ["image", "k1", "b1"], ["a1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "k2", "b2"], ["a2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 1], strides=[2, 1]),
        helper.make_node("Reshape", ["p2", "shape"], ["flat"]),           # N x C*H x T
        helper.make_node("Transpose", ["flat"], ["seq"], perm=[2, 0, 1]),  # T x N x C*H
        helper.make_node("LSTM", ["seq", "W", "R", "B"], ["y"], hidden_size=hidden,
                         direction="bidirectional"),                          # T x 2 x N x H
        helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3]),     # T x N x 2 x H
        helper.make_node("Reshape", ["yt", "shape2"], ["both"]),              # T x N x 2H
        helper.make_node("MatMul", ["both", "fc"], ["logits0"]),
        helper.make_node("Add", ["logits0", "fcb"], ["logits"]),
    ]
    initializers = [
        weight("k1", [c1, 1, 3, 3], 0.5), weight("b1", [c1], 0.1),
        weight("k2", [c2, c1, 3, 3], 0.2), weight("b2", [c2], 0.1),
        numpy_helper.from_array(np.array([1, features, t], np.int64), "shape"),
        weight("W", [2, 4 * hidden, features], 0.2), weight("R", [2, 4 * hidden, hidden], 0.2),
        weight("B", [2, 8 * hidden], 0.1),
        numpy_helper.from_array(np.array([t, 1, 2 * hidden], np.int64), "shape2"),
        weight("fc", [2 * hidden, classes], 0.2), weight("fcb", [classes], 0.1),
    ]
    graph = helper.make_graph(
        nodes, "crnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, height, width])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [t, 1, classes])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


@pytest.mark.slow
@pytest.mark.parametrize("width", [100, 300])
def test_crnn_matches_onnxruntime(width: int) -> None:
    model = crnn(width=width)
    image = np.random.default_rng(1).random((1, 1, 16, width), dtype=np.float32)
    expected = _onnxruntime(model, [image])
    _close(_compiled(model, [image]), expected, f"crnn width {width}")
