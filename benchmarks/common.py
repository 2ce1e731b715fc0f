"""Timing helpers for dlc's side-by-side benchmarks: medians of repeated runs, GFLOP/s, ratios.

The machines are shared and noisy, so each benchmark times dlc and its peer in the same process
and run, interleaving their repetitions, and reports the ratio of the medians.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


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
    min_seconds: float = 0.02, settle_seconds: float = 0.25,
) -> dict[str, Timing]:
    """Times each function `repeats` times (each sample is a batch lasting at least
    `min_seconds`), interleaving the functions so that they see the same machine load.

    Before each batch the process sleeps `settle_seconds`: OpenBLAS's and ONNX Runtime's worker
    threads spin on a core for a while after each call, and without the pause the next batch
    (another implementation's) would share its cores with them — and count their CPU time, since
    `process_time` covers every thread of the process."""
    batch: dict[str, int] = {}
    for name, function in functions.items():
        for _ in range(warmup):
            function()
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
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(count):
                function()
            samples[name].append((time.perf_counter() - start) / count)
            cpu[name].append((time.process_time() - start_cpu) / count)
    return {
        name: Timing(name, statistics.median(values), min(values), statistics.median(cpu[name]))
        for name, values in samples.items()
    }


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
