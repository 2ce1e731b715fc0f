"""ONNX Mod (`graph.mod`), ScatterND of constants (folded at import) and the boolean And, Or,
Xor and Not (`graph.min` / `graph.max` on `i1`, `graph.compare ne` / `eq`): onnx's own node
cases through the compiled path. Mod cases (both `fmod` modes; signed, unsigned and float
operands, broadcast, NumPy's edge cases: zero and infinite divisors, infinite dividends),
every boolean case and every ScatterND case (its inputs made constants) match the expected
outputs exactly; a ScatterND of runtime values or of bad constants, and a logical op of
non-booleans, are refused naming the node; onnx's Not cases, opset-1 models, name the opsets
dlc imports."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from dlc.driver.errors import CompileError

import dlc

PREFIXES = ("test_mod_", "test_and", "test_or", "test_xor", "test_not")


def _cases() -> list[object]:
    import onnx.backend.test.loader as loader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tests = loader.load_model_tests(kind="node")
    return [t for t in tests if t.name.startswith(PREFIXES) and t.data_sets
            and t.model.graph.node[0].op_type in ("Mod", "And", "Or", "Xor", "Not")]


CASES = _cases()


def test_every_op_has_cases_and_mod_integer_and_float_ones() -> None:
    ops = {t.model.graph.node[0].op_type for t in CASES}  # type: ignore[attr-defined]
    assert ops == {"Mod", "And", "Or", "Xor", "Not"}
    kinds = {np.issubdtype(t.data_sets[0][0][0].dtype, np.integer) for t in CASES  # type: ignore[attr-defined]
             if t.model.graph.node[0].op_type == "Mod"}  # type: ignore[attr-defined]
    assert kinds == {True, False}


@pytest.mark.parametrize("case", CASES, ids=lambda t: t.name)  # type: ignore[attr-defined]
def test_onnx_node_cases(case: object) -> None:
    inputs, outputs = case.data_sets[0]  # type: ignore[attr-defined]
    opset = next(o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx"))  # type: ignore[attr-defined]
    if opset < 7:  # onnx's Not cases are opset-1 models: below the opsets dlc imports
        with pytest.raises(CompileError, match=r"model opset \d+ \(domain 'ai.onnx'\) is out "
                                               r"of range: dlc imports opsets 7 to"):
            dlc.compile(case.model, threads=1, jobs=1)  # type: ignore[attr-defined]
        return
    executable = dlc.compile(case.model, threads=1, jobs=1)  # type: ignore[attr-defined]
    got = executable(*inputs)
    np.testing.assert_array_equal(got, outputs[0])
    assert got.dtype == outputs[0].dtype


def test_not_and_or_xor_of_comparisons_match_onnxruntime() -> None:
    """`Not(x > 0) Or (x < -1)`, `And`, `Xor` of comparisons (a mask as exporters build it) at
    opset 13, cast to int32: like ONNX Runtime."""
    onnxruntime = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from tests.onnx.models import model, tensor

    zero, minus = np.array(0.0, np.float32), np.array(-1.0, np.float32)
    nodes = [helper.make_node("Greater", ["x", "zero"], ["pos"]),
             helper.make_node("Less", ["x", "minus"], ["low"]),
             helper.make_node("Not", ["pos"], ["nonpos"]),
             helper.make_node("Or", ["nonpos", "low"], ["either"]),
             helper.make_node("And", ["either", "pos"], ["both"]),
             helper.make_node("Xor", ["both", "low"], ["mask"]),
             helper.make_node("Cast", ["mask"], ["y"], to=TensorProto.INT32)]
    proto = model(nodes, [tensor("x", [3, 5])], [tensor("y", [3, 5], TensorProto.INT32)],
                  {"zero": zero, "minus": minus}, opset=13)
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32) * 2
    want = onnxruntime.InferenceSession(proto.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(dlc.compile(proto, threads=1, jobs=1)(x), want)


def _scatter_cases() -> list[object]:
    import onnx.backend.test.loader as loader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tests = loader.load_model_tests(kind="node")
    return [t for t in tests if t.name.startswith("test_scatternd") and t.data_sets]


SCATTER_CASES = _scatter_cases()


@pytest.mark.parametrize("case", SCATTER_CASES, ids=lambda t: t.name)  # type: ignore[attr-defined]
def test_scatternd_of_constants_folds(case: object) -> None:
    """onnx's ScatterND cases (every reduction) with their inputs made initializers: the
    scatter folds at import (a Swin transformer's mask), the model a constant."""
    from onnx import numpy_helper

    inputs, outputs = case.data_sets[0]  # type: ignore[attr-defined]
    proto = case.model  # type: ignore[attr-defined]
    graph = proto.graph
    for value, array in zip(list(graph.input), inputs, strict=True):
        graph.initializer.append(numpy_helper.from_array(array, value.name))
    del graph.input[:]
    np.testing.assert_array_equal(dlc.compile(proto, threads=1, jobs=1)(), outputs[0])


def test_scatternd_of_runtime_values_is_refused_naming_the_node() -> None:
    from onnx import helper

    from tests.onnx.models import model, tensor

    proto = model([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="scatter")],
                  [tensor("x", [4, 3]), tensor("u", [2, 3])], [tensor("y", [4, 3])],
                  {"i": np.array([[0], [2]], np.int64)}, opset=16)
    with pytest.raises(CompileError, match=r"node 'scatter' \(ScatterND, opset 16\): expected "
                                           r"the data, indices and updates known at import "
                                           r"time"):
        dlc.compile(proto, threads=1, jobs=1)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_mod_is_numpys_bit_for_bit(dtype: type, fmod: int) -> None:
    """A float Mod (the remainder through f64 `trunc` and `fma`, fixed where the quotient
    rounded up) equals NumPy's `fmod` / `mod` exactly on operands of magnitudes 1e-3 to 1e11
    and 1e-3 to 1e3 (quotients up to about 1e15, below 2**53), signs mixed."""
    from onnx import helper

    from tests.onnx.models import model, tensor

    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    proto = model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)],
                  [tensor("a", [2048], onnx_type), tensor("b", [2048], onnx_type)],
                  [tensor("y", [2048], onnx_type)], opset=13)
    rng = np.random.default_rng(fmod)
    a = (rng.standard_normal(2048) * 10.0 ** rng.integers(-3, 12, 2048)).astype(dtype)
    b = (rng.standard_normal(2048) * 10.0 ** rng.integers(-3, 4, 2048)).astype(dtype)
    with np.errstate(all="ignore"):  # f16 overflows to inf: NaN remainders, as NumPy's
        want = np.fmod(a, b) if fmod else np.mod(a, b)
    np.testing.assert_array_equal(dlc.compile(proto, threads=1, jobs=1)(a, b), want)


def test_a_logical_op_of_non_booleans_is_refused_naming_the_node() -> None:
    from onnx import TensorProto, helper

    from tests.onnx.models import model, tensor

    proto = model([helper.make_node("And", ["a", "b"], ["y"], name="both")],
                  [tensor("a", [3], TensorProto.INT32), tensor("b", [3], TensorProto.INT32)],
                  [tensor("y", [3], TensorProto.INT32)], opset=13)
    with pytest.raises(CompileError, match=r"node 'both' \(And, opset 13\): expected boolean "
                                           r"operands, found tensor<3xi32>"):
        dlc.compile(proto, threads=1, jobs=1)


@pytest.mark.parametrize(("indices", "attributes", "message"), [
    (np.array([[0], [4]], np.int64), {}, r"index \[4\] is outside the data's dims \[4\]"),
    (np.array([[0], [2]], np.int64), {"reduction": "mean"},
     r"expected reduction one of \['add', 'max', 'min', 'mul', 'none'\], found 'mean'"),
    (np.array([[0, 1, 2], [2, 0, 0]], np.int64), {},
     r"expected indices \[\.\.\., k\] with k in \[1, 2\]"),
])
def test_a_bad_scatternd_of_constants_is_refused_naming_the_node(
        indices: np.ndarray, attributes: dict, message: str) -> None:
    from onnx import helper

    from tests.onnx.models import model, tensor

    constants = {"x": np.zeros((4, 3), np.float32), "i": indices,
                 "u": np.ones((2, 3), np.float32)}
    proto = model([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="scatter",
                                    **attributes)],
                  [], [tensor("y", [4, 3])], constants, opset=18)
    with pytest.raises(CompileError, match=r"node 'scatter' \(ScatterND, opset 18\): "
                                           + message):
        dlc.compile(proto, threads=1, jobs=1)
