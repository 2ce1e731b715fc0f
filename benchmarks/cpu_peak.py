"""The int8 peak of this CPU core, measured: its clock and its `vpdpbusd` throughput.

Run: `python3 benchmarks/cpu_peak.py`. JIT-compiled inline-assembly loops (llvmlite), timed in
thread CPU time (the host is shared: wall time would count other processes' turns):
- a chain of dependent 3-cycle `imul`s gives the core's clock while it runs (turbo included);
- 24 independent `vpdpbusd` chains (at most 5 cycles latency and 2 a cycle: 10 in flight
  suffice), on zmm and on ymm registers, give the instruction's throughput per cycle. Each
  `vpdpbusd zmm` is 16 lanes x 4 u8*s8 products = 64 multiply-adds = 128 int8 ops (ymm: 64).

The core's VNNI peak is `clock x ops a cycle`, the ops a cycle being the better of the two
widths with the measured rate rounded to whole half-instructions (the rate a core can issue is
a count of pipes: Intel's Ice Lake server and later cores run 2 `vpdpbusd zmm` a cycle, AMD's
Zen 4 one, its 512-bit operations taking two of its 256-bit pipes, or 2 ymm). A core with AMX
(`amx_int8`) has a higher int8 peak still: `tdpbusd` multiplies 16x64 by 64x16 int8 tiles,
16384 multiply-adds, one every 16 cycles, 2048 ops a cycle (measured on a Sapphire Rapids guest:
7.63 TOPS at 3.7 GHz); `benchmarks/int8_gemm.py` reports GEMM throughput against both.
"""

from __future__ import annotations

import ctypes
import time

IMUL_LATENCY = 3
"""Cycles of a 64-bit `imul r, r` (every x86-64 core since Nehalem)."""

OPS_PER_VPDPBUSD = 128
"""16 i32 lanes x 4 u8*s8 products, a multiply and an add each."""


def _jit(ir: str) -> tuple[object, int]:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    module = llvm.parse_assembly(ir)
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten())
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    return engine, engine.get_function_address("kernel")


def _timed(ir: str, iterations: int) -> float:
    engine, address = _jit(ir)
    kernel = ctypes.CFUNCTYPE(None, ctypes.c_int64)(address)
    kernel(iterations // 10)
    best = float("inf")
    for _ in range(5):
        start = time.thread_time()
        kernel(iterations)
        best = min(best, time.thread_time() - start)
    del engine
    return best


def _loop(body: str, clobbers: str, init: str = "") -> str:
    entry = f'call void asm sideeffect "{init}", "{clobbers}"()' if init else ""
    return f"""
define void @kernel(i64 %n) {{
entry:
  {entry}
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  call void asm sideeffect "{body}", "{clobbers}"()
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"""


def clock_hz(iterations: int = 1_000_000) -> float:
    """Cycles per second of one core: 100 dependent 3-cycle `imul`s per iteration (not `add`s:
    Golden Cove and later cores fold chains of adds of immediates at rename)."""
    body = "\\0A".join(["imulq %rbx, %rax"] * 100)
    seconds = _timed(_loop(body, "~{rax},~{rbx},~{dirflag},~{fpsr},~{flags}"), iterations)
    return iterations * 100 * IMUL_LATENCY / seconds


def vpdpbusd_per_cycle(clock: float, iterations: int = 1_000_000, width: str = "zmm") -> float:
    """`vpdpbusd` instructions on `width` registers (zmm or ymm) one core retires per cycle
    (24 independent chains)."""
    body = "\\0A".join(f"vpdpbusd %{width}30, %{width}31, %{width}{r}" for r in range(24))
    clobbers = ",".join(f"~{{zmm{r}}}" for r in range(24))
    seconds = _timed(_loop(body, clobbers), iterations)
    return iterations * 24 / seconds / clock


def vnni_ops_per_cycle(zmm: float, ymm: float) -> float:
    """int8 ops a cycle of one core's `vpdpbusd` at best, from its measured rates on zmm and
    ymm registers: the wider of the two, each rate rounded to whole half-instructions a cycle."""
    return max(round(2 * zmm) / 2 * OPS_PER_VPDPBUSD, round(2 * ymm) / 2 * OPS_PER_VPDPBUSD / 2)


def measured_vnni_ops_per_cycle(clock: float) -> tuple[float, float, float]:
    """(zmm rate, ymm rate, ops a cycle) of `vpdpbusd` on this core."""
    zmm, ymm = (vpdpbusd_per_cycle(clock, width=width) for width in ("zmm", "ymm"))
    return zmm, ymm, vnni_ops_per_cycle(zmm, ymm)


AMX_OPS_PER_CYCLE = 2048
"""int8 ops a cycle of one AMX unit: `tdpbusd` (16x64 u8 by 64x16 s8 tiles, 16384
multiply-adds) issues once every 16 cycles."""


def has_amx_int8() -> bool:
    """Whether the CPU reports AMX int8 tile instructions (Linux's /proc/cpuinfo)."""
    try:
        with open("/proc/cpuinfo") as info:
            return any(line.startswith("flags") and " amx_int8" in line for line in info)
    except OSError:
        return False


FLOPS_PER_VDPBF16PS = 64
"""16 f32 lanes x 2 bf16 products, a multiply and an add each."""

FLOPS_PER_FMA_ZMM = 32
"""16 f32 lanes x a multiply and an add."""


def per_cycle(instruction: str, clock: float, iterations: int = 1_000_000) -> float:
    """`instruction zmm30, zmm31, zmmR` (any 3-operand accumulating AVX-512 instruction:
    `vdpbf16ps`, `vfmadd231ps`) retired per cycle, over 24 independent chains.

    Every register the loop uses is zeroed before it: registers left as the caller had them
    hold arbitrary bits, denormal floats among them, and a float instruction on a denormal
    takes a microcode assist (`vfmadd231ps` read 1.26 per cycle on a Sapphire Rapids guest
    that way, 1.89 zeroed)."""
    registers = [*range(24), 30, 31]
    body = "\\0A".join(f"{instruction} %zmm30, %zmm31, %zmm{r}" for r in range(24))
    init = "\\0A".join(f"vpxord %zmm{r}, %zmm{r}, %zmm{r}" for r in registers)
    clobbers = ",".join(f"~{{zmm{r}}}" for r in registers)
    seconds = _timed(_loop(body, clobbers, init), iterations)
    return iterations * 24 / seconds / clock


def main() -> None:
    clock = clock_hz()
    zmm, ymm, ops = measured_vnni_ops_per_cycle(clock)
    print(f"clock {clock / 1e9:.2f} GHz (imul chain); vpdpbusd {zmm:.2f} zmm or {ymm:.2f} ymm "
          f"per cycle")
    print(f"int8 VNNI peak per core: {ops:.0f} ops a cycle, {clock * ops / 1e9:.0f} GOPS")
    if has_amx_int8():
        print(f"int8 AMX peak per core: {AMX_OPS_PER_CYCLE} ops a cycle, "
              f"{clock * AMX_OPS_PER_CYCLE / 1e9:.0f} GOPS (the machine's int8 peak)")


if __name__ == "__main__":
    main()
