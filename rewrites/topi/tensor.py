"""Compute definitions of the ONNX tensor ops: cast, compare, where, gather, slice, pad,
broadcast_to.

Counterpart: TVM's `topi.cast`, `topi.equal` … (topi/broadcast.py), `topi.where`, `topi.take`,
`topi.strided_slice`, `topi.nn.pad` / `mirror_pad` and `topi.broadcast_to`. Each is one injective
compute; index values read from a tensor (gather) are wrapped and clamped so that no read ever
leaves its tensor.
"""

from __future__ import annotations

from dlc.dialects.graph.ops_tensor import (
    ArangeOp,
    BroadcastToOp,
    CastOp,
    CompareOp,
    GatherOp,
    PadOp,
    SliceOp,
    WhereOp,
)
from dlc.rewrites.topi.common import (
    Extent,
    affine,
    broadcast_extents,
    broadcast_read,
    check_element_type,
    clamp_index,
    constant,
    convert_float,
    emit_compute,
    extents_of,
    guarded_read,
    index,
    is_float,
    is_unsigned,
    read,
    remainder_index,
    require_equal_dims,
    require_sizes,
    scalar_attr,
    shape_of,
    tensor_type,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.nn import PAD_TAG
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, i64
from xdsl.ir import Attribute, SSAValue

# ---------------------------------------------------------------------------------------------
# cast, compare, where
# ---------------------------------------------------------------------------------------------


def _width(element_type: Attribute) -> int:
    assert isinstance(element_type, IntegerType)
    return element_type.width.data


def convert(b: Builder, x: SSAValue, target: Attribute) -> SSAValue:
    """`x` converted to `target` as ONNX Cast does: floats truncate toward zero into integers,
    anything non-zero is true in i1, i1 true is 1; unsigned integers (and i1) zero-extend and
    convert to float as unsigned; integers of one width keep their bits; floats extend exactly
    and truncate to nearest even (f16 <-> bf16 through f32)."""
    source = x.type
    if source == target:
        return x
    if isinstance(target, IntegerType) and target.width.data == 1:
        if is_float(source):
            return b.insert(arith.CmpfOp(x, constant(b, 0, source), "une")).result
        return b.insert(arith.CmpiOp(x, constant(b, 0, source), "ne")).result
    if is_float(source) and is_float(target):
        return convert_float(b, x, target)
    if is_float(source):
        to_int = arith.FPToUIOp if is_unsigned(target) else arith.FPToSIOp
        return b.insert(to_int(x, target)).result
    zero_extend = _width(source) == 1 or is_unsigned(source)
    if is_float(target):
        op_type = arith.UIToFPOp if zero_extend else arith.SIToFPOp
        return b.insert(op_type(x, target)).result  # pyright: ignore[reportArgumentType]
    if _width(source) == _width(target):  # signless <-> unsigned: the same bits
        return x
    if _width(source) > _width(target):
        return b.insert(arith.TruncIOp(x, target)).result
    op_type = arith.ExtUIOp if zero_extend else arith.ExtSIOp
    return b.insert(op_type(x, target)).result


@compute_definition(CastOp)
def cast(op: CastOp, builder: Builder) -> SSAValue:
    """`out[i...] = convert(x[i...])` to the result's element type."""
    target = tensor_type(op.result).get_element_type()
    check_element_type(op, tensor_type(op.x).get_element_type())
    check_element_type(op, target)

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        return convert(b, read(b, op.x, i), target)

    return emit_compute(builder, op, "cast", tensor_type(op.result), body, tag=INJECTIVE)


_FLOAT_PREDICATES = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_SIGNED_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_UNSIGNED_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


@compute_definition(CompareOp)
def compare(op: CompareOp, builder: Builder) -> SSAValue:
    """`out[i...] = lhs[bcast(i)] <predicate> rhs[bcast(i)]` as i1 (ordered for floats, except
    ne; signed for signless integers; unsigned for unsigned ones; false < true for i1)."""
    element_type = tensor_type(op.lhs).get_element_type()
    check_element_type(op, element_type)
    predicate = op.predicate_value()
    out_shape = shape_of(op.result)
    require_equal_dims(builder, op, [op.lhs, op.rhs])

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        lhs = broadcast_read(b, op.lhs, i, out_shape)
        rhs = broadcast_read(b, op.rhs, i, out_shape)
        if is_float(element_type):
            return b.insert(arith.CmpfOp(lhs, rhs, _FLOAT_PREDICATES[predicate])).result
        unsigned = _width(element_type) == 1 or is_unsigned(element_type)
        table = _UNSIGNED_PREDICATES if unsigned else _SIGNED_PREDICATES
        return b.insert(arith.CmpiOp(lhs, rhs, table[predicate])).result

    return emit_compute(builder, op, "compare", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=broadcast_extents(builder, [op.lhs, op.rhs], op.result))


@compute_definition(WhereOp)
def where(op: WhereOp, builder: Builder) -> SSAValue:
    """`out[i...] = condition[bcast(i)] ? lhs[bcast(i)] : rhs[bcast(i)]`."""
    check_element_type(op, tensor_type(op.result).get_element_type())
    out_shape = shape_of(op.result)
    require_equal_dims(builder, op, [op.condition, op.lhs, op.rhs])

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        condition = broadcast_read(b, op.condition, i, out_shape)
        lhs = broadcast_read(b, op.lhs, i, out_shape)
        rhs = broadcast_read(b, op.rhs, i, out_shape)
        return b.insert(arith.SelectOp(condition, lhs, rhs)).result

    operands = [op.condition, op.lhs, op.rhs]
    return emit_compute(builder, op, "where", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=broadcast_extents(builder, operands, op.result))


@compute_definition(BroadcastToOp)
def broadcast_to(op: BroadcastToOp, builder: Builder) -> SSAValue:
    """`out[i...] = x[bcast(i)]`. Runtime sizes after the leading dim are the sizing
    operand's (`batch`, aligned with the result's end) where it has them, else `x`'s; where
    both have one, the same (a size check)."""
    out_shape = shape_of(op.result)

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        return broadcast_read(b, op.x, i, out_shape)

    extents: list[Extent] | None = None
    if op.batch is not None and any(size < 0 for size in out_shape[1:]):
        like = extents_of(builder, op.batch)
        like_offset = len(out_shape) - len(like)
        offset = len(out_shape) - len(shape_of(op.x))
        x_extents = extents_of(builder, op.x)
        extents = list(out_shape)
        for dim in (d for d, size in enumerate(out_shape) if size < 0):
            if dim >= like_offset and shape_of(op.batch)[dim - like_offset] < 0:
                extents[dim] = like[dim - like_offset]
            elif dim >= offset and shape_of(op.x)[dim - offset] < 0:
                extents[dim] = x_extents[dim - offset]
        for dim, size in enumerate(shape_of(op.x)):
            if size < 0 and dim + offset >= like_offset \
                    and shape_of(op.batch)[dim + offset - like_offset] < 0:
                require_sizes(builder, op, "eq", x_extents[dim], extents[dim + offset],
                              f"needs dim {dim} of its operand to be dim "
                              f"{dim + offset - like_offset} of the value sizing its result")
    return emit_compute(builder, op, "broadcast_to", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=extents)


# ---------------------------------------------------------------------------------------------
# gather, slice, pad
# ---------------------------------------------------------------------------------------------


@compute_definition(GatherOp)
def gather(op: GatherOp, builder: Builder) -> SSAValue:
    """`out[i..., j..., k...] = x[i..., clamp(wrap(indices[j...])), k...]`.

    A negative index counts from the end; an index still outside the axis (undefined) is clamped
    so that the read stays in bounds.
    """
    axis = op.normalized_axis()
    dim = shape_of(op.x)[axis]
    index_rank = len(shape_of(op.indices))

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        raw = read(b, op.indices, i[axis : axis + index_rank])
        position = b.insert(arith.IndexCastOp(raw, IndexType())).result
        zero = index(b, 0)
        negative = b.insert(arith.CmpiOp(position, zero, "slt")).result
        wrapped = b.insert(arith.AddiOp(position, index(b, dim))).result
        position = b.insert(arith.SelectOp(negative, wrapped, position)).result
        position = clamp_index(b, position, dim)
        return read(b, op.x, [*i[:axis], position, *i[axis + index_rank :]])

    x_extents = extents_of(builder, op.x)
    extents = [*x_extents[:axis], *extents_of(builder, op.indices), *x_extents[axis + 1:]]
    return emit_compute(builder, op, "gather", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=extents)


@compute_definition(ArangeOp)
def arange(op: ArangeOp, builder: Builder) -> SSAValue:
    """`out[i] = i` in the result's element type, over the extent of `like`'s dim."""
    target = tensor_type(op.result).get_element_type()
    check_element_type(op, target)

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        position = b.insert(arith.IndexCastOp(i[0], i64)).result
        return convert(b, position, target)

    extent = extents_of(builder, op.like)[op.normalized_axis()]
    bound = op.bound_value()
    if bound is not None:
        require_sizes(builder, op, "ge", bound, extent,
                      f"needs at most {bound} positions (dim {op.normalized_axis()} of its "
                      "operand): they index an axis of that size")
    return emit_compute(builder, op, "arange", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=[extent])


@compute_definition(SliceOp)
def slice_(op: SliceOp, builder: Builder) -> SSAValue:
    """`out[j...] = x[start + j * step ...]` axis by axis (steps may be negative)."""
    starts, steps = op.starts_tuple(), op.steps_tuple()

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        indices = [
            affine(b, [(position, step)], start)
            for position, start, step in zip(i, starts, steps, strict=True)
        ]
        return read(b, op.x, indices)

    extents = [extent if size < 0 else size  # a dynamic dim is taken whole
               for extent, size in zip(extents_of(builder, op.x), op.sizes_tuple(), strict=True)]
    return emit_compute(builder, op, "slice", tensor_type(op.result), body, tag=INJECTIVE,
                        extents=extents)


def _mirror(b: Builder, position: SSAValue, dim: int) -> SSAValue:
    """Reflect mode: |p| folded back at dim - 1 (one fold suffices: pads are below dim)."""
    negated = b.insert(arith.SubiOp(index(b, 0), position)).result
    folded = b.insert(arith.MaxSIOp(position, negated)).result
    back = b.insert(arith.SubiOp(index(b, 2 * (dim - 1)), folded)).result
    return b.insert(arith.MinSIOp(folded, back)).result


def _wrap(b: Builder, position: SSAValue, dim: int, before: int) -> SSAValue:
    """Wrap mode: p modulo dim, made non-negative by adding a multiple of dim first."""
    lifted = affine(b, [(position, 1)], -(-before // dim) * dim)
    return remainder_index(b, lifted, dim)


def _edge(b: Builder, position: SSAValue, dim: int) -> SSAValue:
    """Edge mode: p clamped into [0, dim - 1]."""
    low = b.insert(arith.MaxSIOp(position, index(b, 0))).result
    return b.insert(arith.MinSIOp(low, index(b, dim - 1))).result


@compute_definition(PadOp)
def pad(op: PadOp, builder: Builder) -> SSAValue:
    """`out[i...] = x[i - before...]` inside x; outside, the constant (select on clamped reads),
    the mirrored element (reflect), the nearest edge element (edge) or the element a whole
    number of periods away (wrap). Named and tagged "pad"."""
    shape = shape_of(op.x)
    rank = len(shape)
    pads = op.pads_tuple()
    mode = op.mode_value()
    element_type = tensor_type(op.x).get_element_type()
    check_element_type(op, element_type)
    padded = [bool(pads[axis] or pads[axis + rank]) for axis in range(rank)]

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        positions = [affine(b, [(i[axis], 1)], -pads[axis]) for axis in range(rank)]
        if mode == "constant":
            value = scalar_attr(op.pad_value(), element_type)
            return guarded_read(b, op.x, positions, padded, value)
        indices = list(positions)
        for axis, position in enumerate(positions):
            if not padded[axis]:
                continue
            if mode == "reflect":
                indices[axis] = _mirror(b, position, shape[axis])
            elif mode == "wrap":
                indices[axis] = _wrap(b, position, shape[axis], pads[axis])
            else:
                indices[axis] = _edge(b, position, shape[axis])
        return read(b, op.x, indices)

    return emit_compute(builder, op, "pad", tensor_type(op.result), body, tag=PAD_TAG)

