"""User-defined ONNX ops (`dlc.custom_op`): import, interpreter, fusion, compute, external C calls.

Each op is checked against its NumPy reference on random inputs; the external op calls a small C
library compiled here (skipped without a C compiler).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.custom import CustomOp
from dlc.dialects.graph.interpreter import run_module
from dlc.dialects.graph.ops import FusedOp
from dlc.frontends.onnx.importer import import_onnx
from dlc.pipelines import parse_pipeline
from onnx import TensorProto, helper, numpy_helper
from xdsl.passes import PassPipeline

import dlc
from dlc.custom_op import CustomOpError, ExternFunction, register_op, unregister_op

DOMAIN = "com.dlc.test"


def swish_compute(te, x, beta=1.0):
    return te.compute(x.shape, lambda i: x[i] * te.sigmoid(x[i] * beta))


def swish_reference(x, beta=1.0):
    return x / (1 + np.exp(-beta * x))


def sum_rows_compute(te, x):
    rows, cols = x.shape
    return te.compute((rows,), lambda i, r: x[i[0], r[0]] * x[i[0], r[0]], reduce=[cols])


@pytest.fixture
def ops() -> Iterator[None]:
    """Registers Swish (elementwise) and SumSquares (a row reduction) for one test."""
    register_op(
        "Swish", domain=DOMAIN, shape=lambda x, beta=1.0: (x.shape, x.dtype),
        reference=swish_reference, compute=swish_compute, fusion="elementwise",
        attributes={"beta": 1.0},
    )
    register_op(
        "SumSquares", domain=DOMAIN, shape=lambda x: ((x.shape[0],), x.dtype),
        reference=lambda x: (x * x).sum(axis=1), compute=sum_rows_compute, fusion="reduction",
    )
    yield
    unregister_op("Swish", DOMAIN)
    unregister_op("SumSquares", DOMAIN)


def model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "custom",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        list(initializers),
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    )


def swish_model() -> onnx.ModelProto:
    return model(
        [helper.make_node("Relu", ["x"], ["a"]),
         helper.make_node("Swish", ["a"], ["b"], domain=DOMAIN, beta=0.5),
         helper.make_node("Add", ["b", "x"], ["y"])],
        [("x", [3, 16])], [("y", [3, 16])],
    )


def swish_expected(x: np.ndarray) -> np.ndarray:
    return swish_reference(np.maximum(x, 0), 0.5) + x


def test_elementwise_op_is_fused_with_its_neighbours(ops: None) -> None:
    module = import_onnx(swish_model())
    PassPipeline(parse_pipeline("graph-fuse-ops")).apply(make_context(), module)
    groups = [op for op in module.walk() if isinstance(op, FusedOp)]
    assert len(groups) == 1
    names = [op.name for op in groups[0].body.block.ops]
    assert names == ["graph.relu", "graph.custom", "graph.add", "graph.yield"]


def test_elementwise_op_matches_reference(ops: None) -> None:
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    (interpreted,) = run_module(import_onnx(swish_model()), [x])
    np.testing.assert_allclose(interpreted, swish_expected(x), rtol=1e-6)
    compiled = dlc.compile(swish_model(), cache=False)
    np.testing.assert_allclose(compiled(x), swish_expected(x), rtol=1e-5, atol=1e-6)


def test_reduction_op_matches_reference(ops: None) -> None:
    m = model(
        [helper.make_node("Relu", ["x"], ["a"]),
         helper.make_node("SumSquares", ["a"], ["y"], domain=DOMAIN)],
        [("x", [5, 33])], [("y", [5])],
    )
    x = np.random.default_rng(1).standard_normal((5, 33)).astype(np.float32)
    expected = (np.maximum(x, 0) ** 2).sum(axis=1)
    (interpreted,) = run_module(import_onnx(m), [x])
    np.testing.assert_allclose(interpreted, expected, rtol=1e-5)
    np.testing.assert_allclose(dlc.compile(m, cache=False)(x), expected, rtol=1e-5)


def test_custom_op_prints_and_parses(ops: None) -> None:
    module = import_onnx(swish_model())
    custom = next(op for op in module.walk() if isinstance(op, CustomOp))
    assert custom.op_type.data == f"{DOMAIN}::Swish"
    assert custom.attribute_values() == {"beta": 0.5}
    from xdsl.parser import Parser

    reparsed = Parser(make_context(), str(module)).parse_module()
    assert str(reparsed) == str(module)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def test_registering_twice_names_the_op(ops: None) -> None:
    with pytest.raises(CustomOpError, match="'Swish' .*already registered"):
        register_op("Swish", domain=DOMAIN, shape=lambda x: (x.shape, x.dtype),
                    reference=swish_reference, compute=swish_compute)


def test_shape_function_disagreeing_with_compute_names_the_op() -> None:
    register_op(
        "Bad", domain=DOMAIN, shape=lambda x: (x.shape, x.dtype), reference=lambda x: x,
        compute=lambda te, x: te.compute((x.shape[0],), lambda i: x[i[0], 0]),
    )
    try:
        m = model([helper.make_node("Bad", ["x"], ["y"], domain=DOMAIN)],
                  [("x", [2, 3])], [("y", [2, 3])])
        with pytest.raises(dlc.CompileError, match="Bad: the shape function gives"):
            dlc.compile(m, cache=False)
    finally:
        unregister_op("Bad", DOMAIN)


def test_both_compute_and_extern_is_an_error() -> None:
    with pytest.raises(CustomOpError, match="exactly one of compute= and extern="):
        register_op("Both", domain=DOMAIN, shape=lambda x: (x.shape, x.dtype),
                    reference=lambda x: x, compute=swish_compute,
                    extern=ExternFunction("f", "libf.so"))


def test_unregistered_op_in_ir_is_a_verifier_error() -> None:
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import VerifyException

    text = ('func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
            '  %y = graph.custom %x {op_type = "nowhere::Nope", attrs = {}} : '
            '(tensor<2xf32>) -> tensor<2xf32>\n  func.return %y : tensor<2xf32>\n}')
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(VerifyException, match="'nowhere::Nope'"):
        module.verify()


# ---------------------------------------------------------------------------------------------
# External C functions
# ---------------------------------------------------------------------------------------------

SCALE_SOURCE = """
void dlc_test_scale_rows(const float *x, const float *w, float *out) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) out[i * 6 + j] = x[i * 6 + j] * w[j] + 1.0f;
}
"""


@pytest.fixture
def scale_library(tmp_path: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc) to build the external library")
    source = tmp_path / "scale.c"
    source.write_text(SCALE_SOURCE)
    library = tmp_path / "libdlcscale.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(source)],
                   check=True)
    return library


def scale_model(weights: np.ndarray) -> onnx.ModelProto:
    return model(
        [helper.make_node("Relu", ["x"], ["a"]),
         helper.make_node("ScaleRows", ["a", "w"], ["b"], domain=DOMAIN),
         helper.make_node("Sigmoid", ["b"], ["y"])],
        [("x", [4, 6])], [("y", [4, 6])], [numpy_helper.from_array(weights, "w")],
    )


def register_scale(library: Path | str, symbol: str = "dlc_test_scale_rows") -> None:
    register_op(
        "ScaleRows", domain=DOMAIN, shape=lambda x, w: (x.shape, x.dtype),
        reference=lambda x, w: x * w + 1, extern=ExternFunction(symbol, str(library)),
    )


def test_extern_op_calls_the_c_library(scale_library: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    weights = rng.standard_normal(6).astype(np.float32)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    expected = 1 / (1 + np.exp(-(np.maximum(x, 0) * weights + 1)))
    register_scale(scale_library)
    try:
        (interpreted,) = run_module(import_onnx(scale_model(weights)), [x])
        np.testing.assert_allclose(interpreted, expected, rtol=1e-6)
        compiled = dlc.compile(scale_model(weights), cache=False)
        np.testing.assert_allclose(compiled(x), expected, rtol=1e-5, atol=1e-6)
        exported = compiled.export(tmp_path / "model.so")
        np.testing.assert_allclose(dlc.load(exported)(x), expected, rtol=1e-5, atol=1e-6)
    finally:
        unregister_op("ScaleRows", DOMAIN)


def test_unresolved_extern_symbol_names_op_and_symbol(scale_library: Path) -> None:
    register_scale(scale_library, symbol="dlc_test_no_such_function")
    try:
        with pytest.raises(dlc.CompileError,
                           match=r"ScaleRows.*@dlc_test_no_such_function is not defined"):
            dlc.compile(scale_model(np.ones(6, np.float32)), cache=False)
    finally:
        unregister_op("ScaleRows", DOMAIN)


def test_missing_extern_library_names_op_and_symbol(tmp_path: Path) -> None:
    register_scale(tmp_path / "libabsent.so")
    try:
        with pytest.raises(dlc.CompileError,
                           match=r"ScaleRows: cannot load library .*dlc_test_scale_rows"):
            dlc.compile(scale_model(np.ones(6, np.float32)), cache=False)
    finally:
        unregister_op("ScaleRows", DOMAIN)


# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent


def test_dlc_opt_checks_semantics_of_custom_ops() -> None:
    ops = REPO / "tests" / "filecheck" / "dialects" / "graph" / "custom_ops.py"
    module = ('func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n'
              '  %y = graph.custom %x {op_type = "com.example::Swish", attrs = {beta = 2.0 : f64}}'
              ' : (tensor<2x3xf32>) -> tensor<2x3xf32>\n  func.return %y : tensor<2x3xf32>\n}\n')
    import sys

    command = [sys.executable, str(REPO / "tools" / "dlc-opt"), "-", "--custom-ops", str(ops),
               "-p", "convert-graph-to-tensor-expr,convert-tensor-expr-to-loop",
               "--check-semantics"]
    result = subprocess.run(command, input=module, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert 'tensor_expr' not in result.stdout and "loop.for" in result.stdout
    missing = subprocess.run(command[:3], input=module, capture_output=True, text=True,
                             check=False)
    assert missing.returncode == 1
    assert "expected a registered custom op, found 'com.example::Swish'" in missing.stderr
