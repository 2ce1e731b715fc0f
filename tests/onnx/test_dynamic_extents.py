"""NonZero and NonMaxSuppression: results of a data-dependent size, padded to a static bound
and trimmed by the runtimes (dialects/graph/extents.py), against ONNX's reference evaluator.

Each model is compiled once and run on many random inputs (hypothesis): NonZero at every
sparsity, NonMaxSuppression with overlapping boxes, tied scores and runtime thresholds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.dialects.graph.interpreter import run_module as run_graph
from dlc.frontends.onnx import OnnxImportError, import_onnx
from dlc.runtime.metadata import ArgumentSpec, FunctionSignature, decode_metadata, encode_metadata
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dlc
from tests.onnx.models import model, tensor

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def nonzero_model(shape: tuple[int, ...], elem: int = TensorProto.FLOAT,
                  transpose: bool = False) -> onnx.ModelProto:
    nodes = [helper.make_node("NonZero", ["x"], ["i"], name="nz")]
    out = "i"
    if transpose:  # padding-insensitive consumers: the extent follows them to the output
        nodes += [helper.make_node("Transpose", ["i"], ["t"]),
                  helper.make_node("Cast", ["t"], ["y"], to=TensorProto.INT32)]
        out = "y"
    return model(nodes, [tensor("x", list(shape), elem)],
                 [tensor(out, ["a", "b"], TensorProto.INT32 if transpose else TensorProto.INT64)])


def nms_model(center_point_box: int, batches: int = 2, classes: int = 2,
              boxes: int = 8) -> onnx.ModelProto:
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"],
                            ["selected"], center_point_box=center_point_box, name="nms")
    return model([node], [tensor("boxes", [batches, boxes, 4]),
                          tensor("scores", [batches, classes, boxes]),
                          tensor("max", [1], TensorProto.INT64), tensor("iou", [1]),
                          tensor("score", [1])],
                 [tensor("selected", ["n", 3], TensorProto.INT64)])


@pytest.fixture(scope="module")
def nonzero_float() -> tuple[onnx.ModelProto, object]:
    proto = nonzero_model((3, 5))
    return proto, dlc.compile(proto, cache=False, jobs=1)


@pytest.fixture(scope="module")
def nonzero_transposed_int() -> tuple[onnx.ModelProto, object]:
    proto = nonzero_model((2, 3, 2), TensorProto.INT32, transpose=True)
    return proto, dlc.compile(proto, cache=False, jobs=1)


@pytest.fixture(scope="module", params=[0, 1], ids=["corners", "centers"])
def nms(request: pytest.FixtureRequest) -> tuple[onnx.ModelProto, object]:
    proto = nms_model(request.param)
    return proto, dlc.compile(proto, cache=False, jobs=1)


def check(proto: onnx.ModelProto, compiled: object, *inputs: np.ndarray) -> None:
    want = ReferenceEvaluator(proto).run(None, dict(zip(
        [i.name for i in proto.graph.input], inputs, strict=True)))[0]
    got = compiled(*inputs)  # type: ignore[operator]
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_array_equal(got, want)
    interpreted = run_graph(import_onnx(proto), list(inputs))[0]
    np.testing.assert_array_equal(interpreted, want)


@SETTINGS
@given(st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_nonzero_at_any_sparsity(nonzero_float: tuple[onnx.ModelProto, object],
                                 density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    x[rng.random(x.shape) >= density] = 0
    x[rng.random(x.shape) < 0.1] = np.nan  # NaN is nonzero
    check(*nonzero_float, x)


@SETTINGS
@given(st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_nonzero_transposed_and_cast(nonzero_transposed_int: tuple[onnx.ModelProto, object],
                                     density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, (2, 3, 2)).astype(np.int32)
    x[rng.random(x.shape) >= density] = 0
    check(*nonzero_transposed_int, x)


def random_boxes(rng: np.random.Generator, batches: int, count: int, centers: bool
                 ) -> np.ndarray:
    """Boxes crowded into a small square, so that many overlap; some are empty or flipped."""
    if centers:
        xy = rng.uniform(0, 3, (batches, count, 2))
        wh = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], (batches, count, 2))
        return np.concatenate([xy, wh], axis=-1).astype(np.float32)
    corners = rng.choice(np.arange(0, 4, 0.5), (batches, count, 4))
    return corners.astype(np.float32)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(0, 10), st.sampled_from([0.0, 0.2, 0.5, 0.9]),
       st.sampled_from([-np.inf, 0.0, 0.3, 0.6]))
def test_nms_against_reference(nms: tuple[onnx.ModelProto, object], seed: int, limit: int,
                               iou: float, score: float) -> None:
    proto, compiled = nms
    center = proto.graph.node[0].attribute[0].i
    rng = np.random.default_rng(seed)
    boxes = random_boxes(rng, 2, 8, bool(center))
    scores = rng.choice([0.1, 0.3, 0.5, 0.7, 0.9], (2, 2, 8)).astype(np.float32)  # ties
    check(proto, compiled, boxes, scores, np.array([limit], np.int64),
          np.array([iou], np.float32), np.array([score], np.float32))


def test_nms_runtime_limits_need_no_recompile(nms: tuple[onnx.ModelProto, object]) -> None:
    """max_output_boxes_per_class and the thresholds given at run time: the executable is
    compiled for the bound of all boxes, so new values do not specialize it."""
    proto, compiled = nms
    assert not getattr(compiled, "value_inputs", ())
    assert len(compiled.output_names) == 1  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    boxes, scores = random_boxes(rng, 2, 8, False), rng.random((2, 2, 8)).astype(np.float32)
    sizes = set()
    for limit in (0, 1, 3, 8, 100):
        got = compiled(boxes, scores, np.array([limit], np.int64),  # type: ignore[operator]
                       np.array([0.0], np.float32), np.array([0.0], np.float32))
        sizes.add(got.shape[0])
        check(proto, compiled, boxes, scores, np.array([limit], np.int64),
              np.array([0.0], np.float32), np.array([0.0], np.float32))
    assert len(sizes) > 2


def test_nms_constant_limit_bounds_the_result() -> None:
    """A constant max_output_boxes_per_class bounds the padded result: 2 per class."""
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou"],
                            ["selected"])
    proto = model([node], [tensor("boxes", [1, 5, 4]), tensor("scores", [1, 3, 5])],
                  [tensor("selected", ["n", 3], TensorProto.INT64)],
                  {"max": np.array([2], np.int64), "iou": np.array([0.3], np.float32)})
    module = import_onnx(proto)
    assert "tensor<6x3xi64>" in str(module)
    rng = np.random.default_rng(1)
    boxes, scores = random_boxes(rng, 1, 5, False), rng.random((1, 3, 5)).astype(np.float32)
    compiled = dlc.compile(proto, cache=False, jobs=1)
    check(proto, compiled, boxes, scores)


def test_constant_nonzero_is_folded_to_its_exact_shape() -> None:
    proto = model([helper.make_node("NonZero", ["c"], ["i"]),
                   helper.make_node("Add", ["i", "x"], ["y"])],
                  [tensor("x", [2, 1], TensorProto.INT64)],
                  [tensor("y", [2, 2], TensorProto.INT64)],
                  {"c": np.array([[0, 3], [4, 0]], np.float32)})
    module = import_onnx(proto)
    assert "graph.nonzero" not in str(module) and "tensor<2x2xi64>" in str(module)


def test_reduction_of_padding_is_an_import_error() -> None:
    proto = model([helper.make_node("NonZero", ["x"], ["i"], name="nz"),
                   helper.make_node("ReduceSum", ["i"], ["s"], keepdims=0, name="total")],
                  [tensor("x", [3, 4])], [tensor("s", [], TensorProto.INT64)], opset=11)
    with pytest.raises(OnnxImportError, match=r"'graph.reduce' op \(node 'total'\) consumes "
                       r"the data-dependent extent of 'graph.nonzero' op \(node 'nz'\)"):
        import_onnx(proto)


def test_shape_of_padding_is_an_import_error() -> None:
    proto = model([helper.make_node("NonZero", ["x"], ["i"], name="nz"),
                   helper.make_node("Shape", ["i"], ["s"], name="shape")],
                  [tensor("x", [3, 4])], [tensor("s", [2], TensorProto.INT64)])
    with pytest.raises(OnnxImportError, match=r"node 'shape' \(Shape.*consumes the "
                       r"data-dependent extent of 'graph.nonzero' op \(node 'nz'\) along axis 1"):
        import_onnx(proto)


def test_metadata_carries_valid_extents() -> None:
    signature = FunctionSignature(
        "main", (ArgumentSpec("x", (3,), "float32"), ArgumentSpec("i", (1, 3), "int64"),
                 ArgumentSpec("n", (), "int64")), 2, ((0, 1, 1),))
    decoded = decode_metadata(encode_metadata([signature]))["main"]
    assert decoded == signature and decoded.count_outputs == frozenset({1})
    plain = FunctionSignature("f", (ArgumentSpec("x", (3,), "float32"),), 0)
    assert "valid_extents" not in encode_metadata([plain])


def test_exported_library_trims_and_declares_the_count(tmp_path: Path) -> None:
    """A library carries the valid extents in its metadata: `dlc.load` trims as the JIT does;
    its C header declares the padded output and the count beside it (`<output>_count`)."""
    proto = nonzero_model((3, 4))
    compiled = dlc.compile(proto, cache=False, jobs=1)
    path = compiled.export(tmp_path / "nz.so", c_prefix="nz",  # type: ignore[attr-defined]
                           c_header=tmp_path / "nz.h")
    loaded = dlc.load(path)
    x = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 0, 4]], np.float32)
    np.testing.assert_array_equal(loaded(x), np.array(np.nonzero(x)))
    assert loaded.output_names == ("i",)
    header = (tmp_path / "nz.h").read_text()
    assert "NZ_OUTPUT_I_SHAPE" in header and "NZ_OUTPUT_I_COUNT_SHAPE" in header


@pytest.mark.parametrize("shape", [(1,), (17,), (2, 0), (2, 1, 3, 2)])
def test_nonzero_shapes(shape: tuple[int, ...]) -> None:
    """Binary searches of 1 to 6 steps, and no elements at all."""
    proto = nonzero_model(shape)
    compiled = dlc.compile(proto, cache=False, jobs=1)
    rng = np.random.default_rng(len(shape))
    for density in (0.0, 0.5, 1.0):
        x = rng.standard_normal(shape).astype(np.float32)
        x[rng.random(shape) >= density] = 0
        check(proto, compiled, x)


def test_nms_with_nan_scores_selects_them_last() -> None:
    """NaN scores rank below every number (and the ranks stay a permutation): the compiled
    code agrees with the graph interpreter (ONNX's reference leaves their order to Python's
    sort of unordered values)."""
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou"], ["s"])
    proto = model([node], [tensor("boxes", [1, 4, 4]), tensor("scores", [1, 1, 4])],
                  [tensor("s", ["n", 3], TensorProto.INT64)],
                  {"max": np.array([4], np.int64), "iou": np.array([0.5], np.float32)})
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5], [6, 6, 7, 7]]], np.float32)
    scores = np.array([[[np.nan, 0.5, np.nan, 0.9]]], np.float32)
    want = np.array([[0, 0, 3], [0, 0, 1], [0, 0, 0], [0, 0, 2]], np.int64)
    np.testing.assert_array_equal(run_graph(import_onnx(proto), [boxes, scores])[0], want)
    np.testing.assert_array_equal(dlc.compile(proto, cache=False, jobs=1)(boxes, scores), want)


CHAIN_OPS = ("Transpose", "Cast", "AddColumn", "Unsqueeze", "Neg", "Gather")


def chain_model(steps: list[str]) -> onnx.ModelProto:
    """NonZero of a 3×4 input, then `steps`, each an op that ignores the padding."""
    nodes = [helper.make_node("NonZero", ["x"], ["v0"])]
    constants: dict[str, np.ndarray] = {}
    rank, elem = 2, TensorProto.INT64
    for k, step in enumerate(steps):
        src, dst = f"v{k}", f"v{k + 1}"
        if step == "Transpose":
            nodes.append(helper.make_node("Transpose", [src], [dst],
                                          perm=list(reversed(range(rank)))))
        elif step == "Cast":
            elem = TensorProto.INT32 if elem == TensorProto.INT64 else TensorProto.INT64
            nodes.append(helper.make_node("Cast", [src], [dst], to=elem))
        elif step == "AddColumn":  # a constant broadcast along every axis but the last
            constants[f"c{k}"] = np.array([1], dtype=np.int64 if elem == TensorProto.INT64
                                          else np.int32)
            nodes.append(helper.make_node("Add", [src, f"c{k}"], [dst]))
        elif step == "Unsqueeze":
            constants[f"a{k}"] = np.array([0], np.int64)
            nodes.append(helper.make_node("Unsqueeze", [src, f"a{k}"], [dst]))
            rank += 1
        elif step == "Neg":
            nodes.append(helper.make_node("Neg", [src], [dst]))
        else:  # Gather from a table at the indices (in [-20, 20): negative ones wrap)
            constants[f"t{k}"] = (np.arange(64, dtype=np.int64) * 5 % 16).reshape(64, 1)
            nodes.append(helper.make_node("Gather", [f"t{k}", src], [dst], axis=0))
            rank += 1
            elem = TensorProto.INT64
    out = f"v{len(steps)}"
    return model(nodes, [tensor("x", [3, 4])],
                 [tensor(out, [f"d{i}" for i in range(rank)], elem)], constants)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(CHAIN_OPS), max_size=4), st.integers(0, 2**32 - 1))
@example(["Gather", "AddColumn", "Gather", "Transpose"], 1)
@example(["Neg", "Cast", "Gather", "Unsqueeze"], 2)
def test_extents_follow_padding_insensitive_ops(steps: list[str], seed: int) -> None:
    """graph-mark-valid-extents' property: whatever chain of padding-insensitive ops follows
    NonZero, the marked and trimmed result is ONNX's; marking again changes nothing."""
    from dlc.rewrites.graph_mark_valid_extents import GraphMarkValidExtentsPass
    from xdsl.context import Context

    proto = chain_model(steps)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    x[rng.random((3, 4)) < 0.5] = 0
    want = ReferenceEvaluator(proto).run(None, {"x": x})[0]
    module = import_onnx(proto)
    text = str(module)
    GraphMarkValidExtentsPass().apply(Context(), module)
    assert str(module) == text
    got = run_graph(module, [x])[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_nms_without_max_output_selects_nothing() -> None:
    """An absent max_output_boxes_per_class is 0 (ONNX): a bound of 0, an empty result."""
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["s"])
    proto = model([node], [tensor("boxes", [1, 3, 4]), tensor("scores", [1, 2, 3])],
                  [tensor("s", ["n", 3], TensorProto.INT64)])
    boxes = np.random.default_rng(0).random((1, 3, 4)).astype(np.float32)
    scores = np.ones((1, 2, 3), np.float32)
    assert run_graph(import_onnx(proto), [boxes, scores])[0].shape == (0, 3)
    got = dlc.compile(proto, cache=False, jobs=1)(boxes, scores)
    assert got.shape == (0, 3) and got.dtype == np.int64


@pytest.fixture(scope="module")
def masked_select() -> tuple[onnx.ModelProto, object]:
    """`x[x > 0]` as torch exports it: NonZero of the mask, transposed to one index tuple per
    row, then GatherND: the valid extent follows the tuples to the gathered values."""
    nodes = [helper.make_node("Greater", ["x", "zero"], ["mask"]),
             helper.make_node("NonZero", ["mask"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["tuples"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "tuples"], ["y"])]
    proto = model(nodes, [tensor("x", [4, 6])], [tensor("y", ["n"])],
                  {"zero": np.array(0, np.float32)})
    return proto, dlc.compile(proto, cache=False, jobs=1)


@SETTINGS
@given(st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_masked_select_through_gather_nd(masked_select: tuple[onnx.ModelProto, object],
                                         density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.abs(rng.standard_normal((4, 6))).astype(np.float32) + 0.5
    x[rng.random(x.shape) >= density] *= -1
    check(*masked_select, x)
