"""Tuning one workload: propose, measure, log, learn, for a number of trials.

Counterpart: MetaSchedule's `TaskScheduler` inner loop for one task (`tune_tir`), AutoTVM's
`Tuner.tune`. Every trial is appended to the log as it is measured (resumable after a kill),
the untuned kernel and the default schedule (where `loop-default-schedule` exists) are measured
first, and a progress callback sees the best throughput so far.

Tuning never makes a kernel slower: every candidate's outputs are checked against the default
schedule's on the same inputs before it is timed (a wrong one costs one build, is logged as
`wrong` and its knobs are never proposed again), the search starts from the default schedule
(the best so far is the default until something beats it; the `rules` space measures its
default point first), and the best a log gives a workload is the default unless a schedule beats
it beyond the noise of their measurements (`best_records`), which the confirmation rounds
measure side by side.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dlc.autotune.measure import (
    BASELINE_RUN_TIMEOUT,
    Candidate,
    Measurer,
    MeasureResult,
    reference_is_default,
)
from dlc.autotune.search import SearchStrategy, make_strategy
from dlc.autotune.space import Point, Space, make_space
from dlc.rewrites.tuning.log import (
    LogWriter,
    Record,
    best_records,
    is_default,
    read_log,
    tuning_key,
)
from dlc.rewrites.tuning.workload import Workload
from dlc.target import CpuTarget

CONFIRM_TOP = 4
"""The fastest distinct schedules `WorkloadTuner.confirm` measures again."""

CONFIRM_ROUNDS = 2
"""How many times `WorkloadTuner.confirm` measures them (each round: all of them, and the
default schedule)."""

CONFIRM_TRIAL = -2
"""The `trial` of a confirmation record (not a trial of the budget; -1 is the baselines')."""


@dataclass
class Progress:
    """What a progress callback is told after each batch."""

    task: str
    done: int
    total: int
    best_gflops: float
    elapsed_s: float

    @property
    def eta_s(self) -> float:
        if self.done == 0:
            return math.inf
        return self.elapsed_s / self.done * max(0, self.total - self.done)


@dataclass
class TuneResult:
    """The outcome of tuning one workload.

    Attributes:
        best: the record a compile with the log applies (`best_records` over everything
            measured: the default schedule's unless a schedule beats it beyond noise; None
            if nothing succeeded).
        baseline: the untuned kernel's record; default: the default schedule's, if measured.
        history: best cost so far after each trial (seconds; inf before the first success).
        records: the trials of this run (not the baseline).
        wall_s: wall time of this run.
    """

    workload: Workload
    best: Record | None
    baseline: Record | None
    default: Record | None = None
    history: list[float] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    wall_s: float = 0.0

    def best_gflops_after(self, trials: int) -> float:
        """Best GFLOP/s among the first `trials` trials."""
        costs = self.history[:trials]
        if not costs or not math.isfinite(costs[-1]):
            return 0.0
        return self.workload.flops / costs[-1] / 1e9


ProgressCallback = Callable[[Progress], None]


def _record(workload: Workload, target: CpuTarget, space: Space | None, script: str | None,
            knobs: dict[str, object], result: MeasureResult, trial: int) -> Record:
    error = None
    if not result.ok:
        error = {"kind": result.error_kind or "run", "message": result.error or ""}
    return Record(
        workload=workload.key,
        target=tuning_key(target),
        script=script,
        knobs=dict(knobs),
        costs=list(result.costs),
        error=error,
        flops=float(workload.flops),
        task=workload.name,
        space=space.name if space is not None else "",
        trial=trial,
        build_s=result.build_s,
        run_s=result.run_s,
    )


class WorkloadTuner:
    """The state of tuning one workload, advanced batch by batch (the task scheduler
    interleaves several)."""

    def __init__(
        self,
        workload: Workload,
        measurer: Measurer,
        *,
        space: Space | str | Path = "sketch",
        strategy: SearchStrategy | str = "evolutionary",
        target: CpuTarget | None = None,
        log: LogWriter | None = None,
        resume_from: str | Path | None = None,
        seed: int = 0,
        measure_baseline: bool = True,
    ) -> None:
        self.workload = workload
        self.measurer = measurer
        self.target = target or measurer.target
        self.space = space if isinstance(space, Space) else make_space(workload, self.target, space)
        self.strategy = (
            strategy if isinstance(strategy, SearchStrategy)
            else make_strategy(strategy, self.space, seed)
        )
        self.log = log
        self.records: list[Record] = []
        self.history: list[float] = []
        self.baseline: Record | None = None
        self.default: Record | None = None
        self.best: Record | None = None
        self.trials = 0
        self.exhausted = False
        self.measured: list[Record] = []
        """Every successful record of this workload: baselines, trials and confirmations."""
        if resume_from is not None:
            self._resume(resume_from)
        if measure_baseline and self.baseline is None:
            self._measure_baseline()
        if self.default is not None and (self.best is None or self.default.cost < self.best.cost):
            self.best = self.default  # the search starts from the default schedule

    def _resume(self, path: str | Path) -> None:
        """Feeds the log's records of this workload, target and space to the strategy."""
        points: list[Point] = []
        costs: list[float] = []
        for record in read_log(path).records:
            if record.workload != self.workload.key or record.target != tuning_key(self.target):
                continue
            if record.ok:
                self.measured.append(record)
            if record.trial == CONFIRM_TRIAL:
                continue  # a re-measurement, not a trial
            if record.script is None:
                if record.knobs.get("baseline") == "untuned" and record.ok:
                    self.baseline = record
                elif record.knobs.get("baseline") == "default" and record.ok:
                    self.default = record
                continue
            if record.space != self.space.name:
                continue
            try:
                point = self.space.point_of(record.knobs)
            except Exception:  # noqa: BLE001 - a record of another space version: not resumable
                continue
            points.append(point)
            costs.append(record.cost)
            self._note(record)
        self.strategy.update(points, costs)

    def _note(self, record: Record) -> None:
        self.trials = max(self.trials, record.trial + 1)
        if record.ok and record not in self.measured:
            self.measured.append(record)
        if record.ok and (self.best is None or record.cost < self.best.cost):
            self.best = record
        self.history.append(self.best.cost if self.best is not None else math.inf)

    def _measure_baseline(self) -> None:
        candidates = [Candidate()]
        labels = ["untuned"]
        if reference_is_default():
            candidates.append(Candidate(default_schedule=True))
            labels.append("default")
        timeout = max(self.measurer.options.run_timeout, BASELINE_RUN_TIMEOUT)
        results = self.measurer.measure(self.workload, candidates, run_timeout=timeout)
        for label, result in zip(labels, results, strict=True):
            record = _record(self.workload, self.target, None, None, {"baseline": label},
                             result, -1)
            if self.log is not None:
                self.log.write(record)
            if record.ok:
                self.measured.append(record)
            if label == "untuned":
                self.baseline = record
            else:
                self.default = record

    def step(self, batch_size: int) -> list[Record]:
        """Proposes, measures and logs one batch; returns its records (empty when the space
        has no new valid point left)."""
        points = self.strategy.propose(batch_size)
        if not points:
            self.exhausted = True
            return []
        scripts = [self.space.render(point) for point in points]
        results = self.measurer.measure(self.workload, [Candidate(s) for s in scripts])
        batch: list[Record] = []
        for point, script, result in zip(points, scripts, results, strict=True):
            record = _record(self.workload, self.target, self.space, script,
                             self.space.values(point), result, self.trials)
            if self.log is not None:
                self.log.write(record)
            self._note(record)
            if record.error is not None and record.error.get("kind") == "wrong":
                self.strategy.fence(point)  # a wrong schedule is never proposed again
            batch.append(record)
        self.records += batch
        self.strategy.update(points, [r.cost for r in batch])
        return batch

    def confirm(self, top: int = CONFIRM_TOP, rounds: int = CONFIRM_ROUNDS) -> list[Record]:
        """Measures the `top` fastest schedules found and the default schedule again, `rounds`
        times, all of them in each round (the same moments of machine load), and logs the
        records (`trial` = `CONFIRM_TRIAL`, not trials of the budget). The best of many noisy
        measurements is biased toward luck (the winner's curse: on a flat space the search
        picks noise); `best_records` then judges each schedule on all its measurements, and
        keeps the default unless a schedule beats it beyond their noise; `best` and `default`
        hold the pooled records."""
        ranked: list[Record] = []
        for record in sorted((r for r in self.records if r.ok), key=lambda r: r.cost):
            if all(record.script != other.script for other in ranked):
                ranked.append(record)
        ranked = ranked[:top]
        if not ranked:
            return []
        sources: list[Record | None] = list(ranked)
        candidates = [Candidate(record.script) for record in ranked]
        if self.default is not None:  # measured by _measure_baseline where the pass exists
            sources.append(None)
            candidates.append(Candidate(default_schedule=True))
        confirmed: list[Record] = []
        for results in self.measurer.measure_rounds(self.workload, candidates, rounds):
            for source, result in zip(sources, results, strict=True):
                if source is None:
                    record = _record(self.workload, self.target, None, None,
                                     {"baseline": "default"}, result, CONFIRM_TRIAL)
                else:
                    record = _record(self.workload, self.target, self.space, source.script,
                                     source.knobs, result, CONFIRM_TRIAL)
                if self.log is not None:
                    self.log.write(record)
                if record.ok:
                    self.measured.append(record)
                confirmed.append(record)
        if self.default is not None:
            defaults = [r for r in self.measured if is_default(r)]
            self.default = best_records(defaults).get(self.workload.key, self.default)
        return confirmed

    def decided(self) -> Record | None:
        """The record a compile with the log applies to this workload (`best_records` over
        everything measured: the default unless beaten beyond noise)."""
        return best_records(self.measured).get(self.workload.key, self.best)

    @property
    def best_gflops(self) -> float:
        return self.best.gflops if self.best is not None else 0.0

    def result(self, wall_s: float = 0.0) -> TuneResult:
        return TuneResult(self.workload, self.decided(), self.baseline, self.default,
                          list(self.history), list(self.records), wall_s)


def tune_workload(
    workload: Workload,
    trials: int,
    *,
    measurer: Measurer | None = None,
    space: Space | str | Path = "sketch",
    strategy: SearchStrategy | str = "evolutionary",
    log_path: str | Path | None = None,
    resume: bool = False,
    batch_size: int = 8,
    seed: int = 0,
    progress: ProgressCallback | None = None,
    confirm: bool = True,
) -> TuneResult:
    """Tunes `workload` for `trials` measured trials (fewer if the space runs out) and returns
    the best record. With `resume`, the trials already in `log_path` for this workload count
    toward `trials` and seed the search. With `confirm`, the fastest schedules and the default
    are measured again at the end (`WorkloadTuner.confirm`) and the best is judged on all its
    measurements."""
    own = measurer is None
    measurer = measurer or Measurer()
    writer = LogWriter(log_path) if log_path is not None else None
    start = time.monotonic()
    try:
        tuner = WorkloadTuner(
            workload, measurer, space=space, strategy=strategy, log=writer,
            resume_from=log_path if resume and log_path is not None else None, seed=seed,
        )
        while tuner.trials < trials and not tuner.exhausted:
            tuner.step(min(batch_size, trials - tuner.trials))
            if progress is not None:
                progress(Progress(workload.name, tuner.trials, trials, tuner.best_gflops,
                                  time.monotonic() - start))
        if confirm:
            tuner.confirm()
        return tuner.result(time.monotonic() - start)
    finally:
        if writer is not None:
            writer.close()
        if own:
            measurer.close()
