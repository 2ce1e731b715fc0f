"""The quantized graph ops: exact integer semantics in the interpreter (against ONNX's reference
evaluator and NumPy), the compiled code against the interpreter (random scales, zero points and
shapes), the verifier's errors, and the fused requantize epilogue (no int32 tensor between
layers)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module
from dlc.dialects.graph.interpreter_quant import dequantize, quantize
from dlc.frontends.onnx.importer import import_onnx
from dlc.pipelines import parse_pipeline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import StringAttr

import dlc

_INT = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}


def _model(nodes: list[onnx.NodeProto], inputs: list[tuple[str, int, list[int]]],
           output: tuple[str, int, list[int]], initializers: dict[str, np.ndarray]
           ) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(*output)],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _scales(draw: st.DrawFn, count: int) -> np.ndarray:
    exponents = draw(st.lists(st.floats(-6, 2), min_size=count, max_size=count))
    return (2.0 ** np.asarray(exponents) * draw(st.floats(1.0, 1.9))).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Semantics: rounding half to even, saturation, per-channel
# ---------------------------------------------------------------------------------------------


def test_quantize_rounds_half_to_even_and_saturates() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1000.0, -1000.0, 0.49], np.float32)
    assert quantize(x, np.array(1.0, np.float32), np.array(0, np.int8)).tolist() == [
        0, 2, 2, 0, -2, 127, -128, 0]
    assert quantize(x, np.array(1.0, np.float32), np.array(10, np.uint8)).tolist() == [
        10, 12, 12, 10, 8, 255, 0, 10]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_quantize_dequantize_match_onnx_reference(data: st.DataObject) -> None:
    """QuantizeLinear / DequantizeLinear, per tensor and per axis, imported and interpreted."""
    rank = data.draw(st.integers(1, 4))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    axis = data.draw(st.integers(0, rank - 1))
    per_axis = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from([np.int8, np.uint8]))
    count = shape[axis] if per_axis else 1
    scale = _scales(data.draw, count)
    info = np.iinfo(dtype)
    zero_point = np.asarray(data.draw(st.lists(st.integers(info.min, info.max), min_size=count,
                                               max_size=count)), dtype)
    if not per_axis:
        scale, zero_point = scale.reshape(()), zero_point.reshape(())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = (rng.normal(size=shape) * 200 * float(scale.max())).astype(np.float32)
    x.reshape(-1)[0] = float(scale.reshape(-1)[0]) * 2.5  # a tie
    model = _model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis),
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis)],
        [("x", TensorProto.FLOAT, shape)], ("y", TensorProto.FLOAT, shape),
        {"s": scale, "z": zero_point})
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = run_module(import_onnx(model), [x])
    np.testing.assert_array_equal(got, expected)


@st.composite
def _conv_case(draw: st.DrawFn) -> dict[str, object]:
    groups = draw(st.sampled_from([1, 2]))
    cin = groups * draw(st.integers(1, 3))
    cout = groups * draw(st.integers(1, 3))
    kernel = draw(st.integers(1, 3))
    size = draw(st.integers(kernel, 6))
    return {
        "groups": groups, "cin": cin, "cout": cout, "kernel": kernel, "size": size,
        "pad": draw(st.integers(0, kernel - 1)), "stride": draw(st.integers(1, 2)),
        "x_dtype": draw(st.sampled_from([np.int8, np.uint8])),
        "w_dtype": draw(st.sampled_from([np.int8, np.uint8])),
        "per_channel": draw(st.booleans()), "seed": draw(st.integers(0, 2**16)),
    }


def _integers(rng: np.random.Generator, dtype: type, shape: object) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def _conv_integer_case(case: dict) -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:  # type: ignore[type-arg]
    """(ConvInteger model, input, ONNX reference's output) of a `_conv_case`."""
    rng = np.random.default_rng(case["seed"])
    x = _integers(rng, case["x_dtype"], (1, case["cin"], case["size"], case["size"]))
    w = _integers(rng, case["w_dtype"], (case["cout"], case["cin"] // case["groups"],
                                         case["kernel"], case["kernel"]))
    xz = _integers(rng, case["x_dtype"], ())
    wz = _integers(rng, case["w_dtype"], (case["cout"],) if case["per_channel"] else ())
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"],
                            pads=[case["pad"]] * 4, strides=[case["stride"]] * 2,
                            group=case["groups"])
    (expected,) = ReferenceEvaluator(_model(
        [node], [("x", _INT[case["x_dtype"]], list(x.shape))], ("y", TensorProto.INT32, None),
        {"w": w, "xz": xz, "wz": wz})).run(None, {"x": x})
    model = _model([node], [("x", _INT[case["x_dtype"]], list(x.shape))],
                   ("y", TensorProto.INT32, list(expected.shape)), {"w": w, "xz": xz, "wz": wz})
    return model, x, expected


@settings(max_examples=30, deadline=None)
@given(case=_conv_case())
def test_conv_integer_matches_onnx_reference(case: dict) -> None:  # type: ignore[type-arg]
    """ConvInteger (zero points, per output channel, grouped, padded with the zero point)."""
    model, x, expected = _conv_integer_case(case)
    (got,) = run_module(import_onnx(model), [x])
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=30, deadline=None)
@given(case=_conv_case())
def test_conv_integer_in_nhwc_matches_onnx_reference(case: dict) -> None:  # type: ignore[type-arg]
    """ConvInteger moved to NHWC / HWIO by graph-convert-layout{integer_only} (the per-channel
    weight zero point then along the weight's axis 3): the interpreter's result is unchanged."""
    model, x, expected = _conv_integer_case(case)
    module = import_onnx(model)
    for module_pass in parse_pipeline("graph-convert-layout{integer_only=true}"):
        module_pass.apply(make_context(), module)
    assert [op.attributes["layout"] for op in module.walk()  # type: ignore[union-attr]
            if op.name == "graph.conv2d_integer"] == [StringAttr("NHWC")]
    (got,) = run_module(module, [x])
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 5), k=st.integers(1, 6), n=st.integers(1, 5), batch=st.booleans(),
       a_dtype=st.sampled_from([np.int8, np.uint8]), b_dtype=st.sampled_from([np.int8, np.uint8]),
       per_column=st.booleans(), seed=st.integers(0, 2**16))
def test_matmul_integer_matches_onnx_reference(m: int, k: int, n: int, batch: bool,
                                               a_dtype: type, b_dtype: type, per_column: bool,
                                               seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = _integers(rng, a_dtype, (2, m, k) if batch else (m, k))
    b = _integers(rng, b_dtype, (k, n))
    az = _integers(rng, a_dtype, ())
    bz = _integers(rng, b_dtype, (n,) if per_column else ())
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    out_shape = [*a.shape[:-1], n]
    model = _model([node], [("a", _INT[a_dtype], list(a.shape))],
                   ("y", TensorProto.INT32, out_shape), {"b": b, "az": az, "bz": bz})
    (expected,) = ReferenceEvaluator(model).run(None, {"a": a})
    (got,) = run_module(import_onnx(model), [a])
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------------------------
# The compiled code against the interpreter
# ---------------------------------------------------------------------------------------------


@st.composite
def _qlinear_conv_case(draw: st.DrawFn) -> dict[str, object]:
    case = draw(_conv_case())
    case["x_scale"] = _scales(draw, 1)[0]
    case["w_scale"] = _scales(draw, case["cout"] if case["per_channel"] else 1)  # type: ignore
    case["y_scale"] = _scales(draw, 1)[0] * 16
    case["y_dtype"] = case["x_dtype"]  # ORT implements QLinearConv for one activation type
    case["bias"] = draw(st.booleans())
    return case


def _qlinear_conv_model(case: dict, rng: np.random.Generator  # type: ignore[type-arg]
                        ) -> tuple[onnx.ModelProto, np.ndarray]:
    x = _integers(rng, case["x_dtype"], (1, case["cin"], case["size"], case["size"]))
    w = _integers(rng, np.int8, (case["cout"], case["cin"] // case["groups"], case["kernel"],
                                 case["kernel"]))
    per_channel = case["per_channel"]
    inits = {
        "xs": np.asarray(case["x_scale"], np.float32), "xz": _integers(rng, case["x_dtype"], ()),
        "w": w, "ws": case["w_scale"] if per_channel else case["w_scale"].reshape(()),
        "wz": np.zeros((case["cout"],) if per_channel else (), np.int8),
        "ys": np.asarray(case["y_scale"], np.float32), "yz": _integers(rng, case["y_dtype"], ()),
    }
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if case["bias"]:
        inits["b"] = rng.integers(-1000, 1000, case["cout"]).astype(np.int32)
        names.append("b")
    node = helper.make_node("QLinearConv", names, ["y"], pads=[case["pad"]] * 4,
                            strides=[case["stride"]] * 2, group=case["groups"])
    out = (case["size"] + 2 * case["pad"] - case["kernel"]) // case["stride"] + 1
    model = _model([node], [("x", _INT[case["x_dtype"]], list(x.shape))],
                   ("y", _INT[case["y_dtype"]], [1, case["cout"], out, out]), inits)
    return model, x


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_qlinear_conv_case())
def test_compiled_qlinear_conv_matches_interpreter_and_ort(case: dict) -> None:  # type: ignore
    """QLinearConv through graph -> tensor_expr -> loop -> LLVM: equal to the interpreter, and
    within one step of ONNX Runtime."""
    ort = pytest.importorskip("onnxruntime")
    model, x = _qlinear_conv_model(case, np.random.default_rng(case["seed"]))
    (reference,) = run_module(import_onnx(model), [x])
    got = dlc.compile(model, cache=False)(x)
    np.testing.assert_array_equal(got, reference)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    assert np.abs(got.astype(np.int32) - expected.astype(np.int32)).max() <= 1


@pytest.mark.parametrize("x_dtype", [np.int8, np.uint8])
def test_compiled_quantize_dequantize_per_channel(x_dtype: type) -> None:
    rng = np.random.default_rng(0)
    scale = np.array([0.05, 0.5, 0.003], np.float32)
    zero_point = _integers(rng, x_dtype, (3,))
    x = (rng.normal(size=(2, 3, 5)) * 2).astype(np.float32)
    x[0, 0, 0] = 0.125  # 2.5 steps: a tie
    model = _model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)],
        [("x", TensorProto.FLOAT, [2, 3, 5])], ("y", TensorProto.FLOAT, [2, 3, 5]),
        {"s": scale, "z": zero_point})
    got = dlc.compile(model, cache=False)(x)
    s, z = scale.reshape(1, 3, 1), zero_point.reshape(1, 3, 1)
    np.testing.assert_array_equal(got, dequantize(quantize(x, scale, zero_point), scale,
                                                  zero_point))
    info = np.iinfo(x_dtype)
    manual = (np.clip(np.rint(x / s) + z.astype(np.float32), info.min, info.max)
              - z.astype(np.float32)) * s
    np.testing.assert_array_equal(got, manual.astype(np.float32))


@pytest.mark.parametrize(("x_dtype", "zero_points"), [
    (np.int8, [-128, -7, -1, 0, 1, 6, 127]), (np.uint8, [0, 1, 6, 128, 255])])
def test_compiled_quantize_rounds_every_tie_to_even_at_odd_and_even_zero_points(
        x_dtype: type, zero_points: list[int]) -> None:
    """Every half step from -300 to 300 (ties on both sides of each bound), infinities and
    values beyond 2^22: the compiled quantize (a clamp, then one f32 add that rounds and an i32
    subtraction that adds the zero point) gives the interpreter's values at every zero point,
    odd ones included, where rounding after adding the zero point would break ties the other
    way."""
    x = np.concatenate([np.arange(-600, 601, dtype=np.float32) / 2,
                        np.array([np.inf, -np.inf, 1e30, -1e30, 2.0 ** 23 + 1], np.float32)])
    for zero_point in zero_points:
        point = np.array(zero_point, x_dtype)
        model = _model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])],
                       [("x", TensorProto.FLOAT, [x.size])], ("q", _INT[x_dtype], [x.size]),
                       {"s": np.array(1.0, np.float32), "z": point})
        got = dlc.compile(model, cache=False)(x)
        np.testing.assert_array_equal(got, quantize(x, np.array(1.0, np.float32), point),
                                      err_msg=f"zero point {zero_point}")


# ---------------------------------------------------------------------------------------------
# The requantize tail fuses into the integer conv: no i32 tensor between layers
# ---------------------------------------------------------------------------------------------


def test_requantize_fuses_into_the_integer_conv() -> None:
    from dlc.dialects.graph import FusedOp
    from dlc.pipelines import parse_pipeline
    from xdsl.context import Context
    from xdsl.dialects.builtin import TensorType, i32

    case = {"groups": 1, "cin": 3, "cout": 4, "kernel": 3, "size": 6, "pad": 1, "stride": 1,
            "x_dtype": np.uint8, "w_dtype": np.int8, "per_channel": True, "seed": 0,
            "x_scale": np.float32(0.02), "w_scale": np.full(4, 0.01, np.float32),
            "y_scale": np.float32(0.05), "y_dtype": np.uint8, "bias": True}
    model, _ = _qlinear_conv_model(case, np.random.default_rng(0))
    module = import_onnx(model)
    ctx = Context()
    for spec_pass in parse_pipeline("graph-opt"):
        spec_pass.apply(ctx, module)
    fused = [op for op in module.walk() if isinstance(op, FusedOp)]
    names = [fused_op.name_value() for fused_op in fused]
    assert any(name and "conv2d_integer" in name and "quantize" in name for name in names), names
    for fused_op in fused:
        for result in fused_op.results:
            assert isinstance(result.type, TensorType)
            assert result.type.get_element_type() != i32, f"{names}: an i32 group result"


# ---------------------------------------------------------------------------------------------
# Bad input: a compile error naming the node
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("scale", "message"), [
    (np.array(0.0, np.float32), "expected positive finite scales (input 1), found 0.0"),
    (np.array(np.nan, np.float32), "expected positive finite scales (input 1), found nan"),
])
def test_bad_scale_is_an_error_naming_the_node(scale: np.ndarray, message: str) -> None:
    model = _model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="quant0")],
                   [("x", TensorProto.FLOAT, [4])], ("y", TensorProto.INT8, [4]),
                   {"s": scale, "z": np.array(0, np.int8)})
    with pytest.raises(dlc.CompileError, match=r"quant0.*" + message.replace("(", r"\(")
                       .replace(")", r"\)")):
        dlc.compile(model, cache=False)


def test_per_channel_length_mismatch_is_an_error_naming_the_node() -> None:
    model = _model([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq7",
                                     axis=1)],
                   [("x", TensorProto.INT8, [2, 3])], ("y", TensorProto.FLOAT, [2, 3]),
                   {"s": np.ones(2, np.float32), "z": np.zeros(2, np.int8)})
    with pytest.raises(dlc.CompileError, match=r"dq7.*expected 3 per-channel scales"):
        dlc.compile(model, cache=False)


def test_zero_point_of_another_type_is_an_error_naming_the_node() -> None:
    model = _model([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq8")],
                   [("x", TensorProto.INT8, [3])], ("y", TensorProto.FLOAT, [3]),
                   {"s": np.array(0.5, np.float32), "z": np.array(0, np.uint8)})
    with pytest.raises(dlc.CompileError, match=r"dq8.*zero point of element type i8, found ui8"):
        dlc.compile(model, cache=False)


# ---------------------------------------------------------------------------------------------
# graph-fold-qdq keeps results within one step (the graph interpreter before and after)
# ---------------------------------------------------------------------------------------------


@st.composite
def _qdq_graphs(draw: st.DrawFn) -> tuple[onnx.ModelProto, np.ndarray, float]:
    """x -> Q -> DQ -> Conv | MatMul | Gemm(transB) with DQ'd int8 weights (per tensor or per
    channel) and int32 bias -> [Relu] -> Q -> DQ, with random shapes, scales and zero points."""
    kind = draw(st.sampled_from(["Conv", "MatMul", "Gemm"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    per_channel, relu = draw(st.booleans()), draw(st.booleans())
    x_dtype = draw(st.sampled_from([np.int8, np.uint8]))
    x_scale = _scales(draw, 1).reshape(())
    y_scale = np.float32(x_scale * draw(st.floats(2.0, 40.0)))
    cout = draw(st.integers(1, 4))
    if kind == "Conv":
        cin, k, size = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(3, 5))
        x_shape, w_shape, axis = [1, cin, size, size], (cout, cin, k, k), 0
        out = size + 2 * (k // 2) - k + 1
        y_shape = [1, cout, out, out]
        node = helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[k // 2] * 4)
    else:
        cin = draw(st.integers(1, 5))
        x_shape = [draw(st.integers(1, 3)), cin]
        w_shape, axis = ((cout, cin), 0) if kind == "Gemm" else ((cin, cout), 1)
        y_shape = [x_shape[0], cout]
        node = (helper.make_node("Gemm", ["xd", "wd", "bd"], ["c"], transB=1) if kind == "Gemm"
                else helper.make_node("MatMul", ["xd", "wd"], ["c"]))
    w_scale = _scales(draw, cout if per_channel else 1)
    if not per_channel:
        w_scale = w_scale.reshape(())
    inits = {
        "xs": x_scale, "xz": _integers(rng, x_dtype, ()),
        "w": _integers(rng, np.int8, w_shape), "ws": w_scale,
        "wz": np.zeros(w_scale.shape, np.int8),
        "b": rng.integers(-500, 500, cout).astype(np.int32),
        "bs": (x_scale * w_scale).astype(np.float32) if per_channel else
        np.float32(x_scale * w_scale), "bz": np.zeros(w_scale.shape, np.int32),
        "ys": np.asarray(y_scale), "yz": _integers(rng, np.uint8, ()),
    }
    channel_attrs = {"axis": axis} if per_channel else {}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], **channel_attrs),
        helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"],
                         **({"axis": 0} if per_channel else {})),
        node,
        *([helper.make_node("Relu", ["c"], ["r"])] if relu else []),
        helper.make_node("QuantizeLinear", ["r" if relu else "c", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    scale = float(x_scale) * 127
    x = (rng.normal(size=x_shape) * scale).astype(np.float32)
    model = _model(nodes, [("x", TensorProto.FLOAT, x_shape)], ("y", TensorProto.FLOAT, y_shape),
                   inits)
    return model, x, float(y_scale)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_qdq_graphs())
def test_fold_qdq_preserves_results_within_one_step(
        case: tuple[onnx.ModelProto, np.ndarray, float]) -> None:
    from dlc.pipelines import parse_pipeline
    from xdsl.context import Context

    model, x, step = case
    module = import_onnx(model)
    (before,) = run_module(module, [x])
    for each in parse_pipeline("graph-fold-qdq"):
        each.apply(Context(), module)
    names = [op.name for op in module.walk()]
    assert "graph.conv2d_integer" in names or "graph.matmul_integer" in names, names
    (after,) = run_module(module, [x])
    assert np.abs(after - before).max() <= step * 1.001


# ---------------------------------------------------------------------------------------------
# graph-simplify: quantize(dequantize(q, s, z), s, z) is q
# ---------------------------------------------------------------------------------------------


_ROUND_TRIP = """
func.func @f(%q: tensor<256x{dtype}>) -> tensor<256x{dtype}> {{
  %s = graph.constant dense<{scale}> : tensor<f32>
  %z = graph.constant dense<{zero}> : tensor<{dtype}>
  %d = graph.dequantize %q, %s, %z
      : (tensor<256x{dtype}>, tensor<f32>, tensor<{dtype}>) -> tensor<256xf32>
  %r = graph.quantize %d, %s, %z
      : (tensor<256xf32>, tensor<f32>, tensor<{dtype}>) -> tensor<256x{dtype}>
  func.return %r : tensor<256x{dtype}>
}}
"""


@settings(max_examples=200, deadline=None)
@given(bits=st.integers(1, 0x7F7FFFFF), signed=st.booleans(), zero=st.integers(0, 255))
def test_quantize_of_dequantize_with_the_same_parameters_is_exact(bits: int, signed: bool,
                                                                   zero: int) -> None:
    """Every integer of the type, under any positive finite float32 scale (subnormal to
    huge, its bits drawn) and any zero point, comes back from the round trip unchanged — the
    claim `RemoveQuantizeRoundTrip` rests on — and graph-simplify removes the pair (unless
    255 s overflows, where it must stay)."""
    from xdsl.context import Context
    from xdsl.parser import Parser

    dtype = np.int8 if signed else np.uint8
    scale = np.array(bits, np.uint32).view(np.float32)
    zero_point = np.array(zero - 128 if signed else zero, dtype)
    q = np.arange(256).astype(np.int64).astype(dtype) if not signed else (
        np.arange(-128, 128).astype(dtype))
    finite = np.isfinite(np.float64(scale) * 255) and np.float64(scale) * 255 <= np.finfo(
        np.float32).max
    if finite:
        np.testing.assert_array_equal(quantize(dequantize(q, scale, zero_point), scale,
                                               zero_point), q)
    name = "i8" if signed else "ui8"
    text = _ROUND_TRIP.format(dtype=name, scale=repr(float(scale)), zero=int(zero_point))
    module = Parser(make_context(), text).parse_module()
    (before,) = run_module(module, [q])
    for each in parse_pipeline("graph-simplify"):
        each.apply(Context(), module)
    removed = not any(op.name == "graph.quantize" for op in module.walk())
    assert removed == finite
    (after,) = run_module(module, [q])
    np.testing.assert_array_equal(after, before)
