"""dlc-opt's own flags: --check-semantics (with the broken test-break-add pass), --timing and
--dump-graph, run in process through `tools.dlc_opt.main`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.pipelines import PIPELINES, NamedPipeline
from dlc.tools.check_semantics import SemanticsChecker, compare
from dlc.tools.diagnostics import ToolError
from dlc.tools.dlc_opt import main
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

ADD_RELU = """
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %a = graph.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = graph.relu %a : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""

CONV_BN = """
func.func @net(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %w = graph.constant dense<[[[[0.3]], [[-0.7]]], [[[1.1]], [[0.2]]], [[[-0.4]], [[0.9]]]]>
    : tensor<3x2x1x1xf32>
  %s = graph.constant dense<[1.5, 0.25, 3.0]> : tensor<3xf32>
  %b = graph.constant dense<[0.1, -0.2, 0.3]> : tensor<3xf32>
  %m = graph.constant dense<[0.3, 0.1, -0.5]> : tensor<3xf32>
  %v = graph.constant dense<[0.7, 1.3, 2.9]> : tensor<3xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  %n = graph.batch_norm %c, %s, %b, %m, %v
    : (tensor<1x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    -> tensor<1x3x5x5xf32>
  %k = graph.constant dense<[[[2.0]], [[3.0]], [[0.5]]]> : tensor<3x1x1xf32>
  %y = graph.add %n, %k : (tensor<1x3x5x5xf32>, tensor<3x1x1xf32>) -> tensor<1x3x5x5xf32>
  %r = graph.relu %y : tensor<1x3x5x5xf32>
  func.return %r : tensor<1x3x5x5xf32>
}
"""


LOOP_IF = """
func.func @cf(%c: tensor<i1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>)
    -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %m = graph.constant dense<4> : tensor<i64>
  %t = graph.constant dense<true> : tensor<i1>
  %r:2 = graph.loop (%m, %t, %x) : (tensor<i64>, tensor<i1>, tensor<2x3xf32>)
      -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2x3xf32>):
    %w = graph.add %v, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %n = graph.if %c : tensor<i1> -> tensor<2x3xf32> {
      %a = graph.relu %w : tensor<2x3xf32>
      graph.yield %a : tensor<2x3xf32>
    } else {
      %e = graph.tanh %w : tensor<2x3xf32>
      graph.yield %e : tensor<2x3xf32>
    }
    %s = graph.reduce %n {kind = "sum", axes = array<i64: 0>, keepdims = false}
      : (tensor<2x3xf32>) -> tensor<3xf32>
    graph.yield %ci, %n, %s : tensor<i1>, tensor<2x3xf32>, tensor<3xf32>
  }
  func.return %r#0, %r#1 : tensor<2x3xf32>, tensor<4x3xf32>
}
"""

TO_LOOPS = ("graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,"
            "convert-tensor-expr-to-loop,loop-dedup-functions")


def run(
    tmp_path: Path, source: str, *args: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """dlc-opt on `source` (written to a file) with `args`: (exit code, stdout, stderr)."""
    path = tmp_path / "input.mlir"
    path.write_text(source)
    code = main([str(path), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def parse(source: str) -> ModuleOp:
    return Parser(make_context(), source).parse_module()


# ---------------------------------------------------------------------------------------------
# --check-semantics
# ---------------------------------------------------------------------------------------------


def test_broken_pass_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        tmp_path, ADD_RELU, "--check-semantics", "-p", "graph-simplify,test-break-add,cse",
        capsys=capsys,
    )
    assert code == 1
    assert out == ""  # no output for a module that failed the check
    assert re.search(
        r"dlc-opt: error: --check-semantics: pass 'test-break-add' changed the results of @f: "
        r"output #0: max abs error [0-9.e+-]+, max rel error [0-9.e+-]+ \(\d+ of 6 elements "
        r"beyond atol 0.0001 \+ rtol 0.0001 \* [0-9.e+-]+, the largest \|expected\|\); at "
        r"\(\d+, \d+\): expected [-0-9.e+]+, found [-0-9.e+]+ \(inputs: seed 0\)",
        err,
    ), err
    assert "Traceback" not in err


def test_correct_pipeline_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, CONV_BN, "--check-semantics", "-p", "graph-opt",
                         capsys=capsys)
    assert (code, err) == (0, "")
    assert "graph.fused" in out and "graph.batch_norm" not in out


def test_first_breaking_pass_inside_a_named_pipeline_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        PIPELINES, "test-broken-opt",
        NamedPipeline("test-broken-opt", "graph-opt with a broken pass", "graph-simplify,"
                      "test-break-add,graph-fold-batch-norm,graph-fuse-ops"),
    )
    code, _, err = run(tmp_path, CONV_BN, "--check-semantics", "-p", "test-broken-opt",
                       capsys=capsys)
    assert code == 1
    assert "pass 'test-break-add' changed the results of @net: output #0" in err


def test_tolerance_is_an_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Folding a batch norm rounds differently: caught with zero tolerance, fine by default.
    exact = ("--check-semantics-rtol", "0", "--check-semantics-atol", "0")
    code, _, err = run(tmp_path, CONV_BN, "--check-semantics", *exact, "-p",
                       "graph-fold-batch-norm", capsys=capsys)
    assert code == 1 and "pass 'graph-fold-batch-norm' changed the results of @net" in err
    assert "beyond atol 0 + rtol 0 * " in err
    code, _, err = run(tmp_path, CONV_BN, "--check-semantics", "-p", "graph-fold-batch-norm",
                       capsys=capsys)
    assert (code, err) == (0, "")


def test_seed_changes_the_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, first = run(tmp_path, ADD_RELU, "--check-semantics", "-p", "test-break-add",
                      capsys=capsys)
    _, _, second = run(tmp_path, ADD_RELU, "--check-semantics", "--check-semantics-seed", "7",
                       "-p", "test-break-add", capsys=capsys)
    assert "(inputs: seed 0)" in first and "(inputs: seed 7)" in second
    assert first.split("; at")[1] != second.split("; at")[1]


def test_module_the_interpreter_cannot_run_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = "func.func @g(%a: i32) -> i32 {\n  func.return %a : i32\n}\n"
    code, out, err = run(tmp_path, source, "--check-semantics", "-p", "cse", capsys=capsys)
    assert code == 1 and out == ""
    assert err.startswith(
        "dlc-opt: error: --check-semantics: cannot run @g of the input with the loop "
        "interpreter: argument #0 has type i32, not a tensor or memref"
    ), err


def test_module_without_public_function_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(tmp_path, "builtin.module {}\n", "--check-semantics", capsys=capsys)
    assert code == 1
    assert "--check-semantics: the module has no public function to run" in err


def test_checking_goes_on_below_the_graph_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        tmp_path, ADD_RELU, "--check-semantics", "-p",
        "graph-fuse-ops,convert-graph-to-tensor-expr,tensor-expr-inline,"
        "convert-tensor-expr-to-loop,loop-default-schedule,cse", capsys=capsys,
    )
    assert (code, err) == (0, "")
    assert "loop.for" in out


def test_checking_stops_at_the_llvm_dialect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(tmp_path, ADD_RELU, "--check-semantics", "-p", "cpu", capsys=capsys)
    assert code == 0, err
    assert "llvm.func" in out
    assert err.startswith(
        "dlc-opt: note: --check-semantics stopped after pass 'convert-loop-to-llvm': the module "
        "is at the llvm dialect, which no interpreter runs; passes checked before it: "
        "graph-batch-rows, graph-fold-qdq, graph-fold-constants,"
    ), err
    assert "loop-default-schedule, loop-fold-constant-nests" in err
    assert err.count("\n") == 1  # one note


LOOP_READ = """
func.func @f(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    %v = loop.load %x[%i] : memref<4xf32> -> f32
    loop.store %v, %out[%i] : f32 -> memref<4xf32>
  }
  func.return
}
"""


def test_undefined_loop_ir_names_the_pass() -> None:
    module = parse(LOOP_READ)
    checker = SemanticsChecker()
    checker.start(module)
    loop = next(op for op in module.walk() if op.name == "loop.for")
    loop.operands = (loop.operands[0], loop.operands[1], loop.operands[0])  # step 0
    with pytest.raises(ToolError, match=r"pass 'p' broke @f: the loop interpreter found: "
                                        r"'loop.for' \"i\" has step 0 <= 0 \(inputs: seed 0\)"):
        checker.check(module, "p")


def test_loop_level_functions_over_the_element_limit_are_skipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = parse(LOOP_READ)
    checker = SemanticsChecker(max_loop_elements=7)
    checker.start(module)
    checker.check(module, "p")
    assert checker.reference == {} and checker.skipped == {"f"}
    assert capsys.readouterr().err == (
        "dlc-opt: note: --check-semantics skips @f at the loop level of the input: its arguments "
        "hold 8 elements, more than --check-semantics-max-elements 7\n"
    )


def test_unsigned_results_compare_across_levels(capsys: pytest.CaptureFixture[str]) -> None:
    source = """
func.func @u(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %a = graph.add %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %a : tensor<4xui8>
}
"""
    module = parse(source)
    checker = SemanticsChecker()
    checker.start(module)
    ctx = make_context()
    for name in ("convert-graph-to-tensor-expr", "convert-tensor-expr-to-loop"):
        from dlc.pipelines import parse_pipeline

        for module_pass in parse_pipeline(name):
            module_pass.apply(ctx, module)
        checker.check(module, name)
    assert checker.checked_passes == ["convert-graph-to-tensor-expr",
                                      "convert-tensor-expr-to-loop"]
    assert capsys.readouterr().err == ""


def test_checker_stops_on_an_op_without_implementation(capsys: pytest.CaptureFixture[str]) -> None:
    module = parse(ADD_RELU)
    checker = SemanticsChecker(seed=3)
    checker.start(module)
    checker.check(module, "first-pass")
    # A pass leaves an op the interpreter has no implementation for.
    relu = next(op for op in module.walk() if op.name == "graph.relu")
    from xdsl.dialects.test import TestOp

    unknown = TestOp.create(operands=[relu.operands[0]], result_types=[relu.results[0].type])
    relu.parent.insert_op_before(unknown, relu)  # type: ignore[union-attr]
    relu.results[0].replace_all_uses_with(unknown.results[0])
    relu.detach()
    relu.erase()
    checker.check(module, "second-pass")
    checker.check(module, "third-pass")  # no longer checked, no second note
    err = capsys.readouterr().err
    assert checker.stopped_after == "second-pass"
    assert checker.checked_passes == ["first-pass"]
    assert err == (
        "dlc-opt: note: --check-semantics stopped after pass 'second-pass': the graph "
        "interpreter cannot run @f: graph interpreter: no NumPy implementation for 'test.op'; "
        "passes checked before it: first-pass\n"
    )


def test_checker_reports_a_changed_output_count() -> None:
    module = parse(ADD_RELU)
    checker = SemanticsChecker()
    checker.start(module)
    checker.reference["f"] = [*checker.reference["f"], np.zeros(1, np.float32)]
    with pytest.raises(ToolError, match="pass 'p' changed the results of @f: expected 2 outputs, "
                                        "found 1"):
        checker.check(module, "p")


def test_compare_rules() -> None:
    nan = np.array([1.0, np.nan], np.float32)
    assert compare(nan, nan.copy(), 1e-4, 1e-4) is None  # NaN where the reference has NaN
    message = compare(nan, np.array([1.0, 2.0], np.float32), 1e-4, 1e-4)
    assert message is not None and "max abs error inf" in message
    ints = np.array([1, 2, 3], np.int64)
    assert compare(ints, ints.copy(), 0, 0) is None
    assert compare(ints, np.array([1, 5, 3], np.int64), 1, 1) == (
        "1 of 3 elements differ, e.g. at (1,): expected 2, found 5")
    assert compare(ints, ints.astype(np.int32), 0, 0) == (
        "expected a int64 array of shape (3,), found int32 of shape (3,)")
    close = np.array([100.0], np.float32)
    assert compare(close, close * np.float32(1.00001), 1e-4, 0) is None
    # the tolerance scales with the output's largest magnitude, not each element's
    cancelled = np.array([1000.0, 0.01], np.float32)
    assert compare(cancelled, np.array([1000.0, 0.05], np.float32), 1e-4, 0) is None
    assert compare(cancelled, np.array([1000.0, 0.2], np.float32), 1e-4, 0) is not None


# ---------------------------------------------------------------------------------------------
# --timing
# ---------------------------------------------------------------------------------------------


def test_timing_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, CONV_BN, "--timing", "-p", "graph-opt,cse", capsys=capsys)
    assert code == 0 and "graph.fused" in out
    lines = err.splitlines()
    assert lines[1].strip() == "Execution time report"
    total = float(re.fullmatch(r"  Total Execution Time: ([0-9.]+) seconds", lines[3])[1])  # type: ignore[index]
    rows = [re.fullmatch(r"\s+([0-9.]+) \(\s*([0-9.]+)%\)  (.+)", line) for line in lines[6:]]
    assert all(rows), lines
    names = [row[3] for row in rows]  # type: ignore[index]
    # the named pipeline runs pass by pass, in order, then the bookkeeping rows and the total
    assert names == [
        "(parse)", *PIPELINES["graph-opt"].spec.split(","), "cse", "(verifier)", "(output)",
        "Total",
    ]
    seconds = [float(row[1]) for row in rows]  # type: ignore[index]
    assert abs(sum(seconds[:-1]) - total) < 1e-3 and seconds[-1] == pytest.approx(total, abs=1e-4)


def test_timing_includes_checking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(tmp_path, CONV_BN, "--timing", "--check-semantics", "-p", "cse",
                       capsys=capsys)
    assert code == 0
    assert re.search(r"\(check-semantics\)\n.*\(output\)\n.*Total$", err.rstrip()), err


# ---------------------------------------------------------------------------------------------
# --dump-graph
# ---------------------------------------------------------------------------------------------


def test_dump_graph_clusters_fused_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dot = tmp_path / "net.dot"
    code, out, _ = run(tmp_path, CONV_BN + ADD_RELU, "-p", "graph-opt",
                       f"--dump-graph={dot}", capsys=capsys)
    assert code == 0
    graph = dot.read_text()
    assert graph.startswith('digraph "dlc_0" {') and graph.count("{") == graph.count("}")
    clusters = re.findall(r'subgraph cluster_\d+ \{\n\s+label="([^"]+)";', graph)
    assert clusters == ["@net", "fused_conv2d_relu (out_fusable)", "@f",
                        "fused_add_relu (broadcast)"]
    assert out.count("graph.fused") == 2
    # edges look through the groups: argument -> conv, conv -> relu, relu -> return
    nodes = dict(re.findall(r'(n\d+) \[shape=\w+, label="([^"\\]+)', graph))
    edges = [(nodes[a], nodes[b]) for a, b in re.findall(r"(n\d+) -> (n\d+)", graph)]
    assert ("%x", "conv2d") in edges and ("conv2d", "relu") in edges
    assert ("relu", "return") in edges and ("constant", "conv2d") in edges
    assert "yield" not in graph


def test_dump_graph_unwritable_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(tmp_path, ADD_RELU, f"--dump-graph={tmp_path}/missing/dir/g.dot",
                       capsys=capsys)
    assert code == 1
    assert err.startswith(f"dlc-opt: error: cannot write --dump-graph file '{tmp_path}/missing")


def test_dump_graph_after_lowering_draws_the_last_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a pipeline that lowers below the graph level (`-p cpu`), --dump-graph writes the
    graph as it was after the last graph-level pass, and says so, instead of an empty graph."""
    lowered, graph_level = tmp_path / "cpu.dot", tmp_path / "opt.dot"
    code, _, err = run(tmp_path, CONV_BN + ADD_RELU, "-p", "cpu-direct",
                       f"--dump-graph={lowered}", capsys=capsys)
    assert code == 0
    assert "the module left the graph level; writing the graph as it was after pass " \
           "'graph-fuse-ops'" in err
    assert run(tmp_path, CONV_BN + ADD_RELU, "-p", "graph-opt", f"--dump-graph={graph_level}",
               capsys=capsys)[0] == 0
    assert lowered.read_text() == graph_level.read_text()


def test_control_flow_is_checked_down_to_the_loop_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """graph.loop and graph.if run in the graph interpreter, their scf forms in the tensor_expr
    evaluator and the loop interpreter: the lowering is checked pass by pass."""
    code, out, err = run(tmp_path, LOOP_IF, "--check-semantics", "-p", TO_LOOPS, capsys=capsys)
    assert (code, err) == (0, "")
    assert "scf.while" in out and "scf.if" in out


@pytest.mark.parametrize("pipeline", ["test-break-add", f"{TO_LOOPS},test-break-loop"])
def test_broken_pass_inside_a_loop_body_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pipeline: str
) -> None:
    code, _, err = run(tmp_path, LOOP_IF, "--check-semantics", "--check-semantics-seed", "1",
                       "-p", pipeline, capsys=capsys)
    broken = pipeline.rsplit(",", 1)[-1]
    assert code == 1 and f"pass '{broken}' changed the results of @cf" in err
