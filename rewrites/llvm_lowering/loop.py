"""`loop` -> `cf` + `llvm`: loop nests become branches, buffers become pointers.

Two pattern sets, applied in this order by `convert-loop-to-llvm`:
- `loop_structure_patterns`: `loop.for` (one pattern per loop kind) and `loop.block` become `cf`
  branches over `index` values, which the arith/cf/func patterns then lower;
- `loop_memory_patterns`: `loop.load`/`loop.store` (scalar or vector) become `llvm.load`/
  `llvm.store` at the row-major element address (an i1 stored as a byte), `loop.alloc`/
  `loop.dealloc` become heap or stack allocations.

Loop kinds on the CPU, one pattern each: `serial` loops run in order; `vectorized` loops with
constant bounds become vector code (`rewrites.llvm_lowering.vector.vectorize_loop`; a body it
cannot widen runs serially); `parallel` loops are outlined and run by `GOMP_parallel`
(`rewrites.llvm_lowering.openmp`); `unrolled` loops with constant bounds become serial loops
whose back edge asks LLVM to unroll them completely (the `unroll` schedule primitive: LLVM
replicates the body in C++, and promotes what the copies index by constants to registers,
instead of this pass cloning thousands of ops in Python); others run serially. `bound` loops
are GPU bindings and have no CPU meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dlc.dialects.contracts import UNROLL_FULL_ATTR
from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    LoadOp,
    PrefetchOp,
    RowsOp,
    StoreOp,
    YieldOp,
)
from dlc.rewrites.llvm_lowering.bounds import bounds_checks
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    constant_int_value,
    int_constant,
    lowered,
    lowering_error,
    ops_append,
    replace_with_lowered,
)
from dlc.rewrites.llvm_lowering.memref import (
    NSW,
    buffer_bytes,
    cached_heap_allocate,
    cached_heap_release,
    cached_rows_allocate,
    cached_rows_release,
    element_address,
    entry_block_of,
    load_value,
    memref_type_of,
    runtime_bytes,
    stack_allocate,
    stored_value,
    strides_and_offset,
)
from xdsl.dialects import arith, cf, func, llvm
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    UnitAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import BlockInsertPoint, InsertPoint

# ----------------------------------------------------------------------------------------------
# Structure: loop.for, loop.block
# ----------------------------------------------------------------------------------------------


def lower_to_serial_loop(op: ForOp, rewriter: PatternRewriter, unroll: bool = False) -> None:
    """Replace `op` by a loop of `cf` branches that runs its iterations in order:

        ^init:                 ...; cf.br ^cond(%lb)
        ^cond(%iv: index):     %c = arith.cmpi slt, %iv, %ub; cf.cond_br %c, ^body, ^end
        ^body ... ^latch:      ...; %next = arith.addi %iv, %step; cf.br ^cond(%next)
        ^end:                  the ops that followed the loop

    With `unroll`, the back edge (`cf.br ^cond(%next)`) carries `UNROLL_FULL_ATTR`.
    """
    init_block = op.parent_block()
    if init_block is None:
        raise lowering_error(op, "expected to be inside a block")
    end_block = init_block.split_before(op)
    condition_block = op.body.blocks[0]
    first_op = condition_block.first_op
    assert first_op is not None
    first_body_block = condition_block.split_before(first_op)
    latch = op.body.blocks[-1]
    terminator = latch.last_op
    if not isinstance(terminator, YieldOp):
        raise lowering_error(op, f"expected a body ending in loop.yield, found {terminator}")
    rewriter.inline_region(op.body, BlockInsertPoint.before(end_block))
    iv = condition_block.args[0]

    stepped = arith.AddiOp(iv, op.step)
    rewriter.insert(stepped, InsertPoint.before(terminator))
    back_edge = cf.BranchOp(condition_block, stepped)
    if unroll:
        back_edge.attributes[UNROLL_FULL_ATTR] = UnitAttr()
    rewriter.replace(terminator, back_edge, [])
    rewriter.insert(cf.BranchOp(condition_block, op.lb), InsertPoint.at_end(init_block))
    in_range = arith.CmpiOp(iv, op.ub, "slt")
    rewriter.insert(in_range, InsertPoint.at_end(condition_block))
    rewriter.insert(
        cf.ConditionalBranchOp(in_range, first_body_block, (), end_block, ()),
        InsertPoint.at_end(condition_block),
    )
    rewriter.erase(op)


@dataclass
class SerialForLowering(RewritePattern):
    """`loop.for` of kind `serial` -> a `cf` loop."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data == "serial":
            lower_to_serial_loop(op, rewriter)


@dataclass
class ParallelForLowering(RewritePattern):
    """`loop.for` of kind `parallel` -> an outlined body run on `lowering.num_threads` threads
    by `GOMP_parallel`, each thread taking a static chunk of the iterations."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data == "parallel":
            from dlc.rewrites.llvm_lowering.openmp import outline_parallel_loop

            outline_parallel_loop(op, self.lowering, rewriter)


@dataclass
class VectorizedForLowering(RewritePattern):
    """`loop.for` of kind `vectorized` -> vector code (`vectorize_loop`); a loop with
    non-constant bounds or a body the vectorizer cannot widen -> a serial `cf` loop."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != "vectorized":
            return
        from dlc.rewrites.llvm_lowering.vector import vectorize_loop

        if not vectorize_loop(op, self.lowering, rewriter):
            lower_to_serial_loop(op, rewriter)


MAX_UNROLLED_TRIP = 64
"""The largest trip count an `unrolled` loop is unrolled for; a longer one runs serially."""


@dataclass
class UnrolledForLowering(RewritePattern):
    """`loop.for` of kind `unrolled` with constant bounds and at most `MAX_UNROLLED_TRIP`
    iterations -> a `cf` loop whose back edge asks LLVM for a full unroll (the `unroll`
    schedule primitive); otherwise a plain serial `cf` loop."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != "unrolled":
            return
        trip = op.trip_count()
        bounds = op.constant_bounds()
        unroll = trip is not None and bounds is not None and trip <= MAX_UNROLLED_TRIP
        lower_to_serial_loop(op, rewriter, unroll=unroll and bounds[2] > 0)


@dataclass
class BoundForLowering(RewritePattern):
    """`loop.for` of kind `bound`: a GPU binding, rejected on the CPU."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data == "bound":
            thread = op.thread.data if op.thread is not None else "?"
            raise lowering_error(
                op,
                f"expected a CPU loop kind (serial, parallel, vectorized, unrolled) for axis "
                f"'{op.axis.data}', found kind bound to '{thread}'",
            )


@dataclass
class BlockLowering(RewritePattern):
    """`loop.block` -> its body, inlined where the block was."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BlockOp, rewriter: PatternRewriter) -> None:
        blocks = op.body.blocks
        if len(blocks) == 1:
            body = blocks[0]
            terminator = body.last_op
            if isinstance(terminator, YieldOp):
                rewriter.erase(terminator)
            rewriter.inline_block(body, InsertPoint.before(op))
            rewriter.erase(op)
            return
        # The body already holds lowered control flow: branch into it and out of it.
        parent = op.parent_block()
        assert parent is not None
        continuation = parent.split_before(op)
        entry = blocks[0]
        for block in blocks:
            terminator = block.last_op
            if isinstance(terminator, YieldOp):
                rewriter.replace(terminator, cf.BranchOp(continuation), [])
        rewriter.inline_region(op.body, BlockInsertPoint.before(continuation))
        rewriter.insert(cf.BranchOp(entry), InsertPoint.at_end(parent))
        rewriter.erase(op)


def loop_structure_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that turn `loop.for` and `loop.block` into `cf` control flow."""
    return [
        SerialForLowering(),
        ParallelForLowering(lowering),
        VectorizedForLowering(lowering),
        UnrolledForLowering(),
        BoundForLowering(),
        BlockLowering(),
    ]


# ----------------------------------------------------------------------------------------------
# Memory: loop.load, loop.store, loop.alloc, loop.dealloc
# ----------------------------------------------------------------------------------------------


@dataclass
class LoadLowering(RewritePattern):
    """`loop.load` -> `llvm.load` of a scalar or of N contiguous elements (a vector)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp, rewriter: PatternRewriter) -> None:
        memref_type, indices, ops, address = _element_pointer(op, self.lowering, rewriter)
        ops = [*bounds_checks(op, memref_type, indices, op.result.type, self.lowering), *ops]
        alignment = access_alignment_of(op, memref_type, self.lowering)
        result_type = self.lowering.convert_type(op.result.type)
        ops, address = typed_address(ops, address, self.lowering.storage_type(result_type))
        load = load_value(address, result_type, alignment, self.lowering)
        replace_with_lowered(op, [*ops, *load], load[-1].results, rewriter)


@dataclass
class RowsLowering(RewritePattern):
    """`loop.rows %x[%first]` -> the base of `%x` advanced by `first` rows (a `getelementptr`
    of `first * row elements`)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RowsOp, rewriter: PatternRewriter) -> None:
        source_type = memref_type_of(op.source, op)
        row = 1
        for size in source_type.get_shape()[1:]:
            row *= size
        base = lowered(op.source, self.lowering, rewriter)
        first = lowered(op.first, self.lowering, rewriter)
        ops: list[Operation] = []
        offset = first
        if row != 1:
            elements = ops_append(ops, int_constant(row, self.lowering.index_type))
            offset = ops_append(ops, llvm.MulOp(first, elements, overflow=NSW))
        element_type = self.lowering.storage_type(source_type.get_element_type())
        ops.append(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], element_type, ssa_indices=[offset],
                              inbounds=True))
        replace_with_lowered(op, ops, ops[-1].results, rewriter)


@dataclass
class PrefetchLowering(RewritePattern):
    """`loop.prefetch` -> `llvm.prefetch` of the element's address (a `getelementptr` without
    `inbounds`: the element may lie past the buffer's end): a read (0), kept in every cache
    level (locality 3), of data (1): x86's `prefetcht0`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PrefetchOp, rewriter: PatternRewriter) -> None:
        _, _, ops, address = _element_pointer(op, self.lowering, rewriter, inbounds=False)
        flags = [int_constant(value, i32) for value in (0, 3, 1)]
        call = call_intrinsic("llvm.prefetch.p0", [address, *(f.result for f in flags)], None)
        rewriter.replace(op, [*ops, *flags, call], [])


@dataclass
class StoreLowering(RewritePattern):
    """`loop.store` -> `llvm.store` of a scalar or of N contiguous elements (a vector)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StoreOp, rewriter: PatternRewriter) -> None:
        value = lowered(op.value, self.lowering, rewriter)
        memref_type, indices, ops, address = _element_pointer(op, self.lowering, rewriter)
        ops = [*bounds_checks(op, memref_type, indices, op.value.type, self.lowering), *ops]
        alignment = access_alignment_of(op, memref_type, self.lowering)
        extend, value = stored_value(value, self.lowering)
        ops, address = typed_address([*ops, *extend], address, value.type)
        rewriter.replace(op, [*ops, llvm.StoreOp(value, address, alignment)], [])


def _element_pointer(
    op: LoadOp | StoreOp | PrefetchOp, lowering: LLVMLowering, rewriter: PatternRewriter,
    inbounds: bool = True,
) -> tuple[MemRefType, list[SSAValue], list[Operation], SSAValue]:
    """The memref type, the lowered indices, and the ops computing the address of the element
    `op` accesses (`folded_element_address`) with that address."""
    memref_type = memref_type_of(op.memref, op)
    base = lowered(op.memref, lowering, rewriter)
    indices = [lowered(i, lowering, rewriter) for i in op.indices]
    ops, address = folded_element_address(base, memref_type, indices, lowering, op, inbounds)
    return memref_type, indices, ops, address


def folded_element_address(
    base: SSAValue,
    memref_type: MemRefType,
    indices: Sequence[SSAValue],
    lowering: LLVMLowering,
    op: Operation,
    inbounds: bool = True,
) -> tuple[list[Operation], SSAValue]:
    """`element_address` for a row-major memref, with the constant indices folded into one
    offset: `sum(index_d * stride_d)` needs a multiply and an add only per index that is not a
    constant (unrolled and vectorized code has many constant indices; fewer ops lower and
    compile faster). Other layouts go through `element_address`. Without `inbounds` (a
    prefetch's address, which may lie past the buffer) the `getelementptr` is a plain one."""
    strides, offset, row_major = strides_and_offset(memref_type, op)
    if not row_major or len(indices) != len(strides):
        return element_address(base, memref_type, indices, lowering, op)
    index_type = lowering.index_type
    ops: list[Operation] = []
    constant = 0
    linear: SSAValue | None = None
    for index, stride in zip(indices, strides, strict=True):
        value = constant_int_value(index)
        if value is not None:
            constant += value * stride
            continue
        term = index
        if stride != 1:
            factor = int_constant(stride, index_type)
            term = ops_append(ops, llvm.MulOp(index, factor.result, overflow=NSW))
            ops.insert(len(ops) - 1, factor)
        linear = term if linear is None else ops_append(
            ops, llvm.AddOp(linear, term, overflow=NSW)
        )
    if constant:
        shift = int_constant(constant, index_type)
        ops.append(shift)
        linear = shift.result if linear is None else ops_append(
            ops, llvm.AddOp(linear, shift.result, overflow=NSW)
        )
    if linear is None:
        return ops, base
    element_type = lowering.convert_type(memref_type.get_element_type())
    gep = llvm.GEPOp(
        base, [llvm.GEP_USE_SSA_VAL], element_type, ssa_indices=[linear], inbounds=inbounds
    )
    return [*ops, gep], gep.result


def typed_address(
    ops: list[Operation], address: SSAValue, value_type: Attribute
) -> tuple[list[Operation], SSAValue]:
    """For a vector access, the address re-typed as a pointer to the vector (`getelementptr
    <N x T>, ptr, 0`): a no-op for LLVM, but llvmlite's IR builder checks the pointee type of
    pointers that come from an alloca."""
    if not isinstance(value_type, VectorType):
        return ops, address
    typed = llvm.GEPOp(address, [0], value_type, inbounds=True)
    return [*ops, typed], typed.result


def access_alignment_of(
    op: LoadOp | StoreOp, memref_type: MemRefType, lowering: LLVMLowering
) -> int:
    """The alignment of a load or store: its `alignment` attribute (set by the vectorizer where
    provable), else the element size."""
    attr = op.attributes.get("alignment")
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    return lowering.size_in_bytes(memref_type.get_element_type()) or 1


def _function_of(op: Operation) -> Operation:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp | llvm.FuncOp):
        parent = parent.parent_op()
    if parent is None:
        raise lowering_error(op, "expected to be nested in a function")
    return parent


def _returns_of(function: Operation) -> list[Operation]:
    return [
        block.last_op
        for block in function.regions[0].blocks
        if isinstance(block.last_op, func.ReturnOp | llvm.ReturnOp)
    ]


@dataclass
class AllocLowering(RewritePattern):
    """`loop.alloc` and its `loop.dealloc`s -> a stack or heap buffer.

    Scope `local` up to `max_stack_bytes`: an `llvm.alloca` in the function's entry block (its
    deallocs vanish), aligned like heap buffers to `alloc_alignment` (vector accesses rely on
    it). Scope `global`, or a larger local buffer: a heap buffer taken from the allocation
    site's cache slot where the buffer is allocated and given back at each `loop.dealloc`
    (`memref.cached_heap_allocate`: `aligned_alloc` only on the first call or a concurrent one,
    so that a call allocates nothing and touches no fresh page); a buffer without dealloc lives
    until the end of the function, so it is taken on entry and given back before every return.
    Scope `shared` is a GPU notion and is rejected.
    """

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AllocOp, rewriter: PatternRewriter) -> None:
        memref_type = memref_type_of(op.result, op)
        scope = op.scope.data
        if scope not in ("global", "local"):
            raise lowering_error(
                op, f"expected scope global or local on the CPU, found '{scope}'"
            )
        deallocs = [u.operation for u in op.result.uses if isinstance(u.operation, DeallocOp)]
        if op.sizes:
            self._dynamic(op, memref_type, deallocs, rewriter)
            return
        size = buffer_bytes(memref_type, self.lowering, op)
        if scope == "local" and size <= self.lowering.max_stack_bytes:
            alignment = self.lowering.alloc_alignment
            pointer = stack_allocate(op, memref_type, alignment, self.lowering, rewriter)
            for dealloc in deallocs:
                rewriter.erase(dealloc)
            replace_with_lowered(op, [], [pointer], rewriter)
            return
        alignment = self.lowering.alloc_alignment
        allocation, slot = cached_heap_allocate(op, size, alignment, self.lowering, rewriter)
        pointer = allocation[-1].results[0]
        if deallocs:
            rewriter.insert(allocation, InsertPoint.before(op))
            for dealloc in deallocs:
                rewriter.replace(dealloc, cached_heap_release(slot, pointer), [])
        else:
            function = _function_of(op)
            rewriter.insert(allocation, InsertPoint.at_start(entry_block_of(op)))
            for terminator in _returns_of(function):
                rewriter.insert(cached_heap_release(slot, pointer), InsertPoint.before(terminator))
        replace_with_lowered(op, [], [pointer], rewriter)

    def _dynamic(self, op: AllocOp, memref_type: MemRefType, deallocs: list[Operation],
                 rewriter: PatternRewriter) -> None:
        """A buffer of runtime size: taken from the site's cache slot where it is allocated
        (`memref.cached_rows_allocate`: a new one only when the cached one is smaller), given
        back at its deallocs (or before every return: it lives until the end of the
        function)."""
        sizes = [lowered(size, self.lowering, rewriter) for size in op.sizes]
        nbytes = runtime_bytes(memref_type, sizes, self.lowering)
        alignment = self.lowering.alloc_alignment
        allocation, slot = cached_rows_allocate(op, nbytes[-1].results[0], alignment,
                                                self.lowering, rewriter)
        pointer = allocation[-1].results[0]
        rewriter.insert([*nbytes, *allocation], InsertPoint.before(op))
        places = deallocs or list(_returns_of(_function_of(op)))
        for place in places:
            rewriter.insert(cached_rows_release(slot, pointer, alignment, self.lowering),
                            InsertPoint.before(place))
        for dealloc in deallocs:
            rewriter.erase(dealloc)
        replace_with_lowered(op, [], [pointer], rewriter)


@dataclass
class DeallocLowering(RewritePattern):
    """`loop.dealloc` of something other than a `loop.alloc` buffer: rejected (the alloc's
    pattern lowers the deallocs of its buffer)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DeallocOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.memref.owner, AllocOp):
            return
        raise lowering_error(
            op, f"expected a buffer made by loop.alloc, found {_describe(op.memref)}"
        )


def _describe(value: SSAValue) -> str:
    """Where `value` comes from, looking through the casts of values already lowered."""
    origin = value
    while isinstance(origin.owner, UnrealizedConversionCastOp):
        origin = origin.owner.inputs[0]
    owner = origin.owner
    if isinstance(owner, Block):
        return f"a block argument of type {value.type}"
    return f"the result of '{owner.name}'"


def loop_memory_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower `loop.load`, `loop.store`, `loop.alloc` and `loop.dealloc`."""
    return [
        LoadLowering(lowering),
        RowsLowering(lowering),
        PrefetchLowering(lowering),
        StoreLowering(lowering),
        AllocLowering(lowering),
        DeallocLowering(),
    ]

