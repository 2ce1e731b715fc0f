"""dlc's compiler driver: a module -> object code per kernel + one entry unit + weights.

Counterpart: TVM's `relay.build` with the AOT executor: the model's `main` becomes one native
function that calls its kernels over a statically planned workspace (USMP), identical fused
functions are compiled once (the TE compiler's cache, here persistent: `driver.cache`), and
parameters are linked separately from code (`link-params=0`).

The named pipeline (default `cpu`) runs in two parts. The passes up to `loop-fold-constant-nests`
(schedules included: folding the packing of constant weights needs the kernels and their calls)
see the whole module; then every kernel (a private function with a body that reads no global and
calls nothing) becomes its own compile unit, named after its cache key, and the remaining passes
(lowering to LLVM) run on each unit separately, or not at all when the kernel's object code is in
the cache. What is left (the entry functions, the weights as globals, declarations of
the kernels) is the entry unit, whose constant globals become external symbols whose bytes stay
NumPy arrays: weights never go through LLVM IR text.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
from dlc.dialects.contracts import (
    BATCH_ENTRY_ATTR,
    NUM_OUTPUTS_ATTR,
    ONNX_NODES_ATTR,
    TARGET_ATTR,
    TUNED_ATTR,
    WORKSPACE_BYTES_ATTR,
)
from dlc.dialects.graph.custom import EXTERN_LIBRARY_ATTR, EXTERN_OP_ATTR
from dlc.dialects.loop.ops import AllocOp
from dlc.driver import thread_pool
from dlc.driver.artifact import CompiledModel, CompileStats, aligned_copy
from dlc.driver.cache import CompileCache, CompileOptions, digest
from dlc.driver.errors import CompileError
from dlc.pipelines import (
    PipelineError,
    applicable,
    index_of,
    named_pipeline,
    parse_pipeline,
    to_spec,
    with_options,
)
from dlc.rewrites.convert_loop_to_llvm import argument_names
from dlc.rewrites.llvm_lowering.batch import annotate_batch_costs
from dlc.rewrites.loop_apply_tuning_log import LoopApplyTuningLogPass, log_loop_lowering
from dlc.rewrites.loop_dedup_functions import num_inputs as entry_inputs
from dlc.rewrites.loop_dedup_functions import structural_hash
from dlc.rewrites.loop_plan_memory import (
    add_workspace_entry,
    buffer_bytes,
    element_bytes,
    is_entry_function,
)
from dlc.rewrites.tuning.log import tuning_key
from dlc.runtime.metadata import (
    METADATA_SYMBOL,
    MODEL_SYMBOL,
    KernelArgument,
    KernelCall,
    ModelInfo,
    encode_model_info,
    is_block_entry,
)
from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

PARTITION_AFTER = "loop-fold-constant-nests"
"""The last pass that sees the whole module; the passes after it run per compile unit."""

ANNOTATE_AFTER = "convert-graph-to-tensor-expr"
"""After this pass, each kernel is tagged with the ONNX nodes its computes carry."""

ENTRY_UNIT = "entry"
"""The name of the compile unit that holds the entry functions."""


# ---------------------------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------------------------


class Progress:
    """Progress lines on a stream (stderr), once a compile has taken longer than `delay`."""

    def __init__(
        self, label: str, enabled: bool = True, delay: float = 2.0, stream: TextIO | None = None
    ) -> None:
        self.label = label
        self.enabled = enabled
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.shown = False

    def stage(self, text: str) -> None:
        """Reports that the compile is now at `text`."""
        elapsed = time.perf_counter() - self.start
        if not self.enabled or elapsed < self.delay:
            return
        self.shown = True
        print(f"dlc: compiling {self.label}: {text} ({elapsed:.1f} s)", file=self.stream,
              flush=True)

    def done(self) -> None:
        """Reports the end (only if progress was shown)."""
        if self.shown:
            elapsed = time.perf_counter() - self.start
            print(f"dlc: compiled {self.label} in {elapsed:.1f} s", file=self.stream, flush=True)


# ---------------------------------------------------------------------------------------------
# The pipeline
# ---------------------------------------------------------------------------------------------


def pipeline_passes(
    module: ModuleOp, pipeline: str, threads: int | None, tuning_log: Path | None = None,
    tuning_target: str = "", check_bounds: bool = False, precision: str = "fp32",
) -> tuple[ModulePass, ...]:
    """The passes the named `pipeline` runs on `module`: expanded, those for levels above the
    module's skipped, thread counts set (unless `threads` is None), bounds checks on with
    `check_bounds` (the passes with a `check_bounds` option) and, with a `tuning_log`,
    the loop lowering the log's tasks were made with followed by `loop-apply-tuning-log` (at
    the start for a loop-level module), and with `precision` bf16 or f16,
    `graph-to-low-precision{type=...}` after the graph folds (`with_precision`).

    Raises:
        CompileError: no such pipeline.
    """
    try:
        passes = named_pipeline(pipeline)
    except PipelineError as e:
        raise CompileError(str(e)) from None
    if threads is not None:
        passes = with_options(passes, threads=threads)
    passes = with_options(passes, parallel_runtime=thread_pool.parallel_runtime())
    if check_bounds:
        passes = with_options(passes, check_bounds=True)
    passes = with_precision(passes, precision)
    passes = applicable(module, passes)
    if tuning_log is not None:
        passes = with_tuning_log(passes, tuning_log, tuning_target)
    return passes


PRECISIONS = {"fp32": None, "bf16": "bf16", "f16": "f16", "fp16": "f16"}
"""The `precision` values `dlc.compile` takes, with the `graph-to-low-precision` type of each."""


def with_precision(passes: tuple[ModulePass, ...], precision: str) -> tuple[ModulePass, ...]:
    """`passes` with `graph-to-low-precision{type=...}` for `precision` (bf16, f16) inserted
    after the graph folds (batch norms are folded into the f32 weights first, then rounded
    once), before the first of `LOW_PRECISION_BEFORE`; `passes` itself for fp32.

    Raises:
        CompileError: an unknown precision, or a pipeline with none of those passes.
    """
    if precision not in PRECISIONS:
        raise CompileError(
            f"expected precision fp32, bf16 or f16, found '{precision}'"
        )
    low = PRECISIONS[precision]
    if low is None:
        return passes
    from dlc.rewrites.graph_to_low_precision import GraphToLowPrecisionPass

    positions = [i for i in (index_of(passes, n) for n in LOW_PRECISION_BEFORE) if i is not None]
    if not positions:
        raise CompileError(
            f"precision {precision}: the pipeline has none of {', '.join(LOW_PRECISION_BEFORE)} "
            "to place graph-to-low-precision before"
        )
    at = min(positions)
    return (*passes[:at], GraphToLowPrecisionPass(type=low), *passes[at:])


LOW_PRECISION_BEFORE = (
    "graph-conv-transpose-to-subpixel", "graph-winograd-conv", "graph-fuse-ops",
    "convert-graph-to-tensor-expr",
)
"""`graph-to-low-precision` goes right before the first of these passes."""


def with_tuning_log(
    passes: tuple[ModulePass, ...], tuning_log: Path, target: str
) -> tuple[ModulePass, ...]:
    """`passes` with `loop-apply-tuning-log` after the loop lowering, which is the log's own
    (its header says how its tasks were lowered), so that kernels have the canonical IR, hence
    the workload keys, that tuning saw."""
    apply = LoopApplyTuningLogPass(log=str(tuning_log), target=target)
    lowering = index_of(passes, TUNE_AFTER)
    if lowering is None:
        return (apply, *passes)
    spec = log_loop_lowering(tuning_log)
    logged = None if spec is None else index_of(parse_pipeline(spec), TUNE_AFTER)
    lowered_as_logged = passes[lowering] if logged is None else parse_pipeline(spec)[logged]
    return (*passes[:lowering], lowered_as_logged, apply, *passes[lowering + 1:])


TUNE_AFTER = "convert-tensor-expr-to-loop"
"""A tuning log is applied right after this pass (before `loop-dedup-functions`)."""


def whole_module_passes(
    module: ModuleOp, options: CompileOptions, ctx: Context, stats: CompileStats | None = None,
    progress: Progress | None = None,
) -> tuple[tuple[ModulePass, ...], dict[str, str]]:
    """Runs the passes of `options.pipeline` that see the whole module (up to
    `PARTITION_AFTER`), `loop-apply-tuning-log` among them when `options.tuning_log` is set;
    returns the per-unit passes still to run and {function: workload key} of the tuned
    functions. The module's `dlc.target` is set first: `options.target` resolved (`host`:
    this machine), which every pass with a target option reads."""
    target = options.cpu_target()
    module.attributes[TARGET_ATTR] = StringAttr(str(target))
    key = tuning_key(target) if options.tuning_log is not None else ""
    passes = pipeline_passes(
        module, options.pipeline, options.threads, options.tuning_log, key, options.check_bounds,
        options.precision,
    )
    partition = index_of(passes, PARTITION_AFTER)
    split = len(passes) if partition is None else partition + 1
    run_passes(module, passes[:split], ctx, stats, progress)
    if split < len(passes):  # the kernels are compiled apart from the entries that call them
        annotate_batch_costs(module, max(1, target.vector_bits // 32), target.l2_bytes or 0)
    tuned = {
        op.sym_name.data: op.attributes[TUNED_ATTR].data  # type: ignore[union-attr]
        for op in module.ops
        if isinstance(op, func.FuncOp) and TUNED_ATTR in op.attributes
    }
    if stats is not None and options.tuning_log is not None:
        stats.tuned = sorted(tuned)
        stats.kept_default = sorted(
            op.sym_name.data for op in module.ops
            if isinstance(op, func.FuncOp) and NUM_OUTPUTS_ATTR in op.attributes
            and op.sym_name.data not in tuned and not op.is_declaration
            and not any(isinstance(inner, func.CallOp) for inner in op.walk())
        )
    return passes[split:], tuned


def run_passes(
    module: ModuleOp, passes: Sequence[ModulePass], ctx: Context,
    stats: CompileStats | None = None, progress: Progress | None = None,
) -> None:
    """Runs `passes` on `module` one at a time, timed into `stats`; the kernels are tagged with
    their ONNX nodes after `ANNOTATE_AFTER`."""
    for module_pass in passes:
        start = time.perf_counter()
        module_pass.apply(ctx, module)
        if stats is not None:
            name = module_pass.name
            stats.seconds[name] = stats.seconds.get(name, 0.0) + time.perf_counter() - start
        if module_pass.name == ANNOTATE_AFTER:
            annotate_onnx_nodes(module)
        if progress is not None:
            progress.stage(f"ran {module_pass.name}")


def annotate_onnx_nodes(module: ModuleOp) -> None:
    """Tags each private function with `dlc.onnx_nodes`: the distinct `onnx_node` attributes of
    the ops in it, in order (tensor_expr level; `loop-dedup-functions` moves them to calls)."""
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        nodes: dict[str, None] = {}
        for op in function.walk():
            node = op.attributes.get("onnx_node")
            if isinstance(node, StringAttr):
                nodes[node.data] = None
        if nodes:
            function.attributes[ONNX_NODES_ATTR] = ArrayAttr(StringAttr(n) for n in nodes)


# ---------------------------------------------------------------------------------------------
# Compile units
# ---------------------------------------------------------------------------------------------


def standalone_kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The private functions with a body that read no global and call nothing: each can be
    compiled on its own."""
    found: list[func.FuncOp] = []
    for op in module.ops:
        if not isinstance(op, func.FuncOp) or not op.body.blocks:
            continue
        if op.sym_visibility != StringAttr("private"):
            continue
        if any(isinstance(inner, memref.GetGlobalOp | func.CallOp) for inner in op.walk()):
            continue
        found.append(op)
    return found


def kernel_symbol(key: str) -> str:
    """The linker symbol of the kernel whose cache key is `key`: the same in every model."""
    return f"dlc_kernel_{key[:20]}"


def rename_kernels(module: ModuleOp, symbols: dict[func.FuncOp, str]) -> None:
    """Renames each kernel of `symbols` to its symbol and retargets its calls (one walk)."""
    new_names = {kernel.sym_name.data: symbol for kernel, symbol in symbols.items()}
    for op in module.walk():
        if isinstance(op, func.CallOp) and (new := new_names.get(op.callee.string_value())):
            op.properties["callee"] = SymbolRefAttr(new)
    for kernel, symbol in symbols.items():
        kernel.sym_name = StringAttr(symbol)


def split_kernel(kernel: func.FuncOp) -> ModuleOp:
    """Moves `kernel` into a module of its own (with the `dlc.target` of the module it leaves),
    leaving a declaration in its place."""
    parent = kernel.parent_op()
    target = parent.attributes.get(TARGET_ATTR) if isinstance(parent, ModuleOp) else None
    declaration = func.FuncOp.external(
        kernel.sym_name.data, kernel.function_type.inputs.data,
        kernel.function_type.outputs.data,
    )
    Rewriter.insert_op(declaration, InsertPoint.before(kernel))
    kernel.detach()
    unit = ModuleOp([kernel])
    if target is not None:
        unit.attributes[TARGET_ATTR] = target
    return unit


def publish_kernel(unit: ModuleOp, symbol: str) -> None:
    """Gives the lowered kernel `symbol` external linkage (it is called from the entry unit)."""
    for op in unit.ops:
        if isinstance(op, llvm.FuncOp) and op.sym_name.data == symbol:
            op.linkage = llvm.LinkageAttr("external")
            return
    raise CompileError(f"kernel @{symbol} was not lowered to an llvm.func")


# ---------------------------------------------------------------------------------------------
# The model description and the weights
# ---------------------------------------------------------------------------------------------


def _dtype_name(memref_type: MemRefType) -> str | None:
    from dlc.rewrites.convert_loop_to_llvm import numpy_dtype_name
    from dlc.rewrites.llvm_lowering.common import LLVMLowering

    return numpy_dtype_name(memref_type.get_element_type(), LLVMLowering())


def _argument(value: SSAValue, entry: func.FuncOp, num_inputs: int) -> KernelArgument | None:
    memref_type = value.type
    if not isinstance(memref_type, MemRefType) or not memref_type.has_static_shape():
        return None  # a scalar, or rows of a runtime count: the call is not replayed alone
    dtype = _dtype_name(memref_type)
    if dtype is None:
        return None
    shape = memref_type.get_shape()
    if isinstance(value, BlockArgument) and value.block is entry.body.block:
        if value.index < num_inputs:
            return KernelArgument("input", shape, dtype, index=value.index)
        return KernelArgument("output", shape, dtype, index=value.index - num_inputs)
    owner = value.owner
    if isinstance(owner, memref.GetGlobalOp):
        return KernelArgument("weight", shape, dtype, symbol=owner.name_.string_value())
    if (
        isinstance(owner, memref.ViewOp)
        and isinstance(owner.byte_shift.owner, arith.ConstantOp)
        and isinstance(owner.byte_shift.owner.value, IntegerAttr)
    ):
        return KernelArgument(
            "workspace", shape, dtype, offset=owner.byte_shift.owner.value.value.data
        )
    return None


def describe_model(
    module: ModuleOp, display_names: dict[str, str]
) -> tuple[ModelInfo | None, int]:
    """The model description of `module`'s only entry function (None if it has several or
    none; the block entry of a dynamic batch, `<entry>__rows<k>`, does not count), and the bytes
    its intermediates would take unplanned. Loop level, after planning."""
    entries = [op for op in module.ops if is_entry_function(op)]
    names = {op.sym_name.data for op in entries if isinstance(op, func.FuncOp)}
    entries = [op for op in entries
               if isinstance(op, func.FuncOp) and not is_block_entry(op.sym_name.data, names)]
    if len(entries) != 1:
        return None, 0
    entry = entries[0]
    assert isinstance(entry, func.FuncOp)
    num_outputs_attr = entry.attributes[NUM_OUTPUTS_ATTR]
    assert isinstance(num_outputs_attr, IntegerAttr)
    num_inputs = entry_inputs(entry)
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    calls: list[KernelCall] = []
    unplanned = 0
    for op in entry.body.block.ops:
        if isinstance(op, memref.ViewOp) and isinstance(op.result.type, MemRefType):
            unplanned += buffer_bytes(op.result.type) or 0
        if not isinstance(op, func.CallOp):
            continue
        arguments = [_argument(value, entry, num_inputs) for value in op.arguments]
        symbol = op.callee.string_value()
        callee = functions.get(symbol)
        nodes = op.attributes.get(ONNX_NODES_ATTR) or (
            callee.attributes.get(ONNX_NODES_ATTR) if callee is not None else None
        )
        calls.append(KernelCall(
            display_names.get(symbol, symbol),
            tuple(n.data for n in nodes.data) if isinstance(nodes, ArrayAttr) else (),
            tuple(a for a in arguments if a is not None)
            if all(a is not None for a in arguments) and not op.results else (),
            symbol,
        ))
    names = argument_names(entry, num_outputs_attr.value.data)
    workspace = entry.attributes.get(WORKSPACE_BYTES_ATTR)
    called = {call.symbol for call in calls}
    info = ModelInfo(
        entry.sym_name.data,
        tuple(names[:num_inputs]),
        tuple(names[num_inputs:num_inputs + num_outputs_attr.value.data]),
        workspace.value.data if isinstance(workspace, IntegerAttr) else 0,
        0,
        tuple(calls),
        max((own_buffer_bytes(f) for name, f in functions.items() if name in called), default=0),
    )
    return info, unplanned


def own_buffer_bytes(function: func.FuncOp) -> int:
    """The bytes of the buffers `function` allocates itself (`loop.alloc`, `memref.alloc`; an
    upper bound of its heap use: the small local ones go on the stack)."""
    return sum(
        buffer_bytes(op.result.type) or 0
        for op in function.walk()
        if isinstance(op, AllocOp | memref.AllocOp) and isinstance(op.result.type, MemRefType)
    )


def _global_bytes(op: llvm.GlobalOp, value: DenseIntOrFPElementsAttr) -> bytes:
    raw = bytes(value.data.data)
    count = 1
    for size in value.get_shape():
        count *= size
    element = element_bytes(value.get_element_type())
    if element is None:
        raise CompileError(
            f"'llvm.mlir.global' op @{op.sym_name.data}: expected constant data of a scalar "
            f"element type, found {value.get_element_type()}"
        )
    if len(raw) == element * count:
        return raw
    if len(raw) == element:
        return raw * count
    raise CompileError(
        f"'llvm.mlir.global' op @{op.sym_name.data}: expected {element * count} bytes of "
        f"data, found {len(raw)}"
    )


def externalize_constants(module: ModuleOp) -> dict[str, np.ndarray]:
    """Turns every constant global with dense data into an external declaration and returns
    the data by symbol (aligned, read-only): the linker or the JIT supplies the bytes."""
    weights: dict[str, np.ndarray] = {}
    for op in module.ops:
        if not isinstance(op, llvm.GlobalOp) or op.constant is None:
            continue
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr):
            continue
        weights[op.sym_name.data] = aligned_copy(_global_bytes(op, value))
        op.properties.pop("value")
        op.linkage = llvm.LinkageAttr("external")
    return weights


def string_global(symbol: str, text: str) -> llvm.GlobalOp:
    """`llvm.mlir.global external constant @symbol("<text>\\00")`."""
    data = text + "\0"
    return llvm.GlobalOp(
        llvm.LLVMArrayType(len(data), IntegerType(8)), symbol, "external", constant=True,
        value=StringAttr(data),
    )


# ---------------------------------------------------------------------------------------------
# LLVM
# ---------------------------------------------------------------------------------------------


def emit_object(unit: ModuleOp, opt_level: int) -> tuple[bytes, bool]:
    """Position-independent object code for an llvm-dialect `unit`, for the target it was
    lowered for (its `dlc.target`: the emitter prints it, the TargetMachine is made from it),
    and whether it calls the OpenMP runtime."""
    from dlc.codegen.llvm import emit_llvm_ir, module_cpu_target
    from dlc.driver.jit import JitError, parse_and_optimize, target_machine, uses_openmp

    try:
        text = emit_llvm_ir(unit)
        target = module_cpu_target(unit)
    except DiagnosticException as e:
        raise CompileError(str(e)) from None
    machine = target_machine(target, opt_level, position_independent=True)
    try:
        module = parse_and_optimize(text, machine, opt_level)
    except JitError as e:
        raise CompileError(str(e)) from None
    return machine.emit_object(module), uses_openmp(text)


# ---------------------------------------------------------------------------------------------
# Compiling a kernel unit
# ---------------------------------------------------------------------------------------------

UnitResult = tuple[bytes, bool, dict[str, float]]
"""A compiled unit: object code, whether it calls OpenMP, seconds per stage."""


def compile_kernel(
    unit: ModuleOp, symbol: str, suffix: Sequence[ModulePass], ctx: Context, opt_level: int
) -> UnitResult:
    """Runs the per-unit passes (schedules, lowering) and LLVM on one kernel's module."""
    stats = CompileStats()
    run_passes(unit, suffix, ctx, stats)
    publish_kernel(unit, symbol)
    start = time.perf_counter()
    code, openmp = emit_object(unit, opt_level)
    stats.seconds["llvm"] = time.perf_counter() - start
    return code, openmp, stats.seconds


_FORKED_WORK: tuple[list[tuple[str, ModuleOp]], list[str], Context, int] | None = None
"""What forked workers compile (set just before the pool forks)."""


def _compile_forked(index: int) -> tuple[int, UnitResult | None, str | None]:
    assert _FORKED_WORK is not None, "set before forking"
    pending, suffix, ctx, opt_level = _FORKED_WORK
    symbol, unit = pending[index]
    try:
        return index, compile_kernel(unit, symbol, suffix, ctx, opt_level), None
    except Exception as e:  # noqa: BLE001 - reported by the parent as a CompileError
        return index, None, str(e) or type(e).__name__


# ---------------------------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------------------------


@dataclass
class _Driver:
    module: ModuleOp
    options: CompileOptions
    cache: CompileCache | None
    progress: Progress
    ctx: Context

    jobs: int = 1

    def __post_init__(self) -> None:
        self.stats = CompileStats()
        self.kernel_keys: dict[str, str] = {}
        self.tuned: dict[str, str] = {}
        self.objects: dict[str, bytes] = {}
        self.uses_openmp = False

    def run(self) -> CompiledModel:
        suffix, self.tuned = whole_module_passes(
            self.module, self.options, self.ctx, self.stats, self.progress
        )
        kernels = standalone_kernels(self.module) if suffix else []
        fingerprint = self.options.fingerprint() + "|" + to_spec(suffix)
        display: dict[str, str] = {}
        units: list[tuple[str, str, func.FuncOp]] = []
        symbols: dict[func.FuncOp, str] = {}
        copies: list[func.FuncOp] = []
        for kernel in kernels:
            key = digest(fingerprint, structural_hash(kernel))
            symbol = kernel_symbol(key)
            symbols[kernel] = symbol
            if symbol in display:  # a copy that loop-dedup-functions did not merge
                copies.append(kernel)
                continue
            display[symbol] = kernel.sym_name.data
            units.append((symbol, key, kernel))
        rename_kernels(self.module, symbols)
        for kernel in copies:
            Rewriter.erase_op(kernel)
        info, unplanned = describe_model(self.module, display)
        from dlc.driver.jit import object_uses_openmp

        pending: list[tuple[str, ModuleOp]] = []
        for symbol, key, kernel in units:
            unit = split_kernel(kernel)
            self.kernel_keys[symbol] = key
            cached = self.cache.load_object(key) if self.cache is not None else None
            if cached is None:
                pending.append((symbol, unit))
            else:
                self.objects[symbol] = cached
                self.uses_openmp |= object_uses_openmp(cached)
                self.stats.kernels_cached += 1
        for count, (symbol, result) in enumerate(self._compile_kernels(pending, suffix), 1):
            self.progress.stage(f"compiled kernel {count}/{len(pending)} ({display[symbol]})")
            code, openmp, seconds = result
            for stage, value in seconds.items():
                self.stats.seconds[stage] = self.stats.seconds.get(stage, 0.0) + value
            self.uses_openmp |= openmp
            self.objects[symbol] = code
            if self.cache is not None:
                self.cache.store_object(self.kernel_keys[symbol], code)
        self.objects = {s: self.objects[s] for s, _, _ in units}
        self.progress.stage("entry function")
        weights = self._entry(suffix, info)
        exports = self._exports()
        stats = self.stats
        stats.kernels = len(units)
        stats.calls = len(info.calls) if info is not None else 0
        stats.workspace_bytes = info.workspace_bytes if info is not None else 0
        stats.unplanned_bytes = unplanned
        stats.weight_bytes = sum(w.nbytes for w in weights.values())
        return CompiledModel(self.objects, weights, exports, self.uses_openmp, stats,
                             self._string_global(METADATA_SYMBOL),
                             self._string_global(MODEL_SYMBOL), extern_functions(self.module))

    def _string_global(self, symbol: str) -> str:
        """The text of the entry unit's string global `symbol` (without its NUL), or ""."""
        for op in self.module.ops:
            if (isinstance(op, llvm.GlobalOp) and op.sym_name.data == symbol
                    and isinstance(op.value, StringAttr)):
                return op.value.data.rstrip("\0")
        return ""

    def _compile_kernels(
        self, pending: list[tuple[str, ModuleOp]], suffix: Sequence[ModulePass]
    ) -> Iterator[tuple[str, UnitResult]]:
        """Compiles the kernel units, in worker processes when there are several and more than
        one job (forked: they inherit the units; only object code comes back)."""
        jobs = min(self.jobs, len(pending))
        if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            for symbol, unit in pending:
                yield symbol, compile_kernel(unit, symbol, suffix, self.ctx,
                                             self.options.opt_level)
            return
        global _FORKED_WORK
        _FORKED_WORK = (pending, suffix, self.ctx, self.options.opt_level)
        # Largest first (by op count), one at a time: no worker is left with a big kernel
        # while the others idle.
        sizes = [sum(1 for _ in unit.walk()) for _, unit in pending]
        order = sorted(range(len(pending)), key=lambda index: -sizes[index])
        # The workers inherit the whole model's IR: frozen, the cyclic garbage collector skips
        # it (each full collection would walk it again in every worker while the lowering
        # allocates) and does not write to its pages (no copy-on-write).
        gc.freeze()
        try:
            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                for index, result, error in pool.imap_unordered(_compile_forked, order,
                                                                chunksize=1):
                    if error is not None:
                        raise CompileError(error)
                    assert result is not None
                    yield pending[index][0], result
        finally:
            gc.unfreeze()
            _FORKED_WORK = None

    def _entry(
        self, suffix: Sequence[ModulePass], info: ModelInfo | None
    ) -> dict[str, np.ndarray]:
        for function in [op for op in self.module.ops if is_entry_function(op)]:
            assert isinstance(function, func.FuncOp)
            add_workspace_entry(function)  # for a caller that owns memory (the C API)
        run_passes(self.module, suffix, self.ctx, self.stats)
        weights = externalize_constants(self.module)
        if info is not None:
            info = ModelInfo(
                info.entry, info.input_names, info.output_names, info.workspace_bytes,
                sum(w.nbytes for w in weights.values()), info.calls, info.kernel_buffer_bytes,
            )
            self.module.body.block.add_op(string_global(MODEL_SYMBOL, encode_model_info(info)))
        start = time.perf_counter()
        code, openmp = emit_object(self.module, self.options.opt_level)
        self.stats.seconds["llvm"] = self.stats.seconds.get("llvm", 0.0) + (
            time.perf_counter() - start
        )
        self.uses_openmp |= openmp
        self.objects = {ENTRY_UNIT: code, **self.objects}
        return weights

    def _exports(self) -> tuple[str, ...]:
        symbols = [
            op.sym_name.data
            for op in self.module.ops
            if isinstance(op, llvm.FuncOp)
            and (NUM_OUTPUTS_ATTR in op.attributes or BATCH_ENTRY_ATTR in op.attributes)
            and op.linkage.linkage.data == "external" and op.body.blocks
        ]
        symbols += [s for s in self.objects if s != ENTRY_UNIT]
        for op in self.module.ops:
            if isinstance(op, llvm.GlobalOp) and op.sym_name.data in (
                METADATA_SYMBOL, MODEL_SYMBOL
            ):
                symbols.append(op.sym_name.data)
        return tuple(dict.fromkeys(symbols))


def extern_functions(module: ModuleOp) -> dict[str, tuple[str, str]]:
    """The external functions the lowered entry unit declares for custom ops, by symbol:
    (library, custom op) from their `dlc.extern_library` and `dlc.extern_op` attributes."""
    found: dict[str, tuple[str, str]] = {}
    for op in module.ops:
        library = op.attributes.get(EXTERN_LIBRARY_ATTR)
        if isinstance(op, llvm.FuncOp) and isinstance(library, StringAttr):
            custom = op.attributes.get(EXTERN_OP_ATTR)
            name = custom.data if isinstance(custom, StringAttr) else "?"
            found[op.sym_name.data] = (library.data, name)
    return found


def default_jobs() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1


GC_THRESHOLD_WHILE_COMPILING = (200_000, 30, 30)
"""The garbage collector's thresholds while a model compiles (Python's default: 700, 10, 10).
The passes allocate millions of IR objects that nearly all stay alive, so most collections
find nothing and the full ones walk the whole model again (mypy raises them the same way).
ResNet-18 cold compile, fresh processes interleaved: 4.70/4.47/3.90/3.86 s ->
4.43/4.00/3.81/4.03 s."""


@contextmanager
def _fewer_collections() -> Iterator[None]:
    thresholds = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD_WHILE_COMPILING)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def compile_module(
    module: ModuleOp,
    options: CompileOptions,
    cache: CompileCache | None = None,
    progress: Progress | None = None,
    ctx: Context | None = None,
    jobs: int | None = None,
) -> tuple[CompiledModel, dict[str, str]]:
    """Compiles `module` (modified in place) into a `CompiledModel`; also returns the cache keys
    of its kernels by symbol. Kernels not in the cache compile in `jobs` processes (default: one
    per CPU). Failures of passes or LLVM are `CompileError`s."""
    from dlc.dialects import make_context

    driver = _Driver(module, options, cache, progress or Progress("module", False),
                     ctx or make_context(), jobs if jobs is not None else default_jobs())
    with _fewer_collections():
        return driver.run(), driver.kernel_keys
