"""The driver's one place that resolves `host`: a target string as the user gave it -> the
description every pass, the emitter and LLVM's TargetMachine then read (TVM's
`Target.current()` resolution of `llvm -mcpu=native`).

The driver resolves the target once per compile and writes it on the module as `dlc.target`
before the pipeline runs, so that no pass ever asks the machine it runs on.
"""

from __future__ import annotations

from dataclasses import replace

from dlc.driver.errors import CompileError
from dlc.target import HOST, CpuTarget, Target, TargetError, host, parse_target


def resolve_target(text: str, threads: int = 0) -> Target:
    """The description of `text`: `host` (this machine, with `threads` threads, default all
    its usable cores) or a target string (with `threads` replacing its `-num-cores` unless 0).
    A malformed string is a `CompileError`."""
    try:
        if text.strip() == HOST:
            return host(threads or None)
        target = parse_target(text)
    except TargetError as e:
        raise CompileError(f"invalid target '{text}': {e}") from None
    if isinstance(target, CpuTarget) and threads:
        return replace(target, threads=threads)
    return target


def resolve_cpu_target(text: str, threads: int = 0) -> CpuTarget:
    """`resolve_target` for a CPU: a GPU target is a `CompileError`."""
    target = resolve_target(text, threads)
    if not isinstance(target, CpuTarget):
        raise CompileError(f"expected a CPU target (host or llvm ...), found '{text}'")
    return target
