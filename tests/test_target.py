"""Target descriptions (`dlc.target`): the target-string grammar and its errors, the table of
known CPUs and what `-mattr` changes, host detection, the GPU descriptions; and passes,
emitters, dlc-opt, the driver and the tuner, whose output depends only on the target they are
given (a pass's `target` option, else the module's `dlc.target`, else the fixed default), never
on the machine they run on: only the driver resolves `host`, once."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
from pathlib import Path

import llvmlite.binding as binding
import pytest
from dlc.dialects import make_context
from dlc.dialects.contracts import TARGET_ATTR
from dlc.target import (
    ARCHES,
    CUDA_ARCHES,
    DEFAULT_CPU_TARGET,
    DEFAULT_GPU_TARGET,
    KNOWN_CPUS,
    OPENCL,
    CpuTarget,
    GpuTarget,
    TargetError,
    parse_cpu_target,
    parse_gpu_target,
    parse_target,
)
from dlc.target import host_cpu as target_host
from dlc.target.cpu import ARCH_FEATURES, FEATURE_REQUIRES
from dlc.target.host_cpu import HostCpu, host_target, sysfs_cache_sizes
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.parser import Parser

KIB, MIB = 1 << 10, 1 << 20

# ----------------------------------------------------------------------------------------------
# Target strings
# ----------------------------------------------------------------------------------------------

GOOD: list[tuple[str, str]] = [
    ("llvm", "llvm -mcpu=x86-64"),
    ("llvm -mcpu=znver3 -num-cores=2", "llvm -mcpu=znver3 -num-cores=2"),
    ("  llvm   -num-cores=2  -mcpu=znver3 ", "llvm -mcpu=znver3 -num-cores=2"),
    ("llvm -mcpu=znver3 -num-cores=0", "llvm -mcpu=znver3"),
    ("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon",
     "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"),
    ("llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=neoverse-n1", "llvm -mcpu=neoverse-n1"),
    ("llvm -mcpu=cortex-a76", "llvm -mcpu=cortex-a76"),  # on aarch64-unknown-linux-gnu
    ("llvm -mtriple=aarch64-linux-gnu", "llvm -mtriple=aarch64-linux-gnu -mcpu=generic"),
    ("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell", "llvm -mcpu=haswell"),
    ("llvm -mtriple=x86_64-pc-linux-gnu", "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64"),
    ("llvm -mcpu=skylake-avx512 -mattr=-avx512f,+avx512f,-fma",
     "llvm -mcpu=skylake-avx512 -mattr=+avx512f,-fma"),
    ("llvm -mcpu=znver3 -l2-bytes=524288", "llvm -mcpu=znver3"),
    ("llvm -mcpu=znver4 -l1d-bytes=49152 -l2-bytes=2097152 -l3-bytes=0",
     "llvm -mcpu=znver4 -l1d-bytes=49152 -l2-bytes=2097152 -l3-bytes=0"),
    ("cuda", "cuda -arch=sm_80"),
    ("cuda -arch=sm_90", "cuda -arch=sm_90"),
    ("opencl", "opencl"),
]


@pytest.mark.parametrize(("text", "canonical"), GOOD)
def test_target_strings_parse_to_their_canonical_form(text: str, canonical: str) -> None:
    target = parse_target(text)
    assert str(target) == canonical
    assert parse_target(canonical) == target


BAD: list[tuple[str, str]] = [  # (text, the start of the message, literally)
    ("", "expected a target kind (llvm, cuda, opencl), found ''"),
    ("x86", "expected a target kind (llvm, cuda, opencl), found 'x86'"),
    ("host", "expected a target (llvm, cuda, opencl), found 'host': the host is resolved only by "
             "the driver"),
    ("llvm mcpu=znver3", "expected a flag of llvm (-mtriple, -mcpu, -mattr, -num-cores, "
                         "-l1d-bytes, -l2-bytes, -l3-bytes), found 'mcpu=znver3'"),
    ("llvm -march=x86-64", "expected a flag of llvm (-mtriple, -mcpu, -mattr, -num-cores, "
                           "-l1d-bytes, -l2-bytes, -l3-bytes), found '-march=x86-64'"),
    ("llvm -mcpu", "expected -mcpu=VALUE, found '-mcpu'"),
    ("llvm -mcpu=", "expected -mcpu=VALUE, found '-mcpu='"),
    ("llvm -mcpu=znver3 -mcpu=znver4", "expected -mcpu at most once, found it twice"),
    ("llvm -mcpu=pentium4", "expected a known CPU for -mcpu (x86-64, x86-64-v2, "),
    ("llvm -num-cores=two", "expected a non-negative integer for -num-cores, found 'two'"),
    ("llvm -num-cores=-1", "expected a non-negative integer for -num-cores, found '-1'"),
    ("llvm -l2-bytes=1M", "expected a non-negative integer for -l2-bytes, found '1M'"),
    ("llvm -mattr=avx2", "expected +FEATURE or -FEATURE in -mattr, found 'avx2'"),
    ("llvm -mattr=+avx2,,+fma", "expected +FEATURE or -FEATURE in -mattr, found ''"),
    ("llvm -mattr=+avx 2", "expected a flag of llvm (-mtriple, -mcpu, -mattr, -num-cores, "
                           "-l1d-bytes, -l2-bytes, -l3-bytes), found '2'"),
    ("llvm -mtriple=riscv64-unknown-linux-gnu",
     "expected a Linux triple of x86_64 or aarch64 (x86_64-unknown-linux-gnu, "
     "aarch64-unknown-linux-gnu), found 'riscv64-unknown-linux-gnu'"),
    ("llvm -mtriple=x86_64-apple-darwin",
     "expected a Linux triple of x86_64 or aarch64 (x86_64-unknown-linux-gnu, "
     "aarch64-unknown-linux-gnu), found 'x86_64-apple-darwin'"),
    ("llvm -mtriple=aarch64-linux-gnu -mcpu=znver3",
     "expected a CPU of architecture aarch64 for -mtriple=aarch64-linux-gnu, found -mcpu=znver3 "
     "(x86_64)"),
    ("cuda -arch=sm_70", "expected a CUDA architecture for -arch (sm_80, sm_90), found 'sm_70'"),
    ("cuda -mcpu=sm_90", "expected a flag of cuda (-arch), found '-mcpu=sm_90'"),
    ("opencl -arch=sm_80", "expected a flag of opencl (none), found '-arch=sm_80'"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_malformed_target_strings_say_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(TargetError, match=re.escape(message)):
        parse_target(text)


def test_cpu_and_gpu_parsers_check_the_kind() -> None:
    assert parse_cpu_target("llvm -mcpu=znver3").cpu == "znver3"
    assert parse_gpu_target("opencl") is OPENCL
    with pytest.raises(TargetError, match="expected a CPU target \\(llvm ...\\), found 'opencl'"):
        parse_cpu_target("opencl")
    with pytest.raises(TargetError, match="expected a GPU target \\(cuda ..., opencl\\), found "
                                          "'llvm'"):
        parse_gpu_target("llvm")


_FEATURES = sorted({*FEATURE_REQUIRES, "aes", "bmi2", "avx10.1", "amx-tile", "crc", "lse"})


@st.composite
def cpu_targets(draw: st.DrawFn) -> CpuTarget:
    cpu = draw(st.sampled_from(sorted(KNOWN_CPUS)))
    arch = KNOWN_CPUS[cpu].arch
    triple = draw(st.sampled_from(["", ARCHES[arch].default_triple, f"{arch}-linux-gnu"]))
    given_cpu = draw(st.sampled_from(["", cpu])) if not triple else cpu
    if not given_cpu:
        arch = "x86_64"  # the default CPU's
    features = [name for name in _FEATURES if name in ARCH_FEATURES[arch]]
    changes = draw(st.lists(st.tuples(st.sampled_from("+-"), st.sampled_from(features)),
                            max_size=6))
    caches = [draw(st.none() | st.integers(0, 1 << 30)) for _ in range(3)]
    return CpuTarget(
        triple=triple, cpu=given_cpu,
        mattr=tuple(sign + name for sign, name in changes), threads=draw(st.integers(0, 256)),
        l1d_bytes=caches[0], l2_bytes=caches[1], l3_bytes=caches[2],
    )


@settings(max_examples=300, deadline=None)
@given(cpu_targets())
def test_canonical_cpu_strings_round_trip(target: CpuTarget) -> None:
    text = str(target)
    again = parse_target(text)
    assert again == target
    assert str(again) == text
    assert again.features == target.features and again.vector_bits == target.vector_bits


@pytest.mark.parametrize("target", [DEFAULT_GPU_TARGET, OPENCL, *CUDA_ARCHES.values()])
def test_canonical_gpu_strings_round_trip(target: GpuTarget) -> None:
    assert parse_target(str(target)) == target


# ----------------------------------------------------------------------------------------------
# The known CPUs
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cpu", "bits", "registers", "features"),
    [
        ("x86-64", 128, 16, {"sse2"}),
        ("x86-64-v3", 256, 16, {"avx2", "fma"}),
        ("haswell", 256, 16, {"avx2", "fma"}),
        ("znver3", 256, 16, {"avx2", "fma", "vaes"}),
        ("alderlake", 256, 16, {"avxvnni"}),
        ("x86-64-v4", 512, 32, {"avx512f", "avx512vl"}),
        ("skylake-avx512", 512, 32, {"avx512f", "avx512bw", "avx512dq", "avx512vl"}),
        ("icelake-server", 512, 32, {"avx512vnni", "avx512vbmi"}),
        ("rocketlake", 512, 32, {"avx512vnni"}),
        ("sapphirerapids", 512, 32, {"avx512bf16", "avx512fp16", "amx-tile", "amx-int8"}),
        ("znver4", 512, 32, {"avx512bf16"}),
        ("cortex-a72", 128, 32, {"neon", "fp-armv8"}),
        ("cortex-a76", 128, 32, {"neon", "dotprod", "fullfp16"}),
        ("neoverse-n1", 128, 32, {"neon", "dotprod"}),
    ],
)
def test_known_cpus_imply_their_features(cpu: str, bits: int, registers: int,
                                         features: set[str]) -> None:
    target = CpuTarget(cpu=cpu)
    assert (target.vector_bits, target.vector_registers) == (bits, registers)
    assert features <= target.features
    assert target.lanes(4) == bits // 32
    assert not target.mattr and target.llvm_features == ""


def test_the_table_is_consistent() -> None:
    for name, info in KNOWN_CPUS.items():
        assert info.name == name and info.arch in ARCHES
        assert info.fma_units >= 1 and info.fma_latency >= 1
        assert info.l1d_bytes >= 16 * KIB and info.l2_bytes >= 128 * KIB and info.l3_bytes >= 0
        for feature in info.features:  # closed under what features need
            assert set(FEATURE_REQUIRES.get(feature, ())) <= info.features, (name, feature)
        target = CpuTarget(cpu=name)
        assert target.triple == ARCHES[info.arch].default_triple
        assert target.data_layout == ARCHES[info.arch].data_layout
        assert (target.l1d_bytes, target.l2_bytes, target.l3_bytes) == (
            info.l1d_bytes, info.l2_bytes, info.l3_bytes)


def test_mattr_changes_the_features_and_what_follows_from_them() -> None:
    no_avx512 = parse_cpu_target("llvm -mcpu=skylake-avx512 -mattr=-avx512f")
    assert (no_avx512.vector_bits, no_avx512.vector_registers) == (256, 16)
    assert not no_avx512.has("avx512bw")  # what needs avx512f goes with it
    assert no_avx512.llvm_features == "-avx512f"
    no_avx = parse_cpu_target("llvm -mcpu=x86-64-v3 -mattr=-avx")
    assert no_avx.vector_bits == 128 and not no_avx.has("avx2") and not no_avx.has("fma")
    more = parse_cpu_target("llvm -mcpu=znver3 -mattr=+avx512bw")
    assert more.vector_bits == 512 and more.has("avx512f")  # and what it needs comes with it
    # Changes apply in order, as LLVM applies them.
    assert not parse_cpu_target("llvm -mcpu=znver3 -mattr=+avx512f,-avx2").has("avx512f")
    assert parse_cpu_target("llvm -mcpu=znver3 -mattr=-avx2,+avx512f").has("avx512f")
    assert parse_cpu_target("llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod").has("neon")


def test_the_default_targets_are_fixed_and_documented() -> None:
    assert str(DEFAULT_CPU_TARGET) == "llvm -mcpu=x86-64-v3"
    assert DEFAULT_CPU_TARGET.vector_bits == 256 and DEFAULT_CPU_TARGET.has("fma")
    assert DEFAULT_CPU_TARGET.threads == 0 and DEFAULT_CPU_TARGET.l2_bytes == 512 * KIB
    assert str(DEFAULT_GPU_TARGET) == "cuda -arch=sm_80"


# ----------------------------------------------------------------------------------------------
# GPUs
# ----------------------------------------------------------------------------------------------


def test_gpu_targets_are_data() -> None:
    for arch, target in CUDA_ARCHES.items():
        assert target.arch == arch and target.is_cuda and target.triple == "nvptx64-nvidia-cuda"
    for target in (*CUDA_ARCHES.values(), OPENCL):
        assert target.max_threads_per_block <= target.max_block_dims[0] * target.max_block_dims[1]
        assert target.shared_memory_bytes > 0 and target.warp_size >= 1
    assert CUDA_ARCHES["sm_90"].ptx_version == "7.8"
    assert OPENCL.max_threads_per_block == 256 and not OPENCL.is_cuda


# ----------------------------------------------------------------------------------------------
# The host
# ----------------------------------------------------------------------------------------------

X86 = "x86_64-unknown-linux-gnu"
_LLVM_FEATURES = ("sse", "sse2", "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                  "avx512dq", "avx512vl", "amx-tile", "amx-int8", "sse4a", "xop", "rtm")


def reported_host(cpu: str, enabled: set[str], caches: dict[int, int] | None = None) -> HostCpu:
    """A host as llvmlite and sysfs would report it: every feature LLVM knows, on or off."""
    features = {name: name in enabled for name in _LLVM_FEATURES}
    return HostCpu(X86, cpu, features, caches or {1: 32 * KIB, 2: 512 * KIB, 3: 32 * MIB})


AVX2_HOST = reported_host("znver3", {"sse", "sse2", "sse4.2", "avx", "avx2", "fma", "f16c",
                                     "sse4a"})
AVX512_HOST = reported_host(
    "sapphirerapids",
    {"sse", "sse2", "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512dq",
     "avx512vl", "rtm"},  # a virtual machine that hides AMX
    {1: 48 * KIB, 2: 2 * MIB, 3: 260 * MIB},
)


def test_a_known_host_cpu_keeps_its_name_and_lists_what_differs() -> None:
    avx2 = host_target(AVX2_HOST, 2)
    assert (avx2.cpu, avx2.threads, avx2.vector_bits) == ("znver3", 2, 256)
    assert "+avx2" not in avx2.mattr and "-avx512f" in avx2.mattr and "-xop" in avx2.mattr
    avx512 = host_target(AVX512_HOST, 4)
    assert (avx512.cpu, avx512.vector_bits, avx512.l2_bytes) == ("sapphirerapids", 512, 2 * MIB)
    assert "-amx-tile" in avx512.mattr and "+rtm" in avx512.mattr
    assert not avx512.has("amx-int8")  # hidden with amx-tile, which it needs
    for target in (avx2, avx512):
        assert parse_target(str(target)) == target


def test_a_host_with_a_newer_cpus_features_is_described_as_that_cpu() -> None:
    """A virtual machine that reports a client model's name (`rocketlake`: one 512-bit FMA
    unit) with a server CPU's features is the known CPU with the most features it has all of;
    a host with nothing beyond its name's features keeps the name."""
    server = KNOWN_CPUS["sapphirerapids"].features
    host = host_target(HostCpu(X86, "rocketlake", dict.fromkeys(server, True), {}), 2)
    assert (host.cpu, host.fma_units) == ("sapphirerapids", 2)
    # A hypervisor hiding an operating-system feature (memory protection keys) hides no
    # vector unit: the guest is still the server CPU, the feature turned off.
    guest = {**dict.fromkeys(server, True), "pku": False}
    host = host_target(HostCpu(X86, "rocketlake", guest, {}), 2)
    assert (host.cpu, host.fma_units) == ("sapphirerapids", 2)
    assert "-pku" in host.mattr
    client = KNOWN_CPUS["rocketlake"].features
    host = host_target(HostCpu(X86, "rocketlake", dict.fromkeys(client, True), {}), 2)
    assert (host.cpu, host.fma_units) == ("rocketlake", 1)
    assert host_target(AVX2_HOST, 2).cpu == "znver3"


def test_an_unknown_host_cpu_is_its_architectures_generic_cpu_plus_its_features() -> None:
    future = host_target(reported_host("futurelake", {"sse", "sse2", "sse4.2", "avx", "avx2",
                                                      "fma", "f16c", "avx512f"}), 1)
    assert future.cpu == "x86-64" and future.vector_bits == 512 and "+avx512f" in future.mattr
    assert parse_target(str(future)) == future
    with pytest.raises(TargetError, match="expected a host of architecture x86_64 or aarch64, "
                                          "found 'riscv64-unknown-linux-gnu'"):
        host_target(HostCpu("riscv64-unknown-linux-gnu", "generic-rv64", {}, {}), 1)


def test_sysfs_cache_sizes(tmp_path: Path) -> None:
    for index, (level, kind, size) in enumerate(
        [(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K"),
         (3, "Unified", "260M")]
    ):
        directory = tmp_path / f"index{index}"
        directory.mkdir()
        (directory / "level").write_text(f"{level}\n")
        (directory / "type").write_text(f"{kind}\n")
        (directory / "size").write_text(f"{size}\n")
    assert sysfs_cache_sizes(tmp_path) == {1: 48 * KIB, 2: 2 * MIB, 3: 260 * MIB}
    assert sysfs_cache_sizes(tmp_path / "missing") == {}


class FakeHost:
    """Replaces everything dlc could ask about the machine (llvmlite's host CPU, sysfs, the CPU
    affinity) with one described host, and counts the times `host()` detection runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, reported: HostCpu, cores: int) -> None:
        self.detections = 0

        class Features(dict):  # llvmlite's FeatureMap
            def flatten(self) -> str:
                return ",".join(f"{'+' if on else '-'}{name}" for name, on in self.items())

        def detect() -> HostCpu:
            self.detections += 1
            return reported

        monkeypatch.setattr(target_host, "detect_host_cpu", detect)
        monkeypatch.setattr(binding, "get_host_cpu_name", lambda: reported.cpu)
        monkeypatch.setattr(binding, "get_host_cpu_features",
                            lambda: Features(reported.features))
        monkeypatch.setattr(target_host, "sysfs_cache_sizes", lambda *a: dict(reported.caches))
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
        # A cache of its own: the process's real answer is untouched, and restored after.
        monkeypatch.setattr(target_host, "_host_cpu", functools.cache(target_host.detect_host_cpu))


def test_host_is_asked_once_and_uses_every_usable_core(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeHost(monkeypatch, AVX512_HOST, cores=6)
    first = target_host.host()
    assert first.threads == 6 and first.cpu == "sapphirerapids"
    assert target_host.host(threads=2).threads == 2
    assert fake.detections == 1


# ----------------------------------------------------------------------------------------------
# Passes read the target they are given, never the host
# ----------------------------------------------------------------------------------------------

LOOP_GEMM = """
func.func @gemm(%a: memref<4x8xf32>, %b: memref<8x64xf32>, %out: memref<4x64xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c64 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "gemm_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
        loop.block "gemm" reads(%a, %b : memref<4x8xf32>, memref<8x64xf32>)
            writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<4x8xf32> -> f32
          %1 = loop.load %b[%r0, %i1] : memref<8x64xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          %3 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %4 = arith.addf %3, %2 : f32
          loop.store %4, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "store" reads(%acc : memref<1xf32>) writes(%out : memref<4x64xf32>)
          spatial ["i0", "i1"] {
        %5 = loop.load %acc[%c0] : memref<1xf32> -> f32
        loop.store %5, %out[%i0, %i1] : f32 -> memref<4x64xf32>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}
"""

GRAPH = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x32xf32> {
  %w = graph.constant dense<0.5> : tensor<8x32xf32>
  %a = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x32xf32>) -> tensor<4x32xf32>
  %b = graph.relu %a : tensor<4x32xf32>
  func.return %b : tensor<4x32xf32>
}
"""


def lanes_of(module: ModuleOp) -> int:
    """The extent of the GEMM's vectorized lane loop (`i1.l`)."""
    from dlc.dialects.loop.ops import ForOp

    (loop,) = [op for op in module.walk() if isinstance(op, ForOp) and op.axis.data == "i1.l"]
    assert loop.trip_count() is not None
    return loop.trip_count()  # type: ignore[return-value]


def scheduled(option: str = "", module_target: str | None = None) -> ModuleOp:
    from dlc.rewrites.loop_default_schedule import LoopDefaultSchedulePass

    module = Parser(make_context(), LOOP_GEMM).parse_module()
    if module_target is not None:
        module.attributes[TARGET_ATTR] = StringAttr(module_target)
    LoopDefaultSchedulePass(target=option).apply(make_context(), module)
    return module


def test_the_option_wins_over_the_modules_target_which_wins_over_the_default() -> None:
    assert lanes_of(scheduled()) == 8  # DEFAULT_CPU_TARGET: AVX2
    assert lanes_of(scheduled(module_target="llvm -mcpu=skylake-avx512")) == 16
    assert lanes_of(scheduled("llvm -mcpu=znver3", "llvm -mcpu=skylake-avx512")) == 8
    assert lanes_of(scheduled("llvm -mcpu=x86-64-v4")) == 16
    assert lanes_of(scheduled("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1")) == 4


def test_bad_targets_fail_the_pass_with_the_parsers_message() -> None:
    from xdsl.utils.exceptions import PassFailedException

    with pytest.raises(PassFailedException, match="loop-default-schedule: invalid target option: "
                                                  "expected a known CPU for -mcpu"):
        scheduled("llvm -mcpu=i386")
    with pytest.raises(PassFailedException, match="'builtin.module' op invalid dlc.target: "
                                                  "expected a CPU target"):
        scheduled(module_target="cuda -arch=sm_90")


def dlc_opt(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    from dlc.tools.dlc_opt import main

    source = tmp_path / "input.mlir"
    source.write_text(text)
    out = tmp_path / "out.txt"
    out.unlink(missing_ok=True)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = main([str(source), "-o", str(out), *args])
    return code, out.read_text() if out.exists() else "", stderr.getvalue()


PIPELINES: list[tuple[str, tuple[str, ...]]] = [
    (GRAPH, ("--dlc-target=llvm -mcpu=znver3 -num-cores=2", "-p", "cpu", "-t", "llvm")),
    (GRAPH, ("-p", "cpu", "-t", "llvm")),  # no target at all: the fixed default
    (LOOP_GEMM, ("-p", 'loop-default-schedule{target="llvm -mcpu=skylake-avx512 -num-cores=2"},'
                       'convert-loop-to-llvm{target="llvm -mcpu=skylake-avx512 -num-cores=2"}',
                 "-t", "llvm")),
    (LOOP_GEMM, ("-p", "loop-default-schedule,convert-loop-to-llvm")),
]


@pytest.mark.parametrize(("text", "args"), PIPELINES,
                         ids=["cpu-module-target", "cpu-default", "options", "loop-default"])
def test_dlc_opt_output_is_the_same_on_every_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, args: tuple[str, ...]
) -> None:
    """The same pipeline and target give the same text on an AVX2 host and on an AVX-512 host
    (with other caches and cores), and the host is never asked."""
    outputs = []
    for reported, cores in ((AVX2_HOST, 2), (AVX512_HOST, 8)):
        fake = FakeHost(monkeypatch, reported, cores)
        code, output, errors = dlc_opt(tmp_path, text, *args)
        assert code == 0, errors
        assert fake.detections == 0
        outputs.append(output)
    assert outputs[0] == outputs[1]
    assert "target-cpu" in outputs[0] or "llvm.func" in outputs[0]


def test_dlc_opt_resolves_host_only_when_asked(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = []
    for reported in (AVX2_HOST, AVX512_HOST):
        fake = FakeHost(monkeypatch, reported, 2)
        code, output, errors = dlc_opt(tmp_path, LOOP_GEMM, "--dlc-target=host", "-p",
                                       "loop-default-schedule{target=host},convert-loop-to-llvm")
        assert code == 0, errors
        assert fake.detections == 1  # once for both uses
        outputs.append(output)
    assert 'dlc.target = "llvm -mcpu=znver3' in outputs[0]
    assert 'dlc.target = "llvm -mcpu=sapphirerapids' in outputs[1]
    assert "vector<16xf32>" in outputs[1] and "vector<16xf32>" not in outputs[0]


def test_dlc_opt_reports_a_bad_target(tmp_path: Path) -> None:
    code, _, errors = dlc_opt(tmp_path, LOOP_GEMM, "--dlc-target=llvm -mcpu=z80", "-p",
                              "loop-default-schedule")
    assert code == 1
    assert errors.startswith("dlc-opt: error: invalid target 'llvm -mcpu=z80': expected a known "
                             "CPU for -mcpu")


# ----------------------------------------------------------------------------------------------
# The driver resolves the host once and hands its target down
# ----------------------------------------------------------------------------------------------


def test_the_driver_resolves_host_and_target_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    from dlc.driver.errors import CompileError
    from dlc.driver.target import resolve_cpu_target, resolve_target

    fake = FakeHost(monkeypatch, AVX2_HOST, cores=4)
    assert resolve_target("host").threads == 4  # type: ignore[union-attr]
    assert resolve_target("host", 1).threads == 1  # type: ignore[union-attr]
    assert str(resolve_target("llvm -mcpu=znver4", 3)) == "llvm -mcpu=znver4 -num-cores=3"
    assert resolve_target("cuda -arch=sm_90", 3) == CUDA_ARCHES["sm_90"]
    assert fake.detections == 1
    with pytest.raises(CompileError, match="invalid target 'llvm -mcpu=': expected -mcpu=VALUE"):
        resolve_target("llvm -mcpu=")
    with pytest.raises(CompileError, match="expected a CPU target \\(host or llvm ...\\), found "
                                           "'opencl'"):
        resolve_cpu_target("opencl")


def test_the_compile_cache_key_names_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    from dlc.driver.cache import CompileOptions

    FakeHost(monkeypatch, AVX2_HOST, cores=2)
    keys = {CompileOptions(target=t).fingerprint()
            for t in ("host", "llvm -mcpu=znver3", "llvm -mcpu=skylake-avx512")}
    assert len(keys) == 3


def test_compile_writes_the_target_on_the_module_and_emits_for_it() -> None:
    """The driver sets `dlc.target` before the pipeline; every unit (entry, kernels) is printed
    for it and its object code made by a TargetMachine of the same description."""
    import numpy as np
    from dlc.driver.cache import CompileOptions
    from dlc.driver.compiler import whole_module_passes

    import dlc

    module = Parser(make_context(), GRAPH).parse_module()
    whole_module_passes(module, CompileOptions(target="llvm -mcpu=x86-64-v3 -num-cores=1"),
                        make_context())
    assert module.attributes[TARGET_ATTR] == StringAttr("llvm -mcpu=x86-64-v3 -num-cores=1")
    executable = dlc.compile(Parser(make_context(), GRAPH).parse_module(),
                             target="llvm -mcpu=x86-64-v3", threads=1, cache=False)
    x = np.ones((4, 8), dtype=np.float32)
    np.testing.assert_allclose(executable(x), np.full((4, 32), 4.0, np.float32))
    with pytest.raises(dlc.CompileError, match="invalid target 'llvm -mcpu=z80'"):
        dlc.compile(Parser(make_context(), GRAPH).parse_module(), target="llvm -mcpu=z80")


def test_the_jit_refuses_code_for_another_architecture() -> None:
    from dlc.driver.jit import JitError, JitModule

    aarch64 = parse_cpu_target("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72")
    with pytest.raises(JitError, match="expected a target of this process's architecture"):
        JitModule("", target=aarch64)


def test_tuning_records_name_the_target() -> None:
    from dlc.rewrites.tuning.log import same_cpu_key, tuning_key

    target = parse_cpu_target("llvm -mcpu=znver4 -num-cores=2")
    assert tuning_key(target) == "llvm -mcpu=znver4 -num-cores=2"
    assert parse_target(tuning_key(target)) == target
    assert same_cpu_key("llvm -mcpu=znver4 -threads=2") == same_cpu_key(tuning_key(target))
