"""Cross-compilation: `--target "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"` on any host.

Target strings and their errors, AArch64 object code (its ELF machine, its metadata read without
loading it), the linker choice, the .tar export, and end to end: small models built for AArch64,
linked by `aarch64-linux-gnu-gcc` and run under `qemu-aarch64` by the C harness
`tests/c/run_entry.c`, against the host build's output and ONNX's reference evaluator. The
end-to-end tests skip (saying what to install) where the cross toolchain or qemu is missing;
`.ci/run` installs them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import llvmlite.binding as binding
import numpy as np
import onnx
import pytest
from dlc.driver.elf import object_arch, string_symbol, symbol_bytes
from dlc.driver.errors import CompileError
from dlc.driver.export import CROSS_COMPILERS, linker_for
from dlc.driver.jit import parse_and_optimize, target_machine
from dlc.driver.target import resolve_target
from dlc.runtime.executable import Executable, ExecutableError
from dlc.runtime.library import LibraryError, machine_arch
from dlc.target import ARCHES, KNOWN_CPUS, CpuTarget, TargetError, parse_cpu_target
from dlc.target.cpu import ARCH_FEATURES
from dlc.target.host_cpu import HostCpu, host_target
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import dlc

AARCH64 = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"
CROSS_CC, _ = CROSS_COMPILERS["aarch64"]
QEMU = "qemu-aarch64"
SYSROOT = Path("/usr/aarch64-linux-gnu")
HARNESS = Path(__file__).parent / "c" / "run_entry.c"

needs_cross_linker = pytest.mark.skipif(
    machine_arch() == "aarch64" or shutil.which(CROSS_CC) is None,
    reason=f"needs {CROSS_CC} on an x86-64 host (apt-get install gcc-aarch64-linux-gnu)",
)
needs_qemu = pytest.mark.skipif(
    machine_arch() == "aarch64" or shutil.which(CROSS_CC) is None or shutil.which(QEMU) is None
    or not SYSROOT.is_dir(),
    reason=f"needs {CROSS_CC} and {QEMU} with the sysroot {SYSROOT} on an x86-64 host "
    "(apt-get install gcc-aarch64-linux-gnu qemu-user)",
)


# ---------------------------------------------------------------------------------------------
# Target strings
# ---------------------------------------------------------------------------------------------


def test_aarch64_target_has_neon_vectors_and_registers() -> None:
    target = parse_cpu_target(AARCH64 + " -mattr=+crc,+dotprod")
    assert (target.arch, target.triple, target.cpu) == ("aarch64", "aarch64-linux-gnu",
                                                        "cortex-a72")
    assert target.vector_bits == 128 and target.lanes(4) == 4 and target.vector_registers == 32
    assert target.has("neon") and target.has("dotprod") and not target.has("avx2")
    assert str(target) == AARCH64 + " -mattr=+crc,+dotprod"
    assert parse_cpu_target(str(target)) == target


def test_every_architecture_has_an_llvm_backend() -> None:
    binding.initialize_all_targets()
    for arch in ARCHES.values():
        assert binding.Target.from_triple(arch.default_triple).name in ("x86-64", "aarch64")


def test_the_cpu_table_names_only_accepted_features() -> None:
    for cpu in KNOWN_CPUS.values():
        assert cpu.features <= ARCH_FEATURES[cpu.arch], cpu.name


@pytest.mark.parametrize(("text", "message"), [
    ("llvm -mtriple=riscv64-linux-gnu",
     "expected a Linux triple of x86_64 or aarch64 (x86_64-unknown-linux-gnu, "
     "aarch64-unknown-linux-gnu), found 'riscv64-linux-gnu'"),
    ("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a99",
     "expected a known aarch64 CPU for -mcpu (generic, cortex-a53, cortex-a72, cortex-a76, "
     "neoverse-n1, neoverse-v1), found 'cortex-a99'"),
    ("llvm -mtriple=aarch64-linux-gnu -mcpu=haswell",
     "expected a CPU of architecture aarch64 for -mtriple=aarch64-linux-gnu, found "
     "-mcpu=haswell (x86_64)"),
    ("llvm -mtriple=aarch64-linux-gnu -mattr=+avx2",
     "expected a feature of aarch64 in -mattr (aes, bf16, "),
    ("llvm -mcpu=cortex-a72 -mattr=+neon,+nosuch", "found '+nosuch'"),
    ("llvm -mcpu=x86-64-v3 -mattr=+neon", "expected a feature of x86_64 in -mattr (64bit, "),
])
def test_bad_aarch64_targets_list_what_is_accepted(text: str, message: str) -> None:
    with pytest.raises(TargetError) as error:
        parse_cpu_target(text)
    assert message in str(error.value)
    with pytest.raises(CompileError, match=re.escape(f"invalid target '{text}'")):
        resolve_target(text)


def test_unknown_cpu_for_a_triple_lists_only_that_architecture() -> None:
    with pytest.raises(TargetError) as error:
        parse_cpu_target("llvm -mtriple=aarch64-linux-gnu -mcpu=znver9")
    assert "cortex-a72" in str(error.value) and "znver3" not in str(error.value)


def test_host_keeps_only_the_features_mattr_accepts() -> None:
    reported = HostCpu("x86_64-unknown-linux-gnu", "znver3",
                       {"avx2": True, "avx512f": False, "a-feature-of-a-newer-llvm": True}, {})
    target = host_target(reported, 2)
    assert target.mattr == ("-avx512f",)


# ---------------------------------------------------------------------------------------------
# Object code and linking
# ---------------------------------------------------------------------------------------------

_IR = """
@dlc_metadata = constant [6 x i8] c"hello\\00"
define void @twice(ptr %x) {
  %v = load <4 x float>, ptr %x
  %w = fadd <4 x float> %v, %v
  store <4 x float> %w, ptr %x
  ret void
}
"""


def _object(target: CpuTarget) -> bytes:
    machine = target_machine(target, 2, position_independent=True)
    text = f'target triple = "{target.triple}"\n' + _IR
    return machine.emit_object(parse_and_optimize(text, machine, 2))


def test_aarch64_object_has_the_aarch64_elf_machine() -> None:
    code = _object(parse_cpu_target(AARCH64))
    assert code[:4] == b"\x7fELF" and int.from_bytes(code[18:20], "little") == 183  # EM_AARCH64
    assert object_arch(code) == "aarch64"
    assert object_arch(_object(parse_cpu_target("llvm -mcpu=x86-64-v3"))) == "x86_64"
    assert string_symbol(code, "dlc_metadata") == "hello"
    assert symbol_bytes(code, "no_such_symbol") is None
    assert symbol_bytes(code, "twice") is not None  # a function's code


def test_object_arch_rejects_what_is_not_an_object() -> None:
    with pytest.raises(LibraryError, match="expected an ELF object file"):
        object_arch(b"#!/bin/sh\n" * 10)


def test_linker_for_the_host_is_cc_and_a_missing_cross_linker_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = machine_arch()
    other = "aarch64" if host == "x86_64" else "x86_64"
    assert Path(linker_for(host)).name == "cc"
    monkeypatch.setattr("dlc.driver.export.shutil.which", lambda name: None)
    name, package = CROSS_COMPILERS[other]
    with pytest.raises(LibraryError) as error:
        linker_for(other)
    assert f"no cross compiler '{name}' on PATH" in str(error.value)
    assert f"apt-get install {package}" in str(error.value)
    assert ".tar" in str(error.value)


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


def conv_relu_model() -> onnx.ModelProto:
    """y = Relu(Conv(x, w, b)) over a 1x3x10x10 image, 8 filters 3x3, padding 1."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "conv_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def mlp_model() -> onnx.ModelProto:
    """y = Relu(x @ w1 + b1) @ w2 + b2: 4x24 -> 4x40 -> 4x10."""
    rng = np.random.default_rng(2)
    arrays = {"w1": (24, 40), "b1": (40,), "w2": (40, 10), "b2": (10,)}
    weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)
               for name, shape in arrays.items()]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
        helper.make_node("Relu", ["h1"], ["h"], name="relu"),
        helper.make_node("MatMul", ["h", "w2"], ["y0"], name="fc2"),
        helper.make_node("Add", ["y0", "b2"], ["y"], name="bias2"),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _compile(model: onnx.ModelProto, target: str, cache_dir: Path) -> Executable:
    return dlc.compile(model, target, cache_dir=cache_dir, jobs=1)


def test_aarch64_executable_exports_but_does_not_run_here(tmp_path: Path) -> None:
    if machine_arch() == "aarch64":
        pytest.skip("the host is aarch64: an aarch64 build runs here")
    executable = _compile(mlp_model(), AARCH64, tmp_path / "cache")
    assert executable.input_names == ("x",) and executable.signature.outputs[0].shape == (4, 10)
    assert executable.model is not None and executable.model.kernels
    with pytest.raises(ExecutableError, match="compiled for aarch64 and this host is x86_64"):
        executable(np.zeros((4, 24), np.float32))
    archive = executable.export(tmp_path / "mlp.tar")
    with tarfile.open(archive) as members:
        names = members.getnames()
        assert "link.sh" in names and "weights.s" in names and "weights.bin" in names
        # the C interface travels with it: header, its functions' source, the version script
        assert {"mlp.h", "dlc_c_api.c", "exports.map"} <= set(names)
        objects = [n for n in names if n.endswith(".o")]
        assert objects and all(
            object_arch(members.extractfile(n).read()) == "aarch64"  # type: ignore[union-attr]
            for n in objects)
    if shutil.which(CROSS_CC) is None:
        return
    unpacked = tmp_path / "unpacked"
    with tarfile.open(archive) as members:
        members.extractall(unpacked, filter="data")
    subprocess.run(["sh", "link.sh", "mlp.so"], cwd=unpacked, check=True,
                   env=dict(os.environ, CC=CROSS_CC))
    assert (unpacked / "mlp.so").read_bytes()[18:20] == (183).to_bytes(2, "little")
    exported = subprocess.run(["aarch64-linux-gnu-nm", "-D", "--defined-only",
                               str(unpacked / "mlp.so")], capture_output=True, text=True,
                              check=True).stdout.split()[2::3]
    assert sorted(exported) == sorted(["dlc_prefix", *(f"mlp_{name}" for name in (
        "run", "run_with_workspace", "set_num_threads", "get_num_threads", "error_string",
        "dlc_symbol"))])
    library = executable.export(tmp_path / "mlp.so")
    with pytest.raises(LibraryError, match="built for aarch64 and this host is x86_64"):
        dlc.load(library)


def test_export_for_aarch64_without_a_cross_linker_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if machine_arch() == "aarch64":
        pytest.skip("the host is aarch64")
    executable = _compile(mlp_model(), AARCH64, tmp_path / "cache")
    monkeypatch.setattr("dlc.driver.export.shutil.which", lambda name: None)
    with pytest.raises(LibraryError, match="apt-get install gcc-aarch64-linux-gnu"):
        executable.export(tmp_path / "mlp.so")
    assert not (tmp_path / "mlp.so").exists()
    assert executable.export(tmp_path / "mlp.tar").is_file()  # needs no linker


# ---------------------------------------------------------------------------------------------
# End to end under qemu
# ---------------------------------------------------------------------------------------------


def build_harness(compiler: str, output: Path) -> Path:
    """`tests/c/run_entry.c` built by `compiler`."""
    subprocess.run([compiler, "-O1", "-std=c11", "-D_GNU_SOURCE", "-o", str(output),
                    str(HARNESS), "-ldl"], check=True)
    return output


def run_library(
    library: Path, executable: Executable, inputs: list[np.ndarray], harness: Path,
    runner: list[str], scratch: Path,
) -> list[np.ndarray]:
    """The outputs of `library`'s entry (whose signature `executable` has) on `inputs`, called
    by the C harness (under `runner`, e.g. qemu) through its destination-passing ABI."""
    arguments: list[str] = [str(library), executable.name]
    for index, array in enumerate(inputs):
        path = scratch / f"input{index}.bin"
        np.ascontiguousarray(array).tofile(path)
        arguments.append(str(path))
    arguments.append("--")
    outputs = executable.signature.outputs
    for index, spec in enumerate(outputs):
        nbytes = int(np.prod(spec.shape)) * np.dtype(spec.dtype).itemsize
        arguments.append(f"{scratch / f'output{index}.bin'}:{nbytes}")
    subprocess.run([*runner, str(harness), *arguments], check=True, timeout=300,
                   env=dict(os.environ, OMP_NUM_THREADS="2"))
    return [np.fromfile(scratch / f"output{i}.bin", dtype=spec.dtype).reshape(spec.shape)
            for i, spec in enumerate(outputs)]


@needs_qemu
@pytest.mark.parametrize("make_model", [conv_relu_model, mlp_model], ids=["conv_relu", "mlp"])
def test_aarch64_build_under_qemu_matches_the_host_build(
    make_model: Callable[[], onnx.ModelProto], tmp_path: Path
) -> None:
    model = make_model()
    x = np.random.default_rng(3).standard_normal(
        [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    ).astype(np.float32)
    host = _compile(model, "host", tmp_path / "cache")
    cross = _compile(model, AARCH64, tmp_path / "cache")
    assert cross.signature == host.signature
    host_library = host.export(tmp_path / "host.so")
    cross_library = cross.export(tmp_path / "aarch64.so")
    assert cross_library.read_bytes()[18:20] == (183).to_bytes(2, "little")
    (tmp_path / "host").mkdir()
    (tmp_path / "aarch64").mkdir()
    host_out = run_library(host_library, host, [x], build_harness("cc", tmp_path / "run_host"),
                           [], tmp_path / "host")
    cross_out = run_library(
        cross_library, cross, [x], build_harness(CROSS_CC, tmp_path / "run_aarch64"),
        [QEMU, "-L", str(SYSROOT)], tmp_path / "aarch64",
    )
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(host_out[0], host(x), rtol=0, atol=0)  # the C ABI is dlc's
    np.testing.assert_allclose(host_out[0], expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(cross_out[0], host_out[0], rtol=1e-5, atol=1e-5)


EXAMPLE = Path(__file__).resolve().parent.parent / "examples"


def build_c_example(compiler: str, library: Path, output: Path) -> Path:
    """examples/c/main.c built by `compiler` against `library` and its header (beside it)."""
    subprocess.run([compiler, "-O2", "-std=c11", "-Wall", "-Werror", f"-I{library.parent}",
                    "-o", str(output), str(EXAMPLE / "c" / "main.c"), str(library), "-lm",
                    "-Wl,-rpath,$ORIGIN"], check=True)
    return output


@needs_qemu
def test_the_c_example_built_for_aarch64_runs_under_qemu(tmp_path: Path) -> None:
    """The C example (examples/c) against the small CNN's library and header, built for this
    host and for cortex-a72: under qemu-aarch64 it prints the host build's scores (1e-5)."""
    model = onnx.load(EXAMPLE / "small_cnn.onnx")
    image = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
    image.tofile(tmp_path / "image.bin")
    scores: dict[str, np.ndarray] = {}
    for name, target, compiler, runner in (
        ("host", "host", "cc", []),
        ("aarch64", AARCH64, CROSS_CC, [QEMU, "-L", str(SYSROOT)]),
    ):
        folder = tmp_path / name
        folder.mkdir()
        library = _compile(model, target, tmp_path / "cache").export(
            folder / "small_cnn.so", c_prefix="small_cnn", c_header=folder / "small_cnn.h")
        program = build_c_example(compiler, library, folder / "small_cnn_demo")
        subprocess.run([*runner, str(program), str(tmp_path / "image.bin"),
                        str(folder / "scores.bin")], check=True, timeout=300,
                       capture_output=True)
        scores[name] = np.fromfile(folder / "scores.bin", np.float32)
    assert (tmp_path / "aarch64" / "small_cnn.so").read_bytes()[18:20] == (183).to_bytes(
        2, "little")
    np.testing.assert_allclose(scores["aarch64"], scores["host"], rtol=1e-5, atol=1e-5)
    expected = ReferenceEvaluator(model).run(None, {model.graph.input[0].name: image})[0]
    np.testing.assert_allclose(scores["host"], expected.reshape(-1), rtol=1e-4, atol=1e-4)
