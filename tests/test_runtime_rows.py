"""Kernels over a runtime number of rows: tensor_expr computes with a dynamic leading dim, their
loop nests bounded by a size passed beside the pointers, the default schedule's blocks of
static rows (`block_rows`), and the compiled functions, each against NumPy for many row counts;
then models with a dynamic batch compiled into such kernels (`cpu-runtime-rows`) against ONNX
Runtime."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop import ForOp, RowsOp, dim_args
from dlc.dialects.loop.interpreter import LoopInterpreterError, run_function
from dlc.dialects.tensor_expr.interpreter import run_module
from dlc.rewrites.convert_tensor_expr_to_loop import ConvertTensorExprToLoopPass
from dlc.rewrites.loop_default_schedule import LoopDefaultSchedulePass
from dlc.rewrites.schedule.common import ScheduleError
from dlc.rewrites.schedule.rows import block_rows, inner_nest
from dlc.runtime.executable import ExecutableError
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import dlc
from benchmarks.model_zoo import mlp, random_inputs, resnet18, transformer_block, yolo_style
from benchmarks.runtime_rows import dense_relu, softmax_rows

TARGET = "llvm -mcpu=x86-64-v3 -num-cores=2"
"""The CPU the schedules are made for (explicit: the IR must not depend on the host)."""

ROW_COUNTS = (0, 1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 31)
"""Row counts that meet every part of the blocks of 8, 4, 2 and 1 (none, each alone, all)."""


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def to_loops(text: str) -> ModuleOp:
    module = parse(text)
    ConvertTensorExprToLoopPass().apply(make_context(), module)
    module.verify()
    return module


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def softmax_reference(x: np.ndarray) -> np.ndarray:
    if not len(x):
        return x.copy()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


PLANES = """
func.func @planes(%x: tensor<?x3x16x16xf32>, %b: tensor<3xf32>) -> tensor<?x3x16x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x16x16xf32>
  %y = tensor_expr.compute "bias" tag "injective" sizes(%n) -> tensor<?x3x16x16xf32> {
  ^bb0(%i: index, %c: index, %h: index, %w: index):
    %v = tensor_expr.read %x[%i, %c, %h, %w] : tensor<?x3x16x16xf32>
    %d = tensor_expr.read %b[%c] : tensor<3xf32>
    %r = arith.addf %v, %d : f32
    tensor_expr.yield %r : f32
  }
  func.return %y : tensor<?x3x16x16xf32>
}
"""


# ------------------------------------------------------------------------------------------
# The interpreters: one function for every row count
# ------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(0, 12), width=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_tensor_expr_and_loop_interpreters_run_any_row_count(rows: int, width: int,
                                                             seed: int) -> None:
    x = rng(seed).standard_normal((rows, width)).astype(np.float32)
    expected = softmax_reference(x)
    text = softmax_rows(width)
    np.testing.assert_allclose(run_module(parse(text), [x])[0], expected, rtol=1e-5, atol=1e-6)
    loops = to_loops(text)
    (got,) = run_function(loops, "softmax", [x], [(rows, width)])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_conversion_passes_the_sizes_after_the_outputs() -> None:
    module = to_loops(softmax_rows(4))
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    inputs = [str(t) for t in function.function_type.inputs.data]
    assert inputs == ["memref<?x4xf32>", "memref<?x4xf32>", "index", "index"]
    assert dim_args(function) == [(0, 0), (1, 0)]


@pytest.mark.parametrize("threads", [1, 2])
def test_the_scheduled_nests_compute_the_same_rows(threads: int) -> None:
    module = to_loops(softmax_rows(24))
    LoopDefaultSchedulePass(target=TARGET, threads=threads).apply(make_context(), module)
    module.verify()
    assert any(isinstance(op, RowsOp) for op in module.walk()), "the rows were not blocked"
    for rows in (0, 1, 6, 8, 11, 19):
        x = rng(rows).standard_normal((rows, 24)).astype(np.float32)
        (got,) = run_function(module, "softmax", [x], [(rows, 24)])
        np.testing.assert_allclose(got, softmax_reference(x), rtol=1e-5, atol=1e-6)


def test_the_loop_interpreter_wants_the_shapes_of_dynamic_outputs() -> None:
    module = to_loops(softmax_rows(4))
    with pytest.raises(LoopInterpreterError, match="outputs with dynamic dims"):
        run_function(module, "softmax", [np.zeros((2, 4), np.float32)])


# ------------------------------------------------------------------------------------------
# block_rows
# ------------------------------------------------------------------------------------------


def _nest(module: ModuleOp, function: str = "") -> ForOp:
    for op in module.walk():
        if isinstance(op, FuncOp) and (not function or op.sym_name.data == function):
            return next(o for o in op.body.block.ops if isinstance(o, ForOp))
    raise AssertionError("no nest")


def test_block_rows_makes_one_loop_per_block_size_over_views() -> None:
    module = to_loops(PLANES)
    parts = block_rows(_nest(module), (4, 2, 1))
    module.verify()
    assert [part.axis.data for part in parts] == ["i.rows", "i.rest2", "i.rest1"]
    for part, rows in zip(parts, (4, 2, 1), strict=True):
        views = [op for op in part.body.block.ops if isinstance(op, RowsOp)]
        assert sorted(str(v.result.type) for v in views) == [
            f"memref<{rows}x3x16x16xf32>"] * 2
        assert inner_nest(part).trip_count() == rows
    for rows in (0, 1, 3, 4, 7, 10):
        x = rng(rows).standard_normal((rows, 3, 16, 16)).astype(np.float32)
        b = rng(1).standard_normal(3).astype(np.float32)
        (got,) = run_function(module, "planes", [x, b], [x.shape])
        np.testing.assert_array_equal(got, x + b[:, None, None])


@pytest.mark.parametrize(("sizes", "exact", "message"), [
    ((8, 3, 1), False, "each a multiple of the next"),
    ((8, 4), False, "ending with 1"),
    ((), False, "ending with 1"),
    ((4, 4, 1), False, "descending order"),
    ((4, 2, 1), True, "then every size below it"),
    ((), True, "then every size below it"),
])
def test_block_rows_rejects_bad_block_sizes(sizes: tuple[int, ...], exact: bool,
                                            message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        block_rows(_nest(to_loops(PLANES)), sizes, exact=exact)


def test_block_rows_exact_runs_the_rows_left_as_one_nest() -> None:
    module = to_loops(PLANES)
    parts = block_rows(_nest(module), (4, 3, 2, 1), exact=True)
    module.verify()
    assert [part.axis.data for part in parts] == ["i.rows", "i.rest3", "i.rest2", "i.rest1"]
    b = rng(1).standard_normal(3).astype(np.float32)
    for rows in range(0, 11):
        x = rng(rows).standard_normal((rows, 3, 16, 16)).astype(np.float32)
        (got,) = run_function(module, "planes", [x, b], [x.shape])
        np.testing.assert_array_equal(got, x + b[:, None, None])


ROW_TRANSPOSE = """
func.func @transpose(%x: memref<?x4xf32>, %out: memref<4x?xf32>, %n: index, %m: index)
    attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "t" reads(%x : memref<?x4xf32>) writes(%out : memref<4x?xf32>) spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<?x4xf32> -> f32
        loop.store %v, %out[%j, %i] : f32 -> memref<4x?xf32>
      }
    }
  }
  func.return
}
"""


def test_block_rows_needs_the_rows_as_leading_indices() -> None:
    with pytest.raises(ScheduleError, match="only as the leading index"):
        block_rows(_nest(parse(ROW_TRANSPOSE)), (1,))


def test_dim_args_counts_the_dynamic_dims() -> None:
    module = parse(ROW_TRANSPOSE.replace("dlc.dim_args = 2", "dlc.dim_args = 3"))
    with pytest.raises(VerifyException, match="expected 3 dynamic dims"):
        dim_args(next(op for op in module.ops if isinstance(op, FuncOp)))


# ------------------------------------------------------------------------------------------
# Compiled: one executable for every row count
# ------------------------------------------------------------------------------------------


def _run(executable: dlc.Executable, *inputs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, np.float32)
    result = executable(*inputs, out=[out])
    assert result is out
    return out


def test_compiled_softmax_rows() -> None:
    executable = dlc.compile(to_loops(softmax_rows(37)))
    for rows in ROW_COUNTS:
        x = rng(rows).standard_normal((rows, 37)).astype(np.float32)
        got = _run(executable, x, shape=(rows, 37))
        np.testing.assert_allclose(got, softmax_reference(x), rtol=1e-5, atol=1e-6)


def test_compiled_dense_over_runtime_rows_packs_its_weight_at_compile_time() -> None:
    weight = rng(0).standard_normal((48, 40)).astype(np.float32)
    module = to_loops(dense_relu(weight))
    executable = dlc.compile(module)
    for rows in ROW_COUNTS:
        x = rng(rows).standard_normal((rows, 48)).astype(np.float32)
        got = _run(executable, x, shape=(rows, 40))
        np.testing.assert_allclose(got, np.maximum(x @ weight, 0), rtol=1e-4, atol=1e-4)


def test_compiled_planes_and_its_signature() -> None:
    executable = dlc.compile(to_loops(PLANES))
    signature = executable.signature
    assert [arg.shape for arg in signature.arguments] == [(-1, 3, 16, 16), (3,), (-1, 3, 16, 16)]
    assert signature.dim_args == ((0, 0), (2, 0))
    b = rng(2).standard_normal(3).astype(np.float32)
    for rows in (0, 1, 4, 9):
        x = rng(rows).standard_normal((rows, 3, 16, 16)).astype(np.float32)
        np.testing.assert_array_equal(_run(executable, x, b, shape=x.shape), x + b[:, None, None])
    x = rng(5).standard_normal((5, 3, 16, 16)).astype(np.float32)
    np.testing.assert_array_equal(executable(x, b), x + b[:, None, None])  # its rows: x's
    with pytest.raises(ExecutableError, match=r"expected shape \(-1, 3, 16, 16\)"):
        executable(np.zeros((2, 3, 16, 15), np.float32), b,
                   out=[np.empty((2, 3, 16, 15), np.float32)])


# ------------------------------------------------------------------------------------------
# Models: a dynamic batch compiled into kernels over runtime rows (pipeline cpu-runtime-rows)
# ------------------------------------------------------------------------------------------


def _runtime_rows(model: onnx.ModelProto) -> dlc.Executable:
    executable = dlc.compile(model, dynamic_batch=True, pipeline="cpu-runtime-rows",
                             cache_dir=None)
    assert isinstance(executable, dlc.Executable), "one executable for every batch"
    assert executable.batch_symbol == "N"
    assert executable.signature.dim_args, "the entry takes the batch's size"
    return executable


def _matches_onnxruntime(model: onnx.ModelProto, executable: dlc.Executable,
                         batches: Sequence[int], tolerance: float = 1e-5) -> None:
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    for rows in batches:
        feeds = random_inputs(with_batch(model, rows), seed=rows)
        want = session.run(None, feeds)
        got = executable.run(feeds)
        for expected, actual in zip(want, got.values(), strict=True):
            assert actual.shape == expected.shape
            if not expected.size:
                continue
            scale = max(float(np.abs(expected).max()), 1.0)
            assert float(np.abs(actual - expected).max()) <= tolerance * scale, rows


def with_batch(model: onnx.ModelProto, rows: int) -> onnx.ModelProto:
    """`model` with its inputs' leading dim fixed to `rows` (for `random_inputs`)."""
    shaped = onnx.ModelProto()
    shaped.CopyFrom(model)
    for value in shaped.graph.input:
        dim = value.type.tensor_type.shape.dim[0]
        dim.ClearField("dim_param")
        dim.dim_value = rows
    return shaped


def test_an_mlp_over_a_runtime_batch() -> None:
    model = mlp(batch="N", sizes=(40, 24, 10))  # type: ignore[arg-type]
    executable = _runtime_rows(model)
    assert executable.signature.arguments[0].shape == (-1, 40)
    _matches_onnxruntime(model, executable, (0, 1, 2, 5, 9, 17))


def test_a_transformer_block_over_a_runtime_batch() -> None:
    model = transformer_block(seq=8, hidden=16, heads=2, mlp=32, batch="N")  # type: ignore
    _matches_onnxruntime(model, _runtime_rows(model), (1, 3))


@pytest.mark.slow
def test_a_detector_and_a_resnet_over_a_runtime_batch() -> None:
    detector = yolo_style(channels=4, height=32, width=32)
    _matches_onnxruntime(detector, _runtime_rows(detector), (1, 2, 9))
    resnet = resnet18(batch="N", image=32, classes=10)  # type: ignore[arg-type]
    _matches_onnxruntime(resnet, _runtime_rows(resnet), (1, 3))


def test_inputs_of_different_batches_are_an_error() -> None:
    from onnx import TensorProto, helper

    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", 4]) for name in "xy"]
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "add", inputs,
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    executable = _runtime_rows(model)
    x = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(executable(x, x), 2 * x)
    with pytest.raises(ExecutableError, match=r"dim 0 is 'N' = 2, but 'N' = 3"):
        executable(x, np.ones((2, 4), np.float32))


def test_a_library_of_runtime_rows_and_its_c_interface(tmp_path: object) -> None:
    import ctypes

    model = mlp(batch="N", sizes=(12, 8, 3))  # type: ignore[arg-type]
    executable = _runtime_rows(model)
    path = executable.export(f"{tmp_path}/mlp.so", c_prefix="mlp")
    x = rng(5).standard_normal((5, 12)).astype(np.float32)
    want = executable(x)
    loaded = dlc.load(path)
    assert loaded.signature.dim_args == executable.signature.dim_args
    np.testing.assert_array_equal(loaded(x), want)
    np.testing.assert_array_equal(loaded(x[:2]), want[:2])

    class Pointers(ctypes.Structure):
        _fields_ = [("p", ctypes.c_void_p)]

    library = ctypes.CDLL(str(path))
    run_batch = library.mlp_run_batch
    run_batch.argtypes = [ctypes.c_int64, ctypes.POINTER(Pointers), ctypes.POINTER(Pointers)]
    out = np.zeros((5, 3), np.float32)
    assert run_batch(5, Pointers(x.ctypes.data), Pointers(out.ctypes.data)) == 0
    np.testing.assert_array_equal(out, want)
    one = np.zeros((1, 3), np.float32)
    run = library.mlp_run
    run.argtypes = [ctypes.POINTER(Pointers), ctypes.POINTER(Pointers)]
    assert run(Pointers(x.ctypes.data), Pointers(one.ctypes.data)) == 0
    np.testing.assert_array_equal(one, want[:1])


def test_dlc_compile_writes_a_library_of_runtime_rows(tmp_path: object) -> None:
    from dlc.tools.dlc_main import main

    model = mlp(batch="N", sizes=(6, 5, 4))  # type: ignore[arg-type]
    path, library = f"{tmp_path}/mlp.onnx", f"{tmp_path}/mlp.so"
    onnx.save(model, path)
    assert main(["compile", path, "--dynamic-batch", "--pipeline", "cpu-runtime-rows",
                 "--no-cache", "--jobs", "1", "-o", library]) == 0
    loaded = dlc.load(library)
    assert loaded.signature.dim_args and loaded.batch_symbol == "N"
    _matches_onnxruntime(model, loaded, (1, 7))


# ------------------------------------------------------------------------------------------
# What is refused, naming why
# ------------------------------------------------------------------------------------------


def _rows_nest(body: str, step: str = "%c1", kind: str = "") -> str:
    """A function over `%n` rows of `%x` into `%out` whose nest is `body` (loop `%i`)."""
    return f"""
func.func @f(%x: memref<?x4xf32>, %out: memref<?x4xf32>, %n: index, %m: index)
    attributes {{dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %n step {step} axis "i"{kind} {{
{body}
  }}
  func.return
}}
"""


COPY_ROW = """    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "copy" reads(%x : memref<?x4xf32>) writes(%out : memref<?x4xf32>)
          spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<?x4xf32> -> f32
        loop.store %v, %out[%i, %j] : f32 -> memref<?x4xf32>
      }
    }"""


@pytest.mark.parametrize(("text", "message"), [
    (_rows_nest(COPY_ROW, step="%c2"), "expected a loop from 0 with step 1"),
    (_rows_nest(COPY_ROW, kind=" kind parallel"), "expected a serial loop, found kind parallel"),
    (_rows_nest(COPY_ROW.replace("%out[%i, %j]", "%out[%i, %n]")),
     "the number of rows is used inside the nest"),
    (_rows_nest("""    %t = loop.alloc global sizes(%n) : memref<?x4xf32>
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "copy" reads(%x : memref<?x4xf32>) writes(%t : memref<?x4xf32>)
          spatial ["i", "j"] {
        %v = loop.load %x[%i, %j] : memref<?x4xf32> -> f32
        loop.store %v, %t[%i, %j] : f32 -> memref<?x4xf32>
      }
    }"""), "expected row buffers defined outside the nest"),
])
def test_block_rows_preconditions(text: str, message: str) -> None:
    module = parse(text)
    with pytest.raises(ScheduleError, match=message):
        block_rows(_nest(module), (1,))
    assert not any(isinstance(op, RowsOp) for op in module.walk()), "left untouched"


def test_a_view_past_the_rows_is_an_interpreter_error() -> None:
    text = _rows_nest("""    %v = loop.rows %x[%i] : memref<?x4xf32> -> memref<2x4xf32>
    %w = loop.rows %out[%i] : memref<?x4xf32> -> memref<2x4xf32>""")
    with pytest.raises(LoopInterpreterError, match=r"rows \[2, 4\) out of the 3"):
        run_function(parse(text), "f", [np.zeros((3, 4), np.float32)], [(3, 4)])


class _PlanesShapes(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int64 * 4), ("b", ctypes.c_int64 * 1),
                ("out", ctypes.c_int64 * 4)]


class _Pointers(ctypes.Structure):
    _fields_ = [("first", ctypes.c_void_p), ("second", ctypes.c_void_p)]


def test_a_library_of_runtime_rows_without_a_batch_sizes_and_runs_each_call(tmp_path) -> None:
    """Runtime rows that are no dynamic batch (no `batch` symbol) export with the C interface
    of runtime shapes: `planes_output_shapes` checks the static dims and sizes the output,
    `planes_run_shaped` runs any row count, and refuses an output shape it did not compute."""
    executable = dlc.compile(to_loops(PLANES))
    path = executable.export(f"{tmp_path}/planes.so", c_prefix="planes")
    library = ctypes.CDLL(str(path))
    output_shapes, run, last_error = (library.planes_output_shapes, library.planes_run_shaped,
                                      library.planes_last_error)
    last_error.restype = ctypes.c_char_p
    b = np.arange(3, dtype=np.float32)
    for rows in (0, 1, 5):
        shapes = _PlanesShapes((rows, 3, 16, 16), (3,))
        assert output_shapes(ctypes.byref(shapes)) == 0
        assert tuple(shapes.out) == (rows, 3, 16, 16)
        x = rng(rows).standard_normal((rows, 3, 16, 16)).astype(np.float32)
        out = np.zeros_like(x)
        inputs, outputs = _Pointers(x.ctypes.data, b.ctypes.data), _Pointers(out.ctypes.data)
        assert run(ctypes.byref(shapes), ctypes.byref(inputs), ctypes.byref(outputs)) == 0
        np.testing.assert_array_equal(out, x + b[None, :, None, None])
        np.testing.assert_array_equal(executable(x, b), out)  # the JIT agrees
    shapes = _PlanesShapes((2, 4, 16, 16), (3,))
    assert output_shapes(ctypes.byref(shapes)) == 6  # PLANES_ERROR_SHAPE
    assert last_error() == b"input 0 ('x') dim 1: expected 3, found 4"
    shapes = _PlanesShapes((-2, 3, 16, 16), (3,))
    assert output_shapes(ctypes.byref(shapes)) == 6
    assert last_error() == b"input 0 ('x') dim 0: expected a size, found -2"
    x = np.ones((2, 3, 16, 16), np.float32)
    out = np.full((1, 3, 16, 16), 7, np.float32)
    shapes = _PlanesShapes((2, 3, 16, 16), (3,), (1, 3, 16, 16))  # not the computed 2 rows
    inputs, outputs = _Pointers(x.ctypes.data, b.ctypes.data), _Pointers(out.ctypes.data)
    assert run(ctypes.byref(shapes), ctypes.byref(inputs), ctypes.byref(outputs)) == 6
    assert last_error() == (b"output 0 ('planes_out0') dim 0: expected 2 (computed from the "
                            b"inputs' shapes), found 1")
    assert (out == 7).all(), "nothing written"
    assert run(None, ctypes.byref(inputs), ctypes.byref(outputs)) == 1
    loaded = dlc.load(path)
    np.testing.assert_array_equal(loaded(x, b), x + b[None, :, None, None])
