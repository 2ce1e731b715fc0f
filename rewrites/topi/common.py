"""Building blocks of compute definitions: computes, index arithmetic, guarded and broadcast reads.

Counterpart: the helpers of TVM's TOPI (`topi.nn.pad`, `tir.if_then_else`, broadcast index maps).
Index arithmetic is `arith` on `index`; every read that could leave its tensor is written as
"clamp the indices, read, `arith.select(in_bounds, read, pad_value)`", so no read is ever out of
bounds. A possibly negative index is tested and clamped as an unsigned number: `cmpi ult %i, dim`
is false and `minui %i, dim - 1` is `dim - 1` for a negative `%i`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph.attrs import is_low_precision_float, to_numpy_dtype
from dlc.dialects.graph.ops import window_output_size
from dlc.dialects.tensor_expr.ops import ComputeBody, ComputeOp, ReadOp
from dlc.rewrites.output_sizes import add_size_check, dim_expr, index_expr
from xdsl.builder import Builder
from xdsl.dialects import arith, tensor
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    NameLoc,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    f64,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.utils.exceptions import PassFailedException

_SSA_NAME = re.compile(r"[^A-Za-z0-9_$.-]")

from dlc.dialects.contracts import ONNX_NODE_ATTR as NODE_ATTR  # noqa: E402

"""The discardable attribute of a compute that names the ONNX node (or graph op) it comes from."""


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def tensor_type(value: SSAValue) -> TensorType:
    """The type of `value`, a ranked tensor (graph ops are verified to have one)."""
    type = value.type
    assert isinstance(type, TensorType), f"expected a ranked tensor, found {type}"
    return type


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The static shape of the tensor `value`."""
    return tuple(tensor_type(value).get_shape())


def is_float(element_type: Attribute) -> bool:
    """Whether `element_type` is a floating-point type."""
    return isinstance(element_type, AnyFloat)


def is_unsigned(element_type: Attribute) -> bool:
    """Whether `element_type` is an unsigned integer (ONNX's uint8 ... uint64).

    Computes on unsigned tensors are built with the unsigned arith ops (divui, maxui, cmpi ult,
    uitofp, ...) on values of the unsigned type; `convert-graph-to-tensor-expr` then makes every
    type signless (`signless_types`), since arith computes on signless integers only.
    """
    return isinstance(element_type, IntegerType) and (
        element_type.signedness.data == Signedness.UNSIGNED
    )


def check_element_type(op: Operation, element_type: Attribute) -> None:
    """Rejects element types the definitions cannot compute on (signed `si` integers, index).

    Raises PassFailedException naming `op`.
    """
    if is_float(element_type) or is_unsigned(element_type):
        return
    signless = isinstance(element_type, IntegerType) and (
        element_type.signedness.data == Signedness.SIGNLESS
    )
    if signless:
        return
    raise PassFailedException(
        f"'{op.name}' op expected a float, signless or unsigned integer element type, found "
        f"{element_type}"
    )


def accumulator_type(element_type: Attribute) -> Attribute:
    """The type a sum of products of `element_type` accumulates in: f32 for f16 and bf16 (as
    their GEMM instructions, `vdpbf16ps`, and ONNX Runtime do), else `element_type` itself."""
    return f32 if is_low_precision_float(element_type) else element_type


def convert_float(b: Builder, value: SSAValue, element_type: Attribute) -> SSAValue:
    """`value` (a float scalar) as the float type `element_type`: `arith.extf` to a wider
    float (exact), `arith.truncf` (to nearest even) to a narrower one, f16 <-> bf16 through f32
    (one rounding); `value` itself if the types match."""
    source = value.type
    if source == element_type:
        return value
    width = source.bitwidth  # pyright: ignore[reportAttributeAccessIssue]
    target_width = element_type.bitwidth  # pyright: ignore[reportAttributeAccessIssue]
    if width == target_width:
        value = b.insert(arith.ExtFOp(value, f32)).result
    kind = arith.ExtFOp if target_width > width else arith.TruncFOp
    return b.insert(kind(value, element_type)).result  # pyright: ignore[reportArgumentType]


def zero_attr(element_type: Attribute) -> IntegerAttr | FloatAttr:
    """0 of `element_type`."""
    return scalar_attr(0, element_type)


def one_attr(element_type: Attribute) -> IntegerAttr | FloatAttr:
    """1 of `element_type`."""
    return scalar_attr(1, element_type)


def lowest_attr(element_type: Attribute) -> IntegerAttr | FloatAttr:
    """The least value: -inf, the smallest integer of the width (0 if unsigned), or false (for
    i1 reductions, whose combiners are signed, see `reduction`)."""
    if is_float(element_type):
        return scalar_attr(-math.inf, element_type)
    assert isinstance(element_type, IntegerType)
    width = element_type.width.data
    if width == 1 or is_unsigned(element_type):
        return scalar_attr(0, element_type)
    return scalar_attr(-(1 << (width - 1)), element_type)


def highest_attr(element_type: Attribute) -> IntegerAttr | FloatAttr:
    """The greatest value: +inf, the largest integer of the width (signed or unsigned), or
    true (for i1 reductions, whose combiners are signed, see `reduction`)."""
    if is_float(element_type):
        return scalar_attr(math.inf, element_type)
    assert isinstance(element_type, IntegerType)
    width = element_type.width.data
    if width == 1:
        return scalar_attr(1, element_type)
    if is_unsigned(element_type):
        return scalar_attr((1 << width) - 1, element_type)
    return scalar_attr((1 << (width - 1)) - 1, element_type)


def is_bool(element_type: Attribute) -> bool:
    """Whether `element_type` is i1."""
    return isinstance(element_type, IntegerType) and element_type.width.data == 1


def reduction(kind: str, element_type: Attribute) -> tuple[str, IntegerAttr | FloatAttr]:
    """(combiner, init) of a `kind` (sum, max, min, prod) reduction over `element_type`.

    Integer combiners are signed (maxsi, minsi), so on i1 (true is -1) a logical max (or) is
    the signed min from false, and a logical min (and) the signed max from true. Unsigned
    integers combine with `maxui` / `minui`.
    """
    if is_bool(element_type) and kind in ("max", "min"):
        return ("min", zero_attr(element_type)) if kind == "max" else ("max", one_attr(
            element_type))
    inits = {"sum": zero_attr, "max": lowest_attr, "min": highest_attr, "prod": one_attr}
    if is_unsigned(element_type) and kind in ("max", "min"):
        return f"{kind}ui", inits[kind](element_type)
    return kind, inits[kind](element_type)


def scalar_attr(value: float, element_type: Attribute) -> IntegerAttr | FloatAttr:
    """`value` as an attribute of `element_type` (truncated toward zero for integers)."""
    if is_float(element_type):
        return FloatAttr(float(value), element_type)  # pyright: ignore[reportArgumentType]
    assert isinstance(element_type, IntegerType | IndexType)
    if isinstance(element_type, IntegerType) and element_type.width.data == 1:
        return IntegerAttr(1 if value else 0, element_type)
    return IntegerAttr(int(value), element_type)


# ---------------------------------------------------------------------------------------------
# Computes
# ---------------------------------------------------------------------------------------------


def node_name(op: Operation) -> str | None:
    """The name of the ONNX node `op` comes from: its `NameLoc`, else a `name` string attribute."""
    location = op.location
    if isinstance(location, NameLoc):
        return location.desc.data
    name = op.attributes.get("name")
    return name.data if isinstance(name, StringAttr) else None


def dim_size(builder: Builder, value: SSAValue, dim: int) -> SSAValue:
    """The size of the dynamic dim `dim` of `value`: a compute's `sizes` operand for it, an
    existing `tensor.dim` of it in the same block, else a new `tensor.dim` (so that computes
    over the same rows share one size value, which epilogue fusion compares)."""
    owner = value.owner
    if isinstance(owner, ComputeOp):
        size = owner.extents()[dim]
        assert isinstance(size, SSAValue), "a dynamic dim has a size operand"
        return size
    block = builder.insertion_point.block
    for use in value.uses:
        user = use.operation
        if (isinstance(user, tensor.DimOp) and user.source is value
                and user.parent_block() is block
                and isinstance(index := user.index.owner, arith.ConstantOp)
                and index.value == IntegerAttr(dim, IndexType())):
            return user.result
    index = builder.insert(arith.ConstantOp(IntegerAttr(dim, IndexType()))).result
    return builder.insert(tensor.DimOp(value, index)).result


Extent = int | SSAValue
"""The size of a tensor dim: an int where static, an `index` value (`dim_size`) where dynamic."""


def extents_of(builder: Builder, value: SSAValue) -> list[Extent]:
    """The size of each dim of `value`: static ones as ints, dynamic ones as `dim_size` values
    inserted with `builder` (outside any compute body: a body captures them)."""
    return [dim if dim >= 0 else dim_size(builder, value, axis)
            for axis, dim in enumerate(shape_of(value))]


def broadcast_extents(builder: Builder, operands: Sequence[SSAValue], result: SSAValue
                      ) -> list[Extent]:
    """The size of each dim of a broadcasting op's `result`: static ones as ints, a dynamic
    one the runtime size of the first operand dynamic there, the operands aligned from the
    right (NumPy's broadcast: a causal mask's `S x S` against scores' `N x S x S`)."""
    rank = tensor_type(result).get_num_dims()
    extents: list[Extent] = list(shape_of(result))
    for dim, size in enumerate(shape_of(result)):
        if size >= 0:
            continue
        for value in operands:
            at = dim - (rank - tensor_type(value).get_num_dims())
            if at >= 0 and shape_of(value)[at] < 0:
                extents[dim] = dim_size(builder, value, at)
                break
    return extents


def extent_affine(b: Builder, extent: Extent, offset: int, scale: int = 1) -> Extent:
    """`extent * scale + offset`: an int for a static extent, index arithmetic otherwise."""
    if isinstance(extent, int):
        return extent * scale + offset
    return affine(b, [(extent, scale)], offset)


def require_sizes(b: Builder, origin: Operation, kind: str, lhs: Extent, rhs: Extent,
                  what: str) -> None:
    """Records on the function being defined that its inputs' sizes must make `lhs` equal to
    (`eq`) or at least (`ge`) `rhs` (`dlc.size_checks`, checked by the runtime before each
    call): where a definition reads one operand over another's runtime extent (a concat's
    inputs along their other dims), or sizes a window by a runtime extent. `what` says what
    `origin` needs. A size that is not an affine function of the inputs' sizes (one computed
    from data) is not checked."""
    if isinstance(lhs, int) and isinstance(rhs, int) or lhs is rhs:
        return
    func = _function_of(b)
    if func is None:
        return
    exprs = [AffineExpr.constant(v) if isinstance(v, int) else index_expr(func, v)
             for v in (lhs, rhs)]
    if exprs[0] is not None and exprs[1] is not None:
        add_size_check(func, kind, exprs[0], exprs[1], f"{describe_op(origin)} {what}")


def _function_of(b: Builder) -> FuncOp | None:
    op = b.insertion_point.block.parent_op()
    while op is not None and not isinstance(op, FuncOp):
        op = op.parent_op()
    return op


def require_equal_dims(b: Builder, origin: Operation, operands: Sequence[SSAValue],
                       skip: int | None = None) -> None:
    """Size checks that the operands of a broadcasting op agree on every dim two of them have
    dynamic (aligned from the right, NumPy's broadcast): each is read over the result's
    extent, which the first of them sizes. A concat `skip`s its axis (of the result)."""
    func = _function_of(b)
    rank = max((tensor_type(v).get_num_dims() for v in operands), default=0)
    for axis in range(rank):
        if axis == skip:
            continue
        dynamic = [(v, axis - (rank - tensor_type(v).get_num_dims())) for v in operands
                   if axis >= rank - tensor_type(v).get_num_dims()
                   and shape_of(v)[axis - (rank - tensor_type(v).get_num_dims())] < 0]
        if func is None or len(dynamic) < 2:
            continue
        first, first_dim = dynamic[0]
        for value, dim in dynamic[1:]:
            lhs, rhs = dim_expr(func, value, dim), dim_expr(func, first, first_dim)
            if lhs is not None and rhs is not None:
                add_size_check(func, "eq", lhs, rhs,
                               f"{describe_op(origin)} needs equal sizes along dim {axis} of "
                               f"its operands (#{operands.index(value)} and "
                               f"#{operands.index(first)})")


def describe_op(op: Operation) -> str:
    """`'graph.concat' op (node 'neck.concat')`: the op, and its ONNX node where known."""
    node = node_name(op)
    return f"'{op.name}' op" + (f" (node '{node}')" if node else "")


def window_extent(b: Builder, size: Extent, kernel: int, stride: int, pad_begin: int,
                  pad_end: int, dilation: int, ceil_mode: bool = False,
                  origin: Operation | None = None, axis: int = 0) -> Extent:
    """`window_output_size` (the sliding-window positions along one axis) of a static size as
    an int, of a runtime size as index arithmetic: `(size + pads - extent) / stride + 1`, in
    ceil mode rounded up and less a last window that would start inside the end padding.
    A runtime size must fit one window: recorded as a size check of `origin` (dim `axis`)."""
    if isinstance(size, int):
        return window_output_size(size, kernel, stride, pad_begin, pad_end, dilation, ceil_mode)
    extent = dilation * (kernel - 1) + 1
    if origin is not None:
        require_sizes(b, origin, "ge", size, extent - pad_begin - pad_end,
                      f"needs dim {axis} of its input padded to at least its window "
                      f"({extent})")
    span = affine(b, [(size, 1)], pad_begin + pad_end - extent
                  + (stride - 1 if ceil_mode else 0))
    count = affine(b, [(divide_index(b, span, stride), 1)], 1)
    if not ceil_mode or stride == 1 or pad_end + stride <= extent:
        return count  # a last window starts inside the end padding only if pad_end + s > extent
    start = affine(b, [(count, stride)], -stride)  # where the last window starts
    inside = b.insert(arith.CmpiOp(start, affine(b, [(size, 1)], pad_begin), "slt")).result
    return b.insert(arith.SelectOp(inside, count, affine(b, [(count, 1)], -1))).result


def _dynamic_dim_sources(origin: Operation, result_type: TensorType,
                         given: Sequence[int] = ()) -> list[tuple[int, SSAValue]]:
    """For each dynamic dim of a compute's result not in `given`, the operand of `origin` it
    takes its size from: the first one dynamic in that dim (a batch-polymorphic op's result
    has its operands' rows); a `PassFailedException` naming `origin` when there is none."""
    sources: list[tuple[int, SSAValue]] = []
    for dim, size in enumerate(result_type.get_shape()):
        if size >= 0 or dim in given:
            continue
        source = next((value for value in origin.operands if isinstance(value.type, TensorType)
                       and dim < value.type.get_num_dims() and value.type.get_shape()[dim] < 0),
                      None)
        if source is None:
            raise PassFailedException(
                f"'{origin.name}' op expected an operand with a dynamic dim {dim} to size its "
                f"result {result_type}, found none")
        sources.append((dim, source))
    return sources


def emit_compute(
    builder: Builder,
    origin: Operation,
    name: str,
    result_type: TensorType,
    body: ComputeBody,
    *,
    tag: str,
    reduce_extents: Sequence[int] = (),
    combiner: str | None = None,
    init: IntegerAttr | FloatAttr | None = None,
    extents: Sequence[Extent] | None = None,
    reduce_sizes: Sequence[SSAValue] = (),
) -> SSAValue:
    """Inserts a `tensor_expr.compute` defined by `body` and returns its result.

    The compute carries `origin`'s location and, where `origin` has one, its node name (attribute
    `onnx_node`). A reduction with an empty extent yields `init` everywhere. A dynamic dim of
    `result_type` takes its size from `extents` where given (an `index` value: a window's
    output size), else from the first operand of `origin` dynamic in that dim. A reduction
    extent of -1 is a runtime one, its size the next of `reduce_sizes`.
    """
    if any(extent == 0 for extent in reduce_extents):
        assert init is not None, "a reduction has an init"
        value = init

        def fill(b: Builder, _spatial: list[SSAValue], _reduction: list[SSAValue]) -> SSAValue:
            return b.insert(arith.ConstantOp(value)).result

        body, reduce_extents, combiner, init = fill, (), None, None
    given = {dim: extent for dim, extent in enumerate(extents or ())
             if isinstance(extent, SSAValue) and result_type.get_shape()[dim] < 0}
    by_dim = dict(given)
    for dim, source in _dynamic_dim_sources(origin, result_type, tuple(given)):
        by_dim[dim] = dim_size(builder, source, dim)
    sizes = [by_dim[dim] for dim in sorted(by_dim)] + list(reduce_sizes)
    compute = ComputeOp.build(
        name, result_type, body, reduce_extents, combiner, init, tag, sizes
    )
    compute.location = origin.location
    compute.result.name_hint = _SSA_NAME.sub("_", name)
    for position, arg in enumerate(compute.spatial_indices):
        arg.name_hint = f"i{position}"
    for position, arg in enumerate(compute.reduction_indices):
        arg.name_hint = f"r{position}"
    if (node := node_name(origin)) is not None:
        compute.attributes[NODE_ATTR] = StringAttr(node)
    builder.insert(compute)
    return compute.result


# ---------------------------------------------------------------------------------------------
# Scalars and index arithmetic
# ---------------------------------------------------------------------------------------------


def dense_constant(b: Builder, array: np.ndarray, element_type: Attribute) -> SSAValue:
    """`arith.constant dense<array> : tensor<shape x element_type>` (little-endian bytes)."""
    dtype = to_numpy_dtype(element_type).newbyteorder("<")
    data = np.ascontiguousarray(array, dtype=dtype).tobytes()
    type = TensorType(element_type, list(np.shape(array)))
    return b.insert(arith.ConstantOp(DenseIntOrFPElementsAttr(type, BytesAttr(data)))).result


def constant(b: Builder, value: float, element_type: Attribute) -> SSAValue:
    """An `arith.constant` of `element_type` (index, integer or float).

    When `b` appends to a block that already holds the same constant, that one is reused.
    """
    attr = scalar_attr(value, element_type)
    point = b.insertion_point
    if point.insert_before is None:
        for op in point.block.ops:
            if isinstance(op, arith.ConstantOp) and _same_scalar(op.value, attr):
                return op.result
    return b.insert(arith.ConstantOp(attr)).result


def _same_scalar(existing: Attribute, attr: IntegerAttr | FloatAttr) -> bool:
    if not isinstance(existing, IntegerAttr | FloatAttr) or existing.type != attr.type:
        return False
    a, b = existing.value.data, attr.value.data
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def index(b: Builder, value: int) -> SSAValue:
    """`arith.constant value : index`."""
    return constant(b, value, IndexType())


def affine(b: Builder, terms: Sequence[tuple[SSAValue, int]], offset: int = 0) -> SSAValue:
    """`sum(value * coefficient) + offset` on `index`, skipping ×1, ×0 and +0.

    Terms with a negative coefficient are subtracted (`subi`), after the positive ones.
    """
    total: SSAValue | None = None
    ordered = sorted((t for t in terms if t[1] != 0), key=lambda t: t[1] < 0)
    for value, coefficient in ordered:
        term = value
        if abs(coefficient) != 1:
            term = b.insert(arith.MuliOp(value, index(b, abs(coefficient)))).result
        if coefficient > 0:
            total = term if total is None else b.insert(arith.AddiOp(total, term)).result
            continue
        if total is None:
            total, offset = index(b, offset), 0
        total = b.insert(arith.SubiOp(total, term)).result
    if total is None:
        return index(b, offset)
    if offset > 0:
        total = b.insert(arith.AddiOp(total, index(b, offset))).result
    elif offset < 0:
        total = b.insert(arith.SubiOp(total, index(b, -offset))).result
    return total


def divide_index(b: Builder, value: SSAValue, divisor: int) -> SSAValue:
    """`value / divisor` for a non-negative index (no op when divisor is 1)."""
    if divisor == 1:
        return value
    return b.insert(arith.DivUIOp(value, index(b, divisor))).result


def remainder_index(b: Builder, value: SSAValue, divisor: int) -> SSAValue:
    """`value % divisor` for a non-negative index (0 when divisor is 1)."""
    if divisor == 1:
        return index(b, 0)
    return b.insert(arith.RemUIOp(value, index(b, divisor))).result


def index_to_element(b: Builder, value: SSAValue, element_type: Attribute) -> SSAValue:
    """An index converted to `element_type` (through i64 for floats)."""
    as_int = element_type if isinstance(element_type, IntegerType) else i64
    converted = b.insert(arith.IndexCastOp(value, as_int)).result
    if is_float(element_type):
        converted = b.insert(arith.SIToFPOp(converted, element_type)).result
    return converted


# ---------------------------------------------------------------------------------------------
# Reads
# ---------------------------------------------------------------------------------------------


def read(b: Builder, tensor: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """`tensor_expr.read %tensor[indices]`."""
    return b.insert(ReadOp(tensor, list(indices))).result


def may_leave(low: int, high: int, dim: int) -> bool:
    """Whether an index ranging over [low, high] can fall outside [0, dim)."""
    return low < 0 or high >= dim


def clamp_index(b: Builder, value: SSAValue, dim: Extent) -> SSAValue:
    """`value` clamped into [0, dim): `minui %value, dim - 1` (a negative index becomes dim - 1)."""
    last = index(b, dim - 1) if isinstance(dim, int) else affine(b, [(dim, 1)], -1)
    return b.insert(arith.MinUIOp(value, last)).result


def _index_extent(b: Builder, dim: Extent) -> SSAValue:
    return index(b, dim) if isinstance(dim, int) else dim


def guarded_read(
    b: Builder,
    tensor: SSAValue,
    indices: Sequence[SSAValue],
    guarded: Sequence[bool],
    pad_value: IntegerAttr | FloatAttr | SSAValue,
    dims: Sequence[Extent] | None = None,
) -> SSAValue:
    """`tensor[indices]` where all indices are in bounds, else `pad_value` (a constant, or a
    value computed in the body), never reading outside.

    Only the axes flagged in `guarded` are tested and clamped; the others must be in bounds.
    `dims` gives the tensor's sizes where some are dynamic (`extents_of`, outside the body).
    """
    shape = list(dims) if dims is not None else shape_of(tensor)
    clamped: list[SSAValue] = []
    in_bounds: SSAValue | None = None
    for value, guard, dim in zip(indices, guarded, shape, strict=True):
        if not guard:
            clamped.append(value)
            continue
        inside = b.insert(arith.CmpiOp(value, _index_extent(b, dim), "ult")).result
        if in_bounds is not None:
            inside = b.insert(arith.AndIOp(in_bounds, inside)).result
        in_bounds = inside
        clamped.append(clamp_index(b, value, dim))
    element = read(b, tensor, clamped)
    if in_bounds is None:
        return element
    if isinstance(pad_value, SSAValue):
        pad = pad_value
    else:
        pad = constant(b, pad_value.value.data, pad_value.type)
    return b.insert(arith.SelectOp(in_bounds, element, pad)).result


def broadcast_indices(
    b: Builder, indices: Sequence[SSAValue], in_shape: Sequence[int], out_shape: Sequence[int]
) -> list[SSAValue]:
    """The indices of an `in_shape` tensor broadcast (NumPy rules) to `out_shape` at `indices`.

    Leading axes of `out_shape` missing from `in_shape` are dropped; an axis of size 1 that is
    broadcast reads index 0; the other axes use the output's index as it is.
    """
    offset = len(out_shape) - len(in_shape)
    result: list[SSAValue] = []
    for axis, dim in enumerate(in_shape):
        if dim == 1 and out_shape[offset + axis] != 1:
            result.append(index(b, 0))
        else:
            result.append(indices[offset + axis])
    return result


def broadcast_read(
    b: Builder, tensor: SSAValue, indices: Sequence[SSAValue], out_shape: Sequence[int]
) -> SSAValue:
    """Reads `tensor` broadcast to `out_shape` at `indices`."""
    return read(b, tensor, broadcast_indices(b, indices, shape_of(tensor), out_shape))


# ---------------------------------------------------------------------------------------------
# Scalar operations by element type
# ---------------------------------------------------------------------------------------------

_FLOAT_BINARY: dict[str, type[Operation]] = {
    "add": arith.AddfOp,
    "sub": arith.SubfOp,
    "mul": arith.MulfOp,
    "div": arith.DivfOp,
    "max": arith.MaximumfOp,
    "min": arith.MinimumfOp,
    "pow": mathd.PowFOp,
}

_INT_BINARY: dict[str, type[Operation]] = {
    "add": arith.AddiOp,
    "sub": arith.SubiOp,
    "mul": arith.MuliOp,
    "div": arith.DivSIOp,
    "max": arith.MaxSIOp,
    "min": arith.MinSIOp,
}

BINARY_KINDS: tuple[str, ...] = tuple(_FLOAT_BINARY)
"""The scalar binary operations `binary` emits."""


_UNSIGNED_BINARY: dict[str, type[Operation]] = {
    "div": arith.DivUIOp,
    "max": arith.MaxUIOp,
    "min": arith.MinUIOp,
}


def binary(b: Builder, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`lhs <kind> rhs` (add, sub, mul, div, max, min, pow) for float or integer scalars.

    Signless integers divide toward zero and compare as signed (i1 as unsigned: max is or, min
    is and); unsigned integers divide and compare as unsigned; float max and min propagate NaN.
    Integer pow goes through f64 `math.powf` and 64-bit integers (exact while the result has at
    most 53 bits; narrower types wrap).
    """
    if is_float(lhs.type):
        return b.insert(_FLOAT_BINARY[kind](lhs, rhs)).results[0]  # pyright: ignore
    unsigned = is_unsigned(lhs.type)
    if kind == "pow":  # through 64 bits, so that narrower results wrap as integer ops do
        to_float = arith.UIToFPOp if unsigned else arith.SIToFPOp
        as_float = [b.insert(to_float(v, f64)).result for v in (lhs, rhs)]
        power = b.insert(mathd.PowFOp(*as_float)).result
        wide_type = IntegerType(64, Signedness.UNSIGNED if unsigned else Signedness.SIGNLESS)
        to_int = arith.FPToUIOp if unsigned else arith.FPToSIOp
        wide = b.insert(to_int(power, wide_type)).result
        return wide if lhs.type == wide_type else b.insert(arith.TruncIOp(wide, lhs.type)).result
    if kind in _UNSIGNED_BINARY and (unsigned or is_bool(lhs.type) and kind != "div"):
        return b.insert(_UNSIGNED_BINARY[kind](lhs, rhs)).results[0]  # pyright: ignore
    return b.insert(_INT_BINARY[kind](lhs, rhs)).results[0]  # pyright: ignore[reportCallIssue]
