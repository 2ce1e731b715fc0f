"""Whole models: extract tuning tasks and spread trials over them (a gradient-based scheduler).

Counterpart: TVM's `extract_tasks` (Relay/Relax → one task per unique fused function, weighted
by how often it occurs) and MetaSchedule's `GradientBased` task scheduler (Ansor's, §6): trials go
in rounds to the task whose improvement is expected to lower the model's estimated latency
`sum(weight_i * best_cost_i)` the most, judged from its recent progress (backward gradient) and
an optimistic forward estimate, with a little random exploration.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dlc.autotune.measure import Measurer
from dlc.autotune.space import SpaceError, make_space
from dlc.autotune.tuner import Progress, TuneResult, WorkloadTuner
from dlc.pipelines import CPU_GRAPH_PASSES, applicable, module_level, parse_pipeline, run_pipeline
from dlc.rewrites.tuning.log import LogHeader, LogWriter
from dlc.rewrites.tuning.workload import Workload, kernel_functions, make_context
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

MODEL_PREPARATION = CPU_GRAPH_PASSES
"""Graph-level passes run before a graph-level module is lowered for tuning: those of the `cpu`
pipeline, as `dlc.compile` with a tuning log runs them (fusion decides what the tasks are, and
Winograd convs are tasks of their own)."""


@dataclass
class Task:
    """One unique fused kernel of a model.

    Attributes:
        workload: the kernel.
        weight: how many times the model runs it.
        functions: the names of the functions it came from.
    """

    workload: Workload
    weight: int = 1
    functions: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.workload.name

    @property
    def flops(self) -> int:
        """FLOPs of all its occurrences."""
        return self.workload.flops * self.weight


LOOP_LOWERING = (
    "convert-graph-to-tensor-expr,tensor-expr-inline,"
    "convert-tensor-expr-to-loop{fuse-epilogue=false}"
)
"""How models are lowered to the loop level for tuning over generated and template spaces.

Epilogues are not fused by the lowering (`fuse-epilogue=false`): a schedule fuses them where it
wants with `reverse_compute_at`, after tiling the reduction (Ansor's and MetaSchedule's way)."""

FUSED_LOOP_LOWERING = "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop"
"""The lowering of the `rules` space's tasks: the compile's own, epilogues fused into their
reductions, so that tuned kernels are the kernels `dlc.compile` makes (the default rules
schedule fused epilogues)."""


def lower_to_loop(
    module: ModuleOp, ctx: Context | None = None, fuse_epilogue: bool = False
) -> ModuleOp:
    """Lower a graph- or tensor_expr-level module to the loop level in place (`LOOP_LOWERING`,
    or `FUSED_LOOP_LOWERING` with `fuse_epilogue`, skipping the passes of levels the module is
    already below) and return it."""
    spec = FUSED_LOOP_LOWERING if fuse_epilogue else LOOP_LOWERING
    run_pipeline(module, applicable(module, parse_pipeline(spec)), ctx or make_context())
    return module


def workloads_of(module: ModuleOp, ctx: Context | None = None) -> list[Workload]:
    """The workloads of a module at any level (lowered to loop level on a clone first), one
    per kernel function, in program order (duplicates included)."""
    lowered = lower_to_loop(module.clone(), ctx)
    return [Workload.from_function(func) for func in kernel_functions(lowered)]


def load_model_module(path: str | Path, ctx: Context | None = None) -> ModuleOp:
    """An `.onnx` model (imported to the graph dialect) or an `.mlir` module at any level."""
    path = Path(path)
    if path.suffix == ".onnx":
        from dlc.frontends.onnx import import_onnx

        return import_onnx(path)
    from dlc.driver.source import parse_module

    return parse_module(path, ctx)


def lower_model(
    module: ModuleOp, ctx: Context | None = None, fuse_epilogue: bool = False,
    graph_passes: str = MODEL_PREPARATION,
) -> ModuleOp:
    """Lower a module in place to the loop level as tuning sees it: graph-level modules first
    get `graph_passes` (default `MODEL_PREPARATION`: fusion, Winograd convs), then
    `LOOP_LOWERING` (`FUSED_LOOP_LOWERING` with `fuse_epilogue`)."""
    ctx = ctx or make_context()
    if module_level(module) == "graph":
        run_pipeline(module, parse_pipeline(graph_passes), ctx)
    return lower_to_loop(module, ctx, fuse_epilogue)


def extract_tasks(
    model: ModuleOp | str | Path, min_flops: int = 1, fuse_epilogue: bool = False,
    graph_passes: str = MODEL_PREPARATION,
) -> list[Task]:
    """The tasks of a model: its unique kernels (by workload key) with their occurrence counts,
    those with at least `min_flops` FLOPs per run, heaviest (FLOPs x weight) first. With
    `fuse_epilogue`, kernels are lowered as the compile lowers them (for the `rules` space);
    `graph_passes` (default: the `cpu` pipeline's) decide what the kernels are."""
    ctx = make_context()
    module = model.clone() if isinstance(model, ModuleOp) else load_model_module(model, ctx)
    lower_model(module, ctx, fuse_epilogue, graph_passes)
    tasks: OrderedDict[str, Task] = OrderedDict()
    for func in kernel_functions(module):
        workload = Workload.from_function(func)
        task = tasks.get(workload.key)
        if task is None:
            tasks[workload.key] = Task(workload, 1, [func.sym_name.data])
        else:
            task.weight += 1
            task.functions.append(func.sym_name.data)
    kept = [t for t in tasks.values() if t.workload.info.raw_flops >= min_flops]
    return sorted(kept, key=lambda t: t.flops, reverse=True)


# ----------------------------------------------------------------------------------------------
# The task scheduler
# ----------------------------------------------------------------------------------------------


class GradientTaskScheduler:
    """Chooses which task gets the next round of trials (Ansor's gradient-based scheduler).

    For task i with weight w_i, best cost c_i after t_i trials, the estimated gradient of the
    model's latency with respect to t_i is `w_i * (alpha * backward + (1 - alpha) * forward)`,
    with `backward = (c_i(t_i) - c_i(t_i - window)) / window` and the optimistic
    `forward = -c_i / t_i`. The task with the most negative gradient is chosen; with
    probability `epsilon` a random task; every task first gets one round.
    """

    def __init__(self, weights: Sequence[float], alpha: float = 0.2, window: int = 3,
                 epsilon: float = 0.05, seed: int = 0) -> None:
        self.weights = list(weights)
        self.alpha = alpha
        self.window = window
        self.epsilon = epsilon
        self.rng = random.Random(seed)
        self.history: list[list[float]] = [[] for _ in self.weights]
        """Best cost after each round, per task."""

    def record(self, task: int, best_cost: float) -> None:
        self.history[task].append(best_cost)

    def gradient(self, task: int) -> float:
        history = self.history[task]
        if not history:
            return -math.inf
        current = history[-1]
        if not math.isfinite(current):
            return -math.inf
        rounds = len(history)
        back = self.window if rounds > self.window else rounds - 1
        backward = (current - history[-1 - back]) / back if back > 0 else 0.0
        if not math.isfinite(backward):
            backward = 0.0
        forward = -current / rounds
        return self.weights[task] * (self.alpha * backward + (1 - self.alpha) * forward)

    def next_task(self, active: Sequence[int]) -> int | None:
        """The task to tune next among `active` (None if there is none)."""
        if not active:
            return None
        for task in active:
            if not self.history[task]:
                return task
        if self.rng.random() < self.epsilon:
            return self.rng.choice(list(active))
        return min(active, key=self.gradient)


def _model_gflops(tasks: Sequence[Task], tuners: Sequence[WorkloadTuner]) -> float:
    """The model's throughput with each task's best record so far (its default, else its
    baseline, if none)."""
    latency = 0.0
    for task, tuner in zip(tasks, tuners, strict=True):
        costs = [r.cost for r in (tuner.best, tuner.default, tuner.baseline)
                 if r is not None and r.ok][:1]
        if not costs:
            return 0.0
        latency += task.weight * min(costs)
    return sum(t.flops for t in tasks) / latency / 1e9 if latency > 0 else 0.0


@dataclass
class ModelTuneResult:
    """The outcome of tuning a model: per-task results and the estimated latency."""

    tasks: list[Task]
    results: list[TuneResult]
    wall_s: float

    def estimated_latency(self, which: str = "best") -> float:
        """`sum(weight * cost)` over the tasks, for the `best`, `baseline` or `default` records
        (a task without one counts its baseline)."""
        total = 0.0
        for task, result in zip(self.tasks, self.results, strict=True):
            if which == "best":
                # what a compile with the log applies: the default unless beaten beyond noise
                record = result.best or result.default or result.baseline
                total += task.weight * (record.cost if record is not None else math.nan)
                continue
            record = getattr(result, which) or result.baseline
            total += task.weight * (record.cost if record is not None else math.nan)
        return total


def _tuner(task: Task, measurer: Measurer, space: str | Path, strategy: str,
           writer: LogWriter | None, resume_from: str | Path | None, seed: int) -> WorkloadTuner:
    """The task's tuner over `space`; a task the space does not fit (the GEMM template on a
    conv) is tuned over the generated sketch space instead, with a note on stderr."""
    try:
        chosen = make_space(task.workload, measurer.target, space)
    except SpaceError as error:
        print(f"note: task {task.name}: {error}; using the sketch space", file=sys.stderr)
        chosen = make_space(task.workload, measurer.target)
    return WorkloadTuner(task.workload, measurer, space=chosen, strategy=strategy, log=writer,
                         resume_from=resume_from, seed=seed)


def tune_tasks(
    tasks: Sequence[Task],
    trials: int,
    *,
    measurer: Measurer,
    space: str | Path = "sketch",
    strategy: str = "evolutionary",
    log_path: str | Path | None = None,
    resume: bool = False,
    batch_size: int = 8,
    seed: int = 0,
    progress: Callable[[Progress], None] | None = None,
    scheduler: GradientTaskScheduler | None = None,
    confirm: bool = True,
    header: LogHeader | None = None,
) -> ModelTuneResult:
    """Tunes several tasks with `trials` trials in all, batch by batch, chosen by the gradient
    task scheduler; every trial is logged (and, with `resume`, trials already logged count).
    With `confirm`, each task that was tuned then has its fastest schedules and its default
    measured again (`WorkloadTuner.confirm`: not trials of the budget), so that the schedule a
    compile applies is judged on all its measurements. A new log starts with `header` (how the
    tasks were made), which a compile applying the log reads to lower the same way."""
    start = time.monotonic()
    writer = LogWriter(log_path, header) if log_path is not None else None
    try:
        tuners = [
            _tuner(task, measurer, space, strategy, writer,
                   log_path if resume and log_path is not None else None, seed + index)
            for index, task in enumerate(tasks)
        ]
        scheduler = scheduler or GradientTaskScheduler([t.weight for t in tasks], seed=seed)
        done = sum(t.trials for t in tuners)
        while done < trials:
            active = [i for i, t in enumerate(tuners) if not t.exhausted]
            chosen = scheduler.next_task(active)
            if chosen is None:
                break
            tuner = tuners[chosen]
            batch = tuner.step(min(batch_size, trials - done))
            done += len(batch)
            scheduler.record(chosen, tuner.best.cost if tuner.best is not None else math.inf)
            if progress is not None:
                progress(Progress(tasks[chosen].name, done, trials, _model_gflops(tasks, tuners),
                                  time.monotonic() - start))
        if confirm:
            for tuner in tuners:
                if any(record.script is not None for record in tuner.records):
                    tuner.confirm()
        wall = time.monotonic() - start
        return ModelTuneResult(list(tasks), [t.result(wall) for t in tuners], wall)
    finally:
        if writer is not None:
            writer.close()
