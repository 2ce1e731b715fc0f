"""benchmarks.common.time_calls: after each settle pause, `rewarm` untimed calls come before the
timed batch (the back-to-back figure leaves out the slower calls that follow an idle pause)."""

from __future__ import annotations

import time

from benchmarks.common import time_calls


def test_each_batch_follows_untimed_calls_after_its_pause() -> None:
    calls: list[float] = []

    def slow_first_after_pause() -> None:
        """1 ms per call, 20 ms for a call that comes 5 ms or more after the previous one."""
        now = time.perf_counter()
        idle = now - calls[-1] if calls else 1.0
        time.sleep(0.02 if idle > 0.005 else 0.001)
        calls.append(time.perf_counter())

    timing = time_calls({"f": slow_first_after_pause}, repeats=3, warmup=1, min_seconds=1e-4,
                        settle_seconds=0.01, pin=False, rewarm=2)["f"]
    assert len(calls) == 1 + 1 + 3 * (2 + 1)  # warm-up, batch sizing, 3 x (rewarm + batch)
    assert timing.median < 0.01  # the batch calls came right after the rewarm calls
    without = time_calls({"f": slow_first_after_pause}, repeats=3, warmup=1, min_seconds=1e-4,
                         settle_seconds=0.01, pin=False, rewarm=0)["f"]
    assert without.median > 0.015  # each one-call batch was the first call after a pause
