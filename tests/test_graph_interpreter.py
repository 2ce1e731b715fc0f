"""The graph interpreter against NumPy written out directly and ONNX's reference evaluator."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import dlc.dialects.graph as graph
import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.attrs import from_numpy_dtype
from dlc.dialects.graph.interpreter import (
    IMPLEMENTATIONS,
    InterpreterError,
    run_function,
    run_module,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region
from xdsl.parser import Parser

RNG = np.random.default_rng(1234)


def tensor_type(array: np.ndarray) -> TensorType:
    return TensorType(from_numpy_dtype(array.dtype), array.shape)


def run_op(make: Callable[..., Operation], *arrays: np.ndarray) -> np.ndarray:
    """Build `make(args...)` in a verified one-op function over `arrays` and run it."""
    block = Block(arg_types=[tensor_type(a) for a in arrays])
    op = make(*block.args)
    block.add_ops([op, func.ReturnOp(op.results[0])])
    function = func.FuncOp.from_region(
        "f", [a.type for a in block.args], [op.results[0].type], Region(block)
    )
    ModuleOp([function]).verify()
    (result,) = run_function(function, list(arrays))
    return result


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def randn(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def onnx_model(op_type: str, inputs: Sequence[np.ndarray], opset: int, **attributes: object):
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attributes)
    graph_proto = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
            for n, a in zip(names, inputs, strict=True)
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model, dict(zip(names, inputs, strict=True))


def onnx_reference(
    op_type: str, inputs: Sequence[np.ndarray], opset: int = 19, **attributes: object
) -> np.ndarray:
    """The output of one ONNX node under `onnx.reference.ReferenceEvaluator`."""
    model, feeds = onnx_model(op_type, inputs, opset, **attributes)
    return ReferenceEvaluator(model).run(None, feeds)[0]


def onnx_runtime(
    op_type: str, inputs: Sequence[np.ndarray], opset: int = 19, **attributes: object
) -> np.ndarray:
    """The output of one ONNX node under ONNX Runtime (skips when it is not installed).

    Used for pools on random geometries: onnx 1.23's reference MaxPool/AveragePool take a
    shortcut for unit strides and dilations that gets asymmetric pads wrong (e.g. kernel 2x1,
    pads [1, 0, 0, 0] on a 5x5 input gives 6 rows; pads [0, 0, 1, 0] raises).
    """
    ort = pytest.importorskip("onnxruntime")
    model, feeds = onnx_model(op_type, inputs, opset, **attributes)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


# ---------------------------------------------------------------------------------------------
# Elementwise ops
# ---------------------------------------------------------------------------------------------

BINARY = [
    (graph.AddOp, np.add),
    (graph.SubOp, np.subtract),
    (graph.MulOp, np.multiply),
    (graph.DivOp, np.divide),
    (graph.MaxOp, np.maximum),
    (graph.MinOp, np.minimum),
]


@pytest.mark.parametrize("op_type, reference", BINARY, ids=[b[0].name for b in BINARY])
@settings(max_examples=15, deadline=None)
@given(
    shapes=st.sampled_from(
        [((2, 3), (3,)), ((4, 1), (1, 5)), ((2, 3), ()), ((1, 2, 3), (4, 1, 1)), ((3,), (3,))]
    )
)
def test_binary_ops_broadcast_like_numpy(
    op_type: type[Operation], reference: Callable, shapes: tuple[tuple[int, ...], ...]
) -> None:
    lhs, rhs = randn(*shapes[0]), randn(*shapes[1]) + 3.0
    result = run_op(lambda a, b: op_type(a, b), lhs, rhs)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, reference(lhs, rhs))


def test_pow_and_integer_ops() -> None:
    base, exponent = np.abs(randn(2, 3)) + 0.5, randn(3)
    np.testing.assert_allclose(
        run_op(lambda a, b: graph.PowOp(a, b), base, exponent), base**exponent, rtol=1e-6
    )
    lhs = np.array([[7, -7, 9], [0, 5, -1]], dtype=np.int64)
    rhs = np.array([2, 2, -4], dtype=np.int64)
    np.testing.assert_array_equal(run_op(lambda a, b: graph.AddOp(a, b), lhs, rhs), lhs + rhs)
    # Integer division truncates toward zero (ONNX Div, C), unlike NumPy's floor division.
    np.testing.assert_array_equal(
        run_op(lambda a, b: graph.DivOp(a, b), lhs, rhs), [[3, -3, -2], [0, 2, 0]]
    )
    ints = np.array([-3, 0, 4], dtype=np.int32)
    np.testing.assert_array_equal(run_op(lambda x: graph.ReluOp(x), ints), [0, 0, 4])
    np.testing.assert_array_equal(run_op(lambda x: graph.NegOp(x), ints), [3, 0, -4])
    np.testing.assert_array_equal(run_op(lambda x: graph.AbsOp(x), ints), [3, 0, 4])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)


UNARY = [
    (graph.ReluOp, lambda x: np.maximum(x, 0)),
    (graph.SigmoidOp, _sigmoid),
    (graph.TanhOp, np.tanh),
    (graph.ExpOp, np.exp),
    (graph.ErfOp, lambda x: np.array([math.erf(v) for v in x.ravel().tolist()]).reshape(x.shape)),
    (graph.SqrtOp, lambda x: np.sqrt(np.abs(x))),
    (graph.NegOp, np.negative),
    (graph.AbsOp, np.abs),
    (graph.LogOp, lambda x: np.log(np.abs(x))),
    (graph.ReciprocalOp, np.reciprocal),
]


@pytest.mark.parametrize("op_type, reference", UNARY, ids=[u[0].name for u in UNARY])
def test_unary_ops_match_numpy(op_type: type[Operation], reference: Callable) -> None:
    x = randn(3, 7) * 4
    if op_type in (graph.SqrtOp, graph.LogOp):
        x = np.abs(x)
    result = run_op(lambda v: op_type(v), x)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, reference(x), rtol=2e-6, atol=1e-7)


def test_sigmoid_is_stable_for_large_inputs() -> None:
    x = np.array([-200.0, -20.0, 0.0, 20.0, 200.0], dtype=np.float32)
    np.testing.assert_allclose(run_op(lambda v: graph.SigmoidOp(v), x), _sigmoid(x), rtol=1e-6)


def test_clip() -> None:
    x = randn(4, 5) * 10
    np.testing.assert_array_equal(
        run_op(lambda v: graph.ClipOp(v, 0.0, 6.0), x), np.clip(x, 0.0, 6.0)
    )


# ---------------------------------------------------------------------------------------------
# Matmul, conv2d, pools
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    lhs=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    rhs=st.lists(st.integers(1, 4), min_size=1, max_size=4),
)
def test_matmul_matches_numpy(lhs: list[int], rhs: list[int]) -> None:
    a, b = randn(*lhs), randn(*rhs)
    try:
        expected = np.matmul(a, b)
    except ValueError:
        return  # incompatible shapes: the builder rejects them (test_graph_dialect)
    result = run_op(lambda x, y: graph.MatmulOp(x, y), a, b)
    assert result.shape == expected.shape and result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


CONV_CASES = [
    dict(shape=(2, 4, 9, 10), weight=(6, 2, 3, 3), strides=(2, 1), padding=(1, 2, 0, 1),
         dilation=(2, 1), groups=2),
    dict(shape=(1, 3, 7, 7), weight=(5, 3, 1, 1), strides=(1, 1), padding=(0, 0, 0, 0),
         dilation=(1, 1), groups=1),
    dict(shape=(1, 8, 6, 5), weight=(8, 1, 3, 3), strides=(1, 2), padding=(1, 1, 1, 1),
         dilation=(1, 1), groups=8),  # depthwise
    dict(shape=(2, 3, 11, 8), weight=(4, 3, 5, 2), strides=(3, 2), padding=(2, 0, 1, 1),
         dilation=(1, 3), groups=1),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_matches_onnx_reference(case: dict) -> None:
    x, w, b = randn(*case["shape"]), randn(*case["weight"]), randn(case["weight"][0])
    attrs = {k: case[k] for k in ("strides", "padding", "dilation", "groups")}
    result = run_op(lambda *v: graph.Conv2DOp(*v, **attrs), x, w, b)
    expected = onnx_reference(
        "Conv", [x, w, b], strides=list(case["strides"]), pads=list(case["padding"]),
        dilations=list(case["dilation"]), group=case["groups"],
    )
    assert result.shape == expected.shape and result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)
    no_bias = run_op(lambda *v: graph.Conv2DOp(*v, **attrs), x, w)
    np.testing.assert_allclose(no_bias + b.reshape(1, -1, 1, 1), result, rtol=1e-5, atol=1e-5)


def test_conv2d_nhwc_hwio_matches_nchw() -> None:
    x, w = randn(1, 4, 7, 6), randn(6, 2, 3, 3)
    attrs = dict(strides=(2, 1), padding=(1, 0, 1, 2), groups=2)
    nchw = run_op(lambda *v: graph.Conv2DOp(*v, **attrs), x, w)
    nhwc = run_op(
        lambda *v: graph.Conv2DOp(*v, layout="NHWC", **attrs),
        x.transpose(0, 2, 3, 1).copy(), w.transpose(2, 3, 1, 0).copy(),
    )
    np.testing.assert_allclose(nhwc, nchw.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


pool_geometry = st.fixed_dictionaries(
    {
        "size": st.tuples(st.integers(5, 9), st.integers(5, 9)),  # >= any window extent
        "kernel": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "strides": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "pads": st.tuples(*[st.integers(0, 2)] * 4),
        "ceil_mode": st.booleans(),
    }
)


def _legal_pads(geometry: dict) -> list[int]:
    """Pads clipped below the kernel size (ONNX Runtime's rule, stricter than the verifier's)."""
    return [min(p, geometry["kernel"][i % 2] - 1) for i, p in enumerate(geometry["pads"])]


@settings(max_examples=25, deadline=None)
@given(geometry=pool_geometry, dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)))
def test_max_pool2d_matches_onnx_runtime(geometry: dict, dilation: tuple[int, int]) -> None:
    x = randn(1, 2, *geometry["size"])
    pads = _legal_pads(geometry)
    result = run_op(
        lambda v: graph.MaxPool2DOp(
            v, kernel=geometry["kernel"], strides=geometry["strides"], padding=pads,
            dilation=dilation, ceil_mode=geometry["ceil_mode"],
        ),
        x,
    )
    expected = onnx_runtime(
        "MaxPool", [x], kernel_shape=list(geometry["kernel"]), strides=list(geometry["strides"]),
        pads=pads, dilations=list(dilation), ceil_mode=int(geometry["ceil_mode"]),
    )
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@settings(max_examples=25, deadline=None)
@given(geometry=pool_geometry, count_include_pad=st.booleans())
def test_avg_pool2d_matches_onnx_runtime(geometry: dict, count_include_pad: bool) -> None:
    x = randn(1, 2, *geometry["size"])
    pads = _legal_pads(geometry)
    result = run_op(
        lambda v: graph.AvgPool2DOp(
            v, kernel=geometry["kernel"], strides=geometry["strides"], padding=pads,
            ceil_mode=geometry["ceil_mode"], count_include_pad=count_include_pad,
        ),
        x,
    )
    expected = onnx_runtime(
        "AveragePool", [x], kernel_shape=list(geometry["kernel"]),
        strides=list(geometry["strides"]), pads=pads, ceil_mode=int(geometry["ceil_mode"]),
        count_include_pad=int(count_include_pad),
    )
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)


POOL_CASES = [
    dict(kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), ceil_mode=False),
    dict(kernel=(3, 3), strides=(2, 2), padding=(0, 0, 0, 0), ceil_mode=True),
    dict(kernel=(3, 2), strides=(2, 3), padding=(1, 1, 1, 0), ceil_mode=True),
    dict(kernel=(2, 2), strides=(2, 2), padding=(1, 0, 1, 1), ceil_mode=True),
]


@pytest.mark.parametrize("case", POOL_CASES)
def test_pools_match_onnx_reference(case: dict) -> None:
    x = randn(2, 3, 10, 11)
    onnx_attrs = dict(
        kernel_shape=list(case["kernel"]), strides=list(case["strides"]),
        pads=list(case["padding"]), ceil_mode=int(case["ceil_mode"]),
    )
    max_pool = run_op(lambda v: graph.MaxPool2DOp(v, **case), x)
    np.testing.assert_array_equal(max_pool, onnx_reference("MaxPool", [x], **onnx_attrs))
    for include in (False, True):
        avg_pool = run_op(
            lambda v, include=include: graph.AvgPool2DOp(v, count_include_pad=include, **case), x
        )
        expected = onnx_reference(
            "AveragePool", [x], count_include_pad=int(include), **onnx_attrs
        )
        np.testing.assert_allclose(avg_pool, expected, rtol=1e-5, atol=1e-6)


def test_pools_in_nhwc_match_nchw() -> None:
    x = randn(1, 3, 8, 7)
    x_nhwc = x.transpose(0, 2, 3, 1).copy()
    for make in (
        lambda v, **kw: graph.MaxPool2DOp(v, kernel=(3, 2), strides=(2, 2), ceil_mode=True, **kw),
        lambda v, **kw: graph.AvgPool2DOp(v, kernel=(2, 3), padding=(1, 1, 0, 1), **kw),
        lambda v, **kw: graph.GlobalAvgPool2DOp(v, **kw),
    ):
        nchw = run_op(make, x)
        nhwc = run_op(lambda v, make=make: make(v, layout="NHWC"), x_nhwc)
        np.testing.assert_allclose(nhwc, nchw.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-6)


def test_global_avg_pool2d() -> None:
    x = randn(2, 3, 5, 4)
    result = run_op(lambda v: graph.GlobalAvgPool2DOp(v), x)
    np.testing.assert_allclose(result, x.mean(axis=(2, 3), keepdims=True), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Normalization, reductions, injective ops
# ---------------------------------------------------------------------------------------------


def test_batch_norm_matches_onnx_reference() -> None:
    x, scale, bias, mean = randn(2, 3, 4, 5), randn(3), randn(3), randn(3)
    var = np.abs(randn(3)) + 0.1
    result = run_op(lambda *v: graph.BatchNormOp(*v, epsilon=1e-3), x, scale, bias, mean, var)
    expected = onnx_reference(
        "BatchNormalization", [x, scale, bias, mean, var], opset=15, epsilon=1e-3
    )
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(axis: int) -> None:
    x = randn(3, 4, 5) * 10
    result = run_op(lambda v: graph.SoftmaxOp(v, axis), x)
    e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
    np.testing.assert_allclose(result, e / e.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["sum", "mean", "max", "min", "prod"]),
    axes=st.lists(st.integers(-3, 2), max_size=3, unique_by=lambda a: a % 3),
    keepdims=st.booleans(),
)
def test_reduce_matches_numpy(kind: str, axes: list[int], keepdims: bool) -> None:
    x = randn(2, 3, 4)
    result = run_op(lambda v: graph.ReduceOp(v, kind, axes, keepdims), x)
    numpy_axes = tuple(axes) if axes else None
    expected = getattr(np, kind)(x.astype(np.float64), axis=numpy_axes, keepdims=keepdims)
    assert result.dtype == np.float32 and result.shape == np.shape(expected)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)


def test_integer_reduce_mean_truncates() -> None:
    x = np.array([[1, 2], [-3, -4]], dtype=np.int32)
    np.testing.assert_array_equal(
        run_op(lambda v: graph.ReduceOp(v, "mean", [1], keepdims=False), x), [1, -3]
    )
    np.testing.assert_array_equal(
        run_op(lambda v: graph.ReduceOp(v, "sum", [], keepdims=False), x), -4
    )


def test_injective_ops() -> None:
    x = randn(2, 3, 4)
    np.testing.assert_array_equal(
        run_op(lambda v: graph.ReshapeOp(v, [4, -1]), x), x.reshape(4, 6)
    )
    np.testing.assert_array_equal(
        run_op(lambda v: graph.TransposeOp(v, [2, 0, 1]), x), x.transpose(2, 0, 1)
    )
    np.testing.assert_array_equal(run_op(lambda v: graph.FlattenOp(v, 2), x), x.reshape(6, 4))
    y = randn(2, 5, 4)
    np.testing.assert_array_equal(
        run_op(lambda a, b: graph.ConcatOp([a, b], -2), x, y), np.concatenate([x, y], axis=1)
    )


# ---------------------------------------------------------------------------------------------
# Functions, calls, fused groups, constants, errors
# ---------------------------------------------------------------------------------------------

MODULE = """
func.func private @scale(%v: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %two = arith.constant dense<2.0> : tensor<2x3xf32>
  %r = graph.mul %v, %two : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %b = graph.constant dense<[1.0, -2.0, 3.0, -4.0]> : tensor<4xf32>
  %s = func.call @scale(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = graph.fused (%s, %w, %b) {kind = "out_fusable"}
      : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x3xf32>, %c: tensor<3x4xf32>, %d: tensor<4xf32>):
    %m = graph.matmul %a, %c : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %e = graph.add %m, %d : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %y = graph.relu %e : tensor<2x4xf32>
    graph.yield %y : tensor<2x4xf32>
  }
  func.return %r, %s : tensor<2x4xf32>, tensor<2x3xf32>
}
"""


def test_module_with_call_fused_and_constants() -> None:
    module = parse(MODULE)
    x, w = randn(2, 3), randn(3, 4)
    relu, scaled = run_module(module, [x, w])
    np.testing.assert_array_equal(scaled, 2 * x)
    expected = np.maximum((2 * x) @ w + np.array([1, -2, 3, -4], np.float32), 0)
    np.testing.assert_allclose(relu, expected, rtol=1e-6, atol=1e-6)
    (scaled_again,) = run_module(module, [x], entry="scale")
    np.testing.assert_array_equal(scaled_again, scaled)


def test_errors_name_what_went_wrong() -> None:
    module = parse(MODULE)
    x, w = randn(2, 3), randn(3, 4)
    with pytest.raises(InterpreterError, match="@main expects 2 inputs, found 1"):
        run_module(module, [x])
    with pytest.raises(InterpreterError, match=r"expected input #1 of type tensor<3x4xf32>"):
        run_module(module, [x, w.astype(np.float64)])
    with pytest.raises(InterpreterError, match="no function @nope"):
        run_module(module, [x], entry="nope")
    two_public = parse(MODULE.replace("func.func private @scale", "func.func @scale"))
    with pytest.raises(InterpreterError, match="expected one public function to run, found"):
        run_module(two_public, [x, w])
    foreign = parse(
        """
        func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
          %y = "test.op"(%x) : (tensor<2xf32>) -> tensor<2xf32>
          func.return %y : tensor<2xf32>
        }"""
    )
    with pytest.raises(InterpreterError, match="no NumPy implementation for 'test.op'"):
        run_module(foreign, [randn(2)])


def test_every_graph_op_has_an_implementation() -> None:
    handled_by_the_driver = {graph.FusedOp, graph.YieldOp, graph.IfOp, graph.LoopOp}
    missing = [
        op.name
        for op in graph.Graph.operations
        if op not in IMPLEMENTATIONS and op not in handled_by_the_driver
    ]
    assert missing == []


def test_a_wrong_implementation_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        IMPLEMENTATIONS, graph.ReluOp, lambda op, args: np.maximum(args[0], 0).astype(np.float64)
    )
    with pytest.raises(InterpreterError, match="'graph.relu' returned a float64 array"):
        run_op(lambda v: graph.ReluOp(v), randn(3))


def test_rank_zero_results_are_arrays() -> None:
    a, b = randn(3), randn(3)
    result = run_op(lambda x, y: graph.MatmulOp(x, y), a, b)
    assert isinstance(result, np.ndarray) and result.shape == ()
    np.testing.assert_allclose(result, a @ b, rtol=1e-6)


LOOP_SCAN = """
func.func @f(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>, %limit: tensor<f32>)
    -> (tensor<2xf32>, tensor<3x2xf32>) {
  %r:2 = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>)
      -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    %n = graph.add %v, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %s = graph.reduce %n {kind = "sum", axes = array<i64: 0>, keepdims = false}
      : (tensor<2xf32>) -> tensor<f32>
    %go = graph.compare %s, %limit {predicate = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    graph.yield %go, %n, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<3x2xf32>
}
"""


@pytest.mark.parametrize(("trip", "cond", "limit", "iterations"), [
    (10, True, 100.0, 3),  # bounded by the scan length D = 3
    (2, True, 100.0, 2),  # by the trip count
    (10, True, 7.0, 2),  # the sum 9 of the second iteration stops it
    (10, False, 100.0, 0),  # never starts
])
def test_loop_runs_while_trip_count_condition_and_scan_length_allow(
    trip: int, cond: bool, limit: float, iterations: int
) -> None:
    module = Parser(make_context(), LOOP_SCAN).parse_module()
    x = np.array([1.0, 2.0], np.float32)
    carried, stacked = run_module(module, [np.array(trip), np.array(cond), x,
                                           np.array(limit, np.float32)])
    np.testing.assert_array_equal(carried, x * (iterations + 1))
    expected = np.zeros((3, 2), np.float32)
    for row in range(iterations):
        expected[row] = x * (row + 1)
    np.testing.assert_array_equal(stacked, expected)
