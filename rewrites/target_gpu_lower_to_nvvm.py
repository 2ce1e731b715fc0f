"""The `target-gpu-lower-to-nvvm` pass: `target_gpu` kernels -> llvm-dialect functions with NVVM
intrinsics, ready for LLVM's NVPTX backend (`-t ptx`).

Counterpart: MLIR's `convert-gpu-to-nvvm` (gpu.thread_id -> nvvm.read.ptx.sreg.tid.x,
gpu.barrier -> nvvm.barrier0, workgroup memory -> addrspace(3) globals) plus the generic
arith/math/memref/cf/func -> llvm conversions, which are dlc's CPU patterns
(`rewrites.llvm_lowering`) reused as they are: only the ops with a GPU meaning (coordinates,
barriers, shared memory) and the math functions LLVM cannot select for NVPTX (it has no libm)
get patterns of their own here, tried before the shared ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.contracts import NVVM_KERNEL_ATTR, TARGET_ATTR, TARGET_TRIPLE_ATTR
from dlc.dialects.loop.ops import (
    ASYNC_COPY_BYTES,
    AsyncCommitOp,
    AsyncCopyOp,
    AsyncWaitOp,
    IntrinsicOp,
    LoadOp,
    MatrixLoadOp,
    StoreOp,
)
from dlc.dialects.target_gpu.ops import (
    BarrierOp,
    BlockDimOp,
    BlockIdOp,
    GridDimOp,
    KernelOp,
    ReturnOp,
    SharedAllocOp,
    ThreadIdOp,
    is_shared_memref,
)
from dlc.dialects.target_gpu.ops import ModuleOp as GpuModuleOp
from dlc.rewrites.convert_loop_to_llvm import op_patterns, structure_patterns
from dlc.rewrites.gpu_common import bound_loops
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    int_constant,
    lowered,
    lowered_operands,
    lowering_error,
    ops_append,
    replace_with_lowered,
    scalarize,
)
from dlc.rewrites.llvm_lowering.memref import element_address
from dlc.rewrites.pass_target import gpu_target_for
from dlc.target import NVPTX_TRIPLE
from dlc.target.intrinsics import get_intrinsic, get_matrix_load
from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.reconcile_unrealized_casts import reconcile_unrealized_casts
from xdsl.utils.exceptions import PassFailedException

SHARED_ADDRESS_SPACE = 3
"""NVVM's address space of shared memory."""

SHARED_POINTER = llvm.LLVMPointerType(IntAttr(SHARED_ADDRESS_SPACE))
"""`!llvm.ptr<3>`: a pointer into shared memory."""

SPECIAL_REGISTERS: dict[type[Operation], str] = {
    ThreadIdOp: "tid", BlockIdOp: "ctaid", BlockDimOp: "ntid", GridDimOp: "nctaid",
}
"""The PTX special register each coordinate op reads (`%tid.x`, `%ctaid.y`, ...)."""


@dataclass(frozen=True)
class NVVMLowering(LLVMLowering):
    """dlc's llvm type lowering for NVPTX: memrefs in shared memory are `!llvm.ptr<3>`."""

    def convert_type(self, type_: Attribute) -> Attribute:
        if isinstance(type_, MemRefType) and is_shared_memref(type_):
            return SHARED_POINTER
        return super().convert_type(type_)


# ----------------------------------------------------------------------------------------------
# target_gpu ops
# ----------------------------------------------------------------------------------------------


@dataclass
class CoordinateLowering(RewritePattern):
    """`target_gpu.thread_id "x"` -> `llvm.nvvm.read.ptx.sreg.tid.x` (i32, zero-extended)."""

    lowering: LLVMLowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        register = SPECIAL_REGISTERS.get(type(op))
        if register is None:
            return
        dimension = op.properties["dimension"]
        assert isinstance(dimension, StringAttr)
        read = call_intrinsic(f"llvm.nvvm.read.ptx.sreg.{register}.{dimension.data}", [], i32)
        new_ops: list[Operation] = [read]
        value = read.results[0]
        if self.lowering.index_bitwidth != 32:
            extend = llvm.ZExtOp(value, self.lowering.index_type)
            new_ops.append(extend)
            value = extend.results[0]
        replace_with_lowered(op, new_ops, [value], rewriter)


class BarrierLowering(RewritePattern):
    """`target_gpu.barrier` -> `llvm.nvvm.barrier0` (`bar.sync 0`, which also orders global
    memory within the block)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BarrierOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, [call_intrinsic("llvm.nvvm.barrier0", [], None)], [])


@dataclass
class SharedAllocLowering(RewritePattern):
    """`target_gpu.shared_alloc` -> an `addrspace(3)` global array of the gpu module and its
    address."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SharedAllocOp, rewriter: PatternRewriter) -> None:
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        module = op.parent_op()
        while module is not None and not isinstance(module, GpuModuleOp):
            module = module.parent_op()
        if module is None:
            raise lowering_error(op, "expected to be inside a target_gpu.module")
        count = max(1, math.prod(memref_type.get_shape()))
        element = self.lowering.convert_type(memref_type.get_element_type())
        function = op.parent_op()
        while function is not None and not isinstance(function, func.FuncOp | llvm.FuncOp):
            function = function.parent_op()
        owner = function.sym_name.data if function is not None else "kernel"  # type: ignore[union-attr]
        name = _unique_symbol(module, f"{owner}_{op.result.name_hint or 'shared'}")
        global_op = llvm.GlobalOp(
            llvm.LLVMArrayType(count, element), name, "internal",
            addr_space=SHARED_ADDRESS_SPACE, alignment=16,
        )
        rewriter.insert(global_op, InsertPoint.at_start(module.body.block))
        address = llvm.AddressOfOp(name, SHARED_POINTER)
        replace_with_lowered(op, [address], [address.result], rewriter)


def _unique_symbol(module: GpuModuleOp, base: str) -> str:
    taken = {
        op.sym_name.data for op in module.body.block.ops
        if isinstance(getattr(op, "sym_name", None), StringAttr)
    }
    name, index = base, 0
    while name in taken:
        index += 1
        name = f"{base}_{index}"
    return name


@dataclass
class SharedAccessLowering(RewritePattern):
    """`loop.load`/`loop.store` of shared memory -> `llvm.load`/`llvm.store` through an
    `!llvm.ptr<3>` computed as base + byte offset (LLVM then selects `ld.shared`/`st.shared`)."""

    lowering: LLVMLowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, LoadOp | StoreOp) or not is_shared_memref(op.memref.type):
            return
        ops, address, element_size = shared_address(op, op.memref, op.indices, self.lowering,
                                                    rewriter)
        if isinstance(op, LoadOp):
            load = llvm.LoadOp(address, self.lowering.convert_type(op.result.type), element_size)
            replace_with_lowered(op, [*ops, load], load.results, rewriter)
        else:
            value = lowered(op.value, self.lowering, rewriter)
            rewriter.replace(op, [*ops, llvm.StoreOp(value, address, element_size)], [])


def shared_address(op: Operation, memref: SSAValue, indices: Sequence[SSAValue],
                   lowering: LLVMLowering, rewriter: PatternRewriter
                   ) -> tuple[list[Operation], SSAValue, int]:
    """Ops computing the `!llvm.ptr<3>` of the shared element `memref[indices]` that `op`
    accesses (base + byte offset), that pointer and the element's size in bytes."""
    memref_type = memref.type
    assert isinstance(memref_type, MemRefType)
    base = lowered(memref, lowering, rewriter)
    indices = [lowered(index, lowering, rewriter) for index in indices]
    ops, address = element_address(base, memref_type, indices, lowering, op)
    element_size = lowering.size_in_bytes(memref_type.get_element_type())
    assert element_size is not None
    if ops and isinstance(ops[-1], llvm.GEPOp):
        linear = ops.pop().ssa_indices[0]
        index_type = lowering.index_type
        size = int_constant(element_size, index_type)
        offset = llvm.MulOp(linear, size)
        start = llvm.PtrToIntOp(base, index_type)
        total = llvm.AddOp(start.results[0], offset.results[0])
        pointer = llvm.IntToPtrOp.create(operands=[total.res], result_types=[SHARED_POINTER])
        ops += [size, offset, start, total, pointer]
        address = pointer.results[0]
    return ops, address, element_size


@dataclass
class MatrixLoadLowering(RewritePattern):
    """A `loop.matrix_load` (PTX `ldmatrix`) -> its instruction as volatile inline PTX on the
    lane's 32-bit shared address, one `.b32` register (two 16-bit elements) per matrix,
    gathered back into the lane's vector:

        %f = loop.matrix_load "ptx.ldmatrix.x4" %S[%r, %c] : memref<64x32xf16, 3> -> vector<8xf16>
      ->
        %a = llvm.ptrtoint %p : !llvm.ptr<3> to i32     (%p: the address of S[r, c])
        %m = llvm.inline_asm has_side_effects
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r" %a
        %f = bitcast (the four i32 as vector<4xi32>) to vector<8xf16>

    Volatile, like `mma.sync`: every lane's result depends on the other lanes' addresses, and
    the load must stay between the barriers around it.
    """

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatrixLoadOp, rewriter: PatternRewriter) -> None:
        entry = get_matrix_load(op.intrinsic.data)
        if not is_shared_memref(op.memref.type):
            raise lowering_error(
                op, f'expected "{entry.name}" to read shared memory, found {op.memref.type}')
        ops, address, _ = shared_address(op, op.memref, op.indices, self.lowering, rewriter)
        word = ops_append(ops, llvm.PtrToIntOp(address, i32))
        count = entry.matrices
        registers = ", ".join(f"${n}" for n in range(count))
        struct = llvm.LLVMStructType.from_type_list([i32] * count)
        asm = llvm.InlineAsmOp(f"{entry.ptx} {{{registers}}}, [${count}];",
                               ",".join(["=r"] * count + ["r"]), [word], [struct],
                               has_side_effects=True)
        ops.append(asm)
        words = ops_append(ops, llvm.UndefOp(VectorType(i32, [count])))
        for n in range(count):
            value = ops_append(ops, llvm.ExtractValueOp(
                DenseArrayBase.from_list(i64, [n]), asm.results[0], i32))
            position = ops_append(ops, int_constant(n, i32))
            words = ops_append(ops, llvm.InsertElementOp(words, value, position))
        result = ops_append(ops, llvm.BitcastOp(
            words, self.lowering.convert_type(op.result.type)))
        replace_with_lowered(op, ops, [result], rewriter)


@dataclass
class AsyncCopyLowering(RewritePattern):
    """`loop.async_copy`, `loop.async_commit`, `loop.async_wait` -> volatile inline PTX
    `cp.async.cg.shared.global [shared], [global], 16, bytes;` (the source's generic address,
    which is its global one, as CUTLASS passes it; `bytes` = valid elements x their size: 0
    zero-fills), `cp.async.commit_group;` and `cp.async.wait_group N;`. The wait clobbers
    memory: the shared loads after it must not move above it."""

    lowering: LLVMLowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, AsyncCommitOp):
            rewriter.replace(op, [llvm.InlineAsmOp(
                "cp.async.commit_group;", "~{memory}", [], [], has_side_effects=True)], [])
            return
        if isinstance(op, AsyncWaitOp):
            rewriter.replace(op, [llvm.InlineAsmOp(
                f"cp.async.wait_group {op.pending.value.data};", "~{memory}", [], [],
                has_side_effects=True)], [])
            return
        if not isinstance(op, AsyncCopyOp):
            return
        if not is_shared_memref(op.dest.type):
            raise lowering_error(
                op, f"expected the destination in shared memory, found {op.dest.type}")
        ops, shared, size = shared_address(op, op.dest, op.dest_indices, self.lowering,
                                           rewriter)
        word = ops_append(ops, llvm.PtrToIntOp(shared, i32))
        source_type = op.source.type
        assert isinstance(source_type, MemRefType)
        base = lowered(op.source, self.lowering, rewriter)
        indices = [lowered(index, self.lowering, rewriter) for index in op.source_indices]
        address_ops, source = element_address(base, source_type, indices, self.lowering, op)
        ops += address_ops
        valid = lowered(op.valid, self.lowering, rewriter)
        bytes_ = ops_append(ops, llvm.MulOp(valid, ops_append(
            ops, int_constant(size, self.lowering.index_type))))
        if self.lowering.index_type != i32:
            bytes_ = ops_append(ops, llvm.TruncOp(bytes_, i32))
        ops.append(llvm.InlineAsmOp(
            f"cp.async.cg.shared.global [$0], [$1], {ASYNC_COPY_BYTES}, $2;", "r,l,r",
            [word, source, bytes_], [], has_side_effects=True))
        rewriter.replace(op, ops, [])


# ----------------------------------------------------------------------------------------------
# Math without libm: NVVM's approximate instructions
# ----------------------------------------------------------------------------------------------


class _Emit:
    """Collects llvm ops computing an f32 expression."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []
        self.f32 = Float32Type()

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self.add(llvm.ConstantOp(FloatAttr(value, self.f32), self.f32))

    def mul(self, a: SSAValue, b: SSAValue | float) -> SSAValue:
        return self.add(llvm.FMulOp(a, self.const(b) if isinstance(b, float) else b))

    def add_(self, a: SSAValue, b: SSAValue | float) -> SSAValue:
        return self.add(llvm.FAddOp(a, self.const(b) if isinstance(b, float) else b))

    def sub(self, a: SSAValue | float, b: SSAValue) -> SSAValue:
        return self.add(llvm.FSubOp(self.const(a) if isinstance(a, float) else a, b))

    def div(self, a: SSAValue | float, b: SSAValue) -> SSAValue:
        return self.add(llvm.FDivOp(self.const(a) if isinstance(a, float) else a, b))

    def call(self, name: str, *args: SSAValue) -> SSAValue:
        return self.add(call_intrinsic(name, list(args), self.f32))

    def ex2(self, x: SSAValue) -> SSAValue:
        return self.call("llvm.nvvm.ex2.approx.f", x)

    def lg2(self, x: SSAValue) -> SSAValue:
        return self.call("llvm.nvvm.lg2.approx.f", x)

    def exp(self, x: SSAValue) -> SSAValue:
        return self.ex2(self.mul(x, math.log2(math.e)))

    def log(self, x: SSAValue) -> SSAValue:
        return self.mul(self.lg2(x), math.log(2.0))

    def fabs(self, x: SSAValue) -> SSAValue:
        return self.call("llvm.fabs.f32", x)

    def compare(self, predicate: str, a: SSAValue, b: SSAValue | float) -> SSAValue:
        return self.add(llvm.FCmpOp(a, self.const(b) if isinstance(b, float) else b, predicate))

    def select(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(llvm.SelectOp(condition, a, b))


def _tanh(e: _Emit, x: SSAValue) -> SSAValue:
    # 1 - 2 / (exp(2x) + 1): exact limits +-1, no overflow to NaN.
    return e.sub(1.0, e.div(2.0, e.add_(e.exp(e.mul(x, 2.0)), 1.0)))


def _erf(e: _Emit, x: SSAValue) -> SSAValue:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), odd extension.
    a = e.fabs(x)
    t = e.div(1.0, e.add_(e.mul(a, 0.3275911), 1.0))
    poly = e.const(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly = e.add_(e.mul(poly, t), coefficient)
    y = e.sub(1.0, e.mul(e.mul(poly, t), e.exp(e.mul(e.mul(a, a), -1.0))))
    return e.call("llvm.copysign.f32", y, x)


def _pow(e: _Emit, x: SSAValue, y: SSAValue) -> SSAValue:
    # |x|^y, negated for a negative x and an odd integer y; NaN for a negative x and a
    # non-integer y; 1 for y = 0.
    magnitude = e.ex2(e.mul(y, e.lg2(e.fabs(x))))
    is_integer = e.compare("oeq", e.call("llvm.floor.f32", y), y)
    half = e.mul(y, 0.5)
    is_odd = e.compare("one", e.call("llvm.floor.f32", half), half)
    signed = e.select(is_odd, e.sub(0.0, magnitude), magnitude)
    negative = e.select(is_integer, signed, e.const(math.nan))
    result = e.select(e.compare("olt", x, 0.0), negative, magnitude)
    return e.select(e.compare("oeq", y, 0.0), e.const(1.0), result)


NVPTX_MATH: dict[type[Operation], Callable[..., SSAValue]] = {
    math_dialect.ExpOp: lambda e, x: e.exp(x),
    math_dialect.Exp2Op: lambda e, x: e.ex2(x),
    math_dialect.ExpM1Op: lambda e, x: e.sub(e.exp(x), e.const(1.0)),
    math_dialect.LogOp: lambda e, x: e.log(x),
    math_dialect.Log2Op: lambda e, x: e.lg2(x),
    math_dialect.Log10Op: lambda e, x: e.mul(e.lg2(x), math.log10(2.0)),
    math_dialect.Log1pOp: lambda e, x: e.log(e.add_(x, 1.0)),
    math_dialect.TanhOp: _tanh,
    math_dialect.SinhOp: lambda e, x: e.mul(e.sub(e.exp(x), e.exp(e.mul(x, -1.0))), 0.5),
    math_dialect.CoshOp: lambda e, x: e.mul(e.add_(e.exp(x), e.exp(e.mul(x, -1.0))), 0.5),
    math_dialect.SinOp: lambda e, x: e.call("llvm.nvvm.sin.approx.f", x),
    math_dialect.CosOp: lambda e, x: e.call("llvm.nvvm.cos.approx.f", x),
    math_dialect.TanOp: lambda e, x: e.div(e.call("llvm.nvvm.sin.approx.f", x),
                                           e.call("llvm.nvvm.cos.approx.f", x)),
    math_dialect.ErfOp: _erf,
    math_dialect.PowFOp: _pow,
}
"""math ops LLVM's NVPTX backend cannot select (they would become libm calls), as f32
expressions of NVVM's approximate `ex2`/`lg2`/`sin`/`cos` instructions."""

UNSUPPORTED_ON_NVPTX: tuple[type[Operation], ...] = (
    math_dialect.AsinOp, math_dialect.AcosOp, math_dialect.AtanOp, math_dialect.Atan2Op,
    math_dialect.AsinhOp, math_dialect.AcoshOp, math_dialect.AtanhOp, math_dialect.CbrtOp,
)
"""math ops without an NVPTX lowering yet (an error, rather than LLVM aborting on a libcall)."""


@dataclass
class NVPTXMathLowering(RewritePattern):
    """math ops without an NVPTX instruction -> f32 expressions of NVVM intrinsics (f16, bf16
    and f64 operands are computed in f32; vectors lane by lane)."""

    lowering: LLVMLowering

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, UNSUPPORTED_ON_NVPTX):
            raise lowering_error(op, "has no lowering for NVPTX (no libm on the GPU)")
        build = NVPTX_MATH.get(type(op))
        if build is None:
            return
        operands = lowered_operands(op, self.lowering, rewriter)
        result_type = operands[0].type

        def one_lane(values: list[SSAValue]) -> tuple[list[Operation], SSAValue]:
            emit = _Emit()
            element = values[0].type
            args = [_to_f32(v, emit) for v in values]
            result = build(emit, *args)
            return emit.ops, _from_f32(result, element, emit)

        if isinstance(result_type, VectorType):
            new_ops, result = scalarize(operands, result_type, one_lane)
        else:
            new_ops, result = one_lane(operands)
        replace_with_lowered(op, new_ops, [result], rewriter)


def _to_f32(value: SSAValue, emit: _Emit) -> SSAValue:
    if isinstance(value.type, Float32Type):
        return value
    if isinstance(value.type, Float64Type):
        return emit.add(llvm.FPTruncOp(value, emit.f32))
    return emit.add(llvm.FPExtOp(value, emit.f32))


def _from_f32(value: SSAValue, element: Attribute, emit: _Emit) -> SSAValue:
    if isinstance(element, Float32Type):
        return value
    if isinstance(element, Float64Type):
        return emit.add(llvm.FPExtOp(value, element))
    if isinstance(element, Float16Type) or element.__class__.__name__ == "BFloat16Type":
        return emit.add(llvm.FPTruncOp(value, element))
    return value


# ----------------------------------------------------------------------------------------------
# The pass
# ----------------------------------------------------------------------------------------------


@dataclass
class WarpIntrinsicLowering(RewritePattern):
    """A warp-level `loop.intrinsic` (a lane's fragments) -> its PTX instruction as inline
    assembly: each operand's fragment packed into 32-bit registers in element order (two f16
    or four s8 per `.b32` register, `r` constraints; f32 accumulators one per `f` register),
    the result's registers gathered back into a vector:

        %d = loop.intrinsic "ptx.mma.m16n8k16.f16" %c, %a, %b
            : (vector<4xf32>, vector<8xf16>, vector<4xf16>) -> vector<4xf32>
      ->
        %r = llvm.inline_asm has_side_effects "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
            {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
            "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f" %a0, .. %b1, %c0, .. %c3 -> !llvm.struct<(f32, ...)>

    The assembly is volatile (`has_side_effects`), as CUTLASS writes it: its result depends on
    the other lanes' registers, which LLVM cannot see, so it must not be moved into a branch,
    merged or dropped.
    """

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IntrinsicOp, rewriter: PatternRewriter) -> None:
        from dlc.rewrites.llvm_lowering.common import extract_lane

        entry = get_intrinsic(op.intrinsic.data)
        if not entry.warp_level:
            raise lowering_error(
                op, f'expected a GPU intrinsic in a kernel, found "{entry.name}" (the CPU '
                f"intrinsic {entry.llvm_intrinsic})")
        acc, lhs, rhs = lowered_operands(op, self.lowering, rewriter)
        ops: list[Operation] = []

        def registers(value: SSAValue, is_acc: bool) -> list[SSAValue]:
            vector_type = value.type
            assert isinstance(vector_type, VectorType)
            if not is_acc:
                bits = vector_type.element_type.bitwidth  # type: ignore[attr-defined]
                words = vector_type.element_count() * bits // 32
                value = ops_append(ops, llvm.BitcastOp(value, VectorType(i32, [words])))
            lanes = value.type.element_count()  # type: ignore[attr-defined]
            found = []
            for lane in range(lanes):
                extract = extract_lane(value, lane)
                ops.extend(extract)
                found.append(extract[-1].results[0])
            return found

        acc_type = acc.type
        assert isinstance(acc_type, VectorType)
        acc_regs = registers(acc, True)
        a_regs, b_regs = registers(lhs, False), registers(rhs, False)
        letter = "f" if isinstance(acc_type.element_type, Float32Type) else "r"
        count = len(acc_regs)
        numbers = iter(range(count + len(a_regs) + len(b_regs) + count))

        def group(size: int) -> str:
            return "{" + ", ".join(f"${next(numbers)}" for _ in range(size)) + "}"

        text = (f"{entry.ptx} {group(count)}, {group(len(a_regs))}, {group(len(b_regs))}, "
                f"{group(count)};")
        constraints = ",".join([f"={letter}"] * count + ["r"] * (len(a_regs) + len(b_regs))
                               + [letter] * count)
        struct = llvm.LLVMStructType.from_type_list([acc_type.element_type] * count)
        asm = llvm.InlineAsmOp(text, constraints, [*a_regs, *b_regs, *acc_regs], [struct],
                               has_side_effects=True)
        ops.append(asm)
        result = ops_append(ops, llvm.UndefOp(acc_type))
        for lane in range(count):
            element = ops_append(ops, llvm.ExtractValueOp(
                DenseArrayBase.from_list(i64, [lane]), asm.results[0], acc_type.element_type))
            position = ops_append(ops, int_constant(lane, i32))
            result = ops_append(ops, llvm.InsertElementOp(result, element, position))
        replace_with_lowered(op, ops, [result], rewriter)


def nvvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns of the GPU-specific ops, tried before the shared llvm-lowering patterns."""
    return [
        WarpIntrinsicLowering(lowering),
        MatrixLoadLowering(lowering),
        AsyncCopyLowering(lowering),
        CoordinateLowering(lowering),
        SharedAccessLowering(lowering),
        BarrierLowering(),
        SharedAllocLowering(lowering),
        NVPTXMathLowering(lowering),
    ]


def _kernel_to_function(kernel: KernelOp) -> func.FuncOp:
    """A `func.func` with the kernel's signature and body, marked `nvvm.kernel`."""
    body = kernel.detach_region(kernel.body)
    for block in body.blocks:
        terminator = block.last_op
        if isinstance(terminator, ReturnOp):
            Rewriter.replace_op(terminator, func.ReturnOp())
    function = func.FuncOp(kernel.sym_name.data, kernel.function_type, body)
    function.attributes.update(kernel.attributes)
    function.attributes[NVVM_KERNEL_ATTR] = UnitAttr()
    return function


@dataclass(frozen=True)
class TargetGpuLowerToNvvmPass(ModulePass):
    """Lower the kernels of every `target_gpu.module` to llvm-dialect functions for NVPTX.

    *Input invariant*: SIMT kernels (the output of `convert-loop-to-target-gpu` and the
    `target-gpu-*` passes after it, `target-gpu-map-bound-loops` among them):
    `target_gpu.module`s of `target_gpu.kernel`s whose bodies use `loop` (no loop bound to a
    GPU axis), `scf`, `arith`, `math`, `vector` and `target_gpu` coordinate, barrier and
    shared-memory ops, on memrefs of static shape (shared memory in memory space 3); host
    functions around them.

    *Output IR*: each kernel is an external `llvm.func` (bare-pointer convention: a memref is a
    `!llvm.ptr` to its first element, `noalias`; `index` is `index-bitwidth` wide) carrying the
    unit attribute `nvvm.kernel`; coordinates read `llvm.nvvm.read.ptx.sreg.{tid,ctaid,ntid,
    nctaid}.{x,y,z}`, barriers call `llvm.nvvm.barrier0`, each shared buffer is an internal
    `addrspace(3)` `llvm.mlir.global` of the gpu module accessed through `!llvm.ptr<3>`, and
    math functions NVPTX has no instruction for are f32 expressions of `llvm.nvvm.ex2.approx`,
    `lg2.approx`, `sin.approx`, `cos.approx`; a warp-level `loop.intrinsic` (PTX `mma.sync`)
    is its instruction as volatile inline PTX (`WarpIntrinsicLowering`), and so are
    `loop.matrix_load` (`ldmatrix`, `MatrixLoadLowering`) and `loop.async_copy`/
    `async_commit`/`async_wait` (`cp.async.cg`, `commit_group`, `wait_group`:
    `AsyncCopyLowering`). Each
    `target_gpu.module` gets `llvm.target_triple = "nvptx64-nvidia-cuda"`. Host functions and their
    `target_gpu.launch`es are unchanged (the CUDA runtime runs them).

    *Invariants*: inside `target_gpu.module`s only `llvm` ops remain (the pass fails naming
    any other); local buffers live on the stack (PTX local memory, promoted to registers by
    LLVM); nothing calls libm.

    Options:
        target: the CUDA GPU the kernels are for, a target string (`cuda -arch=sm_90`); empty:
            the module's `dlc.target`, else `dlc.target.DEFAULT_GPU_TARGET` (sm_80). Each
            `target_gpu.module` records it as its `dlc.target` (MLIR's `nvvm-attach-target`),
            which `-t ptx` compiles for.
        index_bitwidth: the width `index` lowers to in kernels (64: every offset fits; 32 is
            faster on GPUs when every buffer has fewer than 2**31 elements).
    """

    name: ClassVar[str] = "target-gpu-lower-to-nvvm"

    target: str = ""
    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = gpu_target_for(self.name, self.target, op)
        if not target.is_cuda:
            raise PassFailedException(
                f"{self.name}: expected a CUDA target (cuda -arch=...), found '{target}'"
            )
        for gpu_module in [m for m in op.ops if isinstance(m, GpuModuleOp)]:
            gpu_module.attributes[TARGET_ATTR] = StringAttr(str(target))
        lowering = NVVMLowering(self.index_bitwidth, alloc_alignment=16, max_stack_bytes=1 << 30)
        for top in op.ops:
            if isinstance(top, KernelOp):
                raise lowering_error(top, "expected to be inside a target_gpu.module")
        for gpu_module in [m for m in op.ops if isinstance(m, GpuModuleOp)]:
            self._lower_module(gpu_module, lowering)
        reconcile_unrealized_casts(op, warn_on_failure=False)
        for gpu_module in [m for m in op.ops if isinstance(m, GpuModuleOp)]:
            for nested in gpu_module.walk():
                if nested is gpu_module or nested.name.startswith("llvm."):
                    continue
                raise lowering_error(nested, "expected to be lowered to the llvm dialect, found "
                                             "no lowering for it")

    def _lower_module(self, gpu_module: GpuModuleOp, lowering: NVVMLowering) -> None:
        bound = bound_loops(gpu_module)
        if bound:
            thread = bound[0].thread.data if bound[0].thread is not None else "?"
            raise lowering_error(
                bound[0],
                f'expected no loop bound to a GPU axis in a kernel (run '
                f'target-gpu-map-bound-loops first), found axis "{bound[0].axis.data}" bound to '
                f'{thread}',
            )
        for kernel in [k for k in gpu_module.body.block.ops if isinstance(k, KernelOp)]:
            Rewriter.replace_op(kernel, _kernel_to_function(kernel))
        for nested in gpu_module.walk():
            if isinstance(nested, func.CallOp):
                raise lowering_error(nested, "expected no calls in kernels")
        region = gpu_module.body
        PatternRewriteWalker(GreedyRewritePatternApplier(structure_patterns())).rewrite_region(
            region
        )
        PatternRewriteWalker(
            GreedyRewritePatternApplier([*nvvm_patterns(lowering),
                                         *op_patterns(lowering, noalias_entry_arguments=False)])
        ).rewrite_region(region)
        for function in gpu_module.body.block.ops:
            if isinstance(function, llvm.FuncOp) and NVVM_KERNEL_ATTR in function.attributes:
                _mark_noalias(function)
        gpu_module.attributes[TARGET_TRIPLE_ATTR] = StringAttr(NVPTX_TRIPLE)


def _mark_noalias(function: llvm.FuncOp) -> None:
    """Kernel buffers never alias (each launch argument is a distinct buffer): `noalias` lets
    LLVM use the read-only data cache (`ld.global.nc`)."""
    inputs = function.function_type.inputs.data
    function.properties["arg_attrs"] = ArrayAttr(
        DictionaryAttr({"llvm.noalias": UnitAttr()} if isinstance(t, llvm.LLVMPointerType)
                       else {})
        for t in inputs
    )


def kernel_functions(module: ModuleOp) -> list[llvm.FuncOp]:
    """The `llvm.func` kernels of a lowered module."""
    return [
        op for op in module.walk()
        if isinstance(op, llvm.FuncOp) and NVVM_KERNEL_ATTR in op.attributes
    ]
