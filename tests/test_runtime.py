"""The runtime: JIT engines, exported shared libraries loaded with ctypes alone, Executable's
argument checks, the metadata format, and the dlc-run tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from dlc.driver.errors import CompileError
from dlc.driver.jit import JitError, compile_llvm_ir
from dlc.driver.source import parse_module
from dlc.runtime.executable import Executable, ExecutableError
from dlc.runtime.library import LibraryError
from dlc.runtime.metadata import (
    ArgumentSpec,
    FunctionSignature,
    MetadataError,
    ModelInfo,
    decode_metadata,
    decode_model_info,
    encode_metadata,
    encode_model_info,
)

import dlc

REPO = Path(__file__).resolve().parent.parent
RNG = np.random.default_rng(7)

# Two entry functions: a matmul (one output) and a fused scale + row sum (two outputs).
KERNELS = """
func.func @matmul(%A: memref<8x12xf32>, %B: memref<12x5xf32>, %C: memref<8x5xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %j = %c0 to %c5 step %c1 axis "j" {
      loop.store %zero, %C[%i, %j] : f32 -> memref<8x5xf32>
      loop.for %k = %c0 to %c12 step %c1 axis "k" {
        %a = loop.load %A[%i, %k] : memref<8x12xf32> -> f32
        %b = loop.load %B[%k, %j] : memref<12x5xf32> -> f32
        %c = loop.load %C[%i, %j] : memref<8x5xf32> -> f32
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        loop.store %s, %C[%i, %j] : f32 -> memref<8x5xf32>
      }
    }
  }
  func.return
}

func.func @scale_and_sum(%X: memref<3x32xf64>, %k: memref<f64>, %Y: memref<3x32xf64>,
                         %S: memref<3xf64>) attributes {dlc.num_outputs = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f64
  %factor = loop.load %k[] : memref<f64> -> f64
  loop.for %i = %c0 to %c3 step %c1 axis "i" {
    loop.store %zero, %S[%i] : f64 -> memref<3xf64>
    loop.for %j = %c0 to %c32 step %c1 axis "j" {
      %x = loop.load %X[%i, %j] : memref<3x32xf64> -> f64
      %y = arith.mulf %x, %factor : f64
      loop.store %y, %Y[%i, %j] : f64 -> memref<3x32xf64>
      %s = loop.load %S[%i] : memref<3xf64> -> f64
      %t = arith.addf %s, %y : f64
      loop.store %t, %S[%i] : f64 -> memref<3xf64>
    }
  }
  func.return
}
"""


@pytest.fixture(scope="module")
def kernels_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kernels") / "kernels.mlir"
    path.write_text(KERNELS)
    return path


@pytest.fixture(scope="module")
def matmul(kernels_path: Path) -> Executable:
    return dlc.compile(kernels_path, entry="matmul")


# ------------------------------------------------------------------------------------------
# JIT
# ------------------------------------------------------------------------------------------

ADD_IR = """
define void @add(ptr %a, ptr %b, ptr %c) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %pc = getelementptr inbounds float, ptr %c, i64 %i
  %x = load float, ptr %pa
  %y = load float, ptr %pb
  %z = fadd float %x, %y
  store float %z, ptr %pc
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, 100
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""


def test_jit_compiles_llvm_ir_and_exposes_function_addresses() -> None:
    import ctypes

    jit = compile_llvm_ir(ADD_IR, opt_level=2)
    assert jit.function_names == {"add"}
    assert jit.metadata_text() is None
    prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    add = prototype(jit.address("add"))
    a, b = RNG.random(100, dtype=np.float32), RNG.random(100, dtype=np.float32)
    c = np.empty(100, dtype=np.float32)
    add(a.ctypes.data, b.ctypes.data, c.ctypes.data)
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(JitError, match=r"no function @sub in the compiled module \(defined: add\)"):
        jit.address("sub")


def test_jit_reports_invalid_ir() -> None:
    with pytest.raises(JitError, match="invalid LLVM IR"):
        compile_llvm_ir("define void @f( {")


def test_several_engines_coexist() -> None:
    engines = [compile_llvm_ir(ADD_IR, opt_level=level) for level in (0, 1, 3)]
    addresses = {engine.address("add") for engine in engines}
    assert len(addresses) == 3


# ------------------------------------------------------------------------------------------
# Executable
# ------------------------------------------------------------------------------------------


def test_executable_allocates_aligned_outputs_and_matches_numpy(matmul: Executable) -> None:
    a = RNG.standard_normal((8, 12), dtype=np.float32)
    b = RNG.standard_normal((12, 5), dtype=np.float32)
    c = matmul(a, b)
    assert c.ctypes.data % 64 == 0
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    # Non-contiguous inputs are made contiguous, not rejected.
    np.testing.assert_allclose(matmul(a, np.asfortranarray(b)), a @ b, rtol=1e-5, atol=1e-5)


def test_executable_rejects_wrong_inputs_naming_the_argument(matmul: Executable) -> None:
    a = np.zeros((8, 12), np.float32)
    with pytest.raises(ExecutableError, match=r"@matmul expects 2 inputs \(A, B\), found 1"):
        matmul(a)
    with pytest.raises(
        ExecutableError,
        match=r"input 1 \('B'\) of @matmul: expected shape \(12, 5\), found \(5, 12\)",
    ):
        matmul(a, np.zeros((5, 12), np.float32))
    with pytest.raises(
        ExecutableError, match=r"input 0 \('A'\) of @matmul: expected dtype float32, found float64"
    ):
        matmul(a.astype(np.float64), np.zeros((12, 5), np.float32))


def test_executable_writes_into_given_outputs(matmul: Executable) -> None:
    a = RNG.standard_normal((8, 12), dtype=np.float32)
    b = RNG.standard_normal((12, 5), dtype=np.float32)
    c = np.full((8, 5), np.nan, np.float32)
    assert matmul(a, b, out=[c]) is c
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    overlapping = np.zeros((8, 12), np.float32)
    view = overlapping.reshape(-1)[:40].reshape(8, 5)
    with pytest.raises(ExecutableError, match="output 2 of @matmul overlaps another argument"):
        matmul(overlapping, b, out=[view])


def test_executable_refuses_read_only_outputs(matmul: Executable) -> None:
    """A read-only output (an immutable buffer, a read-only memmap) is an error, not a write."""
    a = RNG.standard_normal((8, 12), dtype=np.float32)
    b = RNG.standard_normal((12, 5), dtype=np.float32)
    frozen = bytes(8 * 5 * 4)
    c = np.frombuffer(frozen, np.float32).reshape(8, 5)
    with pytest.raises(ExecutableError,
                       match="output 2 of @matmul: expected a writeable array, found a read-only"):
        matmul(a, b, out=[c])
    assert frozen == bytes(8 * 5 * 4)


def test_export_of_a_loaded_library_does_not_follow_a_planted_link(
    matmul: Executable, tmp_path: Path
) -> None:
    """Exporting a loaded library writes a fresh file (no predictable temporary name that a
    link could redirect) and replaces the destination atomically."""
    (tmp_path / "built").mkdir()
    matmul_library = matmul.export(tmp_path / "built" / "matmul.so")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "copy.so"
    (tmp_path / ".copy.so.tmp").symlink_to(victim)
    dlc.load(matmul_library, entry="matmul").export(out)
    assert victim.read_text() == "keep"
    assert out.read_bytes() == matmul_library.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".copy.so.tmp", "built", "copy.so", "victim.txt"]


def test_a_value_used_before_its_definition_is_a_compile_error(tmp_path: Path) -> None:
    """`%a = graph.add %x, %a` parses in xDSL; dlc refuses it instead of compiling a read of
    memory nothing wrote."""
    path = tmp_path / "cycle.mlir"
    path.write_text("""
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.add %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}""")
    with pytest.raises(CompileError, match=r"'graph.add' op operand #1 \(%a\) is used before "
                                           "it is defined"):
        dlc.compile(path, cache=False)


def test_entry_selection(kernels_path: Path) -> None:
    with pytest.raises(
        ExecutableError,
        match=r"expected one entry function or an explicit entry, found @matmul, @scale_and_sum",
    ):
        dlc.compile(kernels_path)
    with pytest.raises(ExecutableError, match=r"no entry function @nope \(entry functions: "):
        dlc.compile(kernels_path, entry="nope")


def test_multiple_outputs_and_rank_zero_inputs(matmul: Executable) -> None:
    scale_and_sum = matmul.entry("scale_and_sum")
    x = RNG.standard_normal((3, 32))
    y, s = scale_and_sum(x, np.array(2.5))
    np.testing.assert_allclose(y, x * 2.5)
    np.testing.assert_allclose(s, (x * 2.5).sum(axis=1))


def test_compile_rejects_unknown_targets_and_leaves_modules_alone(kernels_path: Path) -> None:
    with pytest.raises(CompileError, match=r"invalid target 'ptx': expected a target kind "
                                           r"\(llvm, cuda, opencl\), found 'ptx'"):
        dlc.compile(kernels_path, target="ptx")
    module = parse_module(kernels_path)
    before = str(module)
    dlc.compile(module, entry="matmul")
    assert str(module) == before


# ------------------------------------------------------------------------------------------
# Shared libraries
# ------------------------------------------------------------------------------------------

LOAD_IN_FRESH_PROCESS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import dlc

    library, inputs, output = sys.argv[1], sys.argv[2], sys.argv[3]
    data = np.load(inputs)
    matmul = dlc.load(library, entry="matmul")
    scale_and_sum = matmul.entry("scale_and_sum")
    c = matmul(data["a"], data["b"])
    y, s = scale_and_sum(data["x"], data["k"])
    np.savez(output, c=c, y=y, s=s)
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("llvmlite", "xdsl"))
    assert not heavy, heavy
    """
)


def test_exported_library_runs_in_a_process_without_llvmlite(
    matmul: Executable, tmp_path: Path
) -> None:
    library = matmul.export(tmp_path / "kernels.so")
    assert library == tmp_path / "kernels.so" and library.is_file()
    a = RNG.standard_normal((8, 12), dtype=np.float32)
    b = RNG.standard_normal((12, 5), dtype=np.float32)
    x = RNG.standard_normal((3, 32))
    k = np.array(-0.75)
    np.savez(tmp_path / "inputs.npz", a=a, b=b, x=x, k=k)
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    result = subprocess.run(
        [sys.executable, "-c", LOAD_IN_FRESH_PROCESS, str(library), str(tmp_path / "inputs.npz"),
         str(tmp_path / "outputs.npz")],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
    )
    assert result.returncode == 0, result.stderr
    loaded = np.load(tmp_path / "outputs.npz")
    np.testing.assert_array_equal(loaded["c"], matmul(a, b))
    y, s = matmul.entry("scale_and_sum")(x, k)
    np.testing.assert_array_equal(loaded["y"], y)
    np.testing.assert_array_equal(loaded["s"], s)


def test_loaded_library_checks_inputs_and_reexports(matmul: Executable, tmp_path: Path) -> None:
    library = matmul.export(tmp_path / "mm.so")
    loaded = dlc.load(library, entry="matmul")
    assert loaded.signature == matmul.signature
    with pytest.raises(ExecutableError, match=r"input 0 \('A'\) of @matmul: expected shape"):
        loaded(np.zeros((2, 2), np.float32), np.zeros((12, 5), np.float32))
    copy = loaded.export(tmp_path / "copy.so")
    assert copy.read_bytes() == library.read_bytes()


def test_export_without_a_c_compiler_is_a_clear_error(
    matmul: Executable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dlc.driver.export.shutil.which", lambda name: None)
    with pytest.raises(LibraryError, match="no C compiler driver 'cc' on PATH"):
        matmul.export(tmp_path / "nope.so")
    assert not (tmp_path / "nope.so").exists()


def test_loading_a_missing_library_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="no shared library at"):
        dlc.load(tmp_path / "missing.so")


# ------------------------------------------------------------------------------------------
# Metadata
# ------------------------------------------------------------------------------------------


def test_metadata_round_trips() -> None:
    signatures = [
        FunctionSignature(
            "f", (ArgumentSpec("x", (2, 3), "float32"), ArgumentSpec("y", (), "int64")), 1
        )
    ]
    decoded = decode_metadata(encode_metadata(signatures))
    assert decoded == {"f": signatures[0]}
    assert decoded["f"].inputs == signatures[0].arguments[:1]
    assert decoded["f"].outputs == signatures[0].arguments[1:]


def test_model_info_round_trips_its_memory_needs() -> None:
    """`kernel_buffer_bytes` is stored with the model; a library written before it was recorded
    reads as 0."""
    info = ModelInfo("main", ("x",), ("y",), workspace_bytes=4096, weight_bytes=64,
                     kernel_buffer_bytes=1 << 20)
    decoded = decode_model_info(encode_model_info(info))
    assert decoded == info and decoded.memory_bytes == 4096 + (1 << 20)
    older = json.loads(encode_model_info(info))
    del older["kernel_buffer_bytes"]
    assert decode_model_info(json.dumps(older)).kernel_buffer_bytes == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "malformed dlc metadata"),
        ('{"version": 2, "functions": []}', "expected dlc metadata version 1, found 2"),
        ('{"version": 1, "functions": [{"name": "f"}]}', "malformed dlc metadata: KeyError"),
    ],
)
def test_malformed_metadata_is_rejected(text: str, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        decode_metadata(text)


# ------------------------------------------------------------------------------------------
# dlc-run
# ------------------------------------------------------------------------------------------


def dlc_run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "tools" / "dlc-run"), *map(str, args)],
        capture_output=True, text=True, cwd=cwd, check=False,
    )


def test_dlc_run_prints_and_saves_outputs(kernels_path: Path, tmp_path: Path) -> None:
    a = RNG.standard_normal((8, 12), dtype=np.float32)
    b = RNG.standard_normal((12, 5), dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    printed = dlc_run(kernels_path, "--entry", "matmul", "--input", "a.npy", "b.npy", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("// matmul_out0: float32 [8, 5]\n")
    saved = dlc_run(
        kernels_path, "--entry", "matmul", "--input", "a.npy", "--input", "b.npy",
        "--output-dir", "out", cwd=tmp_path,
    )
    assert saved.returncode == 0, saved.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out" / "matmul_out0.npy"), a @ b, rtol=1e-5,
                               atol=1e-5)


ESCAPING_NAME = """
func.func @"../escaped"(%X: memref<4xf32>, %Y: memref<4xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    %x = loop.load %X[%i] : memref<4xf32> -> f32
    loop.store %x, %Y[%i] : f32 -> memref<4xf32>
  }
  func.return
}
"""


def test_dlc_run_saves_inside_the_output_dir_whatever_the_function_name(tmp_path: Path) -> None:
    """A quoted symbol name `../escaped` names the output `../escaped_out0`: the file is a
    plain name inside --output-dir, not a path out of it."""
    (tmp_path / "escape.mlir").write_text(ESCAPING_NAME)
    x = np.arange(4, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "d").mkdir()
    saved = dlc_run("escape.mlir", "--input", "x.npy", "--output-dir", "d/out", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["out"]
    np.testing.assert_array_equal(np.load(tmp_path / "d" / "out" / "_._escaped_out0.npy"), x)
    assert "../escaped_out0: d/out/_._escaped_out0.npy" in saved.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--entry", "matmul", "--input", "a.npy", "a.npy"],
         "dlc-run: error: input 1 ('B') of @matmul: expected shape (12, 5), found (8, 12)"),
        (["--entry", "matmul", "--input", "missing.npy"],
         "dlc-run: error: no such input file: missing.npy"),
        (["--entry", "matmul", "--input", "a.npy"],
         "dlc-run: error: @matmul expects 2 inputs (A, B), found 1"),
        (["--input", "a.npy"],
         "dlc-run: error: expected one entry function or an explicit entry"),
    ],
)
def test_dlc_run_reports_bad_input_without_a_traceback(
    kernels_path: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    np.save(tmp_path / "a.npy", np.zeros((8, 12), np.float32))
    result = dlc_run(kernels_path, *args, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_dlc_run_reports_parse_errors_with_their_location(tmp_path: Path) -> None:
    (tmp_path / "bad.mlir").write_text("func.func @f( {\n")
    result = dlc_run("bad.mlir", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("dlc-run: error: bad.mlir:1:")
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------------------------------
# The whole pipeline
# ------------------------------------------------------------------------------------------


def test_graph_level_model_compiles_through_the_cpu_pipeline() -> None:
    from dlc.dialects.graph.interpreter import run_module

    model = REPO / "examples" / "small_cnn.mlir"
    executable = dlc.compile(model)
    x = RNG.standard_normal((1, 3, 32, 32), dtype=np.float32)
    (expected,) = run_module(parse_module(model), [x])
    np.testing.assert_allclose(executable(x), expected, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------------
# How much memory a call may use
# ------------------------------------------------------------------------------------------


def _fake_proc(tmp_path: Path, cgroup_line: str, vm_size_kb: int = 1024) -> Path:
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text("MemTotal:       16777216 kB\nSwapTotal:       1048576 kB\n")
    (proc / "self" / "cgroup").write_text(cgroup_line + "\n")
    (proc / "self" / "status").write_text(f"Name:\tpython3\nVmSize:\t{vm_size_kb} kB\n")
    return proc


def test_memory_available_takes_the_least_of_machine_cgroup_and_address_space(
    tmp_path: Path,
) -> None:
    from dlc.runtime.executable import memory_available

    gib = 1 << 30
    proc = _fake_proc(tmp_path, "0::/job")
    cgroups = tmp_path / "cgroup"
    (cgroups / "job").mkdir(parents=True)
    (cgroups / "job" / "memory.max").write_text("max\n")
    assert memory_available(proc, cgroups, -1) == 17 * gib  # memory + swap
    (cgroups / "job" / "memory.max").write_text(f"{2 * gib}\n")
    (cgroups / "job" / "memory.current").write_text(f"{gib // 2}\n")
    assert memory_available(proc, cgroups, -1) == gib + gib // 2  # cgroup v2 headroom
    assert memory_available(proc, cgroups, gib) == gib - 1024 * 1024  # ulimit -v less VmSize
    proc_v1 = _fake_proc(tmp_path / "v1", "5:cpu,memory:/old")
    (cgroups / "memory" / "old").mkdir(parents=True)
    (cgroups / "memory" / "old" / "memory.limit_in_bytes").write_text(f"{3 * gib}\n")
    (cgroups / "memory" / "old" / "memory.usage_in_bytes").write_text("0\n")
    assert memory_available(proc_v1, cgroups, -1) == 3 * gib


def test_a_call_beyond_ulimit_v_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """Under an address-space limit (`ulimit -v`), a model whose buffers cannot fit fails with
    an ExecutableError before the call instead of a segfault on a failed aligned_alloc."""
    import subprocess
    import sys

    model = tmp_path / "big.mlir"
    model.write_text("""
func.func @main(%x: tensor<256x64xf32>) -> tensor<256xf32> {
  %w = graph.constant dense<1.0> : tensor<64x64xf32>
  %y = graph.matmul %x, %w : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
  %r = graph.reduce %y {axes = array<i64: 1>, kind = "sum", keepdims = false}
      : (tensor<256x64xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}""")
    code = f"""
import resource, sys, numpy as np, dlc
m = dlc.compile({str(model)!r}, cache=False)
limit = resource.getrlimit(resource.RLIMIT_AS)
import re
vm = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + m.model.memory_bytes // 2, limit[1]))
try:
    m(np.ones((256, 64), np.float32))
except dlc.ExecutableError as e:
    print("refused:", e)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "refused: @main needs" in result.stdout and "address-space limit" in result.stdout


@pytest.mark.parametrize("make", [
    lambda: np.arange(12, dtype=np.float32).reshape(3, 4),
    lambda: np.arange(12, dtype=np.float32).reshape(3, 4)[1:],  # an offset view
    lambda: np.frombuffer(bytes(48), dtype=np.float32),  # read-only: the fallback
    lambda: np.zeros((0, 4), dtype=np.float32),  # empty: the fallback
])
def test_data_address_is_the_address_of_the_first_element(make) -> None:
    from dlc.runtime.executable import aligned_empty, data_address

    array = make()
    assert data_address(array) == array.ctypes.data
    aligned = aligned_empty((5, 3), np.dtype(np.float32), 64)
    assert data_address(aligned) % 64 == 0 and aligned.shape == (5, 3)
