"""The `dlc` command: compile, run, profile, bench; and its errors (one line, exit 1, no
half-written output)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.tools.dlc_main import main
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parent.parent
SMALL_CNN = REPO / "examples" / "small_cnn.onnx"


def tiny_model() -> onnx.ModelProto:
    """y = Relu(x * w) over (2, 8)."""
    w = numpy_helper.from_array(np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8), "w")
    nodes = [helper.make_node("Mul", ["x", "w"], ["m"], name="scale"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_model(), path)
    return path


def dlc(*args: object, cache: Path) -> int:
    return main([str(a) for a in args] + ["--cache-dir", str(cache)])


def expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x * np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8), 0)


def test_compile_then_run_the_library(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = tmp_path / "tiny.so"
    assert dlc("compile", tiny, "-o", library, cache=tmp_path / "c") == 0
    out = capsys.readouterr().out
    assert f"-> {library}" in out and "kernels:" in out and "workspace:" in out
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(library), "--input", f"x={tmp_path / 'x.npy'}",
                 "--output-dir", str(tmp_path / "out")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "out" / "y.npy"), expected(x), rtol=1e-6)
    assert main(["run", str(library), "--input", str(tmp_path / "x.npy")]) == 0
    assert "// y: float32 [2, 8]" in capsys.readouterr().out


def test_run_compiles_an_onnx_model(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = np.ones((2, 8), np.float32)
    np.save(tmp_path / "x.npy", x)
    assert dlc("run", tiny, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir",
               tmp_path / "o", cache=tmp_path / "c") == 0
    np.testing.assert_allclose(np.load(tmp_path / "o" / "y.npy"), expected(x), rtol=1e-6)


def test_a_shapeless_input_runs_and_export_asks_for_its_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model whose input and output are declared with no shape (unknown rank, valid ONNX):
    `dlc run` takes the shape from the input file; `dlc compile -o` needs `--input-shape`,
    and without it is one error line, exit 1, no library written."""
    node = helper.make_node("Relu", ["x"], ["y"], name="act")
    graph = helper.make_graph([node], "shapeless",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = tmp_path / "shapeless.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "x.npy", x)
    assert dlc("run", model, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir",
               tmp_path / "o", cache=tmp_path / "c") == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "y.npy"), np.maximum(x, 0))
    capsys.readouterr()
    library = tmp_path / "shapeless.so"
    assert dlc("compile", model, "-o", library, cache=tmp_path / "c") == 1
    err = capsys.readouterr().err
    assert "x: float32 (no declared shape)" in err and "--input-shape" in err
    assert "Traceback" not in err and not library.exists()
    assert dlc("compile", model, "--input-shape", "x=2x3", "-o", library,
               cache=tmp_path / "c") == 0
    assert library.exists()


def test_profile_and_bench(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert dlc("profile", tiny, "--repeat", 3, cache=tmp_path / "c") == 0
    table = capsys.readouterr().out
    assert "scale, relu" in table and "whole model (one call)" in table
    assert dlc("bench", tiny, "--repeat", 5, "--compare", "ort", cache=tmp_path / "c") == 0
    out = capsys.readouterr().out
    assert "dlc:" in out and "ms median of 5" in out
    pytest.importorskip("onnxruntime")
    assert "dlc / onnxruntime" in out


def test_wrong_inputs_are_errors_that_write_nothing(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "bad.npy", np.ones((3, 8), np.float32))
    np.save(tmp_path / "f64.npy", np.ones((2, 8), np.float64))
    cache = tmp_path / "c"
    for args, message in [
        ((f"x={tmp_path / 'bad.npy'}",), r"input 0 ('x') of @main: expected shape (2, 8)"),
        ((f"x={tmp_path / 'f64.npy'}",), "expected dtype float32, found float64"),
        ((f"z={tmp_path / 'bad.npy'}",), "the model has no input 'z' (inputs: x)"),
        ((), "missing inputs: x"),
        ((f"x={tmp_path / 'none.npy'}",), "no such input file"),
    ]:
        inputs = [a for arg in args for a in ("--input", arg)]
        code = dlc("run", tiny, *inputs, "--output-dir", tmp_path / "out", cache=cache)
        err = capsys.readouterr().err
        assert code == 1 and err.startswith("dlc: error: ") and message in err, err
        assert "Traceback" not in err
        assert not (tmp_path / "out").exists()


def test_a_model_too_large_for_the_machine_is_an_error_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A padding of 2^31 (a fuzzed attribute) makes the small CNN's feature maps 2^31 wide: it
    compiles, but a call would need terabytes, and the compiled code does not check its
    allocations. Running it is an error that says how much, before any native code runs."""
    model = onnx.load(SMALL_CNN)
    conv = next(node for node in model.graph.node if node.op_type == "Conv")
    pads = next(attribute for attribute in conv.attribute if attribute.name == "pads")
    pads.ints[3] = 2**31
    onnx.save(model, tmp_path / "huge.onnx")
    library = tmp_path / "huge.so"
    assert dlc("compile", tmp_path / "huge.onnx", "-o", library, cache=tmp_path / "c") == 0
    capsys.readouterr()
    image = model.graph.input[0]
    shape = [d.dim_value for d in image.type.tensor_type.shape.dim]
    np.save(tmp_path / "image.npy", np.zeros(shape, np.float32))
    code = main(["run", str(library), "--input", f"{image.name}={tmp_path / 'image.npy'}",
                 "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("dlc: error: @main needs ") and "TiB of memory" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_bad_models_and_libraries_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="det0"),
         helper.make_node("Hardmax", ["x"], ["z"], name="hardmax0")], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [3, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "bad.onnx")
    assert dlc("compile", tmp_path / "bad.onnx", "-o", tmp_path / "bad.so",
               cache=tmp_path / "c") == 1
    err = capsys.readouterr().err
    assert err.startswith("dlc: error: ") and "Det" in err and "Hardmax" in err
    assert not (tmp_path / "bad.so").exists()
    assert main(["run", str(tmp_path / "missing.so")]) == 1
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "corrupt.so").write_bytes(b"not a library")
    assert main(["run", str(tmp_path / "corrupt.so")]) == 1
    assert "dlc: error: cannot load" in capsys.readouterr().err
    (tmp_path / "garbage.onnx").write_bytes(b"\x08\x01garbage")
    assert dlc("compile", tmp_path / "garbage.onnx", cache=tmp_path / "c") == 1
    assert "dlc: error: " in capsys.readouterr().err


def test_argument_errors(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert dlc("compile", tiny, "--input-shape", "x=2by8", cache=tmp_path / "c") == 1
    assert "expected NAME=DIMS" in capsys.readouterr().err
    assert dlc("compile", tiny, "-o", tmp_path / "tiny.dll", cache=tmp_path / "c") == 1
    assert "expected an output path ending in .so" in capsys.readouterr().err
    assert dlc("compile", tiny, "--target", "ptx", cache=tmp_path / "c") == 1
    assert ("invalid target 'ptx': expected a target kind (llvm, cuda, opencl), found 'ptx'"
            in capsys.readouterr().err)
    assert dlc("compile", tiny, "--target", "opencl", "--arch", "sm_90",
               cache=tmp_path / "c") == 1
    assert "--arch applies to --target cuda, found 'opencl'" in capsys.readouterr().err
    assert dlc("compile", tiny, "--target", "llvm -mcpu=z80", cache=tmp_path / "c") == 1
    assert ("invalid target 'llvm -mcpu=z80': expected a known CPU for -mcpu"
            in capsys.readouterr().err)
    assert dlc("compile", tiny, "--target", "opencl", "--emit", "ptx", cache=tmp_path / "c") == 1
    assert "found --target opencl --emit ptx" in capsys.readouterr().err
    assert dlc("run", tiny, "--pipeline", "gpu", cache=tmp_path / "c") == 1
    assert "no pipeline named 'gpu' (pipelines: cpu, cpu-direct," in capsys.readouterr().err


def test_pipeline_option(tiny: Path, tmp_path: Path) -> None:
    x = np.ones((2, 8), np.float32)
    np.save(tmp_path / "x.npy", x)
    assert dlc("run", tiny, "--pipeline", "cpu-direct", "--input", f"x={tmp_path / 'x.npy'}",
               "--output-dir", tmp_path / "o", cache=tmp_path / "c") == 0
    np.testing.assert_allclose(np.load(tmp_path / "o" / "y.npy"), expected(x), rtol=1e-6)


def test_emit_prints_the_lowered_code(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compile", str(tiny), "--emit", "llvm"]) == 0
    text = capsys.readouterr().out
    assert "define void @\"main\"" in text and "target triple" in text
    assert main(["compile", str(tiny), "--emit", "llvm", "-o", str(tmp_path / "m.ll")]) == 0
    assert "define void @\"main\"" in (tmp_path / "m.ll").read_text()


@pytest.mark.slow
def test_console_script_on_the_small_cnn(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH",
                                                                                 "")]))
    library = tmp_path / "small_cnn.so"
    cache = tmp_path / "cache"
    tool = [sys.executable, str(REPO / "tools" / "dlc")]
    result = subprocess.run([*tool, "compile", str(SMALL_CNN), "-o", str(library),
                             "--cache-dir", str(cache)], capture_output=True, text=True,
                            env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert "10 calls" in result.stdout
    image = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "image.npy", image)
    result = subprocess.run([*tool, "run", str(library), "--input", f"image={tmp_path}/image.npy",
                             "--output-dir", str(tmp_path / "out")], capture_output=True,
                            text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    from onnx.reference import ReferenceEvaluator

    (want,) = ReferenceEvaluator(str(SMALL_CNN)).run(None, {"image": image})
    got = np.load(tmp_path / "out" / "probabilities.npy")
    assert np.max(np.abs(got - want)) <= 1e-4 * np.max(np.abs(want))


def two_output_model() -> onnx.ModelProto:
    """Outputs `y:0` = Relu(x) and `y_0` = Neg(x): names that sanitise to the same file name."""
    nodes = [helper.make_node("Relu", ["x"], ["y:0"], name="relu"),
             helper.make_node("Neg", ["x"], ["y_0"], name="neg")]
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "two", [info("x", TensorProto.FLOAT, [2, 8])],
        [info("y:0", TensorProto.FLOAT, [2, 8]), info("y_0", TensorProto.FLOAT, [2, 8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_outputs_whose_file_names_collide_are_all_saved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`y:0` and `y_0` both sanitise to `y_0.npy`: the second gets another file, and the tool
    says which file holds which output."""
    model = tmp_path / "two.onnx"
    onnx.save(two_output_model(), model)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    assert dlc("run", model, "--input", tmp_path / "x.npy", "--output-dir", out,
               cache=tmp_path / "c") == 0
    printed = capsys.readouterr().out
    assert f"y:0: {out / 'y_0.npy'}" in printed and f"y_0: {out / 'y_0_1.npy'}" in printed
    np.testing.assert_array_equal(np.load(out / "y_0.npy"), np.maximum(x, 0))
    np.testing.assert_array_equal(np.load(out / "y_0_1.npy"), -x)


def test_output_file_names_are_plain_and_distinct() -> None:
    from dlc.tools.diagnostics import output_file_names

    assert output_file_names(["../escaped", "a/b", "..", "", "Y", "y", "y_1", "y"]) == [
        "_._escaped.npy", "a_b.npy", "_..npy", "output.npy", "Y.npy", "y_1.npy", "y_1_1.npy",
        "y_2.npy",
    ]


def test_run_seed_makes_the_random_inputs(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dlc run --seed N` runs on random inputs drawn from N: the same seed gives the same
    outputs, another seed others."""
    outputs = {}
    for run, seed in [("a", 1), ("b", 1), ("c", 2)]:
        assert dlc("run", tiny, "--seed", seed, "--output-dir", tmp_path / run,
                   cache=tmp_path / "cache") == 0
        outputs[run] = np.load(tmp_path / run / "y.npy")
    np.testing.assert_array_equal(outputs["a"], outputs["b"])
    assert not np.array_equal(outputs["a"], outputs["c"])
    assert dlc("run", tiny, cache=tmp_path / "cache") == 1
    assert "missing inputs: x (give --input NAME=FILE.npy, or --seed N" in capsys.readouterr().err


def test_cache_info_and_clear(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "c"
    assert dlc("compile", tiny, "-o", tmp_path / "tiny.so", cache=cache) == 0
    capsys.readouterr()
    assert dlc("cache", "info", cache=cache) == 0
    info = capsys.readouterr().out
    assert f"location: {cache}" in info and "1 kernels, 1 models" in info
    assert "limit 2.0 GiB" in info
    assert dlc("cache", "clear", cache=cache) == 0
    assert "removed 1 kernels and 1 models" in capsys.readouterr().out
    assert dlc("cache", "info", cache=cache) == 0
    assert "0 kernels, 0 models" in capsys.readouterr().out
    # a limit below one model's size: the compile leaves the cache within it
    assert dlc("compile", tiny, "-o", tmp_path / "tiny.so", "--cache-max-size", "1K",
               cache=cache) == 0
    from dlc.driver.cache import CompileCache

    assert CompileCache(cache, None).usage().bytes <= 1024
    assert dlc("run", tiny, "--seed", 0, "--cache-max-size", "lots", cache=cache) == 1
    assert "expected a size in bytes such as 2G" in capsys.readouterr().err


def test_profile_on_opencl_times_each_launch(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dlc profile --target opencl` times each kernel launch of the host plan (it crashed:
    'GpuExecutable' object has no attribute 'model')."""
    from dlc.runtime.opencl import unavailable_reason

    if (reason := unavailable_reason()) is not None:
        pytest.skip(reason)
    assert dlc("profile", tiny, "--target", "opencl", "--repeat", 3, cache=tmp_path / "c") == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines()[1:] if line.split()[0].isdigit()]
    assert rows and all(float(row.split()[2]) >= 0 for row in rows)
    assert "whole model (one call)" in table
