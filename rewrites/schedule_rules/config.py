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
        max_rows: the largest number of rows of a micro-kernel tile, but for a GEMM's over a
            weight packed at compile time (`max_gemm_rows`). A kernel that unrolls a window (a
            3x3 conv) spills its tile with 10 or more rows (LLVM's schedule of the unrolled
            steps: 1.6-1.9x slower on a Sapphire Rapids); a 1x1 conv's packs its activation at
            run time, and with 12 rows DeepLabV3's read 2-5% slower each (whole model
            11.9-12.4 -> 12.3-12.8 ms) while MobileNetV2's read 2% faster.
        max_gemm_rows: the largest number of rows of a GEMM tile over a weight packed at
            compile time (its vector operand a constant, packed into panels; a reduction that
            reads each operand at one point per step): each row tile streams the panels from
            L2, so more rows stream them fewer times. Its MR rows of a row-major A lie a row
            apart, all in one L1 set when that is a multiple of 4 KiB: more rows than the L1
            has ways thrash it (the measurement behind the old fixed cap of 8, taken for an
            8-way L1: 12 rows 35% slower than 8). The target's: the ways of its L1 at that
            stride (`l1_ways_at_4k`), at least `max_rows`. On a 48 KiB, 12-way L1 (Sapphire
            Rapids), 12 rows against 8, MatMul + ReLU with a constant B, three alternations
            of separate processes, ms: 2 threads 512^3 0.91-0.93 -> 0.88-0.92, 1024^3
            6.88-7.05 -> 6.60-6.79, 169x512x1000 0.63 -> 0.58, 196x1024x256 0.355 -> 0.333;
            1 thread 512^3 1.69-1.70 -> 1.60-1.65.
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
    max_gemm_rows: int = 8
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
        max_rows: int = 0,
        **knobs: int | bool,
    ) -> CpuConfig:
        """The configuration for `target`; each of `threads`, `vector_bits`, `l2_bytes`,
        `max_accumulators` and `max_rows` overrides the target's number unless 0 (a `max_rows`
        given caps every tile: `max_gemm_rows` too). `knobs` are the other fields (`pack`,
        ...)."""
        rows = max_rows or cls.max_rows
        return cls(
            vector_bits=vector_bits or target.vector_bits,
            threads=threads or target.threads,
            max_accumulators=max_accumulators or target.vector_registers * 3 // 4,
            max_rows=rows,
            max_gemm_rows=max_rows or max(rows, l1_ways_at_4k(target)),
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


def l1_ways_at_4k(target: CpuTarget) -> int:
    """How many lines 4 KiB apart the target's L1 data cache holds at once: its ways, on x86
    (every x86 core since Nehalem indexes its L1 with 64 sets of 64-byte lines, so its ways
    are its size over 4 KiB: 8 of a 32 KiB L1, 12 of a 48 KiB one); 0 where that is not known
    (other architectures, or no L1 size)."""
    if target.arch != "x86_64" or not target.l1d_bytes:
        return 0
    return target.l1d_bytes // 4096


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
