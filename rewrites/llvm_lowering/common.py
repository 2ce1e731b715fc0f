"""What every llvm-lowering pattern shares: the type lowering, value casts, intrinsics, errors.

The counterpart of MLIR's `LLVMTypeConverter` and `ConvertOpToLLVMPattern` helpers. Patterns
rewrite one op at a time; a value whose type changes (index -> i64, memref -> !llvm.ptr) crosses
the boundary between a lowered and a not-yet-lowered op through a
`builtin.unrealized_conversion_cast`, and the casts cancel out once every op is lowered
(`reconcile-unrealized-casts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
    i1,
    i8,
    i16,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class LLVMLowering:
    """How types lower to the llvm dialect, and the target facts the patterns read.

    Attributes:
        index_bitwidth: width of the integer that `index` lowers to (the target's pointer width).
        alloc_alignment: byte alignment of heap buffers (`memref.alloc`, `loop.alloc` global).
        max_stack_bytes: the largest `loop.alloc` of scope `local` placed on the stack; larger
            local buffers go to the heap.
        vector_bits: the width of the target's vector registers (512 with AVX-512): a
            vectorized loop over f32 runs 512 / 32 = 16 lanes per vector.
        num_threads: the number of threads a parallel loop runs on (`GOMP_parallel`'s
            `num_threads`); 0 lets the OpenMP runtime choose (all cores).
        parallel_schedule: how a parallel loop's iterations are shared out: `static` (one
            chunk per thread), `dynamic` (one iteration at a time, from libgomp) or `guided`
            (shrinking chunks, from libgomp).
        adaptive_threads: a parallel region whose caller waited at its end for threads the OS
            ran late (longer than half the region) makes the next regions of the module run on
            the calling thread alone for a while, then the team is tried again
            (`rewrites.llvm_lowering.openmp`): on cores shared with other processes, a team
            whose threads are descheduled is slower than one thread.
        check_bounds: check every load's and store's indices against the buffer's shape and
            abort with a report on a violation (`rewrites.llvm_lowering.bounds`).
        parallel_runtime: what runs a parallel loop's iterations: `gomp` (an OpenMP team,
            `GOMP_parallel`, with `parallel_schedule` and `adaptive_threads`) or `dlc` (dlc's
            own pool, `dlc_parallel_for` of `runtime/thread_pool/pool.c`: chunks claimed by
            the caller and the pool's threads, each first from its own home shard, then from
            the others', the caller never waiting for a thread that has not started).
        features: the target's instruction-set features (LLVM's names, `CpuTarget.features`):
            the vectorizer calls an instruction only the features provide (`vpdpwssd` with
            `avx512vnni`) where they have it.
    """

    index_bitwidth: int = 64
    alloc_alignment: int = 64
    max_stack_bytes: int = 64 * 1024
    vector_bits: int = 512
    num_threads: int = 0
    parallel_schedule: str = "static"
    check_bounds: bool = False
    adaptive_threads: bool = False
    parallel_runtime: str = "gomp"
    features: frozenset[str] = frozenset()

    @cached_property
    def index_type(self) -> IntegerType:
        """The integer type that `index` lowers to (made once: building an xDSL type verifies
        its parameters, and a kernel's lowering asks thousands of times)."""
        return IntegerType(self.index_bitwidth)

    def convert_type(self, type_: Attribute) -> Attribute:
        """The llvm-dialect type of `type_`: index -> iN, memref -> !llvm.ptr, bf16 -> i16 (its
        bits, see `rewrites.llvm_lowering.bf16`), else unchanged."""
        if isinstance(type_, IndexType):
            return self.index_type
        if isinstance(type_, MemRefType):
            return llvm.LLVMPointerType()
        if isinstance(type_, BFloat16Type):
            return i16
        if isinstance(type_, VectorType) and isinstance(type_.element_type, IndexType):
            return VectorType(self.index_type, type_.get_shape())
        if isinstance(type_, VectorType) and isinstance(type_.element_type, BFloat16Type):
            return VectorType(i16, type_.get_shape())
        return type_

    def storage_type(self, type_: Attribute) -> Attribute:
        """The type a value of `type_` has in memory: its lowered type, except that a boolean
        (i1, or a vector of i1) takes a byte per element, i8, as NumPy's `bool` does (LLVM
        packs a `<N x i1>` in memory into N bits)."""
        lowered_type = self.convert_type(type_)
        if lowered_type == i1:
            return i8
        if isinstance(lowered_type, VectorType) and lowered_type.element_type == i1:
            return VectorType(i8, lowered_type.get_shape())
        return lowered_type

    def size_in_bytes(self, type_: Attribute) -> int | None:
        """The storage size of one scalar or vector of `type_`, or None if it has none."""
        if isinstance(type_, IndexType):
            return self.index_bitwidth // 8
        if isinstance(type_, IntegerType):
            return (type_.width.data + 7) // 8
        if isinstance(type_, Float16Type | BFloat16Type):
            return 2
        if isinstance(type_, Float32Type):
            return 4
        if isinstance(type_, Float64Type):
            return 8
        if isinstance(type_, VectorType):
            element = self.size_in_bytes(type_.element_type)
            return None if element is None else element * type_.element_count()
        return None


def lowering_error(op: Operation, message: str) -> PassFailedException:
    """A pass failure that names `op` the way MLIR diagnostics do: `'dialect.op' op <message>`."""
    return PassFailedException(f"'{op.name}' op {message}")


def lowered(value: SSAValue, lowering: LLVMLowering, rewriter: PatternRewriter) -> SSAValue:
    """`value` in its lowered type, casting it (before the matched op) if its type changes."""
    target = lowering.convert_type(value.type)
    if target == value.type:
        return value
    owner = value.owner
    if (
        isinstance(owner, UnrealizedConversionCastOp)
        and len(owner.inputs) == 1
        and owner.inputs[0].type == target
    ):
        return owner.inputs[0]
    cast = rewriter.insert(UnrealizedConversionCastOp.get([value], [target]))
    return cast.results[0]


def lowered_operands(
    op: Operation, lowering: LLVMLowering, rewriter: PatternRewriter
) -> list[SSAValue]:
    """Every operand of `op` in its lowered type."""
    return [lowered(operand, lowering, rewriter) for operand in op.operands]


def replace_with_lowered(
    op: Operation,
    new_ops: Sequence[Operation],
    new_results: Sequence[SSAValue],
    rewriter: PatternRewriter,
) -> None:
    """Replace `op` by `new_ops`, casting each new result back to the type of the result it
    replaces where the two differ, so that users not lowered yet still type-check."""
    replacements: list[SSAValue] = []
    casts: list[Operation] = []
    for old, new in zip(op.results, new_results, strict=True):
        if old.type == new.type:
            replacements.append(new)
            continue
        cast = UnrealizedConversionCastOp.get([new], [old.type])
        casts.append(cast)
        replacements.append(cast.results[0])
    hints = {result.name_hint for result in op.results} - {None}
    rewriter.replace(op, [*new_ops, *casts], replacements)
    # The rewriter names every new result after the replaced one; only the results that
    # replace it keep that name (an address computation is not the loaded value).
    for new_op in new_ops:
        for result in new_op.results:
            if result.name_hint in hints and result not in new_results:
                result.name_hint = None


def convert_block_arguments(
    block_args: Sequence[SSAValue], lowering: LLVMLowering, rewriter: PatternRewriter
) -> None:
    """Give block arguments their lowered types; existing uses go through a cast at block start."""
    for arg in list(block_args):
        target = lowering.convert_type(arg.type)
        if target == arg.type:
            continue
        old_type = arg.type
        new_arg = rewriter.replace_value_with_new_type(arg, target)
        if not new_arg.uses:
            continue
        block = new_arg.owner
        assert not isinstance(block, Operation)
        cast = UnrealizedConversionCastOp.get([new_arg], [old_type])
        rewriter.insert(cast, InsertPoint.at_start(block))
        rewriter.replace_uses_with_if(
            new_arg, cast.results[0], lambda use, cast=cast: use.operation is not cast
        )


def int_constant(value: int, type_: Attribute) -> llvm.ConstantOp:
    """An `llvm.mlir.constant` of an integer type."""
    assert isinstance(type_, IntegerType)
    return llvm.ConstantOp(IntegerAttr(value, type_), type_)


def intrinsic_suffix(type_: Attribute) -> str:
    """LLVM's name mangling of an overloaded intrinsic's type: f32, i64, v16f32, ..."""
    if isinstance(type_, VectorType):
        return f"v{type_.element_count()}{intrinsic_suffix(type_.element_type)}"
    if isinstance(type_, IntegerType):
        return f"i{type_.width.data}"
    if isinstance(type_, Float16Type):
        return "f16"
    if isinstance(type_, BFloat16Type):
        return "bf16"
    if isinstance(type_, Float32Type):
        return "f32"
    if isinstance(type_, Float64Type):
        return "f64"
    raise ValueError(f"no LLVM intrinsic mangling for type {type_}")


def call_intrinsic(
    name: str, args: Sequence[SSAValue], result_type: Attribute | None
) -> llvm.CallIntrinsicOp:
    """`llvm.call_intrinsic` of the fully mangled intrinsic `name`."""
    return llvm.CallIntrinsicOp(name, args, [] if result_type is None else [result_type])


def ensure_declared(
    anchor: Operation, name: str, function_type: llvm.LLVMFunctionType, rewriter: PatternRewriter
) -> None:
    """Declare the external function `name` (libm, libc) in `anchor`'s module unless it is."""
    module = anchor
    while not isinstance(module, ModuleOp):
        parent = module.parent_op()
        if parent is None:
            raise lowering_error(anchor, "expected to be nested in a builtin.module")
        module = parent
    if not is_declared(module, name):
        declaration = llvm.FuncOp(name, function_type, linkage=llvm.LinkageAttr("external"))
        rewriter.insert(declaration, InsertPoint.at_end(module.body.block))


def is_declared(module: ModuleOp, name: str) -> bool:
    """Whether `module` holds a symbol `name` (a function declared or defined)."""
    return any(getattr(getattr(op, "sym_name", None), "data", None) == name for op in module.ops)


def extract_lane(vector: SSAValue, lane: int) -> list[Operation]:
    """Ops that extract lane `lane` of a 1-D vector as a scalar (the last op's result).

    The llvm dialect of xDSL has no `extractelement`: a one-lane `shufflevector` and a bitcast of
    `vector<1xT>` to `T` say the same, and LLVM folds them into `extractelement`.
    """
    vector_type = vector.type
    assert isinstance(vector_type, VectorType)
    element = vector_type.element_type
    one_lane = llvm.ShuffleVectorOp(
        vector, vector, _lane_mask([lane]), VectorType(element, [1])
    )
    scalar = llvm.BitcastOp(one_lane, element)
    return [one_lane, scalar]


def _lane_mask(lanes: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, lanes)


def splat(scalar: SSAValue, vector_type: VectorType) -> list[Operation]:
    """Ops that broadcast `scalar` to every lane of `vector_type` (the last op's result)."""
    undef = llvm.UndefOp(vector_type)
    zero = int_constant(0, i32)
    inserted = llvm.InsertElementOp(undef, scalar, zero)
    shuffled = llvm.ShuffleVectorOp(
        inserted, inserted, _lane_mask([0] * vector_type.element_count()), vector_type
    )
    return [undef, zero, inserted, shuffled]


ScalarBuilder = Callable[[list[SSAValue]], tuple[list[Operation], SSAValue]]
"""Emits the scalar computation of one lane: (lane operands) -> (ops, lane result)."""


def scalarize(
    operands: Sequence[SSAValue], result_type: VectorType, build_scalar: ScalarBuilder
) -> tuple[list[Operation], SSAValue]:
    """Apply a scalar computation lane by lane to 1-D vector operands and rebuild the vector."""
    ops: list[Operation] = []
    accumulated: SSAValue = ops_append(ops, llvm.UndefOp(result_type))
    for lane in range(result_type.element_count()):
        lane_values: list[SSAValue] = []
        for operand in operands:
            extracted = extract_lane(operand, lane)
            ops.extend(extracted)
            lane_values.append(extracted[-1].results[0])
        scalar_ops, scalar = build_scalar(lane_values)
        ops.extend(scalar_ops)
        index = ops_append(ops, int_constant(lane, i32))
        accumulated = ops_append(ops, llvm.InsertElementOp(accumulated, scalar, index))
    return ops, accumulated


def ops_append(ops: list[Operation], op: Operation) -> SSAValue:
    """Append `op` to `ops` and return its single result."""
    ops.append(op)
    return op.results[0]


def is_float(type_: Attribute) -> bool:
    """Whether `type_` is a float or a vector of floats."""
    if isinstance(type_, VectorType):
        type_ = type_.element_type
    return isinstance(type_, AnyFloat)


def constant_int_value(value: SSAValue) -> int | None:
    """The integer `value` holds if an `arith.constant` or `llvm.mlir.constant` defines it (through
    conversion casts), else None."""
    owner = value.owner
    while isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1:
        owner = owner.inputs[0].owner
    attr = getattr(owner, "value", None) if isinstance(owner, Operation) else None
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    return None
