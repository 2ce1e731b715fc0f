"""What the default CPU schedule rules read: the target's numbers (from its description, never
literals in a rule) and the rules' own knobs."""

from __future__ import annotations

from dataclasses import dataclass

from dlc.target import CpuTarget
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
    """What the rules need to know about the CPU and how far to go. Build one from a target
    description with `CpuConfig.for_target`.

    Attributes:
        vector_bits: width of a vector register (the target's: 512 with AVX-512).
        threads: the threads parallel loops will run on (1: no loop is made parallel; 0: all the
            cores found at run time).
        max_accumulators: vector registers a micro-kernel may hold its tile in (three
            quarters of the target's register file: 24 of AVX-512's 32, 12 of AVX2's 16; the
            rest hold the reused vectors and a broadcast).
        l2_bytes: the per-core L2 cache: GEMM's packed B panels are grouped so that a group
            takes half of it.
        fma_units, fma_latency: vector FMAs a core issues per cycle and the cycles until an
            FMA's result can be used (2 and 4 on Zen 3, Skylake and later): a micro-kernel
            needs `fma_units * fma_latency` independent accumulators to keep them busy.
        max_rows: the largest number of rows of a micro-kernel tile. 8 rows of a row-major
            operand whose rows are 4 KiB apart share one set of an 8-way L1 cache: more rows
            thrash it (12 rows ran 35% slower here than 8).
        min_vector_extent: the smallest innermost extent worth vectorizing.
        pack: pack GEMM-like vector operands (B) into panels.
        pack_rows: also pack GEMM's broadcast operand (A) into row panels (a scalar copy that
            costs more than it saves at 8 rows).
        features: the target's features (LLVM's names): rules that emit tensor intrinsics
            (the VNNI int8 GEMM) apply only when the target has what they need.
    """

    vector_bits: int
    threads: int
    max_accumulators: int
    l2_bytes: int
    fma_units: int
    fma_latency: int
    max_rows: int = 8
    min_vector_extent: int = 4
    pack: bool = True
    pack_rows: bool = False
    features: frozenset[str] = frozenset()

    @classmethod
    def for_target(
        cls,
        target: CpuTarget,
        *,
        threads: int = 0,
        vector_bits: int = 0,
        l2_bytes: int = 0,
        max_accumulators: int = 0,
        **knobs: int | bool,
    ) -> CpuConfig:
        """The configuration for `target`; each of `threads`, `vector_bits`, `l2_bytes` and
        `max_accumulators` overrides the target's number unless 0. `knobs` are the other
        fields (`max_rows`, `pack`, ...)."""
        return cls(
            vector_bits=vector_bits or target.vector_bits,
            threads=threads or target.threads,
            max_accumulators=max_accumulators or target.vector_registers * 3 // 4,
            l2_bytes=l2_bytes or target.l2_bytes or 0,
            fma_units=target.fma_units,
            fma_latency=target.fma_latency,
            features=target.features,
            **knobs,  # type: ignore[arg-type]
        )

    @property
    def parallel(self) -> bool:
        """Whether parallel loops are made (more than one thread, or all the cores)."""
        return self.threads != 1

    def lanes(self, element: object) -> int:
        """Lanes of one vector of `element` (16 for f32 with 512-bit vectors)."""
        return max(1, self.vector_bits // _bits(element))


def element_bytes(element: object) -> int:
    """Bytes of one element of type `element` (at least 1)."""
    return max(1, _bits(element) // 8)


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


def element_of(type_: Attribute) -> Attribute:
    """The element type of a memref (or the type itself)."""
    get = getattr(type_, "get_element_type", None)
    return get() if get is not None else type_
