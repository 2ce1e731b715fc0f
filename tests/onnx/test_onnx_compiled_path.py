"""Regression tests of the compiled path (`dlc.compile` -> graph -> tensor_expr -> loop -> LLVM ->
JIT) on small ONNX models, one per kind of failure the node conformance cases showed, against
onnx's reference evaluator. Each compiles without the cache, in-process, in about a second.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from dlc.frontends.onnx import import_onnx
from dlc.pipelines import module_level
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dlc
from tests.onnx.models import model, tensor


def compiled_matches_reference(proto: onnx.ModelProto, *inputs: np.ndarray) -> list[np.ndarray]:
    """Compile `proto`, run it on `inputs` and check every output (dtype, shape, values) against
    onnx.reference; returns the outputs."""
    executable = dlc.compile(proto, cache=False, jobs=1)
    got = executable(*inputs)
    got = [got] if isinstance(got, np.ndarray) else list(got)
    want = ReferenceEvaluator(proto).run(None, {
        i.name: x for i, x in zip(proto.graph.input, inputs, strict=True)
    })
    assert len(got) == len(want)
    for value, expected in zip(got, want, strict=True):
        assert value.dtype == expected.dtype and value.shape == expected.shape
        if expected.dtype.kind in "biu":
            np.testing.assert_array_equal(value, expected)
        else:
            np.testing.assert_allclose(value, expected, rtol=1e-6, atol=1e-6)
    return got


def _unsigned(dtype: type[np.unsignedinteger], shape: Sequence[int], seed: int) -> np.ndarray:
    """Values with and without the top bit set (where signed and unsigned semantics differ)."""
    rng = np.random.default_rng(seed)
    bits = np.dtype(dtype).itemsize * 8
    low = rng.integers(1, 1 << min(bits - 1, 62), shape, dtype=np.uint64)
    top = np.uint64(1) << np.uint64(bits - 1)
    return np.where(rng.integers(0, 2, shape) == 1, low | top, low).astype(dtype)


def test_identity_and_zero_size_split_are_lowered_from_the_tensor_level() -> None:
    """A model whose function only returns its inputs has no graph op after import; it is
    still graph-level (tensors), so the copies into the outputs are made."""
    identity = model([helper.make_node("Identity", ["x"], ["y"])], [tensor("x", [2, 3])],
                     [tensor("y", [2, 3])])
    assert module_level(import_onnx(identity)) == "graph"
    compiled_matches_reference(identity, np.arange(6, dtype=np.float32).reshape(2, 3))
    split = model(
        [helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2)],
        [tensor("x", [0])], [tensor("a", [0]), tensor("b", [0])], opset=18,
    )
    compiled_matches_reference(split, np.zeros(0, np.float32))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_arithmetic_compare_and_cast(dtype: type[np.unsignedinteger]) -> None:
    """Unsigned tensors divide, compare, take max/min and convert as unsigned; NumPy uint
    arrays go in and come out."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [
        helper.make_node("Div", ["a", "b"], ["q"]),
        helper.make_node("Less", ["a", "b"], ["lt"]),
        helper.make_node("Max", ["a", "b"], ["hi"]),
        helper.make_node("Min", ["a", "b"], ["lo"]),
        helper.make_node("Cast", ["a"], ["f"], to=TensorProto.DOUBLE),
        helper.make_node("Sub", ["a", "b"], ["d"]),
    ]
    proto = model(nodes, [tensor("a", [3, 17], elem), tensor("b", [17], elem)], [
        tensor("q", [3, 17], elem), tensor("lt", [3, 17], TensorProto.BOOL),
        tensor("hi", [3, 17], elem), tensor("lo", [3, 17], elem),
        tensor("f", [3, 17], TensorProto.DOUBLE), tensor("d", [3, 17], elem),
    ])
    compiled_matches_reference(proto, _unsigned(dtype, [3, 17], 1), _unsigned(dtype, [17], 2))


def test_unsigned_topk_ranks_as_unsigned() -> None:
    proto = model(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
        [tensor("x", [3, 5], TensorProto.UINT64)],
        [tensor("v", [3, 2], TensorProto.UINT64), tensor("i", [3, 2], TensorProto.INT64)],
        {"k": np.array([2], np.int64)},
    )
    compiled_matches_reference(proto, _unsigned(np.uint64, [3, 5], 3))


def test_bool_outputs_of_vectorized_compares() -> None:
    """Less/Equal outputs are NumPy bools (a byte each, true is 1) also where the compare is
    vectorized (37 lanes: vectors and a tail), and feed Where."""
    nodes = [
        helper.make_node("Less", ["x", "y"], ["lt"]),
        helper.make_node("Equal", ["x", "y"], ["eq"]),
        helper.make_node("Where", ["lt", "x", "y"], ["w"]),
    ]
    proto = model(nodes, [tensor("x", [2, 37]), tensor("y", [2, 37])], [
        tensor("lt", [2, 37], TensorProto.BOOL), tensor("eq", [2, 37], TensorProto.BOOL),
        tensor("w", [2, 37]),
    ])
    rng = np.random.default_rng(4)
    x = rng.integers(-3, 3, (2, 37)).astype(np.float32)
    y = rng.integers(-3, 3, (2, 37)).astype(np.float32)
    lt, eq, _ = compiled_matches_reference(proto, x, y)
    assert set(np.unique(lt.view(np.uint8))) <= {0, 1}
    assert set(np.unique(eq.view(np.uint8))) <= {0, 1}


def test_gemm_with_a_scalar_bias() -> None:
    """A rank-0 C operand (read with no index) inside the default schedule's reduction rule."""
    proto = model(
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0)],
        [tensor("a", [3, 5]), tensor("b", [5, 4]), tensor("c", [])], [tensor("y", [3, 4])],
    )
    rng = np.random.default_rng(5)
    compiled_matches_reference(proto, rng.standard_normal((3, 5), dtype=np.float32),
                               rng.standard_normal((5, 4), dtype=np.float32),
                               np.array(3.0, np.float32))


def test_nearest_resize_with_vectorized_index_arithmetic() -> None:
    proto = model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
        [tensor("x", [1, 1, 2, 3])], [tensor("y", [1, 1, 4, 9])],
        {"scales": np.array([1, 1, 2, 3], np.float32)},
    )
    compiled_matches_reference(proto, np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))


def test_cast_double_to_half() -> None:
    proto = model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)],
                  [tensor("x", [5], TensorProto.DOUBLE)], [tensor("y", [5], TensorProto.FLOAT16)])
    x = np.array([0.1, 1 + 2.0**-11 + 2.0**-40, -65504.0, 1e-7, 3.0], np.float64)
    compiled_matches_reference(proto, x)


@pytest.mark.parametrize("op_type", ["Ceil", "Floor", "Round"])
def test_ceil_floor_round(op_type: str) -> None:
    """Ceil, Floor and Round (halves to even) through the compiled path, on halves of both
    parities and signs, integral values, infinities and NaN."""
    x = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.0, -3.0],
                  [0.49999997, -0.7, 1e20, np.inf, -np.inf, np.nan, 7.25, -7.75]], np.float32)
    proto = model([helper.make_node(op_type, ["x"], ["y"])], [tensor("x", [2, 8])],
                  [tensor("y", [2, 8])])
    (got,) = compiled_matches_reference(proto, x)
    np.testing.assert_array_equal(got, {"Ceil": np.ceil, "Floor": np.floor,
                                        "Round": np.rint}[op_type](x))


@pytest.mark.parametrize(("attrs", "shape"), [
    ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, [2, 3, 6, 7]),
    ({"kernel_shape": [2, 3], "strides": [2, 2], "storage_order": 1}, [1, 2, 7, 6]),
    ({"kernel_shape": [2, 2], "dilations": [2, 1], "pads": [0, 1, 1, 0], "ceil_mode": 1,
      "strides": [2, 2]}, [1, 2, 7, 7]),
    ({"kernel_shape": [3], "strides": [2], "pads": [1, 1]}, [2, 2, 9]),
])
def test_maxpool_indices_match_onnxruntime(attrs: dict[str, object], shape: list[int]) -> None:
    """MaxPool's Indices (flat NCHW index of the first max in the window's row-major order,
    or with storage_order 1 the spatial axes column-major), on inputs with many ties (small
    integers as floats) and with padding, dilations and ceil mode, against ONNX Runtime."""
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(8).integers(-3, 3, shape).astype(np.float32)
    proto = model([helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)],  # type: ignore
                  [tensor("x", shape)], [tensor("y", [None] * len(shape)),
                                         tensor("i", [None] * len(shape), TensorProto.INT64)],
                  opset=12)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})
    got = dlc.compile(proto, cache=False, jobs=1)(x)
    assert got[1].dtype == np.int64
    for value, expected in zip(got, want, strict=True):
        np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize(("attrs", "dtype", "message"), [
    ({"kernel_shape": [2, 2], "storage_order": 2}, TensorProto.FLOAT,
     r"expected storage_order 0 or 1, found 2"),
    ({"kernel_shape": [2, 2]}, TensorProto.INT64,
     r"expected a float or at most 32-bit integer input, found tensor<1x2x4x4xi64>"),
])
def test_maxpool_bad_input_is_an_error_naming_the_node(attrs: dict[str, object], dtype: int,
                                                      message: str) -> None:
    from dlc.frontends.onnx import OnnxImportError

    outputs = [tensor("y", [None] * 4, dtype)]
    if "storage_order" in attrs:
        outputs.append(tensor("i", [None] * 4, TensorProto.INT64))
    proto = model([helper.make_node("MaxPool", ["x"], [o.name for o in outputs], name="pool",
                                    **attrs)],  # type: ignore[arg-type]
                  [tensor("x", [1, 2, 4, 4], dtype)], outputs, opset=12)
    with pytest.raises(OnnxImportError, match=r"node 'pool' \(MaxPool, opset 12\): " + message):
        import_onnx(proto)

