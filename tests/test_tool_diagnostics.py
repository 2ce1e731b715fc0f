"""Inputs that used to end in an internal error (a Python exception's name) in dlc's tools and
library: each is now a one-line diagnostic naming what was expected and what was found (exit
code 1 for a tool; CompileError, ExecutableError or a pass failure for the library)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.rewrites.tuning.apply import TuningLogError, load_best
from dlc.rewrites.tuning.log import read_log
from dlc.runtime.profiler import median_seconds
from dlc.tools import dlc_main, dlc_opt, dlc_run
from onnx import TensorProto, helper, numpy_helper

import dlc

REPO = Path(__file__).resolve().parent.parent
TUNING_INPUTS = REPO / "tests" / "filecheck" / "rewrites" / "Inputs"
ToolMain = Callable[[list[str] | None], int]


def tool_error(main: ToolMain, args: list[object], capsys: pytest.CaptureFixture[str]) -> str:
    """Runs a tool; checks it failed with one diagnostic (no internal error); returns stderr."""
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    return err


def save_model(path: Path, nodes: list[onnx.NodeProto], x: list[int], y: list[int | str],
               weights: dict[str, np.ndarray] | None = None) -> Path:
    graph = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
        [numpy_helper.from_array(a, n) for n, a in (weights or {}).items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return save_model(tmp_path / "tiny.onnx", [helper.make_node("Relu", ["x"], ["y"])],
                      [2, 8], [2, 8])


# --------------------------------------------------------------------------- non-UTF-8 input


@pytest.mark.parametrize("main, args", [
    (dlc_opt.main, []), (dlc_main.main, ["compile", "-o", "{tmp}/out.so"]), (dlc_run.main, []),
], ids=["dlc-opt", "dlc-compile", "dlc-run"])
def test_binary_mlir_file(main: ToolMain, args: list[str], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "random.mlir"
    source.write_bytes(b"\xb0\x9c\xff\x00garbage\x81")
    *first, = (a.format(tmp=tmp_path) for a in args)
    command = [*first[:1], source, *first[1:]] if first else [source]
    err = tool_error(main, command, capsys)
    assert "random.mlir: expected MLIR text in UTF-8, found byte 0xb0 at offset 0" in err


# --------------------------------------------------------------------------- declarations

DECLARATION = """\
func.func private @ext(%a: tensor<2xf32>) -> tensor<2xf32>
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %b = func.call @ext(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %b : tensor<2xf32>
}
"""


def test_bodiless_function_is_a_compile_error(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "decl.mlir"
    source.write_text(DECLARATION)
    with pytest.raises(dlc.CompileError, match=r"'func\.func' @ext has no body"):
        dlc.compile(source, cache=False, jobs=1)
    entry = tmp_path / "entry.mlir"
    entry.write_text("func.func private @main(%a: tensor<2xf32>) -> tensor<2xf32>\n")
    err = tool_error(dlc_main.main, ["compile", entry, "-o", tmp_path / "e.so", "--no-cache"],
                     capsys)
    assert "'func.func' @main has no body: expected every function" in err
    assert not (tmp_path / "e.so").exists()


# --------------------------------------------------------------------------- option ranges


@pytest.mark.parametrize("args, message", [
    (["bench", "{m}", "--repeat", "0"], "--repeat: expected a positive number of runs, found '0'"),
    (["profile", "{m}", "--repeat", "0"], "expected a positive number of runs, found '0'"),
    (["profile", "{m}", "--top", "-1"], "--top: expected a non-negative number of rows"),
    (["compile", "{m}", "--threads", "-1"], "--threads: expected a non-negative number of thr"),
    (["compile", "{m}", "--jobs", "-3"], "--jobs/-j: expected a positive number of jobs, fou"),
])
def test_option_ranges(args: list[str], message: str, tiny: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    err = tool_error(dlc_main.main, [a.format(m=tiny) for a in args], capsys)
    assert message in err


def test_library_ranges(tiny: Path) -> None:
    with pytest.raises(dlc.CompileError, match="expected a non-negative number of threads"):
        dlc.compile(tiny, threads=-1, cache=False)
    with pytest.raises(dlc.CompileError, match="expected a positive number of compile jobs"):
        dlc.compile(tiny, jobs=-3, cache=False)
    with pytest.raises(dlc.ExecutableError, match="expected a positive number of timed runs"):
        median_seconds(lambda: None, 0)


# --------------------------------------------------------------------------- tuning logs


def bad_log(tmp_path: Path) -> Path:
    """A log whose third line is a record with a list for its knobs (and a torn last line)."""
    header = {"header": {"graph_passes": "graph-opt", "loop_lowering":
                         "convert-tensor-expr-to-loop", "space": "sketch", "v": 1}}
    good = {"workload": "w", "target": "llvm", "script": None, "knobs": {}, "costs": [1e-4]}
    lines = [json.dumps(header), json.dumps(good), json.dumps({**good, "knobs": []}),
             '{"workload": "w", "tar']
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines))
    return path


def test_tuning_log_record_of_the_wrong_type(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = bad_log(tmp_path)
    contents = read_log(log)
    assert len(contents.records) == 1 and contents.skipped == 2
    assert contents.invalid == [(3, "expected 'knobs' to be an object, found a list")]
    with pytest.raises(TuningLogError, match=r"bad\.jsonl:3: expected 'knobs' to be an object"):
        load_best(log)
    payload = REPO / "tests" / "filecheck" / "rewrites" / "loop-apply-tuning-log.mlir"
    err = tool_error(dlc_opt.main, [payload, "-p", f'loop-apply-tuning-log{{log="{log}"}}'],
                     capsys)
    assert f"invalid tuning log record at {log}:3: expected 'knobs' to be an object" in err


# --------------------------------------------------------------------------- integers


def test_dimension_above_i64(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "big.mlir"
    source.write_text("func.func @main(%x: tensor<18446744073709551618xf32>) {\n"
                      "  func.return\n}\n")
    err = tool_error(dlc_opt.main, [source], capsys)
    assert ("'func.func' op expected the dimensions of block argument #0 to be at most "
            "2^63 - 1, found 18446744073709551618") in err
    model = save_model(
        tmp_path / "pads.onnx", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv0",
                                                  pads=[2**63 - 1] * 4)],
        [1, 2, 4, 4], ["n", "c", "h", "w"], {"w": np.ones((2, 2, 1, 1), np.float32)})
    with pytest.raises(dlc.CompileError, match=r"'conv0' \(Conv.*'graph\.conv2d' op expected "
                       r"the dimensions of result #0 to be at most 2\^63 - 1"):
        dlc.compile(model, cache=False, jobs=1)


# --------------------------------------------------------------------------- transform scripts

PAYLOAD = """\
func.func @f(%X: memref<8xf32>, %Y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "scale" reads(%X : memref<8xf32>) writes(%Y : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      loop.store %x, %Y[%i] : f32 -> memref<8xf32>
    }
  }
  func.return
}
"""
USED_BEFORE_DEFINED = """\
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
    transform.loop.parallel %i : !transform.any_op
    %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""


def test_transform_library_value_used_before_defined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "payload.mlir").write_text(PAYLOAD)
    (tmp_path / "script.mlir").write_text(USED_BEFORE_DEFINED)
    err = tool_error(dlc_opt.main, [
        tmp_path / "payload.mlir", "-p",
        f'loop-interpret-transforms{{library="{tmp_path / "script.mlir"}"}}'], capsys)
    assert ("loop-interpret-transforms: 'transform.loop.parallel' op operand #0 (%i) is used "
            "before it is defined") in err


# --------------------------------------------------------------------------- memory


def test_bench_of_a_huge_input_checks_memory_before_making_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = save_model(tmp_path / "huge.onnx", [helper.make_node("Relu", ["x"], ["y"])],
                       [2**40], [2**40])
    err = tool_error(dlc_main.main, ["bench", model, "--repeat", "1", "--no-cache"], capsys)
    assert "dlc: error: @main needs 8.0 TiB of memory per call" in err
    assert "inputs and outputs of 8.0 TiB" in err


# --------------------------------------------------------------------------- warnings


def test_stale_declared_output_shape_is_a_warning(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A model whose output is declared 8x2 where Relu makes 2x8 compiles (exit 0, the library
    written) with one `dlc: warning:` line naming the output and its producer."""
    model = save_model(tmp_path / "stale.onnx", [helper.make_node("Relu", ["x"], ["y"],
                                                                  name="act")], [2, 8], [8, 2])
    out = tmp_path / "stale.so"
    code = dlc_main.main(["compile", str(model), "-o", str(out), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert out.is_file()
    assert ("dlc: warning: graph output 'y' is declared with shape 8x2, but node 'act' (Relu) "
            "produces tensor<2x8xf32>") in err, err
    assert "Traceback" not in err and "UserWarning" not in err
