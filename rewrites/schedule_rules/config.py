"""The target facts and knobs the default CPU schedule rules read (numbers that describe the
hardware are data here, never literals in a rule)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute


@dataclass(frozen=True)
class CpuConfig:
    """What the rules need to know about the CPU and how far to go.

    Attributes:
        vector_bits: width of a vector register (512 with AVX-512).
        threads: the threads parallel loops will run on (1: no loop is made parallel).
        max_accumulators: vector registers a micro-kernel may hold its tile in (three
            quarters of the register file: 24 of AVX-512's 32, 12 of AVX2's 16; the rest hold
            the reused vectors and a broadcast).
        max_rows: the largest number of rows of a micro-kernel tile. 8 rows of a row-major
            operand whose rows are 4 KiB apart share one set of an 8-way L1 cache: more rows
            thrash it (12 rows ran 35% slower here than 8).
        min_vector_extent: the smallest innermost extent worth vectorizing.
        pack: pack GEMM-like vector operands (B) into panels.
        pack_rows: also pack GEMM's broadcast operand (A) into row panels (a scalar copy that
            costs more than it saves at 8 rows).
        l2_bytes: the per-core L2 cache: GEMM's packed B panels are grouped so that a group
            takes half of it.
        fma_units, fma_latency: vector FMAs a core issues per cycle and the cycles until an
            FMA's result can be used (2 and 4 on Zen 3/4, Skylake and later): a micro-kernel
            needs `fma_units * fma_latency` independent accumulators to keep them busy.
    """

    vector_bits: int = 512
    threads: int = 1
    max_accumulators: int = 24
    max_rows: int = 8
    min_vector_extent: int = 4
    pack: bool = True
    pack_rows: bool = False
    l2_bytes: int = 1 << 20
    fma_units: int = 2
    fma_latency: int = 4

    def lanes(self, element: object) -> int:
        """Lanes of one vector of `element` (16 for f32 with 512-bit vectors)."""
        return max(1, self.vector_bits // _bits(element))


def _bits(element: object) -> int:
    if isinstance(element, Float32Type):
        return 32
    if isinstance(element, Float64Type):
        return 64
    if isinstance(element, Float16Type | BFloat16Type):
        return 16
    if isinstance(element, IntegerType):
        return max(8, element.width.data)
    if isinstance(element, IndexType):
        return 64
    return 32


def host_l2_bytes(default: int = 1 << 20) -> int:
    """The L2 cache size of CPU 0 as Linux reports it (sysfs), else `default`."""
    return host_cache_bytes(2, default)


def host_cache_bytes(level: int, default: int) -> int:
    """The size of CPU 0's unified or data cache at `level` as Linux reports it (sysfs), else
    `default`."""
    from pathlib import Path

    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            if (index / "level").read_text().strip() != str(level):
                continue
            if (index / "type").read_text().strip() == "Instruction":
                continue
            text = (index / "size").read_text().strip().upper()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20}
        if text[-1:] in units and text[:-1].isdigit():
            return int(text[:-1]) * units[text[-1]]
        if text.isdigit():
            return int(text)
    return default


def host_config(
    threads: int = 0, vector_bits: int = 0, **knobs: int | bool
) -> CpuConfig:
    """The configuration for this machine: `threads` 0 means all cores, `vector_bits` 0 the
    host's vector width (from LLVM's view of the host CPU), `l2_bytes` 0 (or absent) the
    host's L2 size, `max_accumulators` 0 (or absent) three quarters of the vector registers
    of an ISA with vectors that wide (24 with AVX-512, 12 with AVX2)."""
    from dlc.codegen.llvm import host_target, vector_registers

    if not knobs.get("l2_bytes"):
        knobs["l2_bytes"] = host_l2_bytes()
    if vector_bits <= 0:
        vector_bits = host_target().vector_width
    if not knobs.get("max_accumulators"):
        knobs["max_accumulators"] = vector_registers(vector_bits) * 3 // 4
    if threads <= 0:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1
        )
    return CpuConfig(vector_bits=vector_bits, threads=threads, **knobs)  # type: ignore[arg-type]


def element_of(type_: Attribute) -> Attribute:
    """The element type of a memref (or the type itself)."""
    get = getattr(type_, "get_element_type", None)
    return get() if get is not None else type_
