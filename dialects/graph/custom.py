"""User-defined graph ops: `graph.custom` and the registry of custom op definitions.

Counterpart: TVM's `tvm.ir.register_op_attr` (FTVMCompute, FTVMStrategy, TOpPattern) for an op
a user adds, and ONNX Runtime's custom op domains. A `CustomOpDefinition` says everything the
compiler needs to know about one ONNX op type that dlc does not convert itself: its shape
function (shape inference and the verifier), a NumPy reference (the graph interpreter and so
`--check-semantics`), its fusion kind, and how it computes: a tensor-expression definition
(`compute`, run by `rewrites/topi/custom.py`, so fusion and schedules apply) or an external C
function (`ExternFunction`) that the generated code calls.

The registry lives here, at the bottom layer, because every layer reads it: the importer
(`frontends/onnx/custom.py`), the verifier and interpreter (this module), the compute
definitions (rewrites) and the driver (which loads the external libraries). Users register
through `dlc.custom_op.register_op`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np
from dlc.dialects.graph.attrs import FusionKind, from_numpy_dtype, to_numpy_dtype
from dlc.dialects.graph.interpreter import InterpreterError, implements
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

EXTERN_LIBRARY_ATTR = "dlc.extern_library"
"""The attribute of an external function's declaration (`func.func private @sym`) naming the
shared library that defines it; the driver loads it (JIT) or links it (export)."""

EXTERN_OP_ATTR = "dlc.extern_op"
"""The attribute of an external function's declaration naming the custom op that calls it."""


class TensorInfo(NamedTuple):
    """The static shape and NumPy dtype of one tensor, as shape functions see and return it."""

    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class ExternFunction:
    """A C function that computes a custom op: `void name(const T *in0, ..., T *out0, ...)`.

    Each tensor is passed as a pointer to its dense row-major data, inputs first, then outputs
    (written by the function); shapes are known to the caller (the op's shape function) and are
    not passed. `library` is the shared library that defines `name` (loaded in process to run,
    linked into exported libraries); `header` documents the prototype for C users.
    """

    name: str
    library: str
    header: str | None = None


ShapeFunction = Callable[..., "TensorInfo | tuple[Sequence[int], Any] | Sequence[Any]"]
"""`shape(*inputs: TensorInfo, **attrs) -> TensorInfo | list[TensorInfo]` (tuples accepted)."""

Reference = Callable[..., "np.ndarray | Sequence[np.ndarray]"]
"""`reference(*arrays, **attrs) -> array | list[array]`: the op's NumPy semantics."""


@dataclass(frozen=True)
class CustomOpDefinition:
    """One user-defined op: an ONNX op type with everything dlc needs to compile it.

    Attributes:
        op_type: the ONNX op type (`Swish`).
        domain: the ONNX domain of the op (`com.example`); `""` is the default domain.
        opset: the first opset version of `domain` at which the definition applies.
        shape: the shape function (see `ShapeFunction`).
        reference: the NumPy semantics (see `Reference`).
        compute: a tensor-expression definition `compute(te, *inputs, **attrs)`, run by
            `convert-graph-to-tensor-expr` (see `dlc.custom_op`); None for an external op.
        extern: the C function that computes the op; None for a tensor-expression op.
        fusion_kind: how `graph-fuse-ops` may fuse it (an external op is always OPAQUE).
        attributes: the ONNX attributes the op takes, with their defaults (None: required).
    """

    op_type: str
    domain: str
    opset: int
    shape: ShapeFunction
    reference: Reference
    compute: Callable[..., Any] | None = None
    extern: ExternFunction | None = None
    fusion_kind: FusionKind = FusionKind.OPAQUE
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def qualified_name(self) -> str:
        """`domain::op_type` (`::op_type` in the default domain): the op's key everywhere."""
        return f"{self.domain}::{self.op_type}"

    def infer(self, inputs: Sequence[TensorInfo], attrs: Mapping[str, Any]) -> list[TensorInfo]:
        """The result shapes and dtypes the shape function gives for `inputs` and `attrs`."""
        found = self.shape(*inputs, **attrs)
        single = isinstance(found, TensorInfo) or (
            isinstance(found, tuple) and len(found) == 2 and _is_shape(found[0])
            and not isinstance(found[1], tuple | list)
        )
        if single:
            found = [found]
        return [TensorInfo(tuple(int(d) for d in s), np.dtype(t)) for s, t in found]


def _is_shape(value: object) -> bool:
    return isinstance(value, tuple | list) and all(isinstance(d, int | np.integer) for d in value)


class CustomOpError(ValueError):
    """A custom op definition that cannot be registered, or one that is used inconsistently."""


_DEFINITIONS: dict[str, CustomOpDefinition] = {}


def register_definition(definition: CustomOpDefinition) -> CustomOpDefinition:
    """Adds `definition` to the registry.

    Raises:
        CustomOpError: an op of the same domain and type is already registered, or the
            definition has neither or both of `compute` and `extern`.
    """
    name = definition.qualified_name
    if name in _DEFINITIONS:
        raise CustomOpError(
            f"custom op {definition.op_type!r} (domain {definition.domain!r}) is already "
            f"registered; unregister it first"
        )
    if (definition.compute is None) == (definition.extern is None):
        raise CustomOpError(
            f"custom op {definition.op_type!r}: expected exactly one of compute= and extern=, "
            f"found {'both' if definition.compute else 'neither'}"
        )
    _DEFINITIONS[name] = definition
    return definition


def unregister_definition(qualified_name: str) -> None:
    """Removes the op `domain::op_type` from the registry (no error if absent)."""
    _DEFINITIONS.pop(qualified_name, None)


def lookup_custom_op(qualified_name: str) -> CustomOpDefinition | None:
    """The definition registered as `domain::op_type`, or None."""
    return _DEFINITIONS.get(qualified_name)


def registered_custom_ops() -> list[CustomOpDefinition]:
    """Every registered custom op, by qualified name."""
    return [_DEFINITIONS[name] for name in sorted(_DEFINITIONS)]


# ---------------------------------------------------------------------------------------------
# Attributes: Python values <-> builtin attributes
# ---------------------------------------------------------------------------------------------


def to_attribute(value: Any) -> Attribute:
    """A Python int, float, str or list of them as a builtin attribute."""
    if isinstance(value, bool | int | np.integer):
        return IntegerAttr.from_int_and_width(int(value), 64)
    if isinstance(value, float | np.floating):
        return FloatAttr(float(value), 64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, list | tuple):
        return ArrayAttr([to_attribute(v) for v in value])
    raise CustomOpError(f"expected an int, float, str or list attribute value, found {value!r}")


def from_attribute(attr: Attribute) -> Any:
    """The Python value of an attribute made by `to_attribute`."""
    if isinstance(attr, IntegerAttr):
        return int(attr.value.data)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [from_attribute(a) for a in attr.data]
    raise CustomOpError(f"expected an integer, float, string or array attribute, found {attr}")


def tensor_info(type: Attribute) -> TensorInfo:
    """The `TensorInfo` of a ranked tensor type."""
    assert isinstance(type, TensorType), f"expected a ranked tensor, found {type}"
    return TensorInfo(tuple(type.get_shape()), to_numpy_dtype(type.get_element_type()))


def tensor_type(info: TensorInfo) -> TensorType:
    """The tensor type of a `TensorInfo`."""
    return TensorType(from_numpy_dtype(info.dtype), list(info.shape))


# ---------------------------------------------------------------------------------------------
# The op
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class CustomOp(IRDLOperation):
    """An op defined by the user, computed by its registered `CustomOpDefinition`.

    Semantics: `outputs = definition(inputs, attrs)`, where the definition is the one registered
    as `op_type` (`domain::OpType`). The verifier requires the op to be registered and its result
    types to be those its shape function gives; the fusion kind is the definition's (the class
    says OPAQUE; `fusion_kind(op)` reads each op's through `group_fusion_kind`).

    Example:
        %y = graph.custom %x {op_type = "com.example::Swish", attrs = {beta = 1.0 : f64}} :
            (tensor<2x3xf32>) -> tensor<2x3xf32>
    """

    name = "graph.custom"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    op_type = attr_def(StringAttr)
    attrs = attr_def(DictionaryAttr)

    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $outputs)"

    if TYPE_CHECKING:
        fusion_kind: ClassVar[FusionKind]

    def __init__(
        self,
        definition: CustomOpDefinition,
        inputs: Sequence[SSAValue],
        attrs: Mapping[str, Any],
    ) -> None:
        values = dict(definition.attributes)
        values.update(attrs)
        infos = [tensor_info(SSAValue.get(v).type) for v in inputs]
        result_types = [tensor_type(t) for t in definition.infer(infos, values)]
        super().__init__(
            operands=[list(inputs)],
            result_types=[result_types],
            attributes={
                "op_type": StringAttr(definition.qualified_name),
                "attrs": DictionaryAttr({k: to_attribute(v) for k, v in values.items()}),
            },
        )

    def definition(self) -> CustomOpDefinition:
        """The registered definition of this op.

        Raises:
            VerifyException: no op of this name is registered.
        """
        found = lookup_custom_op(self.op_type.data)
        if found is None:
            known = ", ".join(d.qualified_name for d in registered_custom_ops()) or "none"
            raise VerifyException(
                f"'{self.name}' op expected a registered custom op, found "
                f"'{self.op_type.data}' (registered: {known})"
            )
        return found

    def attribute_values(self) -> dict[str, Any]:
        """The op's attributes as Python values."""
        return {k: from_attribute(v) for k, v in self.attrs.data.items()}

    def group_fusion_kind(self) -> FusionKind:
        """The definition's fusion kind (OPAQUE for an external op or an unknown one)."""
        found = lookup_custom_op(self.op_type.data)
        if found is None or found.extern is not None:
            return FusionKind.OPAQUE
        return found.fusion_kind

    def verify_(self) -> None:
        definition = self.definition()
        infos = [tensor_info(v.type) for v in self.inputs]
        expected = [tensor_type(t) for t in definition.infer(infos, self.attribute_values())]
        found = [r.type for r in self.outputs]
        if expected != found:
            raise VerifyException(
                f"'{self.name}' op {self.op_type.data}: expected result types "
                f"{', '.join(map(str, expected))} from its shape function, found "
                f"{', '.join(map(str, found))}"
            )


CustomOp.fusion_kind = FusionKind.OPAQUE  # type: ignore[attr-defined] - per op: group_fusion_kind


@implements(CustomOp)
def _custom(op: CustomOp, args: list[np.ndarray]) -> np.ndarray | list[np.ndarray]:
    definition = op.definition()
    found = definition.reference(*args, **op.attribute_values())
    arrays = [found] if isinstance(found, np.ndarray | np.generic) else list(found)
    if len(arrays) != len(op.outputs):
        raise InterpreterError(
            f"custom op {definition.qualified_name}: expected {len(op.outputs)} arrays from its "
            f"NumPy reference, found {len(arrays)}"
        )
    results = []
    for array, result in zip(arrays, op.outputs, strict=True):
        info = tensor_info(result.type)
        array = np.asarray(array)
        if array.shape != info.shape:
            raise InterpreterError(
                f"custom op {definition.qualified_name}: expected its NumPy reference to give "
                f"shape {info.shape}, found {array.shape}"
            )
        results.append(array.astype(info.dtype, copy=False))
    return results[0] if len(results) == 1 else results


def library_path(extern: ExternFunction) -> str:
    """The absolute path of an external function's library (as given if it is a bare name)."""
    path = Path(extern.library)
    return str(path.resolve()) if path.exists() else extern.library
