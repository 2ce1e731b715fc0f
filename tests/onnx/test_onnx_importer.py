"""Unit tests of the ONNX importer: the registry, the IR it builds, constants, folding,
locations, and converter numerics against onnx's reference evaluator."""

from __future__ import annotations

import io
import time
import warnings

import numpy as np
import onnx
import pytest
from dlc.dialects.graph import ConstantOp
from dlc.dialects.graph.interpreter import run_module
from dlc.frontends.onnx import (
    OnnxImportError,
    OnnxOpConverter,
    ShapeHintWarning,
    import_onnx,
    register,
    supported_ops,
)
from dlc.frontends.onnx.registry import lookup
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import ModuleOp, NameLoc
from xdsl.dialects.func import FuncOp
from xdsl.printer import Printer

from tests.onnx.harness import FAMILIES
from tests.onnx.models import conv_block, model, shape_chain, tensor


def graph_ops(module: ModuleOp) -> list[str]:
    """The names of the ops in @main, in order."""
    main = next(op for op in module.ops if isinstance(op, FuncOp))
    return [op.name for op in main.body.block.ops]


def run_both(proto: onnx.ModelProto, *inputs: np.ndarray) -> tuple[list, list]:
    """(dlc's outputs through the graph interpreter, onnx's reference outputs)."""
    ours = run_module(import_onnx(proto), list(inputs))
    names = [i.name for i in proto.graph.input]
    reference = ReferenceEvaluator(proto).run(None, dict(zip(names, inputs, strict=True)))
    return ours, reference


# ---------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------


def test_every_listed_family_has_a_converter() -> None:
    assert set(FAMILIES) <= set(supported_ops())


def test_newest_method_not_above_the_opset_is_used() -> None:
    softmax = lookup("Softmax")
    assert softmax is not None
    assert softmax.versions() == [1, 13]
    assert softmax.impl_for(12) == softmax._impl_v1
    assert softmax.impl_for(13) == softmax._impl_v13
    assert softmax.impl_for(28) == softmax._impl_v13
    assert lookup("Erf") is not None and lookup("Erf").impl_for(8) is None  # type: ignore[union-attr]
    assert lookup("ai.onnx.ml.LinearRegressor") is None


def test_registering_an_op_twice_fails() -> None:
    with pytest.raises(ValueError, match="two converters registered for ONNX op 'Relu'"):
        @register("Relu")
        class AnotherRelu(OnnxOpConverter):
            pass


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_semantics_follow_the_opset() -> None:
    # Before opset 13 Softmax normalizes over all axes from `axis` on (the input coerced to 2-D),
    # from 13 over `axis` alone. (onnx's ReferenceEvaluator applies the new rule to both; ONNX
    # Runtime agrees with this test.)
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    expected = {11: _softmax(x.reshape(2, 12), 1).reshape(2, 3, 4), 13: _softmax(x, 1)}
    for opset, want in expected.items():
        proto = model([helper.make_node("Softmax", ["x"], ["y"], axis=1)],
                      [tensor("x", [2, 3, 4])], [tensor("y", [2, 3, 4])], opset=opset)
        got = run_module(import_onnx(proto), [x])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# The IR
# ---------------------------------------------------------------------------------------------


def test_conv_block_imports_as_graph_ops() -> None:
    module = import_onnx(conv_block())
    assert graph_ops(module) == [
        "graph.constant", "graph.constant", "graph.conv2d", "graph.relu", "graph.max_pool2d",
        "graph.flatten", "graph.constant", "graph.transpose", "graph.matmul", "graph.constant",
        "graph.add", "graph.softmax", "func.return",
    ]
    main = next(op for op in module.ops if isinstance(op, FuncOp))
    assert main.sym_name.data == "main"
    assert main.args[0].name_hint == "x"
    assert main.arg_attrs is not None and "onnx.name" in str(main.arg_attrs)


def test_conv_block_matches_the_reference() -> None:
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    ours, reference = run_both(conv_block(), x)
    np.testing.assert_allclose(ours[0], reference[0], rtol=1e-4, atol=1e-6)


def test_node_names_are_op_locations() -> None:
    module = import_onnx(conv_block())
    conv = next(op for op in module.walk() if op.name == "graph.conv2d")
    assert isinstance(conv.location, NameLoc) and conv.location.desc.data == "conv1"
    text = io.StringIO()
    Printer(stream=text, print_debuginfo=True).print_op(module)
    assert 'loc("relu1")' in text.getvalue()


def test_shape_computations_are_folded_at_import() -> None:
    module = import_onnx(shape_chain())
    assert graph_ops(module) == ["graph.reshape", "func.return"]
    assert "array<i64: 2, 12>" in str(module)


def test_initializers_keep_their_bytes() -> None:
    weights = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
    proto = model([helper.make_node("Add", ["x", "w"], ["y"])], [tensor("x", [2, 3, 4])],
                  [tensor("y", [2, 3, 4])], {"w": weights})
    constant = next(op for op in import_onnx(proto).walk() if isinstance(op, ConstantOp))
    assert constant.to_array().tobytes() == weights.tobytes()


def test_constant_of_shape_weights_are_splats() -> None:
    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [0.25])
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["w"], value=value),
             helper.make_node("Mul", ["x", "w"], ["y"])]
    proto = model(nodes, [tensor("x", [256, 256])], [tensor("y", [256, 256])],
                  {"s": np.array([256, 256], np.int64)})
    constant = next(op for op in import_onnx(proto).walk() if isinstance(op, ConstantOp))
    assert len(constant.value.data.data) == 4  # one f32, not 65536
    np.testing.assert_array_equal(constant.to_array(), np.full((256, 256), 0.25, np.float32))


def test_large_initializers_import_quickly() -> None:
    weights = np.random.default_rng(3).standard_normal((2048, 2048)).astype(np.float32)
    proto = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [tensor("x", [1, 2048])],
                  [tensor("y", [1, 2048])], {"w": weights})  # 16 MB
    start = time.perf_counter()
    module = import_onnx(proto)
    text = io.StringIO()
    Printer(stream=text).print_op(module)
    assert time.perf_counter() - start < 3.0
    assert '"0x' in text.getvalue()  # hex, printed straight from the bytes


def test_input_shapes_fix_dynamic_dims() -> None:
    module = import_onnx(conv_block(batch="N"), {"x": (2, 3, 8, 8)})
    assert "tensor<2x3x8x8xf32>" in str(module) and "tensor<2x10xf32>" in str(module)


def test_initializer_listed_as_input_is_a_constant() -> None:
    proto = model([helper.make_node("Add", ["x", "w"], ["y"])],
                  [tensor("x", [3]), tensor("w", [3])], [tensor("y", [3])],
                  {"w": np.ones(3, np.float32)})
    main = next(op for op in import_onnx(proto).ops if isinstance(op, FuncOp))
    assert len(main.args) == 1


# ---------------------------------------------------------------------------------------------
# Converters against the reference evaluator
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_slice_matches_the_reference(shape: list[int], data: st.DataObject) -> None:
    rank = len(shape)
    axes = data.draw(st.permutations(range(rank)).map(lambda p: list(p)[: max(1, rank - 1)]))
    bound = st.integers(-8, 8)
    starts = [data.draw(bound) for _ in axes]
    ends = [data.draw(bound) for _ in axes]
    steps = [data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in axes]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    arrays = {"starts": np.array(starts, np.int64), "ends": np.array(ends, np.int64),
              "axes": np.array(axes, np.int64), "steps": np.array(steps, np.int64)}
    # ONNX Runtime, which follows the spec's clamping (a negative step's start below -dim
    # clamps to 0); the reference evaluator slices with NumPy's rules and returns nothing there.
    import onnxruntime

    reference = model([helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                      [tensor("x", shape)], [tensor("y", None)], arrays)
    session = onnxruntime.InferenceSession(reference.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    proto = model([helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                  [tensor("x", shape)], [tensor("y", list(want.shape))], arrays)
    np.testing.assert_array_equal(run_module(import_onnx(proto), [x])[0], want)


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from([
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("i,i->", [(5,), (5,)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ii->i", [(4, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 4)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]), ("bik,bkj", [(2, 3, 4), (2, 4, 5)]),
    ("i,j->ij", [(3,), (4,)]), ("bii->b", [(2, 3, 3)]),
]), seed=st.integers(0, 2**16))
def test_einsum_matches_numpy(case: tuple[str, list[tuple[int, ...]]], seed: int) -> None:
    equation, shapes = case
    rng = np.random.default_rng(seed)
    operands = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(equation, *operands)
    names = [f"x{i}" for i in range(len(shapes))]
    proto = model([helper.make_node("Einsum", names, ["y"], equation=equation)],
                  [tensor(n, s) for n, s in zip(names, shapes, strict=True)],
                  [tensor("y", list(want.shape))])
    got = run_module(import_onnx(proto), operands)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("equation", "shapes"), [
    ("BGHID,BGHJD->BGHIJ", [(1, 2, 2, 3, 4), (1, 2, 2, 5, 4)]),  # MaxViT's, as torch writes it
    ("Ab,bA", [(2, 3), (3, 2)]),  # implicit: labels of either case, in ASCII order
    ("...Zi,...iz->...Zz", [(2, 3, 4), (4, 5)]),  # beside an ellipsis
])
def test_einsum_takes_upper_case_labels(equation: str, shapes: list[tuple[int, ...]]) -> None:
    test_einsum_matches_numpy.hypothesis.inner_test((equation, shapes), 0)  # type: ignore[attr-defined]


@pytest.mark.parametrize("node,inputs", [
    (helper.make_node("LeakyRelu", ["x"], ["y"], alpha=1.5), [(2, 5)]),
    (helper.make_node("PRelu", ["x", "s"], ["y"]), [(2, 3, 4, 5), (3, 1, 1)]),
    (helper.make_node("LRN", ["x"], ["y"], size=3, alpha=0.1, beta=0.6, bias=2.0),
     [(1, 5, 3, 3)]),
    (helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3),
     [(2, 3, 4, 5), (3,), (3,)]),
    (helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1),
     [(4, 3), (4, 5), (5,)]),
    (helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 0, 0, 1],
                      output_padding=[1, 1], group=2), [(1, 4, 3, 3), (4, 1, 3, 3)]),
    (helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 3, 2], pads=[1] * 6,
                      dilations=[2, 1, 2], ceil_mode=1), [(1, 2, 6, 5, 7)]),
    (helper.make_node("Tile", ["x", "r"], ["y"]), [(2, 3)]),
])
def test_composite_converters_match_onnxruntime(node: onnx.NodeProto,
                                                  inputs: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(4)
    names = [n for n in node.input]
    arrays = {n: rng.standard_normal(s).astype(np.float32)
              for n, s in zip(names, inputs, strict=False)}
    constants = {"r": np.array([2, 3], np.int64)} if "r" in names else {}
    # ONNX Runtime is the oracle here: onnx's ReferenceEvaluator gets LRN wrong (it loops over
    # the batch instead of the channels).
    ort = pytest.importorskip("onnxruntime")
    spec = model([node], [tensor(n, a.shape) for n, a in arrays.items()], [tensor("y", None)],
                 constants, opset=19)
    session = ort.InferenceSession(spec.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, arrays)[0]
    proto = model([node], [tensor(n, a.shape) for n, a in arrays.items()],
                  [tensor("y", list(want.shape))], constants, opset=19)
    got = run_module(import_onnx(proto), list(arrays.values()))[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis,index_shape", [(0, (2, 3, 4)), (1, (3, 2, 4)), (-1, (3, 3, 6))])
@pytest.mark.parametrize("constant", [True, False])
def test_gather_elements_matches_onnxruntime(axis: int, index_shape: tuple[int, ...],
                                             constant: bool) -> None:
    """GatherElements with constant indices (an import-time linear index) and with int32
    indices as an input (computed in the graph), negative ones included."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    dim = x.shape[axis]
    indices = rng.integers(-dim, dim, index_shape).astype(np.int32)
    ort = pytest.importorskip("onnxruntime")
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)
    inputs = [tensor("x", x.shape)] + ([] if constant else
                                       [tensor("i", index_shape, TensorProto.INT32)])
    proto = model([node], inputs, [tensor("y", list(index_shape))],
                  {"i": indices} if constant else {})
    feeds = {"x": x} if constant else {"x": x, "i": indices}
    want = ort.InferenceSession(proto.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = run_module(import_onnx(proto), list(feeds.values()))[0]
    np.testing.assert_array_equal(got, want)


def test_gather_elements_rejects_constant_indices_out_of_range() -> None:
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], name="pick", axis=1)
    proto = model([node], [tensor("x", (2, 3))], [tensor("y", (2, 1))],
                  {"i": np.array([[3], [0]], np.int64)})
    with pytest.raises(OnnxImportError, match=r"pick.*expected indices in \[-3, 3\) along axis 1"):
        import_onnx(proto)


def test_declared_output_shape_is_a_hint() -> None:
    """A stale declared shape (3x2 where Relu makes 2x3) is a warning naming the producer, and
    the inferred shape is used; unknown dims (-1, dim_param) match silently."""
    proto = model([helper.make_node("Relu", ["x"], ["y"], name="act")], [tensor("x", [2, 3])],
                  [tensor("y", [3, 2])])
    with pytest.warns(ShapeHintWarning,
                      match=r"graph output 'y' is declared with shape 3x2, but node 'act' "
                            r"\(Relu\) produces tensor<2x3xf32>"):
        module = import_onnx(proto)
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(run_module(module, [x])[0], np.maximum(x, 0))
    for dims in ([-1, 3], ["n", 3], [2, -1]):
        proto = model([helper.make_node("Relu", ["x"], ["y"], name="act")],
                      [tensor("x", [2, 3])], [tensor("y", dims)])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            import_onnx(proto)


def test_shapeless_graph_values_import() -> None:
    """Graph inputs and outputs whose type has no shape at all (unknown rank: valid ONNX, which
    ONNX Runtime runs and `onnx.checker` rejects) import: an output's shape is inferred, an
    input's is given (here by `input_shapes`); the rest of the model is still checked."""
    relu = helper.make_node("Relu", ["x"], ["y"], name="act")
    shapeless_output = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    proto = model([relu], [tensor("x", [2, 3])], [shapeless_output])
    with pytest.raises(onnx.checker.ValidationError, match="'shape' of 'type' is required"):
        onnx.checker.check_model(proto)
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = import_onnx(proto)
    np.testing.assert_array_equal(run_module(module, [x])[0], np.maximum(x, 0))
    shapeless_input = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
    proto = model([relu], [shapeless_input], [shapeless_output])
    module = import_onnx(proto, input_shapes={"x": [2, 3]})
    np.testing.assert_array_equal(run_module(module, [x])[0], np.maximum(x, 0))
    broken = model([helper.make_node("Relu", ["x"], ["y"], name="act", alpha=1.0)],
                   [shapeless_input], [shapeless_output])
    with pytest.raises(OnnxImportError, match="invalid ONNX model.*alpha"):
        import_onnx(broken, input_shapes={"x": [2, 3]})


def test_output_element_type_mismatch_names_the_producer() -> None:
    proto = model([helper.make_node("Relu", ["x"], ["y"], name="act")], [tensor("x", [2, 3])],
                  [helper.make_tensor_value_info("y", TensorProto.INT64, [2, 3])])
    with pytest.raises(OnnxImportError,
                       match=r"graph output 'y' is declared with element type INT64, but node "
                             r"'act' \(Relu\) produces tensor<2x3xf32>"):
        import_onnx(proto)


def test_unsupported_optional_output_is_named_when_used(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """A converter that gives fewer values than the node's used outputs (here MaxPool made to
    give its first output only: every converter now gives all outputs ONNX defines)."""
    from dlc.frontends.onnx.pool import MaxPool

    monkeypatch.setattr(MaxPool, "_impl_v1", classmethod(lambda cls, node: [node.input(0)]))
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "idx"], name="pool", kernel_shape=[2, 2]),
             helper.make_node("Identity", ["idx"], ["z"], name="use")]
    proto = model(nodes, [tensor("x", [1, 1, 4, 4])],
                  [tensor("z", [1, 1, 3, 3], TensorProto.INT64)])
    with pytest.raises(OnnxImportError, match=r"output 1 \('idx'\) of node 'pool' \(MaxPool\) "
                                              r"is not supported by dlc"):
        import_onnx(proto)
