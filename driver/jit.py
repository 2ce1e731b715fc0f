"""Compile LLVM IR text in process with llvmlite's MCJIT (TVM's `llvm` module `.get_function`).

Each `JitModule` owns one execution engine and its own TargetMachine, made from the same target
description the IR was lowered and printed for (`dlc.target`): MCJIT takes ownership of both, and
a TargetMachine must never be shared between engines.
"""

from __future__ import annotations

import ctypes
import re
import threading

import llvmlite.binding as binding
from dlc.runtime.library import prepare_openmp_environment
from dlc.runtime.metadata import METADATA_SYMBOL
from dlc.target import DEFAULT_CPU_TARGET, CpuTarget

_optimization_lock = threading.Lock()

LLVM_HEURISTIC_UNROLLING = False
"""Whether LLVM's pipeline unrolls loops by its own cost model. dlc's schedules decide what to
unroll (the `unroll` primitive: `llvm.loop.unroll.full` metadata, which LLVM honours either way),
so LLVM's unroller only multiplies the loops the schedule left rolled: reduction loops already
unrolled by a register tile, tails, re-layouts. Off, ResNet-18's kernels compile to 58% of the
object code in 78% of the LLVM time (opt 1.41 -> 1.17 s, codegen 1.22 -> 0.68 s over its 22
kernels) and the models run as fast (benchmarks/models.py ratios unchanged within noise)."""


CAPTURE_TRACKING_MAX_USES = 100_000
"""How many uses of a pointer LLVM's capture tracking follows before it gives up and calls the
pointer captured (LLVM's `-capture-tracking-max-uses-to-explore`, default 100). A register tile
(`loop.alloc local`, an `alloca`) has a load and a store per vector for each unrolled reduction
step: 14 vectors times 9 unrolled taps is 250 uses. Past the default, alias analysis calls the
tile captured, so it may alias every other pointer in the loop, LICM cannot promote it, and
the loop stores each accumulator to the stack after every FMA: a one-thread conv ran 1.8-3x
slower than the same nest outlined into a parallel body (whose `noalias` arguments, inlined as
scoped metadata, prove the same thing without capture tracking). Tracking is linear in the
uses, and dlc's kernels have a few thousand at most."""

_llvm_options_set = False


def _set_llvm_options() -> None:
    """Set dlc's LLVM command-line options once per process (LLVM's options are global)."""
    global _llvm_options_set
    if not _llvm_options_set:
        uses = CAPTURE_TRACKING_MAX_USES
        binding.set_option("dlc", f"-capture-tracking-max-uses-to-explore={uses}")
        _llvm_options_set = True


class JitError(RuntimeError):
    """LLVM rejected the IR (parse or verification error) or a symbol is missing."""


OPENMP_LIBRARY = "libgomp.so.1"
"""The OpenMP runtime that parallel loops call (`GOMP_parallel`, `omp_get_thread_num`)."""


_openmp_loaded = False


def uses_openmp(llvm_ir: str) -> bool:
    """Whether LLVM IR text calls the OpenMP runtime (a lowered `parallel` loop)."""
    return re.search(r'@"?GOMP_parallel"?\(', llvm_ir) is not None


def object_uses_openmp(code: bytes) -> bool:
    """Whether an object file calls the OpenMP runtime: its symbol table then names
    `GOMP_parallel` (an undefined symbol the linker or JIT must resolve from libgomp)."""
    return b"GOMP_parallel" in code


def load_openmp() -> None:
    """Load libgomp into the process (once) so that JIT code can call it; sets
    `OPENMP_ENVIRONMENT` first (libgomp reads it when it loads)."""
    global _openmp_loaded
    if _openmp_loaded:
        return
    prepare_openmp_environment()
    try:
        binding.load_library_permanently(OPENMP_LIBRARY)
    except RuntimeError as e:
        raise JitError(f"cannot load the OpenMP runtime {OPENMP_LIBRARY}: {e}") from None
    _openmp_loaded = True


def target_machine(
    target: CpuTarget, opt_level: int = 3, position_independent: bool = False
) -> binding.TargetMachine:
    """A fresh TargetMachine for `target` (its triple, CPU and `-mattr` features): for a JIT
    engine, or (`position_independent`) for an object file that goes into a shared library
    (of any architecture LLVM has a backend for: a cross compile makes another triple's)."""
    binding.initialize_all_targets()
    binding.initialize_all_asmprinters()
    try:
        llvm_target = binding.Target.from_triple(target.triple)
    except RuntimeError as e:
        raise JitError(f"LLVM has no backend for {target.triple}: {e}") from None
    return llvm_target.create_target_machine(
        cpu=target.cpu,
        features=target.llvm_features,
        opt=opt_level,
        reloc="pic" if position_independent else "default",
        codemodel="default" if position_independent else "jitdefault",
        jit=not position_independent,
    )


def parse_and_optimize(
    llvm_ir: str, machine: binding.TargetMachine, opt_level: int
) -> binding.ModuleRef:
    """Parse and verify `llvm_ir`, then run LLVM's default pipeline at `opt_level` (0-3)."""
    if not 0 <= opt_level <= 3:
        raise ValueError(f"expected an optimization level 0-3, found {opt_level}")
    try:
        module = binding.parse_assembly(llvm_ir)
        module.verify()
    except RuntimeError as e:
        raise JitError(f"invalid LLVM IR: {e}") from None
    if opt_level > 0:
        options = binding.create_pipeline_tuning_options(speed_level=opt_level)
        options.loop_unrolling = LLVM_HEURISTIC_UNROLLING
        with _optimization_lock:
            _set_llvm_options()
            builder = binding.create_pass_builder(machine, options)
            builder.getModulePassManager().run(module, builder)
    return module


class JitModule:
    """LLVM IR compiled to machine code in this process.

    Attributes:
        llvm_ir: the text it was compiled from (what `export_shared_library` needs).
        opt_level: the optimization level it was compiled at.
        target: the CPU it was compiled for (the IR's own, which the caller knows: the one it
            lowered for; default `dlc.target.DEFAULT_CPU_TARGET`, as the passes).
    """

    def __init__(
        self, llvm_ir: str, opt_level: int = 3, target: CpuTarget = DEFAULT_CPU_TARGET
    ) -> None:
        self.llvm_ir = llvm_ir
        self.opt_level = opt_level
        self.target = target
        process_arch = binding.get_process_triple().split("-", 1)[0]
        if target.arch != process_arch:
            raise JitError(
                f"expected a target of this process's architecture {process_arch} to run code "
                f"in process, found '{target}'"
            )
        self._machine = target_machine(target, opt_level)
        if uses_openmp(llvm_ir):
            load_openmp()
        from dlc.driver.thread_pool import load_pool, uses_pool

        if uses_pool(llvm_ir):
            load_pool()
        module = parse_and_optimize(llvm_ir, self._machine, opt_level)
        self._functions = {f.name for f in module.functions if not f.is_declaration}
        self._globals = {g.name for g in module.global_variables}
        self._engine = binding.create_mcjit_compiler(module, self._machine)
        self._engine.finalize_object()

    @property
    def function_names(self) -> frozenset[str]:
        """The functions the module defines."""
        return frozenset(self._functions)

    def address(self, name: str) -> int:
        """The address of the compiled function `name`."""
        if name not in self._functions:
            raise JitError(
                f"no function @{name} in the compiled module (defined: "
                f"{', '.join(sorted(self._functions)) or 'none'})"
            )
        return self._engine.get_function_address(name)

    def global_address(self, name: str) -> int:
        """The address of the global variable `name` (weights, metadata)."""
        if name not in self._globals:
            raise JitError(f"no global @{name} in the compiled module")
        return self._engine.get_global_value_address(name)

    def metadata_text(self) -> str | None:
        """The module's `dlc_metadata` JSON, or None if it has none."""
        if METADATA_SYMBOL not in self._globals:
            return None
        return ctypes.string_at(self.global_address(METADATA_SYMBOL)).decode()


def compile_llvm_ir(
    llvm_ir: str, opt_level: int = 3, target: CpuTarget = DEFAULT_CPU_TARGET
) -> JitModule:
    """JIT-compile LLVM IR text printed for `target`; function addresses are then available by
    name."""
    return JitModule(llvm_ir, opt_level, target)
