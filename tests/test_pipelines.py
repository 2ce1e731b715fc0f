"""Typed pipelines: named pipelines parse into pass objects, options change by replacement, and
the driver builds the tuning-log pipeline from the log's header."""

from __future__ import annotations

from pathlib import Path

import pytest
from dlc.dialects import make_context
from dlc.driver.compiler import pipeline_passes
from dlc.driver.errors import CompileError
from dlc.pipelines import (
    PIPELINES,
    PipelineError,
    expand,
    index_of,
    named_pipeline,
    parse_pipeline,
    run_pipeline,
    to_spec,
    with_options,
)
from dlc.rewrites.loop_apply_tuning_log import LoopApplyTuningLogPass, log_loop_lowering
from dlc.rewrites.tuning.log import LogHeader, LogWriter, Record, read_log
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

GRAPH = """
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = graph.matmul %a, %b : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
"""


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_named_pipelines_expand_to_dlc_and_upstream_passes(name: str) -> None:
    passes = named_pipeline(name)
    assert passes and not any(p.name in PIPELINES for p in passes)
    assert parse_pipeline(to_spec(passes)) == passes


def test_a_named_pipeline_inside_a_spec_expands_in_place() -> None:
    passes = parse_pipeline("cse,graph-opt,dce")
    assert passes[0].name == "cse" and passes[-1].name == "dce"
    assert passes[1:-1] == named_pipeline("graph-opt")
    assert expand(passes) == passes


def test_options_change_by_replacement_on_the_passes_that_have_them() -> None:
    cpu = named_pipeline("cpu")
    threaded = with_options(cpu, threads=3)
    changed = [p.name for p, q in zip(cpu, threaded, strict=True) if p != q]
    assert changed == ["loop-default-schedule", "convert-loop-to-llvm"]
    assert all(p.threads == 3 for p in threaded if p.name in changed)
    assert "loop-default-schedule{threads=3}" in to_spec(threaded)


def test_unknown_names_are_clear_errors() -> None:
    with pytest.raises(PipelineError, match="no pipeline named 'gpu' .*cpu-direct"):
        named_pipeline("gpu")
    with pytest.raises(PipelineError, match="invalid pass pipeline 'cse,nope'"):
        parse_pipeline("cse,nope")
    with pytest.raises(CompileError, match="no pipeline named 'nope'"):
        pipeline_passes(parse_module_text(), "nope", None)


def parse_module_text() -> ModuleOp:
    return Parser(make_context(), GRAPH).parse_module()


def _log(path: Path, header: LogHeader | None, space: str = "sketch") -> Path:
    with LogWriter(path, header) as log:
        log.write(Record("0123456789abcdef", "llvm -mcpu=x -threads=1", None, costs=[1.0],
                         space=space))
    return path


def test_a_log_header_is_written_once_and_read_back(tmp_path: Path) -> None:
    header = LogHeader("graph-opt", "convert-tensor-expr-to-loop{fuse-epilogue=false}", "sketch")
    path = _log(tmp_path / "a.jsonl", header)
    _log(path, header)  # appending does not write a second header
    contents = read_log(path)
    assert contents.header == header and len(contents.records) == 2 and contents.skipped == 0
    assert path.read_text().count('"header"') == 1


@pytest.mark.parametrize(("header", "space", "lowering"), [
    (LogHeader("g", "convert-tensor-expr-to-loop", "rules"), "rules",
     "convert-tensor-expr-to-loop"),
    (None, "rules", "convert-tensor-expr-to-loop"),
    (None, "sketch", "convert-tensor-expr-to-loop{fuse-epilogue=false}"),
])
def test_the_compile_lowers_as_the_log_says(
    tmp_path: Path, header: LogHeader | None, space: str, lowering: str
) -> None:
    """The driver's pipeline for a tuning log: the log's loop lowering (from its header, else
    from its records' space), then loop-apply-tuning-log, the rest as the named pipeline."""
    log = _log(tmp_path / "t.jsonl", header, space)
    assert log_loop_lowering(log) == lowering
    passes = pipeline_passes(parse_module_text(), "cpu", 2, log, "llvm -mcpu=x -threads=2")
    at = index_of(passes, "convert-tensor-expr-to-loop")
    assert at is not None
    assert passes[at] == parse_pipeline(lowering)[0]
    assert passes[at + 1] == LoopApplyTuningLogPass(log=str(log), target="llvm -mcpu=x -threads=2")
    without = pipeline_passes(parse_module_text(), "cpu", 2)
    assert [p.name for p in passes if p.name != "loop-apply-tuning-log"] == [
        p.name for p in without]


def test_a_loop_level_module_applies_the_log_first(tmp_path: Path) -> None:
    log = _log(tmp_path / "t.jsonl", None)
    module = parse_module_text()
    run_pipeline(module, parse_pipeline(
        "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop"),
        make_context())
    passes = pipeline_passes(module, "cpu", None, log)
    assert passes[0] == LoopApplyTuningLogPass(log=str(log))
