"""The int8 (VNNI) peak of this CPU core, measured: its clock and its `vpdpbusd` throughput.

Run: `python3 benchmarks/cpu_peak.py`. Two JIT-compiled inline-assembly loops (llvmlite),
timed in thread CPU time (the host is shared: wall time would count other processes' turns):
- a chain of dependent 3-cycle `imul`s gives the core's clock while it runs (turbo included);
- 24 independent `vpdpbusd zmm` chains (latency 5, 2 ports: 10 in flight suffice) give the
  instruction's throughput per cycle and so the measured int8 peak: each `vpdpbusd zmm` is
  16 lanes x 4 u8*s8 products = 64 multiply-adds = 128 int8 ops.

The computed peak is `clock x ports x 128` per core (ports: 2 on Ice Lake server and later Xeons,
which issue 512-bit integer multiply-adds on ports 0 and 5); `benchmarks/int8_gemm.py` reports
GEMM throughput against both.
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


def vpdpbusd_per_cycle(clock: float, iterations: int = 1_000_000) -> float:
    """`vpdpbusd zmm` instructions one core retires per cycle (24 independent chains)."""
    body = "\\0A".join(f"vpdpbusd %zmm30, %zmm31, %zmm{r}" for r in range(24))
    clobbers = ",".join(f"~{{zmm{r}}}" for r in range(24))
    seconds = _timed(_loop(body, clobbers), iterations)
    return iterations * 24 / seconds / clock


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
    per_cycle = vpdpbusd_per_cycle(clock)
    print(f"clock {clock / 1e9:.2f} GHz (imul chain); vpdpbusd zmm {per_cycle:.2f} per "
          f"cycle")
    print(f"int8 peak per core: computed {clock * 2 * OPS_PER_VPDPBUSD / 1e9:.0f} GOPS "
          f"(2 ports x 128 ops), measured {clock * per_cycle * OPS_PER_VPDPBUSD / 1e9:.0f} GOPS")


if __name__ == "__main__":
    main()
