"""Tests of the auto-tuner (autotune/): spaces, log, measurement isolation, search, a real run.

The measurement tests build and run real kernels in worker processes: a wrong, a crashing and a
hanging candidate in one batch with a good one must each cost only their own trial.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from dlc.autotune.cost_model import RidgeCostModel, make_cost_model
from dlc.autotune.measure import Candidate, MeasureOptions, Measurer, MeasureResult
from dlc.autotune.search import EvolutionarySearch, GridSearch, RandomSearch
from dlc.autotune.space import (
    Knob,
    SketchSpace,
    Space,
    TemplateSpace,
    apply_script,
    divisor_splits,
    make_space,
    matmul_template,
)
from dlc.autotune.tasks import lower_to_loop, workloads_of
from dlc.autotune.tuner import (
    CONFIRM_ROUNDS,
    CONFIRM_TOP,
    CONFIRM_TRIAL,
    TuneResult,
    tune_workload,
)
from dlc.dialects import make_context
from dlc.driver.target import resolve_cpu_target
from dlc.rewrites.tuning.log import LogWriter, Record, best_records, read_log, tuning_key
from dlc.rewrites.tuning.workload import Workload, extract_kernel, kernel_functions
from dlc.target import parse_cpu_target
from xdsl.parser import Parser

TARGET = parse_cpu_target("llvm -mcpu=skylake-avx512 -num-cores=2")
"""The tuner's target in these tests: 16 f32 lanes, 32 vector registers, 2 threads."""


def matmul_graph(m: int, n: int, k: int) -> str:
    return f"""
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %r = graph.matmul %a, %b : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  func.return %r : tensor<{m}x{n}xf32>
}}
"""


def workload_of(text: str) -> Workload:
    module = Parser(make_context(), text).parse_module()
    (workload,) = workloads_of(module)
    return workload


@pytest.fixture(scope="module")
def small_matmul() -> Workload:
    return workload_of(matmul_graph(16, 32, 8))


# ----------------------------------------------------------------------------------------------
# Workloads
# ----------------------------------------------------------------------------------------------


def test_workload_key_is_canonical(small_matmul: Workload) -> None:
    """Same kernel, other SSA names and function name: same key; other shape: other key."""
    renamed = matmul_graph(16, 32, 8).replace("%a", "%lhs").replace("@main", "@other")
    assert workload_of(renamed).key == small_matmul.key
    assert workload_of(matmul_graph(16, 32, 4)).key != small_matmul.key
    assert small_matmul.flops == 2 * 16 * 32 * 8
    assert "@kernel" in small_matmul.text


def test_globals_become_inputs() -> None:
    """Constants read with memref.get_global become inputs: the key ignores weight values."""
    text = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<0.5> : tensor<8x2xf32>
  %r = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}
"""
    module = lower_to_loop(Parser(make_context(), text).parse_module())
    (func,) = kernel_functions(module)
    kernel = str(extract_kernel(func))
    assert "get_global" not in kernel
    assert "memref<8x2xf32>" in kernel.split("attributes", 1)[0]
    other = text.replace("dense<0.5>", "dense<2.0>")
    assert workload_of(other).key == workload_of(text).key
    assert workload_of(text).constant_inputs == (1,)
    assert "memref<8x2xf32> {dlc.constant}" in kernel


CONSTANT_WEIGHT_MATMUL = """
func.func @main(%x: tensor<24x40xf32>) -> tensor<24x48xf32> {
  %w = graph.constant dense<0.5> : tensor<40x48xf32>
  %r = graph.matmul %x, %w : (tensor<24x40xf32>, tensor<40x48xf32>) -> tensor<24x48xf32>
  %y = graph.relu %r : tensor<24x48xf32>
  func.return %y : tensor<24x48xf32>
}
"""


def test_constant_inputs_are_measured_as_a_model_passes_them(tmp_path: Path) -> None:
    """A workload's constant inputs are baked into the measured library as constant globals:
    the library takes only the other inputs, the default schedule's packing of the weight is
    folded at build time (no pack nest left in the timed kernel), and the candidates still
    agree with the untuned kernel."""
    from dlc.autotune.measure import build_library, random_inputs, with_constant_inputs
    from dlc.autotune.tasks import extract_tasks
    from dlc.pipelines import parse_pipeline
    from dlc.rewrites.loop_fold_constant_nests import LoopFoldConstantNestsPass
    from dlc.runtime.executable import Executable
    from dlc.runtime.library import load_library
    from xdsl.passes import PassPipeline

    model = tmp_path / "mm.mlir"
    model.write_text(CONSTANT_WEIGHT_MATMUL)
    (task,) = extract_tasks(model, fuse_epilogue=True)
    workload = task.workload
    assert workload.constant_inputs == (1,)
    x, w = random_inputs(workload, 0)
    constants = tmp_path / "constants.npz"
    np.savez(constants, a0=w)

    library = tmp_path / "kernel.so"
    library.write_bytes(build_library(workload.text, None, True, 3, str(constants)))
    executable = Executable(load_library(library))
    assert [a.shape for a in executable.signature.arguments] == [(24, 40), (24, 48)]
    np.testing.assert_allclose(executable(x), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)

    ctx = make_context()
    module = workload.module(ctx)
    PassPipeline(parse_pipeline("loop-default-schedule")).apply(ctx, module)
    with_constant_inputs(module, [w])
    assert "matmul.pack" in str(module)
    LoopFoldConstantNestsPass().apply(ctx, module)
    assert "matmul.pack" not in str(module)

    with Measurer(MeasureOptions(repeat=1, min_repeat_ms=1), workdir=tmp_path / "m") as m:
        results = m.measure(workload, [Candidate(default_schedule=True), Candidate()])
    assert all(r.ok for r in results), [r.error for r in results]


# ----------------------------------------------------------------------------------------------
# Spaces
# ----------------------------------------------------------------------------------------------


def test_divisor_splits_are_exact_factorizations() -> None:
    splits = divisor_splits(12, 3)
    assert all(math.prod(s) == 12 and len(s) == 3 for s in splits)
    assert len(set(splits)) == len(splits) == 18  # ordered factorizations of 2^2 * 3 into 3
    assert divisor_splits(7, 2) == ((7, 1), (1, 7))
    assert all(max(s[1:]) <= 4 for s in divisor_splits(64, 3, max_inner=4))


TEMPLATE = """
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %t = transform.param.constant 1 : i64 {dlc.knob = "tile_j", dlc.split = 32 : i64, dlc.part = 1 : i64} -> !transform.param<i64>
    %u = transform.param.constant 1 : i64 {dlc.knob = "unroll", dlc.candidates = array<i64: 1, 2, 4>} -> !transform.param<i64>
    %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
    %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %j0, %j1 = transform.loop.split %j [%t] : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
    transform.loop.unroll %k factor %u : !transform.any_op, !transform.param<i64>
    transform.yield
  }
}
"""  # noqa: E501


def test_template_space_from_annotated_script(small_matmul: Workload) -> None:
    space = TemplateSpace.from_script(TEMPLATE, "t")
    assert [k.name for k in space.knobs] == ["tile_j", "unroll"]
    assert len(space.knobs[0].candidates) == 6  # 32 = a * b: b in 1, 2, 4, 8, 16, 32
    assert space.knobs[1].candidates == (1, 2, 4)
    assert space.size == 18 and len(list(space.grid())) == 18
    point = space.point_of({"tile_j": [4, 8], "unroll": 2})
    script = space.render(point)
    assert "dlc.knob" not in script
    assert "transform.param.constant 8 : i64" in script
    assert "transform.param.constant 2 : i64" in script
    assert apply_script(small_matmul, script) is None
    assert space.values(point) == {"tile_j": [4, 8], "unroll": 2}


def test_template_knob_without_candidates_is_an_error() -> None:
    bad = TEMPLATE.replace(', dlc.candidates = array<i64: 1, 2, 4>', "")
    with pytest.raises(Exception, match="expected 'dlc.candidates' or 'dlc.split'"):
        TemplateSpace.from_script(bad)


def test_sketch_space_rejects_invalid_points_cheaply(small_matmul: Workload) -> None:
    space = SketchSpace(small_matmul, TARGET)
    names = [k.name for k in space.knobs]
    assert names[:3] == ["tile.i0", "tile.i1", "tile.r0"]
    assert "parallel" in names and "vectorize" in names
    base = {k.name: (k.candidates[0].arg if k.candidates else None) for k in space.knobs}
    base = {name: list(v) if isinstance(v, tuple) else v for name, v in base.items()}

    def point(**changes: object) -> tuple[int, ...]:
        return space.point_of({**base, **changes})

    bad_width = point(**{"tile.i1": [1, 1, 1, 32], "vectorize": True})
    assert space.check(bad_width) is None  # 32 lanes: 2 registers, fine
    odd = point(**{"tile.i1": [16, 1, 1, 2], "vectorize": True})
    assert "vector width 2" in (space.check(odd) or "")
    too_many = point(**{"tile.i0": [1, 1, 1, 16], "tile.i1": [1, 1, 1, 32], "vectorize": True})
    assert "vector registers" in (space.check(too_many) or "")
    serial_outer = point(**{"tile.i0": [1, 1, 1, 16], "parallel": 1})
    assert "parallel extent 1" in (space.check(serial_outer) or "")
    rng = random.Random(0)
    for _ in range(5):
        p = space.random_valid_point(rng)
        assert p is not None and space.check(p) is None
        assert len(space.features(p)) == len(space.feature_names)
        assert apply_script(small_matmul, space.render(p)) is None


def test_matmul_template_applies(small_matmul: Workload) -> None:
    space = matmul_template(small_matmul, TARGET)
    assert [k.name for k in space.knobs] == ["tile_i", "tile_j", "tile_k", "parallel"]
    rng = random.Random(1)
    for _ in range(6):
        p = space.random_valid_point(rng)
        assert p is not None
        assert apply_script(small_matmul, space.render(p)) is None


def test_rules_template_applies_and_holds_the_default_schedule(small_matmul: Workload) -> None:
    """The rules space: `transform.loop.apply_rules` with the four knobs; every point schedules
    the kernel, and the default schedule's own choice is a point."""
    space = make_space(small_matmul, TARGET, "rules")
    assert [k.name for k in space.knobs] == ["rows", "accumulators", "pack_rows", "l2_kib"]
    default = space.point_of({"rows": 8, "accumulators": 24, "pack_rows": 0, "l2_kib": 1024})
    assert space.check(default) is None
    rng = random.Random(2)
    for p in [default, *(space.random_point(rng) for _ in range(4))]:
        script = space.render(p)
        assert "transform.loop.apply_rules %" in script
        assert apply_script(small_matmul, script) is None


# ----------------------------------------------------------------------------------------------
# The log
# ----------------------------------------------------------------------------------------------


def _record(cost: float, trial: int, error: dict[str, str] | None = None) -> Record:
    return Record(workload="w1", target="llvm -mcpu=x", script="s", knobs={"a": [1, 2]},
                  costs=[] if error else [cost, cost * 1.1], error=error, flops=1e9, trial=trial)


def test_log_round_trip_and_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with LogWriter(path) as log:
        log.write(_record(0.5, 0))
        log.write(_record(0.0, 1, {"kind": "crash", "message": "SIGSEGV"}))
    contents = read_log(path)
    assert contents.skipped == 0
    assert [r.trial for r in contents.records] == [0, 1]
    assert contents.records[0].costs == [0.5, 0.55] and contents.records[0].knobs == {"a": [1, 2]}
    assert contents.records[1].error == {"kind": "crash", "message": "SIGSEGV"}
    assert json.loads(path.read_text().splitlines()[0])["v"] == 1
    # a kill in the middle of a write leaves a torn last line: readers skip it
    with open(path, "a") as f:
        f.write(_record(0.1, 2).to_json()[:40])
    contents = read_log(path)
    assert contents.skipped == 1 and len(contents.records) == 2
    # appending again first terminates the torn line
    with LogWriter(path) as log:
        log.write(_record(0.25, 3))
    contents = read_log(path)
    assert contents.skipped == 1 and [r.trial for r in contents.records] == [0, 1, 3]
    # the three records are one schedule (same script and knobs): judged on all its run times
    best = best_records(contents.records)
    assert best["w1"].trial == 3 and best["w1"].costs == [0.5, 0.55, 0.25, 0.275]
    assert best["w1"].cost == pytest.approx(0.3875)


def test_best_records_judges_a_schedule_on_all_its_measurements() -> None:
    """The winner's curse: a schedule measured fast once and slow when measured again loses to
    one that is steadily a little slower than its lucky run."""
    def record(script: str, costs: list[float], trial: int) -> Record:
        return Record(workload="w", target="t", script=script, knobs={"s": script}, costs=costs,
                      flops=1e9, trial=trial)

    lucky = [record("a", [0.10, 0.11], 0), record("a", [0.30, 0.31], -2),
             record("a", [0.29, 0.30], -2)]
    steady = [record("b", [0.20, 0.21], 1), record("b", [0.20, 0.22], -2)]
    assert best_records(lucky[:1] + steady[:1])["w"].script == "a"
    best = best_records([*lucky, *steady])["w"]
    assert best.script == "b" and len(best.costs) == 4


# ----------------------------------------------------------------------------------------------
# Tuning never makes a kernel slower: scripted timings
# ----------------------------------------------------------------------------------------------


class ScriptedMeasurer:
    """A measurer whose results come from `timings(candidate)` (nothing is built): seconds per
    run, or an error kind."""

    def __init__(self, timings: Callable[[Candidate], list[float] | str]) -> None:
        self.timings = timings
        self.target = TARGET
        self.options = MeasureOptions()
        self.measured: list[Candidate] = []

    def result(self, candidate: Candidate) -> MeasureResult:
        self.measured.append(candidate)
        timing = self.timings(candidate)
        if isinstance(timing, str):
            return MeasureResult([], timing, f"scripted {timing}")
        return MeasureResult(list(timing))

    def measure(self, workload: Workload, candidates: Sequence[Candidate],
                run_timeout: float | None = None) -> list[MeasureResult]:
        return [self.result(c) for c in candidates]

    def measure_rounds(self, workload: Workload, candidates: Sequence[Candidate], rounds: int,
                       run_timeout: float | None = None) -> list[list[MeasureResult]]:
        return [[self.result(c) for c in candidates] for _ in range(rounds)]

    def close(self) -> None:
        pass


DEFAULT_TIMES = [1.00e-3, 1.01e-3, 1.02e-3]


def _scripted(candidate_times: Callable[[str], list[float] | str]
              ) -> Callable[[Candidate], list[float] | str]:
    def timings(candidate: Candidate) -> list[float] | str:
        if candidate.default_schedule:
            return DEFAULT_TIMES
        if candidate.script is None:
            return [5e-3, 5e-3]  # the untuned kernel: never what a tuned compile gets
        return candidate_times(candidate.script)
    return timings


def _tune_scripted(workload: Workload, log: Path, timings: Callable[[str], list[float] | str],
                   trials: int = 8, strategy: str = "random") -> TuneResult:
    measurer = ScriptedMeasurer(_scripted(timings))
    return tune_workload(workload, trials, measurer=measurer, space="rules",  # type: ignore
                         strategy=strategy, log_path=log, batch_size=4)


def test_search_starts_from_the_default_and_never_ends_below_it(
    small_matmul: Workload, tmp_path: Path
) -> None:
    """The rules space's default knobs are the first trial; when every schedule is slower than
    the default, the log's best for the workload is the default ('leave it to the default
    schedule' for loop-apply-tuning-log) and the tuner reports it."""
    from dlc.autotune.space import default_rule_values
    from dlc.rewrites.tuning.apply import load_best

    log = tmp_path / "slower.jsonl"
    result = _tune_scripted(small_matmul, log, lambda script: [2e-3, 2.01e-3])
    assert result.records[0].knobs == default_rule_values(TARGET)
    assert result.history[0] == pytest.approx(1.01e-3)  # the default, before any trial
    assert result.best is not None and result.best.knobs == {"baseline": "default"}
    best = load_best(log)[small_matmul.key]
    assert best.knobs == {"baseline": "default"} and best.script is None


@pytest.mark.parametrize(("candidate", "replaces"), [
    ([0.85e-3, 0.90e-3, 1.10e-3], False),  # faster median, but within the noise
    ([0.50e-3, 0.51e-3, 0.52e-3], True),  # faster beyond the noise
])
def test_a_candidate_replaces_the_default_only_beyond_noise(
    small_matmul: Workload, tmp_path: Path, candidate: list[float], replaces: bool
) -> None:
    from dlc.rewrites.tuning.apply import load_best
    from dlc.rewrites.tuning.log import beats_beyond_noise

    space = make_space(small_matmul, TARGET, "rules")
    winner = space.render(space.point_of({"rows": 2, "accumulators": 24, "pack_rows": 0,
                                          "l2_kib": 1024}))
    log = tmp_path / "noisy.jsonl"
    result = _tune_scripted(small_matmul, log, lambda script: candidate if script == winner
                            else [3e-3, 3e-3], trials=40, strategy="grid")
    assert result.best is not None and result.default is not None
    assert (result.best.script == winner) is replaces
    assert beats_beyond_noise(result.best, result.default) is replaces
    assert (load_best(log)[small_matmul.key].script == winner) is replaces
    # the confirmation rounds measured the winner and the default side by side
    confirmed = [r for r in read_log(log).records if r.trial == CONFIRM_TRIAL]
    assert {r.script for r in confirmed} >= {winner, None}


def test_a_wrong_candidate_is_fenced(small_matmul: Workload, tmp_path: Path) -> None:
    """A schedule whose outputs differ from the default schedule's costs one build, is logged
    as `wrong`, and its knobs are never proposed again in the run."""
    from dlc.autotune.tuner import WorkloadTuner

    space = make_space(small_matmul, TARGET, "rules")
    bad_point = space.point_of({"rows": 2, "accumulators": 8, "pack_rows": 1, "l2_kib": 256})
    bad = space.render(bad_point)
    measurer = ScriptedMeasurer(_scripted(lambda s: "wrong" if s == bad else [2e-3, 2e-3]))
    with LogWriter(tmp_path / "wrong.jsonl") as writer:
        tuner = WorkloadTuner(small_matmul, measurer, space=space, strategy="grid",  # type: ignore
                              log=writer)
        while not tuner.exhausted:
            tuner.step(16)
    wrong = [r for r in read_log(tmp_path / "wrong.jsonl").records
             if r.error is not None and r.error["kind"] == "wrong"]
    assert [r.script for r in wrong] == [bad]
    assert bad_point in tuner.strategy.fenced
    assert sum(1 for c in measurer.measured if c.script == bad) == 1
    tuner.strategy.measured.pop(bad_point)  # even forgotten, a fenced point is not proposed
    assert bad_point not in tuner.strategy.propose(space.size)
    assert tuner.result().best is not None and tuner.result().best.script != bad


def test_best_records_keeps_the_default_against_the_untuned_kernel() -> None:
    """The untuned kernel is a baseline, not a schedule to apply: it never replaces the
    default, however it measured."""
    def record(knobs: dict[str, object], costs: list[float], script: str | None = None
               ) -> Record:
        return Record(workload="w", target="t", script=script, knobs=knobs, costs=costs)

    default = record({"baseline": "default"}, [1.0, 1.0])
    untuned = record({"baseline": "untuned"}, [0.1, 0.1])
    assert best_records([default, untuned])["w"].knobs == {"baseline": "default"}
    tuned = record({"rows": 4}, [0.5, 0.5], "s")
    assert best_records([default, untuned, tuned])["w"].script == "s"
    assert best_records([untuned, tuned])["w"].knobs == {"baseline": "untuned"}  # no default


# ----------------------------------------------------------------------------------------------
# Measurement: a crash, a hang or a wrong result costs only that trial
# ----------------------------------------------------------------------------------------------


def _hanging(text: str) -> str:
    """The kernel inside an outer loop of 10^12 iterations: correct, but never finishes."""
    head, body = text.split("{\n", 2)[0:2], text.split("{\n", 2)[2]
    body, tail = body.rsplit("    func.return", 1)
    big = "%hang_n = arith.constant 1000000000000 : index\n"
    loop = ("    %hang_0 = arith.constant 0 : index\n    %hang_1 = arith.constant 1 : index\n"
            f"    {big}    loop.for %hang = %hang_0 to %hang_n step %hang_1 axis \"hang\" {{\n")
    return "{\n".join(head) + "{\n" + loop + body + "    }\n    func.return" + tail


def _crashing(text: str) -> str:
    """Every store goes 2^40 elements past the output: a segfault."""
    far = "    %far = arith.constant 1099511627776 : index\n"
    text = text.replace("    loop.for", far + "    loop.for", 1)
    return re.sub(r"(loop.store %\w+, %\w+)\[(%\w+),", r"\1[%far,", text)


def test_bad_candidates_cost_only_their_trial(small_matmul: Workload) -> None:
    options = MeasureOptions(repeat=2, min_repeat_ms=1, run_timeout=4, n_parallel=2)
    wrong = small_matmul.text.replace("arith.mulf", "arith.addf", 1)
    space = SketchSpace(small_matmul, TARGET, verify_rules=False)
    good = space.render(space.random_valid_point(random.Random(2)) or ())
    with Measurer(options) as measurer:
        results = measurer.measure(small_matmul, [
            Candidate(kernel_text=wrong),
            Candidate(kernel_text=_crashing(small_matmul.text)),
            Candidate(kernel_text=_hanging(small_matmul.text)),
            Candidate(script="this is not a transform script"),
            Candidate(script=good),
        ])
        kinds = [r.error_kind for r in results]
        assert kinds == ["wrong", "crash", "timeout", "build", None], [r.error for r in results]
        assert "against the default schedule" in (results[0].error or "")
        assert "SIGSEGV" in (results[1].error or "") or "exit code" in (results[1].error or "")
        assert results[4].ok and len(results[4].costs) == 2 and results[4].cost > 0
        # the runner was restarted: the next trial measures normally
        (again,) = measurer.measure(small_matmul, [Candidate(script=good)])
        assert again.ok


def test_measure_rounds_builds_once(small_matmul: Workload) -> None:
    """`measure_rounds` builds each candidate once and runs all of them every round; a candidate
    that does not build fails in every round."""
    from dlc.autotune.measure import LocalBackend

    class CountingBackend(LocalBackend):
        builds = 0

        def build(self, requests, timeout):  # type: ignore[no-untyped-def]
            CountingBackend.builds += len(requests)
            return super().build(requests, timeout)

    options = MeasureOptions(repeat=1, min_repeat_ms=1, n_parallel=2)
    with Measurer(options, CountingBackend(options)) as measurer:
        measurer.prepare(small_matmul)
        before = CountingBackend.builds
        rounds = measurer.measure_rounds(
            small_matmul, [Candidate(default_schedule=True), Candidate(script="not a script")], 3)
        assert CountingBackend.builds - before == 2
    assert len(rounds) == 3
    assert all(good.ok and len(good.costs) == 1 for good, _ in rounds)
    assert all(bad.error_kind == "build" for _, bad in rounds)


# ----------------------------------------------------------------------------------------------
# Search on a synthetic cost function
# ----------------------------------------------------------------------------------------------


class _Bowl(Space):
    """Two knobs of 16 values with a known best point, and an invalid half-plane."""

    name = "bowl"

    def __init__(self) -> None:
        self.knobs = (Knob("x", tuple(range(16))), Knob("y", tuple(range(16))))

    def check(self, point: tuple[int, ...]) -> str | None:
        return super().check(point) or ("x + y > 24" if sum(point) > 24 else None)

    def features(self, point: tuple[int, ...]) -> list[float]:
        return [float(v) for v in point]

    def render(self, point: tuple[int, ...]) -> str:
        return f"// bowl point {point}"  # searched with a synthetic cost: never built

    @staticmethod
    def cost(point: tuple[int, ...]) -> float:
        x, y = point
        return 1.0 + (x - 11) ** 2 + 0.5 * (y - 5) ** 2


def _search(strategy: RandomSearch | GridSearch | EvolutionarySearch, trials: int) -> float:
    best = math.inf
    while len(strategy.measured) < trials:
        points = strategy.propose(min(8, trials - len(strategy.measured)))
        if not points:
            break
        assert all(strategy.space.check(p) is None for p in points)
        assert not any(p in strategy.measured for p in points)
        costs = [_Bowl.cost(p) for p in points]
        strategy.update(points, costs)
        best = min(best, *costs)
    return best


@pytest.mark.parametrize("model", ["xgb", "ridge"])
def test_evolutionary_search_finds_the_best_point(model: str) -> None:
    space = _Bowl()
    cost_model = make_cost_model(model) if model == "xgb" else RidgeCostModel()
    search = EvolutionarySearch(space, cost_model, seed=3, population=64, generations=3)
    assert _search(search, 48) == 1.0
    assert search.best is not None and search.best[0] == (11, 5)
    assert search.rejected > 0  # invalid points were proposed internally and rejected


def test_grid_and_random_search() -> None:
    grid = GridSearch(_Bowl())
    assert _search(grid, 1000) == 1.0
    assert len(grid.measured) == sum(1 for x in range(16) for y in range(16) if x + y <= 24)
    random_search = RandomSearch(_Bowl(), seed=0)
    _search(random_search, 30)
    assert len(random_search.measured) == 30


def test_evolutionary_beats_random_on_average() -> None:
    """With the same small budget, the model-guided search gets closer to the optimum."""
    evolved = [_search(EvolutionarySearch(_Bowl(), RidgeCostModel(), seed=s), 24)
               for s in range(4)]
    randoms = [_search(RandomSearch(_Bowl(), seed=s), 24) for s in range(4)]
    assert np.mean(evolved) < np.mean(randoms)


# ----------------------------------------------------------------------------------------------
# A tiny real tuning run
# ----------------------------------------------------------------------------------------------


def test_tiny_tuning_run_logs_and_resumes(tmp_path: Path) -> None:
    workload = workload_of(matmul_graph(32, 32, 32))
    log = tmp_path / "tune.jsonl"
    options = MeasureOptions(repeat=2, min_repeat_ms=2, n_parallel=2)
    seen: list[int] = []
    with Measurer(options) as measurer:
        result = tune_workload(workload, 6, measurer=measurer, log_path=log, batch_size=3,
                               progress=lambda p: seen.append(p.done))
        assert seen == [3, 6]
        assert len(result.records) == 6 and len(result.history) == 6
        assert result.baseline is not None and result.baseline.ok
        assert result.best is not None  # judged on all its measurements (see below)
        assert result.best.script in {r.script for r in result.records if r.ok} | {None}
        assert result.default is not None and result.best.cost <= result.default.cost
        assert result.history == sorted(result.history, reverse=True)
        records = read_log(log).records
        baselines = [r for r in records if r.trial == -1]  # untuned, and default if any
        assert records[: len(baselines)] == baselines and 1 <= len(baselines) <= 2
        assert all(r.script is None for r in baselines)
        trials = [r for r in records if r.trial >= 0]
        assert len(trials) == 6
        # the confirmation rounds: the fastest distinct schedules (and the default) again
        confirmed = [r for r in records if r.trial == CONFIRM_TRIAL]
        scripts = {r.script for r in trials if r.ok}
        expected = min(CONFIRM_TOP, len(scripts)) + (len(baselines) - 1)
        assert len(confirmed) == CONFIRM_ROUNDS * expected
        assert len(records) == len(baselines) + 6 + len(confirmed)
        assert len(result.best.costs) > len(result.records[0].costs)  # pooled
        assert all(r.workload == workload.key and r.flops == workload.flops for r in records)
        assert records[0].knobs == {"baseline": "untuned"}
        best = min((r for r in records if r.ok and r.script is not None), key=lambda r: r.cost)
        assert best.script is not None and apply_script(workload, best.script) is None
        # resume: the logged trials count, only the missing ones are measured
        resumed = tune_workload(workload, 8, measurer=measurer, log_path=log, resume=True)
        assert len(resumed.records) == 2
        trials = [r.trial for r in read_log(log).records if r.trial >= 0]
        assert trials == list(range(8))
        knobs = [json.dumps(r.knobs, sort_keys=True) for r in read_log(log).records
                 if r.trial >= 0]
        assert len(set(knobs)) == 8  # no point measured twice
    _check_apply_and_replay(workload, best, tmp_path)


def _check_apply_and_replay(workload: Workload, best: Record, tmp_path: Path) -> None:
    """A log's record schedules its kernel at compile time, and `dlc tune replay` shows it."""
    from dlc.tools.dlc_tune import main as dlc_tune

    import dlc

    log = tmp_path / "best.jsonl"
    best.target = tuning_key(resolve_cpu_target("host"))
    with LogWriter(log) as writer:
        writer.write(best)
    model = tmp_path / "mm.mlir"
    model.write_text(matmul_graph(32, 32, 32))
    executable = dlc.compile(model, tuning_log=log, cache=False)
    assert "loop-apply-tuning-log" in executable.stats.seconds
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((32, 32), dtype=np.float32) for _ in range(2))
    np.testing.assert_allclose(executable(a, b), a @ b, rtol=1e-4, atol=1e-4)
    out, scripts = tmp_path / "replayed.mlir", tmp_path / "scripts"
    assert dlc_tune(["tune", "replay", str(model), "--log", str(log), "-o", str(out),
                     "--emit-scripts", str(scripts)]) == 0
    assert "dlc.scheduled" in out.read_text()
    (kernel,) = scripts.glob("*.kernel.mlir")
    (schedule,) = scripts.glob("*.schedule.mlir")
    assert schedule.read_text() == best.script
    assert apply_script(workload_of(kernel.read_text()), schedule.read_text()) is None


# ----------------------------------------------------------------------------------------------
# The Ray runner
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ray_runner_isolates_bad_candidates(small_matmul: Workload) -> None:
    """The same isolation through `--runner ray` on a local Ray instance."""
    pytest.importorskip("ray")
    from dlc.autotune.ray_runner import RayBackend

    options = MeasureOptions(repeat=2, min_repeat_ms=1, run_timeout=6, n_parallel=2)
    space = SketchSpace(small_matmul, TARGET, verify_rules=False)
    good = space.render(space.random_valid_point(random.Random(2)) or ())
    wrong = small_matmul.text.replace("arith.mulf", "arith.addf", 1)
    with Measurer(options, RayBackend(options)) as measurer:
        results = measurer.measure(small_matmul, [
            Candidate(script=good),
            Candidate(kernel_text=wrong),
            Candidate(kernel_text=_crashing(small_matmul.text)),
            Candidate(kernel_text=_hanging(small_matmul.text)),
        ])
        assert [r.error_kind for r in results] == [None, "wrong", "crash", "timeout"], [
            r.error for r in results
        ]
        assert results[0].ok and results[0].cost > 0


@pytest.mark.slow
def test_dlc_tune_command(tmp_path: Path) -> None:
    """`dlc tune kernel.mlir --trials N`: a log with the trials, a PNG, a progress line."""
    from dlc.tools.dlc_tune import main as dlc_tune

    model = tmp_path / "mm.mlir"
    model.write_text(matmul_graph(32, 64, 16))
    log = tmp_path / "log.jsonl"
    code = dlc_tune(["tune", str(model), "--trials", "4", "--log", str(log), "--repeat", "2",
                     "--min-repeat-ms", "2", "--batch-size", "2", "--search", "random"])
    assert code == 0
    records = read_log(log).records
    assert len([r for r in records if r.trial >= 0]) == 4
    # confirmation rounds: the fastest schedules and the default measured again, not trials
    confirmed = [r for r in records if r.trial == CONFIRM_TRIAL]
    assert len(confirmed) >= CONFIRM_ROUNDS * 2
    assert {r.knobs.get("baseline") for r in confirmed if r.script is None} == {"default"}
    assert Path(f"{log}.png").read_bytes().startswith(b"\x89PNG")
    code = dlc_tune(["tune", str(model), "--trials", "6", "--log", str(log), "--resume",
                     "--batch-size", "2", "--repeat", "2", "--min-repeat-ms", "2", "--no-confirm"])
    assert code == 0
    records = read_log(log).records
    assert len([r for r in records if r.trial >= 0]) == 6
    assert len([r for r in records if r.trial == CONFIRM_TRIAL]) == len(confirmed)
    assert dlc_tune(["tune", str(tmp_path / "missing.mlir")]) == 1


def test_dlc_tune_space_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--space rules` tunes the default schedule's knobs; an unknown space is a one-line error
    with exit code 1 and writes no log."""
    from dlc.tools.dlc_tune import main as dlc_tune

    model = tmp_path / "mm.mlir"
    model.write_text(matmul_graph(16, 64, 8))
    log = tmp_path / "log.jsonl"
    assert dlc_tune(["tune", str(model), "--space", "nonsense", "--log", str(log)]) == 1
    assert "expected --space sketch, template, rules or a template file, found 'nonsense'" in (
        capsys.readouterr().err)
    assert not log.exists()
    code = dlc_tune(["tune", str(model), "--space", "rules", "--trials", "2", "--log", str(log),
                     "--repeat", "1", "--min-repeat-ms", "1", "--batch-size", "2"])
    assert code == 0
    scripts = [r.script for r in read_log(log).records if r.trial >= 0]
    assert len(scripts) == 2 and all("transform.loop.apply_rules" in s for s in scripts)


# ----------------------------------------------------------------------------------------------
# Tasks of a model and the task scheduler
# ----------------------------------------------------------------------------------------------


def test_extract_tasks_weights_repeated_kernels(tmp_path: Path) -> None:
    """Two layers with the same shapes (other weights) are one task of weight 2."""
    from dlc.autotune.tasks import extract_tasks

    text = """
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w1 = graph.constant dense<0.5> : tensor<16x16xf32>
  %w2 = graph.constant dense<0.25> : tensor<16x16xf32>
  %w3 = graph.constant dense<1.0> : tensor<16x8xf32>
  %a = graph.matmul %x, %w1 : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %b = graph.relu %a : tensor<4x16xf32>
  %c = graph.matmul %b, %w2 : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %d = graph.relu %c : tensor<4x16xf32>
  %e = graph.matmul %d, %w3 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  func.return %e : tensor<4x8xf32>
}
"""
    path = tmp_path / "mlp.mlir"
    path.write_text(text)
    tasks = extract_tasks(path)
    assert sorted(t.weight for t in tasks) == [1, 2]
    heavy = tasks[0]
    assert heavy.weight == 2 and len(heavy.functions) == 2
    assert heavy.flops == 2 * heavy.workload.flops
    assert heavy.workload.flops >= 2 * 4 * 16 * 16


def test_gradient_task_scheduler() -> None:
    """Every task gets a first round; then the task whose weighted latency falls fastest."""
    from dlc.autotune.tasks import GradientTaskScheduler

    scheduler = GradientTaskScheduler([1.0, 1.0, 3.0], epsilon=0.0)
    assert scheduler.next_task([0, 1, 2]) == 0
    scheduler.record(0, 1.0)
    assert scheduler.next_task([0, 1, 2]) == 1
    scheduler.record(1, 0.3)
    scheduler.record(2, 0.3)
    # task 0 keeps improving, task 1 is stuck, task 2 is stuck as well but weighs 3x
    for cost in (0.5, 0.25):
        scheduler.record(0, cost)
        scheduler.record(1, 0.3)
        scheduler.record(2, 0.3)
    assert scheduler.gradient(0) < scheduler.gradient(1)
    assert scheduler.gradient(2) == pytest.approx(3 * scheduler.gradient(1))
    assert scheduler.next_task([0, 1]) == 0
    assert scheduler.next_task([0, 1, 2]) == 2
    assert scheduler.next_task([1]) == 1
    assert scheduler.next_task([]) is None


def test_flushed_timings_are_single_cold_calls(small_matmul: Workload) -> None:
    """With `flush_caches`, each timing is one call after the caches were evicted: `repeat`
    timings, and the result is still checked against the untuned kernel."""
    from dlc.autotune.measure import _cache_flusher, last_level_cache_bytes

    options = MeasureOptions(repeat=3, min_repeat_ms=2000, n_parallel=1, flush_caches=True)
    host = resolve_cpu_target("host", 1)
    assert last_level_cache_bytes(options) == (host.l3_bytes or host.l2_bytes)
    assert _cache_flusher(last_level_cache_bytes(options)).nbytes >= 2 * (host.l2_bytes or 0)
    cpu = MeasureOptions(target="llvm -mcpu=znver3")
    assert last_level_cache_bytes(cpu) == 32 << 20
    wrong = small_matmul.text.replace("arith.mulf", "arith.addf", 1)
    with Measurer(options) as measurer:
        good, bad = measurer.measure(small_matmul, [Candidate(default_schedule=True),
                                                    Candidate(kernel_text=wrong)])
    assert good.ok and len(good.costs) == 3
    assert bad.error_kind == "wrong"
    # one call per timing: unflushed, each timing would last min_repeat_ms (2 s)
    assert good.run_s < 3.0


def test_workers_import_this_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker finds dlc's packages on its PYTHONPATH even when they are not installed (`dlc
    tune` run from a checkout, elsewhere): the checkout comes first, the caller's path after."""
    from dlc.autotune.measure import PROJECT_ROOT, _Worker

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    worker = _Worker({})
    worker.start()
    try:
        assert worker.process is not None
        environ = [b""]
        deadline = time.monotonic() + 10
        while environ == [b""] and time.monotonic() < deadline:  # empty until the exec is done
            environ = Path(f"/proc/{worker.process.pid}/environ").read_bytes().split(b"\0")
            time.sleep(0.01)
        assert f"PYTHONPATH={PROJECT_ROOT}{os.pathsep}/elsewhere".encode() in environ
        assert (PROJECT_ROOT / "autotune" / "worker.py").is_file()
    finally:
        worker.stop()
