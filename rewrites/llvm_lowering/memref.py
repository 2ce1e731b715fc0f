"""`memref` -> `llvm` with bare pointers (MLIR's FinalizeMemRefToLLVM, bare-pointer convention).

A memref of static shape lowers to the `!llvm.ptr` of its first element *before* the layout's
offset; the element [i, j, k] of a row-major memref<AxBxCxT> lives at
`getelementptr T, ptr, ((i * B + j) * C + k)`, and a strided layout contributes
`offset + sum(index * stride)`. Views (cast, subview, expand/collapse_shape) keep the pointer:
their static result layout already says where the elements are. Heap buffers come from
`aligned_alloc`/`free`; stack buffers are `llvm.alloca`s hoisted to the function's entry block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.contracts import (
    BUFFER_RELEASE,
    BUFFER_TAKE,
    ROWS_BUFFER_RELEASE,
    ROWS_BUFFER_TAKE,
)
from dlc.dialects.memref_layout import MemRefLayoutError, memref_layout
from dlc.rewrites.llvm_lowering.bounds import bounds_checks
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    constant_int_value,
    ensure_declared,
    int_constant,
    lowered,
    lowering_error,
    ops_append,
    replace_with_lowered,
)
from xdsl.dialects import func, llvm, memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

NSW = llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP])
"""In-bounds element offsets never overflow: index arithmetic carries `nsw`."""


def strides_and_offset(memref_type: MemRefType, op: Operation) -> tuple[list[int], int, bool]:
    """(strides, offset, row_major) of a memref of static shape and layout, in elements; a
    pass failure naming `op` for any other memref."""
    try:
        return memref_layout(memref_type)
    except MemRefLayoutError as e:
        raise lowering_error(op, str(e)) from None


def element_address(
    base: SSAValue,
    memref_type: MemRefType,
    indices: Sequence[SSAValue],
    lowering: LLVMLowering,
    op: Operation,
) -> tuple[list[Operation], SSAValue]:
    """Ops computing the address of `base[indices]` (lowered operands) and that address."""
    strides, offset, row_major = strides_and_offset(memref_type, op)
    if len(indices) != len(strides):
        raise lowering_error(
            op, f"expected {len(strides)} indices for {memref_type}, found {len(indices)}"
        )
    ops: list[Operation] = []
    index_type = lowering.index_type
    linear: SSAValue | None = None
    if row_major:
        shape = memref_type.get_shape()
        for dim, index in enumerate(indices):
            if linear is None:
                linear = index
                continue
            size = ops_append(ops, int_constant(shape[dim], index_type))
            scaled = ops_append(ops, llvm.MulOp(linear, size, overflow=NSW))
            linear = ops_append(ops, llvm.AddOp(scaled, index, overflow=NSW))
    else:
        terms: list[SSAValue] = []
        for index, stride in zip(indices, strides, strict=True):
            if stride == 1:
                terms.append(index)
                continue
            factor = ops_append(ops, int_constant(stride, index_type))
            terms.append(ops_append(ops, llvm.MulOp(index, factor, overflow=NSW)))
        if offset:
            terms.append(ops_append(ops, int_constant(offset, index_type)))
        for term in terms:
            linear = term if linear is None else ops_append(
                ops, llvm.AddOp(linear, term, overflow=NSW)
            )
    if linear is None:
        return ops, base
    element_type = lowering.storage_type(memref_type.get_element_type())
    gep = llvm.GEPOp(
        base, [llvm.GEP_USE_SSA_VAL], element_type, ssa_indices=[linear], inbounds=True
    )
    return [*ops, gep], gep.result


def load_value(
    address: SSAValue, value_type: Attribute, alignment: int, lowering: LLVMLowering
) -> list[Operation]:
    """Ops loading a value of the lowered `value_type` from `address` (the last op's result):
    an `llvm.load` of its storage type, truncated back to i1 for booleans."""
    storage = lowering.storage_type(value_type)
    load = llvm.LoadOp(address, storage, alignment)
    if storage == value_type:
        return [load]
    return [load, llvm.TruncOp(load.dereferenced_value, value_type)]


def stored_value(value: SSAValue, lowering: LLVMLowering) -> tuple[list[Operation], SSAValue]:
    """(ops, value) turning the lowered `value` into its storage type: booleans (i1) are
    zero-extended to a byte each (0 or 1, NumPy's `bool`)."""
    storage = lowering.storage_type(value.type)
    if storage == value.type:
        return [], value
    extended = llvm.ZExtOp(value, storage)
    return [extended], extended.res


def memref_type_of(value: SSAValue, op: Operation) -> MemRefType:
    """The memref type of `value`, or a pass failure naming `op`."""
    if not isinstance(value.type, MemRefType):
        raise lowering_error(op, f"expected a memref operand, found {value.type}")
    return value.type


def buffer_bytes(memref_type: MemRefType, lowering: LLVMLowering, op: Operation) -> int:
    """The size in bytes of the elements a memref of static shape spans."""
    strides, offset, _ = strides_and_offset(memref_type, op)
    element_size = lowering.size_in_bytes(memref_type.get_element_type())
    if element_size is None:
        raise lowering_error(
            op, f"expected a memref of scalars, found {memref_type.get_element_type()}"
        )
    shape = memref_type.get_shape()
    if any(size == 0 for size in shape):
        return 0
    last = offset + sum((size - 1) * stride for size, stride in zip(shape, strides, strict=True))
    return (last + 1) * element_size


def entry_block_of(op: Operation) -> Block:
    """The entry block of the function that contains `op`."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp | llvm.FuncOp):
        parent = parent.parent_op()
    if parent is None or not parent.regions[0].blocks:
        raise lowering_error(op, "expected to be nested in a function")
    return parent.regions[0].blocks[0]


def heap_allocate(
    anchor: Operation, size: int, alignment: int, lowering: LLVMLowering, rewriter: PatternRewriter
) -> list[Operation]:
    """Ops calling `aligned_alloc(alignment, size rounded up)`; the last result is the pointer."""
    index_type = lowering.index_type
    ptr = llvm.LLVMPointerType()
    ensure_declared(
        anchor, "aligned_alloc", llvm.LLVMFunctionType([index_type, index_type], ptr), rewriter
    )
    rounded = max(alignment, (size + alignment - 1) // alignment * alignment)
    align = int_constant(alignment, index_type)
    nbytes = int_constant(rounded, index_type)
    call = llvm.CallOp("aligned_alloc", align, nbytes, return_type=ptr)
    return [align, nbytes, call]


def runtime_bytes(memref_type: MemRefType, sizes: Sequence[SSAValue], lowering: LLVMLowering
                  ) -> list[Operation]:
    """Ops computing the bytes of a row-major buffer of `memref_type` whose dynamic dims have
    the lowered `sizes` (the last op's result)."""
    element_size = lowering.size_in_bytes(memref_type.get_element_type()) or 1
    static = element_size
    for size in memref_type.get_shape():
        static *= max(size, 1)
    ops: list[Operation] = []
    nbytes = ops_append(ops, int_constant(static, lowering.index_type))
    for size in sizes:
        nbytes = ops_append(ops, llvm.MulOp(nbytes, size))
    return ops


def heap_free(
    anchor: Operation, pointer: SSAValue, rewriter: PatternRewriter
) -> list[Operation]:
    """Ops calling `free(pointer)`."""
    ensure_declared(
        anchor, "free", llvm.LLVMFunctionType([llvm.LLVMPointerType()], llvm.LLVMVoidType()),
        rewriter,
    )
    return [llvm.CallOp("free", pointer)]


BUFFER_SLOT_PREFIX = "dlc_buffer_cache_"
"""The name of each allocation site's slot: an internal i64 global, 0 or a cached buffer."""


def _module_of(op: Operation) -> ModuleOp:
    module = op
    while not isinstance(module, ModuleOp):
        parent = module.parent_op()
        if parent is None:
            raise lowering_error(op, "expected to be nested in a builtin.module")
        module = parent
    return module


def cached_heap_allocate(
    anchor: Operation, size: int, alignment: int, lowering: LLVMLowering, rewriter: PatternRewriter
) -> tuple[list[Operation], str]:
    """Ops taking a heap buffer for the allocation site `anchor` from its cache slot (a new
    internal global, null at first): `dlc_buffer_take(@slot, alignment, size rounded up)`, which
    allocates only when the slot is empty (the first call, or a concurrent one). The last op's
    result is the pointer; the slot's name goes to `cached_heap_release`.

    A site's size is static, so a cached buffer always fits; a call takes the buffer and gives it
    back (`dlc_buffer_release`), so calls made one after the other allocate nothing after the
    first, and concurrent calls (threads, re-entry) each get a buffer of their own. A cached
    buffer lives as long as the process (ONNX Runtime's arena, TVM's workspace pool)."""
    index_type = lowering.index_type
    ptr = llvm.LLVMPointerType()
    module = _module_of(anchor)
    ensure_declared(anchor, "aligned_alloc", llvm.LLVMFunctionType([index_type, index_type], ptr),
                    rewriter)
    ensure_declared(anchor, "free", llvm.LLVMFunctionType([ptr], llvm.LLVMVoidType()), rewriter)
    ensure_declared(anchor, BUFFER_TAKE,
                    llvm.LLVMFunctionType([ptr, index_type, index_type], ptr), rewriter)
    ensure_declared(anchor, BUFFER_RELEASE, llvm.LLVMFunctionType([ptr, ptr], llvm.LLVMVoidType()),
                    rewriter)
    slot_name = _new_slot(module, index_type, rewriter)
    rounded = max(alignment, (size + alignment - 1) // alignment * alignment)
    address = llvm.AddressOfOp(slot_name, ptr)
    align = int_constant(alignment, index_type)
    nbytes = int_constant(rounded, index_type)
    call = llvm.CallOp(BUFFER_TAKE, address.result, align, nbytes, return_type=ptr)
    return [address, align, nbytes, call], slot_name


def _new_slot(module: ModuleOp, index_type: Attribute, rewriter: PatternRewriter) -> str:
    """A new internal i64 global of `module`, 0 at first: an allocation site's cache slot."""
    taken = {
        attr.data for op in module.ops
        if isinstance(attr := getattr(op, "sym_name", None), StringAttr)
    }
    index = 0
    while f"{BUFFER_SLOT_PREFIX}{index}" in taken:
        index += 1
    slot_name = f"{BUFFER_SLOT_PREFIX}{index}"
    slot = llvm.GlobalOp(index_type, slot_name, "internal", value=IntegerAttr(0, index_type),
                         alignment=8)
    rewriter.insert(slot, InsertPoint.at_end(module.body.block))
    return slot_name


def cached_rows_allocate(
    anchor: Operation, nbytes: SSAValue, alignment: int, lowering: LLVMLowering,
    rewriter: PatternRewriter,
) -> tuple[list[Operation], str]:
    """Ops taking a buffer of `nbytes` (a runtime value) for the allocation site `anchor` from
    its cache slot (`dlc_rows_buffer_take`: the cached buffer when it is large enough, else a
    new one); the last op's result is the pointer; the slot's name goes to
    `cached_rows_release`."""
    index_type = lowering.index_type
    ptr = llvm.LLVMPointerType()
    ensure_declared(anchor, "aligned_alloc", llvm.LLVMFunctionType([index_type, index_type], ptr),
                    rewriter)
    ensure_declared(anchor, "free", llvm.LLVMFunctionType([ptr], llvm.LLVMVoidType()), rewriter)
    ensure_declared(anchor, ROWS_BUFFER_TAKE,
                    llvm.LLVMFunctionType([ptr, index_type, index_type], ptr), rewriter)
    ensure_declared(anchor, ROWS_BUFFER_RELEASE,
                    llvm.LLVMFunctionType([ptr, ptr, index_type], llvm.LLVMVoidType()), rewriter)
    slot_name = _new_slot(_module_of(anchor), index_type, rewriter)
    address = llvm.AddressOfOp(slot_name, ptr)
    align = int_constant(alignment, index_type)
    call = llvm.CallOp(ROWS_BUFFER_TAKE, address.result, align, nbytes, return_type=ptr)
    return [address, align, call], slot_name


def cached_rows_release(slot_name: str, pointer: SSAValue, alignment: int,
                        lowering: LLVMLowering) -> list[Operation]:
    """Ops giving the buffer `pointer` back to the slot `slot_name` (`cached_rows_allocate`)."""
    address = llvm.AddressOfOp(slot_name, llvm.LLVMPointerType())
    align = int_constant(alignment, lowering.index_type)
    return [address, align, llvm.CallOp(ROWS_BUFFER_RELEASE, address.result, pointer, align)]


def cached_heap_release(slot_name: str, pointer: SSAValue) -> list[Operation]:
    """Ops giving the buffer `pointer` back to the slot `slot_name` (`cached_heap_allocate`)."""
    address = llvm.AddressOfOp(slot_name, llvm.LLVMPointerType())
    return [address, llvm.CallOp(BUFFER_RELEASE, address.result, pointer)]


def stack_allocate(
    anchor: Operation,
    memref_type: MemRefType,
    alignment: int,
    lowering: LLVMLowering,
    rewriter: PatternRewriter,
) -> SSAValue:
    """An `llvm.alloca` for `memref_type` at the start of the function's entry block."""
    element_size = lowering.size_in_bytes(memref_type.get_element_type())
    assert element_size is not None
    count = buffer_bytes(memref_type, lowering, anchor) // element_size
    entry = entry_block_of(anchor)
    size = int_constant(max(count, 1), lowering.index_type)
    alloca = llvm.AllocaOp(
        size, lowering.storage_type(memref_type.get_element_type()), alignment=alignment
    )
    rewriter.insert([size, alloca], InsertPoint.at_start(entry))
    return alloca.res


@dataclass
class LoadLowering(RewritePattern):
    """`memref.load` -> address computation + `llvm.load` (of a byte for i1)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        memref_type = memref_type_of(op.memref, op)
        base = lowered(op.memref, self.lowering, rewriter)
        indices = [lowered(i, self.lowering, rewriter) for i in op.indices]
        ops, address = element_address(base, memref_type, indices, self.lowering, op)
        ops = [*bounds_checks(op, memref_type, indices, op.res.type, self.lowering), *ops]
        result_type = self.lowering.convert_type(op.res.type)
        alignment = self.lowering.size_in_bytes(op.res.type) or 1
        load = load_value(address, result_type, alignment, self.lowering)
        replace_with_lowered(op, [*ops, *load], load[-1].results, rewriter)


@dataclass
class StoreLowering(RewritePattern):
    """`memref.store` -> address computation + `llvm.store` (of a byte for i1)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        memref_type = memref_type_of(op.memref, op)
        value = lowered(op.value, self.lowering, rewriter)
        base = lowered(op.memref, self.lowering, rewriter)
        indices = [lowered(i, self.lowering, rewriter) for i in op.indices]
        ops, address = element_address(base, memref_type, indices, self.lowering, op)
        ops = [*bounds_checks(op, memref_type, indices, op.value.type, self.lowering), *ops]
        extend, value = stored_value(value, self.lowering)
        store = llvm.StoreOp(value, address, self.lowering.size_in_bytes(op.value.type))
        rewriter.replace(op, [*ops, *extend, store], [])


def _alignment(op: Operation, minimum: int) -> int:
    requested = op.properties.get("alignment")
    value = getattr(getattr(requested, "value", None), "data", 0)
    return max(minimum, value)


@dataclass
class AllocLowering(RewritePattern):
    """`memref.alloc` -> `aligned_alloc`; `memref.alloca` -> `llvm.alloca` in the entry block."""

    lowering: LLVMLowering

    op_types: ClassVar[tuple[type[Operation], ...]] = (memref.AllocOp, memref.AllocaOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, memref.AllocOp | memref.AllocaOp):
            return
        memref_type = memref_type_of(op.memref, op)
        if op.dynamic_sizes or op.symbol_operands:
            raise lowering_error(op, f"expected a static allocation, found {memref_type}")
        if isinstance(op, memref.AllocaOp):
            element_size = self.lowering.size_in_bytes(memref_type.get_element_type()) or 1
            pointer = stack_allocate(
                op, memref_type, _alignment(op, element_size), self.lowering, rewriter
            )
            replace_with_lowered(op, [], [pointer], rewriter)
            return
        size = buffer_bytes(memref_type, self.lowering, op)
        alignment = _alignment(op, self.lowering.alloc_alignment)
        ops = heap_allocate(op, size, alignment, self.lowering, rewriter)
        replace_with_lowered(op, ops, ops[-1].results, rewriter)


@dataclass
class DeallocLowering(RewritePattern):
    """`memref.dealloc` -> `free`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter) -> None:
        pointer = lowered(op.memref, self.lowering, rewriter)
        rewriter.replace(op, heap_free(op, pointer, rewriter), [])


@dataclass
class CopyLowering(RewritePattern):
    """`memref.copy` of contiguous memrefs -> `llvm.memcpy`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter) -> None:
        for value in (op.source, op.destination):
            memref_type = memref_type_of(value, op)
            if not strides_and_offset(memref_type, op)[2]:
                raise lowering_error(
                    op, f"expected contiguous row-major memrefs, found {memref_type}"
                )
        size = buffer_bytes(memref_type_of(op.source, op), self.lowering, op)
        source = lowered(op.source, self.lowering, rewriter)
        destination = lowered(op.destination, self.lowering, rewriter)
        nbytes = int_constant(size, self.lowering.index_type)
        volatile = int_constant(0, i1)
        suffix = f"p0.p0.i{self.lowering.index_bitwidth}"
        copy = call_intrinsic(
            f"llvm.memcpy.{suffix}", [destination, source, nbytes.result, volatile.result], None
        )
        rewriter.replace(op, [nbytes, volatile, copy], [])


@dataclass
class ViewLowering(RewritePattern):
    """`memref.cast`, `memref.subview`, `memref.expand_shape`, `memref.collapse_shape` -> the
    source pointer (the static result layout locates the elements)."""

    lowering: LLVMLowering

    op_types: ClassVar[tuple[type[Operation], ...]] = (
        memref.CastOp, memref.SubviewOp, memref.ExpandShapeOp, memref.CollapseShapeOp
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.op_types):
            return
        result_type = op.results[0].type
        if not isinstance(result_type, MemRefType):
            raise lowering_error(op, f"expected a ranked memref result, found {result_type}")
        strides_and_offset(result_type, op)
        pointer = lowered(op.operands[0], self.lowering, rewriter)
        replace_with_lowered(op, [], [pointer], rewriter)


@dataclass
class DimLowering(RewritePattern):
    """`memref.dim` of a static dimension -> a constant."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter) -> None:
        memref_type = memref_type_of(op.source, op)
        dim = constant_int_value(op.index)
        if dim is None:
            raise lowering_error(op, "expected a constant dimension index")
        shape = memref_type.get_shape()
        if not 0 <= dim < len(shape) or shape[dim] < 0:
            raise lowering_error(op, f"expected a static dimension of {memref_type}, found {dim}")
        constant = int_constant(shape[dim], self.lowering.index_type)
        replace_with_lowered(op, [constant], constant.results, rewriter)


@dataclass
class GlobalLowering(RewritePattern):
    """`memref.global` -> `llvm.mlir.global` of a flat array (zeros if uninitialized)."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GlobalOp, rewriter: PatternRewriter) -> None:
        memref_type = op.type
        if not strides_and_offset(memref_type, op)[2]:
            raise lowering_error(op, f"expected a row-major memref, found {memref_type}")
        element_type = self.lowering.convert_type(memref_type.get_element_type())
        count = 1
        for size in memref_type.get_shape():
            count *= size
        value: Attribute = op.initial_value
        if isinstance(value, UnitAttr):
            zeros_type = TensorType(memref_type.get_element_type(), memref_type.get_shape())
            value = DenseIntOrFPElementsAttr.from_list(zeros_type, [0] * count)
        private = op.sym_visibility.data == "private"
        global_op = llvm.GlobalOp(
            llvm.LLVMArrayType(count, element_type),
            op.sym_name,
            "internal" if private else "external",
            constant=op.constant is not None,
            value=value,
            alignment=_alignment(op, self.lowering.alloc_alignment),
        )
        rewriter.replace(op, [global_op], [])


@dataclass
class GetGlobalLowering(RewritePattern):
    """`memref.get_global` -> `llvm.mlir.addressof`."""

    lowering: LLVMLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GetGlobalOp, rewriter: PatternRewriter) -> None:
        address = llvm.AddressOfOp(op.name_, llvm.LLVMPointerType())
        replace_with_lowered(op, [address], address.results, rewriter)


def memref_to_llvm_patterns(lowering: LLVMLowering) -> list[RewritePattern]:
    """The patterns that lower the `memref` ops of static shape dlc produces."""
    return [
        LoadLowering(lowering),
        StoreLowering(lowering),
        AllocLowering(lowering),
        DeallocLowering(lowering),
        CopyLowering(lowering),
        ViewLowering(lowering),
        DimLowering(lowering),
        GlobalLowering(lowering),
        GetGlobalLowering(lowering),
    ]
