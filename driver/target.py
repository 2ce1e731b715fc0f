"""The driver's one place that resolves `host`: a target string as the user gave it -> the
description every pass, the emitter and LLVM's TargetMachine then read (TVM's
`Target.current()` resolution of `llvm -mcpu=native`).

The driver resolves the target once per compile and writes it on the module as `dlc.target`
before the pipeline runs, so that no pass ever asks the machine it runs on.
"""

from __future__ import annotations

import os
from dataclasses import replace

from dlc.driver.errors import CompileError
from dlc.target import HOST, CpuTarget, Target, TargetError, host, parse_target

THREADS_VARIABLE = "DLC_NUM_THREADS"
"""The environment variable giving the threads of parallel loops when a compile asks for 0
(`dlc.compile(threads=0)`, `dlc compile` without `--threads`)."""


def default_threads() -> int:
    """The thread count `DLC_NUM_THREADS` gives, 0 where it is unset or empty. A value that is
    not a positive integer is a `CompileError`."""
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if not text:
        return 0
    if not text.isdigit() or int(text) < 1:
        raise CompileError(
            f"expected {THREADS_VARIABLE} to be a number of threads (an integer >= 1), "
            f"found '{text}'"
        )
    return int(text)


def resolve_target(text: str, threads: int = 0) -> Target:
    """The description of `text`: `host` (this machine, with `threads` threads; if 0,
    `DLC_NUM_THREADS`, else all its usable cores) or a target string (with `threads` replacing
    its `-num-cores` unless 0; a string without `-num-cores` takes `DLC_NUM_THREADS` where
    set). A malformed string is a `CompileError`."""
    try:
        if text.strip() == HOST:
            return host(threads or default_threads() or None)
        target = parse_target(text)
    except TargetError as e:
        raise CompileError(f"invalid target '{text}': {e}") from None
    if isinstance(target, CpuTarget):
        threads = threads or (0 if target.threads else default_threads())
        if threads:
            return replace(target, threads=threads)
    return target


def resolve_cpu_target(text: str, threads: int = 0) -> CpuTarget:
    """`resolve_target` for a CPU: a GPU target is a `CompileError`."""
    target = resolve_target(text, threads)
    if not isinstance(target, CpuTarget):
        raise CompileError(f"expected a CPU target (host or llvm ...), found '{text}'")
    return target
