"""The `host` target: the description of the machine this process runs on (TVM's
`tvm.target.Target("llvm -mcpu=native")`, LLVM's `-mcpu=native`).

Only the driver (and a tool, when the user asks for `--target=host`) calls `host()`: passes and
emitters read the target they are given, so that their output never depends on the machine they
run on.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from dlc.target.cpu import ARCH_FEATURES, ARCHES, KNOWN_CPUS, CpuInfo, CpuTarget, TargetError


@dataclass(frozen=True)
class HostCpu:
    """What the host reports: LLVM's view of its CPU and Linux's of its caches.

    Attributes:
        triple: the process triple (`x86_64-unknown-linux-gnu`).
        cpu: LLVM's name for the host CPU (`znver3`, `emeraldrapids`).
        features: every feature LLVM knows of, and whether the host has it.
        caches: data or unified cache sizes by level (1, 2, 3) as sysfs reports them.
    """

    triple: str
    cpu: str
    features: dict[str, bool]
    caches: dict[int, int]


def detect_host_cpu() -> HostCpu:
    """Ask llvmlite and sysfs about the host (the only place dlc does)."""
    import llvmlite.binding as binding

    binding.initialize_native_target()
    return HostCpu(
        binding.get_process_triple(),
        binding.get_host_cpu_name(),
        dict(binding.get_host_cpu_features()),
        sysfs_cache_sizes(),
    )


def sysfs_cache_sizes(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> dict[int, int]:
    """CPU 0's data and unified cache sizes by level, as Linux reports them (empty elsewhere)."""
    sizes: dict[int, int] = {}
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            if (index / "type").read_text().strip() == "Instruction":
                continue
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if text[-1:] in units and text[:-1].isdigit():
            sizes[level] = int(text[:-1]) * units[text[-1]]
        elif text.isdigit():
            sizes[level] = int(text)
    return sizes


def host_target(reported: HostCpu, threads: int) -> CpuTarget:
    """The description of a host that reports `reported`, running parallel loops on `threads`.

    A CPU of the table keeps its name, and `-mattr` lists what the host has beyond the table's
    features and every feature it lacks (a virtual machine may hide some the CPU name implies);
    another CPU is described as its architecture's generic CPU plus every feature it has. Only
    the features `-mattr` accepts (`ARCH_FEATURES`) are listed: a newer LLVM may report more.
    """
    arch = ARCHES.get(reported.triple.split("-", 1)[0])
    if arch is None:
        raise TargetError(
            f"expected a host of architecture {' or '.join(ARCHES)}, found '{reported.triple}'"
        )
    info = KNOWN_CPUS.get(reported.cpu)
    if info is None or info.arch != arch.name:
        info = KNOWN_CPUS[arch.generic_cpu]
    info = _newest_contained(info, reported)
    # What the host lacks first, then what it has beyond the table's: a feature the host has is
    # never turned off by one it lacks that needs it.
    features = sorted(
        (name, enabled) for name, enabled in reported.features.items()
        if name in ARCH_FEATURES[arch.name]
    )
    mattr = [f"-{name}" for name, enabled in features if not enabled]
    mattr += [f"+{name}" for name, enabled in features if enabled and name not in info.features]
    return CpuTarget(
        triple=reported.triple,
        cpu=info.name,
        mattr=tuple(mattr),
        threads=threads,
        l1d_bytes=reported.caches.get(1),
        l2_bytes=reported.caches.get(2),
        l3_bytes=reported.caches.get(3),
    )


SYSTEM_FEATURES = frozenset({"pku", "invpcid", "xsaves", "fsgsbase", "rdpid"})
"""Features of the table's CPUs that concern the operating system (memory protection keys,
TLB and context-switch instructions), not the code dlc emits: a hypervisor may hide them (seen
here: a Sapphire Rapids guest without `pku`), so they do not decide which CPU a host is."""


def _newest_contained(info: CpuInfo, reported: HostCpu) -> CpuInfo:
    """The known CPU of `info`'s architecture with the most features, every one of which the
    host has (`SYSTEM_FEATURES` aside), where it has more than `info`: a virtual machine may
    report an older model's number with a newer CPU's features (seen here: LLVM named a host
    `rocketlake`, a client part with one 512-bit FMA unit, that has AMX and issues two
    `vpdpbusd` per cycle, a Sapphire Rapids), and the FMA units and caches the schedules read
    come from the name."""
    have = {name for name, enabled in reported.features.items() if enabled} | SYSTEM_FEATURES
    best = info
    for candidate in KNOWN_CPUS.values():
        if (candidate.arch == info.arch and candidate.features <= have
                and len(candidate.features) > len(best.features)):
            best = candidate
    return best


@functools.cache
def _host_cpu() -> HostCpu:
    return detect_host_cpu()


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def host(threads: int | None = None) -> CpuTarget:
    """The machine this process runs on, with `threads` threads for parallel loops (default:
    every core it may use). The host is asked once per process."""
    return host_target(_host_cpu(), usable_cores() if threads is None else threads)
