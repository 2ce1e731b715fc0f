"""`dlc tune`: auto-tune a model or a kernel, and replay tuning records (TVM's `tvmc tune`).

    dlc tune model.onnx|kernel.mlir --trials N [--log F] [--resume]
             [--space sketch|template|rules|T.mlir]
             [--search evolutionary|random|grid] [--runner local|ray] [--threads N] [--plot P.png]
    dlc tune replay model.onnx|kernel.mlir --log F [-o scheduled.mlir] [--emit-scripts DIR]

`tune` extracts the tasks (unique fused kernels, weighted by occurrence), spreads the trials over
them with the gradient task scheduler, appends every trial to the log (JSON lines; `--resume`
continues a log), shows a progress line on stderr (best GFLOP/s so far, trials done, ETA) and
writes a PNG of the best throughput so far against trials. `replay` applies the best records of
a log to the kernels of a model and prints the scheduled loop-level IR; `--emit-scripts DIR`
writes each tuned kernel (`<task>.kernel.mlir`) beside its record's script
(`<task>.schedule.mlir`), which dlc-opt replays on its own:

    dlc-opt DIR/T.kernel.mlir -p 'loop-interpret-transforms{library="DIR/T.schedule.mlir"}'

The `dlc` tool calls `add_tune_subcommand(subparsers)` and dispatches to `run_tune(args)`;
`python3 tools/dlc_tune.py ...` runs the same command from a checkout.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dlc.tools.diagnostics import ToolError, run_tool  # noqa: E402


def add_tune_subcommand(subparsers: Any) -> argparse.ArgumentParser:
    """Adds `tune` (with its `replay` form) to a `dlc` argument parser's subparsers."""
    parser = subparsers.add_parser(
        "tune", help="auto-tune a model or kernel (or replay a tuning log)",
        description="Auto-tune the kernels of a model (.onnx) or module (.mlir): "
                    "`dlc tune FILE --trials N`, or `dlc tune replay FILE --log LOG`.",
    )
    add_tune_arguments(parser)
    parser.set_defaults(handler=run_tune)
    return parser


def add_tune_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="model.onnx or kernel.mlir; or `replay` then the file")
    parser.add_argument("replay_input", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--trials", type=int, default=64, help="measured trials in all (64)")
    parser.add_argument("--log", help="tuning log, JSON lines (default: <input>.tune.jsonl)")
    parser.add_argument("--resume", action="store_true",
                        help="count and reuse the trials already in the log")
    parser.add_argument("--space", default="sketch",
                        help="sketch (generated), template (GEMM template), rules (the default "
                             "schedule's rules and their knobs) or an annotated transform "
                             "script (.mlir)")
    parser.add_argument("--search", default="evolutionary",
                        choices=["evolutionary", "random", "grid"])
    parser.add_argument("--runner", default="local", choices=["local", "ray"])
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (default: "
                        "a local Ray instance)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for parallel loops (0: all usable cores)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--builders", type=int, default=0,
                        help="parallel builder processes (0: the core count)")
    parser.add_argument("--repeat", type=int, default=5, help="timings per trial (median)")
    parser.add_argument("--min-repeat-ms", type=float, default=20.0)
    parser.add_argument("--run-timeout", type=float, default=30.0)
    parser.add_argument("--build-timeout", type=float, default=120.0)
    parser.add_argument("--min-flops", type=int, default=1,
                        help="skip tasks with fewer FLOPs per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--flush-caches", action="store_true",
                        help="evict the caches before each timed call (one call per timing), "
                             "as the layers around a kernel do in a model")
    parser.add_argument("--confirm", action=argparse.BooleanOptionalAction, default=True,
                        help="measure each task's fastest schedules and its default again at "
                             "the end, and keep the best judged on all its runs (default: on)")
    parser.add_argument("--check-model", action=argparse.BooleanOptionalAction, default=True,
                        help="at the end, compile the model with and without the log and time "
                             "both, to check the estimate (default: on)")
    parser.add_argument("--plot", default=None,
                        help="PNG of best-so-far vs trials (default: <log>.png)")
    parser.add_argument("-o", "--output", default=None, help="replay: write the IR here")
    parser.add_argument("--emit-scripts", default=None,
                        help="replay: write <task>.kernel.mlir and <task>.schedule.mlir here")


# ----------------------------------------------------------------------------------------------
# Progress
# ----------------------------------------------------------------------------------------------


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--"
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class ProgressBar:
    """One status line on stderr, redrawn in place on a terminal, else printed per batch."""

    def __init__(self, stream: TextIO | None = None, width: int = 24) -> None:
        self.stream = sys.stderr if stream is None else stream  # resolved now, not at import
        self.width = width
        self.tty = self.stream.isatty()

    def __call__(self, progress: Any) -> None:
        filled = int(self.width * progress.done / max(1, progress.total))
        bar = "#" * filled + "." * (self.width - filled)
        line = (f"[{bar}] {progress.done}/{progress.total} trials  best "
                f"{progress.best_gflops:.2f} GFLOP/s  elapsed {_duration(progress.elapsed_s)}  "
                f"ETA {_duration(progress.eta_s)}  ({progress.task})")
        if self.tty:
            self.stream.write("\r" + line + "\x1b[K")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# ----------------------------------------------------------------------------------------------
# tune
# ----------------------------------------------------------------------------------------------


def _space(spec: str) -> str | Any:
    if spec in ("sketch", "template", "rules"):
        return spec
    path = Path(spec)
    if not path.is_file():
        raise ToolError(
            f"expected --space sketch, template, rules or a template file, found '{spec}'"
        )
    return path


def _backend(args: argparse.Namespace, options: Any) -> Any:
    if args.runner == "ray":
        from dlc.autotune.ray_runner import RayBackend

        return RayBackend(options, address=args.ray_address)
    return None


def run_tune(args: argparse.Namespace) -> int:
    """Runs `dlc tune` (or `dlc tune replay`) with parsed arguments; returns the exit code."""
    if args.input == "replay":
        if args.replay_input is None:
            raise ToolError("dlc tune replay: expected a model or kernel file, found none")
        return run_replay(args)
    if args.replay_input is not None:
        raise ToolError(f"unexpected argument '{args.replay_input}'")
    from dlc.autotune.measure import MeasureOptions, Measurer
    from dlc.autotune.tasks import (
        FUSED_LOOP_LOWERING,
        LOOP_LOWERING,
        MODEL_PREPARATION,
        extract_tasks,
        tune_tasks,
    )
    from dlc.rewrites.tuning.log import LogHeader

    source = Path(args.input)
    if not source.is_file():
        raise ToolError(f"cannot read {source}: no such file")
    if args.trials <= 0:
        raise ToolError(f"expected a positive --trials, found {args.trials}")
    threads = args.threads or len(os.sched_getaffinity(0))
    log = Path(args.log or f"{source}.tune.jsonl")
    if log.exists() and not args.resume and log.stat().st_size > 0:
        print(f"dlc tune: appending to the existing log {log} (use --resume to continue it)",
              file=sys.stderr)
    # The rules space tunes the kernels the compile makes (epilogues fused); the others fuse
    # epilogues themselves (reverse_compute_at).
    fuse = args.space == "rules"
    tasks = extract_tasks(source, args.min_flops, fuse_epilogue=fuse)
    header = LogHeader(MODEL_PREPARATION, FUSED_LOOP_LOWERING if fuse else LOOP_LOWERING,
                       str(args.space))
    if not tasks:
        raise ToolError(f"{source}: expected at least one kernel to tune, found none")
    total_flops = sum(t.flops for t in tasks)
    print(f"dlc tune: {len(tasks)} task(s), {total_flops / 1e9:.3f} GFLOP per run; "
          f"{args.trials} trials, {args.search} search over {args.space}, "
          f"{threads} thread(s); log {log}", file=sys.stderr)
    options = MeasureOptions(
        repeat=args.repeat, min_repeat_ms=args.min_repeat_ms, run_timeout=args.run_timeout,
        build_timeout=args.build_timeout, num_threads=threads,
        n_parallel=args.builders or len(os.sched_getaffinity(0)), seed=args.seed,
        flush_caches=args.flush_caches,
    )
    curve: list[float] = []
    bar = ProgressBar()

    def progress(p: Any) -> None:
        curve.extend([p.best_gflops] * (p.done - len(curve)))
        bar(p)

    start = time.monotonic()
    with Measurer(options, _backend(args, options)) as measurer:
        result = tune_tasks(
            tasks, args.trials, measurer=measurer, space=_space(args.space),
            strategy=args.search, log_path=log, resume=args.resume,
            batch_size=args.batch_size, seed=args.seed, progress=progress,
            confirm=args.confirm, header=header,
        )
    bar.close()
    _summary(result, time.monotonic() - start)
    if args.check_model:
        _check_model(source, log, args.threads, result.estimated_latency("best"))
    if curve:
        from dlc.autotune.plot import plot_curves

        plot = Path(args.plot or f"{log}.png")
        plot_curves({source.name: curve}, plot, title=f"dlc tune {source.name}")
        print(f"dlc tune: wrote {plot}", file=sys.stderr)
    return 0


NOISY_SPREAD = 2.0
"""`dlc tune` warns when one schedule's slowest timing is more than this times its fastest."""


def _summary(result: Any, wall: float) -> None:
    """Per task: the untuned and default throughputs, the one a compile with the log applies
    (the default's when no schedule beat it beyond noise) and the trials; then the estimated
    latency against the default schedule's, and a warning about noisy timings."""
    from dlc.rewrites.tuning.log import is_default

    noisy: list[tuple[float, str]] = []
    for task, outcome in zip(result.tasks, result.results, strict=True):
        base = outcome.baseline.gflops if outcome.baseline is not None else 0.0
        default = outcome.default.gflops if outcome.default is not None else 0.0
        best = outcome.best.gflops if outcome.best is not None else 0.0
        failed = sum(1 for r in outcome.records if not r.ok)
        wrong = sum(1 for r in outcome.records if r.error and r.error.get("kind") == "wrong")
        kept = outcome.best is None or is_default(outcome.best)
        verdict = "kept the default" if kept else "tuned"
        print(f"  {task.name:40s} x{task.weight}  untuned {base:8.2f}  default {default:8.2f}  "
              f"best {best:8.2f} GFLOP/s, {verdict}  ({len(outcome.records)} trials, "
              f"{failed} failed, {wrong} wrong)", file=sys.stderr)
        for record in (outcome.baseline, outcome.default, outcome.best, *outcome.records):
            if record is not None and record.ok and min(record.costs) > 0:
                ratio = max(record.costs) / min(record.costs)
                if ratio > NOISY_SPREAD:
                    noisy.append((ratio, f"{task.name} ({_schedule_name(record)}: "
                                         f"{min(record.costs) * 1e3:.3g}-"
                                         f"{max(record.costs) * 1e3:.3g} ms)"))
    latency = result.estimated_latency("best")
    print(f"dlc tune: estimated latency {latency * 1e3:.3f} ms (with the log) vs "
          f"{result.estimated_latency('default') * 1e3:.3f} ms (baseline: the default "
          f"schedule); {wall:.0f} s", file=sys.stderr)
    if noisy:
        noisy.sort(reverse=True)
        print(f"warning: timings of one schedule spread more than {NOISY_SPREAD:g}x in "
              f"{len(noisy)} measurement(s), worst {noisy[0][1]}: the machine is loaded; "
              "differences within that noise keep the default schedule", file=sys.stderr)


def _schedule_name(record: Any) -> str:
    if record.script is None:
        return str(record.knobs.get("baseline", "untuned"))
    return f"trial {record.trial}"


def _check_model(source: Path, log: Path, threads: int, estimate: float,
                 repeat: int = 30) -> None:
    """Compiles the model with and without the log, times both (interleaved call by call, the
    same inputs) and prints both beside the estimate."""
    import statistics

    import numpy as np

    import dlc

    try:
        plain = dlc.compile(source, "host", threads=threads)
        tuned = dlc.compile(source, "host", threads=threads, tuning_log=log)
    except Exception as error:  # noqa: BLE001 - the tuning itself is done and logged
        print(f"dlc tune: could not compile {source} to check the estimate: {error}",
              file=sys.stderr)
        return
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(spec.shape).astype(spec.dtype)
              for spec in plain.signature.inputs]
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(repeat + 1):  # the first round warms up
        for name, executable in (("without", plain), ("with", tuned)):
            begin = time.perf_counter()
            executable(*inputs)
            times[name].append(time.perf_counter() - begin)
    with_log = statistics.median(times["with"][1:])
    without = statistics.median(times["without"][1:])
    print(f"dlc tune: measured model latency {with_log * 1e3:.3f} ms with the log vs "
          f"{without * 1e3:.3f} ms without (default schedules), median of {repeat}; "
          f"the estimate was {estimate * 1e3:.3f} ms", file=sys.stderr)


# ----------------------------------------------------------------------------------------------
# replay
# ----------------------------------------------------------------------------------------------


def run_replay(args: argparse.Namespace) -> int:
    """Applies a log's best records to a model's kernels; prints or writes the loop-level IR."""
    from dlc.autotune.tasks import load_model_module, lower_model
    from dlc.dialects import make_context
    from dlc.driver.target import resolve_cpu_target
    from dlc.pipelines import module_level
    from dlc.rewrites.loop_apply_tuning_log import log_loop_lowering
    from dlc.rewrites.tuning.apply import apply_records, load_best
    from dlc.rewrites.tuning.log import tuning_key
    from dlc.rewrites.tuning.workload import Workload, kernel_functions

    if args.log is None:
        raise ToolError("dlc tune replay: expected --log LOG, found none")
    log = Path(args.log)
    if not log.is_file():
        raise ToolError(f"cannot read the tuning log {log}: no such file")
    ctx = make_context()
    module = load_model_module(args.replay_input, ctx)
    best = load_best(log, tuning_key(resolve_cpu_target("host", args.threads)))
    fuse = module_level(module) != "loop" and "fuse-epilogue=false" not in (
        log_loop_lowering(log) or "")
    lower_model(module, ctx, fuse_epilogue=fuse)
    if args.emit_scripts is not None:
        directory = Path(args.emit_scripts)
        directory.mkdir(parents=True, exist_ok=True)
        for func in kernel_functions(module):
            workload = Workload.from_function(func)
            record = best.get(workload.key)
            if record is None or record.script is None:
                continue
            (directory / f"{func.sym_name.data}.kernel.mlir").write_text(workload.text + "\n")
            (directory / f"{func.sym_name.data}.schedule.mlir").write_text(record.script)
    applied = apply_records(module, best, ctx)
    text = str(module) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    print(f"dlc tune replay: applied {len(applied)} record(s): "
          f"{', '.join(f'@{name}' for name in applied) or 'none'}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python3 tools/dlc_tune.py tune ...` (the `dlc tune` subcommand from a checkout)."""
    args_list = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="dlc")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_tune_subcommand(subparsers)

    def body() -> None:
        args = parser.parse_args(args_list)
        code = args.handler(args)
        if code:
            raise SystemExit(code)

    return run_tool("dlc tune", body, show_traceback="--show-traceback" in args_list)


if __name__ == "__main__":
    sys.exit(main())
