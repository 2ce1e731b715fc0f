"""The `convert-loop-to-llvm` pass: dlc's loop-level IR -> the llvm dialect, for a CPU target.

Counterpart: MLIR's `convert-{scf-to-cf,cf,arith,math,func,index,vector}-to-llvm` and
`finalize-memref-to-llvm` run as one conversion; TVM's `codegen_cpu` lowering of TIR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.contracts import (
    BATCH_ROWS_ATTR,
    DIM_ARGS_ATTR,
    DIM_SIZES_ATTR,
    DIM_SYMBOLS_ATTR,
    NUM_OUTPUTS_ATTR,
    ONNX_NAME_ATTR,
    SIZE_CHECKS_ATTR,
    TARGET_ATTR,
    UNSIGNED_ATTR,
    VALID_EXTENT_ATTR,
)
from dlc.dialects.loop import dim_args
from dlc.dialects.memref_layout import is_identity_layout
from dlc.rewrites.llvm_lowering.arith import arith_to_llvm_patterns
from dlc.rewrites.llvm_lowering.batch import (
    batch_costs,
    batch_entries,
    batched_entries,
    declare_scratch_functions,
    entry_constants,
    has_padded_tail,
)
from dlc.rewrites.llvm_lowering.bf16 import legalize_bf16_arith
from dlc.rewrites.llvm_lowering.bounds import annotate_access_sites, expand_bounds_checks
from dlc.rewrites.llvm_lowering.cf import WhileLowering, cf_to_llvm_patterns
from dlc.rewrites.llvm_lowering.common import LLVMLowering
from dlc.rewrites.llvm_lowering.func import func_to_llvm_patterns
from dlc.rewrites.llvm_lowering.index import index_to_llvm_patterns
from dlc.rewrites.llvm_lowering.intrinsic import intrinsic_to_llvm_patterns
from dlc.rewrites.llvm_lowering.math import math_to_llvm_patterns
from dlc.rewrites.llvm_lowering.memref import memref_to_llvm_patterns
from dlc.rewrites.llvm_lowering.vector import vector_to_llvm_patterns
from dlc.rewrites.output_sizes import check_exprs, size_exprs
from dlc.rewrites.pass_target import cpu_target_for
from dlc.rewrites.pattern_dispatch import TypeDispatchApplier
from dlc.runtime.metadata import (
    METADATA_SYMBOL,
    ArgumentSpec,
    FunctionSignature,
    encode_metadata,
)
from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker, RewritePattern
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering
from xdsl.transforms.reconcile_unrealized_casts import reconcile_unrealized_casts
from xdsl.utils.exceptions import PassFailedException

HIGHER_LEVEL_DIALECTS = ("graph", "tensor_expr", "target_gpu")
"""Dialects that must be lowered before this pass; meeting one is an error, not a partial run."""

LOWERED_DIALECTS = ("llvm",)
"""The only dialect (besides `builtin.module`) the pass leaves behind."""


def structure_patterns(lowering: LLVMLowering | None = None) -> list[RewritePattern]:
    """Patterns that turn structured control flow (`loop.for`, `loop.block`, `scf.for`,
    `scf.if`, `scf.while`) into `cf` branches (vectorized loops into vector code, parallel
    loops into outlined functions run by `GOMP_parallel`)."""
    from dlc.rewrites.llvm_lowering.loop import loop_structure_patterns

    return [*loop_structure_patterns(lowering or LLVMLowering()), ForLowering(), IfLowering(),
            WhileLowering()]


def op_patterns(lowering: LLVMLowering, noalias_entry_arguments: bool) -> list[RewritePattern]:
    """Patterns that lower every remaining op to the llvm dialect, one op at a time."""
    from dlc.rewrites.llvm_lowering.loop import loop_memory_patterns

    return [
        *func_to_llvm_patterns(lowering, noalias_entry_arguments),
        *cf_to_llvm_patterns(lowering),
        *arith_to_llvm_patterns(lowering),
        *index_to_llvm_patterns(lowering),
        *math_to_llvm_patterns(lowering),
        *memref_to_llvm_patterns(lowering),
        *vector_to_llvm_patterns(lowering),
        *intrinsic_to_llvm_patterns(lowering),
        *loop_memory_patterns(lowering),
    ]


def numpy_dtype_name(element_type: Attribute, lowering: LLVMLowering) -> str | None:
    """The NumPy dtype name of a memref element type, or None if NumPy has none."""
    if isinstance(element_type, IndexType):
        return f"int{lowering.index_bitwidth}"
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return "bool"
        if width not in (8, 16, 32, 64):
            return None
        unsigned = element_type.signedness.data == Signedness.UNSIGNED
        return f"{'uint' if unsigned else 'int'}{width}"
    names = {Float16Type: "float16", BFloat16Type: "bfloat16", Float32Type: "float32",
             Float64Type: "float64"}
    return names.get(type(element_type))


def entry_signature(function: func.FuncOp, lowering: LLVMLowering) -> FunctionSignature:
    """The signature of a destination-passing-style entry function (one with
    `dlc.num_outputs`), after checking that it is one. An integer argument marked
    `dlc.unsigned` (a tensor that was unsigned in the graph) has NumPy dtype `uint<N>`."""
    name = function.sym_name.data
    attr = function.attributes[NUM_OUTPUTS_ATTR]
    if not isinstance(attr, IntegerAttr):
        raise PassFailedException(
            f"'func.func' op expected {NUM_OUTPUTS_ATTR} of @{name} to be an integer, "
            f"found {attr}"
        )
    num_outputs = attr.value.data
    inputs = function.function_type.inputs.data
    if function.function_type.outputs.data:
        raise PassFailedException(
            f"'func.func' op expected entry function @{name} to return nothing (outputs are "
            f"arguments), found {len(function.function_type.outputs.data)} results"
        )
    if not 0 <= num_outputs <= len(inputs):
        raise PassFailedException(
            f"'func.func' op expected {NUM_OUTPUTS_ATTR} of @{name} between 0 and "
            f"{len(inputs)}, found {num_outputs}"
        )
    dims = dim_args(function)
    if len(dims) > len(inputs) - num_outputs or any(
        not isinstance(type_, IndexType) for type_ in inputs[len(inputs) - len(dims):]
    ):
        raise PassFailedException(
            f"'func.func' op expected the last {len(dims)} arguments of entry function @{name} "
            f"to be the index sizes of {DIM_ARGS_ATTR}, found {list(inputs)}"
        )
    inputs = inputs[: len(inputs) - len(dims)]
    for argument, dim in dims:
        type_ = inputs[argument] if 0 <= argument < len(inputs) else None
        shape = type_.get_shape() if isinstance(type_, MemRefType) else ()
        if not 0 <= dim < len(shape) or shape[dim] >= 0:
            raise PassFailedException(
                f"'func.func' op expected {DIM_ARGS_ATTR} of @{name} to name dynamic dims of "
                f"memref arguments, found ({argument}, {dim})"
            )
    arg_names = argument_names(function, num_outputs)
    arg_attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
    arguments: list[ArgumentSpec] = []
    for index, type_ in enumerate(inputs):
        dtype = None
        if isinstance(type_, MemRefType):
            dtype = numpy_dtype_name(type_.get_element_type(), lowering)
        unsigned = index < len(arg_attrs) and UNSIGNED_ATTR in arg_attrs[index].data
        if unsigned and dtype is not None and dtype.startswith("int"):
            dtype = f"u{dtype}"
        if dtype is None or not is_identity_layout(type_):
            raise PassFailedException(
                f"'func.func' op expected argument {index} of entry function @{name} to be a "
                f"row-major memref with a NumPy element type, found {type_}"
            )
        batch = arg_attrs[index].data.get(BATCH_ROWS_ATTR) if index < len(arg_attrs) else None
        shape = type_.get_shape()
        if batch is None and index < len(arg_attrs) and shape and shape[0] < 0 and all(
                d >= 0 for d in shape[1:]):
            batch = _leading_symbol(arg_attrs[index])  # runtime rows of a named batch
        size_map = arg_attrs[index].data.get(DIM_SIZES_ATTR) if index < len(arg_attrs) else None
        arguments.append(ArgumentSpec(
            arg_names[index], tuple(max(size, -1) for size in type_.get_shape()), dtype,
            batch.data if isinstance(batch, StringAttr) else "",
            size_exprs(size_map) if isinstance(size_map, AffineMapAttr) else ()))
    first_output = len(inputs) - num_outputs
    extents = []
    for index in range(first_output, len(inputs)):
        marked = arg_attrs[index].data.get(VALID_EXTENT_ATTR) if index < len(arg_attrs) else None
        if isinstance(marked, DenseArrayBase):
            axis, count = (int(v) for v in marked.get_values())
            extents.append((index - first_output, axis, count))
    checks = function.attributes.get(SIZE_CHECKS_ATTR)
    return FunctionSignature(
        name, tuple(arguments), num_outputs, tuple(extents), tuple(dims),
        tuple(check_exprs(entry) for entry in checks.data)
        if isinstance(checks, ArrayAttr) and dims else ())


def _leading_symbol(attrs: DictionaryAttr) -> StringAttr | None:
    """The symbol of an argument's leading dim (`dlc.dim_symbols`), if it names one."""
    symbols = attrs.data.get(DIM_SYMBOLS_ATTR)
    if isinstance(symbols, ArrayAttr) and symbols.data:
        first = symbols.data[0]
        if isinstance(first, StringAttr) and first.data:
            return first
    return None


def argument_names(function: func.FuncOp, num_outputs: int) -> list[str]:
    """The names of an entry function's arguments as every runtime reports them (`dlc run`,
    `dlc-run`, CPU and GPU executables alike): the ONNX name (`onnx.name`) where the model came
    from ONNX; else an input's SSA name (or `arg<i>`), and `<function>_out<i>` for output i."""
    name = function.sym_name.data
    num_arguments = len(function.function_type.inputs.data) - len(dim_args(function))
    num_inputs = num_arguments - num_outputs
    attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
    hints = [arg.name_hint for arg in function.args] if function.body.blocks else []
    names: list[str] = []
    for index in range(num_arguments):
        onnx_name = attrs[index].data.get(ONNX_NAME_ATTR) if index < len(attrs) else None
        if isinstance(onnx_name, StringAttr):
            names.append(onnx_name.data)
        elif index >= num_inputs:
            names.append(f"{name}_out{index - num_inputs}")
        else:
            hint = hints[index] if index < len(hints) else None
            names.append(hint or f"arg{index}")
    return names


def metadata_global(signatures: list[FunctionSignature]) -> llvm.GlobalOp:
    """`llvm.mlir.global external constant @dlc_metadata("<json>\\00")`."""
    text = encode_metadata(signatures) + "\0"
    return llvm.GlobalOp(
        llvm.LLVMArrayType(len(text), IntegerType(8)),
        METADATA_SYMBOL,
        "external",
        constant=True,
        value=StringAttr(text),
    )


def _check_input_level(module: ModuleOp) -> None:
    for op in module.walk():
        dialect = op.name.split(".", 1)[0]
        if dialect in HIGHER_LEVEL_DIALECTS:
            raise PassFailedException(
                f"'{op.name}' op expected loop-level IR (lower it to the loop dialect first), "
                f"found an op of dialect {dialect}"
            )


def _check_fully_lowered(module: ModuleOp) -> None:
    for op in module.walk():
        if op is module:
            continue
        if op.name.split(".", 1)[0] in LOWERED_DIALECTS:
            continue
        raise PassFailedException(
            f"'{op.name}' op expected to be lowered to the llvm dialect, found no lowering "
            f"for it{_where(op)}"
        )


def _where(op: Operation) -> str:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, llvm.FuncOp | func.FuncOp):
        parent = parent.parent_op()
    return f" in @{parent.sym_name.data}" if parent is not None else ""


@dataclass(frozen=True)
class ConvertLoopToLLVMPass(ModulePass):
    """Lower loop-level dlc IR to the llvm dialect for a CPU target (option `target`).

    *Input invariant*: a `builtin.module` of `func.func`s (plus `memref.global`s) whose bodies use
    `loop`, `arith`, `math`, `memref`, `vector`, `scf`, `cf` and `func` ops on scalars, 1-D vectors
    and memrefs of static shape with identity or static strided layouts, or of the identity
    layout with a dynamic leading dim (runtime rows; an argument may have other dynamic dims
    when only calls and deallocs take it whole: `loop-linearize-runtime-strides` has moved its
    accesses to a flat view). Entry functions are in
    destination-passing style: `func.func @f(%in0: memref<..>, ..., %out0: memref<..>)` returns
    nothing and carries `dlc.num_outputs = N : i64` (its last N arguments are outputs). No
    graph, tensor_expr or target_gpu op remains.

    *Output IR*: only `llvm` ops. Each `func.func` is an `llvm.func` with the bare-pointer calling
    convention (a memref argument is the `!llvm.ptr` of its first element, `index` is i64);
    element [i, j, k] of memref<AxBxCxT> is `getelementptr T, ptr, ((i * B + j) * C + k)`. Loops
    are blocks joined by `llvm.br`/`llvm.cond_br`; math functions are LLVM intrinsics or libm
    calls. The entry functions' signatures (argument names, shapes, dtypes, number of outputs)
    are stored as JSON in the global `@dlc_metadata`, which the runtime reads. The module's
    `dlc.target` is the target lowered for (vector widths, thread counts, and what `-t llvm`
    prints as the triple, data layout, CPU and features).

    *Invariants*: no func, arith, math, memref, vector, scf, cf, loop or index op (nor
    unrealized cast) remains; anything the pass cannot lower is reported by name. Loop kinds
    (`rewrites.llvm_lowering.loop`): `serial` runs in order; `vectorized` (constant bounds)
    becomes vector code, `vector<W x T>` loads/stores, broadcasts, gathers and `llvm.fma`
    (`rewrites.llvm_lowering.vector.LoopVectorizer`); `parallel` is outlined into a function
    run by `GOMP_parallel`, each thread taking a static chunk of the iterations
    (`rewrites.llvm_lowering.openmp`); `unrolled` (constant bounds, at most 64 iterations) is a
    loop whose back edge carries `dlc.unroll_full`, which LLVM unrolls completely;
    `bound` (a GPU binding) is an error. `loop.alloc local` buffers up to
    `max_stack_bytes` live on the stack (allocas in the entry block), other buffers on the heap.

    Options:
        index_bitwidth: width of the integer `index` lowers to (the pointer width of every target).
        alloc_alignment: byte alignment of heap buffers.
        max_stack_bytes: the largest `loop.alloc local` placed on the stack.
        noalias_outputs: mark the pointer arguments of entry functions `noalias` (the runtime
            never passes an output that aliases another argument).
        metadata: emit the `@dlc_metadata` global for the entry functions.
        target: the CPU to lower for, a target string (`llvm -mcpu=znver3 -num-cores=2`);
            empty: the module's `dlc.target`, else `dlc.target.DEFAULT_CPU_TARGET`. The pass
            records it as the module's `dlc.target`, which the `-t llvm` emitter prints.
        threads: threads per parallel loop (`GOMP_parallel`'s count); 0: the target's (whose
            own 0 is the OpenMP runtime's default, all cores).
        vector_bits: vector register width for vectorized loops; 0: the target's (512 with
            AVX-512).
        parallel_schedule: `static` (each thread one chunk of a parallel loop, from
            `omp_get_thread_num`/`omp_get_num_threads`), `dynamic` (threads take one
            iteration at a time from libgomp: steadier when other processes load the cores)
            or `guided` (libgomp's shrinking chunks: the remaining iterations over the thread
            count, so few hand-outs, and a late thread finds the work done).
        adaptive_threads: after a parallel region whose caller waited at its end for threads
            the OS ran late (longer than half the region, and 50 us), the module's next 64
            regions run on the calling thread alone, then the team is tried again (a team whose
            threads are descheduled, on cores other processes share, is slower than one
            thread); off: every region on the whole team.
        check_bounds: check the indices of every load and store (scalar and vector, the
            lanes of gathers and scatters included) against the buffer's dimensions; a
            violation prints `dlc: out-of-bounds load of buffer A (arg 0) in @kernel: index 8
            not in [0, 8) (dimension 0 of memref<8xf32>)` to stderr and aborts
            (`rewrites.llvm_lowering.bounds`). Off: no check, the same code as before.
        parallel_runtime: `gomp` (an OpenMP team through libgomp's `GOMP_parallel`, with
            `parallel_schedule` and `adaptive_threads`) or `dlc` (`dlc_parallel_for`, dlc's
            thread pool in `runtime/thread_pool/pool.c`, which the driver links or loads:
            the caller and the pool's threads claim chunks of the iterations, and the caller
            never waits for a thread that has not started, so a region stays fast when other
            processes share the cores).
    """

    name: ClassVar[str] = "convert-loop-to-llvm"

    index_bitwidth: int = 64
    alloc_alignment: int = 64
    max_stack_bytes: int = 64 * 1024
    noalias_outputs: bool = True
    metadata: bool = True
    target: str = ""
    threads: int = 0
    vector_bits: int = 0
    parallel_schedule: str = "static"
    check_bounds: bool = False
    adaptive_threads: bool = False
    parallel_runtime: str = "gomp"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = cpu_target_for(self.name, self.target, op)
        lowering = LLVMLowering(
            self.index_bitwidth, self.alloc_alignment, self.max_stack_bytes,
            self.vector_bits if self.vector_bits > 0 else target.vector_bits,
            self.threads if self.threads > 0 else target.threads, self.parallel_schedule,
            self.check_bounds, self.adaptive_threads, self.parallel_runtime, target.features,
        )
        _check_input_level(op)
        legalize_bf16_arith(op)
        signatures = [
            entry_signature(function, lowering)
            for function in op.ops
            if isinstance(function, func.FuncOp)
            and NUM_OUTPUTS_ATTR in function.attributes
            and function.sym_visibility != StringAttr("private")
        ]
        costs = batch_costs(op, max(1, lowering.vector_bits // 32), target.l2_bytes or 0)
        constants = {function.sym_name.data: entry_constants(op, function)
                     for function in batched_entries(op)}
        from dlc.rewrites.llvm_lowering.vector import (
            annotate_lane_private,
            annotate_operand_multiples,
            annotate_vector_alignment,
        )

        annotate_vector_alignment(op, lowering)
        annotate_lane_private(op)
        annotate_operand_multiples(op)
        if self.check_bounds:
            annotate_access_sites(op)
        PatternRewriteWalker(TypeDispatchApplier(structure_patterns(lowering))).rewrite_module(op)
        PatternRewriteWalker(
            TypeDispatchApplier(op_patterns(lowering, self.noalias_outputs))
        ).rewrite_module(op)
        reconcile_unrealized_casts(op, warn_on_failure=False)
        expand_bounds_checks(op)
        entries = batch_entries(signatures, costs, constants, target.l2_bytes or 0)
        if any(has_padded_tail(entry) for entry in entries):
            declare_scratch_functions(op)
        op.body.block.add_ops(entries)
        _check_fully_lowered(op)
        if self.metadata and signatures:
            if any(getattr(o, "sym_name", None) == StringAttr(METADATA_SYMBOL) for o in op.ops):
                raise PassFailedException(
                    f"'builtin.module' op expected no symbol named @{METADATA_SYMBOL} (the pass "
                    "defines it), found one"
                )
            op.body.block.add_op(metadata_global(signatures))
        op.attributes[TARGET_ATTR] = StringAttr(str(target))
