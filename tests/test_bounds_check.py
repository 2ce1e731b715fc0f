"""Bounds-checked builds (`dlc.compile(check_bounds=True)`, `dlc compile --check-bounds`,
`convert-loop-to-llvm{check-bounds=true}`): an access past the end aborts with the kernel, the
buffer and the index named, under the JIT and from an exported library; the option is part of
the compile cache's fingerprint; and existing suites run under it without a trap: the schedule
primitives' and transform ops' property tests, the default schedules' property tests, a sample
of ONNX node cases, the small CNN and the model zoo's small models.

A violation aborts the process it happens in, so each checked suite runs in a child Python
(`_in_child`): a trap fails the test with the child's report instead of killing pytest.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest

REPO = Path(__file__).resolve().parent.parent

OUT_OF_BOUNDS = """
func.func @copy_one_past(%A: memref<8xf32>, %B: memref<9xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  loop.for %i = %c0 to %c9 step %c1 axis "i" {
    %v = loop.load %A[%i] : memref<8xf32> -> f32
    loop.store %v, %B[%i] : f32 -> memref<9xf32>
  }
  func.return
}
"""
"""A kernel whose loop runs one past the end of its input."""

REPORT = (
    "dlc: out-of-bounds load of buffer A (arg 0) in @copy_one_past: index 8 not in [0, 8) "
    "(dimension 0 of memref<8xf32>)"
)


def _python(code: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, text=True,
        timeout=timeout, check=False,
    )


def _run_property_test(test: object, max_examples: int) -> None:
    """Runs a `@given` test with `max_examples` (and derandomized: the same examples each
    time), its other settings kept."""
    from hypothesis import settings

    own = test._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    test._hypothesis_internal_use_settings = settings(  # type: ignore[attr-defined]
        own, max_examples=max_examples, derandomize=True, database=None
    )
    test()  # type: ignore[operator]


def _in_child(name: str) -> None:
    """Runs this module's function `name` in a child Python; fails with its output unless it
    exits normally (a bounds violation aborts it)."""
    result = _python(f"import tests.test_bounds_check as t; t.{name}()")
    assert result.returncode == 0, (
        f"{name} exited with {result.returncode}:\n{result.stderr[-4000:]}"
    )


# ---------------------------------------------------------------------------------------------
# A violation is reported
# ---------------------------------------------------------------------------------------------


def test_one_past_the_end_aborts_with_a_report_in_the_jit(tmp_path: Path) -> None:
    source = tmp_path / "kernel.mlir"
    source.write_text(OUT_OF_BOUNDS)
    result = _python(f"""
        import numpy as np, dlc
        run = dlc.compile({str(source)!r}, check_bounds=True, cache=False)
        print("compiled", flush=True)
        run(np.arange(8, dtype=np.float32))
        print("returned", flush=True)
    """)
    assert "compiled" in result.stdout and "returned" not in result.stdout, result.stderr
    assert result.returncode != 0
    assert REPORT in result.stderr


def test_one_past_the_end_aborts_from_an_exported_library(tmp_path: Path) -> None:
    """`dlc compile --check-bounds` writes a library that reports and aborts on its own."""
    source = tmp_path / "kernel.mlir"
    source.write_text(OUT_OF_BOUNDS)
    library = tmp_path / "kernel.so"
    compiled = subprocess.run(
        [sys.executable, str(REPO / "tools" / "dlc"), "compile", str(source), "--check-bounds",
         "--no-cache", "-o", str(library)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    result = _python(f"""
        import numpy as np, dlc
        dlc.load({str(library)!r})(np.arange(8, dtype=np.float32))
    """)
    assert result.returncode != 0
    assert REPORT in result.stderr


def test_in_bounds_code_runs_checked_and_unchecked_alike() -> None:
    import dlc

    text = OUT_OF_BOUNDS.replace("%c9 = arith.constant 9", "%c9 = arith.constant 8")
    x = np.arange(8, dtype=np.float32)
    from dlc.dialects import make_context
    from xdsl.parser import Parser

    for check_bounds in (False, True):
        module = Parser(make_context(), text).parse_module()
        got = dlc.compile(module, check_bounds=check_bounds, cache=False)(x)
        np.testing.assert_array_equal(got[:8], x)


def test_emitted_llvm_ir_has_the_checks_only_when_asked(tmp_path: Path) -> None:
    source = tmp_path / "kernel.mlir"
    source.write_text(OUT_OF_BOUNDS)

    def emitted(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(REPO / "tools" / "dlc"), "compile", str(source), "--target",
             "llvm -mcpu=x86-64-v3", "--emit", "llvm", *flags],
            cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
        )

    checked, unchecked = emitted("--check-bounds"), emitted()
    assert checked.returncode == 0 and unchecked.returncode == 0, checked.stderr
    assert '@"dprintf"' in checked.stdout and '@"abort"' in checked.stdout
    assert "dlc: out-of-bounds load of buffer A (arg 0) in @copy_one_past" in checked.stdout
    assert "dprintf" not in unchecked.stdout and "out-of-bounds" not in unchecked.stdout


def test_check_bounds_needs_a_cpu_target() -> None:
    from xdsl.dialects.builtin import ModuleOp

    import dlc

    with pytest.raises(dlc.CompileError, match="expected a CPU target with check_bounds"):
        dlc.compile(ModuleOp([]), "cuda", check_bounds=True)
    from dlc.driver.emit import emit_device_code
    from xdsl.utils.exceptions import DiagnosticException

    with pytest.raises(DiagnosticException, match="expected --target llvm or host with "
                       "--check-bounds .* found --target cuda"):
        emit_device_code(ModuleOp([]), "cuda", "ptx", check_bounds=True)


def test_check_bounds_is_part_of_the_cache_fingerprint() -> None:
    from dlc.driver.cache import CompileOptions

    target = "llvm -mcpu=x86-64-v3"
    unchecked = CompileOptions(target=target).fingerprint()
    assert CompileOptions(target=target, check_bounds=True).fingerprint() != unchecked
    assert CompileOptions(target=target, check_bounds=False).fingerprint() == unchecked


def test_the_pipeline_checks_bounds_only_when_asked() -> None:
    from dlc.driver.compiler import pipeline_passes
    from xdsl.dialects.builtin import ModuleOp

    def lowering(check_bounds: bool) -> object:
        passes = pipeline_passes(ModuleOp([]), "cpu", None, check_bounds=check_bounds)
        return next(p for p in passes if p.name == "convert-loop-to-llvm")

    assert lowering(True).check_bounds  # type: ignore[attr-defined]
    assert not lowering(False).check_bounds  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# Existing suites under the check (each in a child Python)
# ---------------------------------------------------------------------------------------------


def checked_schedule_properties(max_examples: int = 6) -> None:
    """The schedule primitives' and `transform.loop.apply_rules`' property tests, with every
    program they run through the loop interpreter also compiled bounds-checked and run: the
    same results, no trap. (Schedules with GPU-bound loops are only interpreted.)"""
    from dlc.codegen.llvm import emit_llvm_ir
    from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
    from dlc.dialects.loop.ops import ForOp
    from dlc.driver.jit import JitModule
    from dlc.pipelines import parse_pipeline
    from dlc.runtime.executable import Executable
    from xdsl.dialects.builtin import IntegerAttr, StringAttr
    from xdsl.dialects.func import FuncOp

    import tests.test_schedule_primitives as primitives

    interpret = primitives._run_with_loop_interpreter
    compiled: list[str] = []
    lowering = parse_pipeline(
        "convert-memref-view-to-llvm,convert-loop-to-llvm{check-bounds=true}"
    )

    def interpret_and_run_checked(module, inputs):  # type: ignore[no-untyped-def]
        expected = interpret(module, inputs)
        if any(isinstance(op, ForOp) and op.kind == StringAttr("bound") for op in module.walk()):
            return expected
        lowered = module.clone()
        (function,) = [op for op in lowered.ops if isinstance(op, FuncOp)]
        function.attributes[NUM_OUTPUTS_ATTR] = IntegerAttr(1, 64)
        names = [str(arg.name_hint) for arg in function.body.blocks[0].args]
        for module_pass in lowering:
            module_pass.apply(primitives.CTX, lowered)
        run = Executable(JitModule(emit_llvm_ir(lowered)))
        got = run(*[inputs[name] for name in names[:-1]])
        np.testing.assert_allclose(got, expected[names[-1]], rtol=1e-4, atol=1e-5)
        compiled.append(function.sym_name.data)
        return expected

    primitives._run_with_loop_interpreter = interpret_and_run_checked
    for test in (
        primitives.test_random_schedules_of_matmul_keep_results,
        primitives.test_random_schedules_of_elementwise_keep_results,
        primitives.test_random_schedules_of_conv_keep_results,
        primitives.test_apply_rules_with_random_knobs_keeps_results,
    ):
        _run_property_test(test, max_examples)
    assert len(compiled) >= 4 * max_examples, f"only {len(compiled)} programs ran compiled"


def checked_default_schedules(max_examples: int = 3) -> None:
    """The default schedules' property tests (random GEMM shapes, concats) compiled with
    `check_bounds=True`."""
    import dlc
    import tests.test_default_schedule as default

    default.compiled = lambda text, threads: dlc.compile(  # type: ignore[assignment]
        default.module(text), threads=threads, cache=False, check_bounds=True
    )
    for test in (default.test_matmul_random_shapes, default.test_concat_parts_match_numpy):
        _run_property_test(test, max_examples)


ONNX_FAMILIES = (
    "Conv", "MaxPool", "AveragePool", "Gather", "Slice", "Pad", "Concat", "Resize", "Transpose",
    "Softmax", "Split", "ReduceMean",
)
"""The families whose first cases `checked_onnx_cases` runs (indexing, windows, views)."""


def checked_onnx_cases(per_family: int = 1, families: tuple[str, ...] = ONNX_FAMILIES) -> None:
    """ONNX node cases compiled with `check_bounds=True`: every case that the unchecked
    compile passes passes checked too (and none traps)."""
    import dlc
    from tests.onnx.harness import FAMILIES, cases_of, expected_failures, run_compiled

    expected = expected_failures()
    failures = []
    ran = 0
    for family in families or FAMILIES:
        cases = [c for c in cases_of(family) if c.name not in expected][:per_family or None]
        for case in cases:
            checked = run_compiled(
                case, lambda m: dlc.compile(m, check_bounds=True, cache=False)
            )
            ran += 1
            if checked.passed:
                continue
            unchecked = run_compiled(case, lambda m: dlc.compile(m, cache=False))
            if unchecked.passed:
                failures.append(f"{case.name}: {checked.detail}")
    assert ran, "no ONNX node case ran"
    assert not failures, "\n".join(failures)


def checked_onnx_all_cases() -> None:
    checked_onnx_cases(per_family=0, families=())


def checked_models(zoo: bool = True) -> None:
    """examples/small_cnn.onnx and (with `zoo`) the model zoo's MLP and transformer block,
    compiled with `check_bounds=True`, against ONNX Runtime."""
    import onnx
    import onnxruntime

    import dlc
    from benchmarks.model_zoo import mlp, random_inputs, transformer_block

    models = [onnx.load(REPO / "examples" / "small_cnn.onnx")]
    if zoo:
        models += [mlp(batch=4, sizes=(64, 32, 10)), transformer_block(seq=16, hidden=64, heads=4,
                                                                        mlp=128)]
    for model in models:
        inputs = random_inputs(model)
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        expected = session.run(None, inputs)
        got = dlc.compile(model, check_bounds=True, cache=False).run(inputs)
        got = list(got.values()) if isinstance(got, dict) else [got]
        for value, reference in zip(got, expected, strict=True):
            np.testing.assert_allclose(value, reference, rtol=1e-3, atol=1e-3)


def with_empty_batch(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` whose inputs and outputs have a leading dimension of 0."""
    empty = onnx.ModelProto()
    empty.CopyFrom(model)
    for value in [*empty.graph.input, *empty.graph.output]:
        dims = value.type.tensor_type.shape.dim
        if dims:
            dims[0].Clear()
            dims[0].dim_value = 0
    return empty


def checked_empty_batch() -> None:
    """The small CNN and the zoo's MLP, with a batch of 0 (their schedules split, peel and pad
    a leading axis of no iteration), compiled with `check_bounds=True`: outputs of ONNX
    Runtime's shapes, nothing stored (a pad's batch-1 split stored at batch index 0 and
    corrupted the heap)."""
    import onnxruntime

    import dlc
    from benchmarks.model_zoo import mlp, random_inputs

    for model in (onnx.load(REPO / "examples" / "small_cnn.onnx"), mlp(4, (64, 32, 10))):
        empty = with_empty_batch(model)
        inputs = random_inputs(empty)
        assert all(value.shape[0] == 0 for value in inputs.values())
        session = onnxruntime.InferenceSession(
            empty.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        expected = session.run(None, inputs)
        got = dlc.compile(empty, check_bounds=True, cache=False).run(inputs)
        got = list(got.values()) if isinstance(got, dict) else [got]
        assert [value.shape for value in got] == [value.shape for value in expected]


def test_schedule_property_tests_under_the_check() -> None:
    _in_child("checked_schedule_properties")


def test_default_schedule_property_tests_under_the_check() -> None:
    _in_child("checked_default_schedules")


def test_onnx_node_cases_under_the_check() -> None:
    _in_child("checked_onnx_cases")


def test_small_cnn_under_the_check() -> None:
    _in_child("checked_small_cnn")


def test_empty_batch_under_the_check() -> None:
    _in_child("checked_empty_batch")


def checked_small_cnn() -> None:
    checked_models(zoo=False)


@pytest.mark.slow
def test_model_zoo_under_the_check() -> None:
    _in_child("checked_models")


@pytest.mark.slow
def test_all_onnx_node_cases_under_the_check() -> None:
    _in_child("checked_onnx_all_cases")
