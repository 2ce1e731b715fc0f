"""GPU libraries (`dlc compile --target opencl|cuda -o model.so`, driver/gpu_library.py): the
device code and native host code in one .so that `dlc.load` opens with ctypes.

OpenCL libraries run in a fresh process on PoCL and match ONNX Runtime and the graph
interpreter, from Python (`dlc.load`) and from C through the library's header (`runtime.c_api`:
`<prefix>_run` over host arrays; only `<prefix>_*` and `dlc_prefix` exported). No GPU is lent to
these tests: a CUDA library's PTX is checked by `ptxas` (where it is on PATH), and its host code
runs against a fake CUDA driver (tests/gpu_library/fake_cuda.c: host memory, kernels that do
nothing, every driver call logged), whose log must show the launches the host plan makes (as the
Python host program, runtime.gpu_host, runs them), the copies, and every buffer freed.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module
from dlc.driver.build import export_for_device, lower
from dlc.driver.errors import CompileError
from dlc.driver.gpu import gpu_program
from dlc.driver.gpu_library import KERNELS_SYMBOL, export_gpu_library
from dlc.runtime.c_api import CApiError
from dlc.runtime.gpu_host import (
    Call,
    GpuProgram,
    HostFunction,
    HostPlan,
    HostProgram,
    KernelArgument,
    Launch,
    LaunchArgument,
    Scalar,
)
from dlc.runtime.gpu_library import bundled_opencl
from dlc.runtime.library import LibraryError, load_library
from dlc.runtime.metadata import ArgumentSpec, FunctionSignature, decode_metadata
from dlc.runtime.opencl import unavailable_reason as opencl_unavailable_reason
from dlc.tools.dlc_main import main
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

REPO = Path(__file__).resolve().parent.parent
SMALL_CNN = REPO / "examples" / "small_cnn.onnx"
FAKE_CUDA = Path(__file__).resolve().parent / "gpu_library" / "fake_cuda.c"
CALL_MLP = Path(__file__).resolve().parent / "gpu_library" / "call_mlp.c"
RNG = np.random.default_rng(20261202)

TWO_LAYERS = """
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>) -> tensor<8x4xf32> {
  %h = graph.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %r = graph.relu %h : tensor<8x32xf32>
  %w2 = graph.constant dense<0.25> : tensor<32x4xf32>
  %y = graph.matmul %r, %w2 : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %s = graph.constant dense<-0.5> : tensor<8x4xf32>
  %z = graph.add %y, %s : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %z : tensor<8x4xf32>
}
"""
"""Two layers with constants (weights on the device) and scalars in the kernels."""




NO_OPENCL = opencl_unavailable_reason()
needs_opencl = pytest.mark.skipif(NO_OPENCL is not None, reason=f"{NO_OPENCL}")
needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler 'cc' on PATH")


def module_of(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def gpu_library(tmp_path: Path, target: str, arch: str | None = None,
                c_prefix: str | None = None) -> Path:
    """TWO_LAYERS as a GPU library for `target` (with `c_prefix`: its header beside it)."""
    module = module_of(TWO_LAYERS)
    lower(module, "gpu-opencl" if target == "opencl" else "gpu-ptx")
    path = tmp_path / f"two_layers_{target}{arch or ''}.so"
    header = tmp_path / f"{c_prefix}.h" if c_prefix else None
    return export_gpu_library(gpu_program(module, target, arch), path, c_prefix, header)


def c_prefix_of(library: Path) -> str:
    handle = ctypes.CDLL(str(library))
    return ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(handle, "dlc_prefix"))).decode()


def exported_symbols(library: Path) -> set[str]:
    """The symbols the library defines for the dynamic linker (`nm -D --defined-only`)."""
    result = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                            text=True, check=True)
    return {line.split()[-1] for line in result.stdout.splitlines() if line.strip()}


def run_fresh(library: Path, inputs: Sequence[np.ndarray], tmp_path: Path,
              driver: Path | None = None, environment: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    """Run the library's entry in a new Python process (dlc.load: ctypes and NumPy only) on
    `inputs`; its outputs go to tmp_path/out<i>.npy, an ExecutableError to stdout."""
    for i, array in enumerate(inputs):
        np.save(tmp_path / f"in{i}.npy", array)
    script = f"""
import ctypes, sys
import numpy as np
import dlc
library = {str(library)!r}
m = dlc.load(library)
if {str(driver) if driver else None!r}:  # after dlc.load, which may pick pyopencl's loader
    handle = ctypes.CDLL(library)
    prefix = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(handle, "dlc_prefix")))
    setter = getattr(handle, prefix.decode() + "_set_driver_library")
    assert setter({str(driver).encode() if driver else b''!r}) == 0
assert "xdsl" not in sys.modules and "llvmlite" not in sys.modules
inputs = [np.load({str(tmp_path)!r} + f"/in{{i}}.npy") for i in range({len(inputs)})]
for call in range(2):
    print("call", call, file=sys.stderr, flush=True)
    try:
        results = m(*inputs)
    except dlc.ExecutableError as e:
        print("ExecutableError:", e)
        sys.exit(0)
results = results if isinstance(results, tuple) else (results,)
for i, array in enumerate(results):
    np.save({str(tmp_path)!r} + f"/out{{i}}.npy", array)
"""
    env = {**os.environ, "PYTHONPATH": str(REPO), **(environment or {})}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300, check=False)


# ----------------------------------------------------------------------------------------------
# OpenCL: built, loaded in a fresh process, run on PoCL
# ----------------------------------------------------------------------------------------------


@needs_cc
@needs_opencl
def test_opencl_library_matches_the_graph_interpreter_in_a_fresh_process(tmp_path: Path) -> None:
    library = gpu_library(tmp_path, "opencl")
    inputs = [RNG.standard_normal((8, 16)).astype(np.float32),
              RNG.standard_normal((16, 32)).astype(np.float32)]
    result = run_fresh(library, inputs, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ExecutableError" not in result.stdout, result.stdout
    (expected,) = run_module(module_of(TWO_LAYERS), inputs)
    np.testing.assert_allclose(np.load(tmp_path / "out0.npy"), expected, rtol=2e-4, atol=2e-4)


@needs_cc
@needs_opencl
def test_dlc_compile_opencl_library_matches_onnx_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ort = pytest.importorskip("onnxruntime")
    library = tmp_path / "small_cnn.so"
    assert main(["compile", str(SMALL_CNN), "--target", "opencl", "-o", str(library)]) == 0
    out = capsys.readouterr().out
    assert f"-> {library} for opencl" in out
    assert f"C header:  {tmp_path / 'small_cnn.h'} (functions small_cnn_run" in out
    session = ort.InferenceSession(str(SMALL_CNN), providers=["CPUExecutionProvider"])
    (spec,) = session.get_inputs()
    x = RNG.standard_normal([int(d) for d in spec.shape]).astype(np.float32)
    result = run_fresh(library, [x], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ExecutableError" not in result.stdout, result.stdout
    (expected,) = session.run(None, {spec.name: x})
    np.testing.assert_allclose(np.load(tmp_path / "out0.npy"), expected, rtol=1e-4, atol=1e-5)


@needs_cc
@needs_opencl
def test_compiled_opencl_executable_exports_a_library(tmp_path: Path) -> None:
    import dlc

    executable = dlc.compile(module_of(TWO_LAYERS), target="opencl")
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    w1 = RNG.standard_normal((16, 32)).astype(np.float32)
    library = executable.export(tmp_path / "exported.so", c_prefix="net",
                                c_header=tmp_path / "net.h")
    assert "int net_run(" in (tmp_path / "net.h").read_text()
    loaded = dlc.load(library)
    assert loaded.device == "opencl" and c_prefix_of(library) == "net"
    np.testing.assert_allclose(loaded(x, w1), executable(x, w1), rtol=1e-5, atol=1e-6)


@needs_cc
def test_opencl_library_without_a_driver_says_so(tmp_path: Path) -> None:
    library = gpu_library(tmp_path, "opencl")
    x, w1 = np.zeros((8, 16), np.float32), np.zeros((16, 32), np.float32)
    result = run_fresh(library, [x, w1], tmp_path, driver=tmp_path / "no" / "libOpenCL.so.1")
    assert result.returncode == 0, result.stderr
    assert (f"ExecutableError: @mlp failed on opencl: no OpenCL: cannot load "
            f"{tmp_path / 'no' / 'libOpenCL.so.1'}") in result.stdout


def c_caller(tmp_path: Path, library: Path) -> Path:
    """tests/gpu_library/call_mlp.c, which includes the library's header mlp.h (beside it),
    linked against `library`."""
    program = tmp_path / "call_mlp"
    subprocess.run(["cc", "-O1", "-Wall", "-Werror", "-I", str(library.parent), "-o",
                    str(program), str(CALL_MLP), str(library), f"-Wl,-rpath,{library.parent}"],
                   check=True, capture_output=True, text=True)
    return program


@needs_cc
@needs_opencl
def test_opencl_library_called_from_c_matches_the_graph_interpreter(tmp_path: Path) -> None:
    """A C program that includes the library's header calls mlp_run on host arrays (on PoCL
    where the system has no OpenCL); the library exports its C interface only."""
    library = gpu_library(tmp_path, "opencl", c_prefix="mlp")
    assert exported_symbols(library) == {
        "dlc_prefix", "mlp_run", "mlp_last_error", "mlp_set_driver_library", "mlp_error_string",
        "mlp_dlc_symbol"}
    header = (tmp_path / "mlp.h").read_text()
    assert "run_with_workspace" not in header.split("*/", 1)[1]  # said why, not declared
    assert "set_num_threads(" not in header and "HOST" in header
    inputs = [RNG.standard_normal((8, 16)).astype(np.float32),
              RNG.standard_normal((16, 32)).astype(np.float32)]
    env, driver = dict(os.environ), ""
    bundled = bundled_opencl()
    if bundled is not None:  # no system OpenCL: pyopencl's loader and PoCL, as documented
        env["PYOPENCL_HOME"] = str(bundled.home)
        env["LD_PRELOAD"] = ":".join(str(v) for v in bundled.vendors)
        driver = str(bundled.loader)
    result = subprocess.run([str(c_caller(tmp_path, library)), driver],
                            input=b"".join(a.tobytes() for a in inputs), capture_output=True,
                            env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stderr.decode()
    (expected,) = run_module(module_of(TWO_LAYERS), inputs)
    output = np.frombuffer(result.stdout, dtype=np.float32).reshape(8, 4)
    np.testing.assert_allclose(output, expected, rtol=2e-4, atol=2e-4)


# ----------------------------------------------------------------------------------------------
# CUDA: built without a GPU; PTX through ptxas; the host code against a fake driver
# ----------------------------------------------------------------------------------------------


def kernels_source(library: Path) -> str:
    """The library's `dlc_gpu_kernels`, found through its C interface as dlc.load finds it."""
    return ctypes.string_at(load_library(library).symbol_address(KERNELS_SYMBOL)).decode()


@needs_cc
def test_cuda_library_exports_its_c_interface_only(tmp_path: Path) -> None:
    library = gpu_library(tmp_path, "cuda", "sm_80")
    prefix = "two_layers_cudasm_80"  # the file name's
    handle = ctypes.CDLL(str(library))  # loads without libcuda: the driver is opened at first use
    assert c_prefix_of(library) == prefix
    assert exported_symbols(library) == {"dlc_prefix", *(f"{prefix}_{name}" for name in (
        "run", "last_error", "set_driver_library", "error_string", "dlc_symbol"))}
    for hidden in ("mlp", "dlc_last_error", "dlc_set_driver_library", "dlc_metadata",
                   KERNELS_SYMBOL, "dlc_gpu_open", "host_0", "run_0"):
        assert not hasattr(handle, hidden), hidden
    loaded = load_library(library)
    metadata = ctypes.string_at(loaded.symbol_address("dlc_metadata"))
    assert loaded.address("mlp") and loaded.address("dlc_set_driver_library")
    assert json.loads(metadata)["device"] == "cuda"
    signature = decode_metadata(metadata.decode())["mlp"]
    assert [a.shape for a in signature.arguments] == [(8, 16), (16, 32), (8, 4)]
    assert ".target sm_80" in kernels_source(library)


@needs_cc
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas on PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_cuda_library_ptx_passes_ptxas(tmp_path: Path, arch: str) -> None:
    library = tmp_path / f"small_cnn_{arch}.so"
    export_for_device(SMALL_CNN, f"cuda -arch={arch}", library)
    ptx = tmp_path / "kernels.ptx"
    ptx.write_text(kernels_source(library))
    assert f".target {arch}" in ptx.read_text()
    result = subprocess.run(["ptxas", f"-arch={arch}", str(ptx), "-o", str(tmp_path / "k.cubin")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def fake_driver(tmp_path: Path) -> Path:
    path = tmp_path / "libfakecuda.so"
    subprocess.run(["cc", "-O1", "-fPIC", "-shared", "-o", str(path), str(FAKE_CUDA)],
                   check=True, capture_output=True, text=True)
    return path


class Tagged:
    """A stand-in device buffer that says what it is: an entry argument, a weight, a temp."""

    def __init__(self, tag: tuple[Any, ...]) -> None:
        self.tag = tag


class TagBackend:
    """Runs a host plan in Python (runtime.gpu_host) and records the launches with their
    buffers' tags: what the generated host code must do."""

    def __init__(self) -> None:
        self.launches: list[tuple[Any, ...]] = []

    def allocate(self, nbytes: int) -> Tagged:
        return Tagged(("temp", max(1, nbytes)))

    def upload(self, array: np.ndarray) -> Tagged:
        return Tagged(("weight", max(1, array.nbytes)))

    def free(self, buffer: Tagged) -> None:
        pass

    def launch(self, kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int],
               args: Sequence[KernelArgument]) -> None:
        values = tuple(a.value.tag if a.is_buffer else
                       int.from_bytes(a.value.tobytes(), "little") for a in args)
        self.launches.append((kernel, grid, block, values))


def logged_calls(log: str, num_arguments: int) -> list[dict[str, Any]]:
    """The fake driver's log split by entry call: per call its launches (buffers replaced by
    tags as TagBackend makes them), copies, and the buffers allocated and not freed."""
    tags: dict[str, tuple[Any, ...]] = {}
    calls: list[dict[str, Any]] = []
    for line in log.splitlines():
        word, *rest = line.split()
        if word == "call":
            calls.append({"launches": [], "htod": [], "dtoh": [], "live": set(), "allocs": 0,
                          "events": []})
            continue
        if not calls:
            continue
        call = calls[-1]
        call["events"].append(word)
        if word == "alloc":
            nbytes, pointer = int(rest[0]), rest[1]
            index = call["allocs"]
            call["allocs"] += 1
            tags[pointer] = ("arg", index) if index < num_arguments else ("temp", nbytes)
            call["live"].add(pointer)
        elif word == "htod":
            pointer, nbytes = rest[0], int(rest[1])
            if tags[pointer][0] == "temp":  # a temp written at once: a weight
                tags[pointer] = ("weight", nbytes)
                call["live"].discard(pointer)  # kept on the device
            call["htod"].append((tags[pointer], nbytes))
            if tags[pointer][0] == "arg":
                call["events"][-1] = "htod arg"
        elif word == "dtoh":
            call["dtoh"].append((tags[rest[0]], int(rest[1])))
        elif word == "free":
            call["live"].discard(rest[0])
        elif word == "launch":
            name, sizes, values = rest[0], [int(v) for v in rest[1:7]], rest[7:]
            arguments = tuple(tags.get(v, int(v, 16)) for v in values)
            call["launches"].append((name, tuple(sizes[:3]), tuple(sizes[3:]), arguments))
    return calls


@needs_cc
def test_cuda_library_launches_the_host_plan_on_a_fake_driver(tmp_path: Path) -> None:
    module = module_of(TWO_LAYERS)
    lower(module, "gpu-ptx")
    program = gpu_program(module, "cuda", "sm_80")
    library = export_gpu_library(program, tmp_path / "two_layers.so")
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    w1 = RNG.standard_normal((16, 32)).astype(np.float32)
    result = run_fresh(library, [x, w1], tmp_path, driver=fake_driver(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "ExecutableError" not in result.stdout, result.stdout

    backend = TagBackend()
    HostProgram(program.plan).call("mlp", [Tagged(("arg", i)) for i in range(3)], backend)
    first, second = logged_calls(result.stderr, num_arguments=3)
    assert backend.launches and first["launches"] == backend.launches
    assert second["launches"] == backend.launches  # the same weights, uploaded once
    weights = [h for h in first["htod"] if h[0][0] == "weight"]
    assert weights and not [h for h in second["htod"] if h[0][0] == "weight"]
    assert "module" in result.stderr.split("call 1")[0] and "module" not in second["events"]
    for call in (first, second):
        assert [h for h in call["htod"] if h[0][0] == "arg"] == [(("arg", 0), x.nbytes),
                                                                 (("arg", 1), w1.nbytes)]
        assert call["dtoh"] == [(("arg", 2), 8 * 4 * 4)]
        events = call["events"]
        assert events.index("dtoh") > max(i for i, e in enumerate(events) if e == "launch")
        assert max(i for i, e in enumerate(events) if e == "htod arg") < events.index("launch")
        assert not call["live"], "every buffer but the weights is freed"


@needs_cc
def test_cuda_library_reports_a_failed_launch_and_frees_its_buffers(tmp_path: Path) -> None:
    library = gpu_library(tmp_path, "cuda", "sm_80")
    x, w1 = np.zeros((8, 16), np.float32), np.zeros((16, 32), np.float32)
    result = run_fresh(library, [x, w1], tmp_path, driver=fake_driver(tmp_path),
                       environment={"FAKE_CUDA_FAIL_LAUNCH": "1"})
    assert result.returncode == 0, result.stderr
    assert "ExecutableError: @mlp failed on cuda: cuLaunchKernel(" in result.stdout
    assert "failed: CUDA_ERROR_FAKE (719)" in result.stdout
    (call,) = logged_calls(result.stderr, num_arguments=3)
    assert not call["live"] and not call["launches"]


@needs_cc
def test_cuda_library_called_from_c_copies_through_the_driver(tmp_path: Path) -> None:
    """From C through the header on the fake driver: mlp_run succeeds, and the output comes
    back from device memory (the fake's kernels do nothing: the output is what the allocation
    held, so only its size is checked); without a driver mlp_run returns MLP_ERROR_DEVICE and
    mlp_last_error the message."""
    library = gpu_library(tmp_path, "cuda", "sm_80", c_prefix="mlp")
    assert "#define MLP_ERROR_DEVICE 5" in (tmp_path / "mlp.h").read_text()
    program = c_caller(tmp_path, library)
    data = np.zeros(8 * 16 + 16 * 32, np.float32).tobytes()
    result = subprocess.run([str(program), str(fake_driver(tmp_path))], input=data,
                            capture_output=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr.decode()
    assert len(result.stdout) == 8 * 4 * 4
    assert b"launch fused_" in result.stderr
    result = subprocess.run([str(program), str(tmp_path / "none.so")], input=data,
                            capture_output=True, timeout=60, check=False)
    assert result.returncode == 5, result.stderr.decode()
    assert (f"mlp_run returned 5 (the device runtime failed (no driver or device, or a failed "
            f"build, allocation, copy or launch): the last_error function says why): no CUDA "
            f"driver: cannot load {tmp_path / 'none.so'}") in result.stderr.decode()


@needs_cc
def test_cuda_library_without_a_driver_says_so(tmp_path: Path) -> None:
    library = gpu_library(tmp_path, "cuda", "sm_80")
    missing = tmp_path / "libcuda.so.1"
    result = run_fresh(library, [np.zeros((8, 16), np.float32), np.zeros((16, 32), np.float32)],
                       tmp_path, driver=missing)
    assert f"ExecutableError: @mlp failed on cuda: no CUDA driver: cannot load {missing}" in (
        result.stdout)


# ----------------------------------------------------------------------------------------------
# Host plans with scalar arguments and calls (which the GPU pipelines make rarely)
# ----------------------------------------------------------------------------------------------

SCALE_OPENCL = """
__kernel void scale(__global float *y, __global const float *x, float a, long n, int b) {
  long i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + (float)b;
}
"""

SCALE_PTX = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u64 scale_param_1,
	.param .f32 scale_param_2,
	.param .u64 scale_param_3,
	.param .u32 scale_param_4
)
{
	ret;
}
"""
"""What the fake driver reads of a kernel: its parameters (it runs nothing)."""


def scale_program(target: str) -> GpuProgram:
    """@scale_entry(x, y): y = 2.5 * x - 3 over 16 floats, through a call of @inner with the
    scalars, which launches one kernel with float, int64 and int32 scalar arguments."""
    launch = Launch("scale", (1, 1, 1), (16, 1, 1), (
        LaunchArgument(1), LaunchArgument(0), LaunchArgument(2, "float32"),
        LaunchArgument(3, "int64"), LaunchArgument(4, "int32")))
    inner = HostFunction("inner", 5, (launch,))
    entry = HostFunction("scale_entry", 2, (
        Scalar(2, 2.5), Scalar(3, 16), Scalar(4, -3), Call("inner", (0, 1, 2, 3, 4))))
    arguments = (ArgumentSpec("x", (16,), "float32"), ArgumentSpec("y", (16,), "float32"))
    plan = HostPlan({"scale_entry": entry, "inner": inner}, {},
                    {"scale_entry": FunctionSignature("scale_entry", arguments, 1)})
    return GpuProgram(target, SCALE_OPENCL if target == "opencl" else SCALE_PTX, plan)


@needs_cc
@needs_opencl
def test_scalar_arguments_and_calls_run_on_opencl(tmp_path: Path) -> None:
    library = export_gpu_library(scale_program("opencl"), tmp_path / "scale.so")
    x = RNG.standard_normal(16).astype(np.float32)
    result = run_fresh(library, [x], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ExecutableError" not in result.stdout, result.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out0.npy"), 2.5 * x - 3, rtol=1e-6)


@needs_cc
@needs_opencl
def test_opencl_build_failure_is_reported_with_the_log(tmp_path: Path) -> None:
    program = scale_program("opencl")
    broken = GpuProgram("opencl", program.source.replace("float a,", "flot a,"), program.plan)
    library = export_gpu_library(broken, tmp_path / "broken.so")
    result = run_fresh(library, [np.zeros(16, np.float32)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert ("ExecutableError: @scale_entry failed on opencl: the OpenCL C program failed to "
            "build (-11): ") in result.stdout
    assert "flot" in result.stdout  # the compiler's log names the error


@needs_cc
def test_scalar_arguments_reach_the_cuda_launch(tmp_path: Path) -> None:
    program = scale_program("cuda")
    library = export_gpu_library(program, tmp_path / "scale.so")
    result = run_fresh(library, [np.zeros(16, np.float32)], tmp_path,
                       driver=fake_driver(tmp_path))
    assert result.returncode == 0, result.stderr
    backend = TagBackend()
    HostProgram(program.plan).call("scale_entry", [Tagged(("arg", i)) for i in range(2)],
                                   backend)
    assert backend.launches[0][3][2:] == (0x40200000, 16, 0xFFFFFFFD)  # 2.5f, 16, -3
    first, _ = logged_calls(result.stderr, num_arguments=2)
    assert first["launches"] == backend.launches


@needs_cc
def test_program_with_two_entries_exports_them_without_a_c_interface(tmp_path: Path) -> None:
    program = scale_program("cuda")
    plan = program.plan
    again = HostFunction("scale_again", 2, plan.functions["scale_entry"].steps)
    signature = FunctionSignature("scale_again", plan.signatures["scale_entry"].arguments, 1)
    two = GpuProgram("cuda", program.source, HostPlan(
        {**plan.functions, "scale_again": again}, {},
        {**plan.signatures, "scale_again": signature}))
    with pytest.raises(CApiError, match="no C interface .* exactly one entry function"):
        export_gpu_library(two, tmp_path / "two.so", c_prefix="scale")
    assert list(tmp_path.iterdir()) == []
    library = export_gpu_library(two, tmp_path / "two.so")
    assert {"scale_entry", "scale_again", "dlc_last_error", "dlc_set_driver_library"} <= (
        exported_symbols(library))
    assert "dlc_prefix" not in exported_symbols(library)


# ----------------------------------------------------------------------------------------------
# Errors at export
# ----------------------------------------------------------------------------------------------


def test_export_without_a_c_compiler_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    library = tmp_path / "model.so"
    with pytest.raises(CompileError, match="no C compiler driver 'cc' on PATH"):
        export_for_device(module_of(TWO_LAYERS), "opencl", library)
    assert list(tmp_path.iterdir()) == []


def test_export_for_a_cpu_target_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="expected a GPU target .* found 'llvm'"):
        export_for_device(module_of(TWO_LAYERS), "llvm", tmp_path / "model.so")


@needs_cc
def test_failed_export_leaves_nothing(tmp_path: Path) -> None:
    module = module_of(TWO_LAYERS)
    lower(module, "gpu-opencl")
    program = gpu_program(module, "opencl")
    with pytest.raises(LibraryError, match="cannot write .*: no such directory"):
        export_gpu_library(program, tmp_path / "missing" / "model.so")
    bad = type(program)("vulkan", program.source, program.plan)
    with pytest.raises(LibraryError, match="expected a GPU program for opencl or cuda, found "
                       "one for 'vulkan'"):
        export_gpu_library(bad, tmp_path / "model.so")
    assert list(tmp_path.iterdir()) == []


@needs_cc
def test_cli_gpu_library_with_a_c_prefix_and_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library, header = tmp_path / "m.so", tmp_path / "include" / "net.h"
    header.parent.mkdir()
    assert main(["compile", str(SMALL_CNN), "--target", "cuda", "--arch", "sm_90", "--c-prefix",
                 "net", "--c-header", str(header), "-o", str(library)]) == 0
    assert f"C header:  {header} (functions net_run, net_last_error" in capsys.readouterr().out
    assert exported_symbols(library) == {"dlc_prefix", "net_run", "net_last_error",
                                         "net_set_driver_library", "net_error_string",
                                         "net_dlc_symbol"}
    text = header.read_text()
    assert "int net_run(const struct net_inputs *inputs, struct net_outputs *outputs);" in text
    assert '#define NET_DEVICE "cuda"' in text and "WORKSPACE_BYTES" not in text
    program = tmp_path / "includes_it.c"  # the header compiles as C, and as C++'s extern "C"
    program.write_text('#include "net.h"\nint main(void) { return net_run(0, 0) != '
                       "NET_ERROR_NULL_ARGUMENT; }\n")
    subprocess.run(["cc", "-Wall", "-Werror", "-I", str(header.parent), "-o",
                    str(tmp_path / "includes_it"), str(program), str(library)],
                   check=True, capture_output=True, text=True)
    assert subprocess.run([str(tmp_path / "includes_it")], env={
        **os.environ, "LD_LIBRARY_PATH": str(tmp_path)}, check=False).returncode == 0
    assert main(["compile", str(SMALL_CNN), "--target", "opencl", "--c-prefix", "int",
                 "-o", str(tmp_path / "n.so")]) == 1
    assert "--c-prefix: expected a C identifier" in capsys.readouterr().err
    assert not (tmp_path / "n.so").exists()


def test_cli_gpu_library_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(SMALL_CNN), "--target", "opencl", "--arch", "sm_90",
                 "-o", str(tmp_path / "m.so")]) == 1
    assert "--arch applies to --target cuda, found 'opencl'" in capsys.readouterr().err
    assert main(["compile", str(SMALL_CNN), "--target", "cuda", "--check-bounds",
                 "-o", str(tmp_path / "m.so")]) == 1
    assert "expected a CPU --target with --check-bounds" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
