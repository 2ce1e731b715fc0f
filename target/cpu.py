"""CPU target descriptions as data: the CPUs dlc knows, their features, and what the schedules
and the LLVM lowering read (TVM's `llvm` target with `-mcpu`/`-mattr`/`-num-cores`, tinygrad's
`Renderer` fields).

A `CpuTarget` is a CPU of the table (`KNOWN_CPUS`) with features changed by `-mattr`, a thread
count and, where they differ from the table's, cache sizes. Everything else (vector width,
vector registers, FMA units, data layout) follows from those and is read as a property, so that
two descriptions are equal exactly when they generate the same code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

KIB = 1 << 10
MIB = 1 << 20


class TargetError(ValueError):
    """A target string or description is malformed (the message says what was expected and what
    was found)."""


# ----------------------------------------------------------------------------------------------
# Architectures
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arch:
    """What a target triple's architecture fixes.

    Attributes:
        name: the triple's first component (`x86_64`, `aarch64`).
        default_triple: the triple of a `-mcpu` given without `-mtriple`.
        generic_cpu: the CPU of a `-mtriple` given without `-mcpu`.
        data_layout: LLVM's data layout for the architecture on Linux (ELF).
    """

    name: str
    default_triple: str
    generic_cpu: str
    data_layout: str


ARCHES: dict[str, Arch] = {
    arch.name: arch
    for arch in (
        Arch(
            "x86_64", "x86_64-unknown-linux-gnu", "x86-64",
            "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128",
        ),
        Arch(
            "aarch64", "aarch64-unknown-linux-gnu", "generic",
            "e-m:e-p270:32:32-p271:32:32-p272:64:64-i8:8:32-i16:16:32-i64:64-i128:128-n32:64-S128"
            "-Fn32",
        ),
    )
}
"""The architectures dlc generates code for, by the triple's first component."""


# ----------------------------------------------------------------------------------------------
# Features
# ----------------------------------------------------------------------------------------------

FEATURE_REQUIRES: dict[str, tuple[str, ...]] = {
    # x86
    "sse2": ("sse",),
    "sse3": ("sse2",),
    "ssse3": ("sse3",),
    "sse4.1": ("ssse3",),
    "sse4.2": ("sse4.1",),
    "avx": ("sse4.2",),
    "avx2": ("avx",),
    "fma": ("avx",),
    "f16c": ("avx",),
    "vaes": ("avx", "aes"),
    "vpclmulqdq": ("avx", "pclmul"),
    "avxvnni": ("avx2",),
    "avx512f": ("avx2", "fma", "f16c"),
    "avx512bw": ("avx512f",),
    "avx512cd": ("avx512f",),
    "avx512dq": ("avx512f",),
    "avx512vl": ("avx512f",),
    "avx512vnni": ("avx512f",),
    "avx512ifma": ("avx512f",),
    "avx512vpopcntdq": ("avx512f",),
    "avx512vbmi": ("avx512bw",),
    "avx512vbmi2": ("avx512bw",),
    "avx512bitalg": ("avx512bw",),
    "avx512bf16": ("avx512bw",),
    "avx512fp16": ("avx512bw", "avx512dq", "avx512vl"),
    "amx-int8": ("amx-tile",),
    "amx-bf16": ("amx-tile",),
    "amx-fp16": ("amx-tile",),
    # aarch64
    "neon": ("fp-armv8",),
    "fullfp16": ("fp-armv8",),
    "dotprod": ("neon",),
    "i8mm": ("neon",),
    "sve": ("fullfp16", "neon"),
    "sve2": ("sve",),
}
"""The features each feature needs (LLVM's implications, for the features dlc reads): `+x`
enables what `x` needs, `-x` disables what needs `x`."""


ARCH_FEATURES: dict[str, frozenset[str]] = {
    "x86_64": frozenset((
        # What LLVM reports of an x86-64 host (llvmlite's get_host_cpu_features, LLVM 22) ...
        "64bit adx aes amx-avx512 amx-bf16 amx-complex amx-fp16 amx-fp8 amx-int8 amx-movrs "
        "amx-tf32 amx-tile avx avx10.1 avx10.2 avx2 avx512bf16 avx512bitalg avx512bw avx512cd "
        "avx512dq avx512f avx512fp16 avx512ifma avx512vbmi avx512vbmi2 avx512vl avx512vnni "
        "avx512vp2intersect avx512vpopcntdq avxifma avxneconvert avxvnni avxvnniint16 "
        "avxvnniint8 bmi bmi2 ccmp cf cldemote clflushopt clwb clzero cmov cmpccxadd crc32 cx16 "
        "cx8 egpr enqcmd f16c fma fma4 fsgsbase fxsr gfni hreset invpcid kl lwp lzcnt mmx movbe "
        "movdir64b movdiri movrs mwaitx ndd nf pclmul pconfig pku popcnt ppx prefetchi prfchw "
        "ptwrite push2pop2 raoint rdpid rdpru rdrnd rdseed rtm sahf serialize sgx sha sha512 "
        "shstk sm3 sm4 sse sse2 sse3 sse4.1 sse4.2 sse4a ssse3 tbm tsxldtrk uintr usermsr vaes "
        "vpclmulqdq waitpkg wbnoinvd widekl xop xsave xsavec xsaveopt xsaves zu "
        # ... and the vector-width preferences of its tuning features.
        "prefer-128-bit prefer-256-bit"
    ).split()),
    "aarch64": frozenset((
        # LLVM's AArch64 instruction-set features (llc -mtriple=aarch64-linux-gnu -mattr=help).
        "aes bf16 complxnum crc crypto dotprod f32mm f64mm flagm fp-armv8 fp16fml fullfp16 i8mm "
        "jsconv lse lse2 mte neon pauth rcpc rcpc-immo rdm sha2 sha3 sm4 ssbs sve sve2 "
        "sve2-bitperm v8.1a v8.2a v8.3a v8.4a v8.5a v8.6a v8.7a v9a"
    ).split()),
}
"""The features `-mattr` accepts, by architecture: LLVM's names of the instruction-set features
(LLVM knows more tuning features, which dlc does not take). A name outside its architecture's set
is an error that lists the set."""


def _closure(enabled: set[str], feature: str) -> None:
    if feature in enabled:
        return
    enabled.add(feature)
    for needed in FEATURE_REQUIRES.get(feature, ()):
        _closure(enabled, needed)


def _dependents(feature: str) -> set[str]:
    found = {feature}
    changed = True
    while changed:
        changed = False
        for name, needs in FEATURE_REQUIRES.items():
            if name not in found and found.intersection(needs):
                found.add(name)
                changed = True
    return found


def apply_mattr(base: frozenset[str], mattr: tuple[str, ...]) -> frozenset[str]:
    """The features of a CPU whose own are `base`, after the `+x`/`-x` changes of `mattr` in
    order (enabling a feature enables what it needs; disabling one disables what needs it)."""
    enabled = set(base)
    for change in mattr:
        name = change[1:]
        if change[0] == "+":
            _closure(enabled, name)
        else:
            enabled -= _dependents(name)
    return frozenset(enabled)


# ----------------------------------------------------------------------------------------------
# The known CPUs
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CpuInfo:
    """One CPU of the table: what `-mcpu=<name>` implies.

    Attributes:
        name: LLVM's CPU name.
        arch: the architecture (`x86_64`, `aarch64`).
        features: the features it has (the ones dlc reads; LLVM knows the rest from the name).
        fma_units: vector FMAs (at the widest vector width) a core issues per cycle.
        fma_latency: cycles until an FMA's result can be used.
        l1d_bytes, l2_bytes: data caches per core; l3_bytes: the last level, shared (0: none).
    """

    name: str
    arch: str
    features: frozenset[str]
    fma_units: int
    fma_latency: int
    l1d_bytes: int
    l2_bytes: int
    l3_bytes: int


def _features(*names: str) -> frozenset[str]:
    return apply_mattr(frozenset(), tuple(f"+{name}" for name in names))


_X86_64 = _features("64bit", "cmov", "cx8", "fxsr", "mmx", "sse2")
_X86_64_V2 = _X86_64 | _features("cx16", "sahf", "popcnt", "crc32", "sse4.2")
_X86_64_V3 = _X86_64_V2 | _features("avx2", "fma", "f16c", "bmi", "bmi2", "lzcnt", "movbe",
                                    "xsave")
_X86_64_V4 = _X86_64_V3 | _features("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
_HASWELL = _X86_64_V3 | _features("aes", "pclmul", "fsgsbase", "rdrnd", "invpcid")
_SKYLAKE = _HASWELL | _features("adx", "rdseed", "prfchw", "clflushopt", "xsavec", "xsaves")
_SKYLAKE_AVX512 = _SKYLAKE | _X86_64_V4 | _features("clwb", "pku")
_ICELAKE = _SKYLAKE_AVX512 | _features(
    "avx512vnni", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512bitalg", "avx512vpopcntdq",
    "gfni", "vaes", "vpclmulqdq", "rdpid", "sha",
)
_SAPPHIRERAPIDS = _ICELAKE | _features(
    "avx512bf16", "avx512fp16", "avxvnni", "amx-tile", "amx-int8", "amx-bf16", "serialize",
    "tsxldtrk", "movdiri", "movdir64b", "cldemote",
)
_ALDERLAKE = _SKYLAKE | _features("avxvnni", "gfni", "vaes", "vpclmulqdq", "sha", "serialize")
_ZNVER2 = _X86_64_V3 | _features("aes", "pclmul", "adx", "rdseed", "sha", "clzero", "clwb",
                                 "sse4a", "xsavec", "xsaves")
_ZNVER3 = _ZNVER2 | _features("vaes", "vpclmulqdq", "invpcid", "pku")
_ZNVER4 = _ZNVER3 | _X86_64_V4 | _features(
    "avx512vnni", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512bitalg", "avx512vpopcntdq",
    "avx512bf16", "gfni",
)
_ARMV8 = _features("neon")
_ARMV8_2 = _ARMV8 | _features("crc", "lse", "rdm", "fullfp16", "dotprod", "rcpc")


def _x86(name: str, features: frozenset[str], fma: tuple[int, int], l1d: int, l2: int,
         l3: int) -> CpuInfo:
    return CpuInfo(name, "x86_64", features, fma[0], fma[1], l1d, l2, l3)


def _arm(name: str, features: frozenset[str], fma: tuple[int, int], l1d: int, l2: int,
         l3: int) -> CpuInfo:
    return CpuInfo(name, "aarch64", features, fma[0], fma[1], l1d, l2, l3)


KNOWN_CPUS: dict[str, CpuInfo] = {
    cpu.name: cpu
    for cpu in (
        # The x86-64 levels: what every CPU of that level has; caches of a typical one.
        _x86("x86-64", _X86_64, (2, 4), 32 * KIB, 512 * KIB, 16 * MIB),
        _x86("x86-64-v2", _X86_64_V2, (2, 4), 32 * KIB, 512 * KIB, 16 * MIB),
        _x86("x86-64-v3", _X86_64_V3, (2, 4), 32 * KIB, 512 * KIB, 16 * MIB),
        _x86("x86-64-v4", _X86_64_V4, (2, 4), 32 * KIB, 1 * MIB, 16 * MIB),
        # Intel
        _x86("haswell", _HASWELL, (2, 5), 32 * KIB, 256 * KIB, 8 * MIB),
        _x86("broadwell", _HASWELL | _features("adx", "rdseed", "prfchw"), (2, 4), 32 * KIB,
             256 * KIB, 8 * MIB),
        _x86("skylake", _SKYLAKE, (2, 4), 32 * KIB, 256 * KIB, 8 * MIB),
        _x86("alderlake", _ALDERLAKE, (2, 4), 48 * KIB, 1280 * KIB, 30 * MIB),
        _x86("skylake-avx512", _SKYLAKE_AVX512, (2, 4), 32 * KIB, 1 * MIB, 32 * MIB),
        _x86("cascadelake", _SKYLAKE_AVX512 | _features("avx512vnni"), (2, 4), 32 * KIB,
             1 * MIB, 32 * MIB),
        _x86("cooperlake", _SKYLAKE_AVX512 | _features("avx512vnni", "avx512bf16"), (2, 4),
             32 * KIB, 1 * MIB, 32 * MIB),
        # Client Ice Lake, Tiger Lake and Rocket Lake issue one 512-bit FMA per cycle.
        _x86("icelake-client", _ICELAKE, (1, 4), 48 * KIB, 512 * KIB, 8 * MIB),
        _x86("tigerlake", _ICELAKE | _features("movdiri", "movdir64b"), (1, 4), 48 * KIB,
             1280 * KIB, 12 * MIB),
        _x86("rocketlake", _ICELAKE, (1, 4), 48 * KIB, 512 * KIB, 16 * MIB),
        _x86("icelake-server", _ICELAKE, (2, 4), 48 * KIB, 1280 * KIB, 48 * MIB),
        _x86("sapphirerapids", _SAPPHIRERAPIDS, (2, 4), 48 * KIB, 2 * MIB, 105 * MIB),
        _x86("emeraldrapids", _SAPPHIRERAPIDS, (2, 4), 48 * KIB, 2 * MIB, 320 * MIB),
        _x86("graniterapids", _SAPPHIRERAPIDS | _features("amx-fp16"), (2, 4), 48 * KIB,
             2 * MIB, 480 * MIB),
        # AMD. Zen 1 splits a 256-bit FMA over its two 128-bit pipes; Zen 4 issues one 512-bit
        # FMA per cycle (two 256-bit pipes).
        _x86("znver1", _ZNVER2 - {"clwb"}, (1, 5), 32 * KIB, 512 * KIB, 8 * MIB),
        _x86("znver2", _ZNVER2, (2, 5), 32 * KIB, 512 * KIB, 16 * MIB),
        _x86("znver3", _ZNVER3, (2, 4), 32 * KIB, 512 * KIB, 32 * MIB),
        _x86("znver4", _ZNVER4, (1, 4), 32 * KIB, 1 * MIB, 32 * MIB),
        _x86("znver5", _ZNVER4 | _features("avx512vp2intersect", "avxvnni", "movdiri",
                                           "movdir64b"), (2, 4), 48 * KIB, 1 * MIB, 32 * MIB),
        # AArch64 (NEON: 128-bit vectors, 32 registers).
        _arm("generic", _ARMV8, (2, 4), 32 * KIB, 256 * KIB, 0),
        _arm("cortex-a53", _ARMV8 | _features("crc"), (1, 4), 32 * KIB, 512 * KIB, 0),
        _arm("cortex-a72", _ARMV8 | _features("crc"), (2, 7), 32 * KIB, 512 * KIB, 0),
        _arm("cortex-a76", _ARMV8_2, (2, 4), 64 * KIB, 512 * KIB, 2 * MIB),
        _arm("neoverse-n1", _ARMV8_2 | _features("ssbs"), (2, 4), 64 * KIB, 1 * MIB, 32 * MIB),
        _arm("neoverse-v1", _ARMV8_2 | _features("ssbs", "sve", "bf16", "i8mm"), (4, 4),
             64 * KIB, 1 * MIB, 32 * MIB),
    )
}
"""The CPUs `-mcpu` accepts, by LLVM's name, with the features `-mcpu` implies (TVM and LLVM
take the rest of a CPU's features from its name)."""


# ----------------------------------------------------------------------------------------------
# The description
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CpuTarget:
    """A CPU to generate code for: `llvm -mtriple=... -mcpu=... -mattr=... -num-cores=...`.

    `CpuTarget(cpu="znver3")` or `parse_target("llvm -mcpu=znver3")`; `str()` gives the canonical
    target string, which parses back to an equal description. The constructor normalizes what it
    is given (defaults filled in, one `mattr` change per feature), so that equal descriptions
    compare equal.

    Attributes:
        triple: the target triple (default: the CPU's architecture on Linux,
            `x86_64-unknown-linux-gnu`); only Linux triples of `ARCHES` are accepted.
        cpu: LLVM's CPU name, one of `KNOWN_CPUS` (default: the generic CPU of the triple's
            architecture, else `x86-64`).
        mattr: the feature changes to the CPU's own, LLVM style (`+avx512f`, `-fma`), applied in
            order: one per feature (the last given wins), each a feature of the architecture
            (`ARCH_FEATURES`). This is LLVM's `target-features`.
        threads: the threads parallel loops run on; 0: all the cores the program finds when it
            runs (the OpenMP runtime's default); a parallel loop is made either way.
        l1d_bytes, l2_bytes: data caches per core; l3_bytes: the last level, shared (None: the
            table's numbers for the CPU).
    """

    triple: str = ""
    cpu: str = ""
    mattr: tuple[str, ...] = ()
    threads: int = 0
    l1d_bytes: int | None = None
    l2_bytes: int | None = None
    l3_bytes: int | None = None
    _features: frozenset[str] = field(init=False, repr=False, compare=False, default=frozenset())

    kind: ClassVar[str] = "llvm"

    def __post_init__(self) -> None:
        cpu = self.cpu
        if self.triple:
            cpu = cpu or _triple_arch(self.triple).generic_cpu
        info = KNOWN_CPUS.get(cpu or ARCHES["x86_64"].generic_cpu)
        if info is None:
            arch = _triple_arch(self.triple).name if self.triple else ""
            names = [name for name, known in KNOWN_CPUS.items() if arch in ("", known.arch)]
            what = f"known {arch} CPU" if arch else "known CPU"
            raise TargetError(f"expected a {what} for -mcpu ({', '.join(names)}), found '{cpu}'")
        triple = self.triple or ARCHES[info.arch].default_triple
        if _triple_arch(triple).name != info.arch:
            raise TargetError(
                f"expected a CPU of architecture {_triple_arch(triple).name} for "
                f"-mtriple={triple}, found -mcpu={info.name} ({info.arch})"
            )
        if self.threads < 0:
            raise TargetError(f"expected -num-cores >= 0, found {self.threads}")
        mattr = canonical_mattr(self.mattr)
        accepted = ARCH_FEATURES[info.arch]
        for change in mattr:
            if change[1:] not in accepted:
                raise TargetError(
                    f"expected a feature of {info.arch} in -mattr ({', '.join(sorted(accepted))})"
                    f", found '{change}'"
                )
        normalized = {
            "triple": triple, "cpu": info.name, "mattr": mattr,
            "l1d_bytes": info.l1d_bytes if self.l1d_bytes is None else self.l1d_bytes,
            "l2_bytes": info.l2_bytes if self.l2_bytes is None else self.l2_bytes,
            "l3_bytes": info.l3_bytes if self.l3_bytes is None else self.l3_bytes,
            "_features": apply_mattr(info.features, mattr),
        }
        for name, value in normalized.items():
            object.__setattr__(self, name, value)
        for flag, value in (("l1d-bytes", self.l1d_bytes), ("l2-bytes", self.l2_bytes),
                            ("l3-bytes", self.l3_bytes)):
            if value < 0:  # type: ignore[operator]
                raise TargetError(f"expected -{flag} >= 0, found {value}")

    @property
    def info(self) -> CpuInfo:
        """The table entry of the CPU."""
        return KNOWN_CPUS[self.cpu]

    @property
    def arch(self) -> str:
        """The architecture (`x86_64`, `aarch64`)."""
        return self.info.arch

    @property
    def features(self) -> frozenset[str]:
        """Every feature the target has (of those dlc reads, and any `-mattr` names)."""
        return self._features

    def has(self, feature: str) -> bool:
        """Whether the target has `feature` (`avx512f`, `fma`, `neon`, ...)."""
        return feature in self._features

    @property
    def llvm_features(self) -> str:
        """LLVM's `target-features`: the `-mattr` changes, comma-separated (the CPU name implies
        the rest)."""
        return ",".join(self.mattr)

    @property
    def data_layout(self) -> str:
        """LLVM's data layout for the triple."""
        return ARCHES[self.arch].data_layout

    @property
    def vector_bits(self) -> int:
        """The widest vector register, in bits: 512 with AVX-512, 256 with AVX, 128 with SSE
        and NEON (both part of their architecture's Linux ABI)."""
        if self.arch == "x86_64":
            if self.has("avx512f"):
                return 512
            if self.has("avx"):
                return 256
        return 128

    @property
    def vector_registers(self) -> int:
        """How many vector registers the ISA has: 32 with AVX-512 and on AArch64, else 16."""
        if self.arch == "aarch64" or self.has("avx512f"):
            return 32
        return 16

    @property
    def fma_units(self) -> int:
        """Vector FMAs (at the widest vector width) a core issues per cycle."""
        return self.info.fma_units

    @property
    def fma_latency(self) -> int:
        """Cycles until an FMA's result can be used."""
        return self.info.fma_latency

    def lanes(self, element_bytes: int = 4) -> int:
        """Elements of `element_bytes` in one vector register."""
        return max(1, self.vector_bits // (8 * element_bytes))

    def __str__(self) -> str:
        parts = ["llvm"]
        if self.triple != ARCHES[self.arch].default_triple:
            parts.append(f"-mtriple={self.triple}")
        parts.append(f"-mcpu={self.cpu}")
        if self.mattr:
            parts.append(f"-mattr={self.llvm_features}")
        if self.threads:
            parts.append(f"-num-cores={self.threads}")
        info = self.info
        for flag, value, default in (
            ("l1d-bytes", self.l1d_bytes, info.l1d_bytes),
            ("l2-bytes", self.l2_bytes, info.l2_bytes),
            ("l3-bytes", self.l3_bytes, info.l3_bytes),
        ):
            if value != default:
                parts.append(f"-{flag}={value}")
        return " ".join(parts)


def _triple_arch(triple: str) -> Arch:
    """The architecture of a Linux `triple`, or an error saying which triples are accepted."""
    components = triple.split("-")
    arch = ARCHES.get(components[0])
    if arch is None or "linux" not in components[1:]:
        examples = ", ".join(a.default_triple for a in ARCHES.values())
        raise TargetError(
            f"expected a Linux triple of {' or '.join(ARCHES)} ({examples}), found '{triple}'"
        )
    return arch


def canonical_mattr(changes: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """`-mattr` changes with one entry per feature: the last one given for each, in the order
    given (changes apply in order, as LLVM applies them)."""
    last: dict[str, str] = {}
    for change in changes:
        if len(change) < 2 or change[0] not in "+-" or not _FEATURE_NAME.fullmatch(change[1:]):
            raise TargetError(f"expected +FEATURE or -FEATURE in -mattr, found '{change}'")
        last.pop(change[1:], None)
        last[change[1:]] = change[0]
    return tuple(f"{sign}{name}" for name, sign in last.items())


_FEATURE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
