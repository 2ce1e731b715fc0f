"""bf16 and f16: import, graph interpreter, compiled code, runtime arguments, and the mixed
precision pass (`graph-to-low-precision`, `dlc.compile(precision=...)`).

References: ml_dtypes' float32 -> bfloat16 conversion (round to nearest even) for the bits,
ONNX's reference evaluator and ONNX Runtime (fp16 on CPU) for models, the graph interpreter and
the fp32 model for the mixed-precision results.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module
from dlc.driver.errors import CompileError
from dlc.frontends.onnx import import_onnx
from dlc.pipelines import parse_pipeline
from onnx import TensorProto, helper, numpy_helper
from xdsl.passes import PassPipeline

import dlc

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(23)
TARGET = "llvm -mcpu=skylake-avx512 -num-cores=2"
"""A fixed target (tests must not depend on the host's ISA); this machine runs it."""


def _compile(model: onnx.ModelProto, tmp_path, **options) -> dlc.Executable:
    return dlc.compile(model, TARGET, threads=2, cache_dir=tmp_path / "cache", **options)


def _model(nodes, inputs, outputs, initializers=None, opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "test", inputs, outputs,
        initializer=[numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _conv_block(elem: int, dtype: np.dtype, channels: int = 8) -> onnx.ModelProto:
    """Conv(3x3, bias) -> Relu -> MaxPool -> Flatten -> MatMul -> Add -> Softmax, all `elem`."""
    weights = {
        "w": (RNG.standard_normal((channels, 3, 3, 3)) * 0.3).astype(dtype),
        "b": RNG.standard_normal(channels).astype(dtype),
        "m": (RNG.standard_normal((channels * 36, 10)) * 0.05).astype(dtype),
        "c": RNG.standard_normal(10).astype(dtype),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("MatMul", ["flat", "m"], ["mm"]),
        helper.make_node("Add", ["mm", "c"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", elem, [1, 3, 12, 12])],
                  [helper.make_tensor_value_info("y", elem, [1, 10])], weights)


# ---------------------------------------------------------------------------------------------
# Rounding of the compiled conversions
# ---------------------------------------------------------------------------------------------


def _special_floats() -> np.ndarray:
    one = np.float32(1.0)
    ulp = np.float32(2.0**-7)  # bf16's spacing at 1
    values = [
        0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan,
        one + ulp / 2, one + 3 * ulp / 2, one + ulp / 2 + 2.0**-20, -(one + ulp / 2),
        np.finfo(np.float32).max, -np.finfo(np.float32).max, 3.3895e38, 3.3896e38,
        np.finfo(np.float32).tiny, 1e-40, -1e-40, 1e-45,
    ]
    random = RNG.standard_normal(4000).astype(np.float32) * np.float32(10.0) ** RNG.integers(
        -30, 30, 4000).astype(np.float32)
    bits = RNG.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([np.array(values, np.float32), random, bits])


def test_bf16_casts_round_to_nearest_even_like_ml_dtypes(tmp_path) -> None:
    """f32 -> bf16 in compiled code has ml_dtypes' bits for every value (ties to even,
    overflow to inf, subnormals, NaN stays NaN); bf16 -> f32 is exact."""
    x = _special_floats()
    n = x.size
    model = _model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16),
         helper.make_node("Cast", ["y"], ["z"], to=TensorProto.FLOAT)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [n]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [n])])
    y, z = _compile(model, tmp_path)(x)
    with np.errstate(invalid="ignore"):  # NaN payloads
        expected = x.astype(BF16)
    assert y.dtype == BF16
    nan = np.isnan(x)
    assert np.isnan(y.astype(np.float32)[nan]).all()
    np.testing.assert_array_equal(y.view(np.uint16)[~nan], expected.view(np.uint16)[~nan])
    np.testing.assert_array_equal(z[~nan], expected.astype(np.float32)[~nan])


def test_bf16_arithmetic_rounds_each_op(tmp_path) -> None:
    """Add and Mul on bf16 compute in f32 and round each result, as the interpreter does."""
    a = RNG.standard_normal((4, 33)).astype(BF16)
    b = RNG.standard_normal((4, 33)).astype(BF16)
    model = _model(
        [helper.make_node("Mul", ["a", "b"], ["p"]), helper.make_node("Add", ["p", "a"], ["y"])],
        [helper.make_tensor_value_info(n, TensorProto.BFLOAT16, [4, 33]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [4, 33])])
    got = _compile(model, tmp_path)(a, b)
    (want,) = run_module(import_onnx(model), [a, b])
    product = (a.astype(np.float32) * b.astype(np.float32)).astype(BF16)
    by_hand = (product.astype(np.float32) + a.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(want.view(np.uint16), by_hand.view(np.uint16))
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


# ---------------------------------------------------------------------------------------------
# bf16 and f16 models
# ---------------------------------------------------------------------------------------------


def test_bf16_model_matches_interpreter_and_onnx_reference(tmp_path) -> None:
    """A bf16 conv block (weights, input and output bf16) compiled and interpreted: GEMMs
    accumulate in f32 and round once, so both agree closely with ONNX's reference evaluator."""
    from onnx.reference import ReferenceEvaluator

    model = _conv_block(TensorProto.BFLOAT16, BF16)
    x = RNG.standard_normal((1, 3, 12, 12)).astype(BF16)
    got = _compile(model, tmp_path)(x)
    (interpreted,) = run_module(import_onnx(model), [x])
    (reference,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert got.dtype == BF16 and interpreted.dtype == BF16
    bf16_step = 2.0**-8  # half an ulp at 1, relative
    np.testing.assert_allclose(got.astype(np.float32), interpreted.astype(np.float32),
                               rtol=4 * bf16_step, atol=1e-3)
    np.testing.assert_allclose(got.astype(np.float32), reference.astype(np.float32),
                               rtol=8 * bf16_step, atol=4e-3)


def test_bf16_arguments_as_uint16_bits(tmp_path) -> None:
    """An executable with a bf16 input also takes the bits as a uint16 array."""
    model = _model([helper.make_node("Relu", ["x"], ["y"])],
                   [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [5])],
                   [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [5])])
    x = np.array([-1.5, 2.25, 0.0, -3.0, 7.0], np.float32).astype(BF16)
    compiled = _compile(model, tmp_path)
    np.testing.assert_array_equal(compiled(x.view(np.uint16)).astype(np.float32),
                                  [0.0, 2.25, 0.0, 0.0, 7.0])
    with pytest.raises(dlc.ExecutableError, match="expected dtype bfloat16, found int32"):
        compiled(np.zeros(5, np.int32))


def test_f16_model_matches_onnxruntime(tmp_path) -> None:
    """An fp16 model end to end against ONNX Runtime's fp16 run on CPU."""
    ort = pytest.importorskip("onnxruntime")
    model = _conv_block(TensorProto.FLOAT16, np.dtype(np.float16))
    x = RNG.standard_normal((1, 3, 12, 12)).astype(np.float16)
    got = _compile(model, tmp_path)(x)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32),
                               rtol=4e-3, atol=2e-3)


# ---------------------------------------------------------------------------------------------
# Mixed precision
# ---------------------------------------------------------------------------------------------


def _resnet_block(channels: int = 16, size: int = 8, classes: int = 10) -> onnx.ModelProto:
    """A ResNet basic block with batch norms, a 1x1 projection shortcut, global pooling and a
    Gemm classifier."""
    def bn(prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}.scale": RNG.uniform(0.5, 1.5, channels).astype(np.float32),
                f"{prefix}.bias": RNG.standard_normal(channels).astype(np.float32) * 0.1,
                f"{prefix}.mean": RNG.standard_normal(channels).astype(np.float32) * 0.1,
                f"{prefix}.var": RNG.uniform(0.5, 1.5, channels).astype(np.float32)}

    weights = {
        "stem": (RNG.standard_normal((channels, 3, 3, 3)) * 0.4).astype(np.float32),
        "w1": (RNG.standard_normal((channels, channels, 3, 3)) * 0.1).astype(np.float32),
        "w2": (RNG.standard_normal((channels, channels, 3, 3)) * 0.1).astype(np.float32),
        "fc": (RNG.standard_normal((classes, channels)) * 0.3).astype(np.float32),
        "fc.b": RNG.standard_normal(classes).astype(np.float32) * 0.1,
        **bn("bn0"), **bn("bn1"), **bn("bn2"),
    }

    def conv_bn(x: str, w: str, prefix: str, out: str) -> list[onnx.NodeProto]:
        return [helper.make_node("Conv", [x, w], [f"{out}.c"], pads=[1, 1, 1, 1]),
                helper.make_node("BatchNormalization",
                                 [f"{out}.c", *(f"{prefix}.{p}" for p in
                                                ("scale", "bias", "mean", "var"))], [out])]

    nodes = [
        *conv_bn("x", "stem", "bn0", "s"), helper.make_node("Relu", ["s"], ["s.r"]),
        *conv_bn("s.r", "w1", "bn1", "h1"), helper.make_node("Relu", ["h1"], ["h1.r"]),
        *conv_bn("h1.r", "w2", "bn2", "h2"),
        helper.make_node("Add", ["h2", "s.r"], ["res"]), helper.make_node("Relu", ["res"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fc.b"], ["y"], transB=1),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                        [2, 3, size, size])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, classes])],
                  weights)


def _transformer_block() -> onnx.ModelProto:
    from benchmarks.model_zoo import transformer_block

    return transformer_block(seq=16, hidden=32, heads=2, mlp=64)


MODELS = {"resnet_block": _resnet_block, "transformer_block": _transformer_block}

TOLERANCE = {"bf16": 3e-2, "f16": 4e-3}
"""Bound on max |low - fp32| / max |fp32| for these models: a few roundings of 2^-9 (bf16) or
2^-12 (f16) relative, through a handful of layers."""


def _low_precision(model: onnx.ModelProto, precision: str):
    module = import_onnx(model)
    passes = parse_pipeline(f"graph-fold-constants,graph-fold-batch-norm,"
                            f"graph-to-low-precision{{type={precision}}}")
    PassPipeline(passes).apply(make_context(), module)
    return module


@pytest.mark.parametrize("precision", ["bf16", "f16"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_mixed_precision_in_the_interpreter(name: str, precision: str) -> None:
    """graph-to-low-precision keeps a ResNet block and a transformer block within the stated
    tolerance of fp32, run by the graph interpreter; the low type really is used."""
    model = MODELS[name]()
    module = _low_precision(model, precision)
    text = str(module)
    assert f"x{precision}>" in text
    inputs = [RNG.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
              .astype(np.float32) for i in model.graph.input]
    (reference,) = run_module(import_onnx(model), inputs)
    (got,) = run_module(module, inputs)
    assert got.dtype == np.float32
    error = np.abs(got - reference).max() / np.abs(reference).max()
    assert error < TOLERANCE[precision], error
    assert error > 0  # something did run in low precision


@pytest.mark.parametrize("precision", ["bf16", pytest.param("f16", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_mixed_precision_compiled(name: str, precision: str, tmp_path) -> None:
    """dlc.compile(precision=...) within the tolerance of the fp32 build, and close to the
    interpreter's run of the same low-precision graph."""
    model = MODELS[name]()
    inputs = [RNG.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
              .astype(np.float32) for i in model.graph.input]
    reference = _compile(model, tmp_path)(*inputs)
    got = _compile(model, tmp_path, precision=precision)(*inputs)
    scale = np.abs(reference).max()
    assert np.abs(got - reference).max() / scale < TOLERANCE[precision]
    (interpreted,) = run_module(_low_precision(model, precision), inputs)
    assert np.abs(got - interpreted).max() / scale < TOLERANCE[precision] / 2


def test_precision_errors(tmp_path) -> None:
    model = _resnet_block()
    with pytest.raises(CompileError, match="expected precision fp32, bf16 or f16, found 'int4'"):
        _compile(model, tmp_path, precision="int4")
    with pytest.raises(CompileError, match="expected a CPU target with precision bf16"):
        dlc.compile(model, "opencl", precision="bf16", cache=False)


def test_dlc_compile_precision_flag(tmp_path, capsys) -> None:
    """`dlc compile --precision bf16` writes a library whose weights are bf16 (a smaller .so)
    and whose results stay within the bf16 tolerance; a GPU target is refused."""
    from dlc.tools.dlc_main import main

    model = _resnet_block(channels=32)
    path = tmp_path / "block.onnx"
    onnx.save(model, path)
    sizes = {}
    for precision in ("fp32", "bf16"):
        library = tmp_path / f"{precision}.so"
        assert main(["compile", str(path), "--target", TARGET, "--threads", "2",
                     "--precision", precision, "-o", str(library),
                     "--cache-dir", str(tmp_path / "cache")]) == 0
        sizes[precision] = library.stat().st_size
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    reference = dlc.load(tmp_path / "fp32.so")(x)
    got = dlc.load(tmp_path / "bf16.so")(x)
    assert np.abs(got - reference).max() / np.abs(reference).max() < TOLERANCE["bf16"]
    assert sizes["bf16"] < sizes["fp32"]
    capsys.readouterr()
    assert main(["compile", str(path), "--target", "opencl", "--precision", "bf16",
                 "-o", str(tmp_path / "gpu.so")]) == 1
    assert "expected a CPU --target with --precision bf16" in capsys.readouterr().err


BF16_GRAPH = """
func.func @f(%x: tensor<4x8xbf16>, %y: tensor<8x4xbf16>) -> tensor<4x4xbf16> {
  %m = graph.matmul %x, %y : (tensor<4x8xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
  %a = graph.add %m, %m : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
  %r = graph.relu %a : tensor<4x4xbf16>
  func.return %r : tensor<4x4xbf16>
}
"""


def test_bf16_through_tensor_expr_and_loop_interpreters(tmp_path, capsys) -> None:
    """bf16 IR keeps its results through tensor_expr and loop (each level's interpreter, after
    every pass: `--check-semantics`), and the check does see bf16 (a broken loop pass is
    caught)."""
    from dlc.tools.dlc_opt import main

    path = tmp_path / "bf16.mlir"
    path.write_text(BF16_GRAPH)
    lowering = ("convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
                "loop-default-schedule")
    assert main([str(path), "--check-semantics", "-p", lowering]) == 0
    capsys.readouterr()
    assert main([str(path), "--check-semantics", "-p", f"{lowering},test-break-loop"]) == 1
    assert "pass 'test-break-loop' changed the results of @f" in capsys.readouterr().err
