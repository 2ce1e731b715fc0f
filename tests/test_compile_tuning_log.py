"""`dlc.compile(model, tuning_log=F)` and `dlc compile --tuning-log F` apply the log's schedules.

The kernels are lowered to the loop level as tuning saw them (epilogues unfused for the sketch
and template spaces, fused for the rules space), so a record's workload key matches; a tuned
kernel carries `dlc.scheduled` through deduplication and memory planning, so
`loop-default-schedule` leaves the tuned loops alone; the results match NumPy; the log's
content is part of the cache key.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from dlc.autotune.tasks import workloads_of
from dlc.dialects import make_context
from dlc.dialects.contracts import SCHEDULED_ATTR
from dlc.dialects.loop.ops import ForOp
from dlc.driver.cache import CompileOptions
from dlc.driver.compiler import whole_module_passes
from dlc.driver.source import parse_module
from dlc.driver.target import resolve_cpu_target
from dlc.rewrites.loop_apply_tuning_log import log_loop_lowering
from dlc.rewrites.tuning.apply import load_best, run_script
from dlc.rewrites.tuning.log import LogWriter, Record, read_log, tuning_key
from dlc.rewrites.tuning.workload import Workload
from dlc.target import CpuTarget
from xdsl.dialects.func import FuncOp

import dlc
from tests.test_autotune import matmul_graph, workload_of

H = "!transform.any_op"

SPLIT3_FUSE_PARALLEL = f"""module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: {H}) {{
    %b = transform.loop.match_block "matmul" in %root : ({H}) -> {H}
    %i, %j, %k = transform.loop.get_loops %b : ({H}) -> ({H}, {H}, {H})
    %init = transform.loop.decompose_reduction %b, %i : ({H}, {H}) -> {H}
    %i0, %i1, %i2 = transform.loop.split %i [4, 2] : ({H}) -> ({H}, {H}, {H})
    %j0, %j1 = transform.loop.split %j [8] : ({H}) -> ({H}, {H})
    transform.loop.reorder %i0, %j0, %i1, %k, %i2, %j1 : {H}, {H}, {H}, {H}, {H}, {H}
    %f = transform.loop.fuse %i0, %j0 : ({H}, {H}) -> {H}
    transform.loop.parallel %f : {H}
    transform.yield
  }}
}}
"""
"""A schedule a log might hold: a 3-level split, fuse of the outer tiles, parallel."""


def _loops(func: FuncOp) -> list[tuple[str, str]]:
    return [(op.axis.data, op.kind.data) for op in func.walk() if isinstance(op, ForOp)]


def this_host() -> CpuTarget:
    """This machine, as the compile resolves it (its tuning records name it)."""
    return resolve_cpu_target("host")


def _write_log(path: Path, workload: Workload, script: str | None, cost: float = 1e-4) -> None:
    record = Record(workload=workload.key, target=tuning_key(this_host()), script=script,
                    knobs={"test": 1}, costs=[cost, cost], flops=float(workload.flops))
    with LogWriter(path) as writer:
        writer.write(record)


def _model(tmp_path: Path, m: int, n: int, k: int) -> Path:
    model = tmp_path / "mm.mlir"
    model.write_text(matmul_graph(m, n, k))
    return model


def _check_runs(executable: dlc.Executable, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    np.testing.assert_allclose(executable(a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_compile_applies_a_logged_schedule(tmp_path: Path) -> None:
    """The pipeline's whole-module passes schedule the kernel exactly as the record's script
    does on the tuned workload, keep `dlc.scheduled` through dedup and memory planning, and the
    compiled model computes the product."""
    m, n, k = 16, 32, 8
    workload = workload_of(matmul_graph(m, n, k))
    log = tmp_path / "tune.jsonl"
    _write_log(log, workload, SPLIT3_FUSE_PARALLEL)

    ctx = make_context()
    expected = workload.module(ctx)
    run_script(expected, SPLIT3_FUSE_PARALLEL, ctx)
    (expected_kernel,) = [op for op in expected.ops if isinstance(op, FuncOp)]

    model = _model(tmp_path, m, n, k)
    module = parse_module(model, ctx)
    suffix, tuned = whole_module_passes(module, CompileOptions(tuning_log=log), ctx)
    assert list(tuned.values()) == [workload.key]
    # schedules (and folding constant packing) see the whole module; fusing a kernel's nests
    # and lowering are per kernel
    lowering = ["loop-fuse-nests", "loop-collapse-parallel", "math-polynomial-approximation",
                "loop-linearize-runtime-strides", "convert-memref-view-to-llvm",
                "convert-loop-to-llvm"]
    assert [p.name for p in suffix] == lowering
    kernels = [
        op for op in module.ops if isinstance(op, FuncOp) and SCHEDULED_ATTR in op.attributes
    ]
    assert len(kernels) == 1
    assert _loops(kernels[0]) == _loops(expected_kernel)
    assert ("i0.0.i1.0.fused", "parallel") in _loops(kernels[0])

    executable = dlc.compile(model, tuning_log=log, cache=False)
    assert "loop-apply-tuning-log" in executable.stats.seconds
    _check_runs(executable, m, n, k)


def test_compile_without_a_matching_record_uses_the_default_schedule(tmp_path: Path) -> None:
    """A record of another workload applies to nothing; the default schedule still runs."""
    log = tmp_path / "other.jsonl"
    _write_log(log, workload_of(matmul_graph(8, 8, 8)), SPLIT3_FUSE_PARALLEL)
    model = _model(tmp_path, 16, 32, 8)
    ctx = make_context()
    module = parse_module(model, ctx)
    _, tuned = whole_module_passes(module, CompileOptions(tuning_log=log), ctx)
    assert tuned == {}
    assert not any(SCHEDULED_ATTR in op.attributes for op in module.ops
                   if isinstance(op, FuncOp))
    _check_runs(dlc.compile(model, tuning_log=log, cache=False), 16, 32, 8)


def test_tuning_log_content_is_part_of_the_cache_key(tmp_path: Path) -> None:
    workload = workload_of(matmul_graph(16, 32, 8))
    log = tmp_path / "tune.jsonl"
    _write_log(log, workload, SPLIT3_FUSE_PARALLEL)
    first = CompileOptions(tuning_log=log).fingerprint()
    _write_log(log, workload, None)
    assert CompileOptions(tuning_log=log).fingerprint() != first
    assert CompileOptions().fingerprint() not in (first, CompileOptions(tuning_log=log)
                                                  .fingerprint())


def test_cli_tune_then_compile_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dlc tune` for a few trials, then `dlc compile --tuning-log`: the tuned kernel's best
    record is applied (or the default kept) and the library computes the product. The tune
    summary reports against the default schedule and times the model with and without the
    log; the compile says what it applied and which kernels kept the default."""
    import sys

    from dlc.tools import dlc_tune
    from dlc.tools.dlc_main import main as dlc_main

    # ProgressBar's default stream is the sys.stderr of import time (a test's closed capture
    # when another test imported it first): give it the current one.
    monkeypatch.setattr(dlc_tune.ProgressBar.__init__, "__defaults__", (sys.stderr, 24))

    m, n, k = 16, 16, 16
    model = _model(tmp_path, m, n, k)
    log = tmp_path / "tune.jsonl"
    assert dlc_main(["tune", str(model), "--trials", "2", "--log", str(log), "--repeat", "1",
                     "--min-repeat-ms", "1", "--batch-size", "2", "--search", "random"]) == 0
    assert log.is_file()
    err = capsys.readouterr().err
    assert "(baseline: the default schedule)" in err
    assert re.search(r"measured model latency [0-9.]+ ms with the log vs [0-9.]+ ms without", err)
    ctx = make_context()
    module = parse_module(model, ctx)
    _, tuned = whole_module_passes(module, CompileOptions(tuning_log=log), ctx)
    (workload,) = workloads_of(parse_module(model, ctx))
    best = load_best(log)[workload.key]
    applies = best.knobs.get("baseline") != "default"  # else the default schedule was fastest
    assert list(tuned.values()) == ([workload.key] if applies else [])
    library = tmp_path / "mm.so"
    assert dlc_main(["compile", str(model), "--tuning-log", str(log), "-o", str(library),
                     "--no-cache"]) == 0
    out = capsys.readouterr().out
    if applies:
        assert "tuning:    applied 1 record(s)" in out and "kept the default schedule: none" in out
    else:
        assert "tuning:    applied 0 record(s)" in out and "kept the default schedule: @" in out
    _check_runs(dlc.load(library), m, n, k)


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_select_the_records_of_the_host(tmp_path: Path, threads: int) -> None:
    """Records written for the host with all cores also schedule a compile at another thread
    count (same CPU); the compiled model is right either way."""
    workload = workload_of(matmul_graph(16, 32, 8))
    log = tmp_path / "tune.jsonl"
    _write_log(log, workload, SPLIT3_FUSE_PARALLEL)
    ctx = make_context()
    module = parse_module(_model(tmp_path, 16, 32, 8), ctx)
    _, tuned = whole_module_passes(module, CompileOptions(threads=threads, tuning_log=log), ctx)
    assert list(tuned.values()) == [workload.key]
    _check_runs(dlc.compile(_model(tmp_path, 16, 32, 8), threads=threads, tuning_log=log,
                            cache=False), 16, 32, 8)


def _matmul_relu_model(tmp_path: Path, m: int, n: int, k: int) -> Path:
    model = tmp_path / "mm_relu.mlir"
    model.write_text(f"""
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %r = graph.matmul %a, %b : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %y = graph.relu %r : tensor<{m}x{n}xf32>
  func.return %y : tensor<{m}x{n}xf32>
}}
""")
    return model


def test_rules_space_tunes_and_applies_fused_kernels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dlc tune --space rules` tunes the kernels the compile makes (the relu fused into the
    matmul's nest); a compile with its log lowers the same way, so the records match, and
    applies the best one (unless the default schedule was fastest)."""
    import sys

    from dlc.autotune.tasks import extract_tasks
    from dlc.tools import dlc_tune
    from dlc.tools.dlc_main import main as dlc_main

    monkeypatch.setattr(dlc_tune.ProgressBar.__init__, "__defaults__", (sys.stderr, 24))
    m, n, k = 32, 32, 32
    model = _matmul_relu_model(tmp_path, m, n, k)
    (fused,) = extract_tasks(model, fuse_epilogue=True)
    (unfused,) = extract_tasks(model)
    assert fused.workload.key != unfused.workload.key
    anchor = fused.workload.info.anchor()
    relu = [b for b in fused.workload.info.blocks if b.name != anchor.name and not b.reduction]
    assert relu and all(b.nest == anchor.nest for b in relu)  # in the matmul's nest

    log = tmp_path / "rules.jsonl"
    assert dlc_main(["tune", str(model), "--space", "rules", "--trials", "3", "--log", str(log),
                     "--repeat", "1", "--min-repeat-ms", "1", "--batch-size", "3",
                     "--search", "random"]) == 0
    best = load_best(log, tuning_key(this_host()))
    assert set(best) == {fused.workload.key}
    header = read_log(log).header
    assert header is not None and header.space == "rules"
    assert "fuse-epilogue=false" not in header.loop_lowering  # the compile's own lowering
    ctx = make_context()
    _, tuned = whole_module_passes(parse_module(model, ctx),
                                   CompileOptions(tuning_log=log), ctx)
    applies = best[fused.workload.key].knobs.get("baseline") != "default"
    assert list(tuned.values()) == ([fused.workload.key] if applies else [])
    executable = dlc.compile(model, tuning_log=log, cache=False)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    np.testing.assert_allclose(executable(a, b), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_sketch_space_logs_keep_the_unfused_lowering(tmp_path: Path) -> None:
    """A log of unfused kernels (sketch and template spaces) written without a header still
    selects the unfused lowering (from its records' space)."""
    from dlc.autotune.tasks import extract_tasks

    model = _matmul_relu_model(tmp_path, 16, 16, 16)
    (unfused,) = extract_tasks(model)
    log = tmp_path / "sketch.jsonl"
    _write_log(log, unfused.workload, None)
    assert read_log(log).header is None
    assert log_loop_lowering(log) == "convert-tensor-expr-to-loop{fuse-epilogue=false}"
    ctx = make_context()
    _, tuned = whole_module_passes(parse_module(model, ctx),
                                   CompileOptions(tuning_log=log), ctx)
    assert list(tuned.values()) == [unfused.workload.key]
