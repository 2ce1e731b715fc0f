"""Runtime shapes by specialization (`driver.specialize`): `dlc.compile` of an ONNX model with
dynamic input dims, or with inputs whose values decide shapes, returns an executable that
compiles per call signature; checked against ONNX's reference evaluator."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.driver.specialize import SpecializingExecutable
from dlc.runtime.executable import Executable, ExecutableError
from dlc.tools.dlc_main import main
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dlc
from benchmarks.model_zoo import yolo_style
from tests.onnx.models import model, tensor

RNG = np.random.default_rng(0)


def conv_pool(batch: int | str = "N", height: int | str = "H", width: int | str = "W"
              ) -> onnx.ModelProto:
    """x[N,3,H,W] -> Conv 3x3 (pad 1) -> Relu -> GlobalAveragePool, plus y = x's sum over H, W
    added to a second input z[N, 3] (so two inputs share the symbol N)."""
    w = np.random.default_rng(7).standard_normal((8, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["pooled"]),
        helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
        helper.make_node("Add", ["s", "z"], ["total"]),
    ]
    return model(nodes, [tensor("x", [batch, 3, height, width]), tensor("z", [batch, 3])],
                 [tensor("pooled", [batch, 8, 1, 1]), tensor("total", [batch, 3])],
                 {"w": w, "axes": np.array([2, 3], np.int64)}, opset=17)


def reference(proto: onnx.ModelProto, *inputs: np.ndarray) -> list[np.ndarray]:
    names = [i.name for i in proto.graph.input]
    return ReferenceEvaluator(proto).run(None, dict(zip(names, inputs, strict=True)))


def assert_matches(got: object, want: list[np.ndarray]) -> None:
    got = [got] if isinstance(got, np.ndarray) else list(got)  # type: ignore[arg-type]
    assert len(got) == len(want)
    for value, expected in zip(got, want, strict=True):
        assert value.shape == expected.shape and value.dtype == expected.dtype
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)


def test_one_executable_runs_several_batch_and_image_sizes() -> None:
    proto = conv_pool()
    executable = dlc.compile(proto, cache=False, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    assert executable.input_names == ("x", "z") and executable.output_names == ("pooled", "total")
    for n, h, w in [(1, 8, 8), (3, 5, 12), (1, 8, 8)]:
        x = RNG.standard_normal((n, 3, h, w)).astype(np.float32)
        z = RNG.standard_normal((n, 3)).astype(np.float32)
        assert_matches(executable(x, z), reference(proto, x, z))
    assert executable.compiles == 2  # the third call's signature was compiled by the first
    by_name = executable.run({"x": np.ones((2, 3, 4, 4), np.float32),
                              "z": np.zeros((2, 3), np.float32)})
    np.testing.assert_allclose(by_name["total"], np.full((2, 3), 16, np.float32))


def test_symbols_dims_and_dtypes_are_checked_before_compiling() -> None:
    executable = dlc.compile(conv_pool(), cache=False, jobs=1)
    x = np.zeros((2, 3, 4, 4), np.float32)
    with pytest.raises(ExecutableError, match=r"input 1 \('z'\): dim 0 is 'N' = 3, but 'N' = 2 "
                                              r"from dim 0 of input 'x'"):
        executable(x, np.zeros((3, 3), np.float32))
    with pytest.raises(ExecutableError, match=r"input 0 \('x'\): dim 1 must be 3, found 4"):
        executable(np.zeros((2, 4, 4, 4), np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(ExecutableError, match=r"input 0 \('x'\): expected rank 4"):
        executable(np.zeros((2, 3, 4), np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(ExecutableError, match="expected dtype float32, found int32"):
        executable(x.astype(np.int32), np.zeros((2, 3), np.float32))
    with pytest.raises(ExecutableError, match="expected 2 inputs"):
        executable(x)
    with pytest.raises(ExecutableError, match="missing 'z'"):
        executable.run({"x": x})
    assert executable.compiles == 0


def test_given_shapes_make_a_static_executable() -> None:
    executable = dlc.compile(conv_pool(), cache=False, jobs=1,
                             input_shapes={"x": (1, 3, 6, 6), "z": (1, 3)})
    assert isinstance(executable, Executable)
    partly = dlc.compile(conv_pool(), cache=False, jobs=1, input_shapes={"x": (2, 3, 6, 6)})
    assert isinstance(partly, SpecializingExecutable)
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    z = RNG.standard_normal((2, 3)).astype(np.float32)
    assert_matches(partly(x, z), reference(conv_pool(), x, z))
    with pytest.raises(ExecutableError, match=r"dim 2 must be 6, found 7"):
        partly(np.zeros((2, 3, 7, 6), np.float32), z)


def test_export_asks_for_the_shapes(tmp_path: Path) -> None:
    executable = dlc.compile(conv_pool(), cache=False, jobs=1)
    with pytest.raises(ExecutableError, match=r"--input-shape x=1x3x1x1 --input-shape z=1x3"):
        executable.export(tmp_path / "m.so")
    assert not list(tmp_path.iterdir())


def test_shape_valued_inputs_are_passed_at_run_time() -> None:
    """Reshape's shape and Slice's starts/ends as runtime inputs: one specialization per value."""
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Slice", ["r", "starts", "ends"], ["y"])]
    proto = model(nodes, [tensor("x", [2, 3, 4]), tensor("shape", [2], TensorProto.INT64),
                          tensor("starts", [1], TensorProto.INT64),
                          tensor("ends", [1], TensorProto.INT64)],
                  [tensor("y", ["a", "b"])])
    executable = dlc.compile(proto, cache=False, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    calls = [([6, 4], [1], [5]), ([4, 6], [0], [3]), ([6, 4], [1], [5])]
    for shape, starts, ends in calls:
        inputs = (x, np.array(shape), np.array(starts), np.array(ends))
        assert_matches(executable(*inputs), reference(proto, *inputs))
    assert set(executable.value_inputs) == {"shape", "starts", "ends"}
    assert executable.compiles == 2
    with pytest.raises(ExecutableError, match="the values of inputs"):
        executable.export("m.so")


def test_concurrent_first_calls_compile_once() -> None:
    executable = dlc.compile(conv_pool(), cache=False, jobs=1)
    x = np.ones((1, 3, 4, 4), np.float32)
    z = np.zeros((1, 3), np.float32)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(executable(x, z)))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and executable.compiles == 1
    for got in results:
        assert_matches(got, reference(conv_pool(), x, z))


def test_cli_runs_a_dynamic_model_and_refuses_to_export_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(conv_pool(), path)
    x, z = np.ones((2, 3, 5, 5), np.float32), np.ones((2, 3), np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "z.npy", z)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                 "--input", f"z={tmp_path / 'z.npy'}", *cache]) == 0
    assert "// total: float32 [2, 3]" in capsys.readouterr().out
    assert main(["profile", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                 "--input", f"z={tmp_path / 'z.npy'}", "--repeat", "2", *cache]) == 0
    assert "whole model (one call)" in capsys.readouterr().out
    np.save(tmp_path / "z3.npy", np.ones((3, 3), np.float32))
    assert main(["run", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                 "--input", f"z={tmp_path / 'z3.npy'}", *cache]) == 1
    assert "input 1 ('z'): dim 0 is 'N' = 3, but 'N' = 2" in capsys.readouterr().err
    assert main(["run", str(path), "--seed", "1", *cache]) == 1
    assert "random inputs need --input-shape" in capsys.readouterr().err
    library = tmp_path / "m.so"
    assert main(["compile", str(path), "-o", str(library), *cache]) == 1
    err = capsys.readouterr().err
    assert "--input-shape x=1x3x1x1" in err and "Traceback" not in err
    assert not library.exists()
    assert main(["compile", str(path), "-o", str(library), "--input-shape", "x=2x3x5x5",
                 "--input-shape", "z=2x3", *cache]) == 0
    assert library.exists()


@pytest.mark.slow
def test_yolo_style_detector_runs_batches_and_image_sizes_like_onnxruntime() -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    proto = yolo_style()  # declared x[N, 3, H, W]
    executable = dlc.compile(proto, jobs=1)
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    for batch, size in [(1, 64), (3, 64), (1, 96), (1, 64)]:
        x = RNG.standard_normal((batch, 3, size, size)).astype(np.float32)
        got = executable(x)
        want = session.run(None, {"x": x})
        for value, expected in zip(got, want, strict=True):
            assert value.shape == expected.shape
            np.testing.assert_allclose(value, expected, rtol=1e-3, atol=1e-4)
    assert executable.compiles == 3  # the repeated signature runs from memory


def _range_loop() -> onnx.ModelProto:
    """Range as ONNX's function body expands it: trip count ceil((limit - start) / delta),
    computed at run time from three scalar inputs, drives a Loop whose scan output stacks the
    running value (its length is the trip count)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Add", ["prev", "delta"], ["current"]),
         helper.make_node("Identity", ["prev"], ["range"])],
        "body", [tensor("i", [], TensorProto.INT64), tensor("cond", [], TensorProto.BOOL),
                 tensor("prev", [])],
        [tensor("cond_out", [], TensorProto.BOOL), tensor("current", []), tensor("range", [])])
    nodes = [
        helper.make_node("Sub", ["limit", "start"], ["span"]),
        helper.make_node("Div", ["span", "delta"], ["steps"]),
        helper.make_node("Ceil", ["steps"], ["ceiled"]),
        helper.make_node("Relu", ["ceiled"], ["count"]),
        helper.make_node("Cast", ["count"], ["trip"], to=TensorProto.INT64),
        helper.make_node("Loop", ["trip", "", "start"], ["last", "out"], body=body),
    ]
    return model(nodes, [tensor("start", []), tensor("limit", []), tensor("delta", [])],
                 [tensor("last", []), tensor("out", ["n"])], opset=17)


def test_a_loop_trip_count_from_inputs_specializes_its_scan_outputs() -> None:
    """A Loop with scan outputs whose trip count is computed from graph inputs: those inputs
    decide the scan outputs' length, so they are bound per call (one compile per trip count,
    a repeated value hits the cache), and scalar inputs keep rank 0 when bound."""
    proto = _range_loop()
    executable = dlc.compile(proto, cache=False, jobs=1)
    assert isinstance(executable, SpecializingExecutable)
    calls = [(1.0, 6.0, 2.0), (0.5, 2.0, 0.25), (1.0, 6.0, 2.0), (3.0, 1.0, 1.0)]
    for start, limit, delta in calls:
        inputs = [np.array(v, np.float32) for v in (start, limit, delta)]
        count = max(0, int(np.ceil((limit - start) / delta)))
        values = np.float32(start) + np.float32(delta) * np.arange(count + 1, dtype=np.float32)
        # onnx.reference cannot stack an empty scan output: NumPy is the reference here.
        assert_matches(executable(*inputs), [values[count], values[:count]])
    assert executable.value_inputs == ("delta", "limit", "start")
    assert executable.compiles == 3
