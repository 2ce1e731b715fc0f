"""The C interface of exported model libraries (`dlc.runtime.c_api`): the header, the exported
symbols, the C example and a concurrent C program built with `cc` against it, error codes, the
thread setter, `dlc compile --c-prefix` errors, and a portable AVX2 build."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.runtime.c_api import (
    CApiError,
    c_header,
    c_identifier,
    c_interface,
    c_wrapper_source,
    check_c_prefix,
    check_export_request,
    default_c_prefix,
)
from dlc.runtime.metadata import ArgumentSpec, FunctionSignature, ModelInfo
from dlc.tools.dlc_main import main
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dlc

REPO = Path(__file__).resolve().parent.parent
SMALL_CNN = REPO / "examples" / "small_cnn.onnx"
CC = shutil.which("cc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler 'cc'")
EXPORTED = {"small_cnn_run", "small_cnn_run_with_workspace", "small_cnn_set_num_threads",
            "small_cnn_get_num_threads", "small_cnn_error_string", "small_cnn_dlc_symbol",
            "dlc_prefix"}


def reference(images: np.ndarray) -> np.ndarray:
    """The small CNN's outputs for a batch of images (1, 3, 32, 32) each, by ONNX's reference
    evaluator."""
    session = ReferenceEvaluator(str(SMALL_CNN))
    return np.stack([session.run(None, {"image": image})[0] for image in images])


def assert_close(got: np.ndarray, want: np.ndarray) -> None:
    assert np.max(np.abs(got - want)) <= 1e-4 * max(float(np.max(np.abs(want))), 1e-6)


# ---------------------------------------------------------------------------------------------
# Prefixes and the header, without compiling
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["1model", "my-model", "int", "", "a b", "café"])
def test_a_prefix_that_is_no_c_identifier_is_rejected(prefix: str) -> None:
    with pytest.raises(CApiError, match="expected a C identifier"):
        check_c_prefix(prefix)


def test_default_prefixes_are_c_identifiers() -> None:
    assert default_c_prefix("small_cnn") == "small_cnn"
    assert default_c_prefix("resnet-18.v2") == "resnet_18_v2"
    assert default_c_prefix("3dunet") == "model_3dunet"
    assert default_c_prefix("---") == "model"
    assert c_identifier("int") == "int_"
    for name in ("resnet-18.v2", "3dunet", "---", "int", "é"):
        check_c_prefix(default_c_prefix(name))


def two_input_interface(prefix: str = "net", symbols: tuple[str, ...] = ()) -> object:
    signature = FunctionSignature("main", (
        ArgumentSpec("x", (1, 3, 8, 8), "float32"),
        ArgumentSpec("X", (4,), "int64"),
        ArgumentSpec("y", (1, 10), "float32"),
        ArgumentSpec("mask", (2, 2), "bool"),
    ), 2)
    info = ModelInfo("main", ("input.1", "input-1"), ("logits", "mask"), workspace_bytes=4096,
                     kernel_buffer_bytes=128)
    return c_interface(prefix, signature, info, symbols)


def test_the_header_declares_structs_constants_and_functions() -> None:
    text = c_header(two_input_interface(), "net.so")  # type: ignore[arg-type]
    assert "struct net_inputs {\n  const float *input_1;" in text
    # "input.1" and "input-1" both make input_1: the second gets its index (macros are
    # upper case, so names must differ ignoring case too)
    assert "const int64_t *input_1_1;" in text
    assert "struct net_outputs {\n  float *logits;" in text and "uint8_t *mask;" in text
    assert "#define NET_INPUT_INPUT_1_SHAPE {1, 3, 8, 8}" in text
    assert "#define NET_INPUT_INPUT_1_1_DTYPE \"int64\"" in text
    assert "#define NET_INPUT_INPUT_1_1_BYTES 32" in text
    assert "#define NET_OUTPUT_LOGITS_SIZE 10" in text
    assert "#define NET_OUTPUT_MASK_BYTES 4" in text
    assert "#define NET_WORKSPACE_BYTES 4096" in text
    assert "#define NET_NUM_INPUTS 2" in text
    assert "#define NET_OK 0" in text and "#define NET_ERROR_NULL_ARGUMENT 1" in text
    assert "int net_run(const struct net_inputs *inputs, struct net_outputs *outputs);" in text
    assert "int net_run_with_workspace(const struct net_inputs *inputs" in text
    assert "int net_set_num_threads(int num_threads);" in text
    assert "Thread safety:" in text and "untrusted source" in text


@needs_cc
def test_the_header_compiles_as_c_and_cpp(tmp_path: Path) -> None:
    header = tmp_path / "net.h"
    header.write_text(c_header(two_input_interface(), "net.so"))  # type: ignore[arg-type]
    source = tmp_path / "use.c"
    source.write_text('#include "net.h"\nint f(void) { struct net_inputs i = {NULL, NULL}; '
                      "return NET_NUM_INPUTS + (i.input_1 == 0); }\n")
    for language in ("c", "c++"):
        if language == "c++" and shutil.which("c++") is None:
            continue
        compiler = "cc" if language == "c" else "c++"
        result = subprocess.run([compiler, "-x", language, "-fsyntax-only", "-Wall", "-Wextra",
                                 "-Werror", f"-I{tmp_path}", str(source)],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr


def shaped_interface(output_sizes: tuple[object, ...] = (["floordiv", {"s": 1}, 2],),
                     batch: str = "", device: str | None = None) -> object:
    """An entry over runtime shapes: x[?, 3, ?] -> y[?, 3] (y's rows x's, halved)."""
    signature = FunctionSignature("main", (
        ArgumentSpec("x", (-1, 3, -1), "float32", batch),
        ArgumentSpec("y", (-1, 3), "float32", "", output_sizes),
    ), 1, dim_args=((0, 0), (0, 2), (1, 0)),
        size_checks=(("ge", {"s": 1}, 2, "'graph.pool' op needs 2 columns"),))
    return c_interface("net", signature, ModelInfo("main", ("x",), ("y",)), device=device)


def test_a_header_over_runtime_shapes_declares_the_shapes_struct(tmp_path: Path) -> None:
    text = c_header(shaped_interface(), "net.so")  # type: ignore[arg-type]
    assert ("struct net_shapes {\n  int64_t input_x[3]; /* \"x\" [-1, 3, -1] */\n"
            "  int64_t output_y[2];") in text
    assert "#define NET_INPUT_X_SHAPE {-1, 3, -1}" in text
    assert "#define NET_INPUT_X_ITEM_BYTES 4" in text and "NET_INPUT_X_SIZE" not in text
    assert "int net_output_shapes(struct net_shapes *shapes);" in text
    assert "int net_run_shaped(const struct net_shapes *shapes" in text
    assert "#define NET_ERROR_SHAPE 6" in text and "WORKSPACE" not in text
    assert "net_run(" not in text and "net_run_with_workspace" not in text
    source = tmp_path / "use.c"
    (tmp_path / "net.h").write_text(text)
    source.write_text('#include "net.h"\nint f(void) { struct net_shapes s = {{1, 3, 4}, {0}}; '
                      "return net_output_shapes(&s) + (int)s.output_y[0]; }\n")
    for compiler in ("cc", "c++"):
        if shutil.which(compiler) is None:
            continue
        result = subprocess.run([compiler, "-x", "c" if compiler == "cc" else "c++",
                                 "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                                 f"-I{tmp_path}", str(source)],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr


def test_the_wrapper_computes_shape_functions_in_c() -> None:
    source = c_wrapper_source(shaped_interface(), "net.h")  # type: ignore[arg-type]
    assert "const int64_t s0 = shapes->input_x[0];" in source
    assert "if (s1 < INT64_C(2))" in source
    assert "shapes->output_y[0] = dlc_floordiv_(s1, INT64_C(2));" in source
    assert "dlc_entry_((void *)inputs->x, (void *)outputs->y, computed.input_x[0], " \
           "computed.input_x[2], computed.output_y[0]);" in source


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"output_sizes": ()}, r"output 0 \('y'\) of @main has runtime dims \[-1, 3\] that no "
                           r"shape function computes from the inputs' sizes"),
    ({"output_sizes": (["floordiv", 8, {"s": 0}],)},
     r"@main: a size expression divides by \{'s': 0\}, not a positive constant"),
    ({"batch": "N"}, r"runtime size for dim 2 of argument 0 \('x'\): the C interface of a "
                     r"model with a dynamic batch takes the runtime rows of its batch only"),
    ({"device": "cuda"}, r"runtime size for dim 0 of argument 0 \('x'\): the C interface of "
                         r"a GPU library takes"),
])
def test_runtime_shapes_the_c_interface_cannot_describe_are_refused(kwargs: dict,
                                                                   message: str) -> None:
    with pytest.raises(CApiError, match=message):
        shaped_interface(**kwargs)


def test_a_prefix_that_clashes_with_a_model_symbol_is_rejected() -> None:
    with pytest.raises(CApiError, match="net_run, which the model already uses"):
        two_input_interface("net", ("net_run", "main"))


def test_an_element_type_without_a_c_type_is_rejected() -> None:
    signature = FunctionSignature("main", (ArgumentSpec("x", (2,), "complex64"),
                                           ArgumentSpec("y", (2,), "float32")), 1)
    api = c_interface("m", signature, ModelInfo("main", ("x",), ("y",)))
    with pytest.raises(CApiError, match="input 0 .'x'. has element type complex64"):
        c_header(api, "m.so")


# ---------------------------------------------------------------------------------------------
# The small CNN's library
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/small_cnn.onnx compiled for the host on 4 threads (`COMPILED_THREADS`) and
    exported with prefix small_cnn and its header beside it."""
    directory = tmp_path_factory.mktemp("capi")
    model = dlc.compile(SMALL_CNN, threads=COMPILED_THREADS, cache_dir=directory / "cache")
    path = model.export(directory / "small_cnn.so", c_prefix="small_cnn",
                        c_header=directory / "small_cnn.h")
    return path


COMPILED_THREADS = 4
"""The thread count the small CNN's library is compiled with (not the host's core count: the
tests must not depend on it)."""


def defined_dynamic_symbols(path: Path) -> set[str]:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    listing = subprocess.run([nm, "-D", "--defined-only", str(path)], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[-1] for line in listing.splitlines() if line.strip()}


def test_the_library_exports_only_the_prefixed_functions(library: Path) -> None:
    assert defined_dynamic_symbols(library) == EXPORTED


def test_dlc_load_reads_a_library_with_hidden_symbols(library: Path) -> None:
    loaded = dlc.load(library)
    assert loaded.native.prefix == "small_cnn"  # type: ignore[attr-defined]
    images = np.random.default_rng(1).standard_normal((2, 1, 3, 32, 32)).astype(np.float32)
    assert_close(np.stack([loaded(image) for image in images]), reference(images))
    # kernels and weights are found through the C interface (dlc profile replays them)
    assert loaded.model is not None
    for call in loaded.model.calls:
        assert loaded.native.symbol_address(call.symbol) != 0  # type: ignore[attr-defined]


def test_profiling_a_library_with_hidden_kernels(library: Path) -> None:
    from dlc.runtime.profiler import profile

    image = np.zeros((1, 3, 32, 32), np.float32)
    report = profile(dlc.load(library), [image], repeat=1)
    assert len(report.calls) == 10
    assert all(timing.seconds is not None for timing in report.calls)


def _functions(library: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(library))
    for name in ("small_cnn_run", "small_cnn_run_with_workspace"):
        getattr(lib, name).restype = ctypes.c_int
    lib.small_cnn_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.small_cnn_run_with_workspace.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.c_void_p, ctypes.c_size_t]
    lib.small_cnn_error_string.restype = ctypes.c_char_p
    return lib


def test_error_codes(library: Path) -> None:
    lib = _functions(library)
    image = np.zeros((1, 3, 32, 32), np.float32)
    out = np.zeros((1, 10), np.float32)
    inputs = (ctypes.c_void_p * 1)(image.ctypes.data)
    outputs = (ctypes.c_void_p * 1)(out.ctypes.data)
    nulls = (ctypes.c_void_p * 1)(None)
    assert lib.small_cnn_run(None, outputs) == 1
    assert lib.small_cnn_run(inputs, nulls) == 1
    assert lib.small_cnn_error_string(1).startswith(b"a struct pointer")
    workspace_bytes = dlc.load(library).model.workspace_bytes  # type: ignore[union-attr]
    assert workspace_bytes > 0
    raw = np.zeros(workspace_bytes + 128, np.uint8)
    aligned = raw.ctypes.data + (-raw.ctypes.data % 64)
    run = lib.small_cnn_run_with_workspace
    assert run(inputs, outputs, None, workspace_bytes) == 3
    assert run(inputs, outputs, aligned, workspace_bytes - 1) == 3
    assert run(inputs, outputs, aligned + 4, workspace_bytes) == 3
    assert not out.any()  # nothing written on an error
    assert run(inputs, outputs, aligned, workspace_bytes) == 0
    assert_close(out[None], reference(image[None]))
    assert lib.small_cnn_set_num_threads(-1) == 4
    assert lib.small_cnn_set_num_threads(3) == 0
    assert lib.small_cnn_get_num_threads() == 3
    assert lib.small_cnn_set_num_threads(0) == 0


def test_the_thread_setter_reaches_the_parallel_loops(library: Path) -> None:
    """The global that every parallel loop reads its team size from (`dlc_num_threads`) is the
    one the setter writes, and results stay right for 1, 2, 3 and the default thread count."""
    lib = _functions(library)
    loaded = dlc.load(library)
    image = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
    results = []
    for threads in (1, 2, 3, 0):
        assert lib.small_cnn_set_num_threads(threads) == 0
        setting = ctypes.c_int.from_address(
            loaded.native.symbol_address("dlc_num_threads"))  # type: ignore[attr-defined]
        assert setting.value == threads
        results.append(loaded(image))
    for result in results:
        assert_close(result[None], reference(image[None]))


def build_c_program(source: Path, library: Path, program: Path) -> None:
    """`cc` `source` against the library and its header (beside it) into `program`."""
    result = subprocess.run(
        [str(CC), "-O1", "-std=c11", "-Wall", "-Werror", "-pthread", f"-I{library.parent}",
         "-o", str(program), str(source), str(library), "-ldl", f"-Wl,-rpath,{library.parent}"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


@needs_cc
def test_the_thread_count_reaches_the_thread_pool(library: Path, tmp_path: Path) -> None:
    """The library's parallel loops run on the pool compiled into it, on the team size the
    setter asked for: a run with the count set to N leaves N - 1 pool threads beside the
    caller (the pool grows on demand and never shrinks), and 0 means the compiled count."""
    program = tmp_path / "thread_count"
    build_c_program(REPO / "tests" / "c" / "thread_count.c", library, program)
    result = subprocess.run([str(program), "1", "2", "1", "3", "0"], capture_output=True,
                            text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    seen = [line.split(": ") for line in result.stdout.splitlines()]
    assert [setting for setting, _ in seen] == ["1", "2", "1", "3", "0"], result.stdout
    assert [int(threads) for _, threads in seen] == [1, 2, 2, 3, COMPILED_THREADS], result.stdout


@needs_cc
def test_concurrent_runs_from_pthreads(library: Path, tmp_path: Path) -> None:
    program = tmp_path / "concurrent_runs"
    build_c_program(REPO / "tests" / "c" / "concurrent_runs.c", library, program)
    images = np.random.default_rng(3).standard_normal((5, 1, 3, 32, 32)).astype(np.float32)
    images.tofile(tmp_path / "inputs.bin")
    threads = 6
    result = subprocess.run([str(program), str(tmp_path / "inputs.bin"),
                             str(tmp_path / "outputs.bin"), str(threads), "3"],
                            capture_output=True, text=True, check=False, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    outputs = np.fromfile(tmp_path / "outputs.bin", np.float32).reshape(threads, 5, 1, 10)
    want = reference(images)
    for per_thread in outputs:
        assert_close(per_thread, want)


@needs_cc
def test_the_c_example_runs_against_the_library(library: Path, tmp_path: Path) -> None:
    """examples/c/main.c built with cc against the header and library, on a random input,
    agrees with ONNX's reference evaluator."""
    program = tmp_path / "small_cnn_demo"
    result = subprocess.run(
        [str(CC), "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{library.parent}",
         "-o", str(program), str(REPO / "examples" / "c" / "main.c"), str(library), "-lm",
         f"-Wl,-rpath,{library.parent}"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    image = np.random.default_rng(4).standard_normal((1, 1, 3, 32, 32)).astype(np.float32)
    image.tofile(tmp_path / "image.bin")
    result = subprocess.run([str(program), str(tmp_path / "image.bin"),
                             str(tmp_path / "scores.bin")],
                            capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    got = np.fromfile(tmp_path / "scores.bin", np.float32).reshape(1, 1, 10)
    want = reference(image)
    assert_close(got, want)
    printed = [float(v) for v in re.findall(r"probabilities\[\d\] = (\S+)", result.stdout)]
    assert_close(np.array(printed, np.float32), want.reshape(10))
    assert f"class {int(np.argmax(want))}" in result.stdout


@pytest.mark.slow
@needs_cc
def test_the_c_examples_makefile(tmp_path: Path) -> None:
    """`make` in a copy of examples/c: dlc compile (the CLI), cc, and a run."""
    if shutil.which("make") is None:
        pytest.skip("no make")
    example = tmp_path / "c"
    shutil.copytree(REPO / "examples" / "c", example)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO),
                                                       os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        ["make", "-C", str(example), f"DLC={sys.executable} {REPO / 'tools' / 'dlc'}",
         f"MODEL={SMALL_CNN}", f"DLCFLAGS=--cache-dir {tmp_path / 'cache'}"],
        capture_output=True, text=True, env=env, check=False, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (example / "small_cnn.h").is_file()
    # the fixed input of main.c
    image = ((np.arange(3072) * 37) % 101).astype(np.float32) / np.float32(101) - np.float32(0.5)
    want = reference(image.reshape(1, 1, 3, 32, 32)).reshape(10)
    printed = [float(v) for v in re.findall(r"probabilities\[\d\] = (\S+)", result.stdout)]
    assert_close(np.array(printed, np.float32), want)


# ---------------------------------------------------------------------------------------------
# A model without a workspace; dlc compile's options
# ---------------------------------------------------------------------------------------------


def relu_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@needs_cc
def test_a_model_without_workspace(tmp_path: Path) -> None:
    model = dlc.compile(relu_model(), cache_dir=tmp_path / "cache")
    path = model.export(tmp_path / "relu.so", c_header=tmp_path / "relu.h")
    assert "#define RELU_WORKSPACE_BYTES 0" in (tmp_path / "relu.h").read_text()
    assert defined_dynamic_symbols(path) == {
        name.replace("small_cnn", "relu") for name in EXPORTED}
    lib = ctypes.CDLL(str(path))
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    y = np.zeros_like(x)
    inputs = (ctypes.c_void_p * 1)(x.ctypes.data)
    outputs = (ctypes.c_void_p * 1)(y.ctypes.data)
    assert lib.relu_run_with_workspace(inputs, outputs, None, ctypes.c_size_t(0)) == 0
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_export_rejects_a_bad_prefix_before_writing(tmp_path: Path) -> None:
    model = dlc.compile(relu_model(), cache_dir=tmp_path / "cache")
    with pytest.raises(CApiError, match="found 'my-model'"):
        model.export(tmp_path / "relu.so", c_prefix="my-model")
    assert not (tmp_path / "relu.so").exists()


def test_dlc_compile_writes_the_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    source = tmp_path / "relu-net.onnx"
    onnx.save(relu_model(), source)
    library = tmp_path / "out.so"
    assert main(["compile", str(source), "-o", str(library), "--cache-dir",
                 str(tmp_path / "cache")]) == 0
    assert "C header:" in capsys.readouterr().out
    text = (tmp_path / "out.h").read_text()  # default: beside the library
    assert "int relu_net_run(" in text  # default prefix: from the model's name
    header = tmp_path / "inc" / "api.h"
    header.parent.mkdir()
    assert main(["compile", str(source), "-o", str(library), "--c-prefix", "net",
                 "--c-header", str(header), "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "int net_run(" in header.read_text()
    assert "net_run" in defined_dynamic_symbols(library)


def test_dlc_compile_rejects_a_header_in_a_missing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "relu.onnx"
    onnx.save(relu_model(), source)
    assert main(["compile", str(source), "-o", str(tmp_path / "relu.so"), "--c-header",
                 str(tmp_path / "missing" / "relu.h"), "--cache-dir",
                 str(tmp_path / "cache")]) == 1
    assert "no such directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["relu.onnx"]


@pytest.mark.parametrize("prefix", ["9lives", "a.b", "while"])
def test_dlc_compile_rejects_a_bad_prefix(
    prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "relu.onnx"
    onnx.save(relu_model(), source)
    assert main(["compile", str(source), "-o", str(tmp_path / "relu.so"), "--c-prefix", prefix,
                 "--cache-dir", str(tmp_path / "cache")]) == 1
    err = capsys.readouterr().err
    assert "--c-prefix: expected a C identifier as the C prefix" in err
    assert f"found '{prefix}'" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["relu.onnx"]  # nothing written


# ---------------------------------------------------------------------------------------------
# A portable AVX2 library
# ---------------------------------------------------------------------------------------------


def test_an_x86_64_v3_library_has_no_avx512_and_runs(tmp_path: Path) -> None:
    """--target 'llvm -mcpu=x86-64-v3' (AVX2 + FMA) builds a library that runs on any such
    CPU: its code uses ymm registers and never a zmm one (AVX-512), whatever the host."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("no objdump")
    if "avx2" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("the host cannot run AVX2 code")
    model = dlc.compile(SMALL_CNN, target="llvm -mcpu=x86-64-v3",
                        cache_dir=tmp_path / "cache")
    path = model.export(tmp_path / "small_cnn_avx2.so")
    disassembly = subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True,
                                 check=True).stdout
    assert "%ymm" in disassembly
    assert "%zmm" not in disassembly
    assert re.search(r"%k[0-7]\b", disassembly) is None  # nor AVX-512's mask registers
    image = np.random.default_rng(5).standard_normal((1, 1, 3, 32, 32)).astype(np.float32)
    assert_close(dlc.load(path)(image[0])[None], reference(image))


# ---------------------------------------------------------------------------------------------
# Two model libraries in one process
# ---------------------------------------------------------------------------------------------


@needs_cc
def test_two_model_libraries_in_one_program(library: Path, tmp_path: Path) -> None:
    """Both libraries export `dlc_prefix`: a C program links with both and calls both, and
    `dlc.load` reads each library's own prefix and metadata."""
    relu = dlc.compile(relu_model(), cache_dir=tmp_path / "cache").export(
        tmp_path / "relu.so", c_header=tmp_path / "relu.h")
    source = tmp_path / "both.c"
    source.write_text(
        '#include <stdio.h>\n#include "relu.h"\n#include "small_cnn.h"\n'
        "int main(void) {\n"
        "  static float x[RELU_INPUT_X_SIZE], y[RELU_OUTPUT_Y_SIZE];\n"
        "  static float image[SMALL_CNN_INPUT_IMAGE_SIZE], scores[10];\n"
        "  for (int i = 0; i < RELU_INPUT_X_SIZE; ++i) x[i] = (float)i - 16.0f;\n"
        "  struct relu_inputs ri = {.x = x}; struct relu_outputs ro = {.y = y};\n"
        "  struct small_cnn_inputs si = {.image = image};\n"
        "  struct small_cnn_outputs so = {.probabilities = scores};\n"
        "  if (relu_run(&ri, &ro) != RELU_OK || small_cnn_run(&si, &so) != SMALL_CNN_OK)\n"
        "    return 1;\n"
        '  printf("%g %g\\n", y[0], y[31]);\n'
        "  return 0;\n}\n")
    program = tmp_path / "both"
    result = subprocess.run(
        [str(CC), "-std=c11", "-Wall", "-Werror", f"-I{tmp_path}", f"-I{library.parent}",
         "-o", str(program), str(source), str(relu), str(library),
         f"-Wl,-rpath,{tmp_path}:{library.parent}"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    result = subprocess.run([str(program)], capture_output=True, text=True, check=False,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "15"]
    first, second = dlc.load(library), dlc.load(relu)
    assert first.native.prefix == "small_cnn"  # type: ignore[attr-defined]
    assert second.native.prefix == "relu"  # type: ignore[attr-defined]
    assert first.input_names == ("image",) and second.input_names == ("x",)


def test_export_requests_a_module_without_a_c_interface_cannot_make(tmp_path: Path) -> None:
    """A prefix or header asked of a module with no C interface: `CApiError` saying what to
    do, for CPU modules and GPU programs alike (a header in a missing directory: the export
    tests)."""
    for prefix, header in (("net", None), (None, tmp_path / "net.h")):
        with pytest.raises(CApiError, match=r"this module has no C interface \(it needs exactly "
                           r"one entry function\): export it without a C prefix or header"):
            check_export_request(None, prefix, header, "module")
    with pytest.raises(CApiError, match=r"this GPU program has no C interface"):
        check_export_request(None, "net", None, "GPU program")
    check_export_request(None, None, None, "module")  # nothing asked: nothing to refuse
