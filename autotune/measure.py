"""Measuring candidates: build in isolated worker processes, run one at a time, check, time.

Counterpart: TVM's `LocalBuilder` + `LocalRunner` (MetaSchedule) / AutoTVM's `measure_option`.
A candidate is a workload plus a schedule (transform-script text; None for the untuned kernel).
Builders (`n_parallel` worker processes) apply the script, lower the kernel to LLVM and link a
shared library; the runner (one worker process, so that timings do not overlap) loads it, runs
it on the task's seeded random inputs, compares the outputs with those of the default schedule
(`loop-default-schedule`, the schedule a compile without a log gives; the untuned kernel where
that pass does not exist) on the same inputs, within a tolerance, then times it: `repeat`
timings, each the mean of `number` back-to-back calls (enough calls to
last `min_repeat_ms`); the cost is their median. A candidate that fails to build, crashes the
runner (a segfault kills only that worker, which is restarted), runs past its timeout (the worker
is killed) or computes a wrong result costs that trial only; the result says which.

`run_trials` is what the tuner calls; `Backend` is the interface a distributed runner (Ray,
autotune/ray_runner.py) implements: build and run functions of plain data.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import math
import multiprocessing.connection
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from dlc.driver.target import resolve_cpu_target
from dlc.rewrites.tuning.workload import Workload
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Block, Region, SSAValue

# ----------------------------------------------------------------------------------------------
# Options and results
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasureOptions:
    """How candidates are built and timed.

    Attributes:
        repeat: timings per candidate (the cost is their median).
        min_repeat_ms: each timing runs the kernel enough times to last this long.
        build_timeout, run_timeout: seconds before a builder or the runner is killed.
        n_parallel: builder processes.
        num_threads: threads for parallel loops in the runner (OMP_NUM_THREADS).
        rtol, atol: tolerance against the default schedule's outputs (atol scaled by the
            outputs' largest magnitude).
        opt_level: LLVM optimization level.
        seed: the seed of the random inputs.
        target: the CPU candidates are built for: `host` (this machine, with `num_threads`
            threads; the runner runs on it) or a target string of the same machine's
            architecture.
        flush_caches: before each timed call, write a buffer twice the size of the target's last
            cache level, so that every call starts with the kernel's data out of the caches (as
            in a model, where the layers between two calls of a kernel evict its data; TVM's
            `enable_cpu_cache_flush`). Each timing is then one call, and the flush is not timed.
    """

    repeat: int = 5
    min_repeat_ms: float = 20.0
    build_timeout: float = 120.0
    run_timeout: float = 30.0
    n_parallel: int = 2
    num_threads: int = 1
    rtol: float = 1e-3
    atol: float = 1e-4
    opt_level: int = 3
    seed: int = 0
    target: str = "host"
    flush_caches: bool = False


@dataclass(frozen=True)
class Candidate:
    """What to build: the workload with a schedule (`script`), or with `loop-default-schedule`
    (`default_schedule`), or as it is; `kernel_text` replaces the workload's own module (an
    already scheduled kernel with the same signature)."""

    script: str | None = None
    default_schedule: bool = False
    kernel_text: str | None = None


@dataclass
class MeasureResult:
    """The outcome of one trial: costs in seconds, or an error kind and message."""

    costs: list[float] = field(default_factory=list)
    error_kind: str | None = None
    error: str | None = None
    build_s: float = 0.0
    run_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error_kind is None and bool(self.costs)

    @property
    def cost(self) -> float:
        return statistics.median(self.costs) if self.ok else float("inf")


BASELINE_RUN_TIMEOUT = 600.0
"""Seconds the untuned kernel may run (its reference run and its timing): it may be slow."""


class MeasureError(RuntimeError):
    """Measuring cannot start: the reference (the default schedule) does not build or run."""


# ----------------------------------------------------------------------------------------------
# The work done in worker processes (plain data in, plain data out)
# ----------------------------------------------------------------------------------------------


class _TrialFailure(Exception):
    """A trial failed in a way that has a kind (build, wrong, run)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def with_constant_inputs(module: ModuleOp, arrays: Sequence[np.ndarray]) -> None:
    """Turns a workload module into the module a model makes of it: `@kernel` becomes a private
    kernel that a new entry `@main` calls, passing a constant global holding `arrays[i]` for
    its i-th constant input (`dlc.constant`) and its own arguments for the others."""
    from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
    from dlc.rewrites.loop_fold_constant_nests import constant_global
    from dlc.rewrites.tuning.workload import constant_arguments, kernel_function_of
    from xdsl.dialects import func
    from xdsl.dialects.memref import GetGlobalOp

    kernel = kernel_function_of(module)
    constant = constant_arguments(kernel)
    types = list(kernel.function_type.inputs.data)
    globals_ = [
        constant_global(f"constant{position}", types[index], array)
        for position, (index, array) in enumerate(zip(constant, arrays, strict=True))
    ]
    entry_types = [t for index, t in enumerate(types) if index not in constant]
    block = Block(arg_types=entry_types)
    own = iter(block.args)
    arguments: list[SSAValue] = []
    for index, type_ in enumerate(types):
        if index in constant:
            load = GetGlobalOp(globals_[constant.index(index)].sym_name.data, type_)
            block.add_op(load)
            arguments.append(load.memref)
        else:
            arguments.append(next(own))
    block.add_ops([func.CallOp(kernel.sym_name.data, arguments, []), func.ReturnOp()])
    entry = func.FuncOp("main", FunctionType.from_lists(entry_types, []), Region(block))
    entry.attributes[NUM_OUTPUTS_ATTR] = kernel.attributes[NUM_OUTPUTS_ATTR]
    kernel.sym_visibility = StringAttr("private")
    kernel.arg_attrs = None
    module.body.block.add_ops([*globals_, entry])


def _build_model(module: ModuleOp, constants_path: str, default_schedule: bool,
                 opt_level: int, target: str) -> bytes:
    """The shared library of a workload module run as a model runs it: its constants are
    globals, so the compile folds what only re-lays them out (`loop-fold-constant-nests`) and
    the timed kernel does not pay for it."""
    from dlc.dialects.contracts import SCHEDULED_ATTR
    from dlc.driver.cache import CompileOptions
    from dlc.driver.compiler import compile_module
    from dlc.rewrites.tuning.workload import kernel_function_of

    if not default_schedule:
        kernel_function_of(module).attributes[SCHEDULED_ATTR] = UnitAttr()
    with_constant_inputs(module, _load_arrays(constants_path))
    compiled, _ = compile_module(module, CompileOptions(target=target, opt_level=opt_level),
                                 jobs=1)
    with tempfile.TemporaryDirectory(prefix="dlc-build-") as scratch:
        # loaded by this process only: no C interface to compile
        return compiled.export(Path(scratch) / "kernel.so", with_c_api=False).read_bytes()


def build_library(kernel_text: str, script: str | None, default_schedule: bool,
                  opt_level: int = 3, constants_path: str | None = None,
                  target: str = "host") -> bytes:
    """Schedule and compile a kernel module for `target` (a target string, or `host`); returns
    the bytes of a shared library. With `constants_path` (the arrays of its constant inputs),
    the library is the kernel inside a model that passes those constants (`_build_model`) and
    takes only the other inputs."""
    from dlc.codegen.llvm import emit_llvm_ir
    from dlc.dialects.contracts import TARGET_ATTR
    from dlc.driver.export import export_shared_library
    from dlc.rewrites import get_all_passes
    from dlc.rewrites.tuning.apply import run_script
    from dlc.rewrites.tuning.workload import make_context, parse_module
    from xdsl.dialects.builtin import StringAttr
    from xdsl.passes import PassPipeline

    try:
        ctx = make_context()
        module = parse_module(kernel_text, ctx)
        resolved = resolve_cpu_target(target)
        module.attributes[TARGET_ATTR] = StringAttr(str(resolved))
        if script is not None:
            run_script(module, script, ctx)
        if constants_path is not None:
            return _build_model(module, constants_path, default_schedule, opt_level,
                                str(resolved))
        passes = get_all_passes()
        spec = "convert-loop-to-llvm"
        if default_schedule and "loop-default-schedule" in passes:
            spec = "loop-default-schedule," + spec
        PassPipeline.parse_spec(passes, spec).apply(ctx, module)
        llvm_ir = emit_llvm_ir(module)
        with tempfile.TemporaryDirectory(prefix="dlc-build-") as scratch:
            path = export_shared_library(llvm_ir, Path(scratch) / "kernel.so", opt_level,
                                         resolved)
            return path.read_bytes()
    except Exception as error:  # noqa: BLE001 - every failure is this trial's build error
        raise _TrialFailure("build", _one_line(error)) from None


def _one_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    return text if len(text) < 2000 else text[:2000] + "..."


class LoadedKernel:
    """A kernel loaded from library bytes, called through ctypes with one pointer per buffer."""

    def __init__(self, library: bytes, scratch: Path) -> None:
        from dlc.runtime.executable import Executable
        from dlc.runtime.library import load_library

        path = scratch / f"kernel-{os.getpid()}-{time.monotonic_ns()}.so"
        path.write_bytes(library)
        self.library = load_library(path)
        self.executable = Executable(self.library)
        arity = len(self.executable.signature.arguments)
        prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * arity))
        self.function = prototype(self.library.address(self.executable.name))

    def outputs(self) -> list[np.ndarray]:
        return [
            np.full(spec.shape, np.nan, dtype=np.dtype(spec.dtype))
            if np.dtype(spec.dtype).kind == "f" else np.zeros(spec.shape, np.dtype(spec.dtype))
            for spec in self.executable.signature.outputs
        ]

    def call(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        self.function(*(a.ctypes.data for a in (*inputs, *outputs)))


def _load_arrays(path: str) -> list[np.ndarray]:
    with np.load(path) as data:
        return [np.ascontiguousarray(data[f"a{i}"]) for i in range(len(data.files))]


def run_library(library: bytes, inputs_path: str, reference_path: str | None,
                options: MeasureOptions, write_reference: bool = False) -> list[float]:
    """Load a kernel, run it on the saved inputs, check it against the reference outputs (or
    write them, for the default schedule), then time it; returns seconds per run."""
    with tempfile.TemporaryDirectory(prefix="dlc-run-") as scratch:
        try:
            kernel = LoadedKernel(library, Path(scratch))
        except Exception as error:  # noqa: BLE001
            raise _TrialFailure("run", _one_line(error)) from None
        inputs = _load_arrays(inputs_path)
        outputs = kernel.outputs()
        start = time.perf_counter()
        kernel.call(inputs, outputs)
        first = time.perf_counter() - start
        if write_reference:
            assert reference_path is not None
            np.savez(reference_path, **{f"a{i}": a for i, a in enumerate(outputs)})
        elif reference_path is not None:
            _check_outputs(outputs, _load_arrays(reference_path), options)
        flush = _cache_flusher(last_level_cache_bytes(options)) if options.flush_caches else None
        number = 1 if flush is not None else max(
            1, math.ceil(options.min_repeat_ms / 1000 / max(first, 1e-9)))
        budget = options.run_timeout / 3
        repeat = max(1, min(options.repeat, int(budget / max(first * number, 1e-9))))
        costs: list[float] = []
        for _ in range(repeat):
            if flush is not None:
                flush += 1  # every cache line written: the kernel's data is evicted
            start = time.perf_counter()
            for _ in range(number):
                kernel.call(inputs, outputs)
            costs.append((time.perf_counter() - start) / number)
        return costs


def last_level_cache_bytes(options: MeasureOptions) -> int:
    """The last-level cache (L3, else L2) of the target the runner runs on."""
    target = resolve_cpu_target(options.target, options.num_threads)
    return target.l3_bytes or target.l2_bytes or 0


@functools.cache
def _cache_flusher(cache_bytes: int) -> np.ndarray:
    """A buffer twice the size of a last-level cache of `cache_bytes`: made once per worker
    process, which runs many trials."""
    return np.zeros(2 * cache_bytes // 8, np.float64)


def _check_outputs(outputs: Sequence[np.ndarray], reference: Sequence[np.ndarray],
                   options: MeasureOptions) -> None:
    for index, (got, want) in enumerate(zip(outputs, reference, strict=True)):
        if got.shape != want.shape:
            raise _TrialFailure(
                "wrong", f"output {index}: shape {got.shape}, expected {want.shape}"
            )
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        atol = options.atol * max(1.0, scale)
        if np.isnan(got).any() and not np.isnan(want).any():
            raise _TrialFailure("wrong", f"output {index}: NaN (unwritten or invalid) elements")
        if not np.allclose(got, want, rtol=options.rtol, atol=atol, equal_nan=True):
            error = float(np.max(np.abs(got.astype(np.float64) - want)))
            raise _TrialFailure(
                "wrong", f"output {index}: max abs error {error:.3g} against the default schedule "
                f"(atol {atol:.3g}, rtol {options.rtol})"
            )


_FUNCTIONS: dict[str, Callable[..., Any]] = {"build": build_library, "run": run_library}

Outcome = tuple[str, Any] | tuple[str, str, str]
"""("ok", value) or ("error", kind, message)."""


def call_request(name: str, args: tuple[Any, ...]) -> Outcome:
    """Runs one request (`build` or `run`) and returns its outcome as plain data: ("ok",
    value) or ("error", kind, message)."""
    try:
        return ("ok", _FUNCTIONS[name](*args))
    except _TrialFailure as failure:
        return ("error", failure.kind, str(failure))
    except Exception as error:  # noqa: BLE001 - reported to the parent as this trial's error
        return ("error", "run" if name == "run" else "build",
                _one_line(error) + "\n" + traceback.format_exc(limit=3))


def serve(requests: Connection, answers: Connection) -> None:
    """A worker's loop: answer each request until the pipe closes."""
    while True:
        try:
            name, args = requests.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        answers.send(call_request(name, args))


# ----------------------------------------------------------------------------------------------
# Worker processes
# ----------------------------------------------------------------------------------------------

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The directory holding the `autotune` package (and dlc's others)."""


def checkout_pythonpath() -> str:
    """The PYTHONPATH for worker processes (local or Ray's): this checkout first, so that they
    import its packages even when they are not installed (a tool run from a checkout puts them
    on its own sys.path only), then the caller's."""
    return os.pathsep.join(p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH")) if p)


class _Worker:
    """One worker process (`python -m dlc.autotune.worker`), restarted after it crashes or is
    killed for a timeout."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.requests: Connection | None = None
        self.conn: Connection | None = None

    def start(self) -> None:
        child_read, parent_write = os.pipe()
        parent_read, child_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dlc.autotune.worker", str(child_read), str(child_write)],
            pass_fds=(child_read, child_write),
            env={**os.environ, "PYTHONPATH": checkout_pythonpath(), **self.env},
            stdin=subprocess.DEVNULL,
        )
        os.close(child_read)
        os.close(child_write)
        self.requests = Connection(parent_write, readable=False)
        self.conn = Connection(parent_read, writable=False)

    def ensure(self) -> Connection:
        if self.process is None or self.process.poll() is not None:
            self.stop()
            self.start()
        assert self.requests is not None
        return self.requests

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(timeout=10)
        for conn in (self.requests, self.conn):
            if conn is not None:
                conn.close()
        self.process, self.requests, self.conn = None, None, None

    def collect(self) -> Outcome:
        """The answer to the request in flight (the worker is known to have answered or died)."""
        assert self.conn is not None and self.process is not None
        try:
            return self.conn.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):
            code = self.process.wait(timeout=10)
            self.stop()
            return ("error", "crash", f"worker died with exit code {code}" + _signal_name(code))


def _signal_name(code: int | None) -> str:
    if code is None or code >= 0:
        return ""
    import signal

    try:
        return f" ({signal.Signals(-code).name})"
    except ValueError:
        return ""


class WorkerPool:
    """Worker processes that answer requests, each with a timeout; a crash or a timeout costs
    only that request (the worker is restarted for the next one)."""

    def __init__(self, size: int, env: dict[str, str] | None = None) -> None:
        self.workers = [_Worker(dict(env or {})) for _ in range(max(1, size))]

    def map(self, requests: Sequence[tuple[str, tuple[Any, ...]]], timeout: float
            ) -> list[Outcome]:
        """Answers every request (in parallel over the workers), in request order."""
        results: list[Outcome | None] = [None] * len(requests)
        pending = list(range(len(requests)))[::-1]
        busy: dict[int, tuple[int, float]] = {}
        while pending or busy:
            for w, worker in enumerate(self.workers):
                if w not in busy and pending:
                    index = pending.pop()
                    conn = worker.ensure()
                    conn.send(requests[index])
                    busy[w] = (index, time.monotonic() + timeout)
            conns = {self.workers[w].conn: w for w in busy}
            nearest = min(deadline for _, deadline in busy.values())
            ready = multiprocessing.connection.wait(
                [c for c in conns if c is not None], max(0.0, nearest - time.monotonic())
            )
            for conn in ready:
                w = conns[conn]  # type: ignore[index]
                index, _ = busy.pop(w)
                results[index] = self.workers[w].collect()
            now = time.monotonic()
            for w, (index, deadline) in list(busy.items()):
                if now >= deadline:
                    self.workers[w].stop()
                    busy.pop(w)
                    results[index] = ("error", "timeout", f"no answer within {timeout:.0f} s")
        return [r for r in results if r is not None]

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()


# ----------------------------------------------------------------------------------------------
# Backends: where builds and runs happen
# ----------------------------------------------------------------------------------------------


class Backend(Protocol):
    """Builds and runs requests; the local pool and the Ray runner implement it."""

    def build(self, requests: Sequence[tuple[Any, ...]], timeout: float) -> list[Outcome]:
        """`build_library(*request)` for each request."""
        ...

    def run(self, requests: Sequence[tuple[Any, ...]], timeout: float) -> list[Outcome]:
        """`run_library(*request)` for each request, one at a time."""
        ...

    def close(self) -> None:
        ...


class LocalBackend:
    """Builders and a runner as local worker processes."""

    def __init__(self, options: MeasureOptions) -> None:
        single = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        threads = str(options.num_threads)
        self.builders = WorkerPool(options.n_parallel, single)
        self.runner = WorkerPool(1, {"OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads})

    def build(self, requests: Sequence[tuple[Any, ...]], timeout: float) -> list[Outcome]:
        return self.builders.map([("build", r) for r in requests], timeout)

    def run(self, requests: Sequence[tuple[Any, ...]], timeout: float) -> list[Outcome]:
        return self.runner.map([("run", r) for r in requests], timeout)

    def close(self) -> None:
        self.builders.close()
        self.runner.close()


# ----------------------------------------------------------------------------------------------
# The measurer
# ----------------------------------------------------------------------------------------------


def reference_is_default() -> bool:
    """Whether candidates are checked against the default schedule (`loop-default-schedule`
    exists), else against the untuned kernel."""
    from dlc.rewrites import get_all_passes

    return "loop-default-schedule" in get_all_passes()


def random_inputs(workload: Workload, seed: int) -> list[np.ndarray]:
    """Seeded random inputs for a workload's input arguments (uniform in [-1, 1) for floats)."""
    from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
    from dlc.rewrites.tuning.workload import kernel_function_of
    from xdsl.dialects.builtin import MemRefType

    func = kernel_function_of(workload.module())
    attr = func.attributes[NUM_OUTPUTS_ATTR]
    num_outputs = int(attr.value.data)  # type: ignore[attr-defined]
    args = func.body.block.args
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for arg in args[: len(args) - num_outputs]:
        memref = arg.type
        assert isinstance(memref, MemRefType)
        shape = tuple(memref.get_shape())
        element = str(memref.element_type)
        if element.startswith("f"):
            dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(element)
            arrays.append(rng.uniform(-1, 1, shape).astype(dtype or np.float32))
        elif element == "i1":
            arrays.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            bits = int(element.lstrip("iu") or 32)
            dtype = np.dtype(f"int{bits}") if bits in (8, 16, 32, 64) else np.dtype(np.int32)
            arrays.append(rng.integers(0, 8, shape).astype(dtype))
    return arrays


class Measurer:
    """Measures candidates of workloads: references first, then builds and timed runs.

    Attributes:
        target: the CPU candidates are built for (`options.target` resolved once: `host` with
            `options.num_threads` threads); the tuning records name it.
    """

    def __init__(self, options: MeasureOptions | None = None, backend: Backend | None = None,
                 workdir: str | Path | None = None) -> None:
        self.options = options or MeasureOptions()
        self.target = resolve_cpu_target(self.options.target, self.options.num_threads)
        self.backend: Backend = backend or LocalBackend(self.options)
        self._tempdir = None
        if workdir is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix="dlc-tune-")
            workdir = self._tempdir.name
        self.workdir = Path(workdir)
        self._prepared: dict[str, tuple[str, str, str | None]] = {}

    def close(self) -> None:
        self.backend.close()
        if self._tempdir is not None:
            self._tempdir.cleanup()

    def __enter__(self) -> Measurer:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def prepare(self, workload: Workload) -> None:
        """Writes the workload's inputs (its constant inputs apart: builders bake them in) and,
        from the default schedule (`reference_is_default`), its reference outputs."""
        if workload.key in self._prepared:
            return
        directory = self.workdir / workload.key
        directory.mkdir(parents=True, exist_ok=True)
        inputs_path = directory / "inputs.npz"
        reference_path = directory / "reference.npz"
        arrays = random_inputs(workload, self.options.seed)
        constant = workload.constant_inputs
        np.savez(inputs_path, **{f"a{i}": a for i, a in enumerate(
            a for index, a in enumerate(arrays) if index not in constant)})
        constants_path = None
        if constant:
            constants_path = str(directory / "constants.npz")
            np.savez(constants_path, **{f"a{i}": arrays[index] for i, index in
                                        enumerate(constant)})
        default = reference_is_default()
        what = "default schedule" if default else "untuned kernel"
        (build,) = self.backend.build(
            [(workload.text, None, default, self.options.opt_level, constants_path,
              str(self.target))],
            self.options.build_timeout,
        )
        if build[0] != "ok":
            raise MeasureError(f"the {what} of {workload.name} does not build: {build[-1]}")
        options = self.options
        (run,) = self.backend.run(
            [(build[1], str(inputs_path), str(reference_path), options, True)],
            max(options.run_timeout, BASELINE_RUN_TIMEOUT),
        )
        if run[0] != "ok":
            raise MeasureError(f"the {what} of {workload.name} does not run: {run[-1]}")
        self._prepared[workload.key] = (str(inputs_path), str(reference_path), constants_path)

    def measure(self, workload: Workload, candidates: Sequence[Candidate],
                run_timeout: float | None = None) -> list[MeasureResult]:
        """Builds the candidates (in parallel), then runs each one at a time (`run_timeout`
        overrides the options' for these runs: the untuned kernel may be slow)."""
        return self.measure_rounds(workload, candidates, 1, run_timeout)[0]

    def measure_rounds(self, workload: Workload, candidates: Sequence[Candidate], rounds: int,
                       run_timeout: float | None = None) -> list[list[MeasureResult]]:
        """Builds the candidates once, then runs all of them `rounds` times, one at a time and
        in the same order each round (so that each round sees one moment of machine load):
        one list of results per round. A candidate that fails to build fails in every round;
        one that fails to run is not run again."""
        self.prepare(workload)
        inputs_path, reference_path, constants_path = self._prepared[workload.key]
        options = self.options
        if run_timeout is not None:
            options = dataclasses.replace(options, run_timeout=run_timeout)
        start = time.monotonic()
        builds = self.backend.build(
            [(c.kernel_text or workload.text, c.script, c.default_schedule, options.opt_level,
              constants_path, str(self.target)) for c in candidates],
            options.build_timeout,
        )
        build_s = (time.monotonic() - start) / max(1, len(candidates))
        failed: dict[int, MeasureResult] = {
            index: MeasureResult([], outcome[1], outcome[2], build_s)
            for index, outcome in enumerate(builds) if outcome[0] != "ok"
        }
        measured: list[list[MeasureResult]] = []
        for _ in range(rounds):
            results: list[MeasureResult] = []
            for index, outcome in enumerate(builds):
                if index in failed:
                    results.append(failed[index])
                    continue
                start = time.monotonic()
                (run,) = self.backend.run(
                    [(outcome[1], inputs_path, reference_path, options, False)],
                    options.run_timeout,
                )
                run_s = time.monotonic() - start
                if run[0] == "ok":
                    results.append(MeasureResult(list(run[1]), None, None, build_s, run_s))
                else:
                    failed[index] = MeasureResult([], run[1], run[2], build_s, run_s)
                    results.append(failed[index])
            measured.append(results)
        return measured
