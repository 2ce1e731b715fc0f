"""What the tuner knows about the machine it tunes for, as data (tinygrad's `Opts`, TVM's Target).

Search spaces read these numbers to reject points cheaply (a vector width the registers do not
have, a register tile larger than the register file); the tuning log records `key` so that a
record is only applied on the machine kind it was measured on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class CpuTarget:
    """A host CPU as the tuner sees it.

    Attributes:
        cpu: LLVM's CPU name (`znver4`, `skylake-avx512`, ...).
        vector_bits: the widest vector register, in bits (512 with AVX-512).
        vector_registers: how many vector registers the ISA has (32 with AVX-512, else 16).
        num_threads: the threads a parallel loop runs on (the runner's OMP_NUM_THREADS).
        l1_bytes, l2_bytes: data cache sizes per core.
        max_unroll: the largest body replication a schedule may ask for (IR size).
    """

    cpu: str
    vector_bits: int
    vector_registers: int
    num_threads: int
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    max_unroll: int = 256

    def lanes(self, element_bytes: int = 4) -> int:
        """Elements of `element_bytes` in one vector register."""
        return max(1, self.vector_bits // (8 * element_bytes))

    @property
    def key(self) -> str:
        """The target string written into tuning records (`llvm -mcpu=znver4 -threads=2`)."""
        return f"llvm -mcpu={self.cpu} -threads={self.num_threads}"


def host_cpu_target(num_threads: int | None = None) -> CpuTarget:
    """The CPU this process runs on; `num_threads` defaults to the usable cores."""
    from dlc.codegen.llvm import host_target

    host = host_target()
    threads = num_threads if num_threads is not None else len(os.sched_getaffinity(0))
    return CpuTarget(host.cpu, host.vector_width, host.vector_registers, max(1, threads))
