"""`--runner ray`: builds and runs trials as Ray tasks (TVM's RPC runner, on Ray).

Counterpart: AutoTVM's `RPCRunner` / MetaSchedule's `RPCRunner`, with Ray as the transport. Builds
are Ray tasks of one CPU each (as many in flight as the cluster has CPUs); runs are Ray tasks that
reserve `run_cpus` CPUs (default: the whole local node), so that no two timings overlap on a
node. A task that crashes its worker (a segfault) comes back as `crash`, one still running at
its deadline is cancelled (its worker killed) and comes back as `timeout`; neither is retried.
The tasks call the same `autotune.measure` functions as the local worker processes, on plain
data; inputs and reference outputs are read from the measurer's work directory, so a cluster
spanning several machines needs it on a shared file system.

Requires the `ray` extra (`pip install 'dlc[ray]'`). Without an address, `ray.init` starts a
local Ray instance, which `close` shuts down.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from dlc.autotune.measure import MeasureOptions, Outcome, call_request, checkout_pythonpath


class RayUnavailableError(RuntimeError):
    """Ray is not installed or does not start."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "--runner ray needs the 'ray' package: pip install 'dlc[ray]'"
        ) from None
    return ray


def _remote_call(name: str, args: tuple[Any, ...]) -> Outcome:
    return call_request(name, args)


class RayBackend:
    """The `Backend` of autotune/measure.py on Ray tasks."""

    def __init__(self, options: MeasureOptions, address: str | None = None,
                 run_cpus: int | None = None) -> None:
        self.ray = _import_ray()
        self.options = options
        self._started = False
        if not self.ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                kwargs["num_cpus"] = len(os.sched_getaffinity(0))
            try:
                self.ray.init(address=address, **kwargs)
            except Exception as error:  # noqa: BLE001 - any start failure is reported as such
                raise RayUnavailableError(f"cannot start or reach Ray: {error}") from None
            self._started = True
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        self.run_cpus = max(1, min(run_cpus or cpus, cpus))
        threads = str(options.num_threads)
        path = checkout_pythonpath()  # a worker on this machine imports this checkout
        self._build = self.ray.remote(_remote_call).options(
            num_cpus=1, max_retries=0,
            runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                                      "PYTHONPATH": path}},
        )
        self._run = self.ray.remote(_remote_call).options(
            num_cpus=self.run_cpus, max_retries=0,
            runtime_env={"env_vars": {"OMP_NUM_THREADS": threads,
                                      "OPENBLAS_NUM_THREADS": threads, "PYTHONPATH": path}},
        )

    def _outcome(self, ref: Any, deadline: float, timeout: float) -> Outcome:
        ray = self.ray
        ready, _ = ray.wait([ref], timeout=max(0.0, deadline - time.monotonic()))
        if not ready:
            ray.cancel(ref, force=True)
            return ("error", "timeout", f"no answer within {timeout:.0f} s")
        try:
            return ray.get(ref)  # type: ignore[no-any-return]
        except ray.exceptions.WorkerCrashedError as error:
            return ("error", "crash", f"the Ray worker died: {str(error).splitlines()[0]}")
        except ray.exceptions.RayError as error:
            return ("error", "crash", f"Ray task failed: {str(error).splitlines()[0]}")

    def build(self, requests: Sequence[tuple[Any, ...]], timeout: float) -> list[Outcome]:
        refs = [self._build.remote("build", request) for request in requests]
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        rounds = -(-len(requests) // max(1, cpus))  # builds queue when there are more than CPUs
        deadline = time.monotonic() + timeout * max(1, rounds)
        return [self._outcome(ref, deadline, timeout) for ref in refs]

    def run(self, requests: Sequence[tuple[Any, ...]], timeout: float) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for request in requests:  # one at a time: timings must not overlap
            ref = self._run.remote("run", request)
            outcomes.append(self._outcome(ref, time.monotonic() + timeout, timeout))
        return outcomes

    def close(self) -> None:
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
            self._started = False
