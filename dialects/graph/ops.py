"""Operations of the graph dialect: dlc's tensor-level IR (Relay / Relax in TVM).

Every op works on ranked, static-shape `tensor<...>` values and computes its result type from its
operands and attributes (`infer_type`); the verifier recomputes it and rejects a mismatch.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np
from dlc.dialects.dim_symbols import has_dynamic_leading_dim, has_runtime_extent
from dlc.dialects.graph.attrs import FusionKind, from_numpy_dtype, is_float_type, to_numpy_dtype
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    BoolAttr,
    Builtin,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    attr_def,
    base,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

# ---------------------------------------------------------------------------------------------
# Helpers: diagnostics, attribute construction, shapes
# ---------------------------------------------------------------------------------------------


def op_error(op_name: str, message: str) -> VerifyException:
    """A verifier error in MLIR's form: `'graph.conv2d' op expected ..., found ...`."""
    return VerifyException(f"'{op_name}' op {message}")


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    """`array<i64: ...>` holding `values`."""
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def i64_attr(value: int) -> IntegerAttr:
    """`value : i64`."""
    return IntegerAttr(int(value), i64)


def f32_attr(value: float) -> FloatAttr:
    """`value : f32`."""
    return FloatAttr(float(value), f32)


def bool_attr(value: bool) -> BoolAttr:
    """`true` or `false` (an i1 IntegerAttr)."""
    return IntegerAttr(1 if value else 0, 1)


def _ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())


class ConvWindow:
    """The accessors of a convolution's window attributes (`strides`, `padding`, `dilation`,
    `groups`: i64 arrays and an i64), shared by the graph ops that convolve. A mixin: the op
    defines the attributes."""

    if TYPE_CHECKING:  # declared by the op (irdl fields), not here
        strides: DenseArrayBase
        padding: DenseArrayBase
        dilation: DenseArrayBase
        groups: IntegerAttr

    def strides_tuple(self) -> tuple[int, ...]:
        """`strides` as (sh, sw)."""
        return _ints(self.strides)

    def padding_tuple(self) -> tuple[int, ...]:
        """`padding` as (top, left, bottom, right)."""
        return _ints(self.padding)

    def dilation_tuple(self) -> tuple[int, ...]:
        """`dilation` as (dh, dw)."""
        return _ints(self.dilation)

    def groups_value(self) -> int:
        """The number of groups."""
        return self.groups.value.data


class ConvLayouts(ConvWindow):
    """`ConvWindow` with the data and weight layouts (`layout`, `kernel_layout`)."""

    if TYPE_CHECKING:  # declared by the op (irdl fields), not here
        input: SSAValue
        layout: StringAttr
        kernel_layout: StringAttr

    def layout_value(self) -> str:
        """The input and output layout, e.g. "NCHW"."""
        return self.layout.data

    def kernel_layout_value(self) -> str:
        """The weight layout, e.g. "OIHW"."""
        return self.kernel_layout.data

    def is_depthwise(self) -> bool:
        """Whether each input channel is its own group (groups == C > 1)."""
        channels = self.input.type.get_shape()[self.layout_value().index("C")]
        return self.groups_value() == channels and channels > 1


def _tensor(
    op_name: str, what: str, type: Attribute, *, leading_dynamic: bool = False,
    any_dynamic: bool = False,
) -> TensorType:
    """`type` as a static-shape ranked tensor type, or a verifier error naming `what`.

    With `leading_dynamic` the leading dim may be dynamic (`?`, the batch of a batch-polymorphic
    op's data operand); every other dim must still be static. With `any_dynamic` (a
    shape-polymorphic op's data operand, `GraphOp.DYNAMIC_DIMS`) every dim may be.
    """
    if not isinstance(type, TensorType):
        raise op_error(op_name, f"expected {what} to be a ranked tensor, found {type}")
    if any_dynamic:
        return type
    dynamic = [axis for axis, dim in enumerate(type.get_shape()) if dim < 0]
    if dynamic and not (leading_dynamic and dynamic == [0]):
        shape = "a static shape after its leading dim" if leading_dynamic else "a static shape"
        raise op_error(op_name, f"expected {what} to have {shape}, found {type}")
    return type


def _require_static_axis(op_name: str, what: str, type: TensorType, axis: int) -> None:
    """A polymorphic op's `axis` (normalized) must not be a dynamic dim."""
    if type.get_shape()[axis] < 0:
        raise op_error(op_name, f"expected {what} to be a static dim of {type}, found axis "
                                f"{axis}")


def _require_batch_first(op_name: str, type: TensorType, batch_axis: int) -> None:
    """A dynamic leading dim must be the layout's batch axis (`N`)."""
    if batch_axis != 0 and has_dynamic_leading_dim(type):
        raise op_error(
            op_name, f"expected the dynamic leading dim of {type} to be the layout's N axis"
        )


def _same_element_type(op_name: str, types: Sequence[TensorType]) -> Attribute:
    element_type = types[0].get_element_type()
    for other in types[1:]:
        if other.get_element_type() != element_type:
            raise op_error(
                op_name,
                f"expected operand element types to match, found {element_type} "
                f"and {other.get_element_type()}",
            )
    return element_type


def _channel_bias(op_name: str, bias: Attribute, channels: int) -> TensorType:
    """The type of a conv's bias, which must be 1-D with one value per output channel."""
    bias_type = _tensor(op_name, "the bias", bias)
    if bias_type.get_shape() != (channels,):
        raise op_error(op_name, f"expected a bias of shape ({channels}), found {bias_type}")
    return bias_type


def _require_float(op_name: str, type: TensorType) -> None:
    if not is_float_type(type.get_element_type()):
        raise op_error(
            op_name, f"expected a floating-point element type, found {type.get_element_type()}"
        )


def _require_rank(op_name: str, what: str, type: TensorType, rank: int) -> None:
    if type.get_num_dims() != rank:
        raise op_error(op_name, f"expected {what} of rank {rank}, found {type}")


def _require_count(op_name: str, attr_name: str, values: Sequence[int], count: int) -> None:
    if len(values) != count:
        raise op_error(
            op_name, f"expected '{attr_name}' to have {count} values, found {len(values)}"
        )


def _require_positive(op_name: str, attr_name: str, values: Sequence[int]) -> None:
    if any(v < 1 for v in values):
        raise op_error(op_name, f"expected positive '{attr_name}', found {list(values)}")


def _require_non_negative(op_name: str, attr_name: str, values: Sequence[int]) -> None:
    if any(v < 0 for v in values):
        raise op_error(op_name, f"expected non-negative '{attr_name}', found {list(values)}")


def _normalize_axis(op_name: str, axis: int, rank: int, *, inclusive: bool = False) -> int:
    """`axis` in [0, rank) (or [0, rank] when `inclusive`), counting negative axes from the end."""
    normalized = axis + rank if axis < 0 else axis
    if not 0 <= normalized < rank + int(inclusive):
        bound = f"[{-rank}, {rank}{']' if inclusive else ')'}"
        raise op_error(op_name, f"expected axis in {bound} for rank {rank}, found {axis}")
    return normalized


def broadcast_shapes(lhs: Sequence[int], rhs: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy's broadcast of two shapes, or None when they are incompatible."""
    rank = max(len(lhs), len(rhs))
    lhs_padded = (1,) * (rank - len(lhs)) + tuple(lhs)
    rhs_padded = (1,) * (rank - len(rhs)) + tuple(rhs)
    shape: list[int] = []
    for a, b in zip(lhs_padded, rhs_padded, strict=True):
        if a != b and a != 1 and b != 1:
            return None
        shape.append(b if a == 1 else a)
    return tuple(shape)


def _layout_positions(op_name: str, attr_name: str, layout: str, letters: str) -> list[int]:
    """Positions of `letters` in `layout`, which must be a permutation of them."""
    if sorted(layout) != sorted(letters):
        raise op_error(
            op_name, f"expected '{attr_name}' to be a permutation of {letters}, found '{layout}'"
        )
    return [layout.index(letter) for letter in letters]


def window_output_size(
    size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, dilation: int,
    ceil_mode: bool = False,
) -> int:
    """Number of sliding-window positions along one axis (ONNX's Conv/Pool output size).

    In ceil mode a last window that would start inside the end padding is dropped, as ONNX and
    PyTorch do.
    """
    extent = dilation * (kernel - 1) + 1
    span = size + pad_begin + pad_end - extent
    count = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (count - 1) * stride >= size + pad_begin:
        count -= 1
    return max(count, 0)


_OpT = TypeVar("_OpT", bound=type[IRDLOperation])


def with_fusion_kind(kind: FusionKind) -> Callable[[_OpT], _OpT]:
    """Class decorator, placed above `@irdl_op_definition`, that declares an op's fusion kind.

    xDSL admits only UPPER_CASE class variables in an op definition, so the `fusion_kind` class
    variable is attached once IRDL has processed the class.
    """

    def attach(cls: _OpT) -> _OpT:
        cls.fusion_kind = kind  # type: ignore[attr-defined]
        return cls

    return attach


class GraphCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    """The op's canonicalization patterns: graph-simplify's patterns rooted at it.

    The patterns live in dialects/graph/canonicalize.py (imported on first use), so that
    `canonicalize` and `graph-simplify` apply the same rewrites.
    """

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from dlc.dialects.graph.canonicalize import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from dlc.dialects.graph.canonicalize import simplify_patterns

        return tuple(simplify_patterns())


# ---------------------------------------------------------------------------------------------
# Shared bases (not ops themselves)
# ---------------------------------------------------------------------------------------------


class GraphOp(IRDLOperation):
    """Base of every graph op with one tensor result computed by shape inference.

    The verifier rejects dynamic dimensions (but a dynamic leading dim in a batch-polymorphic
    op, `LEADING_DYNAMIC`), then recomputes the result type with the op's `infer_type` and
    compares it with the declared one.
    """

    LEADING_DYNAMIC: ClassVar[bool] = False
    """Whether the op is batch-polymorphic: its data operands and its result may have a dynamic
    leading dim (`?`, the batch), which shape inference carries from the operands to the result;
    the other dims, and operands such as weights, stay static (its `infer_type` checks which)."""

    DYNAMIC_DIMS: ClassVar[bool] = False
    """Whether the op is shape-polymorphic: any dim of its data operands may be dynamic (a
    runtime image height or width), and shape inference gives `?` to each result dim computed
    from one (`window_output_size` of `?` is `?`); dims it must know (a concat axis, a weight's)
    stay static. Such ops have compute definitions over runtime extents."""

    if TYPE_CHECKING:
        fusion_kind: ClassVar[FusionKind]

    def inferred_result_type(self) -> TensorType:
        """The result type `infer_type` computes from this op's operands and attributes."""
        raise NotImplementedError(f"{type(self).__name__} must define inferred_result_type")

    def verify_(self) -> None:
        dynamic, any_dynamic = self.LEADING_DYNAMIC, self.DYNAMIC_DIMS
        for index, operand in enumerate(self.operands):
            _tensor(self.name, f"operand #{index}", operand.type, leading_dynamic=dynamic,
                    any_dynamic=any_dynamic)
        result_type = _tensor(
            self.name, "the result", self.results[0].type, leading_dynamic=dynamic,
            any_dynamic=any_dynamic,
        )
        inferred = self.inferred_result_type()
        if inferred != result_type:
            raise op_error(self.name, f"expected result type {inferred}, found {result_type}")


class _BinaryOp(GraphOp):
    """Elementwise binary op with NumPy broadcasting."""

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> None:
        lhs_type = SSAValue.get(lhs).type
        rhs_type = SSAValue.get(rhs).type
        super().__init__(operands=[lhs, rhs], result_types=[self.infer_type(lhs_type, rhs_type)])

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute) -> TensorType:
        """The broadcast shape of `lhs` and `rhs`, with their common element type."""
        lhs_type = _tensor(cls.name, "the lhs", lhs, any_dynamic=True)
        rhs_type = _tensor(cls.name, "the rhs", rhs, any_dynamic=True)
        element_type = _same_element_type(cls.name, [lhs_type, rhs_type])
        shape = broadcast_shapes(lhs_type.get_shape(), rhs_type.get_shape())
        if shape is None:
            raise op_error(
                cls.name, f"expected broadcast-compatible operand shapes, found {lhs} and {rhs}"
            )
        return TensorType(element_type, shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.lhs.type, self.rhs.type)


class _UnaryOp(GraphOp):
    """Elementwise unary op: the result has the operand's type."""

    FLOAT_ONLY: ClassVar[bool] = True
    """Whether the op is defined on floating-point element types only."""

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    T: ClassVar = VarConstraint("T", base(TensorType))
    x = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` type($x)"

    def __init__(self, x: SSAValue | Operation) -> None:
        super().__init__(operands=[x], result_types=[self.infer_type(SSAValue.get(x).type)])

    @classmethod
    def infer_type(cls, x: Attribute) -> TensorType:
        """The operand's type (float element types only where the op needs them)."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        if cls.FLOAT_ONLY:
            _require_float(cls.name, x_type)
        return x_type

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type)


class _Pool2DOp(GraphOp):
    """Shared shape rules of the 2-D sliding-window pools."""

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    kernel = attr_def(DenseArrayBase.constr(i64))
    strides = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))
    padding = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([0, 0, 0, 0]))
    ceil_mode = attr_def(BoolAttr, default_value=bool_attr(False))
    layout = attr_def(StringAttr, default_value=StringAttr("NCHW"))

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def pool_type(
        cls, x: Attribute, kernel: Sequence[int], strides: Sequence[int],
        padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool, layout: str,
        integers: bool = False,
    ) -> TensorType:
        """Result type of a pool window `kernel` sliding over the H and W axes of `x`; the
        element type is float, or with `integers` also an integer type wider than i1."""
        x_type = _tensor(cls.name, "the input", x, any_dynamic=True)
        _require_rank(cls.name, "an input", x_type, 4)
        element = x_type.get_element_type()
        if not integers:
            _require_float(cls.name, x_type)
        elif not is_float_type(element) and not (
            isinstance(element, IntegerType) and element.width.data > 1
        ):
            raise op_error(
                cls.name, f"expected a floating-point or integer element type, found {element}"
            )
        for attr_name, values, count in (
            ("kernel", kernel, 2), ("strides", strides, 2), ("padding", padding, 4),
            ("dilation", dilation, 2),
        ):
            _require_count(cls.name, attr_name, values, count)
        _require_positive(cls.name, "kernel", kernel)
        _require_positive(cls.name, "strides", strides)
        _require_positive(cls.name, "dilation", dilation)
        _require_non_negative(cls.name, "padding", padding)
        n, _, h, w = _layout_positions(cls.name, "layout", layout, "NCHW")
        _require_batch_first(cls.name, x_type, n)
        shape = list(x_type.get_shape())
        for axis, (dim, pos) in enumerate((("H", h), ("W", w))):
            extent = dilation[axis] * (kernel[axis] - 1) + 1
            pads = (padding[axis], padding[axis + 2])
            if max(pads) >= extent:
                raise op_error(
                    cls.name,
                    f"expected padding {list(pads)} of dim {dim} to be smaller than the "
                    f"window extent {extent}",
                )
            if shape[pos] < 0:
                continue  # a runtime extent: sized by `window_output_size` at run time
            size = window_output_size(
                shape[pos], kernel[axis], strides[axis], pads[0], pads[1], dilation[axis],
                ceil_mode,
            )
            if size < 1:
                raise op_error(
                    cls.name,
                    f"expected a positive output size for dim {dim}, found {size} "
                    f"(input {shape[pos]}, window extent {extent})",
                )
            shape[pos] = size
        return TensorType(x_type.get_element_type(), shape)

    def kernel_tuple(self) -> tuple[int, ...]:
        """`kernel` as (kh, kw)."""
        return _ints(self.kernel)

    def strides_tuple(self) -> tuple[int, ...]:
        """`strides` as (sh, sw)."""
        return _ints(self.strides)

    def padding_tuple(self) -> tuple[int, ...]:
        """`padding` as (top, left, bottom, right)."""
        return _ints(self.padding)

    def ceil_mode_value(self) -> bool:
        """Whether the output size is rounded up."""
        return bool(self.ceil_mode.value.data)

    def layout_value(self) -> str:
        """The input and output layout, e.g. "NCHW"."""
        return self.layout.data


# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------


_RESOURCE_ALIGNMENT = 16
"""Alignment written in the 4-byte header of a `dense_resource` blob (MLIR's blob format)."""


def _builtin_resources() -> OpAsmDialectInterface:
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None, "xDSL's builtin dialect always has an OpAsmDialectInterface"
    return interface


def elements_to_array(
    value: DenseIntOrFPElementsAttr | DenseResourceAttr, op_name: str = "graph.constant"
) -> np.ndarray:
    """The tensor held by a dense or dense_resource attribute, as a read-only NumPy array.

    Reads the bytes without unpacking them into Python values; `op_name` names the op that holds
    the attribute in error messages (a missing resource blob, a wrong element count).
    """
    type = _tensor(op_name, "the value", value.type)
    dtype = to_numpy_dtype(type.get_element_type())
    if isinstance(value, DenseIntOrFPElementsAttr):
        raw = value.data.data
    else:
        key = value.resource_handle.data
        blob = _builtin_resources().lookup(key)
        if not blob:
            raise op_error(op_name, f"expected data for resource '{key}', found none")
        raw = bytes.fromhex(blob[2:])[4:]  # drop "0x" and the 4-byte alignment header
    count = math.prod(type.get_shape())
    if dtype == np.bool_:  # i1 is one byte per element; any non-zero byte is true
        flat = np.frombuffer(raw, dtype=np.uint8) != 0
    else:
        flat = np.frombuffer(raw, dtype=dtype.newbyteorder("<"))
    if flat.size == 1 and count != 1:  # splat
        flat = np.full(count, flat[0], dtype=flat.dtype)
    if flat.size != count:
        raise op_error(op_name, f"expected {count} elements for {type}, found {flat.size}")
    result = flat.astype(dtype, copy=False).reshape(type.get_shape())
    result.flags.writeable = False
    return result


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class ConstantOp(GraphOp):
    """A constant tensor.

    Semantics: the result is the tensor held by `value`, either inline (`dense<...>`, stored as
    bytes; large ones print as a hex string) or in a `dense_resource` blob of the module. The
    result type is the type of `value`. Constants are OPAQUE: a fused group takes them as operands.

    Example:
        %w = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
    """

    name = "graph.constant"

    value = attr_def(base(DenseIntOrFPElementsAttr) | base(DenseResourceAttr))
    result = result_def(TensorType)

    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr | DenseResourceAttr) -> None:
        super().__init__(
            attributes={"value": value}, result_types=[self.infer_type(value)]
        )

    @classmethod
    def infer_type(cls, value: Attribute) -> TensorType:
        """The type of the constant's `value`."""
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            raise op_error(cls.name, f"expected a dense elements attribute, found {value}")
        return _tensor(cls.name, "the value", value.type)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.value)

    @classmethod
    def from_array(cls, array: np.ndarray, resource: str | None = None) -> ConstantOp:
        """A constant holding a copy of `array` (any shape, a dtype with a builtin type).

        With `resource`, the data goes into a `dense_resource` blob of that name (deduplicated)
        instead of an inline `dense<...>` attribute.
        """
        data = np.asarray(array)
        data = data.astype(data.dtype.newbyteorder("<"), copy=False)  # tobytes() is row-major
        type = TensorType(from_numpy_dtype(data.dtype), data.shape)
        if resource is None:
            return cls(DenseIntOrFPElementsAttr(type, BytesAttr(data.tobytes())))
        resources = _builtin_resources()
        key = resources.declare_resource(resource)
        header = _RESOURCE_ALIGNMENT.to_bytes(4, "little")
        resources.parse_resource(key, "0x" + (header + data.tobytes()).hex().upper())
        return cls(DenseResourceAttr.from_params(key, type))

    def to_array(self) -> np.ndarray:
        """The constant as a read-only NumPy array of the result's shape and dtype."""
        return elements_to_array(self.value, self.name)

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes, reserved_attr_names=("value",))
        printer.print_string(" ")
        value = self.value
        if not isinstance(value, DenseIntOrFPElementsAttr) or len(value) <= 100:
            printer.print_attribute(value)
            return
        # Large constants: print the hex form straight from the bytes, as xDSL would, without
        # unpacking every element into a Python value.
        raw = value.data.data
        width = len(raw) // len(value)
        if raw == raw[:width] * len(value):
            printer.print_attribute(value)  # splat: xDSL prints the single element
            return
        printer.print_string(f'dense<"0x{raw.hex().upper()}"> : ')
        printer.print_attribute(value.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attributes = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error(
                f"'{cls.name}' op expected a dense elements attribute, found {value}"
            )
        op = cls(value)
        op.attributes.update(attributes)
        return op


# ---------------------------------------------------------------------------------------------
# Elementwise binary ops (NumPy broadcasting)
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class AddOp(_BinaryOp):
    """Elementwise sum with NumPy broadcasting.

    Semantics: `result = lhs + rhs` after broadcasting both to their common shape; operands share
    one element type (any int or float), which is the result's.

    Example:
        %r = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    """

    name = "graph.add"


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class SubOp(_BinaryOp):
    """Elementwise difference with NumPy broadcasting.

    Semantics: `result = lhs - rhs` after broadcasting; one element type (int or float).

    Example:
        %r = graph.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    """

    name = "graph.sub"


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class MulOp(_BinaryOp):
    """Elementwise product with NumPy broadcasting.

    Semantics: `result = lhs * rhs` after broadcasting; one element type (int or float).

    Example:
        %r = graph.mul %a, %b : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
    """

    name = "graph.mul"


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class DivOp(_BinaryOp):
    """Elementwise quotient with NumPy broadcasting.

    Semantics: `result = lhs / rhs` after broadcasting; floats divide as IEEE 754, integers
    truncate toward zero (ONNX Div); integer division by zero is undefined.

    Example:
        %r = graph.div %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    """

    name = "graph.div"


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class MaxOp(_BinaryOp):
    """Elementwise maximum with NumPy broadcasting.

    Semantics: `result = max(lhs, rhs)` after broadcasting; NaN propagates.

    Example:
        %r = graph.max %a, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
    """

    name = "graph.max"


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class MinOp(_BinaryOp):
    """Elementwise minimum with NumPy broadcasting.

    Semantics: `result = min(lhs, rhs)` after broadcasting; NaN propagates.

    Example:
        %r = graph.min %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    """

    name = "graph.min"


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class PowOp(_BinaryOp):
    """Elementwise power with NumPy broadcasting.

    Semantics: `result = lhs ** rhs` after broadcasting; one element type. Negative integer
    exponents of integers are undefined.

    Example:
        %r = graph.pow %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    """

    name = "graph.pow"


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class ModOp(_BinaryOp):
    """Elementwise remainder with NumPy broadcasting (ONNX Mod).

    Semantics: `result = lhs mod rhs` after broadcasting, of one element type: with `fmod = 0`
    (the default) the remainder takes the divisor's sign (Python's `%`, NumPy's `mod`), with
    `fmod = 1` the dividend's (C's `%` and `fmod`, NumPy's `fmod`). An integer zero divisor is
    undefined; floats follow NumPy (a zero divisor or an infinite dividend gives NaN, an
    infinite divisor the dividend, moved by it under `fmod = 0` where the signs differ).

    Example:
        %r = graph.mod %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
        %f = graph.mod %x, %y {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    name = "graph.mod"

    fmod = opt_attr_def(IntegerAttr[I64])

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation,
                 fmod: bool = False) -> None:
        super().__init__(lhs, rhs)
        if fmod:
            self.attributes["fmod"] = i64_attr(1)

    def is_fmod(self) -> bool:
        """Whether the remainder takes the dividend's sign (C's `%`)."""
        return self.fmod is not None and self.fmod.value.data != 0


# ---------------------------------------------------------------------------------------------
# Elementwise unary ops
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class ReluOp(_UnaryOp):
    """Rectified linear unit.

    Semantics: `result = max(x, 0)` elementwise; int or float.

    Example:
        %r = graph.relu %x : tensor<2x3xf32>
    """

    name = "graph.relu"
    FLOAT_ONLY: ClassVar[bool] = False


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class SigmoidOp(_UnaryOp):
    """Logistic sigmoid.

    Semantics: `result = 1 / (1 + exp(-x))` elementwise; float only.

    Example:
        %r = graph.sigmoid %x : tensor<2x3xf32>
    """

    name = "graph.sigmoid"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class TanhOp(_UnaryOp):
    """Hyperbolic tangent.

    Semantics: `result = tanh(x)` elementwise; float only.

    Example:
        %r = graph.tanh %x : tensor<4xf32>
    """

    name = "graph.tanh"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class ExpOp(_UnaryOp):
    """Natural exponential.

    Semantics: `result = e ** x` elementwise; float only.

    Example:
        %r = graph.exp %x : tensor<4xf32>
    """

    name = "graph.exp"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class ErfOp(_UnaryOp):
    """Gauss error function.

    Semantics: `result = erf(x)` elementwise; float only.

    Example:
        %r = graph.erf %x : tensor<4xf32>
    """

    name = "graph.erf"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class SqrtOp(_UnaryOp):
    """Square root.

    Semantics: `result = sqrt(x)` elementwise; float only; NaN for negative inputs.

    Example:
        %r = graph.sqrt %x : tensor<4xf32>
    """

    name = "graph.sqrt"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class NegOp(_UnaryOp):
    """Negation.

    Semantics: `result = -x` elementwise; int (wrapping) or float.

    Example:
        %r = graph.neg %x : tensor<4xi32>
    """

    name = "graph.neg"
    FLOAT_ONLY: ClassVar[bool] = False


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class AbsOp(_UnaryOp):
    """Absolute value.

    Semantics: `result = |x|` elementwise; int (wrapping at the minimum) or float.

    Example:
        %r = graph.abs %x : tensor<4xf32>
    """

    name = "graph.abs"
    FLOAT_ONLY: ClassVar[bool] = False


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class LogOp(_UnaryOp):
    """Natural logarithm.

    Semantics: `result = ln(x)` elementwise; float only; -inf at 0, NaN below.

    Example:
        %r = graph.log %x : tensor<4xf32>
    """

    name = "graph.log"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class CeilOp(_UnaryOp):
    """Round up.

    Semantics: `result = ceil(x)` elementwise, the least integral value >= x (NaN, +-inf and
    +-0 unchanged); float only.

    Example:
        %r = graph.ceil %x : tensor<4xf32>
    """

    name = "graph.ceil"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class FloorOp(_UnaryOp):
    """Round down.

    Semantics: `result = floor(x)` elementwise, the greatest integral value <= x (NaN, +-inf
    and +-0 unchanged); float only.

    Example:
        %r = graph.floor %x : tensor<4xf32>
    """

    name = "graph.floor"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class RoundOp(_UnaryOp):
    """Round to the nearest integral value, halves to even (ONNX Round, IEEE roundeven).

    Semantics: `result = roundeven(x)` elementwise (2.5 -> 2, -1.5 -> -2; NaN, +-inf and +-0
    unchanged); float only.

    Example:
        %r = graph.round %x : tensor<4xf32>
    """

    name = "graph.round"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class ReciprocalOp(_UnaryOp):
    """Reciprocal.

    Semantics: `result = 1 / x` elementwise; float only; inf at 0.

    Example:
        %r = graph.reciprocal %x : tensor<4xf32>
    """

    name = "graph.reciprocal"


@with_fusion_kind(FusionKind.ELEMENTWISE)
@irdl_op_definition
class ClipOp(GraphOp):
    """Clamp every element into [min, max].

    Semantics: `result = minimum(maximum(x, min), max)` elementwise; the bounds are f32
    attributes, converted to the element type; `min <= max` is required.

    Example:
        %r = graph.clip %x {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<2x3xf32>
    """

    name = "graph.clip"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True
    T: ClassVar = VarConstraint("T", base(TensorType))
    x = operand_def(T)
    result = result_def(T)
    min = attr_def(FloatAttr[Float32Type])
    max = attr_def(FloatAttr[Float32Type])

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` type($x)"

    def __init__(self, x: SSAValue | Operation, min: float, max: float) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, min, max)],
            attributes={"min": f32_attr(min), "max": f32_attr(max)},
        )

    @classmethod
    def infer_type(cls, x: Attribute, min: float, max: float) -> TensorType:
        """The operand's type; the bounds must be ordered."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        if min > max:
            raise op_error(cls.name, f"expected min <= max, found min {min} and max {max}")
        return x_type

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.min_value(), self.max_value())

    def min_value(self) -> float:
        """The lower bound."""
        return self.min.value.data

    def max_value(self) -> float:
        """The upper bound."""
        return self.max.value.data


# ---------------------------------------------------------------------------------------------
# Out-fusable ops: matmul, conv2d, pools
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class MatmulOp(GraphOp):
    """Matrix product with `numpy.matmul` semantics.

    Semantics: the last two axes are the matrix axes, the others batch axes that broadcast; a 1-D
    lhs is a row vector and a 1-D rhs a column vector whose added axis is dropped from the
    result (two 1-D operands give a rank-0 dot product). One element type, int or float.

    Example:
        %r = graph.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
    """

    name = "graph.matmul"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> None:
        lhs_type = SSAValue.get(lhs).type
        rhs_type = SSAValue.get(rhs).type
        super().__init__(operands=[lhs, rhs], result_types=[self.infer_type(lhs_type, rhs_type)])

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute) -> TensorType:
        """numpy.matmul's result shape for `lhs @ rhs`. Any dim may be dynamic (a runtime
        batch, rows M, columns N, or the contracting dim K of attention's `p @ v` over a
        runtime sequence): a result dim is dynamic where the operand dim it comes from is
        (batch dims broadcast as NumPy's, `?` with `?` or 1); contracting dims must match
        where both are static (the compute definition checks them at run time otherwise).
        Never an operand's leading dim as a contracting dim (a 1-D lhs, a matrix rhs's rows):
        a batch-polymorphic compile runs the leading dim's rows apart."""
        lhs_type = _tensor(cls.name, "the lhs", lhs, any_dynamic=True)
        rhs_type = _tensor(cls.name, "the rhs", rhs, any_dynamic=True)
        if lhs_type.get_num_dims() == 1:
            _require_static_axis(cls.name, "the contracting dim", lhs_type, 0)
        if rhs_type.get_num_dims() < 3:
            _require_static_axis(cls.name, "a dim of a matrix rhs", rhs_type, 0)
        element_type = _same_element_type(cls.name, [lhs_type, rhs_type])
        a, b = list(lhs_type.get_shape()), list(rhs_type.get_shape())
        if not a or not b:
            raise op_error(cls.name, f"expected operands of rank >= 1, found {lhs} and {rhs}")
        lhs_vector, rhs_vector = len(a) == 1, len(b) == 1
        if lhs_vector:
            a = [1, *a]
        if rhs_vector:
            b = [*b, 1]
        if a[-1] != b[-2] and a[-1] >= 0 and b[-2] >= 0:
            raise op_error(
                cls.name,
                f"expected contracting dims to match, found {a[-1]} (lhs {lhs}) and "
                f"{b[-2]} (rhs {rhs})",
            )
        batch = broadcast_shapes(a[:-2], b[:-2])
        if batch is None:
            raise op_error(
                cls.name, f"expected broadcast-compatible batch dims, found {lhs} and {rhs}"
            )
        shape = [*batch, *([] if lhs_vector else [a[-2]]), *([] if rhs_vector else [b[-1]])]
        return TensorType(element_type, shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.lhs.type, self.rhs.type)


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class Conv2DOp(ConvLayouts, GraphOp):
    """2-D convolution (cross-correlation), grouped and dilated, with an optional bias.

    Semantics: for layout NCHW the input is N×C×H×W and the weight O×(C/groups)×KH×KW
    (`kernel_layout` OIHW); NHWC pairs with HWIO. Any permutation of NCHW / OIHW is accepted;
    the result has the input's layout with O channels. `padding` is [top, left, bottom, right]
    (zeros), `strides` and `dilation` are [h, w]; the output size is
    floor((H + top + bottom - dilation*(KH-1) - 1) / stride) + 1. `groups` splits C and O into
    that many groups (depthwise when groups == C). `bias`, if present, is 1-D of length O.

    Example:
        %r = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
            : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
    """

    name = "graph.conv2d"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    strides = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))
    padding = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([0, 0, 0, 0]))
    dilation = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))
    groups = attr_def(IntegerAttr[I64], default_value=i64_attr(1))
    layout = attr_def(StringAttr, default_value=StringAttr("NCHW"))
    kernel_layout = attr_def(StringAttr, default_value=StringAttr("OIHW"))

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
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
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
        layout: str = "NCHW",
        kernel_layout: str | None = None,
    ) -> None:
        if kernel_layout is None:
            kernel_layout = "HWIO" if layout == "NHWC" else "OIHW"
        result_type = self.infer_type(
            SSAValue.get(input).type,
            SSAValue.get(weight).type,
            None if bias is None else SSAValue.get(bias).type,
            strides=strides, padding=padding, dilation=dilation, groups=groups,
            layout=layout, kernel_layout=kernel_layout,
        )
        super().__init__(
            operands=[input, weight, [] if bias is None else [bias]],
            result_types=[result_type],
            attributes={
                "strides": i64_array(strides),
                "padding": i64_array(padding),
                "dilation": i64_array(dilation),
                "groups": i64_attr(groups),
                "layout": StringAttr(layout),
                "kernel_layout": StringAttr(kernel_layout),
            },
        )

    @classmethod
    def infer_type(
        cls,
        input: Attribute,
        weight: Attribute,
        bias: Attribute | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
        layout: str = "NCHW",
        kernel_layout: str = "OIHW",
    ) -> TensorType:
        """The convolution's result type: the input's layout with O channels."""
        input_type = _tensor(cls.name, "the input", input, any_dynamic=True)
        weight_type = _tensor(cls.name, "the weight", weight)
        _require_rank(cls.name, "an input", input_type, 4)
        _require_rank(cls.name, "a weight", weight_type, 4)
        operand_types = [input_type, weight_type]
        for attr_name, values, count in (
            ("strides", strides, 2), ("padding", padding, 4), ("dilation", dilation, 2),
        ):
            _require_count(cls.name, attr_name, values, count)
        _require_positive(cls.name, "strides", strides)
        _require_positive(cls.name, "dilation", dilation)
        _require_non_negative(cls.name, "padding", padding)
        if groups < 1:
            raise op_error(cls.name, f"expected positive 'groups', found {groups}")
        n, c, h, w = _layout_positions(cls.name, "layout", layout, "NCHW")
        o, i, kh, kw = _layout_positions(cls.name, "kernel_layout", kernel_layout, "OIHW")
        _require_batch_first(cls.name, input_type, n)
        x_shape, w_shape = input_type.get_shape(), weight_type.get_shape()
        channels, out_channels = x_shape[c], w_shape[o]
        if channels != w_shape[i] * groups:
            raise op_error(
                cls.name,
                f"expected input channels {channels} to match weight channels {w_shape[i]} "
                f"(groups {groups})",
            )
        if out_channels % groups != 0:
            raise op_error(
                cls.name,
                f"expected output channels {out_channels} to be divisible by groups {groups}",
            )
        if bias is not None:
            operand_types.append(_channel_bias(cls.name, bias, out_channels))
        element_type = _same_element_type(cls.name, operand_types)
        shape = list(x_shape)
        shape[c] = out_channels
        for axis, (dim, pos, kpos) in enumerate((("H", h, kh), ("W", w, kw))):
            if x_shape[pos] < 0:
                continue  # a runtime extent: sized by `window_output_size` at run time
            size = window_output_size(
                x_shape[pos], w_shape[kpos], strides[axis], padding[axis], padding[axis + 2],
                dilation[axis],
            )
            if size < 1:
                raise op_error(
                    cls.name,
                    f"expected a positive output size for dim {dim}, found {size} (input "
                    f"{x_shape[pos]}, kernel {w_shape[kpos]}, dilation {dilation[axis]})",
                )
            shape[pos] = size
        del n
        return TensorType(element_type, shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.input.type,
            self.weight.type,
            None if self.bias is None else self.bias.type,
            strides=self.strides_tuple(), padding=self.padding_tuple(),
            dilation=self.dilation_tuple(), groups=self.groups_value(),
            layout=self.layout_value(), kernel_layout=self.kernel_layout_value(),
        )



@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class Conv2DWinogradOp(GraphOp):
    """A stride-1 NCHW conv2d with 3 weight rows, by Winograd's F(tile, 3) along the rows, its
    weight already transformed (Relay's `conv2d_winograd_without_weight_transform`).

    Semantics: `conv2d(input, weight, bias, padding)` (stride 1, dilation 1, one group) where
    `weight` is `U[a, k, c, j] = sum_r G[a, r] * w[k, c, r, j]` (alpha x O x C x KW, alpha =
    tile + 2) of the OIHW weight `w`; `tile` (2 or 4) is the number of output rows each
    transform makes. The steps and matrices are in `dialects/graph/winograd.py`; the pass
    `graph-winograd-conv` creates this op from a conv2d with a constant weight.

    Example:
        %r = graph.conv2d_winograd %x, %u, %b {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64}
            : (tensor<1x8x7x9xf32>, tensor<6x16x8x3xf32>, tensor<16xf32>) -> tensor<1x16x7x9xf32>
    """

    name = "graph.conv2d_winograd"
    DYNAMIC_DIMS: ClassVar[bool] = True

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    padding = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([0, 0, 0, 0]))
    tile = attr_def(IntegerAttr[I64])

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
        padding: Sequence[int] = (0, 0, 0, 0),
        tile: int,
    ) -> None:
        result_type = self.infer_type(
            SSAValue.get(input).type, SSAValue.get(weight).type,
            None if bias is None else SSAValue.get(bias).type, padding=padding, tile=tile,
        )
        super().__init__(
            operands=[input, weight, [] if bias is None else [bias]],
            result_types=[result_type],
            attributes={"padding": i64_array(padding), "tile": i64_attr(tile)},
        )

    @classmethod
    def infer_type(
        cls,
        input: Attribute,
        weight: Attribute,
        bias: Attribute | None = None,
        *,
        padding: Sequence[int] = (0, 0, 0, 0),
        tile: int,
    ) -> TensorType:
        """N x O x (H + top + bottom - 2) x (W + left + right - KW + 1); a runtime N, H or W
        (`?`) gives a runtime result dim."""
        from dlc.dialects.graph.winograd import TILES

        input_type = _tensor(cls.name, "the input", input, any_dynamic=True)
        weight_type = _tensor(cls.name, "the weight", weight)
        _require_rank(cls.name, "an input", input_type, 4)
        _require_rank(cls.name, "a weight", weight_type, 4)
        _require_count(cls.name, "padding", padding, 4)
        _require_non_negative(cls.name, "padding", padding)
        if tile not in TILES:
            raise op_error(cls.name, f"expected 'tile' in {list(TILES)}, found {tile}")
        _require_static_axis(cls.name, "the input's channels", input_type, 1)
        operand_types = [input_type, weight_type]
        (n, channels, height, width), (alpha, out_channels, in_channels, kw) = (
            input_type.get_shape(), weight_type.get_shape())
        if alpha != tile + 2:
            raise op_error(
                cls.name,
                f"expected a weight of {tile + 2} transformed rows (tile {tile}), found {alpha}",
            )
        if in_channels != channels:
            raise op_error(
                cls.name,
                f"expected input channels {channels} to match weight channels {in_channels}",
            )
        if bias is not None:
            operand_types.append(_channel_bias(cls.name, bias, out_channels))
        element_type = _same_element_type(cls.name, operand_types)
        _require_float(cls.name, input_type)
        top, left, bottom, right = padding
        out_h, out_w = height + top + bottom - 2, width + left + right - kw + 1
        if (height >= 0 and out_h < 1) or (width >= 0 and out_w < 1):
            raise op_error(
                cls.name,
                f"expected a positive output size, found {out_h}x{out_w} (input "
                f"{height}x{width}, kernel 3x{kw})",
            )
        out_h, out_w = (out_h if height >= 0 else DYNAMIC_INDEX), (
            out_w if width >= 0 else DYNAMIC_INDEX)
        return TensorType(element_type, [n, out_channels, out_h, out_w])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.input.type, self.weight.type, None if self.bias is None else self.bias.type,
            padding=self.padding_tuple(), tile=self.tile_value(),
        )

    def padding_tuple(self) -> tuple[int, ...]:
        """`padding` as (top, left, bottom, right)."""
        return _ints(self.padding)

    def tile_value(self) -> int:
        """The output rows of one transform (m of F(m, 3))."""
        return self.tile.value.data


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class MaxPool2DOp(_Pool2DOp):
    """2-D max pooling (ONNX MaxPool).

    Semantics: the maximum over each `kernel` window of the H and W axes (layout NCHW or NHWC),
    moved by `strides`, with `dilation`; padding ([top, left, bottom, right]) never wins the max
    (it holds -inf, or the integer type's minimum: int8 and uint8 pools are those of quantized
    models, `graph-fold-qdq`). With `ceil_mode` the output size rounds up, dropping a last
    window that would start in the end padding. Each pad must be smaller than the window extent.
    The element type is float or integer (not i1).

    Example:
        %r = graph.max_pool2d %x
            {ceil_mode = true, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>}
            : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
    """

    name = "graph.max_pool2d"

    dilation = attr_def(DenseArrayBase.constr(i64), default_value=i64_array([1, 1]))

    def __init__(
        self,
        x: SSAValue | Operation,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
        ceil_mode: bool = False,
        layout: str = "NCHW",
    ) -> None:
        result_type = self.infer_type(
            SSAValue.get(x).type, kernel=kernel, strides=strides, padding=padding,
            dilation=dilation, ceil_mode=ceil_mode, layout=layout,
        )
        super().__init__(
            operands=[x],
            result_types=[result_type],
            attributes={
                "kernel": i64_array(kernel),
                "strides": i64_array(strides),
                "padding": i64_array(padding),
                "dilation": i64_array(dilation),
                "ceil_mode": bool_attr(ceil_mode),
                "layout": StringAttr(layout),
            },
        )

    @classmethod
    def infer_type(
        cls,
        x: Attribute,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
        ceil_mode: bool = False,
        layout: str = "NCHW",
    ) -> TensorType:
        """The pooled type: H and W replaced by the number of window positions."""
        return cls.pool_type(x, kernel, strides, padding, dilation, ceil_mode, layout,
                             integers=True)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.x.type, kernel=self.kernel_tuple(), strides=self.strides_tuple(),
            padding=self.padding_tuple(), dilation=self.dilation_tuple(),
            ceil_mode=self.ceil_mode_value(), layout=self.layout_value(),
        )

    def dilation_tuple(self) -> tuple[int, ...]:
        """`dilation` as (dh, dw)."""
        return _ints(self.dilation)


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class AvgPool2DOp(_Pool2DOp):
    """2-D average pooling (ONNX AveragePool).

    Semantics: the mean over each `kernel` window of the H and W axes, moved by `strides`.
    Padding ([top, left, bottom, right]) counts as zeros in the divisor only with
    `count_include_pad`; otherwise each window divides by its number of input elements. With
    `ceil_mode` the output size rounds up (windows past the padded input never count the
    overhang). Each pad must be smaller than the kernel.

    Example:
        %r = graph.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>,
            padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
            : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
    """

    name = "graph.avg_pool2d"

    count_include_pad = attr_def(BoolAttr, default_value=bool_attr(False))

    def __init__(
        self,
        x: SSAValue | Operation,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        ceil_mode: bool = False,
        count_include_pad: bool = False,
        layout: str = "NCHW",
    ) -> None:
        result_type = self.infer_type(
            SSAValue.get(x).type, kernel=kernel, strides=strides, padding=padding,
            ceil_mode=ceil_mode, layout=layout,
        )
        super().__init__(
            operands=[x],
            result_types=[result_type],
            attributes={
                "kernel": i64_array(kernel),
                "strides": i64_array(strides),
                "padding": i64_array(padding),
                "ceil_mode": bool_attr(ceil_mode),
                "count_include_pad": bool_attr(count_include_pad),
                "layout": StringAttr(layout),
            },
        )

    @classmethod
    def infer_type(
        cls,
        x: Attribute,
        *,
        kernel: Sequence[int],
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        ceil_mode: bool = False,
        layout: str = "NCHW",
    ) -> TensorType:
        """The pooled type: H and W replaced by the number of window positions."""
        return cls.pool_type(x, kernel, strides, padding, (1, 1), ceil_mode, layout)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.x.type, kernel=self.kernel_tuple(), strides=self.strides_tuple(),
            padding=self.padding_tuple(), ceil_mode=self.ceil_mode_value(),
            layout=self.layout_value(),
        )

    def count_include_pad_value(self) -> bool:
        """Whether padded elements count in the divisor."""
        return bool(self.count_include_pad.value.data)


@with_fusion_kind(FusionKind.OUT_FUSABLE)
@irdl_op_definition
class GlobalAvgPool2DOp(GraphOp):
    """Mean over the whole H and W axes (ONNX GlobalAveragePool).

    Semantics: N×C×H×W → N×C×1×1 for layout NCHW (NHWC: N×1×1×C); float only.

    Example:
        %r = graph.global_avg_pool2d %x : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
    """

    name = "graph.global_avg_pool2d"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    layout = attr_def(StringAttr, default_value=StringAttr("NCHW"))

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, *, layout: str = "NCHW") -> None:
        result_type = self.infer_type(SSAValue.get(x).type, layout=layout)
        super().__init__(
            operands=[x], result_types=[result_type], attributes={"layout": StringAttr(layout)}
        )

    @classmethod
    def infer_type(cls, x: Attribute, *, layout: str = "NCHW") -> TensorType:
        """The input type with H and W set to 1."""
        x_type = _tensor(cls.name, "the input", x, any_dynamic=True)
        _require_rank(cls.name, "an input", x_type, 4)
        _require_float(cls.name, x_type)
        n, _, h, w = _layout_positions(cls.name, "layout", layout, "NCHW")
        _require_batch_first(cls.name, x_type, n)
        shape = list(x_type.get_shape())
        shape[h] = shape[w] = 1
        return TensorType(x_type.get_element_type(), shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, layout=self.layout_value())

    def layout_value(self) -> str:
        """The input and output layout, e.g. "NCHW"."""
        return self.layout.data


# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------


@with_fusion_kind(FusionKind.BROADCAST)
@irdl_op_definition
class BatchNormOp(GraphOp):
    """Batch normalization in inference mode (ONNX BatchNormalization, training_mode = 0).

    Semantics: with the channel axis 1 of `x` (rank >= 2) and per-channel 1-D `scale`, `bias`,
    `mean`, `var` of length C, `result = (x - mean) / sqrt(var + epsilon) * scale + bias`,
    each parameter broadcast along axis 1. Float only; all operands share the element type.

    Example:
        %r = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.000000e-03 : f32}
            : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
            -> tensor<1x4x8x8xf32>
    """

    name = "graph.batch_norm"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = attr_def(FloatAttr[Float32Type], default_value=f32_attr(1e-5))

    traits = traits_def(Pure())
    assembly_format = (
        "$x `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(
        self,
        x: SSAValue | Operation,
        scale: SSAValue | Operation,
        bias: SSAValue | Operation,
        mean: SSAValue | Operation,
        var: SSAValue | Operation,
        *,
        epsilon: float = 1e-5,
    ) -> None:
        operands = [x, scale, bias, mean, var]
        result_type = self.infer_type(*(SSAValue.get(v).type for v in operands))
        super().__init__(
            operands=operands,
            result_types=[result_type],
            attributes={"epsilon": f32_attr(epsilon)},
        )

    @classmethod
    def infer_type(
        cls, x: Attribute, scale: Attribute, bias: Attribute, mean: Attribute, var: Attribute
    ) -> TensorType:
        """The type of `x`; the four parameters must be 1-D of length C (x's axis 1)."""
        x_type = _tensor(cls.name, "the input", x, any_dynamic=True)
        if x_type.get_num_dims() < 2:
            raise op_error(cls.name, f"expected an input of rank >= 2, found {x_type}")
        _require_float(cls.name, x_type)
        _require_static_axis(cls.name, "the channel axis", x_type, 1)
        channels = x_type.get_shape()[1]
        types = [x_type]
        for what, param in (("scale", scale), ("bias", bias), ("mean", mean), ("var", var)):
            param_type = _tensor(cls.name, f"the {what}", param)
            if param_type.get_shape() != (channels,):
                raise op_error(
                    cls.name, f"expected {what} of shape ({channels}), found {param_type}"
                )
            types.append(param_type)
        _same_element_type(cls.name, types)
        return x_type

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.x.type, self.scale.type, self.bias.type, self.mean.type, self.var.type
        )

    def epsilon_value(self) -> float:
        """The variance epsilon."""
        return self.epsilon.value.data


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class SoftmaxOp(GraphOp):
    """Softmax along one axis (ONNX Softmax, opset >= 13).

    Semantics: `result = exp(x - max) / sum(exp(x - max))` along `axis` (negative counts from the
    end, default -1); float only.

    Example:
        %r = graph.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
    """

    name = "graph.softmax"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True
    T: ClassVar = VarConstraint("T", base(TensorType))
    x = operand_def(T)
    result = result_def(T)
    axis = attr_def(IntegerAttr[I64], default_value=i64_attr(-1))

    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` type($x)"

    def __init__(self, x: SSAValue | Operation, axis: int = -1) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, axis)],
            attributes={"axis": i64_attr(axis)},
        )

    @classmethod
    def infer_type(cls, x: Attribute, axis: int = -1) -> TensorType:
        """The operand's type; `axis` must be in range (any dim may be dynamic, the axis
        too: attention's softmax over a runtime sequence; but the leading dim, a batch-
        polymorphic compile's rows)."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        _require_float(cls.name, x_type)
        if _normalize_axis(cls.name, axis, x_type.get_num_dims()) == 0:
            _require_static_axis(cls.name, "the softmax axis", x_type, 0)
        return x_type

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.axis_value())

    def axis_value(self) -> int:
        """The axis as written (may be negative)."""
        return self.axis.value.data

    def normalized_axis(self) -> int:
        """The axis in [0, rank)."""
        return self.axis_value() % self.x.type.get_num_dims()


REDUCE_KINDS = ("sum", "mean", "max", "min", "prod")
"""The combiners `graph.reduce` accepts."""


@with_fusion_kind(FusionKind.REDUCTION)
@irdl_op_definition
class ReduceOp(GraphOp):
    """Reduction over some axes (ONNX ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceProd).

    Semantics: combines the elements along `axes` (distinct, negative counting from the end;
    empty means all axes) with `kind` (sum, mean, max, min, prod). With `keepdims` (default) the
    reduced axes stay with size 1, otherwise they are removed.

    Example:
        %r = graph.reduce %x {axes = array<i64: 1>, keepdims = false, kind = "mean"}
            : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
    """

    name = "graph.reduce"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    kind = attr_def(StringAttr)
    axes = attr_def(DenseArrayBase.constr(i64))
    keepdims = attr_def(BoolAttr, default_value=bool_attr(True))

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(
        self, x: SSAValue | Operation, kind: str, axes: Sequence[int], keepdims: bool = True
    ) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, kind, axes, keepdims)],
            attributes={
                "kind": StringAttr(kind),
                "axes": i64_array(axes),
                "keepdims": bool_attr(keepdims),
            },
        )

    @classmethod
    def reduced_axes(cls, rank: int, axes: Sequence[int]) -> tuple[int, ...]:
        """`axes` normalized to [0, rank) and sorted; all axes when empty."""
        if not axes:
            return tuple(range(rank))
        normalized = sorted(_normalize_axis(cls.name, axis, rank) for axis in axes)
        if len(set(normalized)) != len(normalized):
            raise op_error(cls.name, f"expected distinct axes, found {list(axes)}")
        return tuple(normalized)

    @classmethod
    def infer_type(
        cls, x: Attribute, kind: str, axes: Sequence[int], keepdims: bool = True
    ) -> TensorType:
        """The input type with the reduced axes set to 1 (`keepdims`) or removed; any dim
        may be dynamic, a reduced one too (a mean over a runtime plane or sequence), but a
        reduced leading dim (a batch-polymorphic compile runs its rows apart)."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        if kind not in REDUCE_KINDS:
            raise op_error(
                cls.name, f"expected kind in {', '.join(REDUCE_KINDS)}, found '{kind}'"
            )
        reduced = cls.reduced_axes(x_type.get_num_dims(), axes)
        if 0 in reduced:
            _require_static_axis(cls.name, "a reduced axis", x_type, 0)
        shape = [
            1 if axis in reduced else dim
            for axis, dim in enumerate(x_type.get_shape())
            if keepdims or axis not in reduced
        ]
        return TensorType(x_type.get_element_type(), shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(
            self.x.type, self.kind_value(), self.axes_tuple(), self.keepdims_value()
        )

    def kind_value(self) -> str:
        """The combiner: sum, mean, max, min or prod."""
        return self.kind.data

    def axes_tuple(self) -> tuple[int, ...]:
        """The axes as written (may be negative or empty)."""
        return _ints(self.axes)

    def normalized_axes(self) -> tuple[int, ...]:
        """The reduced axes in [0, rank), sorted (all axes when `axes` is empty)."""
        return self.reduced_axes(self.x.type.get_num_dims(), self.axes_tuple())

    def keepdims_value(self) -> bool:
        """Whether the reduced axes stay as size-1 axes."""
        return bool(self.keepdims.value.data)


# ---------------------------------------------------------------------------------------------
# Injective ops: reshape, transpose, concat, flatten
# ---------------------------------------------------------------------------------------------


def dynamic_reshape_segments(in_shape: Sequence[int], out_shape: Sequence[int],
                             groups: Sequence[int] = ()
                             ) -> list[tuple[list[int], list[int]]] | None:
    """The axes of a reshape from `in_shape` to `out_shape` (dynamic dims negative in both) in
    segments holding the same elements, in order: each dynamic dim of the result paired with
    a group of consecutive dynamic dims of the operand (itself alone, or several merged into
    it with the static dims between them: `?x144x?x?` to `?x144x?` flattens the last two),
    the static dims between two groups (or before the first, after the last) a segment of
    equal products. None when the shapes do not pair so (more dynamic dims in the result,
    unequal products), or pair so in more than one way (`?x?x?` to `?x?`). `groups`, pairs
    `start, end` of operand axes, one per dynamic dim of the result, says which operand dims
    each merges, static dims beside the dynamic ones too (`?x3x?x?x8` to `?x?x8` as
    `[0, 1, 1, 4]`: the batch kept, 3 x H x W merged): then the shapes must pair that way."""
    ins = [axis for axis, dim in enumerate(in_shape) if dim < 0]
    outs = [axis for axis, dim in enumerate(out_shape) if dim < 0]
    if groups:
        ranges = [list(range(lo, hi)) for lo, hi in zip(groups[::2], groups[1::2], strict=True)]
        if len(groups) % 2 or len(ranges) != len(outs) or any(
                not r or any(a < 0 or a >= len(in_shape) for a in r) for r in ranges) or any(
                a[-1] >= b[0] for a, b in itertools.pairwise(ranges)) or sorted(
                a for r in ranges for a in r if in_shape[a] < 0) != ins or any(
                all(in_shape[a] >= 0 for a in r) for r in ranges):
            return None
        return _reshape_segments(in_shape, out_shape, ranges, outs)
    if len(outs) > len(ins) or (ins and not outs):
        return None
    if not ins:
        return _reshape_segments(in_shape, out_shape, [], [])
    found: list[list[tuple[list[int], list[int]]]] = []
    for cuts in itertools.combinations(range(1, len(ins)), len(outs) - 1):
        bounds = [0, *cuts, len(ins)]
        groups = [ins[lo:hi] for lo, hi in itertools.pairwise(bounds)]
        segments = _reshape_segments(in_shape, out_shape, groups, outs)
        if segments is not None:
            found.append(segments)
    return found[0] if len(found) == 1 else None


def _reshape_segments(in_shape: Sequence[int], out_shape: Sequence[int],
                      groups: Sequence[Sequence[int]], outs: Sequence[int]
                      ) -> list[tuple[list[int], list[int]]] | None:
    """`dynamic_reshape_segments` for one grouping of the operand's dynamic dims (`groups`,
    each paired with the result's dynamic dim in `outs` at its rank)."""
    segments: list[tuple[list[int], list[int]]] = []
    in_start = out_start = 0
    for group, out_axis in [*zip(groups, outs, strict=True), (None, len(out_shape))]:
        in_axis = len(in_shape) if group is None else group[0]
        static_in = list(range(in_start, in_axis))
        static_out = list(range(out_start, out_axis))
        if math.prod(in_shape[a] for a in static_in) != math.prod(
                out_shape[a] for a in static_out):
            return None
        if static_in or static_out:
            segments.append((static_in, static_out))
        if group is not None:
            segments.append((list(range(group[0], group[-1] + 1)), [out_axis]))
            in_start, out_start = group[-1] + 1, out_axis + 1
    return segments


def reshape_groups_of(segments: Sequence[tuple[list[int], list[int]]],
                      in_shape: Sequence[int], out_shape: Sequence[int]) -> list[int]:
    """The `groups` of `dynamic_reshape_segments`'s `segments`: `start, end` of the operand
    axes paired with each dynamic dim of the result."""
    return [bound for ins, outs in segments if outs and out_shape[outs[0]] < 0 and ins
            for bound in (ins[0], ins[-1] + 1)]


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class ReshapeOp(GraphOp):
    """Reshape to `shape`, keeping the row-major order of the elements.

    Semantics: `shape` holds the result dims; at most one may be -1, which is inferred from the
    element count. The element counts must match. An operand with a dynamic leading dim (the
    batch) keeps it: `shape` then starts with -1, the batch, and its other dims hold as many
    elements as one row of the operand (`?x32x5x5` to `shape = [-1, 800]` is `?x800`). An
    operand with other dynamic dims (a runtime height and width) keeps each of them: `shape`
    has one -1 per dynamic dim of the operand, in the same order, each that dim, and the
    static dims between two of them regroup static dims of the operand between the same two
    (`dynamic_reshape_segments`: a channel shuffle's `?x116x?x?` to `shape = [-1, 2, 58, -1,
    -1]` is `?x2x58x?x?`), or merges consecutive dynamic dims (and the static dims between
    them) into one: a detector head's `?x144x?x?` to `shape = [-1, 144, -1]` is `?x144x?`, its
    last dim the height times the width. Merged dims are found by the static segments around
    them, which must pair one way only; `groups` (pairs `start, end` of operand axes, one per
    -1) says which where static dims beside the dynamic ones merge too, which the segments
    cannot tell (a YOLOv5 head's `?x3x?x?x8` to `shape = [-1, -1, 8]` with `groups = [0, 1, 1,
    4]`: 3 x H x W boxes, not N x 3 rows). A dynamic leading dim kept but not first (`?` to
    `shape = [1, -1]`: runtime positions given a unit batch) is such a runtime dim; the ONNX
    importer's dynamic batch refuses a node that moves its batch so.

    Example:
        %r = graph.reshape %x {shape = array<i64: 3, -1>} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
        %b = graph.reshape %y {shape = array<i64: -1, -1, 8>, groups = array<i64: 0, 1, 1, 4>}
            : (tensor<?x3x?x?x8xf32>) -> tensor<?x?x8xf32>
    """

    name = "graph.reshape"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    shape = attr_def(DenseArrayBase.constr(i64))
    groups = opt_attr_def(DenseArrayBase.constr(i64))

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, shape: Sequence[int],
                 groups: Sequence[int] = ()) -> None:
        attributes = {"shape": i64_array(shape)}
        if groups:
            attributes["groups"] = i64_array(groups)
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, shape, groups)],
            attributes=attributes,
        )

    @classmethod
    def infer_type(cls, x: Attribute, shape: Sequence[int], groups: Sequence[int] = ()
                   ) -> TensorType:
        """The input element type with `shape` (its -1 resolved)."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        segments = dynamic_reshape_segments(x_type.get_shape(), shape, groups)
        runtime_leading = has_dynamic_leading_dim(x_type) and shape[:1] != [-1] and list(
            shape).count(-1) == 1 and segments
        if groups and not (any(dim < 0 for dim in x_type.get_shape()[1:]) or runtime_leading):
            raise op_error(cls.name, f"expected 'groups' only for an operand with runtime dims "
                                     f"after its leading one, found {x}")
        if any(dim < 0 for dim in x_type.get_shape()[1:]) or runtime_leading:
            if segments is None:
                raise op_error(
                    cls.name,
                    f"expected 'shape' {list(shape)} to keep each dynamic dim of {x} (a -1 "
                    "for each, in order, or one -1 for consecutive ones merged) and to "
                    "regroup only the static dims between them"
                    + (f", as 'groups' {list(groups)} pairs them" if groups else ""))
            return TensorType(x_type.get_element_type(),
                              [DYNAMIC_INDEX if dim < 0 else dim for dim in shape])
        if any(dim < -1 for dim in shape) or list(shape).count(-1) > 1:
            raise op_error(
                cls.name,
                f"expected 'shape' dims >= 0 with at most one -1, found {list(shape)}",
            )
        if has_dynamic_leading_dim(x_type):
            if not shape or shape[0] != -1:
                raise op_error(
                    cls.name,
                    "expected 'shape' to start with -1 (the batch) for an operand with a "
                    f"dynamic leading dim, found {list(shape)}",
                )
            row = cls.infer_type(TensorType(x_type.get_element_type(), x_type.get_shape()[1:]),
                                 shape[1:])
            return TensorType(x_type.get_element_type(), [DYNAMIC_INDEX, *row.get_shape()])
        count = math.prod(x_type.get_shape())
        known = math.prod(dim for dim in shape if dim != -1)
        dims = list(shape)
        if -1 in dims:
            if known == 0 or count % known != 0:
                raise op_error(
                    cls.name, f"expected {count} elements to fill shape {list(shape)}"
                )
            dims[dims.index(-1)] = count // known
        elif known != count:
            raise op_error(
                cls.name,
                f"expected shape {list(shape)} to hold {count} elements, found {known}",
            )
        return TensorType(x_type.get_element_type(), dims)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.shape_tuple(), self.groups_tuple())

    def groups_tuple(self) -> tuple[int, ...]:
        """The explicit merges of runtime dims (`start, end` per -1), or () to infer them."""
        return () if self.groups is None else _ints(self.groups)

    def segments(self) -> list[tuple[list[int], list[int]]] | None:
        """`dynamic_reshape_segments` of this reshape (its `groups` where given)."""
        return dynamic_reshape_segments(self.x.type.get_shape(),  # type: ignore[attr-defined]
                                        self.result.type.get_shape(),  # type: ignore[attr-defined]
                                        self.groups_tuple())

    def shape_tuple(self) -> tuple[int, ...]:
        """The `shape` attribute as written (may hold one -1); the result type has it resolved."""
        return _ints(self.shape)


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class TransposeOp(GraphOp):
    """Permute the axes.

    Semantics: result axis `i` is input axis `perm[i]`; `perm` is a permutation of [0, rank).

    Example:
        %r = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>}
            : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
    """

    name = "graph.transpose"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    perm = attr_def(DenseArrayBase.constr(i64))

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, perm: Sequence[int]) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, perm)],
            attributes={"perm": i64_array(perm)},
        )

    @classmethod
    def infer_type(cls, x: Attribute, perm: Sequence[int]) -> TensorType:
        """The input type with its dims permuted by `perm`."""
        x_type = _tensor(cls.name, "the operand", x, any_dynamic=True)
        shape = x_type.get_shape()
        if sorted(perm) != list(range(len(shape))):
            raise op_error(
                cls.name,
                f"expected 'perm' to be a permutation of [0, {len(shape)}), found {list(perm)}",
            )
        if has_dynamic_leading_dim(x_type) and not has_runtime_extent(x_type) and perm[0] != 0:
            raise op_error(
                cls.name, f"expected 'perm' to keep the dynamic leading dim of {x_type} first, "
                f"found {list(perm)}",
            )
        return TensorType(x_type.get_element_type(), [shape[axis] for axis in perm])

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.perm_tuple())

    def perm_tuple(self) -> tuple[int, ...]:
        """The permutation."""
        return _ints(self.perm)


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class ConcatOp(GraphOp):
    """Concatenate tensors along one axis.

    Semantics: all inputs (at least one) have the same rank, element type and dims except along
    `axis` (negative counts from the end); the result's `axis` dim is the sum, dynamic where
    an input's is (runtime sizes along an axis after the leading one, which is a batch where
    dynamic: the pieces follow each other at runtime offsets). Their other dynamic dims must
    agree at run time (a size check).

    Example:
        %r = graph.concat %a, %b {axis = 1 : i64}
            : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
        %s = graph.concat %c, %d {axis = 2 : i64}
            : (tensor<?x8x?xf32>, tensor<?x8x100xf32>) -> tensor<?x8x?xf32>
    """

    name = "graph.concat"

    LEADING_DYNAMIC: ClassVar[bool] = True
    DYNAMIC_DIMS: ClassVar[bool] = True

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = attr_def(IntegerAttr[I64])

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, results)"

    def __init__(self, inputs: Sequence[SSAValue | Operation], axis: int) -> None:
        types = [SSAValue.get(v).type for v in inputs]
        super().__init__(
            operands=[list(inputs)],
            result_types=[self.infer_type(types, axis)],
            attributes={"axis": i64_attr(axis)},
        )

    @classmethod
    def infer_type(cls, inputs: Sequence[Attribute], axis: int) -> TensorType:
        """The common input type with the `axis` dims summed."""
        if not inputs:
            raise op_error(cls.name, "expected at least one input, found none")
        types = [
            _tensor(cls.name, f"input #{i}", t, any_dynamic=True)
            for i, t in enumerate(inputs)
        ]
        element_type = _same_element_type(cls.name, types)
        rank = types[0].get_num_dims()
        concat_axis = _normalize_axis(cls.name, axis, rank)
        if concat_axis == 0:  # a dynamic leading dim is a batch: its rows stay apart
            for type in types:
                _require_static_axis(cls.name, "the concat axis", type, concat_axis)
        shape = list(types[0].get_shape())
        for index, type in enumerate(types[1:], start=1):
            other = type.get_shape()
            if len(other) != rank or any(
                a != b for i, (a, b) in enumerate(zip(shape, other, strict=True))
                if i != concat_axis
            ):
                raise op_error(
                    cls.name,
                    f"expected input #{index} to match {types[0]} except along axis "
                    f"{concat_axis}, found {type}",
                )
            shape[concat_axis] = DYNAMIC_INDEX if min(shape[concat_axis], other[concat_axis]) < 0 \
                else shape[concat_axis] + other[concat_axis]
        return TensorType(element_type, shape)

    def inferred_result_type(self) -> TensorType:
        return self.infer_type([v.type for v in self.inputs], self.axis_value())

    def axis_value(self) -> int:
        """The axis as written (may be negative)."""
        return self.axis.value.data

    def normalized_axis(self) -> int:
        """The axis in [0, rank)."""
        return self.axis_value() % self.inputs[0].type.get_num_dims()


@with_fusion_kind(FusionKind.INJECTIVE)
@irdl_op_definition
class FlattenOp(GraphOp):
    """Flatten to a matrix (ONNX Flatten).

    Semantics: the result is 2-D: (product of dims before `axis`, product of the others);
    `axis` is in [-rank, rank] (default 1; 0 gives 1 × everything).

    Example:
        %r = graph.flatten %x : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
    """

    name = "graph.flatten"

    LEADING_DYNAMIC: ClassVar[bool] = True

    x = operand_def(TensorType)
    result = result_def(TensorType)
    axis = attr_def(IntegerAttr[I64], default_value=i64_attr(1))

    traits = traits_def(Pure(), GraphCanonicalizationPatterns())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue | Operation, axis: int = 1) -> None:
        super().__init__(
            operands=[x],
            result_types=[self.infer_type(SSAValue.get(x).type, axis)],
            attributes={"axis": i64_attr(axis)},
        )

    @classmethod
    def infer_type(cls, x: Attribute, axis: int = 1) -> TensorType:
        """(prod(shape[:axis]), prod(shape[axis:])) with the input element type."""
        x_type = _tensor(cls.name, "the operand", x, leading_dynamic=True)
        shape = x_type.get_shape()
        split = _normalize_axis(cls.name, axis, len(shape), inclusive=True)
        if has_dynamic_leading_dim(x_type):
            if split == 0:
                raise op_error(
                    cls.name, f"expected axis >= 1 to keep the dynamic leading dim of {x_type} "
                    f"in the rows, found {axis}",
                )
            return TensorType(
                x_type.get_element_type(), [DYNAMIC_INDEX, math.prod(shape[split:])]
            )
        return TensorType(
            x_type.get_element_type(), [math.prod(shape[:split]), math.prod(shape[split:])]
        )

    def inferred_result_type(self) -> TensorType:
        return self.infer_type(self.x.type, self.axis_value())

    def axis_value(self) -> int:
        """The axis as written (may be negative)."""
        return self.axis.value.data

    def normalized_axis(self) -> int:
        """The axis in [0, rank]."""
        axis, rank = self.axis_value(), self.x.type.get_num_dims()
        return axis + rank if axis < 0 else axis


# ---------------------------------------------------------------------------------------------
# Fused groups
# ---------------------------------------------------------------------------------------------


def _control_ops() -> tuple[type[IRDLOperation], ...]:
    from dlc.dialects.graph.ops_control import CONTROL_FLOW_OPS

    return CONTROL_FLOW_OPS


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of a `graph.fused` body and of the regions of `graph.if` and `graph.loop`.

    Semantics: its operands are the results of the enclosing `graph.fused` or `graph.if`, in
    order; in a `graph.loop` body, the next condition, carried values and scan elements.

    Example:
        graph.yield %y : tensor<2x4xf32>
    """

    name = "graph.yield"

    values = var_operand_def()

    traits = lazy_traits_def(lambda: (Pure(), IsTerminator(), HasParent(FusedOp, *_control_ops())))
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue | Operation) -> None:
        super().__init__(operands=[list(values)])


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class FusedOp(IRDLOperation):
    """A group of graph ops fused into one kernel (TVM's primitive function).

    Semantics: the body is a single block whose arguments stand for the operands, one to one and
    with the same types; it is isolated from above and ends with `graph.yield`, whose operand
    types are the result types. `kind` (optional) is the group's dominant fusion kind
    (elementwise, broadcast, injective, reduction, out_fusable, opaque) and `name` (optional) a
    name for the generated kernel. Running the op runs its body.

    Example:
        %r = graph.fused (%x, %w) {kind = "out_fusable", name = "fused_matmul_relu"}
            : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> {
        ^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>):
          %m = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
          %y = graph.relu %m : tensor<2x4xf32>
          graph.yield %y : tensor<2x4xf32>
        }
    """

    name = "graph.fused"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    kind = opt_attr_def(StringAttr)
    group_name = opt_attr_def(StringAttr, attr_name="name")

    traits = traits_def(Pure(), IsolatedFromAbove())

    def __init__(
        self,
        inputs: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute],
        body: Region | Block,
        *,
        kind: FusionKind | str | None = None,
        name: str | None = None,
    ) -> None:
        attributes: dict[str, Attribute] = {}
        if kind is not None:
            text = kind.mnemonic if isinstance(kind, FusionKind) else kind
            attributes["kind"] = StringAttr(text)
        if name is not None:
            attributes["name"] = StringAttr(name)
        region = body if isinstance(body, Region) else Region(body)
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            regions=[region],
            attributes=attributes,
        )

    @property
    def yield_op(self) -> YieldOp:
        """The terminator of the body."""
        terminator = self.body.block.last_op
        assert isinstance(terminator, YieldOp), "verified: the body ends with graph.yield"
        return terminator

    def group_fusion_kind(self) -> FusionKind | None:
        """The group's `kind` attribute as a FusionKind, or None when absent."""
        if self.kind is None:
            return None
        return FusionKind.from_mnemonic(self.kind.data)

    def name_value(self) -> str | None:
        """The group's `name` attribute, or None when absent."""
        return None if self.group_name is None else self.group_name.data

    def verify_(self) -> None:
        if self.kind is not None:
            try:
                FusionKind.from_mnemonic(self.kind.data)
            except ValueError as e:
                raise op_error(self.name, str(e)) from None
        block = self.body.block
        arg_types = [arg.type for arg in block.args]
        input_types = [v.type for v in self.inputs]
        if arg_types != input_types:
            raise op_error(
                self.name,
                "expected the body's argument types to match the operand types "
                f"({_types(input_types)}), found ({_types(arg_types)})",
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            found = "nothing" if terminator is None else f"'{terminator.name}'"
            raise op_error(self.name, f"expected the body to end with graph.yield, found {found}")
        yielded = [v.type for v in terminator.values]
        output_types = [v.type for v in self.outputs]
        if yielded != output_types:
            raise op_error(
                self.name,
                f"expected graph.yield types ({_types(yielded)}) to match the result types "
                f"({_types(output_types)})",
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(") -> ")
        output_types = [v.type for v in self.outputs]
        if len(output_types) == 1:
            printer.print_attribute(output_types[0])
        else:
            printer.print_string("(")
            printer.print_list(output_types, printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True, print_empty_block=True)

    @classmethod
    def parse(cls, parser: Parser) -> FusedOp:
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        input_types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        parser.parse_punctuation("->")
        if parser.parse_optional_punctuation("(") is not None:
            output_types = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_type
            )
            parser.parse_punctuation(")")
        else:
            output_types = [parser.parse_type()]
        if len(operands) != len(input_types):
            parser.raise_error(
                f"'{cls.name}' op expected {len(operands)} operand types, "
                f"found {len(input_types)}"
            )
        inputs = parser.resolve_operands(operands, input_types, parser.pos)
        body = parser.parse_region()
        op = cls(inputs, output_types, body)
        op.attributes.update(attributes)
        return op


def _types(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)
