"""Auto-tuning: best GFLOP/s after N trials, and wall time, next to the default schedule.

Run: `python3 benchmarks/tune.py [--trials 64 256] [--threads 2] [--tasks gemm conv]
[--space sketch|template|rules] [--tvm-python PATH | --no-metaschedule]`.

Tasks: fp32 GEMM 1024^3 (next to NumPy's OpenBLAS at the same thread count, timed in the same run)
and ResNet-18's layer1 conv task (3x3, 64 -> 64 channels, 56x56, + bias + ReLU; extracted from
`benchmarks/model_zoo.resnet18` as `dlc tune` extracts it, but as a direct conv: the `cpu`
pipeline's Winograd form does other FLOPs than the conv MetaSchedule tunes). For each: the untuned
kernel and `loop-default-schedule` (measured by the same runner, same inputs, same moment), then
one tuning run of max(--trials) trials with the evolutionary search and the xgboost cost model,
read at each trial count: best GFLOP/s so far and the wall time it took; then the fastest schedules
and the default measured again (`WorkloadTuner.confirm`), each judged on all its runs. Then Apache
TVM's MetaSchedule on the same task at the same trial counts and threads
(`benchmarks/metaschedule.py`, run with `--tvm-python`, default this interpreter; its failure is
reported, not fatal), with the ratios of dlc's best GFLOP/s and wall time to its. Logs go to
--log-dir.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import time_calls  # noqa: E402

CONV_SHAPES = ((1, 64, 56, 56), (64, 64, 3, 3))
"""The input and weight shapes of ResNet-18's layer1 conv (3x3, 64 -> 64, 56x56, bias, ReLU)."""


def gemm_workload(size: int) -> object:
    from dlc.autotune.tasks import workloads_of
    from dlc.dialects import make_context
    from xdsl.parser import Parser

    t = f"tensor<{size}x{size}xf32>"
    text = (f"func.func @gemm(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %c = graph.matmul %a, %b : ({t}, {t}) -> {t}\n  func.return %c : {t}\n}}\n")
    (workload,) = workloads_of(Parser(make_context(), text).parse_module())
    return workload


def conv_workload(fuse_epilogue: bool) -> object:
    from dlc.autotune.tasks import extract_tasks

    from benchmarks.model_zoo import resnet18

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "resnet18.onnx"
        import onnx

        onnx.save(resnet18(), str(path))
        # `graph-opt`: the direct conv, the algorithm MetaSchedule tunes (the `cpu` pipeline
        # would make it a Winograd conv, with other FLOPs).
        tasks = extract_tasks(path, fuse_epilogue=fuse_epilogue, graph_passes="graph-opt")
    for task in tasks:
        shapes = {tuple(t.get_shape()) for t in task.workload.argument_types()}
        if "relu" in task.name and "add" not in task.name and set(CONV_SHAPES) <= shapes:
            return task.workload
    convs = [t for t in tasks if "conv2d" in t.name]
    return max(convs, key=lambda t: t.flops).workload


def numpy_gemm(size: int, threads: int) -> float:
    """NumPy's seconds per 1024^3 GEMM at `threads` threads (median)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty((size, size), np.float32)
    with threadpool_limits(threads):
        timing = time_calls({"numpy": lambda: np.matmul(a, b, out=out)}, repeats=7)
    return timing["numpy"].median


def _tuned_vs_numpy(log: Path, size: int, threads: int) -> dict[str, object]:
    """The GEMM compiled with the tuning log and without it (`dlc.compile`, as a user would),
    and NumPy, timed interleaved in this process (the tuning figures come from worker
    processes at other moments): GFLOP/s of each."""
    import functools

    from threadpoolctl import threadpool_limits

    import dlc
    from benchmarks.gemm import gemm_module

    rng = np.random.default_rng(1)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    with tempfile.TemporaryDirectory(prefix="dlc-tuned-") as scratch:
        path = Path(scratch) / "gemm.mlir"
        path.write_text(gemm_module(size))
        default = dlc.compile(path, threads=threads, cache=False)
        tuned = dlc.compile(path, threads=threads, cache=False, tuning_log=log)
    out = np.empty((size, size), np.float32)
    tuned(a, b, out=(out,))
    np.testing.assert_allclose(out, a @ b, rtol=1e-3, atol=1e-3)
    with threadpool_limits(threads):
        timings = time_calls({"tuned": functools.partial(tuned, a, b, out=(out,)),
                              "default": functools.partial(default, a, b, out=(out,)),
                              "numpy": functools.partial(np.matmul, a, b)}, repeats=9)
    flops = 2 * size**3
    return {f"{name}_interleaved_gflops": flops / timing.median / 1e9
            for name, timing in timings.items()}


def metaschedule(task: str, args: argparse.Namespace) -> dict[str, object]:
    """Runs `benchmarks/metaschedule.py` for `task` with `--tvm-python` at the same trial counts
    and threads: its row, or `{"error": why}` (TVM missing, a crash: reported, not fatal)."""
    import subprocess

    from dlc.target import host

    python = args.tvm_python or sys.executable
    script = Path(__file__).resolve().parent / "metaschedule.py"
    command = [python, str(script), "--task", task, "--size", str(args.size), "--threads",
               str(args.threads), "--cpu", host().cpu, "--trials",
               *(str(t) for t in args.trials)]
    try:
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=args.metaschedule_timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.metaschedule_timeout:.0f} s"}
    for line in done.stdout.splitlines():
        if line.startswith("METASCHEDULE "):
            return dict(json.loads(line.removeprefix("METASCHEDULE ")))
    tail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return {"error": f"{python}: {tail[:200]} (exit code {done.returncode})"}


def run_task(name: str, workload: object, args: argparse.Namespace) -> dict[str, object]:
    from dlc.autotune.measure import MeasureOptions, Measurer
    from dlc.autotune.tuner import tune_workload

    options = MeasureOptions(repeat=args.repeat, min_repeat_ms=args.min_repeat_ms,
                             num_threads=args.threads, n_parallel=args.builders,
                             run_timeout=args.run_timeout)
    trials = max(args.trials)
    reached: dict[int, float] = {}
    start = time.monotonic()

    def progress(p: object) -> None:
        for count in args.trials:
            if p.done >= count and count not in reached:  # type: ignore[attr-defined]
                reached[count] = time.monotonic() - start
        print(f"  [{name}] {p.done}/{p.total} best {p.best_gflops:.1f} GFLOP/s "  # type: ignore[attr-defined]
              f"({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)

    log = Path(args.log_dir) / f"{name}.jsonl"
    if log.exists():
        log.unlink()
    with Measurer(options) as measurer:
        result = tune_workload(workload, trials, measurer=measurer, log_path=log,  # type: ignore[arg-type]
                               space=args.space, strategy=args.search, batch_size=args.batch_size,
                               progress=progress, seed=args.seed)
    flops = workload.flops  # type: ignore[attr-defined]
    if name.startswith("gemm") and result.best is not None and result.best.script:
        row_best = _tuned_vs_numpy(log, args.size, args.threads)
    else:
        row_best = {}
    row: dict[str, object] = {**row_best,
        "task": name, "flops": flops, "key": workload.key,  # type: ignore[attr-defined]
        "untuned_gflops": result.baseline.gflops if result.baseline else None,
        "default_gflops": result.default.gflops if result.default else None,
        "wall_s_total": result.wall_s,
        "failed_trials": sum(1 for r in result.records if not r.ok),
        "best_knobs": result.best.knobs if result.best else None,
        "confirmed_gflops": result.best.gflops if result.best else None,
        "confirmed_default_gflops": result.default.gflops if result.default else None,
    }
    for count in args.trials:
        row[f"best_gflops@{count}"] = result.best_gflops_after(count)
        row[f"wall_s@{count}"] = reached.get(count, math.nan)
    row["trials_done"] = len(result.records)  # fewer than asked when the space ran out
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--tasks", nargs="+", default=["gemm", "conv"], choices=["gemm", "conv"])
    parser.add_argument("--size", type=int, default=1024, help="GEMM size")
    parser.add_argument("--search", default="evolutionary")
    parser.add_argument("--space", default="sketch",
                        help="sketch (generated), template (GEMM) or rules (the default "
                             "schedule's rules and their knobs)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--builders", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--min-repeat-ms", type=float, default=20.0)
    parser.add_argument("--run-timeout", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-dir", default="benchmarks/results/tune")
    parser.add_argument("--json", default=None, help="also write the rows as JSON here")
    parser.add_argument("--metaschedule", action=argparse.BooleanOptionalAction, default=True,
                        help="also run TVM's MetaSchedule at the same budget (default: on)")
    parser.add_argument("--tvm-python", default=None,
                        help="the Python that has Apache TVM for MetaSchedule (default: this "
                             "one; see benchmarks/metaschedule.py for versions that work)")
    parser.add_argument("--metaschedule-timeout", type=float, default=3600.0)
    args = parser.parse_args()
    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    print(f"dlc auto-tuning benchmark: {args.threads} thread(s), {args.search} search over "
          f"the {args.space} space, trials "
          f"{args.trials}, load average {load[0]:.1f} at start")
    rows = []
    for name in args.tasks:
        workload = (gemm_workload(args.size) if name == "gemm"
                    else conv_workload(fuse_epilogue=args.space == "rules"))
        label = f"gemm{args.size}" if name == "gemm" else "resnet18_conv3x3_64"
        row = run_task(label, workload, args)
        if name == "gemm":
            seconds = numpy_gemm(args.size, args.threads)
            row["numpy_gflops"] = 2 * args.size**3 / seconds / 1e9
        if args.metaschedule:
            row["metaschedule"] = metaschedule(name, args)
        rows.append(row)
        _print_row(row, args.trials)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


def _print_row(row: dict[str, object], trials: list[int]) -> None:
    def g(value: object) -> str:
        return f"{value:8.1f}" if isinstance(value, float) and math.isfinite(value) else "     n/a"

    print(f"{row['task']}  ({float(row['flops']) / 1e9:.3f} GFLOP, key {row['key']})")  # type: ignore[arg-type]
    print(f"  untuned            {g(row['untuned_gflops'])} GFLOP/s")
    print(f"  default schedule   {g(row['default_gflops'])} GFLOP/s")
    if "numpy_gflops" in row:
        print(f"  NumPy (OpenBLAS)   {g(row['numpy_gflops'])} GFLOP/s")
    if "tuned_interleaved_gflops" in row:
        tuned, numpy = row["tuned_interleaved_gflops"], row["numpy_interleaved_gflops"]
        default = row["default_interleaved_gflops"]
        print(f"  dlc.compile with the log vs without vs NumPy, timed interleaved: {g(tuned)} vs "
              f"{g(default)} vs {g(numpy)} GFLOP/s: tuned x{float(tuned) / float(numpy):.2f} "  # type: ignore[arg-type]
              f"NumPy, x{float(tuned) / float(default):.2f} default")  # type: ignore[arg-type]
    for count in trials:
        best = row[f"best_gflops@{count}"]
        ratio = ""
        if isinstance(best, float) and isinstance(row.get("default_gflops"), float):
            ratio += f"  x{best / row['default_gflops']:.2f} vs default"  # type: ignore[operator]
        if isinstance(best, float) and isinstance(row.get("numpy_gflops"), float):
            ratio += f"  x{best / row['numpy_gflops']:.2f} vs NumPy"  # type: ignore[operator]
        done = int(row["trials_done"])  # type: ignore[call-overload]
        if done < count:
            print(f"  tuned, {count:4d} trials: the space ran out after {done} trials{ratio}")
        else:
            print(f"  tuned, {count:4d} trials {g(best)} GFLOP/s in {g(row[f'wall_s@{count}'])} s"
                  f"{ratio}")
    print(f"  confirmed (each of the fastest schedules and the default measured again, judged "
          f"on all its runs): best {g(row['confirmed_gflops'])} GFLOP/s, default "
          f"{g(row['confirmed_default_gflops'])} GFLOP/s")
    print(f"  failed trials {row['failed_trials']}")
    ms = row.get("metaschedule")
    if isinstance(ms, dict) and "error" in ms:
        print(f"  TVM MetaSchedule: not run ({ms['error']})")
    elif isinstance(ms, dict):
        for count in trials:
            point = ms["at"][str(count)]
            ratio = ""
            if isinstance(row.get(f"best_gflops@{count}"), float) and point["gflops"] > 0:
                ratio = f"  dlc x{float(row[f'best_gflops@{count}']) / point['gflops']:.2f}"  # type: ignore[arg-type]
                wall = row.get(f"wall_s@{count}")
                if isinstance(wall, float) and math.isfinite(wall):
                    ratio += f" in x{wall / point['wall_s']:.2f} the wall time"
            print(f"  TVM MetaSchedule ({ms['tvm']}), {point['trials']:4d} trials "
                  f"{g(float(point['gflops']))} GFLOP/s in {g(float(point['wall_s']))} s{ratio}")
        print(f"  TVM MetaSchedule's best timed here {g(float(ms['timed_gflops']))} GFLOP/s "
              f"(checked against NumPy); tuning wall {g(float(ms['tune_wall_s']))} s after "
              f"{float(ms['setup_s']):.0f} s of one-time setup")
    print(f"  best knobs {json.dumps(row['best_knobs'])}", flush=True)


if __name__ == "__main__":
    main()
