"""The pass `loop-linearize-runtime-strides`: the accesses to a buffer whose strides depend on
runtime sizes become accesses to a flat view of it at an index computed from those sizes.

Counterpart: the strides of MLIR's memref descriptors, which carry a dynamic memref's sizes to
every access (`memref.extract_strided_metadata`, then `affine.linearize_index`). dlc's buffers
lower to bare pointers (`convert-loop-to-llvm`), whose element offsets use static strides: a
memref with a dynamic dim after the leading one (`memref<?x3x?x?xf32>`, images of a runtime
height and width) has strides made of runtime sizes. Those sizes are SSA values in the function:
the `index` arguments that pass its arguments' dynamic dims (`dlc.dim_args`), the `sizes` of a
`loop.alloc`. For each such buffer this pass inserts a flat view after its definition
(`memref.collapse_shape` to `memref<?xf32>`, a buffer of runtime rows of one element, which the
lowering takes) and rewrites every `loop.load`, `loop.store` and `loop.prefetch` of it into one
of the view at `((i0 * d1 + i1) * d2 + i2) ...` (`arith` on `index`: LLVM hoists the products of
sizes out of the loops). Blocks' `reads`/`writes` name the view; calls and deallocs keep the
buffer.

A buffer of static strides (static shape, or runtime rows alone) is left as it is. A
`memref.collapse_shape` of such a buffer that merges adjacent dims (a runtime plane made one
dim by the schedule of runtime extents) is folded: its accesses go to the buffer's flat view at
the linear index over the view's sizes (products of the buffer's). A runtime-strided buffer
that another op takes apart (another view: `loop.rows`, `memref.subview`; an intrinsic) fails
the pass naming the op: the schedules make none of these for nests over runtime extents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    LoadOp,
    PrefetchOp,
    StoreOp,
    dim_args,
)
from dlc.dialects.memref_layout import has_runtime_strides
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

PASS_NAME = "loop-linearize-runtime-strides"

_ACCESSES = (LoadOp, StoreOp, PrefetchOp)
_KEEP_BUFFER = (func.CallOp, DeallocOp, memref.DeallocOp)
"""Users that take the buffer whole, not its elements."""


def _fail(op: Operation, message: str) -> PassFailedException:
    return PassFailedException(f"'{op.name}' op {message} ({PASS_NAME})")


def _index_constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def buffer_sizes(buffer: SSAValue, function: func.FuncOp) -> list[SSAValue | int]:
    """The size of each dim of `buffer` in `function`: static ones as ints, dynamic ones as
    the `index` value that holds them (a size argument, an alloc's `sizes` operand)."""
    shape = list(buffer.type.get_shape())  # type: ignore[attr-defined]
    owner = buffer.owner
    dynamic: list[SSAValue]
    if isinstance(buffer, BlockArgument) and buffer.block is function.body.blocks.first:
        args = function.body.block.args
        first_size = len(args) - len(dim_args(function))
        dynamic = [args[first_size + n] for n, (position, _dim) in enumerate(dim_args(function))
                   if position == buffer.index]
    else:
        assert isinstance(owner, AllocOp), "runtime_strided_buffers: arguments and allocations"
        dynamic = list(owner.sizes)
    given = iter(dynamic)
    return [size if size >= 0 else next(given) for size in shape]


def _linear_index(sizes: Sequence[SSAValue | int], indices: Sequence[SSAValue]
                  ) -> tuple[list[Operation], SSAValue]:
    """Ops computing `((i0 * d1 + i1) * d2 + i2) ...` and its value."""
    ops: list[Operation] = []
    linear = indices[0]
    for size, index in zip(sizes[1:], indices[1:], strict=True):
        if isinstance(size, int):
            size_op = _index_constant(size)
            ops.append(size_op)
            size = size_op.result
        scaled = arith.MuliOp(linear, size)
        total = arith.AddiOp(scaled.result, index)
        ops += [scaled, total]
        linear = total.result
    return ops, linear


def _flat_view(buffer: SSAValue) -> memref.CollapseShapeOp:
    type_ = buffer.type
    assert isinstance(type_, MemRefType)
    return memref.CollapseShapeOp(
        operands=[buffer],
        result_types=[MemRefType(type_.get_element_type(), [DYNAMIC_INDEX])],
        properties={"reassociation": ArrayAttr([ArrayAttr(
            IntegerAttr(axis, i64) for axis in range(type_.get_num_dims()))])},
    )


def linearize_buffer(buffer: SSAValue, function: func.FuncOp) -> None:
    """Rewrites the accesses to the runtime-strided `buffer` as accesses to its flat view."""
    if all(isinstance(use.operation, _KEEP_BUFFER) for use in buffer.uses):
        return  # passed whole only: no view needed
    sizes = buffer_sizes(buffer, function)
    view = _flat_view(buffer)
    view.result.name_hint = f"{buffer.name_hint or 'buffer'}_flat"
    owner = buffer.owner
    if isinstance(owner, Block):
        Rewriter.insert_op(view, InsertPoint.at_start(owner))
    else:
        assert isinstance(owner, Operation)
        Rewriter.insert_op(view, InsertPoint.after(owner))
    for use in list(buffer.uses):
        user = use.operation
        if user is view or isinstance(user, _KEEP_BUFFER):
            continue
        if isinstance(user, memref.CollapseShapeOp) and _merges_adjacent_dims(user):
            _linearize_view(user, sizes, view.result)
            continue
        _linearize_use(user, use.index, sizes, view.result, buffer)


def _merges_adjacent_dims(view: memref.CollapseShapeOp) -> bool:
    """Whether `view`'s reassociation groups are runs of consecutive dims, in order (a plane
    merged into one dim: the same row-major offsets)."""
    flat = [int(axis.value.data) for group in view.reassociation for axis in group.data]
    return flat == list(range(len(flat)))


def _linearize_view(view: memref.CollapseShapeOp, sizes: Sequence[SSAValue | int],
                    flat: SSAValue) -> None:
    """The accesses to `view` (a collapse of adjacent dims of a runtime-strided buffer of
    `sizes`) as accesses to the buffer's flat view `flat` (the same offsets: row-major), the
    collapsed dims' sizes multiplied before it; then `view` is erased."""
    view_sizes: list[SSAValue | int] = []
    for group in view.reassociation:
        product: SSAValue | int | None = None
        for axis in group.data:
            size = sizes[int(axis.value.data)]
            if product is None or isinstance(product, int) and isinstance(size, int):
                product = size if product is None else product * size  # type: ignore[operator]
                continue
            operands = [_index_constant(v) if isinstance(v, int) else v for v in (product, size)]
            ops = [v for v in operands if isinstance(v, Operation)]
            multiply = arith.MuliOp(*(v.result if isinstance(v, Operation) else v
                                      for v in operands))
            Rewriter.insert_op([*ops, multiply], InsertPoint.before(view))
            product = multiply.result
        assert product is not None, "a reassociation group is not empty"
        view_sizes.append(product)
    for use in list(view.result.uses):
        _linearize_use(use.operation, use.index, view_sizes, flat, view.result)
    Rewriter.erase_op(view)


def _linearize_use(user: Operation, index: int, sizes: Sequence[SSAValue | int],
                   flat: SSAValue, buffer: SSAValue) -> None:
    """`user` of `buffer` (operand `index`) made to use its flat view `flat`: a block's list
    names it, an access goes to it at the linear index of its indices over `sizes`."""
    if isinstance(user, BlockOp):
        operands = list(user.operands)
        operands[index] = flat
        user.operands = operands
        return
    if not isinstance(user, _ACCESSES) or index != user.operands.index(user.memref):
        raise _fail(user, f"expected loads, stores, prefetches, calls, deallocs or blocks to "
                          f"use the buffer of runtime strides {buffer.type}")
    ops, linear = _linear_index(sizes, list(user.indices))
    Rewriter.insert_op(ops, InsertPoint.before(user))
    if isinstance(user, LoadOp):
        new: Operation = LoadOp(flat, [linear], user.result.type)
    elif isinstance(user, StoreOp):
        new = StoreOp(user.value, flat, [linear])
    else:
        new = PrefetchOp(flat, [linear])
    new.attributes.update(user.attributes)
    Rewriter.replace_op(user, new)


def runtime_strided_buffers(function: func.FuncOp) -> list[SSAValue]:
    """The buffers of `function` (arguments and allocations) whose strides are runtime sizes."""
    if not function.body.blocks:
        return []
    buffers = [arg for arg in function.body.block.args if has_runtime_strides(arg.type)]
    buffers += [op.result for op in function.walk()
                if isinstance(op, AllocOp) and has_runtime_strides(op.result.type)]
    return buffers


@dataclass(frozen=True)
class LoopLinearizeRuntimeStridesPass(ModulePass):
    """Rewrite the accesses to buffers whose strides are runtime sizes (a dynamic dim after the
    leading one) as accesses to a flat view at an index computed from those sizes.

    *Input invariant*: loop-level IR whose functions' buffers of runtime strides are their
    arguments (sized by their `index` arguments, `dlc.dim_args`) or `loop.alloc`s (sized by
    their `sizes`), used by `loop.load`, `loop.store`, `loop.prefetch`, `loop.block` lists,
    `func.call`s, deallocs and `memref.collapse_shape`s of adjacent dims (used the same way)
    only; another use (another view of such a buffer) fails the pass naming the op.

    *Output IR*: each such buffer with accesses has a `memref.collapse_shape` to `memref<?xT>`
    right after its definition, and every access uses it at `((i0 * d1 + i1) * d2 + i2) ...`
    (`arith` on `index`, before the access); blocks read and write the view; calls and deallocs
    keep the buffer; a collapse of adjacent dims is replaced the same way, its accesses at the
    linear index over its own sizes. Other buffers and functions are unchanged.

    *Invariants*: the same elements are read and written in the same order (a buffer of the
    identity layout is row-major, so the flat index is the element's offset).
    """

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp):
                for buffer in runtime_strided_buffers(function):
                    linearize_buffer(buffer, function)
