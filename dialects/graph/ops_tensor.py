"""Graph ops that select, move and convert data, as ONNX models need them (TVM's `relay.take`,
`strided_slice`, `nn.pad`, `broadcast_to`, `image.resize`, `argmax`, `topk`, ...).

cast, compare, where, gather, slice, pad, broadcast_to, resize, argmax, topk and
conv_transpose2d; each computes its result type from its operands and attributes like the ops
of `ops.py`, and has a NumPy implementation in `interpreter_tensor.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from dlc.dialects.dim_symbols import has_dynamic_leading_dim
from dlc.dialects.graph.attrs import FusionKind, is_float_type, to_numpy_dtype
from dlc.dialects.graph.ops import (
    ConvWindow,
    GraphOp,
    _ints,
    _normalize_axis,
    _require_count,
    _require_non_negative,
    _require_positive,
    _require_rank,
    _require_static_axis,
    _same_element_type,
    _tensor,
    bool_attr,
    broadcast_shapes,
    i64_array,
    i64_attr,
    op_error,
    with_fusion_kind,
)
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

_I1 = IntegerType(1)


def _f64_array(values: Sequence[float]) -> DenseArrayBase:
    return DenseArrayBase.from_list(f64, [float(v) for v in values])


def _floats(attr: DenseArrayBase) -> tuple[float, ...]:
    return tuple(float(v) for v in attr.get_values())


def _require_choice(op_name: str, attr_name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise op_error(op_name, f"expected '{attr_name}' in {', '.join(choices)}, found "
                                f"'{value}'")


def _require_integer(op_name: str, what: str, type: TensorType) -> None:
    element = type.get_element_type()
    if not isinstance(element, IntegerType) or element.width.data == 1:
        raise op_error(op_name, f"expected {what} of an integer element type, found {type}")


# ---------------------------------------------------------------------------------------------
# Elementwise: cast, compare, where
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class CastOp(GraphOp):
    """Convert every element to the result's element type (ONNX Cast).

    Semantics: the result has the operand's shape. Float to integer truncates toward zero
    (values out of the target's range are undefined); to `i1`, any non-zero value is true; from
    `i1`, true is 1; to f16 or bf16, floats round to nearest even. Both element types must
    have a NumPy dtype (bf16: `ml_dtypes.bfloat16`; no index, no i4).

    Example:
        %r = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
    """

    name = "graph.cast"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, element_type: Attribute) -> None:
        super().__init__(operands=[x],
                         result_types=[self.infer_type(SSAValue.get(x).type, element_type)])

    @classmethod
    def infer_type(cls, x: Attribute, element_type: Attribute) -> TensorType:
        """The operand's shape with `element_type`."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        for element in (x_type.get_element_type(), element_type):
            try:
                to_numpy_dtype(element)
            except ValueError:
                raise op_error(cls.name, f"expected element types with a NumPy dtype, found "
                                         f"{element}") from None
        return TensorType(element_type, x_type.get_shape())

    def inferred_result_type(self) -> TensorType:
        result = _tensor(self.name, "the result", self.result.type, any_dynamic=True)
        return self.infer_type(self.x.type, result.get_element_type())


COMPARE_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
"""The predicates `graph.compare` accepts."""


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class CompareOp(GraphOp):
    """Elementwise comparison with NumPy broadcasting (ONNX Equal, Less, Greater, ...).

    Semantics: `result = lhs <predicate> rhs` as `i1`, with `predicate` one of eq, ne, lt, le,
    gt, ge; both operands have the same element type; NaN compares false except under ne.

    Example:
        %r = graph.compare %a, %b {predicate = "lt"}
            : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    """

    name = "graph.compare"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    predicate = attr_def(StringAttr)

    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, predicate: str
                 ) -> None:
        lhs_type, rhs_type = SSAValue.get(lhs).type, SSAValue.get(rhs).type
        super().__init__(operands=[lhs, rhs],
                         result_types=[self.infer_type(lhs_type, rhs_type, predicate)],
                         attributes={"predicate": StringAttr(predicate)})

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute, predicate: str) -> TensorType:
        """The broadcast shape of the operands, of `i1`."""
        _require_choice(cls.name, "predicate", predicate, COMPARE_PREDICATES)
        lhs_type = _tensor(cls.name, "the lhs", lhs, any_dynamic=True)
        rhs_type = _tensor(cls.name, "the rhs", rhs, any_dynamic=True)
        _same_element_type(cls.name, [lhs_type, rhs_type])
        shape = broadcast_shapes(lhs_type.get_shape(), rhs_type.get_shape())
        if shape is None:
            raise op_error(cls.name, f"expected broadcast-compatible operand shapes, found "
                                     f"{lhs} and {rhs}")
        return TensorType(_I1, shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.lhs.type, self.rhs.type, self.predicate_value())

    def predicate_value(self) -> str:
        """The comparison: eq, ne, lt, le, gt or ge."""
        return self.predicate.data


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class WhereOp(GraphOp):
    """Elementwise selection with NumPy broadcasting of all three operands (ONNX Where).

    Semantics: `result = condition ? lhs : rhs`; `condition` is `i1`, `lhs` and `rhs` share the
    result's element type.

    Example:
        %r = graph.where %c, %a, %b
            : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    """

    name = "graph.where"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    condition = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, condition: SSAValue | Operation, lhs: SSAValue | Operation,
                 rhs: SSAValue | Operation) -> None:
        types = [SSAValue.get(v).type for v in (condition, lhs, rhs)]
        super().__init__(operands=[condition, lhs, rhs], result_types=[self.infer_type(*types)])

    @classmethod
    def infer_type(cls, condition: Attribute, lhs: Attribute, rhs: Attribute) -> TensorType:
        """The broadcast shape of the three operands, with the element type of lhs and rhs."""
        cond_type = _tensor(cls.name, "the condition", condition, any_dynamic=True)
        if cond_type.get_element_type() != _I1:
            raise op_error(cls.name, f"expected an i1 condition, found {condition}")
        lhs_type = _tensor(cls.name, "the lhs", lhs, any_dynamic=True)
        rhs_type = _tensor(cls.name, "the rhs", rhs, any_dynamic=True)
        element_type = _same_element_type(cls.name, [lhs_type, rhs_type])
        shape = broadcast_shapes(lhs_type.get_shape(), rhs_type.get_shape())
        shape = None if shape is None else broadcast_shapes(cond_type.get_shape(), shape)
        if shape is None:
            raise op_error(cls.name, f"expected broadcast-compatible operand shapes, found "
                                     f"{condition}, {lhs} and {rhs}")
        return TensorType(element_type, shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.condition.type, self.lhs.type, self.rhs.type)


# ---------------------------------------------------------------------------------------------
# Injective: gather, slice, pad, broadcast_to, resize
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class GatherOp(GraphOp):
    """Take slices of `x` along `axis` at `indices` (ONNX Gather, `numpy.take`).

    Semantics: `result[i..., j..., k...] = x[i..., indices[j...], k...]` with `i` the axes
    before `axis` and `k` those after; the result shape is
    `x.shape[:axis] + indices.shape + x.shape[axis+1:]`. A negative index counts from the end;
    an index outside [-dim, dim) is undefined. `indices` has an integer element type. Any dim
    but the gathered axis may be dynamic (shape-polymorphic: an embedding lookup of a runtime
    sequence's tokens, a causal mask's rows at `graph.arange` positions).

    Example:
        %r = graph.gather %x, %i {axis = 1 : i64}
            : (tensor<2x5xf32>, tensor<3xi64>) -> tensor<2x3xf32>
    """

    name = "graph.gather"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = attr_def(IntegerAttr[I64], default_value=i64_attr(0))

    traits = traits_def(Pure())
    assembly_format = "$x `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, indices: SSAValue | Operation, axis: int = 0
                 ) -> None:
        x_type, indices_type = SSAValue.get(x).type, SSAValue.get(indices).type
        super().__init__(operands=[x, indices],
                         result_types=[self.infer_type(x_type, indices_type, axis)],
                         attributes={"axis": i64_attr(axis)})

    @classmethod
    def infer_type(cls, x: Attribute, indices: Attribute, axis: int = 0) -> TensorType:
        """`x.shape[:axis] + indices.shape + x.shape[axis+1:]`, of x's element type. With a
        dynamic batch, either `x` is batched and gathered along another axis, or the indices
        are batched and `x` is gathered along its axis 0 (an embedding lookup): each row of
        the result comes from the same row of the batched operand."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        indices_type = _tensor(cls.name, "the indices", indices, any_dynamic=True)
        _require_integer(cls.name, "indices", indices_type)
        shape = x_type.get_shape()
        axis = _normalize_axis(cls.name, axis, len(shape))
        _require_static_axis(cls.name, "the gathered axis", x_type, axis)
        return TensorType(x_type.get_element_type(),
                          [*shape[:axis], *indices_type.get_shape(), *shape[axis + 1:]])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.indices.type, self.axis_value())

    def axis_value(self) -> int:
        """The axis as written (may be negative)."""
        return self.axis.value.data

    def normalized_axis(self) -> int:
        """The axis in [0, rank)."""
        return _normalize_axis(self.name, self.axis_value(), self.x.type.get_num_dims())


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class ArangeOp(GraphOp):
    """The positions along one dim of another value: 0, 1, ..., n - 1 (ONNX Range from 0 by 1
    to a runtime size: a transformer's positions over its runtime sequence).

    Semantics: `result[i] = i` in the result's element type (an integer or a float), for i
    below `like.shape[axis]`; only the size of `like` is read, never its elements. With
    `bound`, that size must be at most `bound` (a size check of the compiled function: the
    positions index an axis of that size, a position table's or a mask's).

    Example:
        %p = graph.arange %tokens {axis = 1 : i64, bound = 256 : i64}
            : (tensor<?x?xi64>) -> tensor<?xi64>
    """

    name = "graph.arange"

    DYNAMIC_DIMS: ClassVar[bool] = True

    like = operand_def(TensorType)
    result = result_def(TensorType)
    axis = attr_def(IntegerAttr[I64])
    bound = opt_attr_def(IntegerAttr[I64])

    traits = traits_def(Pure())
    assembly_format = "$like attr-dict `:` functional-type(operands, results)"

    def __init__(self, like: SSAValue | Operation, axis: int, element_type: Attribute = i64
                 ) -> None:
        result = self.infer_type(SSAValue.get(like).type, axis, element_type)
        super().__init__(operands=[like], result_types=[result],
                         attributes={"axis": i64_attr(axis)})

    @classmethod
    def infer_type(cls, like: Attribute, axis: int, element_type: Attribute) -> TensorType:
        """A 1-D tensor of `element_type` as long as dim `axis` of `like`."""
        like_type = _tensor(cls.name, "the operand", like, any_dynamic=True)
        axis = _normalize_axis(cls.name, axis, like_type.get_num_dims())
        if not (isinstance(element_type, IntegerType) or is_float_type(element_type)):
            raise op_error(cls.name, f"expected an integer or float result, found "
                                     f"{element_type}")
        return TensorType(element_type, [like_type.get_shape()[axis]])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.like.type, self.axis.value.data,
                               self.result.type.get_element_type())

    def normalized_axis(self) -> int:
        """The dim of `like` whose size the result has, in [0, rank)."""
        return _normalize_axis(self.name, self.axis.value.data, self.like.type.get_num_dims())

    def bound_value(self) -> int | None:
        """The most positions there may be (None: any count)."""
        return None if self.bound is None else self.bound.value.data

    def limit_bound(self, bound: int) -> None:
        """At most `bound` positions (the least of this and any bound set before)."""
        known = self.bound_value()
        self.bound = i64_attr(bound if known is None else min(known, bound))


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class SliceOp(GraphOp):
    """A strided window of `x` (ONNX Slice and Split, with the bounds resolved).

    Semantics: one `starts`, `sizes` and `steps` value per axis; along axis `a` the result has
    `sizes[a]` elements, element `j` being `x[starts[a] + j * steps[a]]`. Steps are non-zero
    (negative ones walk backwards) and every element read must lie inside `x`. A dynamic axis
    of `x` (a batch, a runtime height) is taken whole: start 0, size -1 (dynamic), step 1;
    the static ones are sliced (a chunk of a feature map's channels over a runtime plane).

    Example:
        %r = graph.slice %x
            {starts = array<i64: 1, 4>, sizes = array<i64: 2, 3>, steps = array<i64: 1, -2>}
            : (tensor<4x5xf32>) -> tensor<2x3xf32>
    """

    name = "graph.slice"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    starts = attr_def(DenseArrayBase.constr(i64))
    sizes = attr_def(DenseArrayBase.constr(i64))
    steps = attr_def(DenseArrayBase.constr(i64))

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, starts: Sequence[int], sizes: Sequence[int],
                 steps: Sequence[int]) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, starts, sizes, steps)],
            attributes={"starts": i64_array(starts),
                        "sizes": i64_array([max(size, -1) for size in sizes]),
                        "steps": i64_array(steps)},
        )

    @classmethod
    def infer_type(cls, x: Attribute, starts: Sequence[int], sizes: Sequence[int],
                   steps: Sequence[int]) -> TensorType:
        """`sizes`, of x's element type; every element read must be inside x. A dynamic
        dim is taken whole: start 0, step 1 and a dynamic (negative) size."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        shape = x_type.get_shape()
        for attr_name, values in (("starts", starts), ("sizes", sizes), ("steps", steps)):
            _require_count(cls.name, attr_name, values, len(shape))
        for axis, (dim, start, size, step) in enumerate(
                zip(shape, starts, sizes, steps, strict=True)):
            if dim < 0:
                if start != 0 or size >= 0 or step != 1:
                    raise op_error(cls.name, f"expected dynamic dim {axis} of {x} taken whole "
                                             f"(start 0, a dynamic size, step 1), found start "
                                             f"{start}, size {size}, step {step}")
                continue
            if size < 0:
                raise op_error(cls.name, f"expected 'sizes' >= 0 along static dims, found "
                                         f"{list(sizes)}")
            if step == 0:
                raise op_error(cls.name, f"expected non-zero 'steps', found {list(steps)}")
            last = start + (size - 1) * step
            if size and not (0 <= start < dim and 0 <= last < dim):
                raise op_error(cls.name, f"expected axis {axis} to read inside [0, {dim}), "
                                         f"found elements {start} to {last}")
        return TensorType(x_type.get_element_type(),
                          [DYNAMIC_INDEX if dim < 0 else size
                           for dim, size in zip(shape, sizes, strict=True)])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, _ints(self.starts), _ints(self.sizes),
                               _ints(self.steps))

    def starts_tuple(self) -> tuple[int, ...]:
        """The first index read along each axis."""
        return _ints(self.starts)

    def sizes_tuple(self) -> tuple[int, ...]:
        """The result shape."""
        return _ints(self.sizes)

    def steps_tuple(self) -> tuple[int, ...]:
        """The stride along each axis (non-zero, may be negative)."""
        return _ints(self.steps)


PAD_MODES = ("constant", "reflect", "edge", "wrap")
"""The modes `graph.pad` accepts."""


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class PadOp(GraphOp):
    """Pad every axis of `x` (ONNX Pad with non-negative pads).

    Semantics: `pads` holds the begin pads of all axes, then the end pads (non-negative). Mode
    `constant` fills with `value` (converted to the element type), `reflect` mirrors the input
    without repeating the edge (each pad smaller than the dim), `edge` repeats the edge, `wrap`
    continues periodically (`edge` and `wrap` need non-empty dims where padded).

    Example:
        %r = graph.pad %x {pads = array<i64: 0, 1, 0, 2>, value = 1.500000e+00 : f64}
            : (tensor<2x3xf32>) -> tensor<2x6xf32>
    """

    name = "graph.pad"

    LEADING_DYNAMIC: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    pads = attr_def(DenseArrayBase.constr(i64))
    mode = attr_def(StringAttr, default_value=StringAttr("constant"))
    value = attr_def(FloatAttr, default_value=FloatAttr(0.0, f64))

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, pads: Sequence[int], mode: str = "constant",
                 value: float = 0.0) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, pads, mode)],
            attributes={"pads": i64_array(pads), "mode": StringAttr(mode),
                        "value": FloatAttr(float(value), f64)},
        )

    @classmethod
    def infer_type(cls, x: Attribute, pads: Sequence[int], mode: str = "constant"
                   ) -> TensorType:
        """Each dim grown by its begin and end pads (none on a dynamic batch)."""
        x_type = _tensor(cls.name, "the operand", x, leading_dynamic=True)
        shape = x_type.get_shape()
        rank = len(shape)
        _require_count(cls.name, "pads", pads, 2 * rank)
        _require_non_negative(cls.name, "pads", pads)
        if pads[0] or pads[rank]:
            _require_static_axis(cls.name, "a padded axis", x_type, 0)
        _require_choice(cls.name, "mode", mode, PAD_MODES)
        for axis, dim in enumerate(shape):
            before, after = pads[axis], pads[axis + rank]
            if mode == "reflect" and max(before, after) >= max(dim, 1):
                raise op_error(cls.name, f"expected reflect pads of axis {axis} smaller than its "
                                         f"dim {dim}, found {before} and {after}")
            if mode in ("edge", "wrap") and dim == 0 and before + after:
                raise op_error(cls.name, f"expected a non-empty axis {axis} to pad by '{mode}'")
        return TensorType(x_type.get_element_type(),
                          [d + pads[a] + pads[a + rank] for a, d in enumerate(shape)])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.pads_tuple(), self.mode_value())

    def pads_tuple(self) -> tuple[int, ...]:
        """Begin pads of every axis, then end pads."""
        return _ints(self.pads)

    def mode_value(self) -> str:
        """constant, reflect, edge or wrap."""
        return self.mode.data

    def pad_value(self) -> float:
        """The fill value of mode constant."""
        return float(self.value.value.data)


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class BroadcastToOp(GraphOp):
    """Broadcast `x` to `shape` (ONNX Expand and Tile, ConstantOfShape to a dynamic batch,
    `numpy.broadcast_to`).

    Semantics: NumPy's one-way broadcast: `x` is aligned with the end of `shape`, and each of
    its dims equals the target dim or is 1. A leading target dim of -1 is the dynamic batch
    (the expand of an exporter's `x.expand(batch, -1)`): the optional operand `batch`, a value
    whose leading dim is that batch, gives its size (or, without it, `x`'s own dynamic
    leading dim), and the result's leading dim is dynamic: `graph.broadcast_to %x, %ids {shape
    = array<i64: -1, 3>} : (tensor<1x3xi64>, tensor<?x5xi64>) -> tensor<?x3xi64>`.
    `graph-batch-rows` makes it a static broadcast to the rows. A -1 after the leading dim is
    a runtime size too (shape-polymorphic: a model over runtime shapes expanding a value to
    another's `N x S`, BERT's token types to its input's; a meshgrid's `y.view(ny, 1)` to
    `ny x nx`): `batch`, aligned with the end of the target as `x` is, sizes it where it has
    a runtime dim there, else `x`'s runtime dim there does; where both have one, the sizes
    must agree (a size check), and `x`'s dim is otherwise 1.

    Example:
        %r = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
        %t = graph.broadcast_to %z, %ids {shape = array<i64: -1, -1>}
            : (tensor<1x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
    """

    name = "graph.broadcast_to"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    batch = opt_operand_def(TensorType)
    result = result_def(TensorType)
    shape = attr_def(DenseArrayBase.constr(i64))

    traits = traits_def(Pure())
    assembly_format = "$x (`,` $batch^)? attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, shape: Sequence[int],
                 batch: SSAValue | Operation | None = None) -> None:
        batch_type = None if batch is None else SSAValue.get(batch).type
        super().__init__(operands=[x, batch],
                         result_types=[self.infer_type(SSAValue.get(x).type, shape, batch_type)],
                         attributes={"shape": i64_array(shape)})

    @classmethod
    def infer_type(cls, x: Attribute, shape: Sequence[int], batch: Attribute | None = None
                   ) -> TensorType:
        """`shape`, of x's element type, when x broadcasts to it. A leading -1 is the dynamic
        batch: of `batch` (then x has no batch) or, without `batch`, of x (of the same rank);
        a -1 after it is `batch`'s runtime dim there (`batch` of the target's rank)."""
        runtime = [d for d in range(1, len(shape)) if shape[d] == -1]
        if runtime:
            return cls._infer_runtime(x, shape, batch, runtime)
        x_type = _tensor(cls.name, "the operand", x, leading_dynamic=True)
        source = list(x_type.get_shape())
        target = list(shape)
        batched_x = has_dynamic_leading_dim(x_type)
        if target and target[0] == -1:
            if batch is not None:
                batch_type = _tensor(cls.name, "the batch operand", batch, leading_dynamic=True)
                if not has_dynamic_leading_dim(batch_type) or batched_x:
                    raise op_error(cls.name, f"expected a batch operand with a dynamic leading "
                                   f"dim and an operand without one, found {batch} and {x}")
            elif not batched_x or len(source) != len(target):
                raise op_error(cls.name, "expected a batch operand, or an operand of the "
                               f"target's rank with a dynamic leading dim, for the target "
                               f"{target}, found {x}")
            target[0] = 1  # checked as a broadcast of one row
            if batched_x:
                source[0] = 1
        elif batch is not None or batched_x:
            raise op_error(cls.name, f"expected a leading target dim of -1 for a dynamic batch, "
                           f"found {target}")
        _require_non_negative(cls.name, "shape", target)
        if len(source) > len(target) or broadcast_shapes(source, target) != tuple(target):
            raise op_error(cls.name, f"expected {x} to broadcast to {list(shape)}")
        dims = [DYNAMIC_INDEX if d == -1 and axis == 0 else d for axis, d in enumerate(shape)]
        return TensorType(x_type.get_element_type(), dims)

    @classmethod
    def _infer_runtime(cls, x: Attribute, shape: Sequence[int], batch: Attribute | None,
                       runtime: list[int]) -> TensorType:
        """`infer_type` of a target with runtime sizes after its leading dim (`runtime`),
        each sized by the sizing operand or `x` (both aligned with the target's end)."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        if batch is None:
            raise op_error(cls.name, f"expected an operand sizing the runtime dims of the "
                           f"target {list(shape)}, found none")
        like = _tensor(cls.name, "the sizing operand", batch, any_dynamic=True)
        sizes = like.get_shape()
        source, target = list(x_type.get_shape()), list(shape)
        offset = len(target) - len(source)
        like_offset = len(target) - len(sizes)

        def sized(d: int) -> bool:
            return (d >= like_offset and sizes[d - like_offset] < 0) or (
                d >= offset and source[d - offset] < 0)

        if like_offset < 0 or any(not sized(d) for d, size in enumerate(shape) if size == -1):
            raise op_error(cls.name, f"expected a sizing operand of rank at most {len(shape)}"
                           f" with runtime dims where the target {list(shape)} has -1 and the "
                           f"operand {x} has none, found {batch}")
        for d, size in enumerate(target):
            if size == -1:
                target[d] = 1
                if d >= offset and source[d - offset] < 0:
                    source[d - offset] = 1  # the same runtime size: checked by the compute
        if any(size < 0 for size in source):
            raise op_error(cls.name, f"expected {x} to have runtime dims only where the target "
                           f"{list(shape)} has -1")
        _require_non_negative(cls.name, "shape", target)
        if len(source) > len(target) or broadcast_shapes(source, target) != tuple(target):
            raise op_error(cls.name, f"expected {x} to broadcast to {list(shape)}")
        return TensorType(x_type.get_element_type(),
                          [DYNAMIC_INDEX if d == -1 else d for d in shape])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, _ints(self.shape),
                               None if self.batch is None else self.batch.type)

    def shape_tuple(self) -> tuple[int, ...]:
        """The result shape."""
        return _ints(self.shape)


RESIZE_MODES = ("nearest", "linear", "cubic")
"""The interpolation modes `graph.resize` accepts."""

RESIZE_COORDINATE_MODES = (
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
    "tf_half_pixel_for_nn", "tf_crop_and_resize",
)
"""How `graph.resize` maps an output coordinate to an input one (ONNX's names)."""

RESIZE_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
"""How `graph.resize` rounds an input coordinate in mode nearest (ONNX's names)."""


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class ResizeOp(GraphOp):
    """Resize by interpolation, axis by axis (ONNX Resize and Upsample).

    Semantics: the result shape is `sizes`; `scales` (one per axis, positive) is what ONNX's
    `coordinate_transformation_mode` divides by to map result coordinate `o` of an axis of
    input length `n` to input coordinate `i`, e.g. half_pixel: `i = (o + 0.5) / scale - 0.5`,
    asymmetric: `i = o / scale`, align_corners: `i = o * (n - 1) / (scale * n - 1)`;
    tf_crop_and_resize maps into the region `roi` (starts of every axis, then ends, as
    fractions of `n - 1`) and gives `extrapolation_value` where `i` falls outside the input.
    Mode nearest picks the input element at `i` rounded by `nearest_mode`, clamped to the axis;
    linear interpolates the two neighbours of `i`; cubic the four, with coefficient
    `cubic_coeff_a`. With `antialias`, linear and cubic kernels widen by 1 / scale when
    downsampling; with `exclude_outside`, weights outside the input are zero (the rest
    renormalized). Linear and cubic need a float element type. A dynamic leading dim (the
    batch) has size -1 and scale 1 (each row resized on its own; no crop of it).

    With `like` (of x's rank), an axis of size -1 where `like`'s dim is a runtime size is
    resized to that size (ONNX Resize to sizes read from another value's shape: a segmentation
    model's logits upsampled to its input's height and width), its scale `out / n` at run
    time (its `scales` entry 1, unused); such an axis takes modes nearest and linear, without
    antialias, `exclude_outside` or a crop, and the other axes are kept.

    Example:
        %r = graph.resize %x {sizes = array<i64: 1, 1, 4, 6>,
            scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear"}
            : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32>
        %u = graph.resize %y, %image {sizes = array<i64: -1, 21, -1, -1>,
            scales = array<f64: 1.0, 1.0, 1.0, 1.0>, mode = "linear"}
            : (tensor<?x21x?x?xf32>, tensor<?x3x?x?xf32>) -> tensor<?x21x?x?xf32>
    """

    name = "graph.resize"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    like = opt_operand_def(TensorType)
    result = result_def(TensorType)
    sizes = attr_def(DenseArrayBase.constr(i64))
    scales = attr_def(DenseArrayBase.constr(f64))
    mode = attr_def(StringAttr, default_value=StringAttr("nearest"))
    coordinate_transformation_mode = attr_def(StringAttr,
                                              default_value=StringAttr("half_pixel"))
    nearest_mode = attr_def(StringAttr, default_value=StringAttr("round_prefer_floor"))
    cubic_coeff_a = attr_def(FloatAttr, default_value=FloatAttr(-0.75, f64))
    exclude_outside = attr_def(BoolAttr, default_value=bool_attr(False))
    antialias = attr_def(BoolAttr, default_value=bool_attr(False))
    roi = attr_def(DenseArrayBase.constr(f64), default_value=_f64_array([]))
    extrapolation_value = attr_def(FloatAttr, default_value=FloatAttr(0.0, f64))

    traits = traits_def(Pure())
    assembly_format = "$x (`,` $like^)? attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        x: SSAValue | Operation,
        sizes: Sequence[int],
        scales: Sequence[float],
        *,
        like: SSAValue | Operation | None = None,
        mode: str = "nearest",
        coordinate_transformation_mode: str = "half_pixel",
        nearest_mode: str = "round_prefer_floor",
        cubic_coeff_a: float = -0.75,
        exclude_outside: bool = False,
        antialias: bool = False,
        roi: Sequence[float] = (),
        extrapolation_value: float = 0.0,
    ) -> None:
        result_type = self.infer_type(
            SSAValue.get(x).type, sizes, scales, mode=mode,
            coordinate_transformation_mode=coordinate_transformation_mode,
            nearest_mode=nearest_mode, roi=roi,
            like=None if like is None else SSAValue.get(like).type,
            antialias=antialias, exclude_outside=exclude_outside)
        super().__init__(
            operands=[x, like],
            result_types=[result_type],
            attributes={
                "sizes": i64_array(sizes),
                "scales": _f64_array(scales),
                "mode": StringAttr(mode),
                "coordinate_transformation_mode": StringAttr(coordinate_transformation_mode),
                "nearest_mode": StringAttr(nearest_mode),
                "cubic_coeff_a": FloatAttr(float(cubic_coeff_a), f64),
                "exclude_outside": bool_attr(exclude_outside),
                "antialias": bool_attr(antialias),
                "roi": _f64_array(roi),
                "extrapolation_value": FloatAttr(float(extrapolation_value), f64),
            },
        )

    @classmethod
    def infer_type(cls, x: Attribute, sizes: Sequence[int], scales: Sequence[float], *,
                   mode: str = "nearest", coordinate_transformation_mode: str = "half_pixel",
                   nearest_mode: str = "round_prefer_floor", roi: Sequence[float] = (),
                   like: Attribute | None = None, antialias: bool = False,
                   exclude_outside: bool = False) -> TensorType:
        """`sizes`, of x's element type: -1 at each dynamic dim of x, which has size
        `floor(n * scale)` at run time (scale 1 for a dynamic batch), and no crop of it, or,
        with `like`, `like`'s runtime size there (`sized_axes`)."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        rank = x_type.get_num_dims()
        _require_count(cls.name, "sizes", sizes, rank)
        _require_count(cls.name, "scales", scales, rank)
        shape = x_type.get_shape()
        sized = cls._sized_axes(x_type, sizes, like)
        if sized and (mode not in ("nearest", "linear") or antialias or exclude_outside
                      or coordinate_transformation_mode == "tf_crop_and_resize"):
            raise op_error(cls.name, f"expected mode nearest or linear, without antialias, "
                           f"exclude_outside or a crop, for the axes {sized} sized by {like}, "
                           f"found mode '{mode}', coordinate mode "
                           f"'{coordinate_transformation_mode}'")
        if sized and any(a not in sized and (size != max(dim, -1) or scales[a] != 1.0)
                         for a, (size, dim) in enumerate(zip(sizes, shape, strict=True))):
            raise op_error(cls.name, f"expected the axes not sized by {like} kept (their size "
                           f"x's, scale 1) beside the axes {sized} it sizes, found sizes "
                           f"{list(sizes)}, scales {list(scales)} for {x_type}")
        _require_positive(cls.name, "sizes", [s for a, (s, d) in enumerate(zip(
            sizes, shape, strict=True)) if d >= 0 and a not in sized])
        for axis, dim in enumerate(shape):
            if dim >= 0 or axis in sized:
                continue
            what = "the dynamic batch" if axis == 0 else f"dynamic dim {axis}"
            if sizes[axis] != -1 or (axis == 0 and scales[0] != 1) or (
                    roi and (roi[axis], roi[axis + rank]) != (0, 1)):
                raise op_error(cls.name, f"expected size -1{' and scale 1' if axis == 0 else ''}"
                               f" for {what} of {x_type}, found size {sizes[axis]}, scale "
                               f"{scales[axis]}")
        if any(not s > 0 for s in scales):
            raise op_error(cls.name, f"expected positive 'scales', found {list(scales)}")
        _require_choice(cls.name, "mode", mode, RESIZE_MODES)
        _require_choice(cls.name, "coordinate_transformation_mode",
                        coordinate_transformation_mode, RESIZE_COORDINATE_MODES)
        _require_choice(cls.name, "nearest_mode", nearest_mode, RESIZE_NEAREST_MODES)
        if coordinate_transformation_mode == "tf_crop_and_resize":
            _require_count(cls.name, "roi", roi, 2 * rank)
        if mode != "nearest" and not is_float_type(x_type.get_element_type()):
            raise op_error(cls.name, f"expected a floating-point element type for mode "
                                     f"'{mode}', found {x_type.get_element_type()}")
        return TensorType(x_type.get_element_type(), [DYNAMIC_INDEX if s < 0 else s for s in sizes])

    @classmethod
    def _sized_axes(cls, x: TensorType, sizes: Sequence[int], like: Attribute | None
                    ) -> list[int]:
        """The axes of size -1 that `like` sizes (its runtime dims there; not x's dynamic
        batch, whose rows are resized one by one)."""
        if like is None:
            return []
        like_type = _tensor(cls.name, "the sizing operand", like, any_dynamic=True)
        if like_type.get_num_dims() != x.get_num_dims():
            raise op_error(cls.name, f"expected a sizing operand of rank {x.get_num_dims()}, "
                           f"found {like}")
        axes = [axis for axis, (size, dim) in enumerate(zip(sizes, like_type.get_shape(),
                                                            strict=True))
                if size == -1 and dim < 0 and not (axis == 0 and x.get_shape()[0] < 0)]
        if not axes:
            raise op_error(cls.name, f"expected a sizing operand with a runtime dim where "
                           f"'sizes' {list(sizes)} has -1, found {like}")
        return axes

    def sized_axes(self) -> list[int]:
        """The axes `like` sizes (none without it)."""
        x_type = self.x.type
        assert isinstance(x_type, TensorType)
        return self._sized_axes(x_type, _ints(self.sizes),
                                None if self.like is None else self.like.type)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.x.type, _ints(self.sizes), self.scales_tuple(), mode=self.mode_value(),
            coordinate_transformation_mode=self.coordinate_mode_value(),
            nearest_mode=self.nearest_mode_value(), roi=self.roi_tuple(),
            like=None if self.like is None else self.like.type,
            antialias=self.antialias_value(), exclude_outside=self.exclude_outside_value())

    def sizes_tuple(self) -> tuple[int, ...]:
        return _ints(self.sizes)

    def scales_tuple(self) -> tuple[float, ...]:
        """The scale of each axis used by the coordinate transformation."""
        return _floats(self.scales)

    def roi_tuple(self) -> tuple[float, ...]:
        """The region of tf_crop_and_resize: starts of every axis, then ends (or empty)."""
        return _floats(self.roi)

    def mode_value(self) -> str:
        """nearest, linear or cubic."""
        return self.mode.data

    def coordinate_mode_value(self) -> str:
        """The coordinate transformation mode."""
        return self.coordinate_transformation_mode.data

    def nearest_mode_value(self) -> str:
        """The rounding of mode nearest."""
        return self.nearest_mode.data

    def cubic_coeff_a_value(self) -> float:
        """The cubic kernel's coefficient a."""
        return float(self.cubic_coeff_a.value.data)

    def exclude_outside_value(self) -> bool:
        """Whether weights outside the input are dropped and the rest renormalized."""
        return bool(self.exclude_outside.value.data)

    def antialias_value(self) -> bool:
        """Whether linear and cubic kernels widen when downsampling."""
        return bool(self.antialias.value.data)

    def extrapolation_value_value(self) -> float:
        """The value of tf_crop_and_resize outside the input."""
        return float(self.extrapolation_value.value.data)


# ---------------------------------------------------------------------------------------------
# Reductions and selections: argmax, topk
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.REDUCTION)
@irdl_op_definition
class ArgMaxOp(GraphOp):
    """Index of the largest element along `axis` (ONNX ArgMax).

    Semantics: the result is `i64`, with `axis` kept as size 1 under `keepdims` (default) or
    removed; among equal maxima the first index wins, the last with `select_last_index`.

    Example:
        %r = graph.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<2x5xf32>) -> tensor<2xi64>
    """

    name = "graph.argmax"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    axis = attr_def(IntegerAttr[I64], default_value=i64_attr(0))
    keepdims = attr_def(BoolAttr, default_value=bool_attr(True))
    select_last_index = attr_def(BoolAttr, default_value=bool_attr(False))

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, axis: int = 0, keepdims: bool = True,
                 select_last_index: bool = False) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, axis, keepdims)],
            attributes={"axis": i64_attr(axis), "keepdims": bool_attr(keepdims),
                        "select_last_index": bool_attr(select_last_index)},
        )

    @classmethod
    def infer_type(cls, x: Attribute, axis: int = 0, keepdims: bool = True) -> TensorType:
        """x's shape with `axis` set to 1 or removed, of i64; the other dims may be dynamic
        (a segmentation map's classes at each pixel of a runtime plane), the axis not."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        shape = list(x_type.get_shape())
        axis = _normalize_axis(cls.name, axis, len(shape))
        _require_static_axis(cls.name, "the reduced axis", x_type, axis)
        if shape[axis] == 0:
            raise op_error(cls.name, f"expected a non-empty axis {axis}, found {x}")
        if keepdims:
            shape[axis] = 1
        else:
            del shape[axis]
        return TensorType(i64, shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.axis.value.data, self.keepdims_value())

    def normalized_axis(self) -> int:
        """The axis in [0, rank)."""
        return _normalize_axis(self.name, self.axis.value.data, self.x.type.get_num_dims())

    def keepdims_value(self) -> bool:
        """Whether the axis stays as size 1."""
        return bool(self.keepdims.value.data)

    def select_last_index_value(self) -> bool:
        """Whether the last of equal maxima wins."""
        return bool(self.select_last_index.value.data)


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class TopKOp(IRDLOperation):
    """The `k` largest (or smallest) elements along `axis` and their indices (ONNX TopK).

    Semantics: results `values` (x's element type) and `indices` (`i64`) have x's shape with
    `axis` of size `k` (0 <= k <= dim). With `largest` (default) the greatest elements come
    first, else the least; equal elements keep their input order (lower index first). NaN is
    above every number and equal to NaN (as NumPy sorts and ONNX Runtime ranks it): first with
    `largest`, last without; -0.0 equals 0.0. The elements are always sorted (`sorted` = false
    leaves the order unspecified, so sorted is a valid order).

    Example:
        %v, %i = graph.topk %x {k = 2 : i64, axis = 1 : i64}
            : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    """

    name = "graph.topk"

    x = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    k = attr_def(IntegerAttr[I64])
    axis = attr_def(IntegerAttr[I64], default_value=i64_attr(-1))
    largest = attr_def(BoolAttr, default_value=bool_attr(True))
    sorted = attr_def(BoolAttr, default_value=bool_attr(True))

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, k: int, axis: int = -1, largest: bool = True,
                 sorted: bool = True) -> None:
        values_type, indices_type = self.infer_types(SSAValue.get(x).type, k, axis)
        super().__init__(
            operands=[x],
            result_types=[values_type, indices_type],
            attributes={"k": i64_attr(k), "axis": i64_attr(axis), "largest": bool_attr(largest),
                        "sorted": bool_attr(sorted)},
        )

    @classmethod
    def infer_types(cls, x: Attribute, k: int, axis: int = -1) -> tuple[TensorType, TensorType]:
        """(values type, indices type): x's shape with `axis` of size k."""
        x_type = _tensor(cls.name, "the operand", x)
        shape = list(x_type.get_shape())
        axis = _normalize_axis(cls.name, axis, len(shape))
        if not 0 <= k <= shape[axis]:
            raise op_error(cls.name, f"expected k in [0, {shape[axis]}], found {k}")
        shape[axis] = k
        return TensorType(x_type.get_element_type(), shape), TensorType(i64, shape)

    def verify_(self) -> None:
        expected = self.infer_types(self.x.type, self.k.value.data, self.axis.value.data)
        found = (self.values.type, self.indices.type)
        if expected != found:
            raise op_error(self.name, f"expected result types {expected[0]} and {expected[1]}, "
                                      f"found {found[0]} and {found[1]}")

    def k_value(self) -> int:
        """How many elements are selected."""
        return self.k.value.data

    def normalized_axis(self) -> int:
        """The axis in [0, rank)."""
        return _normalize_axis(self.name, self.axis.value.data, self.x.type.get_num_dims())

    def largest_value(self) -> bool:
        """Whether the greatest elements are selected."""
        return bool(self.largest.value.data)


# ---------------------------------------------------------------------------------------------
# Out-fusable: conv_transpose2d
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class ConvTranspose2DOp(ConvWindow, GraphOp):
    """2-D transposed convolution (ONNX ConvTranspose, the gradient of conv2d), NCHW.

    Semantics: input N×C×H×W, weight C×(O/groups)×KH×KW, optional 1-D bias of length O. Each
    input element scatters its product with the kernel into the output at stride `strides` and
    dilation `dilation`; the full output of height `strides*(H-1) + dilation*(KH-1) + 1 +
    output_padding[0]` is then cropped by `padding` [top, left, bottom, right] (likewise for W).
    `groups` splits C and O. H and W may be runtime sizes (shape-polymorphic: a UNet's
    decoder over runtime images), the output's then runtime too.

    Example:
        %r = graph.conv_transpose2d %x, %w
            {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
            : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x9x9xf32>
    """

    name = "graph.conv_transpose2d"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    strides = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))
    padding = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([0, 0, 0, 0]))
    output_padding = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([0, 0]))
    dilation = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))
    groups = attr_def(IntegerAttr[I64], default_value=i64_attr(1))

    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        weight: SSAValue | Operation,
        bias: SSAValue | Operation | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        output_padding: Sequence[int] = (0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ) -> None:
        result_type = self.infer_type(
            SSAValue.get(input).type, SSAValue.get(weight).type,
            None if bias is None else SSAValue.get(bias).type, strides=strides,
            padding=padding, output_padding=output_padding, dilation=dilation, groups=groups)
        super().__init__(
            operands=[input, weight, [] if bias is None else [bias]],
            result_types=[result_type],
            attributes={"strides": i64_array(strides), "padding": i64_array(padding),
                        "output_padding": i64_array(output_padding),
                        "dilation": i64_array(dilation), "groups": i64_attr(groups)},
        )

    @classmethod
    def infer_type(
        cls, input: Attribute, weight: Attribute, bias: Attribute | None = None, *,
        strides: Sequence[int] = (1, 1), padding: Sequence[int] = (0, 0, 0, 0),
        output_padding: Sequence[int] = (0, 0), dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ) -> TensorType:
        """N×O×OH×OW with OH = strides*(H-1) + dilation*(KH-1) + 1 + output_padding - pads."""
        input_type = _tensor(cls.name, "the input", input, any_dynamic=True)
        weight_type = _tensor(cls.name, "the weight", weight)
        _require_rank(cls.name, "a 4-D input", input_type, 4)
        _require_rank(cls.name, "a 4-D weight", weight_type, 4)
        _require_static_axis(cls.name, "the channels", input_type, 1)
        element_type = _same_element_type(cls.name, [input_type, weight_type])
        for attr_name, values, count in (("strides", strides, 2), ("padding", padding, 4),
                                         ("output_padding", output_padding, 2),
                                         ("dilation", dilation, 2)):
            _require_count(cls.name, attr_name, values, count)
        _require_positive(cls.name, "strides", strides)
        _require_positive(cls.name, "dilation", dilation)
        _require_non_negative(cls.name, "padding", padding)
        _require_non_negative(cls.name, "output_padding", output_padding)
        n, c, h, w = input_type.get_shape()
        wc, o_per_group, kh, kw = weight_type.get_shape()
        if groups < 1 or c % groups:
            raise op_error(cls.name, f"expected groups to divide the {c} input channels, found "
                                     f"{groups}")
        if wc != c:
            raise op_error(cls.name, f"expected weight dim 0 to be the {c} input channels, "
                                     f"found {wc}")
        out_channels = o_per_group * groups
        if bias is not None:
            bias_type = _tensor(cls.name, "the bias", bias)
            _same_element_type(cls.name, [input_type, bias_type])
            if bias_type.get_shape() != (out_channels,):
                raise op_error(cls.name, f"expected a bias of shape [{out_channels}], found "
                                         f"{bias}")
        sizes = []
        for axis, (size, k) in enumerate(((h, kh), (w, kw))):
            if size < 0:
                sizes.append(DYNAMIC_INDEX)  # a runtime size: its output's too
                continue
            full = strides[axis] * (size - 1) + dilation[axis] * (k - 1) + 1
            out = full + output_padding[axis] - padding[axis] - padding[axis + 2]
            if out < 1:
                raise op_error(cls.name, f"expected a positive output size along "
                                         f"{'HW'[axis]}, found {out}")
            sizes.append(out)
        return TensorType(element_type, [n, out_channels, *sizes])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.input.type, self.weight.type, None if self.bias is None else self.bias.type,
            strides=_ints(self.strides), padding=_ints(self.padding),
            output_padding=_ints(self.output_padding), dilation=_ints(self.dilation),
            groups=self.groups.value.data)

    def output_padding_tuple(self) -> tuple[int, ...]:
        """(extra rows, extra columns) added at the end of the full output."""
        return _ints(self.output_padding)


TENSOR_OPS: tuple[type[IRDLOperation], ...] = (
    CastOp, CompareOp, WhereOp, GatherOp, SliceOp, PadOp, BroadcastToOp, ResizeOp, ArgMaxOp,
    TopKOp, ConvTranspose2DOp,
)
"""The ops of this module, in the order the Dialect object lists them."""
