"""Target strings, TVM/LLVM style: `llvm -mcpu=znver3 -num-cores=2`, `cuda -arch=sm_90`, `opencl`.

Grammar (flags in any order, each at most once, separated by spaces):

    target     ::= cpu-target | cuda-target | "opencl"
    cpu-target ::= "llvm" { cpu-flag }
    cpu-flag   ::= "-mtriple=" TRIPLE          Linux triple of x86_64 or aarch64
                 | "-mcpu=" CPU                 a CPU of KNOWN_CPUS
                 | "-mattr=" CHANGE { "," CHANGE }    CHANGE ::= ("+" | "-") FEATURE
                                                FEATURE: of ARCH_FEATURES[the CPU's architecture]
                 | "-num-cores=" INT            threads of parallel loops (0: all at run time)
                 | "-l1d-bytes=" INT | "-l2-bytes=" INT | "-l3-bytes=" INT
    cuda-target ::= "cuda" [ "-arch=" SM ]      SM: a key of CUDA_ARCHES (default sm_80)

`llvm` alone is the generic `x86-64` (SSE2). `host` is not a target string: only the driver
resolves it (`target.host()`), once, into the string of the machine it runs on.
"""

from __future__ import annotations

from dlc.target.cpu import CpuTarget, TargetError
from dlc.target.gpu import DEFAULT_CUDA_ARCH, OPENCL, GpuTarget, cuda_target

Target = CpuTarget | GpuTarget
"""A target description."""

HOST = "host"
"""The keyword for the machine the compiler runs on (resolved by `target.host()` only)."""

KINDS = ("llvm", "cuda", "opencl")
"""The target kinds, the first word of a target string."""

_CPU_FLAGS = ("mtriple", "mcpu", "mattr", "num-cores", "l1d-bytes", "l2-bytes", "l3-bytes")
_GPU_FLAGS: dict[str, tuple[str, ...]] = {"cuda": ("arch",), "opencl": ()}


def parse_target(text: str) -> Target:
    """The description a target string names; a `TargetError` says what was expected where it
    is malformed."""
    words = text.split()
    if not words or words[0] not in KINDS:
        found = words[0] if words else ""
        if found == HOST:
            raise TargetError(
                f"expected a target ({', '.join(KINDS)}), found '{HOST}': the host is resolved "
                "only by the driver (dlc.compile, dlc compile) and by dlc-opt (--dlc-target=host, "
                "target=host)"
            )
        raise TargetError(f"expected a target kind ({', '.join(KINDS)}), found '{found}'")
    kind, flags = words[0], _flags(words[0], words[1:])
    if kind == "llvm":
        return _cpu_target(flags)
    if kind == "cuda":
        return cuda_target(flags.get("arch", DEFAULT_CUDA_ARCH))
    return OPENCL


def parse_cpu_target(text: str) -> CpuTarget:
    """The CPU description a target string names (it must be an `llvm` target)."""
    target = parse_target(text)
    if not isinstance(target, CpuTarget):
        raise TargetError(f"expected a CPU target (llvm ...), found '{text}'")
    return target


def parse_gpu_target(text: str) -> GpuTarget:
    """The GPU description a target string names (a `cuda` or `opencl` target)."""
    target = parse_target(text)
    if not isinstance(target, GpuTarget):
        raise TargetError(f"expected a GPU target (cuda ..., opencl), found '{text}'")
    return target


def _flags(kind: str, words: list[str]) -> dict[str, str]:
    known = _CPU_FLAGS if kind == "llvm" else _GPU_FLAGS[kind]
    flags: dict[str, str] = {}
    for word in words:
        name, equals, value = word.removeprefix("-").partition("=")
        if not word.startswith("-") or name not in known:
            listed = ", ".join(f"-{flag}" for flag in known) or "none"
            raise TargetError(f"expected a flag of {kind} ({listed}), found '{word}'")
        if not equals or not value:
            raise TargetError(f"expected -{name}=VALUE, found '{word}'")
        if name in flags:
            raise TargetError(f"expected -{name} at most once, found it twice")
        flags[name] = value
    return flags


def _count(flags: dict[str, str], name: str) -> int | None:
    value = flags.get(name)
    if value is None:
        return None
    if not value.isdigit():
        raise TargetError(f"expected a non-negative integer for -{name}, found '{value}'")
    return int(value)


def _cpu_target(flags: dict[str, str]) -> CpuTarget:
    mattr = flags.get("mattr")
    return CpuTarget(
        triple=flags.get("mtriple", ""),
        cpu=flags.get("mcpu", ""),
        mattr=tuple(mattr.split(",")) if mattr else (),
        threads=_count(flags, "num-cores") or 0,
        l1d_bytes=_count(flags, "l1d-bytes"),
        l2_bytes=_count(flags, "l2-bytes"),
        l3_bytes=_count(flags, "l3-bytes"),
    )
