"""ONNX If, Loop and Scan through dlc: import (captures, errors), the graph interpreter, and the
compiled path (`dlc.compile`: regions outlined, scf in the entry function, LLVM) against ONNX
Runtime and onnx's reference evaluator, on random inputs and runtime conditions/trip counts.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from dlc.dialects.graph import IfOp, LoopOp
from dlc.dialects.graph.interpreter import run_module
from dlc.frontends.onnx import NotConstantError, OnnxImportError, import_onnx
from dlc.frontends.onnx.binding import import_binding
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import dlc

OPSET = 17


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], weights: dict[str, np.ndarray] | None = None
           ) -> onnx.ModelProto:
    initializers = [nh.from_array(v, k) for k, v in (weights or {}).items()]
    graph = h.make_graph(nodes, "control_flow", inputs, outputs, initializers)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def _info(name: str, elem: int, shape: list[int]) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def if_conv_model(seed: int = 0) -> onnx.ModelProto:
    """y = If(c): relu(conv3x3(x)) else sigmoid(conv1x1(x)); both branches capture x and use
    weights of the outer graph."""
    rng = np.random.default_rng(seed)
    then_graph = h.make_graph(
        [h.make_node("Conv", ["x", "w3"], ["t0"], pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["t0"], ["t"])],
        "then", [], [_info("t", T.FLOAT, [1, 4, 8, 8])])
    else_graph = h.make_graph(
        [h.make_node("Conv", ["x", "w1"], ["e0"]), h.make_node("Sigmoid", ["e0"], ["e"])],
        "else", [], [_info("e", T.FLOAT, [1, 4, 8, 8])])
    return _model(
        [h.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph)],
        [_info("c", T.BOOL, []), _info("x", T.FLOAT, [1, 3, 8, 8])],
        [_info("y", T.FLOAT, [1, 4, 8, 8])],
        {"w3": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
         "w1": rng.standard_normal((4, 3, 1, 1)).astype(np.float32)})


def loop_rnn_model(seed: int = 0) -> onnx.ModelProto:
    """h_N where h_{i+1} = tanh(h_i W + x U + b), N a runtime input; the body captures x, W, U
    and b from the outer graph."""
    rng = np.random.default_rng(seed)
    body = h.make_graph(
        [h.make_node("MatMul", ["h_in", "W"], ["hw"]), h.make_node("MatMul", ["x", "U"], ["xu"]),
         h.make_node("Add", ["hw", "xu"], ["s0"]), h.make_node("Add", ["s0", "b"], ["s1"]),
         h.make_node("Tanh", ["s1"], ["h_out"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [_info("i", T.INT64, []), _info("cond_in", T.BOOL, []), _info("h_in", T.FLOAT, [2, 8])],
        [_info("cond_out", T.BOOL, []), _info("h_out", T.FLOAT, [2, 8])])
    return _model(
        [h.make_node("Loop", ["n", "", "h0"], ["h"], body=body)],
        [_info("n", T.INT64, []), _info("x", T.FLOAT, [2, 4]), _info("h0", T.FLOAT, [2, 8])],
        [_info("h", T.FLOAT, [2, 8])],
        {"W": (rng.standard_normal((8, 8)) * 0.5).astype(np.float32),
         "U": rng.standard_normal((4, 8)).astype(np.float32),
         "b": rng.standard_normal((8,)).astype(np.float32)})


def loop_scan_model() -> onnx.ModelProto:
    """A Loop with a static trip count of 5, a runtime condition that stops it early (the sum
    passes a runtime limit) and a scan output of the running sums."""
    body = h.make_graph(
        [h.make_node("Add", ["s_in", "x"], ["s_out"]),
         h.make_node("ReduceSum", ["s_out"], ["total"], keepdims=0),
         h.make_node("Less", ["total", "limit"], ["cond_out"]),
         h.make_node("Identity", ["s_out"], ["scan"])],
        "body",
        [_info("i", T.INT64, []), _info("cond_in", T.BOOL, []), _info("s_in", T.FLOAT, [3])],
        [_info("cond_out", T.BOOL, []), _info("s_out", T.FLOAT, [3]),
         _info("scan", T.FLOAT, [3])])
    return _model(
        [h.make_node("Loop", ["m", "c", "s0"], ["s", "sums"], body=body)],
        [_info("c", T.BOOL, []), _info("x", T.FLOAT, [3]), _info("s0", T.FLOAT, [3]),
         _info("limit", T.FLOAT, [])],
        [_info("s", T.FLOAT, [3]), _info("sums", T.FLOAT, [5, 3])],
        {"m": np.array(5, np.int64)})


def scan_cumsum_model(reverse: bool = False, output_axis: int = 0) -> onnx.ModelProto:
    """Cumulative sums of the rows of x (6x4) with Scan (from the last row when `reverse`),
    the running sums stacked along `output_axis`."""
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "row"], ["acc_out"]),
         h.make_node("Identity", ["acc_out"], ["out"])],
        "body", [_info("acc_in", T.FLOAT, [4]), _info("row", T.FLOAT, [4])],
        [_info("acc_out", T.FLOAT, [4]), _info("out", T.FLOAT, [4])])
    return _model(
        [h.make_node("Scan", ["acc0", "x"], ["acc", "sums"], body=body, num_scan_inputs=1,
                     scan_input_directions=[int(reverse)], scan_output_axes=[output_axis])],
        [_info("acc0", T.FLOAT, [4]), _info("x", T.FLOAT, [6, 4])],
        [_info("acc", T.FLOAT, [4]), _info("sums", T.FLOAT, [4, 6] if output_axis else [6, 4])])


def nested_model() -> onnx.ModelProto:
    """A Loop whose body holds an If choosing on the iteration's parity; the If's branches
    capture the loop's carried value and a value two scopes up."""
    then_graph = h.make_graph([h.make_node("Add", ["v_in", "step"], ["t"])], "then", [],
                              [_info("t", T.FLOAT, [3])])
    else_graph = h.make_graph([h.make_node("Mul", ["v_in", "scale"], ["e"])], "else", [],
                              [_info("e", T.FLOAT, [3])])
    body = h.make_graph(
        [h.make_node("Div", ["i", "two"], ["half"]),
         h.make_node("Mul", ["half", "two"], ["even"]),
         h.make_node("Equal", ["even", "i"], ["is_even"]),
         h.make_node("If", ["is_even"], ["v_out"], then_branch=then_graph,
                     else_branch=else_graph),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [_info("i", T.INT64, []), _info("cond_in", T.BOOL, []), _info("v_in", T.FLOAT, [3])],
        [_info("cond_out", T.BOOL, []), _info("v_out", T.FLOAT, [3])])
    return _model(
        [h.make_node("Loop", ["n", "", "v0"], ["v"], body=body)],
        [_info("n", T.INT64, []), _info("v0", T.FLOAT, [3]), _info("step", T.FLOAT, [3])],
        [_info("v", T.FLOAT, [3])],
        {"two": np.array(2, np.int64), "scale": np.array([0.5, -1.0, 2.0], np.float32)})


def _feeds(model: onnx.ModelProto, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    return {i.name: x for i, x in zip(model.graph.input, inputs, strict=True)}


def _check(model: onnx.ModelProto, cases: list[list[np.ndarray]], reference_too: bool = True
           ) -> None:
    """Compiled dlc, the graph interpreter, onnx.reference and ONNX Runtime agree on `cases`.

    onnx 1.23's reference Loop runs no iteration when the condition input is omitted (ONNX:
    true), so models that omit it are checked without it (`reference_too=False`)."""
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    reference = ReferenceEvaluator(model) if reference_too else None
    compiled = dlc.compile(model, cache=False, jobs=1)
    module = import_onnx(model)
    for inputs in cases:
        want = session.run(None, _feeds(model, inputs))
        want_ref = reference.run(None, _feeds(model, inputs)) if reference else want
        got = compiled(*inputs)
        got = [got] if isinstance(got, np.ndarray) else list(got)
        interpreted = run_module(module, inputs)
        for ours, theirs, ref, interp in zip(got, want, want_ref, interpreted, strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
            if reference_too:
                np.testing.assert_allclose(ref, theirs, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(interp, theirs, rtol=1e-5, atol=1e-5)


def test_if_choosing_between_two_conv_branches_matches_onnxruntime() -> None:
    rng = np.random.default_rng(1)
    model = if_conv_model()
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    _check(model, [[np.array(True), x], [np.array(False), x]])
    module = import_onnx(model)
    assert any(isinstance(op, IfOp) for op in module.walk())


def test_loop_with_a_runtime_trip_count_matches_onnxruntime() -> None:
    rng = np.random.default_rng(2)
    model = loop_rnn_model()
    x = rng.standard_normal((2, 4)).astype(np.float32)
    h0 = rng.standard_normal((2, 8)).astype(np.float32)
    _check(model, [[np.array(n, np.int64), x, h0] for n in (0, 1, 3, 7)], reference_too=False)


def test_loop_scan_output_and_runtime_condition_match_onnxruntime() -> None:
    """The limit stops the loop before its 5 iterations in the second case; ONNX then gives
    fewer scan rows, dlc (static shapes) zeros in the rows that did not run: compared on the
    carried value and, where all 5 iterations ran, the scan output."""
    model = loop_scan_model()
    x = np.array([1.0, 2.0, 0.5], np.float32)
    s0 = np.zeros(3, np.float32)
    _check(model, [[np.array(True), x, s0, np.array(100.0, np.float32)]])
    compiled = dlc.compile(model, cache=False, jobs=1)
    s, sums = compiled(np.array(True), x, s0, np.array(8.0, np.float32))
    np.testing.assert_allclose(s, 3 * x)
    np.testing.assert_allclose(sums, [x, 2 * x, 3 * x, 0 * x, 0 * x])
    s, sums = compiled(np.array(False), x, s0, np.array(100.0, np.float32))
    np.testing.assert_allclose(s, s0)
    np.testing.assert_allclose(sums, np.zeros((5, 3)))


@pytest.mark.parametrize("reverse, output_axis", [(False, 0), (True, 1)])
def test_scan_cumulative_sum_matches_onnxruntime(reverse: bool, output_axis: int) -> None:
    """(onnx 1.23's reference Scan implements neither reverse directions nor output axes.)"""
    rng = np.random.default_rng(3)
    model = scan_cumsum_model(reverse, output_axis)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    _check(model, [[np.zeros(4, np.float32), x]], reference_too=not reverse)
    module = import_onnx(model)
    assert [type(op) for op in module.walk() if isinstance(op, IfOp | LoopOp)] == [LoopOp]


def test_nested_if_in_loop_captures_across_two_scopes() -> None:
    rng = np.random.default_rng(4)
    model = nested_model()
    v0 = rng.standard_normal(3).astype(np.float32)
    step = rng.standard_normal(3).astype(np.float32)
    _check(model, [[np.array(n, np.int64), v0, step] for n in (0, 1, 4)], reference_too=False)


def test_if_with_branches_of_different_shapes_is_an_error_naming_the_node() -> None:
    then_graph = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then", [],
                              [_info("t", T.FLOAT, [2, 3])])
    else_graph = h.make_graph([h.make_node("Transpose", ["x"], ["e"])], "else", [],
                              [_info("e", T.FLOAT, [3, 2])])
    model = _model(
        [h.make_node("If", ["c"], ["y"], name="choose", then_branch=then_graph,
                     else_branch=else_graph)],
        [_info("c", T.BOOL, []), _info("x", T.FLOAT, [2, 3])], [_info("y", T.FLOAT, [2, 3])])
    with pytest.raises(OnnxImportError, match=r"node 'choose' \(If, opset 17\): expected the "
                       r"then and else branches to produce the same types, found "
                       r"\(tensor<2x3xf32>\) and \(tensor<3x2xf32>\)"):
        import_onnx(model)


def test_loop_scan_output_with_a_runtime_trip_count_specializes_on_it() -> None:
    """Importing alone, a trip count given at run time is an error naming the value (the scan
    output's length depends on it); dlc.compile binds it per call instead: one compile per
    trip count, the scan output as long as the count."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Identity", ["v_in"], ["v_out"]), h.make_node("Identity", ["v_in"], ["s"])],
        "body",
        [_info("i", T.INT64, []), _info("cond_in", T.BOOL, []), _info("v_in", T.FLOAT, [2])],
        [_info("cond_out", T.BOOL, []), _info("v_out", T.FLOAT, [2]), _info("s", T.FLOAT, [2])])
    model = _model([h.make_node("Loop", ["n", "", "v0"], ["v", "ss"], name="lp", body=body)],
                   [_info("n", T.INT64, []), _info("v0", T.FLOAT, [2])],
                   [_info("v", T.FLOAT, [2]), _info("ss", T.FLOAT, [None, 2])])
    with pytest.raises(NotConstantError, match=r"node 'lp' \(Loop, opset 17\): expected input "
                       r"0 \('n', the trip count M, which decides the length of the scan "
                       r"outputs\) to be known at import time") as caught:
        import_onnx(model)
    assert caught.value.value_name == "n"
    compiled = dlc.compile(model, cache=False, jobs=1)
    v0 = np.array([1.5, -2.0], np.float32)
    for n in (3, 1, 3):
        v, ss = compiled(np.array(n, np.int64), v0)
        np.testing.assert_array_equal(v, v0)
        np.testing.assert_array_equal(ss, np.tile(v0, (n, 1)))
    assert compiled.value_inputs == ("n",) and compiled.compiles == 2


def sliding_window_model(width: int, offset: int) -> onnx.ModelProto:
    """A Loop over a runtime trip count whose body takes `x[i + offset : i + offset + width]`
    (starts and ends computed from the iteration number, as Unsqueeze/Add/Sub) and stacks
    the windows: a runtime-start slice of static size."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Sub", ["i", "minus_offset"], ["first"]),
         h.make_node("Add", ["first", "width"], ["last"]),
         h.make_node("Unsqueeze", ["first", "zero"], ["starts"]),
         h.make_node("Unsqueeze", ["last", "zero"], ["ends"]),
         h.make_node("Slice", ["x", "starts", "ends", "axes"], ["window"]),
         h.make_node("Add", ["acc_in", "window"], ["acc_out"]),
         h.make_node("Identity", ["window"], ["scan"])],
        "body",
        [_info("i", T.INT64, []), _info("cond_in", T.BOOL, []),
         _info("acc_in", T.FLOAT, [3, width])],
        [_info("cond_out", T.BOOL, []), _info("acc_out", T.FLOAT, [3, width]),
         _info("scan", T.FLOAT, [3, width])])
    return _model(
        [h.make_node("Loop", ["n", "", "acc0"], ["acc", "windows"], body=body)],
        [_info("n", T.INT64, []), _info("x", T.FLOAT, [3, 8]),
         _info("acc0", T.FLOAT, [3, width])],
        [_info("acc", T.FLOAT, [3, width]), _info("windows", T.FLOAT, [None, 3, width])],
        {"minus_offset": np.array(-offset, np.int64), "width": np.array(width, np.int64),
         "axes": np.array([1], np.int64), "zero": np.array([0], np.int64)})


@pytest.mark.parametrize("width, offset", [(1, 0), (3, 2), (2, -8)])
def test_loop_body_slicing_at_the_iteration_number_matches_onnxruntime(
        width: int, offset: int) -> None:
    """Windows of static width at runtime starts (negative ones from the end), through the
    compiled path (specialized on the trip count), the interpreter and ONNX Runtime."""
    rng = np.random.default_rng(5)
    model = sliding_window_model(width, offset)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    acc0 = np.zeros((3, width), np.float32)
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    compiled = dlc.compile(model, cache=False, jobs=1)
    for n in (1, 8 - width - max(offset, 0)):
        inputs = [np.array(n, np.int64), x, acc0]
        want = session.run(None, _feeds(model, inputs))
        _, module, bound = import_binding(model, _feeds(model, inputs))
        assert bound == ["n"]
        interpreted = run_module(module, inputs[1:])
        for ours, interp, theirs in zip(compiled(*inputs), interpreted, want, strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(interp, theirs, rtol=1e-6, atol=1e-6)


def scan8_model(sequence_lens: np.ndarray | None) -> onnx.ModelProto:
    """Scan opset 8 over a batch of 3: a running sum of x and of y read backwards
    (`directions`), with the sum stacked as the scan output; `sequence_lens` an initializer,
    or absent."""
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "x_t"], ["a"]),
         h.make_node("Mul", ["a", "y_t"], ["acc_out"]),
         h.make_node("Identity", ["acc_out"], ["out"])],
        "body", [_info("acc_in", T.FLOAT, [2]), _info("x_t", T.FLOAT, [2]),
                 _info("y_t", T.FLOAT, [2])],
        [_info("acc_out", T.FLOAT, [2]), _info("out", T.FLOAT, [2])])
    node = h.make_node("Scan", ["lens" if sequence_lens is not None else "", "acc0", "x", "y"],
                       ["acc", "outs"], name="scan8", body=body, num_scan_inputs=2,
                       directions=[0, 1])
    graph = h.make_graph(
        [node], "scan8",
        [_info("acc0", T.FLOAT, [3, 2]), _info("x", T.FLOAT, [3, 4, 2]),
         _info("y", T.FLOAT, [3, 4, 2])],
        [_info("acc", T.FLOAT, [3, 2]), _info("outs", T.FLOAT, [3, 4, 2])],
        [] if sequence_lens is None else [nh.from_array(sequence_lens, "lens")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 8)])


def _scan8_reference(acc0: np.ndarray, x: np.ndarray, y: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    acc, outs = acc0.copy(), np.zeros_like(x)
    for t in range(x.shape[1]):
        acc = (acc + x[:, t]) * y[:, x.shape[1] - 1 - t]
        outs[:, t] = acc
    return acc, outs


@pytest.mark.parametrize("sequence_lens", [None, np.array([4, 4, 4], np.int64)])
def test_scan_opset8_batched_with_directions_matches_numpy(
        sequence_lens: np.ndarray | None) -> None:
    """Scan-8 becomes one Scan-9 per batch element (the interpreter and the compiled path);
    full-length sequence_lens are accepted. NumPy and ONNX Runtime are the references."""
    rng = np.random.default_rng(6)
    model = scan8_model(sequence_lens)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (3, 4, 2), (3, 4, 2))]
    want = _scan8_reference(*inputs)
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for theirs, ours in zip(session.run(None, _feeds(model, inputs)), want, strict=True):
        np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-5)
    compiled = dlc.compile(model, cache=False, jobs=1)
    for got in (compiled(*inputs), run_module(import_onnx(model), inputs)):
        for ours, theirs in zip(got, want, strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_scan_opset8_short_sequence_lens_is_an_error_naming_the_node() -> None:
    with pytest.raises(OnnxImportError, match=r"node 'scan8' \(Scan, opset 8\): expected "
                       r"sequence_lens to be the scan length 4 for each of the 3 batch "
                       r"elements \(dlc scans whole sequences\), found \[4, 2, 4\]"):
        import_onnx(scan8_model(np.array([4, 2, 4], np.int64)))


def test_loop_body_window_wider_than_the_data_is_an_error_naming_the_slice() -> None:
    """A runtime-start window of 9 elements along an axis of 8 cannot be gathered."""
    with pytest.raises(OnnxImportError, match=r"\(Slice, opset \d+\): expected the window "
                       r"size \(ends - starts = 9, known at import time\) in \[0, 8\] along "
                       r"axis 1"):
        import_onnx(sliding_window_model(9, 0))


def test_loop_body_window_with_more_axes_than_starts_is_an_error() -> None:
    model = sliding_window_model(2, 0)
    for init in model.graph.initializer:
        if init.name == "axes":
            init.CopyFrom(nh.from_array(np.array([0, 1], np.int64), "axes"))
    with pytest.raises(OnnxImportError, match=r"\(Slice, opset \d+\): expected as many axes "
                       r"as starts, found 2 and 1"):
        import_onnx(model)


def test_scan_opset8_inputs_of_two_batch_sizes_is_an_error_naming_the_node() -> None:
    model = scan8_model(None)
    model.graph.input[1].type.tensor_type.shape.dim[0].dim_value = 2  # x: [2, 4, 2]
    with pytest.raises(OnnxImportError, match=r"node 'scan8' \(Scan, opset 8\): expected "
                       r"states \[batch, \.\.\.\] and scan inputs \[batch, length, \.\.\.\] "
                       r"of one batch size"):
        import_onnx(model)


def test_scan_opset8_with_too_few_inputs_is_an_error_naming_the_node() -> None:
    model = scan8_model(None)
    for attr in model.graph.node[0].attribute:
        if attr.name == "num_scan_inputs":
            attr.i = 5
    with pytest.raises(OnnxImportError, match=r"node 'scan8' \(Scan, opset 8\): expected "
                       r"sequence_lens, the states and 5 scan inputs \(at least one\), "
                       r"found 4 inputs"):
        import_onnx(model)
