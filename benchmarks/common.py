"""Timing helpers for dlc's side-by-side benchmarks: medians of repeated runs, GFLOP/s, ratios.

The machines are shared and noisy, so each benchmark times dlc and its peer in the same process
and run, interleaving their repetitions, and reports the ratio of the medians.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
"""The cores this process may use, read when the module loads (before any pinning)."""


def pin_threads() -> dict[int, set[int]]:
    """Pin the calling thread to the first allowed core and every other thread of the process
    (dlc's OpenMP workers, ONNX Runtime's and OpenBLAS's pool threads) round-robin to the
    others; returns each pinned thread's previous cores (for `unpin_threads`).

    On the 2-vCPU hosts dlc is measured on, the kernel's scheduler leaves a woken worker thread
    on its waker's core even while the other core idles; whichever runtime's worker lands there
    runs its parallel loops on one core, at worse than single-thread speed (seen for dlc and ONNX
    Runtime alike: conv3x3 64->64 at 2 threads took 4-6 ms instead of 1.2). Pinning gives every
    peer the same layout: caller on one core, its worker threads on the others."""
    cores = CORES
    if len(cores) < 2 or threading.current_thread() is not threading.main_thread():
        return {}
    me = threading.get_native_id()
    previous = {me: os.sched_getaffinity(me)}
    os.sched_setaffinity(me, {cores[0]})
    others = sorted(int(tid) for tid in os.listdir("/proc/self/task") if int(tid) != me)
    for index, tid in enumerate(others):
        try:
            previous[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, {cores[1 + index % (len(cores) - 1)]})
        except OSError:  # the thread ended meanwhile
            previous.pop(tid, None)
    return previous


def unpin_threads(previous: dict[int, set[int]]) -> None:
    """Give the threads `pin_threads` pinned their cores back: a thread or an OpenMP runtime
    started later must not inherit the caller's single core (libgomp would count one core and
    throttle its spinning)."""
    for tid, cores in previous.items():
        try:
            os.sched_setaffinity(tid, cores)
        except OSError:
            pass


@dataclass(frozen=True)
class Timing:
    """Median and best wall-clock seconds per call of one implementation, and the median CPU
    seconds per call (all threads of the process: on a machine other processes load, the CPU
    time of a single-threaded run is the steadier measure of its own work)."""

    name: str
    median: float
    best: float
    cpu: float

    def gflops(self, flops: float) -> float:
        """Throughput at the median time."""
        return flops / self.median / 1e9


def time_calls(
    functions: dict[str, Callable[[], object]], repeats: int = 15, warmup: int = 3,
    min_seconds: float = 0.02, settle_seconds: float = 0.25, pin: bool = True,
    rewarm: int = 2,
) -> dict[str, Timing]:
    """Times each function `repeats` times (each sample is a batch lasting at least
    `min_seconds`), interleaving the functions so that they see the same machine load.

    Before each batch the process sleeps `settle_seconds`: OpenBLAS's and ONNX Runtime's worker
    threads spin on a core for a while after each call, and without the pause the next batch
    (another implementation's) would share its cores with them — and count their CPU time, since
    `process_time` covers every thread of the process.

    After the pause, `rewarm` untimed calls come before the batch: on the 2-vCPU guests dlc is
    measured on, the first calls after an idle pause run slower for a few calls (the pause
    lets the host idle the cores; the dilated 3x3 conv of `ops.py`, 1.97 ms back to back,
    took 3.76, 3.08, 2.59, 2.29 ms on the four calls after a 0.1 s pause, ONNX Runtime 2.54,
    2.09, 1.89, 1.87 against 1.85), and a short batch would fold that ramp into what is meant
    to be the back-to-back figure. Latency after a pause is measured on its own (the zoo's
    periodic column, `benchmarks.periodic`).

    With `pin`, threads are pinned (`pin_threads`) after the warm-up calls have started every
    peer's worker threads, and unpinned at the end."""
    for function in functions.values():
        for _ in range(warmup):
            function()
    pinned = pin_threads() if pin else {}
    batch: dict[str, int] = {}
    for name, function in functions.items():
        start = time.perf_counter()
        function()
        once = max(time.perf_counter() - start, 1e-7)
        batch[name] = max(1, int(min_seconds / once))
    samples: dict[str, list[float]] = {name: [] for name in functions}
    cpu: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            count = batch[name]
            time.sleep(settle_seconds)
            for _ in range(rewarm):
                function()
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(count):
                function()
            samples[name].append((time.perf_counter() - start) / count)
            cpu[name].append((time.process_time() - start_cpu) / count)
    unpin_threads(pinned)
    return {
        name: Timing(name, statistics.median(values), min(values), statistics.median(cpu[name]))
        for name, values in samples.items()
    }


def ort_session(model: bytes, threads: int):  # noqa: ANN201 - an onnxruntime.InferenceSession
    """An ONNX Runtime CPU session of the serialized `model` on `threads` intra-op threads."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def time_dynamic_static(dynamic: Callable[[object], object], static: Callable[[object], object],
                        onnxruntime: Callable[[object], object], x: object,
                        repeats: int) -> tuple[float, float, float]:
    """Median milliseconds of one call on `x` of a dynamic-shape executable, the static compile
    of the same shape and ONNX Runtime (`onnxruntime(x)` runs its session), timed together
    (`time_calls`)."""
    timings = time_calls({
        "dynamic": lambda: dynamic(x),
        "static": lambda: static(x),
        "onnxruntime": lambda: onnxruntime(x),
    }, repeats=repeats)
    d, s, o = (timings[k].median * 1e3 for k in ("dynamic", "static", "onnxruntime"))
    return d, s, o


def report(title: str, flops: float, timings: dict[str, Timing], baseline: str) -> str:
    """One line per implementation: ms, GFLOP/s, and the ratios of `baseline`'s median wall
    time (and CPU time) to its own (above 1: faster than the baseline)."""
    lines = [title]
    base, base_cpu = timings[baseline].median, timings[baseline].cpu
    for timing in timings.values():
        lines.append(
            f"  {timing.name:<10} {timing.median * 1e3:9.3f} ms (best {timing.best * 1e3:8.3f})"
            f"  {timing.gflops(flops):7.1f} GFLOP/s  x{base / timing.median:5.2f} vs {baseline}"
            f"  (cpu {timing.cpu * 1e3:8.3f} ms, x{base_cpu / max(timing.cpu, 1e-12):5.2f})"
        )
    return "\n".join(lines)
